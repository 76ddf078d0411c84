/* scr_cache.c - the node-local cache of one rank: routing, filemap, checks, eviction.
 * Deleting is a rename plus a background unlink so that a checkpoint never waits for it. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_filemap.h"
#include "scr_filemap_journal.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_flush_file.h"
#include "scr_prefix_dir.h"

char* scr_cache_dataset_dir(int id)
{
  char* dir = NULL;
  if (asprintf(&dir, "%s/scr.dataset.%d", scr.cache_dir, id) < 0) return NULL;
  return dir;
}

/* The journal of routed files: a file routed into the dataset in progress
 * is named in the filemap in memory at once, but the filemap is written only
 * when something else changes it, and at the dataset's completion, which
 * writes it before the dataset counts as complete (SCR_Complete_output).
 * Writing the whole filemap (temporary file, fsync, rename, fsync of the
 * directory) at every routed open cost 9 system calls and a copy of the
 * whole filemap per file: quadratic in the files of a dataset. Instead each
 * such file is appended to <cntl>/filemap_<rank>.journal (one write(2), no
 * fsync: a dataset in progress need not survive a crash, only be found and
 * removed after one). The next run merges the journal into the datasets it
 * names that are still incomplete, which then go as every incomplete
 * dataset does, files and all. Any write of the filemap empties the journal. */
static int scr_journal_fd = -1;
static dev_t scr_journal_dev;      /* the file scr_journal_fd was opened on */
static ino_t scr_journal_ino;
static int scr_journal_used = 0;   /* appended to since the filemap was last written */
static int scr_journal_torn = 0;   /* an append failed: unusable until emptied */

static char* scr_cache_journal_path(int rank)
{
  return scr_filemap_journal_path(scr.cntl_dir, rank);
}

int scr_cache_journal_merge(int rank, scr_kvtree* map)
{
  char* path = scr_cache_journal_path(rank);
  int merged = scr_filemap_journal_merge(path, rank, map);
  free(path);
  return merged;
}

void scr_cache_journal_remove(int rank)
{
  char* path = scr_cache_journal_path(rank);
  if (path) unlink(path);
  free(path);
}

/* 1 when scr_journal_fd is still the journal: the program may have closed
 * the number (closefrom, close_range) and opened something else under it,
 * which a record must never go into (the number is then not closed here:
 * it is the program's) */
static int scr_cache_journal_ours(void)
{
  struct stat st;
  if (scr_journal_fd < 0) return 0;
  if (fstat(scr_journal_fd, &st) == 0 && st.st_dev == scr_journal_dev && st.st_ino == scr_journal_ino) return 1;
  scr_journal_fd = -1;
  return 0;
}

/* append one routed file; SCR_SUCCESS or an error when the journal cannot
 * take it (the caller then writes the filemap instead) */
static int scr_cache_journal_append(int id, const char* cache, const char* orig, const char* relpath)
{
  if (scr_journal_torn) return SCR_ERR_IO;
  if (!scr_cache_journal_ours()) {
    char* path = scr_cache_journal_path(scr.rank);
    struct stat st;
    scr_journal_fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
    free(path);
    if (scr_journal_fd < 0) return SCR_ERR_IO;
    if (fstat(scr_journal_fd, &st) != 0) {
      close(scr_journal_fd);
      scr_journal_fd = -1;
      return SCR_ERR_IO;
    }
    scr_journal_dev = st.st_dev;
    scr_journal_ino = st.st_ino;
  }
  char stack[4 * 4096 + 32];
  size_t total = scr_filemap_journal_encode(stack, sizeof(stack), id, cache, orig, relpath);
  char* rec = stack;
  if (total > sizeof(stack)) {
    rec = malloc(total);
    if (!rec) return SCR_ERR_NOMEM;
    scr_filemap_journal_encode(rec, total, id, cache, orig, relpath);
  }
  /* one write: a process that dies leaves the record whole or absent */
  ssize_t w = write(scr_journal_fd, rec, total);
  if (rec != stack) free(rec);
  if (w != (ssize_t) total) {
    /* part of a record (a full device) would spoil the records after it:
     * the filemap is written instead until a write of it empties this */
    if (w > 0) scr_journal_used = 1;
    scr_journal_torn = 1;
    return SCR_ERR_IO;
  }
  scr_journal_used = 1;
  return SCR_SUCCESS;
}

/* the journal's descriptor was lost: empty it by name; 1 when done */
static int scr_cache_journal_empty(void)
{
  char* path = scr_cache_journal_path(scr.rank);
  int rc = path ? truncate(path, 0) : -1;
  free(path);
  return rc == 0 || errno == ENOENT;
}

/* the filemap on disk names everything the journal held */
static void scr_cache_journal_clear(void)
{
  if (!scr_journal_used && !scr_journal_torn) return;
  if (scr_cache_journal_ours() ? ftruncate(scr_journal_fd, 0) == 0 : scr_cache_journal_empty())
    scr_journal_used = scr_journal_torn = 0;
}

void scr_cache_journal_close(void)
{
  if (scr_cache_journal_ours()) close(scr_journal_fd);
  scr_journal_fd = -1;
  if (!scr_journal_used) scr_cache_journal_remove(scr.rank);
  scr_journal_used = scr_journal_torn = 0;
}

int scr_cache_load_filemap(void)
{
  free(scr.filemap_file);
  scr.filemap_file = scr_filemap_path(scr.cntl_dir, scr.rank);
  scr_kvtree_delete(&scr.filemap);
  scr.filemap = scr_kvtree_new();
  int rc = scr_kvtree_read_file_if_exists(scr.filemap_file, scr.filemap);
  if (rc != SCR_SUCCESS) {
    /* an unreadable filemap means unknown cache contents: start empty, the
     * datasets it described will be found invalid and fetched instead */
    scr_warn("ignoring unreadable filemap %s", scr.filemap_file);
    scr_kvtree_clear(scr.filemap);
  }
  /* files of a dataset the last run died writing: named now, so that the
   * removal of that dataset finds them */
  int merged = scr_cache_journal_merge(scr.rank, scr.filemap);
  if (merged > 0)
    scr_dbg(1, "%d file(s) of a dataset in progress when the last run ended, from %s/filemap_%d.journal", merged,
            scr.cntl_dir, scr.rank);
  /* names read back from disk are not trusted: a dataset naming files
   * outside the cache ("../", absolute, through a symbolic link) is not used */
  int dropped = scr_filemap_drop_unsafe(scr.filemap, scr.filemap_file, scr.cache_dir, scr.prefix);
  if ((merged == 0 && dropped == 0) || scr_cache_save_filemap() == SCR_SUCCESS) scr_cache_journal_remove(scr.rank);
  return SCR_SUCCESS;
}

int scr_cache_save_filemap(void)
{
  int rc = scr_kvtree_write_file(scr.filemap_file, scr.filemap);
  if (rc != SCR_SUCCESS)
    scr_err("cannot write filemap %s: %s", scr.filemap_file, scr_error_string(rc));
  else
    scr_cache_journal_clear();
  return rc;
}

int scr_cache_route_file(int id, const char* orig_path, const char* relpath,
                         char* file, size_t len)
{
  char* dir = scr_cache_dataset_dir(id);
  /* a bypass dataset (SCR_CACHE_BYPASS, or a cache too small for it) is
   * written where the program asked: on the prefix directory */
  int bypass = scr_cache_dataset_bypassed(id);
  char* path = !dir ? NULL : bypass ? strdup(orig_path) : scr_path_join(dir, relpath);
  int rc = path ? SCR_SUCCESS : SCR_ERR_NOMEM;
  if (rc == SCR_SUCCESS && strlen(path) >= len) {
    scr_err("cache path for %s is longer than SCR_MAX_FILENAME: shorten SCR_CACHE_BASE", orig_path);
    rc = SCR_ERR_INVALID;
  }
  /* the program writes the name handed out: a symbolic link or another
   * user's file planted in the cache must not be where it goes */
  if (rc == SCR_SUCCESS && !bypass && (scr_io_check_own_dir(dir) != SCR_SUCCESS || scr_io_check_name(path, 0) != SCR_SUCCESS))
    rc = SCR_ERR_SECURITY;
  if (rc == SCR_SUCCESS) {
    /* named before the file exists, so that a crash never leaves an
     * unrecorded file behind: in the filemap on disk, or, for the dataset
     * in progress, in the journal (see above) */
    scr_filemap_add_file(scr.filemap, id, scr.rank, path, orig_path, relpath);
    if (!(scr.in_output && id == scr.output_id) ||
        scr_cache_journal_append(id, path, orig_path, relpath) != SCR_SUCCESS)
      rc = scr_cache_save_filemap();
  }
  if (rc == SCR_SUCCESS) {
    /* the application need not create directories, wherever SCR puts the
     * file; on the prefix directory they get the modes its own would */
    char* parent = scr_path_dirname(path);
    rc = scr_io_mkdir_p(parent, bypass ? 0777 : 0700);
    if (rc != SCR_SUCCESS)
      scr_err("cannot create %s directory %s: %s", bypass ? "the" : "cache", parent, strerror(errno));
    free(parent);
  }
  if (rc == SCR_SUCCESS) snprintf(file, len, "%s", path);
  free(path);
  free(dir);
  return rc;
}

int scr_cache_complete_files(int id, int valid, uint64_t* files, uint64_t* bytes)
{
  int ok = valid;
  *files = 0;
  *bytes = 0;
  scr_kvtree_elem* e;
  for (e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e;
       e = scr_kvtree_next(e)) {
    const char* path = scr_kvtree_elem_key(e);
    scr_kvtree* meta = scr_kvtree_elem_tree(e);
    uint64_t size = 0;
    uint32_t crc = 0;
    int file_ok = valid;
    if (scr.crc_on_copy) {
      if (scr_io_crc32_file(path, &crc, &size) == SCR_SUCCESS)
        scr_kvtree_set_kvf(meta, "CRC", "0x%08x", crc);
      else
        file_ok = 0;
    } else if (scr_io_file_size(path, &size) != SCR_SUCCESS) {
      file_ok = 0;
    }
    if (!file_ok && valid)
      scr_err("file %s of dataset %d was registered with SCR_Route_file but cannot be read: "
              "marking the dataset invalid", scr_kvtree_get_val(meta, "ORIG"), id);
    scr_kvtree_set_kv_uint64(meta, "SIZE", size);
    scr_kvtree_set_kv_int(meta, "COMPLETE", file_ok);
    ok = ok && file_ok;
    (*files)++;
    *bytes += size;
  }
  /* a rank that wrote no file still records its (empty) part of the dataset */
  scr_filemap_set_file_count(scr.filemap, id, scr.rank, (int) *files);
  return ok;
}

/* a file the preload layer had open for update (the job ended meanwhile):
 * 1 when its size and change time are still those recorded when that began */
static int scr_cache_file_unchanged(const char* path, scr_kvtree* meta)
{
  uint64_t size = 0;
  const char* ctime = scr_kvtree_get_val(meta, SCR_FILEMAP_KEY_BEFORE_CTIME);
  char now[48];
  struct stat st;
  if (!ctime || scr_kvtree_get_uint64(meta, SCR_FILEMAP_KEY_BEFORE_SIZE, &size) != SCR_SUCCESS ||
      stat(path, &st) != 0)
    return 0;
  snprintf(now, sizeof(now), "%lld.%09ld", (long long) st.st_ctim.tv_sec, (long) st.st_ctim.tv_nsec);
  if ((uint64_t) st.st_size != size || strcmp(now, ctime) != 0) return 0;
  const char* want = scr_kvtree_get_val(meta, SCR_FILEMAP_KEY_BEFORE_CRC);
  uint32_t crc = 0;
  return !want || (scr_io_crc32_file(path, &crc, &size) == SCR_SUCCESS && strtoul(want, NULL, 16) == crc);
}

int scr_cache_check_dataset(int id)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  if (!dset || !scr_dataset_is_complete(scr_kvtree_get(dset, "DSETDESC"))) return 0;
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, id, scr.rank);
  if (!scr_kvtree_get_kv_int(dset, "RANK", scr.rank)) return 0;
  if (scr_kvtree_size(files) != scr_filemap_get_file_count(scr.filemap, id, scr.rank)) return 0;
  scr_kvtree_elem* e;
  for (e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
    const char* path = scr_kvtree_elem_key(e);
    scr_kvtree* meta = scr_kvtree_elem_tree(e);
    uint64_t want = 0, size = 0;
    long long complete = 0;
    scr_kvtree_get_int(meta, "COMPLETE", &complete);
    scr_kvtree_get_uint64(meta, "SIZE", &want);
    long long updating = 0;
    scr_kvtree_get_int(meta, SCR_FILEMAP_KEY_UPDATING, &updating);
    if (updating && !scr_cache_file_unchanged(path, meta)) {
      scr_warn("dataset %d: cached file %s was being changed in place when the job ended", id, path);
      return 0;
    }
    if (!complete || scr_io_file_size(path, &size) != SCR_SUCCESS || size != want) {
      scr_dbg(1, "dataset %d: cached file %s is missing or has the wrong size", id, path);
      return 0;
    }
    const char* crc_text = scr_kvtree_get_val(meta, "CRC");
    if (crc_text) {
      uint32_t crc = 0;
      if (scr_io_crc32_file(path, &crc, &size) != SCR_SUCCESS ||
          strtoul(crc_text, NULL, 16) != crc) {
        scr_warn("dataset %d: cached file %s fails its CRC32 check", id, path);
        return 0;
      }
    }
  }
  return 1;
}

int scr_cache_count_datasets(void)
{
  return scr_kvtree_size(scr_kvtree_get(scr.filemap, "DSET"));
}

/* ---- background deletion ---- */

static pthread_mutex_t scr_reaper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t scr_reaper_wake = PTHREAD_COND_INITIALIZER;
static pthread_t scr_reaper_thread;
static int scr_reaper_running = 0;
static int scr_reaper_stop = 0;
static int scr_reaper_pending = 0;

static char* scr_cache_trash_dir(void)
{
  return scr_path_join(scr.cache_dir, ".trash");
}

/* empty every entry of the trash directory */
static void scr_cache_empty_trash(const char* trash)
{
  DIR* d = opendir(trash);
  if (!d) return;
  struct dirent* ent;
  while ((ent = readdir(d)) != NULL) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
    char* path = scr_path_join(trash, ent->d_name);
    if (path) scr_io_remove_tree(path);
    free(path);
  }
  closedir(d);
}

static void* scr_cache_reaper_main(void* arg)
{
  char* trash = arg;
  if (scr.thread_start) scr.thread_start();
  pthread_mutex_lock(&scr_reaper_lock);
  for (;;) {
    while (!scr_reaper_pending && !scr_reaper_stop)
      pthread_cond_wait(&scr_reaper_wake, &scr_reaper_lock);
    int stop = scr_reaper_stop;
    scr_reaper_pending = 0;
    pthread_mutex_unlock(&scr_reaper_lock);
    scr_cache_empty_trash(trash);
    pthread_mutex_lock(&scr_reaper_lock);
    if (stop && !scr_reaper_pending) break;
  }
  pthread_mutex_unlock(&scr_reaper_lock);
  free(trash);
  return NULL;
}

char* scr_cache_trash_path(void)
{
  return scr_cache_trash_dir();
}

void scr_cache_reap_now(void)
{
  char* trash = scr_cache_trash_dir();
  if (trash) scr_cache_empty_trash(trash);
  free(trash);
}

void scr_cache_start_reaper(void)
{
  char* trash = scr_cache_trash_dir();
  if (!trash) return;
  scr_reaper_stop = 0;
  scr_reaper_pending = 1; /* leftovers of a previous run */
  /* the thread takes no signal: a handler of the application run on it
   * (one that writes a checkpoint on SIGALRM) would wait for the library's
   * lock while SCR_Finalize, holding it, waits for the thread */
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &saved);
  if (pthread_create(&scr_reaper_thread, NULL, scr_cache_reaper_main, trash) == 0)
    scr_reaper_running = 1;
  else
    free(trash);
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

void scr_cache_stop_reaper(void)
{
  if (!scr_reaper_running) return;
  pthread_mutex_lock(&scr_reaper_lock);
  scr_reaper_stop = 1;
  pthread_cond_signal(&scr_reaper_wake);
  pthread_mutex_unlock(&scr_reaper_lock);
  pthread_join(scr_reaper_thread, NULL);
  scr_reaper_running = 0;
}

/* Move one path of this rank's into the trash for the reaper; if that is
 * impossible remove it in place. */
static void scr_cache_discard(const char* path, const char* trash)
{
  static unsigned long counter = 0;
  char* target = NULL;
  int moved = 0;
  if (trash && asprintf(&target, "%s/%d.%d.%lu", trash, (int) getpid(), scr.rank, counter++) >= 0)
    moved = rename(path, target) == 0;
  if (!moved && errno != ENOENT) scr_io_remove_tree(path);
  free(target);
}

/* remove the directories between `path` and the dataset directory (included)
 * that are now empty; a directory another rank still uses stays */
static void scr_cache_prune_dirs(const char* path, const char* dataset_dir)
{
  char* dir = scr_path_dirname(path);
  while (dir && scr_path_is_within(dir, dataset_dir) && rmdir(dir) == 0) {
    if (strcmp(dir, dataset_dir) == 0) break;
    char* parent = scr_path_dirname(dir);
    free(dir);
    dir = parent;
  }
  free(dir);
}

char* scr_cache_attached_store(int id, const char* relpath)
{
  return scr_prefix_dir_attached(scr.prefix, id, relpath);
}

/* the prefix-directory copies of this rank's attached files: kept while the
 * dataset may still be restored from there (it was flushed) */
static void scr_cache_delete_attached_store(int id, scr_kvtree* dset, scr_kvtree* mine)
{
  long long flushed = 0;
  scr_kvtree_get_int(dset, "FLUSHED", &flushed);
  if (flushed) return;
  char* top = scr_prefix_dir_attached(scr.prefix, id, NULL);
  if (!top) return;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(mine, "ATTACHED")); e; e = scr_kvtree_next(e)) {
    const char* relpath = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "RELPATH");
    char* store = relpath ? scr_cache_attached_store(id, relpath) : NULL;
    if (store && unlink(store) == 0) scr_cache_prune_dirs(store, top);
    free(store);
  }
  /* the record of their CRC32s goes with them (a rank that held none leaves
   * it), and with it the directory once empty */
  if (scr_kvtree_size(scr_kvtree_get(mine, "ATTACHED")) > 0) {
    char* record = scr_prefix_dir_attached(scr.prefix, id, SCR_PREFIX_DIR_ATTACHED_RECORD);
    if (record && unlink(record) == 0) rmdir(top);
    free(record);
  }
  free(top);
}

/* scr_cache_delete_dataset without writing the filemap, for a caller that
 * writes it with its own change */
static void scr_cache_drop_dataset(int id)
{
  /* Ranks of a node share the dataset directory and may delete at different
   * times (a rebuild replaces one rank's part): each rank moves only what its
   * filemap names into the trash, and the last one out removes the directory.
   * Files outside the dataset directory (cache bypass) belong to the user. The
   * filemap entry goes last: it keeps naming the files until they are gone. */
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  char* dir = scr_cache_dataset_dir(id);
  char* trash = scr_cache_trash_dir();
  if (trash && scr_io_mkdir_p(trash, 0700) != SCR_SUCCESS) {
    free(trash);
    trash = NULL;
  }
  scr_kvtree* mine = scr_kvtree_get_kv_int(dset, "RANK", scr.rank);
  const char* lists[] = { "FILE", "REDFILE", "ATTACHED" };
  for (size_t l = 0; dir && l < sizeof(lists) / sizeof(lists[0]); l++) {
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(mine, lists[l])); e; e = scr_kvtree_next(e)) {
      const char* path = scr_kvtree_elem_key(e);
      if (!scr_path_is_within(path, dir)) continue;
      scr_cache_discard(path, trash);
      scr_cache_prune_dirs(path, dir);
    }
  }
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(dset, "PARTNER")); dir && e; e = scr_kvtree_next(e)) {
    const char* held = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "DIR");
    if (!held || !scr_path_is_within(held, dir)) continue;
    scr_cache_discard(held, trash);
    scr_cache_prune_dirs(held, dir);
  }
  if (dir) rmdir(dir); /* a rank with no files of its own */
  scr_cache_delete_attached_store(id, dset, mine);
  if (trash) {
    if (scr_reaper_running) {
      pthread_mutex_lock(&scr_reaper_lock);
      scr_reaper_pending = 1;
      pthread_cond_signal(&scr_reaper_wake);
      pthread_mutex_unlock(&scr_reaper_lock);
    } else {
      scr_cache_empty_trash(trash);
    }
  }
  free(trash);
  free(dir);
  scr_filemap_remove_dataset(scr.filemap, id);
  if (scr.rank == 0 && scr.prefix) scr_flush_file_remove(scr.prefix, id);
}

int scr_cache_delete_dataset(int id)
{
  scr_cache_drop_dataset(id);
  return scr_cache_save_filemap();
}

int scr_cache_newest_checkpoint(void)
{
  int newest = -1;
  scr_kvtree_elem* e;
  for (e = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); e; e = scr_kvtree_next(e)) {
    scr_kvtree* desc = scr_kvtree_get(scr_kvtree_elem_tree(e), "DSETDESC");
    int id = (int) scr_kvtree_elem_key_int(e);
    if (scr_dataset_is_checkpoint(desc) && scr_dataset_is_complete(desc) && id > newest)
      newest = id;
  }
  return newest;
}

/* Every rank evicts the same dataset: besides each rank's own files, rank 0
 * removes the prefix directory's copies of the files attached to it, which
 * the writer's filemap may no longer list (its node was lost, and its part
 * rebuilt without them) */
static int scr_cache_evict_dataset(int id, int save)
{
  long long flushed = 0;
  scr_kvtree_get_int(scr_filemap_get_dataset(scr.filemap, id), "FLUSHED", &flushed);
  int rc = SCR_SUCCESS;
  if (save) rc = scr_cache_delete_dataset(id);
  else scr_cache_drop_dataset(id);
  char* top = scr.rank == 0 && !flushed ? scr_prefix_dir_attached(scr.prefix, id, NULL) : NULL;
  if (top) {
    struct stat st;
    if (lstat(top, &st) == 0) scr_io_remove_tree(top);
  }
  free(top);
  return rc;
}

/* datasets the program may resume from, by kind (set collectively by
 * scr_cache_pin, so every rank keeps the same ones) */
static int scr_cache_pinned[SCR_CACHE_PIN_KINDS][SCR_CACHE_PINS_MAX];
static int scr_cache_pinned_count[SCR_CACHE_PIN_KINDS];

void scr_cache_pin(enum scr_cache_pin_kind kind, const int* ids, int count)
{
  if ((unsigned) kind >= SCR_CACHE_PIN_KINDS) return;
  if (count < 0) count = 0;
  scr_cache_pinned_count[kind] = count < SCR_CACHE_PINS_MAX ? count : SCR_CACHE_PINS_MAX;
  memcpy(scr_cache_pinned[kind], ids, (size_t) scr_cache_pinned_count[kind] * sizeof(*ids));
}

static int scr_cache_is_pinned(int id)
{
  for (int kind = 0; kind < SCR_CACHE_PIN_KINDS; kind++)
    for (int i = 0; i < scr_cache_pinned_count[kind]; i++)
      if (scr_cache_pinned[kind][i] == id) return 1;
  return 0;
}

/* Delete the oldest datasets until at most limit remain. Never evicted: keep,
 * a dataset being flushed, output that has not reached the prefix directory,
 * the newest complete checkpoint, which stays the restart point until a newer
 * one completes (so with SCR_CACHE_SIZE=1 the cache holds one more dataset
 * while a checkpoint is written), and the pinned ones (scr_cache_pin). */
int scr_cache_evictable_oldest(int keep, int newest, int above)
{
  int oldest = -1;
  scr_kvtree_elem* e;
  for (e = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); e; e = scr_kvtree_next(e)) {
    scr_kvtree* dset = scr_kvtree_elem_tree(e);
    int id = (int) scr_kvtree_elem_key_int(e);
    long long flushing = 0, flushed = 0;
    scr_kvtree_get_int(dset, "FLUSHING", &flushing);
    scr_kvtree_get_int(dset, "FLUSHED", &flushed);
    int output = scr_dataset_is_output(scr_kvtree_get(dset, "DSETDESC"));
    if (id <= above || id == keep || id == newest || scr_cache_is_pinned(id) || flushing || (output && !flushed))
      continue;
    if (oldest < 0 || id < oldest) oldest = id;
  }
  return oldest;
}

static int scr_cache_evict_to(long long limit, int keep, int save)
{
  /* every rank holds the same dataset ids, so decisions agree without talking */
  int rc = SCR_SUCCESS;
  int newest = scr_cache_newest_checkpoint();
  while (scr_cache_count_datasets() > limit) {
    int oldest = scr_cache_evictable_oldest(keep, newest, -1);
    if (oldest < 0) break;
    scr_dbg(1, "evicting dataset %d from cache to make room (SCR_CACHE_SIZE=%lld)", oldest,
            scr.cache_size);
    long long stale = 0;
    scr_kvtree_get_int(scr_filemap_get_dataset(scr.filemap, oldest), SCR_FILEMAP_KEY_REDUNDANCY_STALE, &stale);
    if (stale)
      scr_warn("dataset %d, changed in place since it was protected, leaves the cache to make room "
               "(SCR_CACHE_SIZE=%lld): the change is lost; the prefix directory keeps it as it was flushed, if it "
               "was", oldest, scr.cache_size);
    if (scr_cache_evict_dataset(oldest, save) != SCR_SUCCESS) rc = SCR_ERR_IO;
  }
  return rc;
}

/* The filemap is not written here: the dataset about to begin is what room
 * is made for, and its start (or, under the preload, its completion) writes
 * the filemap with both changes (scr_output_begin). Until then the filemap on
 * disk still lists the evicted datasets, whose files are already in the
 * trash: a crash in between leaves them listed but not whole, which a restart
 * drops as it drops any dataset that is not; the newest checkpoint is never
 * evicted, so it is still there. One write of the filemap (temporary file,
 * fsync, rename, fsync of the directory) per checkpoint instead of two. */
int scr_cache_make_room_local(int keep)
{
  return scr_cache_evict_to(scr.cache_size - 1, keep, 0);
}

/* the all-true only makes a failure on one rank visible to all */
int scr_cache_make_room(int keep)
{
  int rc = scr_cache_evict_to(scr.cache_size - 1, keep, 0);
  return scr_mpi_all_true(rc == SCR_SUCCESS, scr.comm_world) ? SCR_SUCCESS : SCR_ERR_IO;
}

int scr_cache_trim_local(void)
{
  return scr_cache_evict_to(scr.cache_size, -1, 1);
}

int scr_cache_trim(void)
{
  int rc = scr_cache_trim_local();
  return scr_mpi_all_true(rc == SCR_SUCCESS, scr.comm_world) ? SCR_SUCCESS : SCR_ERR_IO;
}
