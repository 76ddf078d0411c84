/* scr_config.h - parser of SCR configuration files (.scrconf, scr.conf) and
 * SCR_Config strings into key-value trees; validates every key. MPI-free. */
#ifndef SCR_CONFIG_H
#define SCR_CONFIG_H

#include <stddef.h>
#include "scr_kvtree.h"

/* Layout of a parsed config tree:
 *   simple     KEY=VALUE            -> tree[KEY][VALUE] = { "@ORIGIN": { "file:line" } }
 *   descriptor KEY=VALUE A=x B=y    -> tree[KEY][VALUE] = { A: {x}, B: {y}, "@ORIGIN": {"file:line"} }
 * Keys are upper-cased for lookups as SCR does; values keep their case.
 * "$VAR" and "${VAR}" in values are replaced from the environment. */

/* parse a file and merge it into settings. On error returns SCR_ERR_CONFIG
 * and writes one line "FILE:LINE: key KEY: what is wrong[; did you mean X?]"
 * into errbuf; settings are then left unchanged. A missing file is
 * SCR_ERR_NOENT with no message. */
int scr_config_read_file(const char* path, scr_kvtree* settings, char* errbuf, size_t errlen);

/* same for text in memory; origin names it in messages (e.g. "SCR_Config") */
int scr_config_parse_string(const char* text, const char* origin,
                            scr_kvtree* settings, char* errbuf, size_t errlen);

#endif
