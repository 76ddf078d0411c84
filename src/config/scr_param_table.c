/* scr_param_table.c - the parameters and descriptors of LLNL SCR 3.x that a
 * config file may name, with the value checks and did-you-mean suggestions. */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "scr_error.h"
#include "scr_param_table.h"

/* shorthands keep one parameter per line or two, so the table reads as a list */
#define NO_RANGE 1, 0
#define SIMPLE(n, t, d, g, e, desc) \
  { .name = n, .type = t, .default_value = d, .group = g, .effective = e, \
    .description = desc, .min = 1, .max = 0 }
#define RANGED(n, d, g, e, lo, hi, desc) \
  { .name = n, .type = SCR_PARAM_INT, .default_value = d, .group = g, .effective = e, \
    .description = desc, .min = lo, .max = hi }
#define ATTR(n, t, e, desc) { n, t, NULL, NO_RANGE, e, desc }
#define ATTR_INT(n, lo, hi, e, desc) { n, SCR_PARAM_INT, NULL, lo, hi, e, desc }
#define ATTR_ENUM(n, c, e, desc) { n, SCR_PARAM_ENUM, c, NO_RANGE, e, desc }
#define ATTR_END { NULL, SCR_PARAM_STRING, NULL, NO_RANGE, 0, NULL }
#define BIG 1000000000LL

enum { YES = 1, NO = 0 };
#define G(x) SCR_PARAM_GROUP_##x
#define T(x) SCR_PARAM_##x

static const char* const copy_types[] = { "SINGLE", "PARTNER", "XOR", "RS", "FILE", NULL };
static const char* const ckpt_types[] = { "SINGLE", "PARTNER", "XOR", "RS", NULL };
static const char* const preload_types[] = { "CHECKPOINT", "OUTPUT", NULL };
static const char* const boundaries[] = { "CLOSE", "BARRIER", "NEXT", "FINALIZE", NULL };

static const scr_param_attr store_attrs[] = {
  ATTR("GROUP", T(STRING), YES, "group of ranks that share the device (NODE: node-local, WORLD: global)"),
  ATTR_INT("COUNT", 0, BIG, YES, "maximum number of datasets kept on this store (default SCR_CACHE_SIZE)"),
  ATTR("ENABLED", T(BOOL), YES, "0 keeps the descriptor but does not use the store"),
  ATTR("MKDIR", T(BOOL), NO, "whether directories may be created on the device"),
  ATTR("FLUSH", T(STRING), NO, "LLNL AXL transfer method used to flush from this store"),
  ATTR("VIEW", T(STRING), NO, "LLNL hint whether the store is node-local or global"),
  ATTR("TYPE", T(STRING), NO, "older LLNL spelling of FLUSH"),
  ATTR_END
};

static const scr_param_attr ckpt_attrs[] = {
  ATTR_INT("INTERVAL", 1, BIG, YES, "use this descriptor for checkpoints whose number it divides (default 1)"),
  ATTR_ENUM("TYPE", ckpt_types, YES, "redundancy scheme (default SCR_COPY_TYPE)"),
  ATTR("GROUP", T(STRING), YES, "failure group (default SCR_GROUP)"),
  ATTR("STORE", T(PATH), NO, "store to cache the dataset in (LLNL; here SCR_CACHE_BASE holds every dataset)"),
  ATTR_INT("SET_SIZE", 1, BIG, YES, "minimum ranks per XOR or RS set (default SCR_SET_SIZE)"),
  ATTR_INT("SET_FAILURES", 1, BIG, YES, "failures per RS set to tolerate (default SCR_SET_FAILURES)"),
  ATTR_INT("HOP_DISTANCE", 1, BIG, YES, "distance between partners (default SCR_HOP_DISTANCE)"),
  ATTR("OUTPUT", T(BOOL), YES, "1 selects this descriptor for datasets flagged SCR_FLAG_OUTPUT"),
  ATTR("BYPASS", T(BOOL), NO, "1 writes the files to the prefix directory (LLNL; here SCR_CACHE_BYPASS)"),
  ATTR("ENABLED", T(BOOL), NO, "0 ignores the descriptor (LLNL; here every CKPT descriptor is used)"),
  ATTR_END
};

static const scr_param_attr capacity_attrs[] = {
  ATTR("BYTES", T(BYTES), NO, "capacity the node check expects the directory to have"),
  ATTR_END
};

static const scr_param_attr preload_attrs[] = {
  ATTR_ENUM("TYPE", preload_types, YES, "CHECKPOINT (default) or OUTPUT, which must reach the prefix directory"),
  ATTR_INT("FILES", 1, BIG, YES, "files each rank writes per dataset, when the pattern cannot tell"),
  ATTR_ENUM("BOUNDARY", boundaries, YES, "when the dataset completes: CLOSE (default), BARRIER, NEXT or FINALIZE"),
  ATTR("CALLER", T(STRING), YES, "function name glob that must be on the stack for an open to count"),
  ATTR_END
};

static const scr_param_def table[] = {
  /* general */
  SIMPLE("SCR_ENABLE", T(BOOL), "1", G(GENERAL), YES, "0 turns SCR off: the application's files go where it writes them"),
  RANGED("SCR_DEBUG", "0", G(GENERAL), YES, 0, 10, "message verbosity: 0 quiet, 1 decisions and timings, 2 details"),
  SIMPLE("SCR_PREFIX", T(PATH), NULL, G(GENERAL), YES, "directory on the parallel file system for flushed datasets and .scr/; unset: the current directory"),
  SIMPLE("SCR_CONF_FILE", T(PATH), NULL, G(GENERAL), YES, "user configuration file to read instead of $SCR_PREFIX/.scrconf"),
  SIMPLE("SCR_CURRENT", T(STRING), NULL, G(GENERAL), YES, "name of the checkpoint to restart from instead of the newest"),
  SIMPLE("SCR_FILE_BUF_SIZE", T(BYTES), "1MB", G(GENERAL), YES, "buffer size for copying files between cache and the prefix directory"),
  SIMPLE("SCR_MPI_BUF_SIZE", T(BYTES), "1MB", G(GENERAL), YES, "size of the pieces ranks exchange while encoding or rebuilding redundancy data"),
  RANGED("SCR_PREFIX_SIZE", "0", G(GENERAL), NO, 0, BIG, "checkpoints to keep in the prefix directory, older ones deleted; 0 keeps all"),
  SIMPLE("SCR_PREFIX_PURGE", T(BOOL), "0", G(GENERAL), NO, "delete every dataset in the prefix directory during SCR_Init"),
  SIMPLE("SCR_DROP_AFTER_CURRENT", T(BOOL), "0", G(GENERAL), NO, "drop the datasets newer than the one named with SCR_Current"),
  SIMPLE("SCR_COPY_METADATA", T(BOOL), "0", G(GENERAL), NO, "also copy file modes and times on flush and fetch"),
  SIMPLE("SCR_AXL_MKDIR", T(BOOL), "1", G(GENERAL), NO, "let LLNL's transfer library create directories during a flush"),
  SIMPLE("SCR_USE_CONTAINERS", T(BOOL), "0", G(GENERAL), NO, "pack the files of a dataset into container files on the prefix directory"),
  SIMPLE("SCR_CONTAINER_SIZE", T(BYTES), "100GB", G(GENERAL), NO, "maximum size of one container file"),

  /* cache */
  SIMPLE("SCR_CNTL_BASE", T(PATH), "/dev/shm", G(CACHE), YES, "base of the control directory with each rank's filemap; node-local and fast"),
  SIMPLE("SCR_CACHE_BASE", T(PATH), "/dev/shm", G(CACHE), YES, "base of the cache directory when no STORE or CKPT descriptor names one"),
  RANGED("SCR_CACHE_SIZE", "1", G(CACHE), YES, 0, BIG, "datasets kept in cache; the oldest is deleted to make room for a new one"),
  SIMPLE("SCR_CACHE_BYPASS", T(BOOL), "0", G(CACHE), YES, "1 writes datasets straight to the prefix directory (LLNL SCR 3 defaults to 1)"),
  SIMPLE("SCR_CACHE_PURGE", T(BOOL), "0", G(CACHE), NO, "delete every cached dataset during SCR_Init"),

  /* redundancy */
  { .name = "SCR_COPY_TYPE", .type = T(ENUM), .default_value = "XOR", .group = G(REDUNDANCY),
    .effective = YES, .choices = copy_types, .min = 1, .max = 0,
    .description = "redundancy scheme of the implied checkpoint descriptor; FILE uses the CKPT descriptors" },
  RANGED("SCR_SET_SIZE", "8", G(REDUNDANCY), YES, 1, BIG, "minimum number of ranks in an XOR or RS set"),
  RANGED("SCR_SET_FAILURES", "2", G(REDUNDANCY), YES, 1, BIG, "failures within one RS set that can be recovered"),
  SIMPLE("SCR_GROUP", T(STRING), "NODE", G(REDUNDANCY), YES, "failure group: ranks that are likely to fail together"),
  RANGED("SCR_HOP_DISTANCE", "1", G(REDUNDANCY), YES, 1, BIG, "distance, in failure groups, between partners and set members"),
  SIMPLE("SCR_CRC_ON_COPY", T(BOOL), "0", G(REDUNDANCY), YES, "compute and check CRC32 of files copied by the redundancy scheme"),
  SIMPLE("SCR_CRC_ON_DELETE", T(BOOL), "0", G(REDUNDANCY), YES, "check the CRC32 of cached files before deleting them"),
  SIMPLE("SCR_DISTRIBUTE", T(BOOL), "1", G(REDUNDANCY), NO, "0 skips moving cached files to their owners during SCR_Init"),

  /* flush and fetch */
  RANGED("SCR_FLUSH", "10", G(FLUSH), YES, 0, BIG, "flush every Nth checkpoint to the prefix directory; 0: only output datasets"),
  SIMPLE("SCR_FLUSH_ASYNC", T(BOOL), "0", G(FLUSH), YES, "flush checkpoints in the background through a scr_transfer daemon per node (see scr_transfer(1)); output datasets are still flushed before SCR_Complete_output returns; under the preload layer the copy goes to a stage under <prefix>/.scr that is published at a later completion, barrier or MPI_Finalize (see scr_preload(7))"),
  SIMPLE("SCR_FLUSH_ASYNC_BW", T(BYTES), NULL, G(FLUSH), YES, "bytes per second an asynchronous flush may use per node; unset: no limit"),
  SIMPLE("SCR_FLUSH_ASYNC_PERCENT", T(DOUBLE), NULL, G(FLUSH), YES, "percent of a CPU an asynchronous flush may use; unset: no limit"),
  SIMPLE("SCR_FLUSH_REDUNDANCY", T(BOOL), "0", G(FLUSH), YES, "a synchronous flush copies each dataset's redundancy data (XOR and RS parity, PARTNER copies) to the prefix directory too, for scr_index --build; costs the parity's share of the bytes (PARTNER: as much again)"),
  SIMPLE("SCR_SCAVENGE_REDUNDANCY", T(BOOL), "1", G(FLUSH), YES, "scr_scavenge copies the redundancy data beside the files it scavenges, so that scr_index --build rebuilds on the prefix directory the ranks of nodes lost at the end of the allocation"),
  SIMPLE("SCR_FLUSH_ON_RESTART", T(BOOL), "0", G(FLUSH), YES, "flush the checkpoint restored by SCR_Init before the run goes on"),
  SIMPLE("SCR_FLUSH_TYPE", T(STRING), "SYNC", G(FLUSH), NO, "LLNL AXL transfer method: SYNC, PTHREAD, BBAPI or DATAWARP"),
  RANGED("SCR_FLUSH_WIDTH", "256", G(FLUSH), NO, 1, BIG, "ranks writing to the parallel file system at once"),
  SIMPLE("SCR_FLUSH_POSTSTAGE", T(BOOL), "0", G(FLUSH), NO, "finish asynchronous flushes after the job (IBM burst buffer)"),
  SIMPLE("SCR_FETCH", T(BOOL), "1", G(FLUSH), YES, "fetch the newest checkpoint from the prefix directory when the cache has none"),
  RANGED("SCR_FETCH_WIDTH", "256", G(FLUSH), NO, 1, BIG, "ranks reading from the parallel file system at once"),
  SIMPLE("SCR_FETCH_BYPASS", T(BOOL), "0", G(FLUSH), NO, "read a fetched checkpoint in place on the parallel file system"),
  SIMPLE("SCR_GLOBAL_RESTART", T(BOOL), "0", G(FLUSH), NO, "flush cached checkpoints in SCR_Init and restart from the prefix directory"),
  SIMPLE("SCR_CRC_ON_FLUSH", T(BOOL), "1", G(FLUSH), YES, "compute CRC32 of each file on flush and verify it on fetch"),

  /* checkpoint timing */
  RANGED("SCR_CHECKPOINT_INTERVAL", "0", G(CHECKPOINT), YES, 0, BIG, "SCR_Need_checkpoint says yes every Nth call; 0 disables this test"),
  RANGED("SCR_CHECKPOINT_SECONDS", "0", G(CHECKPOINT), YES, 0, BIG, "SCR_Need_checkpoint says yes once this many seconds passed since the last checkpoint; 0 disables"),
  SIMPLE("SCR_CHECKPOINT_OVERHEAD", T(DOUBLE), "0", G(CHECKPOINT), YES, "SCR_Need_checkpoint keeps checkpoint time below this percent of run time; 0 disables"),
  SIMPLE("SCR_MTBF", T(STRING), NULL, G(CHECKPOINT), YES, "mean time between failures (90, 15m, 6h, 2d): without SCR_CHECKPOINT_INTERVAL and SCR_CHECKPOINT_SECONDS, SCR_Need_checkpoint says yes at the Young/Daly interval for the measured checkpoint cost; the end-of-run line advises on the interval"),

  /* halt */
  RANGED("SCR_HALT_SECONDS", "0", G(HALT), YES, 0, BIG, "halt after a checkpoint when less than this many seconds remain in the allocation"),
  RANGED("SCR_END_TIME", NULL, G(HALT), YES, 0, 253402300799LL, "when the allocation ends, in seconds since the epoch; scr_run sets it from the resource manager (Slurm); with SCR_HALT_SECONDS the job halts after a checkpoint that close to it"),
  SIMPLE("SCR_HALT_EXIT", T(BOOL), "0", G(HALT), YES, "SCR calls exit() itself when a halt condition holds (1 under libscr_preload.so)"),
  SIMPLE("SCR_HALT_ENABLED", T(BOOL), "1", G(HALT), YES, "0 reports halt conditions through SCR_Should_exit but never stops the job"),

  /* logging */
  SIMPLE("SCR_LOG_ENABLE", T(BOOL), "1", G(LOGGING), YES, "record SCR events (runs, checkpoints, encodings, flushes, restores, halts) for scr_log(1); LLNL SCR defaults to 0"),
  SIMPLE("SCR_LOG_TXT_ENABLE", T(BOOL), "1", G(LOGGING), YES, "with SCR_LOG_ENABLE, append events to $SCR_PREFIX/.scr/log"),
  SIMPLE("SCR_LOG_SYSLOG_ENABLE", T(BOOL), "0", G(LOGGING), YES, "with SCR_LOG_ENABLE, send events to syslog (LLNL SCR defaults to 1)"),
  SIMPLE("SCR_LOG_SYSLOG_PREFIX", T(STRING), "SCR", G(LOGGING), NO, "tag of syslog messages"),
  SIMPLE("SCR_LOG_SYSLOG_FACILITY", T(STRING), "LOG_LOCAL7", G(LOGGING), NO, "syslog facility"),
  SIMPLE("SCR_LOG_SYSLOG_LEVEL", T(STRING), "LOG_INFO", G(LOGGING), NO, "syslog level"),
  SIMPLE("SCR_LOG_DB_ENABLE", T(BOOL), "0", G(LOGGING), NO, "log events to a MySQL database"),
  RANGED("SCR_LOG_DB_DEBUG", "0", G(LOGGING), NO, 0, BIG, "print each MySQL statement"),
  SIMPLE("SCR_LOG_DB_HOST", T(STRING), NULL, G(LOGGING), NO, "MySQL server"),
  SIMPLE("SCR_LOG_DB_NAME", T(STRING), NULL, G(LOGGING), NO, "MySQL database"),
  SIMPLE("SCR_LOG_DB_USER", T(STRING), NULL, G(LOGGING), NO, "MySQL user"),
  SIMPLE("SCR_LOG_DB_PASS", T(STRING), NULL, G(LOGGING), NO, "MySQL password"),

  /* job identity */
  SIMPLE("SCR_JOB_NAME", T(STRING), NULL, G(JOB), YES, "job name recorded with each dataset"),
  SIMPLE("SCR_JOB_ID", T(STRING), NULL, G(JOB), YES, "job id in cache and control directory names; unset: from SLURM, Flux, LSF or PBS"),
  SIMPLE("SCR_USER", T(STRING), NULL, G(JOB), YES, "user name in cache and control directory names; unset: $USER or the password database"),
  { .name = "SCR_USER_NAME", .type = T(STRING), .group = G(JOB), .effective = YES, .min = 1, .max = 0,
    .alias_of = "SCR_USER", .description = "LLNL SCR's spelling of SCR_USER; SCR_USER wins within a layer" },
  SIMPLE("SCR_CLUSTER_NAME", T(STRING), NULL, G(JOB), NO, "cluster name recorded with each dataset"),

  /* launch */
  RANGED("SCR_RUNS", "1", G(LAUNCH), YES, -1, BIG, "launches scr_run makes at most within one allocation (0 counts as 1); -1: no limit"),
  SIMPLE("SCR_NODELIST", T(STRING), NULL, G(LAUNCH), YES, "nodes of the allocation, in host list syntax; unset: those the launcher names (scr_cluster: all)"),
  RANGED("SCR_MIN_NODES", NULL, G(LAUNCH), YES, 1, BIG, "fewest healthy nodes an scr_run launch may use; unset: as many as the launcher names"),
  SIMPLE("SCR_EXCLUDE_NODES", T(STRING), NULL, G(LAUNCH), YES, "nodes scr_run must not use, in host list syntax (node[1-4,7])"),
  RANGED("SCR_WATCHDOG_TIMEOUT", NULL, G(LAUNCH), YES, 0, BIG, "seconds a launch of scr_run may go without SCR activity (a checkpoint, a flush, a fetch) before it counts as hung and is ended; 0: no watchdog; unset: 3 times the longest interval between the job's checkpoints, at least SCR_WATCHDOG_MIN, and 3600 until the launch completed a checkpoint"),
  RANGED("SCR_WATCHDOG_MIN", "300", G(LAUNCH), YES, 1, BIG, "seconds the watchdog of scr_run waits at least when SCR_WATCHDOG_TIMEOUT is unset (it adapts to the interval between checkpoints)"),
  RANGED("SCR_WATCHDOG_TIMEOUT_PFS", NULL, G(LAUNCH), NO, 1, BIG, "LLNL SCR: seconds a write to the parallel file system may take before the job counts as hung"),

  /* preload */
  SIMPLE("SCR_PRELOAD_DRYRUN", T(BOOL), "0", G(PRELOAD), YES, "route nothing; print which opens would match which PRELOAD rule"),
  { .name = "PRELOAD", .type = T(DESCRIPTOR), .group = G(PRELOAD), .effective = YES, .min = 1, .max = 0,
    .value_type = T(STRING), .attrs = preload_attrs,
    .description = "checkpoint rule of the preload layer: a path pattern with *, ?, [..], ** and {step}, {rank}" },

  /* descriptors */
  { .name = "STORE", .type = T(DESCRIPTOR), .group = G(DESCRIPTOR), .effective = NO, .min = 1, .max = 0,
    .value_type = T(PATH), .attrs = store_attrs,
    .description = "a storage device, named by its directory (LLNL; here SCR_CACHE_BASE and SCR_CACHE_SIZE)" },
  { .name = "CKPT", .type = T(DESCRIPTOR), .group = G(DESCRIPTOR), .effective = YES, .min = 0, .max = BIG,
    .value_type = T(INT), .attrs = ckpt_attrs, .description = "a redundancy descriptor, numbered from 0; used when SCR_COPY_TYPE=FILE" },
  { .name = "GROUPS", .type = T(DESCRIPTOR), .group = G(DESCRIPTOR), .effective = YES, .min = 1, .max = 0,
    .value_type = T(STRING), .free_attrs = 1, .description = "failure groups of one host: GROUPS=host RACK=r1 POWER=p2" },
  { .name = "CNTLDIR", .type = T(DESCRIPTOR), .group = G(DESCRIPTOR), .effective = NO, .min = 1, .max = 0,
    .value_type = T(PATH), .attrs = capacity_attrs, .description = "expected capacity of a control directory base, for node checks" },
  { .name = "CACHEDIR", .type = T(DESCRIPTOR), .group = G(DESCRIPTOR), .effective = NO, .min = 1, .max = 0,
    .value_type = T(PATH), .attrs = capacity_attrs, .description = "expected capacity of a cache directory base, for node checks" },
};

#define TABLE_SIZE ((int) (sizeof(table) / sizeof(table[0])))

int scr_param_table_size(void)
{
  return TABLE_SIZE;
}

const scr_param_def* scr_param_table_at(int index)
{
  return (index >= 0 && index < TABLE_SIZE) ? &table[index] : NULL;
}

const scr_param_def* scr_param_table_find(const char* name)
{
  if (!name) return NULL;
  for (int i = 0; i < TABLE_SIZE; i++) {
    if (strcasecmp(table[i].name, name) == 0) return &table[i];
  }
  return NULL;
}

/* GROUPS accepts any attribute name: they are the user's group names */
static const scr_param_attr free_attr = {
  "", SCR_PARAM_STRING, NULL, NO_RANGE, YES, "a group name and the host's member of it"
};

static int is_identifier(const char* s)
{
  if (!s || !(isalpha((unsigned char) s[0]) || s[0] == '_')) return 0;
  for (; *s; s++) {
    if (!(isalnum((unsigned char) *s) || *s == '_')) return 0;
  }
  return 1;
}

const scr_param_attr* scr_param_table_find_attr(const scr_param_def* def, const char* name)
{
  if (!def || !name) return NULL;
  if (def->free_attrs) return is_identifier(name) ? &free_attr : NULL;
  for (const scr_param_attr* a = def->attrs; a && a->name; a++) {
    if (strcasecmp(a->name, name) == 0) return a;
  }
  return NULL;
}

/* optimal string alignment distance, so that a swapped pair of letters
 * (COUTN for COUNT) costs one edit like a typo of one letter */
static int edit_distance(const char* a, const char* b)
{
  size_t n = strlen(a), m = strlen(b);
  if (n > 64 || m > 64) return 1000;
  int d[65][65];
  for (size_t i = 0; i <= n; i++) d[i][0] = (int) i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (int) j;
  for (size_t i = 1; i <= n; i++) {
    for (size_t j = 1; j <= m; j++) {
      int cost = toupper((unsigned char) a[i - 1]) != toupper((unsigned char) b[j - 1]);
      int best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < best) best = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && toupper((unsigned char) a[i - 1]) == toupper((unsigned char) b[j - 2])
          && toupper((unsigned char) a[i - 2]) == toupper((unsigned char) b[j - 1])
          && d[i - 2][j - 2] + 1 < best) {
        best = d[i - 2][j - 2] + 1;
      }
      d[i][j] = best;
    }
  }
  return d[n][m];
}

/* a suggestion is only useful when it is clearly what was meant */
static int close_enough(const char* name, int distance)
{
  size_t len = strlen(name);
  int limit = len <= 4 ? 1 : (len <= 8 ? 2 : 3);
  return distance <= limit;
}

const char* scr_param_table_suggest(const char* name)
{
  if (!name) return NULL;
  /* a common slip is to drop the SCR_ prefix: CACHE_SIZE=2 */
  char prefixed[128];
  if (strncasecmp(name, "SCR_", 4) != 0 && strlen(name) < sizeof(prefixed) - 4) {
    snprintf(prefixed, sizeof(prefixed), "SCR_%s", name);
    const scr_param_def* def = scr_param_table_find(prefixed);
    if (def) return def->name;
  }
  const char* best = NULL;
  int best_distance = 1000;
  for (int i = 0; i < TABLE_SIZE; i++) {
    int d = edit_distance(name, table[i].name);
    if (d < best_distance) {
      best_distance = d;
      best = table[i].name;
    }
  }
  return (best && close_enough(name, best_distance)) ? best : NULL;
}

const char* scr_param_table_suggest_attr(const scr_param_def* def, const char* name)
{
  if (!def || !name || def->free_attrs) return NULL;
  const char* best = NULL;
  int best_distance = 1000;
  for (const scr_param_attr* a = def->attrs; a && a->name; a++) {
    int d = edit_distance(name, a->name);
    if (d < best_distance) {
      best_distance = d;
      best = a->name;
    }
  }
  return (best && close_enough(name, best_distance)) ? best : NULL;
}

const char* scr_param_group_title(scr_param_group group)
{
  static const char* titles[SCR_PARAM_GROUP_COUNT] = {
    "general", "cache", "redundancy", "flush and fetch", "checkpoint timing",
    "halt", "logging", "job identity", "launch (scr_run)", "preload", "descriptors"
  };
  return (group >= 0 && group < SCR_PARAM_GROUP_COUNT) ? titles[group] : "other";
}

const char* scr_param_type_name(scr_param_type type)
{
  switch (type) {
  case SCR_PARAM_BOOL:       return "boolean";
  case SCR_PARAM_INT:        return "integer";
  case SCR_PARAM_BYTES:      return "byte count";
  case SCR_PARAM_DOUBLE:     return "number";
  case SCR_PARAM_STRING:     return "string";
  case SCR_PARAM_PATH:       return "path";
  case SCR_PARAM_ENUM:       return "choice";
  case SCR_PARAM_DESCRIPTOR: return "descriptor";
  }
  return "value";
}

/* copy text without surrounding blanks (environment values often carry them) */
static int trimmed(const char* text, char* buf, size_t len)
{
  if (!text) return SCR_ERR_INVALID;
  while (isspace((unsigned char) *text)) text++;
  size_t n = strlen(text);
  while (n > 0 && isspace((unsigned char) text[n - 1])) n--;
  if (n == 0 || n >= len) return SCR_ERR_INVALID;
  memcpy(buf, text, n);
  buf[n] = '\0';
  return SCR_SUCCESS;
}

int scr_param_parse_bool(const char* text, int* value)
{
  static const char* const truths[] = { "1", "yes", "true", "on", NULL };
  static const char* const lies[] = { "0", "no", "false", "off", NULL };
  char buf[16];
  if (trimmed(text, buf, sizeof(buf)) != SCR_SUCCESS) return SCR_ERR_INVALID;
  for (int i = 0; truths[i]; i++) {
    if (strcasecmp(buf, truths[i]) == 0) { *value = 1; return SCR_SUCCESS; }
    if (strcasecmp(buf, lies[i]) == 0) { *value = 0; return SCR_SUCCESS; }
  }
  return SCR_ERR_INVALID;
}

int scr_param_parse_int(const char* text, long long* value)
{
  char buf[64], *end = NULL;
  if (trimmed(text, buf, sizeof(buf)) != SCR_SUCCESS) return SCR_ERR_INVALID;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (errno != 0 || end == buf || *end != '\0') return SCR_ERR_INVALID;
  *value = v;
  return SCR_SUCCESS;
}

int scr_param_parse_double(const char* text, double* value)
{
  char buf[64], *end = NULL;
  if (trimmed(text, buf, sizeof(buf)) != SCR_SUCCESS) return SCR_ERR_INVALID;
  errno = 0;
  double v = strtod(buf, &end);
  if (errno != 0 || end == buf || *end != '\0' || !isfinite(v)) return SCR_ERR_INVALID;
  *value = v;
  return SCR_SUCCESS;
}

/* parsed by hand rather than with strtod so that a locale with a decimal
 * comma in the application cannot change what "1.5GB" means */
int scr_param_parse_bytes(const char* text, unsigned long long* value)
{
  static const char units[] = "KMGTPE";
  char buf[64];
  if (trimmed(text, buf, sizeof(buf)) != SCR_SUCCESS) return SCR_ERR_INVALID;
  const char* p = buf;
  unsigned long long whole = 0;
  int digits = 0;
  for (; isdigit((unsigned char) *p); p++, digits++) {
    if (whole > (~0ULL - 9) / 10) return SCR_ERR_INVALID;
    whole = whole * 10 + (unsigned long long) (*p - '0');
  }
  long double fraction = 0.0L, scale = 1.0L;
  if (*p == '.') {
    for (p++; isdigit((unsigned char) *p); p++, digits++) {
      scale /= 10.0L;
      fraction += (long double) (*p - '0') * scale;
    }
  }
  if (digits == 0) return SCR_ERR_INVALID;
  while (*p == ' ') p++;

  unsigned long long multiplier = 1;
  if (*p != '\0') {
    const char* unit = strchr(units, toupper((unsigned char) *p));
    if (unit) {
      for (const char* u = units; u <= unit; u++) multiplier *= 1024ULL;
      p++;
      if (*p == 'i' || *p == 'I') p++;
    }
    if (*p == 'b' || *p == 'B') p++;
    if (*p != '\0') return SCR_ERR_INVALID;
  }
  if (whole != 0 && multiplier > ~0ULL / whole) return SCR_ERR_INVALID;
  long double total = (long double) whole * multiplier + fraction * multiplier;
  if (total >= 18446744073709551615.0L) return SCR_ERR_INVALID;
  *value = (unsigned long long) total;
  return SCR_SUCCESS;
}

int scr_param_check_value(scr_param_type type, const char* const* choices,
                          long long min, long long max, const char* text,
                          const char** canonical, char* why, size_t whylen)
{
  int b;
  long long i;
  double d;
  unsigned long long u;
  if (canonical) *canonical = NULL;
  if (!text || !*text) {
    snprintf(why, whylen, "empty value");
    return SCR_ERR_INVALID;
  }
  switch (type) {
  case SCR_PARAM_BOOL:
    if (scr_param_parse_bool(text, &b) == SCR_SUCCESS) return SCR_SUCCESS;
    snprintf(why, whylen, "expected 0 or 1 (or yes/no, true/false, on/off), got '%s'", text);
    return SCR_ERR_INVALID;
  case SCR_PARAM_INT:
    if (scr_param_parse_int(text, &i) != SCR_SUCCESS) {
      snprintf(why, whylen, "expected an integer, got '%s'", text);
      return SCR_ERR_INVALID;
    }
    if (min <= max && (i < min || i > max)) {
      if (max >= BIG) snprintf(why, whylen, "expected an integer >= %lld, got '%s'", min, text);
      else snprintf(why, whylen, "expected an integer from %lld to %lld, got '%s'", min, max, text);
      return SCR_ERR_INVALID;
    }
    return SCR_SUCCESS;
  case SCR_PARAM_BYTES:
    if (scr_param_parse_bytes(text, &u) == SCR_SUCCESS) return SCR_SUCCESS;
    snprintf(why, whylen, "expected a byte count such as 4096, 64KB or 2GiB, got '%s'", text);
    return SCR_ERR_INVALID;
  case SCR_PARAM_DOUBLE:
    if (scr_param_parse_double(text, &d) == SCR_SUCCESS) return SCR_SUCCESS;
    snprintf(why, whylen, "expected a number, got '%s'", text);
    return SCR_ERR_INVALID;
  case SCR_PARAM_ENUM: {
    for (int k = 0; choices && choices[k]; k++) {
      if (strcasecmp(text, choices[k]) == 0) {
        if (canonical) *canonical = choices[k];
        return SCR_SUCCESS;
      }
    }
    size_t n = (size_t) snprintf(why, whylen, "'%s' is not one of ", text);
    for (int k = 0; choices && choices[k] && n < whylen; k++) {
      n += (size_t) snprintf(why + n, whylen - n, "%s%s", k ? ", " : "", choices[k]);
    }
    return SCR_ERR_INVALID;
  }
  case SCR_PARAM_STRING:
  case SCR_PARAM_PATH:
  case SCR_PARAM_DESCRIPTOR:
    return SCR_SUCCESS;
  }
  snprintf(why, whylen, "unknown type");
  return SCR_ERR_INVALID;
}
