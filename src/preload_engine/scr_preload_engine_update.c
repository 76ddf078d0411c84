/* scr_preload_engine_update.c - files of completed datasets changed in place (an
 * HDF5 file reopened read-write, a header rewritten, truncate): kept exact, then re-protected. */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <mpi.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_flush.h"
#include "scr_index_file.h"
#include "scr_summary_file.h"
#include "scr_path.h"
#include "scr_reddesc.h"
#include "scr_redundancy.h"
#include "scr_preload_engine_impl.h"
#include "scr_preload_state.h"

/* A completed dataset's files carry the size and CRC they had at completion,
 * and its redundancy (XOR, RS parity, PARTNER copies) encodes those bytes.
 * A program may open such a file read-write, to change it or only to read
 * it (HDF5's H5F_ACC_RDWR, gfortran's default ACTION=): writes are not
 * wrapped, so only the close can tell. While it is open, the file's entry
 * says so (UPDATING), with the size and change time it had (BEFORE_*, and
 * the CRC when that time is recent, update_snapshot): a restart after a
 * crash accepts it only if it is unchanged (scr_cache_check_dataset); a
 * file changed half-way is lost like a file on a dead node, which the
 * redundancy may rebuild as it was. At the close, an unchanged file costs a
 * stat (and the open and the close each save the filemap); a changed one
 * gets its size and CRC anew, and its dataset's redundancy is stale
 * (REDUNDANCY_STALE: nothing may be rebuilt from it, scr_redundancy_recover)
 * until the next point where every rank takes part anyway (the next
 * completion, an MPI_Barrier on MPI_COMM_WORLD, MPI_Finalize) encodes it
 * again; the newest checkpoint, if it was flushed, is flushed again there. */

#define STALE_KEY SCR_FILEMAP_KEY_REDUNDANCY_STALE

/* datasets this rank changed whose redundancy is not encoded again yet,
 * and how many in-place opens each has on this rank now */
static struct update_dataset {
  int id;
  int open;                 /* descriptors of its files open for update */
  int changed;              /* some byte or name changed since its redundancy was encoded */
  int rewritten;            /* some byte: not only names (a flushed copy moved along holds the rest) */
  int unindexed;            /* this rank marked it incomplete in the index, its flushed copy moving */
  int linked;               /* some name was a hard link made or deleted (for the message) */
} *updates = NULL;
static size_t update_count = 0, update_capacity = 0;

static struct update_dataset* update_find(int id, int make)
{
  for (size_t i = 0; i < update_count; i++)
    if (updates[i].id == id) return &updates[i];
  if (!make) return NULL;
  if (update_count == update_capacity) {
    size_t capacity = update_capacity ? 2 * update_capacity : 4;
    struct update_dataset* grown = realloc(updates, capacity * sizeof(*updates));
    if (!grown) return NULL;
    updates = grown;
    update_capacity = capacity;
  }
  updates[update_count] = (struct update_dataset) { id, 0, 0, 0, 0, 0 };
  return &updates[update_count++];
}

static void update_forget(int id)
{
  for (size_t i = 0; i < update_count; i++)
    if (updates[i].id == id) {
      updates[i] = updates[--update_count];
      return;
    }
}

static int update_is_stale(int id)
{
  long long stale = 0;
  scr_kvtree_get_int(scr_filemap_get_dataset(scr.filemap, id), STALE_KEY, &stale);
  return stale != 0;
}

/* the entry of this rank's file `cache` in dataset id, or NULL */
static scr_kvtree* update_entry(int id, const char* cache)
{
  return scr_kvtree_get(scr_filemap_get_files(scr.filemap, id, scr.rank), cache);
}

static void update_ctime(const struct stat* st, char* text, size_t size)
{
  snprintf(text, size, "%lld.%09ld", (long long) st->st_ctim.tv_sec, (long) st->st_ctim.tv_nsec);
}

/* the records open for update now, so that a rename can carry them along */
static struct scr_engine_file** open_records = NULL;
static size_t open_record_count = 0, open_record_capacity = 0;

static void record_add(struct scr_engine_file* f)
{
  if (open_record_count == open_record_capacity) {
    size_t capacity = open_record_capacity ? 2 * open_record_capacity : 8;
    struct scr_engine_file** grown = realloc(open_records, capacity * sizeof(*open_records));
    if (!grown) return;
    open_records = grown;
    open_record_capacity = capacity;
  }
  open_records[open_record_count++] = f;
}

static void record_remove(struct scr_engine_file* f)
{
  for (size_t i = 0; i < open_record_count; i++)
    if (open_records[i] == f) {
      open_records[i] = open_records[--open_record_count];
      return;
    }
}

/* What the file is now, as the record of "whole" that a close or a restart
 * compares with: size and change time, and the CRC too when the change time
 * is within two seconds of now. A kernel that stamps times from a coarse
 * clock (a tick, before Linux 6.13) or a file system with one-second times
 * would give a write made right after the file's last change the same
 * time: HDF5 closing a checkpoint and reopening it read-write at once. */
static int update_snapshot(struct scr_engine_file* f)
{
  struct stat st;
  struct timespec now;
  if (stat(f->cache, &st) != 0 || clock_gettime(CLOCK_REALTIME, &now) != 0) return -1;
  f->before_size = (uint64_t) st.st_size;
  update_ctime(&st, f->before_ctime, sizeof(f->before_ctime));
  f->before_crc_known = 0;
  if (now.tv_sec - st.st_ctim.tv_sec < 2) {
    uint64_t size = 0;
    f->before_crc_known = scr_io_crc32_file(f->cache, &f->before_crc, &size) == SCR_SUCCESS;
  }
  return 0;
}

/* the snapshot into the file's entry */
static void update_record_snapshot(scr_kvtree* meta, const struct scr_engine_file* f)
{
  scr_kvtree_set_kv_uint64(meta, SCR_FILEMAP_KEY_BEFORE_SIZE, f->before_size);
  scr_kvtree_set_kv(meta, SCR_FILEMAP_KEY_BEFORE_CTIME, f->before_ctime);
  if (f->before_crc_known) scr_kvtree_set_kvf(meta, SCR_FILEMAP_KEY_BEFORE_CRC, "0x%08x", f->before_crc);
  else scr_kvtree_unset(meta, SCR_FILEMAP_KEY_BEFORE_CRC);
}

/* 1 when the file differs from f's snapshot; *size gets its size now */
static int update_differs(const struct scr_engine_file* f, uint64_t* size)
{
  struct stat st;
  char now[sizeof(f->before_ctime)];
  if (stat(f->cache, &st) != 0) return 1;
  *size = (uint64_t) st.st_size;
  update_ctime(&st, now, sizeof(now));
  if (*size != f->before_size || strcmp(now, f->before_ctime) != 0) return 1;
  uint32_t crc = 0;
  uint64_t read = 0;
  return f->before_crc_known &&
         (scr_io_crc32_file(f->cache, &crc, &read) != SCR_SUCCESS || crc != f->before_crc);
}

/* one name of the file f opened for update: its entry says so (a file with
 * hard links has an entry for each, and a change through one is a change of
 * all: scr_engine_link_each) */
static int update_mark_open(const char* cache, scr_kvtree* meta, void* arg)
{
  (void) cache;
  const struct scr_engine_file* f = arg;
  long long open = 0;
  scr_kvtree_get_int(meta, SCR_FILEMAP_KEY_UPDATING, &open);
  if (open == 0) update_record_snapshot(meta, f);
  scr_kvtree_set_kv_int(meta, SCR_FILEMAP_KEY_UPDATING, open + 1);
  return 0;
}

struct scr_engine_file* scr_engine_update_begin(int dataset, const char* orig, const char* relpath,
                                                const char* cache)
{
  scr_kvtree* meta = update_entry(dataset, cache);
  struct scr_engine_file* f = meta ? scr_engine_file_new(dataset, 0, orig, relpath, cache) : NULL;
  struct update_dataset* u = f ? update_find(dataset, 1) : NULL;
  if (!u || update_snapshot(f) != 0) {
    scr_engine_file_free(f);
    return NULL;
  }
  f->updating = 1;
  u->open++;
  record_add(f);
  scr_engine_link_each(dataset, cache, update_mark_open, f);
  if (scr_cache_save_filemap() != SCR_SUCCESS)
    scr_err("cannot record that %s is open for update: a crash now may leave dataset %d unreadable", orig,
            dataset);
  scr_dbg(2, "preload: %s of dataset %d opened for update in place", orig, dataset);
  return f;
}

/* what the close of a file opened for update found, for each of its names */
struct update_close {
  int changed;
  uint64_t size;
  char crc[16];       /* "0x%08x", "" when none is kept */
  int unreadable;     /* changed, and its CRC could not be had */
};

/* the file f names changed: the dataset waits to be protected again, and
 * its new CRC (where one is kept) goes into c */
static void update_changed(struct update_dataset* u, const struct scr_engine_file* f, const scr_kvtree* meta,
                           struct update_close* c)
{
  u->changed = 1;
  u->rewritten = 1;
  c->changed = 1;
  scr_kvtree_set_kv_int(scr_filemap_get_dataset(scr.filemap, f->dataset), STALE_KEY, 1);
  if (!scr_kvtree_get_val(meta, "CRC") && !scr.crc_on_copy) return;
  uint32_t crc = 0;
  uint64_t size = 0;
  if (scr_io_crc32_file(f->cache, &crc, &size) == SCR_SUCCESS) {
    snprintf(c->crc, sizeof(c->crc), "0x%08x", crc);
  } else {
    scr_err("cannot read %s back after it was changed in place: dataset %d is no longer whole", f->orig,
            f->dataset);
    c->unreadable = 1;
  }
}

/* one name of the file closed: its entry gets what changed, and is no
 * longer open for update once its last descriptor is closed */
static int update_mark_closed(const char* cache, scr_kvtree* meta, void* arg)
{
  (void) cache;
  const struct update_close* c = arg;
  if (c->changed) {
    /* its flushed copy, wherever it goes, no longer holds its bytes; nor
     * does what a background flush copied to the stage before the change */
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_FLUSHED_COPY);
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_STAGE);
    scr_kvtree_set_kv_uint64(meta, "SIZE", c->size);
    if (c->crc[0]) scr_kvtree_set_kv(meta, "CRC", c->crc);
    if (c->unreadable) scr_kvtree_set_kv_int(meta, "COMPLETE", 0);
  }
  long long open = 0;
  scr_kvtree_get_int(meta, SCR_FILEMAP_KEY_UPDATING, &open);
  if (open > 1) {
    /* another descriptor may be half-way through a change: the snapshot
     * stays the one from before the first, and a crash now loses the file */
    scr_kvtree_set_kv_int(meta, SCR_FILEMAP_KEY_UPDATING, open - 1);
  } else {
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_UPDATING);
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_BEFORE_SIZE);
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_BEFORE_CTIME);
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_BEFORE_CRC);
  }
  return 0;
}

void scr_engine_update_end(struct scr_engine_file* f)
{
  record_remove(f);
  struct update_dataset* u = update_find(f->dataset, 0);
  if (u && u->open > 0) u->open--;
  scr_kvtree* meta = update_entry(f->dataset, f->cache);
  if (u && meta) {
    struct update_close c = { 0, 0, "", 0 };
    if (update_differs(f, &c.size) || f->mapped) update_changed(u, f, meta, &c);
    scr_engine_link_each(f->dataset, f->cache, update_mark_closed, &c);
    scr_cache_save_filemap();
  }
  /* opened read-write and left as it was (or gone with its dataset) */
  if (u && u->open == 0 && !u->changed) update_forget(f->dataset);
}

void scr_engine_update_prefix_moving(int dataset)
{
  /* a crash before the flush that records the new names must not leave the
   * index offering files that moved away: not whole until then */
  struct update_dataset* u = update_find(dataset, 1);
  if (u && u->unindexed) return;
  scr_engine_index_incomplete(dataset);
  if (u) u->unindexed = 1;
}

void scr_engine_update_moved(int dataset, const char* cache_from, const char* cache_to, const char* orig)
{
  for (size_t i = 0; i < open_record_count; i++) {
    struct scr_engine_file* f = open_records[i];
    if (f->dataset != dataset || strcmp(f->cache, cache_from) != 0) continue;
    char* cache = strdup(cache_to);
    char* moved = strdup(orig);
    if (!cache || !moved) {
      free(cache);
      free(moved);
      continue;
    }
    free(f->cache);
    free(f->orig);
    f->cache = cache;
    f->orig = moved;
    /* whatever was written before the move: the close reads the file anew
     * (a snapshot now would take those bytes for the old ones) */
    f->before_size = UINT64_MAX;
  }
  /* the bytes did not change: the redundancy stays valid (a rebuild finds
   * the file by the path it was encoded under, REDPATH); its names are
   * brought up to date at the next meeting point */
  scr_engine_update_names(dataset, 0);
  /* the newest checkpoint renamed (tmp.12/ into step.12/): what a program
   * that commits its checkpoints so resumes from (scr_pointers_pin_renamed) */
  if (dataset == scr_cache_newest_checkpoint())
    scr_kvtree_set_kv_int(scr_filemap_get_dataset(scr.filemap, dataset), SCR_FILEMAP_KEY_RENAMED_INTO_PLACE, 1);
  scr_cache_save_filemap();
}

void scr_engine_update_names(int dataset, int linked)
{
  struct update_dataset* u = update_find(dataset, 1);
  if (!u) return;
  u->changed = 1;
  if (linked) u->linked = 1;
}

int scr_engine_update_truncate(int dataset, const char* orig, const char* cache, off64_t length)
{
  struct scr_engine_file* f = scr_engine_update_begin(dataset, orig, "", cache);
  int rc = truncate(cache, (off_t) length);
  int saved_errno = errno;
  if (f) {
    scr_engine_update_end(f);
    scr_engine_file_free(f);
  }
  errno = saved_errno;
  return rc;
}

static int update_index_incomplete(scr_kvtree* index, void* id)
{
  return scr_index_file_mark_incomplete(index, *(int*) id);
}

/* the entry named arg, complete: marked incomplete; SCR_ERR_NOENT (nothing
 * written) otherwise */
static int update_index_name_incomplete(scr_kvtree* index, void* arg)
{
  int id = -1;
  if (scr_index_file_get_id_by_name(index, (const char*) arg, &id) != SCR_SUCCESS ||
      !scr_index_file_is_complete(index, id))
    return SCR_ERR_NOENT;
  return scr_index_file_mark_incomplete(index, id);
}

static int update_compare_ids_newest_first(const void* a, const void* b)
{
  int x = *(const int*) a, y = *(const int*) b;
  return (x < y) - (x > y);
}

/* 1 when dataset id's files on the prefix directory (rank2file.scr) include
 * relpath, a path relative to the prefix */
static int update_rank2file_lists(int id, const char* relpath)
{
  int listed = 0;
  scr_kvtree* rank2file = scr_kvtree_new();
  if (rank2file && scr_rank2file_read(scr.prefix, id, rank2file) == SCR_SUCCESS)
    for (scr_kvtree_elem* r = scr_kvtree_first(scr_kvtree_get(rank2file, "RANK")); r && !listed;
         r = scr_kvtree_next(r))
      listed = scr_kvtree_get(scr_kvtree_get(scr_kvtree_elem_tree(r), "FILE"), relpath) != NULL;
  scr_kvtree_delete(&rank2file);
  return listed;
}

/* the newest complete entry whose files (rank2file.scr) include arg, a path
 * relative to the prefix: marked incomplete; SCR_ERR_NOENT otherwise. The
 * entries are read newest first, up to the first that lists the file. */
static int update_index_file_incomplete(scr_kvtree* index, void* arg)
{
  const char* relpath = arg;
  scr_kvtree* entries = scr_kvtree_get(index, SCR_INDEX_KEY_DSET);
  int count = 0, found = -1;
  int* ids = malloc(sizeof(int) * (size_t) (scr_kvtree_size(entries) + 1));
  for (scr_kvtree_elem* e = scr_kvtree_first(entries); ids && e; e = scr_kvtree_next(e)) {
    char* end = NULL;
    long id = strtol(scr_kvtree_elem_key(e), &end, 10);
    if (end && !*end && id >= 0 && id <= INT_MAX && scr_index_file_is_complete(index, (int) id))
      ids[count++] = (int) id;
  }
  if (ids) qsort(ids, (size_t) count, sizeof(int), update_compare_ids_newest_first);
  for (int i = 0; i < count && found < 0; i++)
    if (update_rank2file_lists(ids[i], relpath)) found = ids[i];
  free(ids);
  return found >= 0 ? scr_index_file_mark_incomplete(index, found) : SCR_ERR_NOENT;
}

int scr_engine_index_listing(const scr_preload_target* target)
{
  const scr_preload_rule* rule = scr_engine_rule(target);
  char* relpath = rule && rule->has_step ? scr_path_relative_to(scr.prefix, target->path) : NULL;
  char* name = relpath ? scr_engine_dataset_name(target, relpath) : NULL;
  scr_kvtree* index = name ? scr_kvtree_new() : NULL;
  int id = -1;
  if (!index || scr_index_file_read(scr.prefix, index) != SCR_SUCCESS ||
      scr_index_file_get_id_by_name(index, name, &id) != SCR_SUCCESS || !update_rank2file_lists(id, relpath))
    id = -1;
  scr_kvtree_delete(&index);
  free(name);
  free(relpath);
  return id;
}

void scr_engine_index_file_deleted(const scr_preload_target* target)
{
  /* by the name the file's path gives its dataset, else by the files each
   * entry lists (a dataset named before its directory was renamed into
   * the rule's: scr.dataset.<id>) */
  const scr_preload_rule* rule = scr_engine_rule(target);
  char* relpath = scr_path_relative_to(scr.prefix, target->path);
  char* name = relpath && rule && rule->has_step ? scr_engine_dataset_name(target, relpath) : NULL;
  if ((!name || scr_index_file_update(scr.prefix, update_index_name_incomplete, name) != SCR_SUCCESS) && relpath)
    scr_index_file_update(scr.prefix, update_index_file_incomplete, relpath);
  free(name);
  free(relpath);
}

void scr_engine_index_incomplete(int id)
{
  if (scr_index_file_update(scr.prefix, update_index_incomplete, &id) != SCR_SUCCESS)
    scr_warn("cannot mark dataset %d incomplete in the index of %s", id, scr.prefix);
}

/* the name this rank's files of dataset id give it: that of the one rule
 * directory with a {step} they all lie in now (ck.5 for files written in
 * ck.tmp/ and renamed to ck.5/), into name; "" when they give none */
static void update_name_from_files(int id, char* name, size_t size)
{
  const scr_preload_ruleset* rules = scr_preload_state_current();
  name[0] = '\0';
  int files = 0, agreed = 1;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e && agreed;
       e = scr_kvtree_next(e)) {
    const char* orig = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "ORIG");
    scr_preload_target t = { .call = "rename", .path = orig, .length = orig ? strlen(orig) : 0, .rules = rules };
    t.match.rule = rules && orig ? scr_preload_rules_match(rules, orig, t.length, &t.match) : -1;
    const scr_preload_rule* rule = scr_engine_rule(&t);
    char* relpath = rule && rule->has_step ? scr_path_relative_to(scr.prefix, orig) : NULL;
    char* mine = relpath ? scr_engine_dataset_name(&t, relpath) : NULL;
    if (!mine || (files++ > 0 && strcmp(mine, name) != 0)) agreed = 0;
    else snprintf(name, size, "%s", mine);
    free(mine);
    free(relpath);
  }
  if (!agreed) name[0] = '\0';
}

/* collective: dataset id takes the name rank 0's files give it now, if any */
static void update_rename(int id, scr_kvtree* desc)
{
  char name[SCR_MAX_FILENAME] = "";
  if (scr.rank == 0) update_name_from_files(id, name, sizeof(name));
  MPI_Bcast(name, (int) sizeof(name), MPI_CHAR, 0, scr.comm_world);
  const char* old = scr_dataset_get_name(desc);
  if (!name[0] || (old && strcmp(old, name) == 0)) return;
  if (scr.rank == 0) scr_dbg(1, "preload: dataset %d (%s) is now named %s, after its files' new directory", id,
                             old ? old : "?", name);
  scr_dataset_set_name(desc, name);
}

/* collective: dataset id, changed in place or renamed on some rank
 * (rewritten: some rank changed bytes; linked: some rank made or deleted a
 * hard link; both agreed), gets its totals and its redundancy
 * anew, and its copy on the prefix directory, if it had one: the files
 * whose bytes changed are copied again; an older checkpoint stays behind
 * the newest in the index */
static void update_reprotect(int id, int rewritten, int linked)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  scr_kvtree* desc = scr_kvtree_get(dset, "DSETDESC");
  update_rename(id, desc);
  uint64_t counts[2] = { 0, 0 }, totals[2] = { 0, 0 };
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e;
       e = scr_kvtree_next(e)) {
    uint64_t size = 0;
    scr_kvtree_get_uint64(scr_kvtree_elem_tree(e), "SIZE", &size);
    counts[0]++;
    counts[1] += size;
  }
  MPI_Allreduce(counts, totals, 2, MPI_UINT64_T, MPI_SUM, scr.comm_world);
  scr_dataset_set_complete(desc, 1, totals[0], totals[1]);
  long long ckpt = 0;
  scr_kvtree_get_int(desc, "CKPT", &ckpt);
  double start = scr_log_seconds();
  /* only renamed (no rank changed a byte): the parity stays, its header
   * takes the new names; else, or when that fails, it is encoded anew.
   * Collective, and agreed: a failure leaves the redundancy marked stale */
  const struct scr_reddesc* reddesc = scr_reddesc_select((int) ckpt, scr_dataset_get_flags(desc));
  int renamed = !rewritten && scr_redundancy_rename(id, reddesc) == SCR_SUCCESS;
  int encoded = renamed || scr_redundancy_apply(id, reddesc) == SCR_SUCCESS;
  if (encoded) scr_kvtree_unset(dset, STALE_KEY);
  int newest = id == scr_cache_newest_checkpoint();
  int flushed = scr_mpi_all_true(scr_flush_is_flushed(id), scr.comm_world);
  /* an older one too, without becoming the index's current checkpoint */
  int flush = encoded && flushed;
  /* not flushed until it is again: a crash in between leaves no claim,
   * here or in the index on the prefix directory (a fetch would take the
   * files half old, half new) */
  if (flush) scr_kvtree_unset(dset, "FLUSHED");
  scr_cache_save_filemap();
  if (flush) {
    int marked = scr.rank != 0 || scr_index_file_update(scr.prefix, update_index_incomplete, &id) == SCR_SUCCESS;
    flush = scr_mpi_all_true(marked, scr.comm_world);
  }
  /* files only renamed keep their flushed copies, which moved along */
  uint64_t copied = 1;
  int reflushed = flush && scr_flush_dataset_again(id, newest, &copied) == SCR_SUCCESS;
  if (scr.rank != 0) return;
  const char* what = rewritten ? "changed in place" : linked ? "given or lost hard links" : "renamed";
  if (!encoded)
    scr_err("dataset %d was %s and its redundancy could not be encoded again: nothing will be rebuilt from it",
            id, what);
  else if (flush && !reflushed)
    scr_err("dataset %d, %s, could not be flushed again: the prefix directory has no whole copy of it", id, what);
  if (encoded)
    scr_info("preload: dataset %d was %s: its redundancy %s%s in %.3f s", id, what,
             renamed ? "took the new names" : "was encoded again",
             !reflushed ? "" : copied == 0 ? " and its flushed copy was moved with it"
                                           : " and it was flushed again", scr_log_seconds() - start);
}

/* the newest changed dataset below `below` that no descriptor on this
 * rank has open for update, -1 for none */
static int update_pending_below(int below)
{
  int mine = -1;
  for (size_t i = 0; i < update_count; i++)
    if (updates[i].changed && updates[i].open == 0 && updates[i].id > mine && updates[i].id < below)
      mine = updates[i].id;
  return mine;
}

int scr_engine_update_pending(void)
{
  return update_pending_below(INT_MAX);
}

void scr_engine_update_reprotect(void)
{
  int below = INT_MAX;
  for (;;) {
    int mine = update_pending_below(below), id = -1;
    MPI_Allreduce(&mine, &id, 1, MPI_INT, MPI_MAX, scr.comm_world);
    if (id < 0) return;
    below = id;
    struct update_dataset* u = update_find(id, 0);
    /* the cache lets a dataset go on every rank alike: then nothing is left to do */
    if (!scr_mpi_all_true(scr_filemap_get_dataset(scr.filemap, id) != NULL, scr.comm_world)) {
      update_forget(id);
      continue;
    }
    /* From here every rank knows some rank changed it: when bytes changed
     * (not only names) the mark goes into every rank's filemap, so that a
     * node lost with the rank that changed it (and its filemap) leaves a
     * survivor that refuses to rebuild from the old redundancy */
    int rewritten = !scr_mpi_all_true(!(u && u->rewritten), scr.comm_world);
    int linked = !scr_mpi_all_true(!(u && u->linked), scr.comm_world);
    if (rewritten && !update_is_stale(id)) {
      scr_kvtree_set_kv_int(scr_filemap_get_dataset(scr.filemap, id), STALE_KEY, 1);
      scr_cache_save_filemap();
    }
    /* a rank still changing it: the next meeting point */
    if (!scr_mpi_all_true(!u || u->open == 0, scr.comm_world)) continue;
    update_reprotect(id, rewritten, linked);
    update_forget(id);
  }
}

void scr_engine_update_adopt(int id)
{
  /* markers of opens the run before did not close, on files found unchanged */
  int dirty = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e;
       e = scr_kvtree_next(e)) {
    scr_kvtree* meta = scr_kvtree_elem_tree(e);
    dirty |= scr_kvtree_get(meta, SCR_FILEMAP_KEY_UPDATING) != NULL;
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_UPDATING);
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_BEFORE_SIZE);
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_BEFORE_CTIME);
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_BEFORE_CRC);
  }
  if (dirty) scr_cache_save_filemap();
  /* what changed, the run before knew: bytes (stale), or only names (a
   * file still recorded under the path its redundancy names, or also under
   * a name of it that was deleted) */
  int renamed = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e;
       e = scr_kvtree_next(e))
    renamed |= scr_kvtree_get_val(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_REDUNDANCY_PATH) != NULL ||
               scr_kvtree_get(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_REDUNDANCY_ALIAS) != NULL;
  int stale = update_is_stale(id);
  if (!stale && !renamed) return;
  struct update_dataset* u = update_find(id, 1);
  if (u) u->changed = 1;
  if (u && stale) u->rewritten = 1;
}
