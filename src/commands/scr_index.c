/* scr_index.c - the scr_index command: lists the datasets the prefix directory
 * knows (index.scr, flush.scr, the event log) with where they live and whether a
 * restart would use them, as a table or JSON; chooses the one to restart from, and drops entries. */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_kvtree.h"
#include "scr_dataset.h"
#include "scr_index_file.h"
#include "scr_summary_file.h"
#include "scr_reddesc_type.h"
#include "scr_prefix_rebuild.h"
#include "scr_publish.h"

/* exit codes: 1 when the work failed, 2 when the command line was wrong */
enum { SCR_INDEX_EXIT_FAILED = 1, SCR_INDEX_EXIT_USAGE = 2 };

/* one action per run; each has a function below taking the prefix and the
 * option's argument, so a new action is an enum value, an option and a function */
enum scr_index_action { SCR_INDEX_LIST, SCR_INDEX_CURRENT, SCR_INDEX_DROP, SCR_INDEX_JSON, SCR_INDEX_BUILD };

/* what an update callback needs to explain a refusal */
struct scr_index_target {
  const char* name;
  const char* path;
};

static void scr_index_usage(FILE* out)
{
  fprintf(out,
    "Usage: scr_index [--prefix DIR] [--list | --json | --current NAME | --drop NAME | --build NAME]\n"
    "Show and edit the index of datasets flushed to the prefix directory DIR\n"
    "(default: $SCR_PREFIX, else the current directory).\n"
    "\n"
    "  -p, --prefix DIR      prefix directory holding .scr/index.scr\n"
    "  -l, --list            list the datasets, newest first (the default action)\n"
    "  -j, --json            the same as one JSON object, for scripts\n"
    "  -c, --current NAME    restart from dataset NAME (a complete checkpoint)\n"
    "  -d, --drop NAME       remove dataset NAME from the index; its files stay\n"
    "  -b, --build NAME      rebuild the files of the ranks dataset NAME (or id) lacks on the\n"
    "                        prefix directory from the redundancy data flushed with it, then\n"
    "                        mark it complete so that a restart fetches it\n"
    "  -h, --help            print this help\n");
}

/* ---- --list ---- */

enum { SCR_INDEX_COLUMNS = 12 };
static const char* const scr_index_headers[SCR_INDEX_COLUMNS] = {
  "ID", "NAME", "CKPT", "FLAGS", "FILES", "SIZE", "SCHEME", "WHERE", "FLUSHED", "CUR", "STATE", "RESTART"
};
/* numbers read best aligned on the right */
static const int scr_index_right_aligned[SCR_INDEX_COLUMNS] = { 1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0 };

/* what the prefix directory knows of one dataset beyond the index: the
 * job's rank 0 lists in flush.scr what its cache holds (CACHE, FLUSHING, or
 * PFS when flushed too), and the event log says how it was encoded */
struct scr_index_extra {
  scr_kvtree* flush;       /* flush.scr */
  scr_kvtree* schemes;     /* dset id -> scheme, from the log's ENCODE_START */
  scr_kvtree* hosts;       /* dset id -> host of rank 0 and nodes of the run that wrote it */
  int restart_cache;       /* newest checkpoint the cache holds: a restart tries it first; -1 */
  int restart_prefix;      /* the one a fetch would take; -1 */
};

struct scr_index_row {
  char cell[SCR_INDEX_COLUMNS][128];
};

static void scr_index_format_size(const scr_kvtree* desc, char* buf, size_t len)
{
  static const char* const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  uint64_t bytes;
  if (desc == NULL || scr_kvtree_get_uint64(desc, "SIZE", &bytes) != SCR_SUCCESS) {
    snprintf(buf, len, "-");
    return;
  }
  if (bytes < 1024) {
    snprintf(buf, len, "%llu B", (unsigned long long) bytes);
    return;
  }
  double value = (double) bytes / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof(units) / sizeof(units[0])) {
    value /= 1024.0;
    unit++;
  }
  snprintf(buf, len, "%.1f %s", value, units[unit]);
}

static void scr_index_format_flushed(const scr_kvtree* entry, char* buf, size_t len)
{
  long long epoch;
  struct tm tm;
  time_t when;
  if (scr_kvtree_get_int(entry, SCR_INDEX_KEY_FLUSHED, &epoch) != SCR_SUCCESS) {
    snprintf(buf, len, "-");
    return;
  }
  when = (time_t) epoch;
  if (localtime_r(&when, &tm) == NULL || strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0) {
    snprintf(buf, len, "@%lld", epoch);
  }
}

static const char* scr_index_cache_state(const struct scr_index_extra* x, int id)
{
  return scr_kvtree_get_val(scr_kvtree_get_kv_int(x->flush, "DSET", id), "LOCATION");
}

/* where the dataset lives: "cache", "cache,prefix", "prefix", or "-" */
static void scr_index_format_where(const scr_kvtree* index, const struct scr_index_extra* x, int id, char* buf,
                                   size_t len)
{
  const char* cache = scr_index_cache_state(x, id);
  int on_prefix = scr_kvtree_get_kv_int(index, SCR_INDEX_KEY_DSET, id) && scr_index_file_is_complete(index, id);
  const char* host = scr_kvtree_get_val(scr_kvtree_get_kv_int(x->hosts, "DSET", id), "HOST");
  const char* nodes = scr_kvtree_get_val(scr_kvtree_get_kv_int(x->hosts, "DSET", id), "NODES");
  char where[96] = "";
  if (cache) {
    /* the log names rank 0's node and counts the others */
    if (host && nodes && strcmp(nodes, "1") == 0) snprintf(where, sizeof(where), "cache(%s)", host);
    else if (host && nodes) snprintf(where, sizeof(where), "cache(%s+%d)", host, atoi(nodes) - 1);
    else snprintf(where, sizeof(where), "cache");
    if (strcmp(cache, "FLUSHING") == 0) snprintf(where + strlen(where), sizeof(where) - strlen(where), ",flushing");
    if (strcmp(cache, "PUBLISHING") == 0)
      snprintf(where + strlen(where), sizeof(where) - strlen(where), ",publishing");
  }
  if (on_prefix) snprintf(where + strlen(where), sizeof(where) - strlen(where), "%sprefix", where[0] ? "," : "");
  snprintf(buf, len, "%s", where[0] ? where : "-");
}

/* a restart's view of the dataset: "first" (cache), "fetch", "fallback" or "no" */
static const char* scr_index_restart_role(const scr_kvtree* index, const struct scr_index_extra* x, int id)
{
  if (id == x->restart_cache) return "first";
  if (id == x->restart_prefix) return x->restart_cache >= 0 ? "fetch-next" : "first";
  const scr_kvtree* desc = scr_index_file_get_dsetdesc(index, id);
  if (desc && scr_index_file_is_checkpoint(index, id) && scr_index_file_is_complete(index, id) &&
      !scr_index_file_is_failed(index, id))
    return "fallback";
  return "no";
}

static void scr_index_fill_row(const scr_kvtree* index, const struct scr_index_extra* x, int id,
                               struct scr_index_row* row)
{
  const scr_kvtree* entry = scr_kvtree_get_kv_int(index, SCR_INDEX_KEY_DSET, id);
  const scr_kvtree* desc = scr_index_file_get_dsetdesc(index, id);
  const char* name = scr_index_file_get_name(index, id);
  const char* current = scr_index_file_get_current(index);
  int flags = desc ? scr_dataset_get_flags(desc) : 0;
  uint64_t files;
  long long ckpt = 0;
  if (!name) name = scr_kvtree_get_val(scr_kvtree_get_kv_int(x->flush, "DSET", id), "NAME");

  snprintf(row->cell[0], sizeof(row->cell[0]), "%d", id);
  snprintf(row->cell[1], sizeof(row->cell[1]), "%s", name ? name : "-");
  if (desc && scr_kvtree_get_int(desc, "CKPT", &ckpt) == SCR_SUCCESS && ckpt > 0)
    snprintf(row->cell[2], sizeof(row->cell[2]), "%lld", ckpt);
  else
    snprintf(row->cell[2], sizeof(row->cell[2]), "-");
  snprintf(row->cell[3], sizeof(row->cell[3]), "%s",
           (flags & SCR_FLAG_CHECKPOINT) && (flags & SCR_FLAG_OUTPUT) ? "CKPT,OUTPUT" :
           (flags & SCR_FLAG_CHECKPOINT) ? "CKPT" :
           (flags & SCR_FLAG_OUTPUT) ? "OUTPUT" : "-");
  if (desc && scr_kvtree_get_uint64(desc, "FILES", &files) == SCR_SUCCESS) {
    snprintf(row->cell[4], sizeof(row->cell[4]), "%llu", (unsigned long long) files);
  } else {
    snprintf(row->cell[4], sizeof(row->cell[4]), "-");
  }
  scr_index_format_size(desc, row->cell[5], sizeof(row->cell[5]));
  const char* scheme = scr_kvtree_get_val(scr_kvtree_get_kv_int(x->schemes, "DSET", id), "SCHEME");
  snprintf(row->cell[6], sizeof(row->cell[6]), "%s", scheme ? scheme : "-");
  scr_index_format_where(index, x, id, row->cell[7], sizeof(row->cell[7]));
  scr_index_format_flushed(entry, row->cell[8], sizeof(row->cell[8]));
  snprintf(row->cell[9], sizeof(row->cell[9]), "%s",
           current && name && strcmp(current, name) == 0 ? "*" : "");
  /* the state that matters most for a restart wins */
  snprintf(row->cell[10], sizeof(row->cell[10]), "%s",
           !entry ? "CACHED" :
           scr_index_file_is_failed(index, id) ? "FAILED" :
           !scr_index_file_is_complete(index, id) ? "INCOMPLETE" :
           scr_index_file_is_fetched(index, id) ? "FETCHED" : "ok");
  snprintf(row->cell[11], sizeof(row->cell[11]), "%s", scr_index_restart_role(index, x, id));
}

static int scr_index_compare_descending(const void* a, const void* b)
{
  int x = *(const int*) a, y = *(const int*) b;
  return (x < y) - (x > y);
}

/* dataset ids in the index and in the cache (flush.scr), newest first, each
 * once; malloc'd, count in *count */
static int* scr_index_sorted_ids(const scr_kvtree* index, const scr_kvtree* flush, size_t* count)
{
  const scr_kvtree* lists[2] = { scr_kvtree_get(index, SCR_INDEX_KEY_DSET), scr_kvtree_get(flush, "DSET") };
  size_t size = (size_t) scr_kvtree_size(lists[0]) + (size_t) scr_kvtree_size(lists[1]);
  int* ids = malloc((size ? size : 1) * sizeof(int));
  *count = 0;
  if (ids == NULL) return NULL;
  for (int l = 0; l < 2; l++) {
    for (scr_kvtree_elem* elem = scr_kvtree_first(lists[l]); elem; elem = scr_kvtree_next(elem)) {
      const char* key = scr_kvtree_elem_key(elem);
      char* end = NULL;
      long id = strtol(key, &end, 10);
      /* a hand-edited index may hold other keys: show only real ids */
      if (end == key || *end != '\0' || id < 0 || id > 0x7fffffffL) continue;
      int seen = 0;
      for (size_t i = 0; i < *count && !seen; i++) seen = ids[i] == (int) id;
      if (!seen) ids[(*count)++] = (int) id;
    }
  }
  qsort(ids, *count, sizeof(int), scr_index_compare_descending);
  return ids;
}

/* the scheme and the writing run's host and node count of each dataset, from
 * the event log (on by default; missing entries just show "-") */
static void scr_index_read_log(const char* prefix, struct scr_index_extra* x)
{
  char path[4096], line[2048], host[256] = "", nodes[32] = "";
  snprintf(path, sizeof(path), "%s/.scr/log", prefix);
  FILE* f = fopen(path, "r");
  if (!f) return;
  while (fgets(line, sizeof(line), f)) {
    const char* h = strstr(line, " host=");
    const char* n = strstr(line, " nodes=");
    const char* d = strstr(line, " dset=");
    const char* sc = strstr(line, " scheme=");
    if (strstr(line, " event=INIT ") && h && n) {
      snprintf(host, sizeof(host), "%.*s", (int) strcspn(h + 6, " \n"), h + 6);
      snprintf(nodes, sizeof(nodes), "%.*s", (int) strcspn(n + 7, " \n"), n + 7);
    } else if (strstr(line, " event=ENCODE_START ") && d && sc) {
      int id = atoi(d + 6);
      char scheme[64];
      snprintf(scheme, sizeof(scheme), "%.*s", (int) strcspn(sc + 8, " \n"), sc + 8);
      scr_kvtree_set_kv(scr_kvtree_add_kv_int(x->schemes, "DSET", id), "SCHEME", scheme);
      if (host[0]) {
        scr_kvtree* e = scr_kvtree_add_kv_int(x->hosts, "DSET", id);
        scr_kvtree_set_kv(e, "HOST", host);
        scr_kvtree_set_kv(e, "NODES", nodes);
      }
    }
  }
  fclose(f);
}

static void scr_index_extra_load(const char* prefix, const scr_kvtree* index, struct scr_index_extra* x)
{
  x->flush = scr_kvtree_new();
  x->schemes = scr_kvtree_new();
  x->hosts = scr_kvtree_new();
  char path[4096];
  snprintf(path, sizeof(path), "%s/.scr/flush.scr", prefix);
  scr_kvtree_read_file_if_exists(path, x->flush);
  /* a flush of the preload layer says itself where it stands: its stage, its record */
  scr_publish_list(prefix, x->flush);
  scr_index_read_log(prefix, x);
  /* a restart tries the newest checkpoint in cache first, then fetches */
  x->restart_cache = -1;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(x->flush, "DSET")); e; e = scr_kvtree_next(e)) {
    int id = atoi(scr_kvtree_elem_key(e));
    int indexed = scr_kvtree_get_kv_int(index, SCR_INDEX_KEY_DSET, id) != NULL;
    int output_only = indexed && !scr_index_file_is_checkpoint(index, id);
    /* one the index knows to be incomplete or failed is not restored */
    int broken = indexed && (!scr_index_file_is_complete(index, id) || scr_index_file_is_failed(index, id));
    if (!output_only && !broken && id > x->restart_cache) x->restart_cache = id;
  }
  x->restart_prefix = -1;
  const char* current = scr_index_file_get_current(index);
  int id = -1;
  if (current && scr_index_file_get_id_by_name(index, current, &id) == SCR_SUCCESS && !scr_index_file_is_failed(index, id))
    x->restart_prefix = id;
  else if (scr_index_file_most_recent_checkpoint(index, -1, &id) == SCR_SUCCESS)
    x->restart_prefix = id;
}

static void scr_index_extra_free(struct scr_index_extra* x)
{
  scr_kvtree_delete(&x->flush);
  scr_kvtree_delete(&x->schemes);
  scr_kvtree_delete(&x->hosts);
}

static void scr_index_print_line(const char* const cells[], const size_t widths[])
{
  for (int col = 0; col < SCR_INDEX_COLUMNS; col++) {
    const char* sep = col + 1 < SCR_INDEX_COLUMNS ? "  " : "\n";
    if (col + 1 == SCR_INDEX_COLUMNS) {
      printf("%s%s", cells[col], sep);
    } else if (scr_index_right_aligned[col]) {
      printf("%*s%s", (int) widths[col], cells[col], sep);
    } else {
      printf("%-*s%s", (int) widths[col], cells[col], sep);
    }
  }
}

/* what --list and --json show: the index at path, what the other files of
 * the prefix's .scr add to it, and its datasets' ids in order; SCR_SUCCESS,
 * or an error already said (nothing left to free) */
struct scr_index_view {
  scr_kvtree* index;
  struct scr_index_extra extra;
  int* ids;
  size_t count;
};

static void scr_index_view_free(struct scr_index_view* v)
{
  free(v->ids);
  scr_index_extra_free(&v->extra);
  scr_kvtree_delete(&v->index);
}

static int scr_index_view_load(const char* prefix, const char* path, struct scr_index_view* v)
{
  v->index = scr_kvtree_new();
  int rc = scr_index_file_read(prefix, v->index);
  if (rc != SCR_SUCCESS) {
    scr_err("cannot read index file %s: %s", path, scr_error_string(rc));
    scr_kvtree_delete(&v->index);
    return rc;
  }
  scr_index_extra_load(prefix, v->index, &v->extra);
  v->count = 0;
  v->ids = scr_index_sorted_ids(v->index, v->extra.flush, &v->count);
  if (v->ids == NULL) {
    scr_err("out of memory listing %s", path);
    scr_index_view_free(v);
    return SCR_ERR_NOMEM;
  }
  return SCR_SUCCESS;
}

static int scr_index_list(const char* prefix, const char* path, const char* argument)
{
  (void) argument;
  struct scr_index_view v;
  int rc = scr_index_view_load(prefix, path, &v);
  if (rc != SCR_SUCCESS) return rc;
  struct scr_index_row* rows = calloc(v.count ? v.count : 1, sizeof(*rows));
  if (rows == NULL) {
    scr_err("out of memory listing %s", path);
    scr_index_view_free(&v);
    return SCR_ERR_NOMEM;
  }

  if (v.count == 0) {
    printf("No datasets in index %s\n", path);
  } else {
    size_t widths[SCR_INDEX_COLUMNS];
    for (int col = 0; col < SCR_INDEX_COLUMNS; col++) widths[col] = strlen(scr_index_headers[col]);
    for (size_t i = 0; i < v.count; i++) {
      scr_index_fill_row(v.index, &v.extra, v.ids[i], &rows[i]);
      for (int col = 0; col < SCR_INDEX_COLUMNS; col++) {
        size_t len = strlen(rows[i].cell[col]);
        if (len > widths[col]) widths[col] = len;
      }
    }
    scr_index_print_line(scr_index_headers, widths);
    for (size_t i = 0; i < v.count; i++) {
      const char* cells[SCR_INDEX_COLUMNS];
      for (int col = 0; col < SCR_INDEX_COLUMNS; col++) cells[col] = rows[i].cell[col];
      scr_index_print_line(cells, widths);
    }
  }

  free(rows);
  scr_index_view_free(&v);
  return SCR_SUCCESS;
}

/* ---- --json ---- */

static void scr_json_string(const char* s)
{
  putchar('"');
  for (; s && *s; s++) {
    unsigned char c = (unsigned char) *s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static const char* scr_index_prefix_redundancy(const char* prefix, int id);

static int scr_index_json(const char* prefix, const char* path, const char* argument)
{
  (void) argument;
  struct scr_index_view v;
  int rc = scr_index_view_load(prefix, path, &v);
  if (rc != SCR_SUCCESS) return rc;
  const char* current = scr_index_file_get_current(v.index);
  printf("{\"prefix\": ");
  scr_json_string(prefix);
  printf(", \"current\": ");
  if (current) scr_json_string(current); else printf("null");
  printf(", \"datasets\": [");
  for (size_t i = 0; v.ids && i < v.count; i++) {
    int id = v.ids[i];
    const scr_kvtree* entry = scr_kvtree_get_kv_int(v.index, SCR_INDEX_KEY_DSET, id);
    const scr_kvtree* desc = scr_index_file_get_dsetdesc(v.index, id);
    const char* name = scr_index_file_get_name(v.index, id);
    if (!name) name = scr_kvtree_get_val(scr_kvtree_get_kv_int(v.extra.flush, "DSET", id), "NAME");
    int flags = desc ? scr_dataset_get_flags(desc) : 0;
    long long ckpt = 0, flushed = 0;
    uint64_t files = 0, bytes = 0;
    const char* scheme = scr_kvtree_get_val(scr_kvtree_get_kv_int(v.extra.schemes, "DSET", id), "SCHEME");
    const char* cache = scr_index_cache_state(&v.extra, id);
    const scr_kvtree* hosts = scr_kvtree_get_kv_int(v.extra.hosts, "DSET", id);
    printf("%s\n  {\"id\": %d, \"name\": ", i ? "," : "", id);
    if (name) scr_json_string(name); else printf("null");
    if (desc && scr_kvtree_get_int(desc, "CKPT", &ckpt) == SCR_SUCCESS && ckpt > 0) printf(", \"checkpoint\": %lld", ckpt);
    else printf(", \"checkpoint\": null");
    printf(", \"flags\": [%s%s%s]", (flags & SCR_FLAG_CHECKPOINT) ? "\"CKPT\"" : "",
           (flags & SCR_FLAG_CHECKPOINT) && (flags & SCR_FLAG_OUTPUT) ? ", " : "",
           (flags & SCR_FLAG_OUTPUT) ? "\"OUTPUT\"" : "");
    if (desc && scr_kvtree_get_uint64(desc, "FILES", &files) == SCR_SUCCESS) printf(", \"files\": %llu", (unsigned long long) files);
    else printf(", \"files\": null");
    if (desc && scr_kvtree_get_uint64(desc, "SIZE", &bytes) == SCR_SUCCESS) printf(", \"bytes\": %llu", (unsigned long long) bytes);
    else printf(", \"bytes\": null");
    printf(", \"scheme\": ");
    if (scheme) scr_json_string(scheme); else printf("null");
    printf(", \"cache\": ");
    if (cache) scr_json_string(cache); else printf("null");
    printf(", \"cache_host\": ");
    if (cache && scr_kvtree_get_val(hosts, "HOST")) scr_json_string(scr_kvtree_get_val(hosts, "HOST")); else printf("null");
    printf(", \"cache_nodes\": ");
    if (cache && scr_kvtree_get_val(hosts, "NODES")) printf("%d", atoi(scr_kvtree_get_val(hosts, "NODES"))); else printf("null");
    printf(", \"indexed\": %s, \"complete\": %s, \"flushed\": ", entry ? "true" : "false",
           entry && scr_index_file_is_complete(v.index, id) ? "true" : "false");
    if (entry && scr_kvtree_get_int(entry, SCR_INDEX_KEY_FLUSHED, &flushed) == SCR_SUCCESS) printf("%lld", flushed);
    else printf("null");
    /* read only where it matters: a dataset the index has incomplete */
    const char* rebuild = entry && !scr_index_file_is_complete(v.index, id) ? scr_index_prefix_redundancy(prefix, id) : NULL;
    printf(", \"rebuild_from\": ");
    if (rebuild) scr_json_string(rebuild); else printf("null");
    printf(", \"failed\": %s, \"fetched\": %s, \"current\": %s, \"restart\": \"%s\"}",
           entry && scr_index_file_is_failed(v.index, id) ? "true" : "false",
           entry && scr_index_file_is_fetched(v.index, id) ? "true" : "false",
           current && name && strcmp(current, name) == 0 ? "true" : "false", scr_index_restart_role(v.index, &v.extra, id));
  }
  printf("%s]}\n", v.count ? "\n" : "");
  scr_index_view_free(&v);
  return SCR_SUCCESS;
}

/* ---- --current and --drop: locked edits ---- */

static int scr_index_modify_current(scr_kvtree* index, void* arg)
{
  const struct scr_index_target* target = arg;
  int rc = scr_index_file_set_current(index, target->name);
  if (rc == SCR_ERR_NOENT) {
    scr_err("no dataset named '%s' in %s: see scr_index --list", target->name, target->path);
  } else if (rc != SCR_SUCCESS) {
    int id = -1;
    scr_index_file_get_id_by_name(index, target->name, &id);
    scr_err("dataset '%s' in %s is %s: a restart needs a complete checkpoint", target->name, target->path,
            scr_index_file_is_checkpoint(index, id) ? "an incomplete checkpoint" : "not a checkpoint");
  }
  return rc;
}

static int scr_index_modify_drop(scr_kvtree* index, void* arg)
{
  const struct scr_index_target* target = arg;
  int rc = scr_index_file_remove(index, target->name);
  if (rc != SCR_SUCCESS) {
    scr_err("no dataset named '%s' in %s: see scr_index --list", target->name, target->path);
  }
  return rc;
}

/* runs modify on the index, which must already exist: a typo in the prefix
 * should not leave a fresh .scr directory behind */
static int scr_index_edit(const char* prefix, const char* path, const char* name,
                          int (*modify)(scr_kvtree* index, void* arg))
{
  struct stat st;
  if (stat(path, &st) != 0) {
    scr_err("no index file %s: nothing was flushed to this prefix directory", path);
    return SCR_ERR_NOENT;
  }
  struct scr_index_target target = { name, path };
  return scr_index_file_update(prefix, modify, &target);
}

static int scr_index_current(const char* prefix, const char* path, const char* name)
{
  int rc = scr_index_edit(prefix, path, name, scr_index_modify_current);
  if (rc == SCR_SUCCESS) printf("Dataset %s is now current: the next run restarts from it\n", name);
  return rc;
}

static int scr_index_drop(const char* prefix, const char* path, const char* name)
{
  int rc = scr_index_edit(prefix, path, name, scr_index_modify_drop);
  if (rc == SCR_SUCCESS) printf("Dropped dataset %s from the index; its files stay in %s\n", name, prefix);
  return rc;
}

/* ---- --build ---- */

/* the dataset NAME names in the index, or the id it spells (a dataset a
 * scavenge left unindexed has only its directory in .scr); -1 if neither */
static int scr_index_build_target(const char* prefix, const char* name)
{
  scr_kvtree* index = scr_kvtree_new();
  int id = -1;
  if (scr_index_file_read(prefix, index) != SCR_SUCCESS || scr_index_file_get_id_by_name(index, name, &id) != SCR_SUCCESS) {
    char* end = NULL;
    long v = strtol(name, &end, 10);
    id = end != name && *end == '\0' && v >= 0 && v <= 0x7fffffffL ? (int) v : -1;
  }
  scr_kvtree_delete(&index);
  return id;
}

static int scr_index_build(const char* prefix, const char* path, const char* name)
{
  int id = scr_index_build_target(prefix, name);
  if (id < 0) {
    scr_err("no dataset named '%s' in %s: give its name or id (see scr_index --list)", name, path);
    return SCR_ERR_NOENT;
  }
  return scr_prefix_rebuild(prefix, id, NULL);
}

/* the scheme whose redundancy data the prefix holds for dataset id, or NULL */
static const char* scr_index_prefix_redundancy(const char* prefix, int id)
{
  static char scheme[16];
  scr_kvtree* rank2file = scr_kvtree_new();
  const char* found = NULL;
  if (scr_rank2file_read(prefix, id, rank2file) == SCR_SUCCESS)
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(rank2file, "RANK")); e && !found; e = scr_kvtree_next(e)) {
      const char* type = scr_kvtree_get_val(scr_kvtree_get(scr_kvtree_elem_tree(e), "REDDESC"), "TYPE");
      enum scr_copy_type t;
      if (type && scr_reddesc_type_from_name(type, &t) == SCR_SUCCESS && t != SCR_COPY_SINGLE) {
        snprintf(scheme, sizeof(scheme), "%s", scr_reddesc_type_name(t));
        found = scheme;
      }
    }
  scr_kvtree_delete(&rank2file);
  return found;
}

/* ---- command line ---- */

static int (*const scr_index_actions[])(const char* prefix, const char* path, const char* argument) = {
  [SCR_INDEX_LIST] = scr_index_list,
  [SCR_INDEX_CURRENT] = scr_index_current,
  [SCR_INDEX_DROP] = scr_index_drop,
  [SCR_INDEX_JSON] = scr_index_json,
  [SCR_INDEX_BUILD] = scr_index_build,
};

/* --prefix, else $SCR_PREFIX, else the current directory (malloc'd) */
static char* scr_index_choose_prefix(const char* option)
{
  const char* env = getenv("SCR_PREFIX");
  if (option != NULL) return strdup(option);
  if (env != NULL && env[0] != '\0') return strdup(env);
  return getcwd(NULL, 0);
}

/* records action, refusing a second one: each run does one thing */
static int scr_index_choose_action(int* chosen, enum scr_index_action action,
                                   const char** argument, const char* value)
{
  if (*chosen >= 0 && *chosen != (int) action) {
    scr_err("give only one of --list, --json, --current, --drop and --build");
    return SCR_INDEX_EXIT_USAGE;
  }
  *chosen = (int) action;
  *argument = value;
  return SCR_SUCCESS;
}

int main(int argc, char** argv)
{
  static const struct option options[] = {
    {"prefix", required_argument, NULL, 'p'},
    {"list", no_argument, NULL, 'l'},
    {"json", no_argument, NULL, 'j'},
    {"current", required_argument, NULL, 'c'},
    {"drop", required_argument, NULL, 'd'},
    {"build", required_argument, NULL, 'b'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
  };
  const char* prefix_option = NULL;
  const char* argument = NULL;
  int action = -1;
  int opt, rc;

  scr_log_program = "scr_index";
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":p:ljc:d:b:h", options, NULL)) != -1) {
    rc = SCR_SUCCESS;
    switch (opt) {
    case 'p': prefix_option = optarg; break;
    case 'l': rc = scr_index_choose_action(&action, SCR_INDEX_LIST, &argument, NULL); break;
    case 'j': rc = scr_index_choose_action(&action, SCR_INDEX_JSON, &argument, NULL); break;
    case 'c': rc = scr_index_choose_action(&action, SCR_INDEX_CURRENT, &argument, optarg); break;
    case 'd': rc = scr_index_choose_action(&action, SCR_INDEX_DROP, &argument, optarg); break;
    case 'b': rc = scr_index_choose_action(&action, SCR_INDEX_BUILD, &argument, optarg); break;
    case 'h':
      scr_index_usage(stdout);
      return 0;
    case ':':
      scr_err("option '%s' needs a value: see scr_index --help", argv[optind - 1]);
      return SCR_INDEX_EXIT_USAGE;
    default:
      scr_err("unknown option '%s': see scr_index --help", argv[optind - 1]);
      return SCR_INDEX_EXIT_USAGE;
    }
    if (rc != SCR_SUCCESS) return rc;
  }
  if (optind < argc) {
    scr_err("unexpected argument '%s': name the prefix with --prefix DIR", argv[optind]);
    return SCR_INDEX_EXIT_USAGE;
  }
  if (action < 0) action = SCR_INDEX_LIST;

  char* prefix = scr_index_choose_prefix(prefix_option);
  if (prefix == NULL) {
    scr_err("cannot determine the prefix directory: %s", strerror(errno));
    return SCR_INDEX_EXIT_FAILED;
  }
  struct stat st;
  if (stat(prefix, &st) != 0 || !S_ISDIR(st.st_mode)) {
    scr_err("prefix directory %s does not exist: give an existing directory with --prefix or SCR_PREFIX",
            prefix);
    free(prefix);
    return SCR_INDEX_EXIT_FAILED;
  }
  char* path = scr_index_file_path(prefix);
  if (path == NULL) {
    scr_err("out of memory");
    free(prefix);
    return SCR_INDEX_EXIT_FAILED;
  }

  rc = scr_index_actions[action](prefix, path, argument);

  free(path);
  free(prefix);
  return rc == SCR_SUCCESS ? 0 : SCR_INDEX_EXIT_FAILED;
}
