/* scr_prefix_rebuild.c - scr_index --build: find the ranks whose files a dataset on the
 * prefix directory lacks, have their scheme rebuild them, and only then mark the dataset complete. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_dataset.h"
#include "scr_summary_file.h"
#include "scr_index_file.h"
#include "scr_flush_file.h"
#include "scr_reddesc_type.h"
#include "scr_prefix_rebuild.h"
#include "scr_prefix_rebuild_impl.h"

scr_kvtree* scr_prefix_rebuild_entry(struct scr_prefix_rebuild* b, int r)
{
  return scr_kvtree_add_kv_int(b->rank2file, "RANK", r);
}

char* scr_prefix_rebuild_file(struct scr_prefix_rebuild* b, const char* relpath)
{
  if (!relpath || !scr_path_is_safe_relative(relpath)) {
    scr_err("dataset %d: the redundancy data names file '%s' outside the prefix directory: refusing it", b->id,
            relpath ? relpath : "(none)");
    return NULL;
  }
  return scr_path_join(b->prefix, relpath);
}

char* scr_prefix_rebuild_temp(struct scr_prefix_rebuild* b, int rank, const char* name)
{
  char* path = NULL;
  if (asprintf(&path, "%s/%d/%s", b->work, rank, name) < 0) return NULL;
  return path;
}

int scr_prefix_rebuild_commit(struct scr_prefix_rebuild* b, const char* tmp, const char* dst)
{
  char* parent = scr_path_dirname(dst);
  int rc = parent ? scr_io_mkdir_p(parent, 0777) : SCR_ERR_NOMEM;
  if (rc == SCR_SUCCESS && rename(tmp, dst) != 0) rc = SCR_ERR_IO;
  if (rc == SCR_SUCCESS) scr_io_fsync_dir(parent);
  else scr_err("dataset %d: cannot put rebuilt %s in place as %s: %s", b->id, tmp, dst, strerror(errno));
  free(parent);
  return rc;
}

int scr_prefix_rebuild_set_of(struct scr_prefix_rebuild* b, int r, int* index)
{
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(b->rank2file, "RANK")); e; e = scr_kvtree_next(e)) {
    int holder = (int) scr_kvtree_elem_key_int(e);
    if (holder < 0 || holder >= b->ranks || b->lost[holder]) continue;
    const scr_kvtree* set = scr_kvtree_get(scr_kvtree_get(scr_kvtree_elem_tree(e), "REDDESC"), "SET");
    for (scr_kvtree_elem* m = scr_kvtree_first(scr_kvtree_get(set, "MEMBER")); m; m = scr_kvtree_next(m)) {
      const char* v = scr_kvtree_elem_val(m);
      if (v && atoi(v) == r) {
        *index = (int) scr_kvtree_elem_key_int(m);
        return holder;
      }
    }
  }
  return -1;
}

void scr_prefix_rebuild_ranks_text(const int* marked, int n, char* buf, size_t len)
{
  int total = 0, shown = 0;
  for (int r = 0; r < n; r++) total += marked[r] != 0;
  buf[0] = '\0';
  for (int r = 0; r < n; r++) {
    if (!marked[r]) continue;
    size_t used = strlen(buf);
    const char* sep = shown == 0 ? "" : shown == total - 1 ? " and " : ", ";
    if (used + 32 >= len) {
      snprintf(buf + used, len - used, "%s...", sep);
      return;
    }
    snprintf(buf + used, len - used, "%s%d", sep, r);
    shown++;
  }
}

/* lost[r] for every rank with no entry in rank2file or a file missing or
 * of another size than recorded there, or (check_crc) of another CRC32:
 * a dataset that was whole when written is being repaired, and a file
 * damaged in place is lost as much as a deleted one; after a survivors'
 * scavenge, which checked each file's CRC32 as it copied it, the size
 * suffices. The number of them */
static int scr_prefix_rebuild_find_lost(struct scr_prefix_rebuild* b)
{
  int count = 0;
  for (int r = 0; r < b->ranks; r++) {
    scr_kvtree* entry = scr_kvtree_get_kv_int(b->rank2file, "RANK", r);
    long long files = -1;
    scr_kvtree_get_int(entry, "FILES", &files);
    const char* why = !entry ? "no files of it were copied there"
                      : files != scr_kvtree_size(scr_kvtree_get(entry, "FILE")) ? "its file list is incomplete"
                                                                               : NULL;
    for (scr_kvtree_elem* f = scr_kvtree_first(scr_kvtree_get(entry, "FILE")); !why && f; f = scr_kvtree_next(f)) {
      uint64_t want = 0, size = 0;
      uint32_t crc = 0;
      scr_kvtree_get_uint64(scr_kvtree_elem_tree(f), "SIZE", &want);
      const char* want_crc = b->check_crc ? scr_kvtree_get_val(scr_kvtree_elem_tree(f), "CRC") : NULL;
      char* path = scr_path_join(b->prefix, scr_kvtree_elem_key(f));
      if (!path || scr_io_file_size(path, &size) != SCR_SUCCESS) why = "a file of it is missing";
      else if (size != want) why = "a file of it has another size than recorded";
      if (why) scr_info("dataset %d: rank %d: %s is missing or damaged", b->id, r, path ? path : "?");
      else if (want_crc && (scr_io_crc32_file(path, &crc, &size) != SCR_SUCCESS ||
                            strtoul(want_crc, NULL, 16) != crc || size != want)) {
        why = "a file of it is damaged";
        scr_info("dataset %d: rank %d: %s does not match the CRC32 recorded when it was written: treated as lost",
                 b->id, r, path);
      }
      free(path);
    }
    if (why) {
      b->lost[r] = 1;
      count++;
      scr_dbg(1, "dataset %d: rank %d must be rebuilt: %s", b->id, r, why);
    }
  }
  return count;
}

/* the scheme whose data the surviving ranks left on the prefix, or -1 */
static int scr_prefix_rebuild_scheme(struct scr_prefix_rebuild* b, enum scr_copy_type* type)
{
  for (int r = 0; r < b->ranks; r++) {
    if (b->lost[r]) continue;
    const char* name = scr_kvtree_get_val(scr_kvtree_get(scr_kvtree_get_kv_int(b->rank2file, "RANK", r), "REDDESC"),
                                          "TYPE");
    if (name && scr_reddesc_type_from_name(name, type) == SCR_SUCCESS) return 0;
  }
  return -1;
}

struct scr_prefix_rebuild_index_arg {
  int id;
  const char* name;
  const scr_kvtree* desc;
};

/* complete, flushed now, and the one to restart from when no newer checkpoint is */
static int scr_prefix_rebuild_index(scr_kvtree* index, void* arg)
{
  struct scr_prefix_rebuild_index_arg* a = arg;
  int rc = scr_index_file_add(index, a->id, a->name, a->desc, 1);
  if (rc == SCR_SUCCESS) rc = scr_index_file_set_flushed(index, a->id, time(NULL));
  int newest = -1;
  if (rc == SCR_SUCCESS && scr_dataset_is_checkpoint(a->desc) &&
      scr_index_file_most_recent_checkpoint(index, -1, &newest) == SCR_SUCCESS && newest == a->id)
    rc = scr_index_file_set_current(index, a->name);
  return rc;
}

/* rank2file with every rank, then the summary and the index say complete */
static int scr_prefix_rebuild_finish(struct scr_prefix_rebuild* b)
{
  scr_kvtree_set_kv_int(b->rank2file, "RANKS", b->ranks);
  int rc = scr_rank2file_write(b->prefix, b->id, b->rank2file);
  scr_kvtree* desc = scr_kvtree_get(b->summary, "DSETDESC");
  scr_kvtree_set_kv_int(desc, "COMPLETE", 1);
  if (rc == SCR_SUCCESS) rc = scr_summary_file_write(b->prefix, b->id, desc, b->ranks);
  struct scr_prefix_rebuild_index_arg arg = { b->id, b->name, desc };
  if (rc == SCR_SUCCESS) rc = scr_index_file_update(b->prefix, scr_prefix_rebuild_index, &arg);
  if (rc == SCR_SUCCESS) scr_flush_file_set_location(b->prefix, b->id, b->name, SCR_FLUSH_FILE_PFS);
  if (rc != SCR_SUCCESS)
    scr_err("dataset %d: cannot record it complete under %s/.scr: %s", b->id, b->prefix, scr_error_string(rc));
  return rc;
}

/* summary and rank2file of id, and whether the dataset was whole when written */
static int scr_prefix_rebuild_load(struct scr_prefix_rebuild* b)
{
  long long ranks = 0, missing = 0;
  if (scr_summary_file_read(b->prefix, b->id, b->summary) != SCR_SUCCESS ||
      scr_rank2file_read(b->prefix, b->id, b->rank2file) != SCR_SUCCESS) {
    scr_err("dataset %d has no readable summary and rank2file map in %s/.scr/scr.dataset.%d: it was never "
            "flushed or scavenged there", b->id, b->prefix, b->id);
    return SCR_ERR_NOENT;
  }
  const scr_kvtree* desc = scr_kvtree_get(b->summary, "DSETDESC");
  b->name = scr_dataset_get_name(desc);
  scr_kvtree_get_int(b->summary, "RANKS", &ranks);
  scr_kvtree_get_int(b->summary, "MISSING_RANKS", &missing);
  if (!b->name || ranks <= 0 || ranks > 1 << 24) {
    scr_err("dataset %d: its summary in %s/.scr names no dataset or job size", b->id, b->prefix);
    return SCR_ERR_CORRUPT;
  }
  if (!scr_dataset_is_complete(desc) && missing == 0) {
    scr_err("dataset %d (%s) was not complete when it was written: there is nothing to rebuild it to", b->id,
            b->name);
    return SCR_ERR_INVALID;
  }
  b->ranks = (int) ranks;
  b->check_crc = missing == 0;
  return SCR_SUCCESS;
}

int scr_prefix_rebuild(const char* prefix, int id, int* rebuilt)
{
  struct scr_prefix_rebuild b;
  memset(&b, 0, sizeof(b));
  b.prefix = prefix;
  b.id = id;
  b.summary = scr_kvtree_new();
  b.rank2file = scr_kvtree_new();
  if (rebuilt) *rebuilt = 0;
  double start = scr_log_seconds();
  int rc = scr_prefix_rebuild_load(&b);
  int lost = 0;
  if (rc == SCR_SUCCESS) {
    b.lost = calloc(b.ranks, sizeof(int));
    b.unrebuilt = calloc(b.ranks, sizeof(int));
    char* dir = scr_summary_dataset_dir(prefix, id);
    b.work = dir ? scr_path_join(dir, "rebuild") : NULL;
    free(dir);
    rc = b.lost && b.unrebuilt && b.work ? SCR_SUCCESS : SCR_ERR_NOMEM;
  }
  if (rc == SCR_SUCCESS) lost = scr_prefix_rebuild_find_lost(&b);
  if (rc == SCR_SUCCESS && lost > 0) {
    char list[512];
    enum scr_copy_type type;
    scr_prefix_rebuild_ranks_text(b.lost, b.ranks, list, sizeof(list));
    scr_io_remove_tree(b.work);
    if (scr_prefix_rebuild_scheme(&b, &type) != 0 || type == SCR_COPY_SINGLE) {
      scr_err("dataset %d (%s): the files of rank%s %s are missing, and the prefix directory holds no redundancy "
              "data of this dataset to rebuild them from (it was flushed without SCR_FLUSH_REDUNDANCY, or its "
              "scheme is SINGLE): ranks %s cannot be rebuilt; nothing is marked complete", id, b.name,
              lost > 1 ? "s" : "", list, list);
      rc = SCR_ERR_NOENT;
    } else {
      scr_info("dataset %d (%s): rebuilding rank%s %s from the %s data on the prefix directory", id, b.name,
               lost > 1 ? "s" : "", list, scr_reddesc_type_name(type));
      rc = type == SCR_COPY_PARTNER ? scr_prefix_rebuild_partner(&b) : scr_prefix_rebuild_erasure(&b);
      if (rc != SCR_SUCCESS) {
        scr_prefix_rebuild_ranks_text(b.unrebuilt, b.ranks, list, sizeof(list));
        scr_err("dataset %d (%s): rank%s %s cannot be rebuilt; nothing is marked complete", id, b.name,
                strchr(list, ' ') ? "s" : "", list);
      }
    }
    scr_io_remove_tree(b.work);
  }
  if (rc == SCR_SUCCESS) rc = scr_prefix_rebuild_finish(&b);
  if (rc == SCR_SUCCESS) {
    if (lost > 0)
      scr_info("dataset %d (%s): rebuilt %d rank%s in %.3f s (%llu bytes read, %llu written); marked complete", id,
               b.name, lost, lost > 1 ? "s" : "", scr_log_seconds() - start, (unsigned long long) b.bytes_read,
               (unsigned long long) b.bytes_written);
    else
      scr_info("dataset %d (%s): every rank's files are on the prefix directory; marked complete", id, b.name);
    if (rebuilt) *rebuilt = lost;
  }
  free(b.work);
  free(b.unrebuilt);
  free(b.lost);
  scr_kvtree_delete(&b.rank2file);
  scr_kvtree_delete(&b.summary);
  return rc;
}
