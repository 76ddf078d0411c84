/* scr_param_table.h - every configuration parameter and descriptor SCR knows:
 * its type, default, description and whether this implementation honours it. MPI-free. */
#ifndef SCR_PARAM_TABLE_H
#define SCR_PARAM_TABLE_H

#include <stddef.h>

typedef enum {
  SCR_PARAM_BOOL,       /* 0/1, yes/no, true/false, on/off */
  SCR_PARAM_INT,        /* decimal integer, optionally range-checked */
  SCR_PARAM_BYTES,      /* byte count with optional suffix: 64KB, 1.5GB, 2GiB */
  SCR_PARAM_DOUBLE,     /* floating-point number */
  SCR_PARAM_STRING,     /* any non-empty text */
  SCR_PARAM_PATH,       /* a file or directory name */
  SCR_PARAM_ENUM,       /* one of a fixed list, case-insensitive */
  SCR_PARAM_DESCRIPTOR  /* KEY=VALUE ATTR=VAL ...; several per file */
} scr_param_type;

/* sections of scrconf(5) and of --help listings */
typedef enum {
  SCR_PARAM_GROUP_GENERAL,
  SCR_PARAM_GROUP_CACHE,
  SCR_PARAM_GROUP_REDUNDANCY,
  SCR_PARAM_GROUP_FLUSH,
  SCR_PARAM_GROUP_CHECKPOINT,
  SCR_PARAM_GROUP_HALT,
  SCR_PARAM_GROUP_LOGGING,
  SCR_PARAM_GROUP_JOB,
  SCR_PARAM_GROUP_LAUNCH,
  SCR_PARAM_GROUP_PRELOAD,
  SCR_PARAM_GROUP_DESCRIPTOR,
  SCR_PARAM_GROUP_COUNT
} scr_param_group;

/* an attribute of a descriptor (COUNT in STORE=/dev/shm COUNT=2) */
typedef struct scr_param_attr {
  const char* name;
  scr_param_type type;           /* never SCR_PARAM_DESCRIPTOR */
  const char* const* choices;    /* SCR_PARAM_ENUM: NULL-terminated list */
  long long min, max;            /* SCR_PARAM_INT: range when min <= max */
  int effective;                 /* 1 when this implementation acts on it */
  const char* description;
} scr_param_attr;

typedef struct scr_param_def {
  const char* name;              /* upper case, as looked up */
  scr_param_type type;
  const char* default_value;     /* NULL: unset unless a layer sets it */
  scr_param_group group;
  int effective;                 /* 0: accepted for LLNL compatibility only */
  const char* description;
  const char* const* choices;    /* SCR_PARAM_ENUM: NULL-terminated list */
  long long min, max;            /* SCR_PARAM_INT: range when min <= max */
  scr_param_type value_type;     /* descriptors: type of the value naming one (CKPT=<int>) */
  const scr_param_attr* attrs;   /* descriptors: terminated by name == NULL */
  int free_attrs;                /* descriptors whose attribute names are user-chosen (GROUPS) */
  const char* alias_of;          /* LLNL spelling of another parameter, which wins */
} scr_param_def;

/* number of entries and the i-th one, in scrconf(5) order */
int scr_param_table_size(void);
const scr_param_def* scr_param_table_at(int index);

/* entry for name (case-insensitive), or NULL */
const scr_param_def* scr_param_table_find(const char* name);

/* attribute of a descriptor (case-insensitive), or NULL; for free_attrs
 * descriptors a synthesised string attribute is returned for any identifier */
const scr_param_attr* scr_param_table_find_attr(const scr_param_def* def, const char* name);

/* nearest known parameter name to name by edit distance, or NULL if none is close */
const char* scr_param_table_suggest(const char* name);
/* nearest attribute of def, or NULL */
const char* scr_param_table_suggest_attr(const scr_param_def* def, const char* name);

/* title of a group, e.g. "flush and fetch" */
const char* scr_param_group_title(scr_param_group group);
/* "integer", "byte count", ... */
const char* scr_param_type_name(scr_param_type type);

/* value parsers shared by the config parser and the typed getters;
 * SCR_SUCCESS or SCR_ERR_INVALID */
int scr_param_parse_bool(const char* text, int* value);
int scr_param_parse_int(const char* text, long long* value);
/* suffixes B, K/KB/KiB, M/MB/MiB, G.., T.., P.., E..; all are powers of 1024 as in LLNL SCR */
int scr_param_parse_bytes(const char* text, unsigned long long* value);
int scr_param_parse_double(const char* text, double* value);

/* check text against a type: SCR_SUCCESS, or SCR_ERR_INVALID with a reason
 * ("expected an integer, got 'ten'") in why. For enums *canonical (may be
 * NULL) gets the table's spelling of the matching choice. */
int scr_param_check_value(scr_param_type type, const char* const* choices,
                          long long min, long long max, const char* text,
                          const char** canonical, char* why, size_t whylen);

#endif
