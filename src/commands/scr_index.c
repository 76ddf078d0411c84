/* scr_index.c - the scr_index command: lists the datasets recorded in
 * <prefix>/.scr/index.scr, chooses the one to restart from, and drops entries. */
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

/* exit codes: 1 when the work failed, 2 when the command line was wrong */
enum { SCR_INDEX_EXIT_FAILED = 1, SCR_INDEX_EXIT_USAGE = 2 };

/* one action per run; each has a function below taking the prefix and the
 * option's argument, so a new action is an enum value, an option and a function */
enum scr_index_action { SCR_INDEX_LIST, SCR_INDEX_CURRENT, SCR_INDEX_DROP };

/* what an update callback needs to explain a refusal */
struct scr_index_target {
  const char* name;
  const char* path;
};

static void scr_index_usage(FILE* out)
{
  fprintf(out,
    "Usage: scr_index [--prefix DIR] [--list | --current NAME | --drop NAME]\n"
    "Show and edit the index of datasets flushed to the prefix directory DIR\n"
    "(default: $SCR_PREFIX, else the current directory).\n"
    "\n"
    "  -p, --prefix DIR      prefix directory holding .scr/index.scr\n"
    "  -l, --list            list the datasets, newest first (the default action)\n"
    "  -c, --current NAME    restart from dataset NAME (a complete checkpoint)\n"
    "  -d, --drop NAME       remove dataset NAME from the index; its files stay\n"
    "  -h, --help            print this help\n");
}

/* ---- --list ---- */

enum { SCR_INDEX_COLUMNS = 8 };
static const char* const scr_index_headers[SCR_INDEX_COLUMNS] = {
  "ID", "NAME", "FLAGS", "FILES", "SIZE", "FLUSHED", "CUR", "STATE"
};
/* numbers read best aligned on the right */
static const int scr_index_right_aligned[SCR_INDEX_COLUMNS] = { 1, 0, 0, 1, 1, 0, 0, 0 };

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

static void scr_index_fill_row(const scr_kvtree* index, int id, struct scr_index_row* row)
{
  const scr_kvtree* entry = scr_kvtree_get_kv_int(index, SCR_INDEX_KEY_DSET, id);
  const scr_kvtree* desc = scr_index_file_get_dsetdesc(index, id);
  const char* name = scr_index_file_get_name(index, id);
  const char* current = scr_index_file_get_current(index);
  int flags = desc ? scr_dataset_get_flags(desc) : 0;
  uint64_t files;

  snprintf(row->cell[0], sizeof(row->cell[0]), "%d", id);
  snprintf(row->cell[1], sizeof(row->cell[1]), "%s", name ? name : "-");
  snprintf(row->cell[2], sizeof(row->cell[2]), "%s",
           (flags & SCR_FLAG_CHECKPOINT) && (flags & SCR_FLAG_OUTPUT) ? "CKPT,OUTPUT" :
           (flags & SCR_FLAG_CHECKPOINT) ? "CKPT" :
           (flags & SCR_FLAG_OUTPUT) ? "OUTPUT" : "-");
  if (desc && scr_kvtree_get_uint64(desc, "FILES", &files) == SCR_SUCCESS) {
    snprintf(row->cell[3], sizeof(row->cell[3]), "%llu", (unsigned long long) files);
  } else {
    snprintf(row->cell[3], sizeof(row->cell[3]), "-");
  }
  scr_index_format_size(desc, row->cell[4], sizeof(row->cell[4]));
  scr_index_format_flushed(entry, row->cell[5], sizeof(row->cell[5]));
  snprintf(row->cell[6], sizeof(row->cell[6]), "%s",
           current && name && strcmp(current, name) == 0 ? "*" : "");
  /* the state that matters most for a restart wins */
  snprintf(row->cell[7], sizeof(row->cell[7]), "%s",
           scr_index_file_is_failed(index, id) ? "FAILED" :
           !scr_index_file_is_complete(index, id) ? "INCOMPLETE" :
           scr_index_file_is_fetched(index, id) ? "FETCHED" : "ok");
}

static int scr_index_compare_descending(const void* a, const void* b)
{
  int x = *(const int*) a, y = *(const int*) b;
  return (x < y) - (x > y);
}

/* dataset ids in the index, newest first; malloc'd, count in *count */
static int* scr_index_sorted_ids(const scr_kvtree* index, size_t* count)
{
  const scr_kvtree* datasets = scr_kvtree_get(index, SCR_INDEX_KEY_DSET);
  size_t size = (size_t) scr_kvtree_size(datasets);
  int* ids = malloc((size ? size : 1) * sizeof(int));
  *count = 0;
  if (ids == NULL) return NULL;
  for (scr_kvtree_elem* elem = scr_kvtree_first(datasets); elem; elem = scr_kvtree_next(elem)) {
    const char* key = scr_kvtree_elem_key(elem);
    char* end = NULL;
    long id = strtol(key, &end, 10);
    /* a hand-edited index may hold other keys: show only real ids */
    if (end == key || *end != '\0' || id < 0 || id > 0x7fffffffL) continue;
    ids[(*count)++] = (int) id;
  }
  qsort(ids, *count, sizeof(int), scr_index_compare_descending);
  return ids;
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

static int scr_index_list(const char* prefix, const char* path, const char* argument)
{
  (void) argument;
  scr_kvtree* index = scr_kvtree_new();
  int rc = scr_index_file_read(prefix, index);
  if (rc != SCR_SUCCESS) {
    scr_err("cannot read index file %s: %s", path, scr_error_string(rc));
    scr_kvtree_delete(&index);
    return rc;
  }

  size_t count = 0;
  int* ids = scr_index_sorted_ids(index, &count);
  struct scr_index_row* rows = calloc(count ? count : 1, sizeof(*rows));
  if (ids == NULL || rows == NULL) {
    scr_err("out of memory listing %s", path);
    free(ids);
    free(rows);
    scr_kvtree_delete(&index);
    return SCR_ERR_NOMEM;
  }

  if (count == 0) {
    printf("No datasets in index %s\n", path);
  } else {
    size_t widths[SCR_INDEX_COLUMNS];
    for (int col = 0; col < SCR_INDEX_COLUMNS; col++) widths[col] = strlen(scr_index_headers[col]);
    for (size_t i = 0; i < count; i++) {
      scr_index_fill_row(index, ids[i], &rows[i]);
      for (int col = 0; col < SCR_INDEX_COLUMNS; col++) {
        size_t len = strlen(rows[i].cell[col]);
        if (len > widths[col]) widths[col] = len;
      }
    }
    scr_index_print_line(scr_index_headers, widths);
    for (size_t i = 0; i < count; i++) {
      const char* cells[SCR_INDEX_COLUMNS];
      for (int col = 0; col < SCR_INDEX_COLUMNS; col++) cells[col] = rows[i].cell[col];
      scr_index_print_line(cells, widths);
    }
  }

  free(rows);
  free(ids);
  scr_kvtree_delete(&index);
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

/* ---- command line ---- */

static int (*const scr_index_actions[])(const char* prefix, const char* path, const char* argument) = {
  [SCR_INDEX_LIST] = scr_index_list,
  [SCR_INDEX_CURRENT] = scr_index_current,
  [SCR_INDEX_DROP] = scr_index_drop,
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
    scr_err("give only one of --list, --current and --drop");
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
    {"current", required_argument, NULL, 'c'},
    {"drop", required_argument, NULL, 'd'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
  };
  const char* prefix_option = NULL;
  const char* argument = NULL;
  int action = -1;
  int opt, rc;

  scr_log_program = "scr_index";
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":p:lc:d:h", options, NULL)) != -1) {
    rc = SCR_SUCCESS;
    switch (opt) {
    case 'p': prefix_option = optarg; break;
    case 'l': rc = scr_index_choose_action(&action, SCR_INDEX_LIST, &argument, NULL); break;
    case 'c': rc = scr_index_choose_action(&action, SCR_INDEX_CURRENT, &argument, optarg); break;
    case 'd': rc = scr_index_choose_action(&action, SCR_INDEX_DROP, &argument, optarg); break;
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
