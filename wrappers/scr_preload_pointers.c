/* scr_preload_pointers.c - pointer files: a file without {step} written once a
 * checkpoint completed, kept with it; the checkpoints they show, and the newest
 * one renamed into place, pinned in cache. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <mpi.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_cache.h"
#include "scr_flush.h"
#include "scr_preload_engine_impl.h"
#include "scr_prefix_dir.h"

/* <prefix>/.scr/attached.<id>/.scr_crc: FILE/<relpath>/{SIZE, CRC} of each
 * copy there, as its writer made it. The writer's filemap knows them too,
 * but not after its node was lost, when the other ranks still read the
 * copies: rank 0 then checks them with this (scr_pointers_verify). Updated
 * under <prefix>/.scr/pointers.lock, as several ranks may write pointers. */
#define POINTERS_RECORD SCR_PREFIX_DIR_ATTACHED_RECORD
#define POINTERS_LOCK "pointers.lock"

/* the copy of relpath (dataset id) on the prefix directory has size bytes
 * with CRC32 crc. Written after the copy: a crash between the two leaves a
 * record that does not match, and the copy is then dropped, never read. */
static void pointers_record(int id, const char* relpath, uint64_t size, uint32_t crc)
{
  char* path = scr_prefix_dir_attached(scr.prefix, id, POINTERS_RECORD);
  int fd = -1;
  if (!path || scr_prefix_dir_lock(scr.prefix, POINTERS_LOCK, &fd) != SCR_SUCCESS) {
    free(path);
    return;
  }
  scr_kvtree* record = scr_kvtree_new();
  /* one that cannot be read is made anew: it only ever guards against damage */
  if (scr_kvtree_read_file_if_exists(path, record) != SCR_SUCCESS) scr_kvtree_clear(record);
  scr_kvtree* f = scr_kvtree_add_kv(record, "FILE", relpath);
  scr_kvtree_set_kv_uint64(f, "SIZE", size);
  scr_kvtree_set_kvf(f, "CRC", "0x%08x", crc);
  if (scr_kvtree_write_file(path, record) != SCR_SUCCESS)
    scr_warn("cannot record the CRC32 of %s in %s: its damage would go unseen if its writer's node were lost",
             relpath, path);
  scr_kvtree_delete(&record);
  scr_prefix_dir_unlock(fd);
  free(path);
}

int scr_pointers_attach(int dataset, const char* orig, const char* relpath, char* cache, size_t length)
{
  char* dir = scr_cache_dataset_dir(dataset);
  char* path = dir ? scr_path_join(dir, relpath) : NULL;
  char* parent = path ? scr_path_dirname(path) : NULL;
  int rc = parent && strlen(path) < length ? scr_io_mkdir_p(parent, 0700) : SCR_ERR_NOMEM;
  if (rc == SCR_SUCCESS) {
    scr_kvtree* mine = scr_kvtree_add_kv_int(scr_filemap_get_dataset(scr.filemap, dataset), "RANK", scr.rank);
    scr_kvtree* meta = scr_kvtree_add_kv(mine, "ATTACHED", path);
    scr_kvtree_set_kv(meta, "ORIG", orig);
    scr_kvtree_set_kv(meta, "RELPATH", relpath);
    rc = scr_cache_save_filemap();
    snprintf(cache, length, "%s", path);
  }
  free(parent);
  free(path);
  free(dir);
  return rc;
}

/* the copy on the prefix directory is where every rank, and a later run,
 * find the file even if this node is lost */
void scr_pointers_closed(const struct scr_engine_file* f)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, f->dataset);
  scr_kvtree* meta = scr_kvtree_get(scr_kvtree_get(scr_kvtree_get_kv_int(dset, "RANK", scr.rank), "ATTACHED"),
                                    f->cache);
  uint32_t crc = 0;
  uint64_t size = 0;
  if (!meta || scr_io_crc32_file(f->cache, &crc, &size) != SCR_SUCCESS) return;
  scr_kvtree_set_kv_uint64(meta, "SIZE", size);
  scr_kvtree_set_kvf(meta, "CRC", "0x%08x", crc);
  scr_cache_save_filemap();
  char* store = scr_cache_attached_store(f->dataset, f->relpath);
  if (!store || scr_io_copy_file(f->cache, store, 0700, NULL, NULL) != SCR_SUCCESS)
    scr_err("cannot keep a copy of %s in %s: a restart on another node will not see it", f->orig,
            store ? store : "the prefix directory");
  else
    pointers_record(f->dataset, f->relpath, size, crc);
  free(store);
  if (scr_flush_is_flushed(f->dataset) && scr_io_copy_file(f->cache, f->orig, 0777, NULL, NULL) != SCR_SUCCESS)
    scr_err("cannot copy %s to the prefix directory: %s", f->orig, strerror(errno));
}

/* 1 when path holds size bytes with CRC32 crc */
static int pointers_copy_good(const char* path, uint64_t size, uint32_t crc)
{
  uint32_t got = 0;
  uint64_t length = 0;
  return scr_io_crc32_file(path, &got, &length) == SCR_SUCCESS && length == size && got == crc;
}

/* rank 0: the copies on the prefix directory of the attached files of each
 * complete cached dataset that fail the CRC32 recorded beside them go, so
 * that no rank reads them: the program sees the pointer attached to an older
 * checkpoint instead */
static void pointers_verify_orphans(void)
{
  for (scr_kvtree_elem* d = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); d; d = scr_kvtree_next(d)) {
    int id = (int) scr_kvtree_elem_key_int(d);
    if (!scr_dataset_is_complete(scr_kvtree_get(scr_kvtree_elem_tree(d), "DSETDESC"))) continue;
    char* path = scr_prefix_dir_attached(scr.prefix, id, POINTERS_RECORD);
    struct stat st;
    scr_kvtree* record = scr_kvtree_new();
    if (path && lstat(path, &st) == 0 && scr_kvtree_read_file(path, record) == SCR_SUCCESS) {
      for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(record, "FILE")); e; e = scr_kvtree_next(e)) {
        const char* relpath = scr_kvtree_elem_key(e);
        const char* crc = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "CRC");
        uint64_t size = 0;
        /* the record lies on a shared file system: it names nothing outside */
        if (!scr_path_is_safe_relative(relpath) || !crc ||
            scr_kvtree_get_uint64(scr_kvtree_elem_tree(e), "SIZE", &size) != SCR_SUCCESS)
          continue;
        char* store = scr_cache_attached_store(id, relpath);
        if (store && lstat(store, &st) == 0 && S_ISREG(st.st_mode) &&
            !pointers_copy_good(store, size, (uint32_t) strtoul(crc, NULL, 16))) {
          scr_warn("dataset %d: copy %s of attached file %s fails its CRC32 check and no rank holds it in cache: "
                   "it is removed, the one attached to an older checkpoint is seen instead", id, store, relpath);
          unlink(store);
        }
        free(store);
      }
    }
    scr_kvtree_delete(&record);
    free(path);
  }
}

void scr_pointers_verify(void)
{
  /* An attached file has two copies: in this rank's cache, which it reads,
   * and on the prefix directory, which every other rank reads. Each is the
   * other's redundancy: one whose bytes fail the CRC32 recorded when the
   * file was closed is made again from the other. When both fail, neither
   * may be read: the file goes, and the program sees the copy attached to an
   * older checkpoint, which stays pinned in cache. */
  int changed = 0;
  for (scr_kvtree_elem* d = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); d; d = scr_kvtree_next(d)) {
    int id = (int) scr_kvtree_elem_key_int(d);
    scr_kvtree* dset = scr_kvtree_elem_tree(d);
    if (!scr_dataset_is_complete(scr_kvtree_get(dset, "DSETDESC"))) continue;
    scr_kvtree* attached = scr_kvtree_get(scr_kvtree_get_kv_int(dset, "RANK", scr.rank), "ATTACHED");
    for (scr_kvtree_elem* e = scr_kvtree_first(attached); e;) {
      scr_kvtree_elem* next = scr_kvtree_next(e);
      const char* cache = scr_kvtree_elem_key(e);
      scr_kvtree* meta = scr_kvtree_elem_tree(e);
      const char* relpath = scr_kvtree_get_val(meta, "RELPATH");
      const char* crc_text = scr_kvtree_get_val(meta, "CRC");
      uint64_t size = 0;
      /* still open when the job ended: never complete, nothing to check */
      if (!relpath || !crc_text || scr_kvtree_get_uint64(meta, "SIZE", &size) != SCR_SUCCESS) {
        e = next;
        continue;
      }
      uint32_t crc = (uint32_t) strtoul(crc_text, NULL, 16);
      char* store = scr_cache_attached_store(id, relpath);
      int cache_good = pointers_copy_good(cache, size, crc);
      int store_good = store && pointers_copy_good(store, size, crc);
      if (cache_good && !store_good && store) {
        scr_warn("dataset %d: copy %s of attached file %s is missing or fails its CRC32 check: copied again "
                 "from cache", id, store, scr_kvtree_get_val(meta, "ORIG"));
        if (scr_io_copy_file(cache, store, 0700, NULL, NULL) != SCR_SUCCESS)
          scr_err("cannot copy %s to %s: %s", cache, store, strerror(errno));
      } else if (!cache_good && store_good) {
        scr_warn("dataset %d: cached attached file %s fails its CRC32 check: copied again from %s", id, cache,
                 store);
        if (scr_io_copy_file(store, cache, 0700, NULL, NULL) != SCR_SUCCESS)
          scr_err("cannot copy %s to %s: %s", store, cache, strerror(errno));
      } else if (!cache_good) {
        scr_warn("dataset %d: both copies of attached file %s (%s, %s) fail their CRC32 check: it is removed, "
                 "the one attached to an older checkpoint is seen instead", id, scr_kvtree_get_val(meta, "ORIG"),
                 cache, store ? store : "none");
        unlink(cache);
        if (store) unlink(store);
        char* key = strdup(cache); /* the entry owns cache */
        if (key) scr_kvtree_unset(attached, key);
        free(key);
        changed = 1;
      }
      free(store);
      e = next;
    }
  }
  if (changed) scr_cache_save_filemap();

  /* what no rank holds in cache (its writer's node was lost) only the record
   * on the prefix directory can check, once every writer repaired its own */
  MPI_Barrier(scr.comm_world);
  if (scr.rank == 0) pointers_verify_orphans();
}

/* ---- pinning */

/* newest[relpath] = the newest dataset id holding it */
static void pointers_note(scr_kvtree* newest, const char* relpath, int id)
{
  long long known = -1;
  if (scr_kvtree_get_int(newest, relpath, &known) != SCR_SUCCESS || id > known)
    scr_kvtree_set_kv_int(newest, relpath, id);
}

/* the files below the prefix directory's copy of dataset id's attached files
 * (dir, relpath below it so far in `below`) */
static void pointers_note_store(scr_kvtree* newest, int id, const char* dir, const char* below)
{
  DIR* d = opendir(dir);
  for (struct dirent* e = d ? readdir(d) : NULL; e; e = readdir(d)) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (!below && strcmp(e->d_name, POINTERS_RECORD) == 0) continue; /* SCR's, no pointer */
    char* path = scr_path_join(dir, e->d_name);
    char* relpath = below ? scr_path_join(below, e->d_name) : strdup(e->d_name);
    struct stat st;
    if (path && relpath && lstat(path, &st) == 0) {
      if (S_ISDIR(st.st_mode)) pointers_note_store(newest, id, path, relpath);
      else if (S_ISREG(st.st_mode)) pointers_note(newest, relpath, id);
    }
    free(relpath);
    free(path);
  }
  if (d) closedir(d);
}

/* newest[relpath] = newest dataset holding it, between scr_pointers_pin_local
 * and scr_pointers_pin_finish */
static scr_kvtree* pin_newest = NULL;

/* the newest in pin_newest below `below` (-1: any), or -1 */
static int pointers_candidate(int below)
{
  int local = -1;
  for (scr_kvtree_elem* e = scr_kvtree_first(pin_newest); e; e = scr_kvtree_next(e)) {
    int candidate = atoi(scr_kvtree_elem_val(e) ? scr_kvtree_elem_val(e) : "-1");
    if (candidate > local && (below < 0 || candidate < below)) local = candidate;
  }
  return local;
}

int scr_pointers_pin_local(void)
{
  /* The program finds its checkpoint through the newest copy of each pointer
   * file, and reads the checkpoint that copy was attached to: those stay,
   * whatever SCR_CACHE_SIZE says, until a newer copy is attached. The
   * writer's filemap knows them; after its node was lost only the copies
   * on the prefix directory do (read by rank 0: a listing per cached
   * dataset, each with a file or two). */
  scr_kvtree_delete(&pin_newest);
  pin_newest = scr_kvtree_new();
  scr_kvtree* newest = pin_newest;
  for (scr_kvtree_elem* d = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); newest && d;
       d = scr_kvtree_next(d)) {
    int id = (int) scr_kvtree_elem_key_int(d);
    if (!scr_dataset_is_complete(scr_kvtree_get(scr_kvtree_elem_tree(d), "DSETDESC"))) continue;
    scr_kvtree* mine = scr_kvtree_get_kv_int(scr_kvtree_elem_tree(d), "RANK", scr.rank);
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(mine, "ATTACHED")); e; e = scr_kvtree_next(e)) {
      const char* relpath = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "RELPATH");
      if (relpath) pointers_note(newest, relpath, id);
    }
    if (scr.rank == 0) {
      char* store = scr_prefix_dir_attached(scr.prefix, id, NULL);
      if (store) pointers_note_store(newest, id, store, NULL);
      free(store);
    }
  }
  return pointers_candidate(-1);
}

void scr_pointers_pin_finish(int first)
{
  /* the union over ranks, newest first, one agreement per pinned dataset
   * after the first, which the caller agreed on */
  int pins[SCR_CACHE_PINS_MAX], count = 0;
  for (int id = first; id >= 0 && count < SCR_CACHE_PINS_MAX;) {
    pins[count++] = id;
    if (count == SCR_CACHE_PINS_MAX) break;
    int local = pointers_candidate(id);
    MPI_Allreduce(&local, &id, 1, MPI_INT, MPI_MAX, scr.comm_world);
  }
  scr_kvtree_delete(&pin_newest);
  scr_cache_pin(SCR_CACHE_PIN_POINTERS, pins, count);
  if (count) scr_dbg(2, "preload: %d dataset(s) pinned in cache for pointer files, newest %d", count, pins[0]);
}

void scr_pointers_pin(void)
{
  int local = scr_pointers_pin_local(), first = -1;
  MPI_Allreduce(&local, &first, 1, MPI_INT, MPI_MAX, scr.comm_world);
  scr_pointers_pin_finish(first);
}

/* ---- checkpoints renamed into place. A program that writes each
 * checkpoint into a temporary directory and renames it into place once it
 * completed resumes only from one it renamed: one that completed but was
 * not renamed yet (the job died in between, or a restart showed it and the
 * program went back past it) is no checkpoint to it. The newest renamed one
 * stays, whatever SCR_CACHE_SIZE says, until a newer one is renamed, as the
 * one a pointer names does: the cache otherwise keeps the newest complete
 * checkpoint, and a crash before the rename would leave only checkpoints the
 * program does not take. */

int scr_pointers_renamed_newest(void)
{
  int newest = -1;
  for (scr_kvtree_elem* d = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); d; d = scr_kvtree_next(d)) {
    scr_kvtree* dset = scr_kvtree_elem_tree(d);
    scr_kvtree* desc = scr_kvtree_get(dset, "DSETDESC");
    long long renamed = 0;
    int id = (int) scr_kvtree_elem_key_int(d);
    if (id > newest && scr_dataset_is_checkpoint(desc) && scr_dataset_is_complete(desc) &&
        scr_kvtree_get_int(dset, SCR_FILEMAP_KEY_RENAMED_INTO_PLACE, &renamed) == SCR_SUCCESS && renamed)
      newest = id;
  }
  return newest;
}

static int renamed_pinned = -1;  /* the pin now, the same on every rank */
static int renamed_agreed = -1;  /* the newest, as the last meeting of the ranks agreed */

int scr_pointers_renamed_pinned(void)
{
  return renamed_pinned;
}

static void renamed_pin(int id)
{
  if (id != renamed_pinned && id >= 0)
    scr_dbg(2, "preload: dataset %d, the newest checkpoint renamed into place, pinned in cache", id);
  renamed_pinned = id;
  scr_cache_pin(SCR_CACHE_PIN_RENAMED, &id, id >= 0);
}

void scr_pointers_renamed_agreed(int newest, int may_move)
{
  renamed_agreed = newest;
  if (!may_move || newest == renamed_pinned) return;
  renamed_pin(newest);
  /* what the old pin kept beyond SCR_CACHE_SIZE goes now, every rank being
   * here, rather than at the next dataset's start (or never, at the end) */
  scr_cache_trim();
  /* the last completion predicted the next dataset's room with the pin
   * where it was: only ever less than there is now, so only a cache it
   * found too small is looked at again (every rank agreed on that) */
  if (scr.cache_full) scr_cache_predict_next(scr_cache_newest_checkpoint());
}

void scr_pointers_pin_renamed(void)
{
  renamed_pin(renamed_agreed);
}

void scr_pointers_pin_renamed_start(void)
{
  int newest = scr_pointers_renamed_newest();
  MPI_Allreduce(MPI_IN_PLACE, &newest, 1, MPI_INT, MPI_MAX, scr.comm_world);
  renamed_agreed = newest;
  renamed_pin(newest);
  /* SCR_Init predicted whether the first dataset fits before anything was
   * pinned: what the pins keep is not freed at its start */
  scr_cache_predict_next(scr_cache_newest_checkpoint());
}
