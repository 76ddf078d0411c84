/* scr_param.h - configuration values with SCR's precedence: environment, user
 * config file, SCR_Config, system config file, built-in default. MPI-free. */
#ifndef SCR_PARAM_H
#define SCR_PARAM_H

#include <stddef.h>
#include "scr_kvtree.h"
#include "scr_param_table.h"

/* Layers as parsed by scr_config_read_file / scr_config_parse_string
 * (see scr_config.h for the tree layout). Any may be NULL. The param module
 * keeps its own copies. Environment variables are read on every lookup
 * layer-first, so a value exported before the job wins. */
int scr_param_init(const scr_kvtree* user, const scr_kvtree* app, const scr_kvtree* system);
void scr_param_finalize(void);

/* value of a simple parameter, or NULL when no layer and no default sets it.
 * The string stays valid until scr_param_finalize. */
const char* scr_param_get(const char* name);

/* where the winning value came from, e.g. "environment", "/home/u/.scrconf:12",
 * "SCR_Config", "default"; for messages */
const char* scr_param_origin(const char* name);

/* typed lookups: SCR_SUCCESS, SCR_ERR_NOENT when unset, SCR_ERR_CONFIG when the
 * value does not parse (message already logged, naming origin and key) */
int scr_param_get_int(const char* name, long long* value);
/* byte counts accept suffixes: 4096, 64KB, 1.5GB, 2GiB, 512MiB (case-insensitive) */
int scr_param_get_bytes(const char* name, unsigned long long* value);
int scr_param_get_double(const char* name, double* value);
/* 0/1, yes/no, true/false, on/off */
int scr_param_get_bool(const char* name, int* value);

/* descriptor parameters (STORE, CKPT, GROUPS, PRELOAD, ...): tree of
 *   VALUE -> { ATTR -> { ATTRVALUE } ... }
 * merged over the layers (a higher layer's descriptor with the same VALUE
 * replaces the lower one). NULL if none. Owned by the module. */
const scr_kvtree* scr_param_get_descriptors(const char* name);

/* the SCR_Config layer, before scr_param_init */
/* "KEY=VALUE", "KEY=" (unset), descriptor lines; SCR_ERR_CONFIG on bad input (logged) */
int scr_param_app_set(const char* config_line);
/* the value SCR_Config("KEY") returns, malloc'd, or NULL */
char* scr_param_app_query(const char* name);
/* the layer as a tree, to hand to scr_param_init (owned by the module) */
const scr_kvtree* scr_param_app_tree(void);

/* check every SCR_* environment variable that names a known parameter parses
 * as its type; SCR_ERR_CONFIG with message "environment variable KEY: ..." */
int scr_param_check_environment(char* errbuf, size_t errlen);

/* print one scr_warn line per parameter, descriptor kind or descriptor
 * attribute that some layer (environment included) sets but that this
 * implementation ignores; call once, on rank 0, after scr_param_init */
void scr_param_report_ineffective(void);

/* the parameter table, for --help listings and tests: entries 0 .. size-1
 * in scrconf(5) order (scr_param_def is described in scr_param_table.h) */
int scr_param_count(void);
const scr_param_def* scr_param_at(int index);

/* "FILE:LINE" or "SCR_Config" of the descriptor NAME=VALUE that
 * scr_param_get_descriptors returned, or NULL; for messages */
const char* scr_param_descriptor_origin(const char* name, const char* value);

/* find and parse the configuration files as SCR does: the system file
 * (--with-scr-config-file) into system, and into user $SCR_CONF_FILE, else
 * $SCR_PREFIX/.scrconf, else ./.scrconf, taking SCR_CONF_FILE and SCR_PREFIX
 * from the environment or SCR_Config (SCR_PREFIX also from the system file
 * when system is given). Missing files are fine, except one
 * named by SCR_CONF_FILE. Either tree may be NULL to skip that file. On
 * error errbuf holds the one-line message. Rank 0 calls this and broadcasts. */
int scr_param_read_files(scr_kvtree* user, scr_kvtree* system, char* errbuf, size_t errlen);

/* the user file the last scr_param_read_files read (as it named it), NULL
 * when it found none: a process that must see the same rules reads it again */
const char* scr_param_user_file(void);

#endif
