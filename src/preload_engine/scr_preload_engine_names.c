/* scr_preload_engine_names.c - the engine's answers to calls that change names:
 * rename, unlink, rmdir, truncate, mkdir, and making a virtual directory real. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_index_file.h"
#include "scr_globals.h"
#include "scr_cache.h"
#include "scr_flush.h"
#include "scr_flush_async.h"
#include "scr_mpi.h"
#include "scr_fault.h"
#include "scr_preload_engine_impl.h"
#include "scr_preload_state.h"

/* the flushed copy of one of dataset's files, from, follows its file to `to`
 * on the prefix directory (whose directories there may not exist yet: the
 * view made them); a failure leaves it to the next flush to copy it again */
static void engine_move_flushed_copy(int dataset, const char* from, const char* to)
{
  /* rank 0 only: thousands of ranks renaming their files would each take
   * the index's lock; a crash before the next flush of the new names then
   * leaves a fetch of this dataset to fail and fall back to the one before */
  if (scr.rank == 0) scr_engine_update_prefix_moving(dataset);
  char* parent = scr_path_dirname(to);
  if (!parent || scr_io_mkdir_p(parent, 0755) != SCR_SUCCESS || rename(from, to) != 0)
    scr_warn("cannot move %s to %s after the cached file was renamed (%s): the next flush copies it again", from,
             to, strerror(errno));
  free(parent);
}

/* the directories of a dataset's cache tree that held only `cached`, which
 * just left it, go too. The tree repeats the prefix directory's, so a
 * directory left empty there stands at a name the program may make a file
 * of next (a name that was a directory of checkpoint files, removed): the
 * new file's cache file, or the rename of one to it, would then meet a
 * directory (EISDIR). The dataset's own directory stays. Keeps errno. */
void scr_engine_prune_cache_dirs(const char* cached)
{
  size_t root = strlen(scr.cache_dir);
  char dir[SCR_MAX_FILENAME];
  if (!scr_path_is_within(cached, scr.cache_dir) || strlen(cached) >= sizeof(dir)) return;
  int saved_errno = errno;
  snprintf(dir, sizeof(dir), "%s", cached);
  char* slash;
  while ((slash = strrchr(dir, '/')) != NULL && slash > dir + root) {
    *slash = '\0';
    if (!strchr(dir + root + 1, '/') || rmdir(dir) != 0) break;
  }
  errno = saved_errno;
}

/* rename within the cache: the entry of this rank's filemap follows the file.
 * alone: the other ranks are not renaming with this one (a directory moved
 * by one rank), so no collective may start here */
int scr_engine_rename_cached(const char* cache_from, int dataset, const scr_preload_target* to,
                            const char* relpath, int alone)
{
  char cache_to[SCR_MAX_FILENAME];
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, dataset, scr.rank);
  scr_kvtree* old = files ? scr_kvtree_get(files, cache_from) : NULL;
  int rc;
  if (old && scr_engine_writing(dataset) && !(alone && scr_engine_would_complete(to))) {
    /* a file of the dataset in progress: its new name may give the {step} */
    int attached = 0;
    rc = scr_engine_route_new(to, scr_engine_rule(to), relpath, cache_to, sizeof(cache_to), &attached);
    if (rc == SCR_SUCCESS && attached) rc = SCR_FAILURE;
    dataset = scr.output_id;
  } else {
    char* dir = scr_cache_dataset_dir(dataset);
    char* path = dir ? scr_path_join(dir, relpath) : NULL;
    char* parent = path ? scr_path_dirname(path) : NULL;
    rc = parent && scr_io_mkdir_p(parent, 0700) == SCR_SUCCESS ? SCR_SUCCESS : SCR_FAILURE;
    if (rc == SCR_SUCCESS) snprintf(cache_to, sizeof(cache_to), "%s", path);
    free(parent);
    free(path);
    free(dir);
  }
  struct stat st;
  /* (a run that died moved the file and not its record: a restart follows
   * the journal to where it is) */
  if (rc != SCR_SUCCESS ||
      (rename(cache_from, cache_to) != 0 && !(errno == ENOENT && lstat(cache_to, &st) == 0)))
    return SCR_FAILURE;
  scr_engine_prune_cache_dirs(cache_from);
  scr_fault_point("move"); /* moved in cache, its record not yet saved */
  scr_kvtree* mine = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, dataset), "RANK", scr.rank);
  int held = scr_kvtree_size(scr_filemap_get_files(scr.filemap, dataset, scr.rank));
  for (int list = 0; list < 2; list++) {
    scr_kvtree* entries = scr_kvtree_get(mine, list ? "ATTACHED" : "FILE");
    scr_kvtree* entry = scr_kvtree_get(entries, cache_from);
    if (!entry) continue;
    scr_kvtree* moved = scr_kvtree_copy(entry);
    const char* old_relpath = scr_kvtree_get_val(entry, "RELPATH");
    char* old_store = list && old_relpath ? scr_cache_attached_store(dataset, old_relpath) : NULL;
    if (old_store) unlink(old_store);
    free(old_store);
    /* the copy under the old name on the prefix directory goes, as with a real rename */
    const char* old_orig = scr_kvtree_get_val(entry, "ORIG");
    if (list && old_orig && scr_flush_is_flushed(dataset)) unlink(old_orig);
    /* a file of a flushed dataset: its copy there moves, as the file would on
     * a file system (the old name would show it still), and need not be
     * copied again (scr_flush_dataset_again) */
    char* flushed_copy = !list && scr_flush_is_flushed(dataset) ? scr_flush_destination(entry) : NULL;
    char* new_copy = flushed_copy ? scr_path_join(scr.prefix, relpath) : NULL;
    if (new_copy && strcmp(flushed_copy, new_copy) != 0 && lstat(flushed_copy, &st) == 0)
      engine_move_flushed_copy(dataset, flushed_copy, new_copy);
    free(new_copy);
    free(flushed_copy);
    /* a file whose background flush is not published yet: what the prefix
     * directory holds at the old name is an older version, which the view
     * hid and which the rename takes away, as on a file system (else the
     * publish would leave it showing there) */
    if (!list && old_orig && !alone && scr_flush_async_in_flight(dataset) && strcmp(old_orig, to->path) != 0)
      unlink(old_orig);
    /* the name its dataset's redundancy knows it by, until that is encoded again */
    if (!list && !scr_kvtree_get_val(moved, SCR_FILEMAP_KEY_REDUNDANCY_PATH))
      scr_kvtree_set_kv(moved, SCR_FILEMAP_KEY_REDUNDANCY_PATH, cache_from);
    /* the other ranks list it under its new name from the next meeting point
     * (a directory's rename reaches them as such: scr_peers_rename_directory) */
    if (!list && !alone && old_orig && !scr_engine_writing(dataset))
      scr_peers_note_renamed(dataset, old_orig, to->path);
    scr_kvtree_unset(entries, cache_from);
    scr_kvtree_set_kv(moved, "ORIG", to->path);
    scr_kvtree_set_kv(moved, "RELPATH", relpath);
    scr_kvtree_set(entries, cache_to, moved);
    if (list == 1) {
      /* a renamed pointer file: its prefix-directory copy follows */
      const struct scr_engine_file f = { .dataset = dataset, .attached = 1, .orig = (char*) to->path,
                                         .relpath = (char*) relpath, .cache = cache_to };
      scr_pointers_closed(&f);
    }
  }
  /* a completed dataset's count changes by what the move changed, not to
   * what is held now: a file this rank deleted from it before must still
   * show (engine_taken_apart) */
  int count = scr_kvtree_size(scr_filemap_get_files(scr.filemap, dataset, scr.rank));
  if (!scr_engine_writing(dataset)) count += scr_filemap_get_file_count(scr.filemap, dataset, scr.rank) - held;
  scr_filemap_set_file_count(scr.filemap, dataset, scr.rank, count);
  /* a file of a completed dataset: its redundancy names the old path */
  if (old && !scr_engine_writing(dataset)) scr_engine_update_moved(dataset, cache_from, cache_to, to->path);
  /* and its background copy, if under way, takes it from its new name */
  if (old && scr_flush_async_in_flight(dataset)) scr_flush_async_moved(cache_from, cache_to);
  return scr_cache_save_filemap();
}

/* set while this rank deletes its file because another rank did: the others
 * know already */
static int engine_deleting_for_peer = 0;

/* path left the view: its directory stays, empty, until the application
 * removes it, as on a file system (unless the file system has it anyway) */
void scr_engine_keep_parent(const char* path)
{
  /* another rank deleted the file: what became of its directory on the file
   * system (removed by that rank, as a tree) is what every rank sees */
  if (engine_deleting_for_peer) return;
  char* parent = scr_path_dirname(path);
  struct stat st;
  if (parent && scr_path_is_within(parent, scr.prefix) && strcmp(parent, scr.prefix) != 0 &&
      !scr_view_is_directory(parent) && lstat(parent, &st) != 0)
    scr_view_add_directory(parent);
  free(parent);
}

/* this rank's copy of another rank's file, shown at orig, is gone: 1, or 0
 * when shown is no such copy */
static int engine_drop_shared(const char* shown, const char* orig)
{
  if (!scr_share_drop(shown)) return 0;
  scr_mirror_forget(orig);
  scr_engine_keep_parent(orig);
  return 1;
}

/* a file of complete dataset id was deleted on this rank (its own, or
 * another rank's): no restart restores it or rebuilds the file, even after a
 * crash before the ranks meet again (the mark is in this rank's filemap) */
static void engine_mark_taken_apart(int id)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  long long apart = 0;
  if (!dset || !scr_dataset_is_complete(scr_kvtree_get(dset, "DSETDESC")) ||
      (scr_kvtree_get_int(dset, SCR_FILEMAP_KEY_TAKEN_APART, &apart) == SCR_SUCCESS && apart))
    return;
  scr_kvtree_set_kv_int(dset, SCR_FILEMAP_KEY_TAKEN_APART, 1);
  scr_cache_save_filemap();
}

/* the cached file shown at orig left the filemap (rc and saved_errno: the
 * removal of its cache file): the filemap saved, and the name gone from the
 * mirror and from the prefix directory, its directory kept; 0 when either
 * removal found something, else -1 with saved_errno */
static int engine_name_gone(const char* orig, int rc, int saved_errno)
{
  scr_cache_save_filemap();
  scr_mirror_forget(orig);
  if (unlink(orig) == 0) rc = 0;
  scr_engine_keep_parent(orig);
  if (rc != 0) errno = saved_errno;
  return rc;
}

/* one name (cached, shown at orig) of this rank's file of dataset that has
 * others there (hard links: `other`) goes, as on a file system: the file and
 * its dataset stay whole, its copy on the prefix directory loses that name.
 * Its dataset's redundancy may know the file by this name: until it is
 * encoded again at the next meeting point, a rebuild finds the bytes under
 * the other (REDALIAS). 0, or -1 with errno. */
static int engine_drop_name(const char* cached, const char* other, int dataset, const char* orig)
{
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, dataset, scr.rank);
  scr_kvtree* entry = scr_kvtree_get(files, cached);
  scr_kvtree* kept = scr_kvtree_get(files, other);
  if (!scr_engine_writing(dataset)) {
    const char* encoded = scr_kvtree_get_val(entry, SCR_FILEMAP_KEY_REDUNDANCY_PATH);
    scr_kvtree_add_kv(kept, SCR_FILEMAP_KEY_REDUNDANCY_ALIAS, encoded ? encoded : cached);
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(entry, SCR_FILEMAP_KEY_REDUNDANCY_ALIAS)); e;
         e = scr_kvtree_next(e))
      scr_kvtree_add_kv(kept, SCR_FILEMAP_KEY_REDUNDANCY_ALIAS, scr_kvtree_elem_key(e));
    scr_filemap_set_file_count(scr.filemap, dataset, scr.rank,
                               scr_filemap_get_file_count(scr.filemap, dataset, scr.rank) - 1);
    scr_engine_update_names(dataset, 1);
    if (!engine_deleting_for_peer) scr_peers_note_deleted(dataset, orig);
    /* its rank2file map names a file the prefix directory loses now */
    if (scr.rank == 0 && scr_flush_is_flushed(dataset)) scr_engine_update_prefix_moving(dataset);
  }
  if (scr_flush_async_in_flight(dataset)) scr_flush_async_dropped(cached);
  int rc = unlink(cached);
  int saved_errno = errno;
  scr_engine_prune_cache_dirs(cached);
  scr_kvtree_unset(files, cached);
  /* the last name left is a file like any other */
  if (!scr_engine_link_other(dataset, other)) scr_kvtree_unset(kept, SCR_FILEMAP_KEY_LINK);
  rc = engine_name_gone(orig, rc, saved_errno);
  saved_errno = errno;
  scr_fault_point("unlink"); /* a name gone, the redundancy still knows the file by it */
  errno = saved_errno;
  return rc;
}

/* this rank's cached file of dataset, shown at orig, leaves the cache and the
 * dataset, and its copy on the prefix directory goes too: 0, or -1 with
 * errno when neither existed. The dataset keeps its count of files, so a
 * complete one that lost a file no longer checks as complete here, and no
 * restart picks what the application took apart. A file with another name
 * in the dataset loses only this one (engine_drop_name). */
static int engine_drop_cached(const char* cached, int dataset, const char* orig)
{
  scr_kvtree* mine = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, dataset), "RANK", scr.rank);
  const char* other = scr_kvtree_get(scr_kvtree_get(mine, "FILE"), cached) ? scr_engine_link_other(dataset, cached)
                                                                           : NULL;
  if (other) return engine_drop_name(cached, other, dataset, orig);
  if (scr_kvtree_get(scr_kvtree_get(mine, "FILE"), cached)) {
    engine_mark_taken_apart(dataset);
    if (!engine_deleting_for_peer && !scr_engine_writing(dataset)) scr_peers_note_deleted(dataset, orig);
  }
  /* a file of a flushed checkpoint deleted: the copy on the prefix directory
   * goes too (below), so the index must stop offering it for a restart; rank
   * 0 says so (a deletion by another rank alone leaves the entry: the fetch
   * then finds the file missing and takes an older checkpoint) */
  if (scr.rank == 0 && scr_kvtree_get(scr_kvtree_get(mine, "FILE"), cached) && scr_flush_is_flushed(dataset))
    scr_engine_index_incomplete(dataset);
  /* an attached file has a copy in .scr/attached.<id>/ too, which every rank
   * and a restart would show at orig in its place */
  const char* attached = scr_kvtree_get_val(scr_kvtree_get(scr_kvtree_get(mine, "ATTACHED"), cached), "RELPATH");
  char* store = attached ? scr_cache_attached_store(dataset, attached) : NULL;
  if (scr_flush_async_in_flight(dataset)) scr_flush_async_dropped(cached);
  int rc = unlink(cached);
  int saved_errno = errno;
  scr_engine_prune_cache_dirs(cached);
  if (store && unlink(store) != 0 && errno != ENOENT)
    scr_warn("cannot remove %s, the copy of deleted %s: other ranks and a restart still see it (%s)", store, orig,
             strerror(errno));
  free(store);
  scr_kvtree_unset(scr_kvtree_get(mine, "FILE"), cached);
  scr_kvtree_unset(scr_kvtree_get(mine, "ATTACHED"), cached);
  return engine_name_gone(orig, rc, saved_errno);
}

/* orig's newest version left the view (unlink, a rename): the older ones
 * that datasets in cache still hold there go too, as a file system has one
 * file per name (a name every checkpoint writes again, the version of one
 * that completed before the rewrite still open). Each older complete
 * checkpoint that loses its file so is no longer restored, as after any
 * deletion (engine_drop_cached) */
static void engine_drop_older(const char* orig)
{
  int dataset = -1;
  char* last = NULL;
  char* shown;
  while ((shown = scr_view_find(orig, &dataset)) != NULL) {
    /* one that cannot go ends the sweep, which must end */
    if (last && strcmp(last, shown) == 0) {
      free(shown);
      break;
    }
    free(last);
    last = shown;
    if (!engine_drop_shared(shown, orig)) engine_drop_cached(shown, dataset, orig);
  }
  free(last);
}

/* a cached file (this rank's, or its copy of another rank's) renamed to a
 * name no rule matches leaves the cache for the file system, where rename
 * would have put it: copied under a temporary name beside the target and
 * renamed over it, so the target is replaced whole or not at all, and only
 * then taken from the cache. The target's directory must exist, on the file
 * system or in the view (then it is made); errors are rename's. */
int scr_engine_rename_out(const char* cached, int dataset, int shared, const scr_preload_target* from,
                          const scr_preload_target* to)
{
  char* parent = scr_path_dirname(to->path);
  struct stat st, source;
  int error = 0;
  if (!parent) {
    error = ENOMEM;
  } else if (stat(parent, &st) == 0) {
    if (!S_ISDIR(st.st_mode)) error = ENOTDIR;
    else if (faccessat(AT_FDCWD, parent, W_OK | X_OK, AT_EACCESS) != 0) error = errno;
  } else {
    error = errno;
    if (error == ENOENT && scr_view_is_directory(parent)) error = 0;
  }
  /* rename replaces a symbolic link, even one to a directory */
  if (!error && lstat(to->path, &st) == 0 && S_ISDIR(st.st_mode)) error = EISDIR;
  if (!error && stat(cached, &source) != 0) error = errno;
  if (!error && scr_io_copy_file(cached, to->path, 0777, NULL, NULL) != SCR_SUCCESS) error = EIO;
  /* rename keeps every mode bit, the umask notwithstanding */
  if (!error) chmod(to->path, source.st_mode & 07777);
  free(parent);
  if (error) {
    errno = error;
    return -1;
  }
  /* renamed: the old name is gone, whatever remains to tidy */
  if (shared) {
    engine_drop_shared(cached, from->path);
  } else {
    engine_drop_cached(cached, dataset, from->path);
  }
  engine_drop_older(from->path);
  return 0;
}

/* ---- checkpoints the program deleted files of. Each rank deletes its own
 * files, at any time and without the others; a complete dataset that lost
 * one keeps its count of files (engine_drop_cached), which is what this
 * rank knows. Only at MPI_Finalize, where every rank is, do the ranks put
 * that together, before the newest checkpoint is flushed. */

/* 1 when dataset id is a complete checkpoint this rank took apart, or one
 * that holds no file on any rank */
static int engine_taken_apart(int id)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  uint64_t files = 0;
  if (!dset) return 0;
  if (scr_kvtree_get_uint64(scr_kvtree_get(dset, "DSETDESC"), "FILES", &files) == SCR_SUCCESS && files == 0) return 1;
  return scr_kvtree_size(scr_filemap_get_files(scr.filemap, id, scr.rank)) !=
         scr_filemap_get_file_count(scr.filemap, id, scr.rank);
}

/* the newest complete checkpoint of this rank's filemap below `below` (-1:
 * no bound), -1 for none */
static int engine_newest_checkpoint_below(int below)
{
  int newest = -1;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); e; e = scr_kvtree_next(e)) {
    scr_kvtree* desc = scr_kvtree_get(scr_kvtree_elem_tree(e), "DSETDESC");
    int id = (int) scr_kvtree_elem_key_int(e);
    if ((below < 0 || id < below) && id > newest && scr_dataset_is_checkpoint(desc) && scr_dataset_is_complete(desc))
      newest = id;
  }
  return newest;
}

/* rank 0: index entry id is not whole, nor the checkpoint to restart from */
static int engine_index_unoffer(scr_kvtree* index, void* arg)
{
  int id = *(int*) arg;
  const char* name = scr_index_file_get_name(index, id);
  const char* current = scr_index_file_get_current(index);
  if (name && current && strcmp(name, current) == 0) scr_index_file_unset_current(index);
  return scr_index_file_mark_incomplete(index, id);
}

void scr_engine_deletions_settle(void)
{
  for (int below = -1;;) {
    int mine = engine_newest_checkpoint_below(below), latest = -1;
    MPI_Allreduce(&mine, &latest, 1, MPI_INT, MPI_MAX, scr.comm_world);
    if (latest < 0) return;
    below = latest;
    /* each cached checkpoint (a few: SCR_CACHE_SIZE), so that an older one
     * that lost files does not stay offered once the newer ones are gone */
    if (scr_mpi_all_true(!engine_taken_apart(latest), scr.comm_world)) continue;
    /* not complete any more, on every rank alike: SCR_Finalize flushes the
     * newest checkpoint that is, and no restart takes this one (nor rebuilds
     * the deleted files from its redundancy) */
    scr_kvtree* desc = scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, latest), "DSETDESC");
    if (desc) {
      scr_kvtree_set_kv_int(desc, "COMPLETE", 0);
      scr_cache_save_filemap();
    }
    int flushed = scr_flush_agree_flushed(latest);
    if (scr.rank == 0) {
      if (flushed && scr_index_file_update(scr.prefix, engine_index_unoffer, &latest) != SCR_SUCCESS)
        scr_warn("cannot mark dataset %d incomplete in the index of %s", latest, scr.prefix);
      scr_info("preload: checkpoint %d lost files the program deleted: it is not flushed or restored as a whole "
               "checkpoint", latest);
    }
  }
}

static int engine_rename_file(const scr_preload_target* from, const scr_preload_target* to, unsigned int flags,
                              int* handled);

/* after a call the engine handled: the files it moved or deleted (a
 * directory's at once) told to the background copy in one rewrite of the
 * node's transfer file; rc and errno as the call left them */
int scr_engine_tell_background_copy(int rc, const int* handled)
{
  if (*handled == SCR_PRELOAD_HANDLED) {
    int saved_errno = errno;
    pthread_mutex_lock(&scr_engine_lock);
    scr_flush_async_tell_moves();
    pthread_mutex_unlock(&scr_engine_lock);
    errno = saved_errno;
  }
  return rc;
}

int scr_engine_rename_file(const scr_preload_target* from, const scr_preload_target* to, unsigned int flags,
                           int* handled)
{
  return scr_engine_tell_background_copy(engine_rename_file(from, to, flags, handled), handled);
}

static int engine_rename_file(const scr_preload_target* from, const scr_preload_target* to, unsigned int flags,
                              int* handled)
{
  if (!scr.initialized || from->directory || to->directory || !to->path || flags != 0) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int rc = -1, dataset = -1;
  char* cached = from->path ? scr_view_find(from->path, &dataset) : NULL;
  char* relpath = scr_path_relative_to(scr.prefix, to->path);
  const scr_preload_rule* rule = scr_engine_rule(to);
  /* a shown file may be in this rank's cache, a copy of a file another rank
   * wrote, or the prefix-directory copy of a file attached by another rank or
   * run (then it is copied, not moved) */
  int shared = cached && scr_share_holds(cached);
  int in_cache = cached && !shared && scr_path_is_within(cached, scr.cache_dir);
  const char* source = cached ? cached : from->path;
  int listing = !cached && from->path ? scr_engine_index_listing(from) : -1;
  int target_dataset = -1;
  struct stat st;
  char* target = in_cache ? scr_view_find(to->path, &target_dataset) : NULL;
  if (target && target_dataset == dataset && scr_engine_link_same(dataset, cached, target)) {
    /* two names of one file (hard links): rename(2) does nothing */
    *handled = SCR_PRELOAD_HANDLED;
    rc = 0;
  } else if (listing >= 0) {
    /* a file of a flushed checkpoint the cache let go: renamed where it is,
     * as on a file system, not made a checkpoint file anew, which would make
     * that old step the newest checkpoint; the index stops offering it */
    *handled = SCR_PRELOAD_HANDLED;
    rc = rename(from->path, to->path);
    int saved_errno = errno;
    if (rc == 0) scr_engine_index_incomplete(listing);
    errno = saved_errno;
  } else if (in_cache && rule && relpath) {
    /* write-temp-then-rename inside the cache */
    *handled = SCR_PRELOAD_HANDLED;
    rc = scr_engine_rename_cached(cached, dataset, to, relpath, 0) == SCR_SUCCESS ? 0 : -1;
    if (rc != 0) errno = EIO;
    else if (strcmp(from->path, to->path) != 0) engine_drop_older(from->path);
  } else if ((in_cache || shared) && !rule) {
    /* no longer a checkpoint file: out of the cache */
    *handled = SCR_PRELOAD_HANDLED;
    rc = scr_engine_rename_out(cached, dataset, shared, from, to);
  } else if (rule && relpath && source && lstat(source, &st) == 0 && S_ISREG(st.st_mode)) {
    /* a file written on the prefix directory, or a copy of another rank's,
     * becomes a checkpoint file: copy it into the cache under its new name,
     * then remove the original (a symbolic link or a directory at a rule's
     * name is the file system's, and moves there) */
    char cache[SCR_MAX_FILENAME];
    int attached = 0;
    *handled = SCR_PRELOAD_HANDLED;
    if (scr_engine_route_new(to, rule, relpath, cache, sizeof(cache), &attached) == SCR_SUCCESS &&
        scr_io_copy_file(source, cache, 0700, NULL, NULL) == SCR_SUCCESS) {
      rc = shared ? (engine_drop_shared(source, from->path) ? 0 : -1) : unlink(source);
      struct scr_engine_file f = { .dataset = attached ? scr_engine_done_id() : scr.output_id,
                                   .attached = attached, .orig = (char*) to->path, .relpath = relpath,
                                   .cache = cache };
      /* written and closed under its temporary name: complete as it arrives
       * (otherwise its dataset would wait for the next one to begin) */
      if (attached) scr_pointers_closed(&f);
      else scr_engine_file_joined();
    } else {
      errno = EIO;
    }
  }
  free(target);
  free(relpath);
  free(cached);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

/* rmdir of a rule directory: one that exists only in the view (made by
 * mkdir, or emptied by removals) goes when nothing shown is left in it; a
 * directory that shows cached files is not empty, whatever the file system
 * holds, and a shown file is not a directory; the file system decides the
 * rest (the view is changed only when the answer is the view's). One made
 * by mkdir that the file system has now too (a flush made it) leaves the
 * view when it leaves the file system: else its parent would stay not empty */
static int engine_rmdir(const scr_preload_target* t, int* handled)
{
  if (!scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int rc = -1, dataset = -1;
  struct stat st;
  char* file = scr_view_find(t->path, &dataset);
  /* also at a name a rule matches as a file (a pattern ending in ** matches
   * ckpt/d as it matches ckpt/d/x): the directory there may hold cached
   * files, which the file system's rmdir would not see */
  int state = file ? SCR_VIEW_DIRECTORY_UNKNOWN : scr_view_remove_directory(t->path, 0);
  if (file) {
    *handled = SCR_PRELOAD_HANDLED;
    errno = ENOTDIR;
  } else if (state == SCR_VIEW_DIRECTORY_NOT_EMPTY) {
    *handled = SCR_PRELOAD_HANDLED;
    errno = ENOTEMPTY;
  } else if (state == SCR_VIEW_DIRECTORY_REMOVED) {
    *handled = SCR_PRELOAD_HANDLED;
    rc = lstat(t->path, &st) != 0 ? 0 : rmdir(t->path);
    if (rc == 0) {
      int saved_errno = errno;
      scr_view_remove_directory(t->path, 1);
      scr_mirror_forget(t->path);
      scr_engine_keep_parent(t->path);
      errno = saved_errno;
    }
  }
  free(file);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

static int engine_unlink(const scr_preload_target* t, int at_flags, int* handled);

int scr_engine_unlink(const scr_preload_target* t, int at_flags, int* handled)
{
  return scr_engine_tell_background_copy(engine_unlink(t, at_flags, handled), handled);
}

static int engine_unlink(const scr_preload_target* t, int at_flags, int* handled)
{
  if (!scr.initialized) return -1;
  if (at_flags & AT_REMOVEDIR) return engine_rmdir(t, handled);
  if (t->directory) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int rc = -1, dataset = -1;
  struct stat st;
  char* cached = scr_view_find(t->path, &dataset);
  scr_kvtree* mine = cached ? scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, dataset), "RANK",
                                                    scr.rank) : NULL;
  if (cached && engine_drop_shared(cached, t->path)) {
    /* another rank's file, shown here: gone for this rank, and from the
     * prefix directory if it was flushed (the writer's cached file is the
     * writer's to delete) */
    *handled = SCR_PRELOAD_HANDLED;
    rc = 0;
    unlink(t->path);
    engine_drop_older(t->path);
  } else if (mine) {
    /* the application drops an old checkpoint file: so does the cache, and
     * the copy on the prefix directory goes as the application asked */
    *handled = SCR_PRELOAD_HANDLED;
    rc = engine_drop_cached(cached, dataset, t->path);
    int saved_errno = errno;
    engine_drop_older(t->path);
    errno = saved_errno;
  } else if (!cached && scr_peers_unlink(t->path, &dataset)) {
    /* another rank's file of a completed dataset: gone from this rank's
     * view now, from its owner's cache at the next meeting point; its
     * flushed copy goes as the application asked */
    *handled = SCR_PRELOAD_HANDLED;
    rc = 0;
    engine_mark_taken_apart(dataset);
    if (scr.rank == 0 && scr_flush_is_flushed(dataset)) scr_engine_index_incomplete(dataset);
    unlink(t->path);
    scr_engine_keep_parent(t->path);
  } else if (!cached && scr.rank == 0 && lstat(t->path, &st) == 0 && S_ISREG(st.st_mode)) {
    /* a flushed checkpoint that left the cache loses a file where it was
     * flushed: the index stops offering it (the real unlink follows) */
    scr_engine_index_file_deleted(t);
  }
  free(cached);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

void scr_engine_delete_own(int id, const char* orig)
{
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, id, scr.rank);
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
    const char* name = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "ORIG");
    if (!name || strcmp(name, orig) != 0) continue;
    char* cached = strdup(scr_kvtree_elem_key(e));
    char* path = strdup(orig);
    if (cached && path) {
      engine_deleting_for_peer = 1;
      scr_dbg(1, "preload: %s of dataset %d was deleted by another rank", path, id);
      engine_drop_cached(cached, id, path);
      engine_deleting_for_peer = 0;
    }
    free(cached);
    free(path);
    return;
  }
}

int scr_engine_truncate(const scr_preload_target* t, off64_t length, int* handled)
{
  if (!scr.initialized || t->directory) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int rc = -1, dataset = -1;
  char* cached = scr_view_find(t->path, &dataset);
  if (cached) {
    *handled = SCR_PRELOAD_HANDLED;
    /* the file being written is changed as it is; a completed one in place */
    rc = scr_engine_writing(dataset) ? truncate(cached, (off_t) length)
                                     : scr_engine_update_truncate(dataset, t->path, cached, length);
  }
  free(cached);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

int scr_engine_mkdir(const scr_preload_target* t, mode_t mode, int* handled)
{
  (void) mode;
  /* A rule directory is made on the file system, where every rank sees it
   * at once and it can hold anything a directory holds; only a name the view
   * shows without the file system (a restored checkpoint's directory that
   * is gone there) is answered here, as a directory that exists. */
  if (!scr.initialized || !scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  struct stat st;
  int rc = -1, dataset = -1;
  char* shown = t->directory ? NULL : scr_view_find(t->path, &dataset);
  if (shown || (t->directory && lstat(t->path, &st) != 0 && scr_view_is_directory(t->path))) {
    /* the name of a cached file, or a directory only the view has */
    *handled = SCR_PRELOAD_HANDLED;
    errno = EEXIST;
  }
  free(shown);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

/* a call that is not routed is about to use a rule directory on the file
 * system: one that exists only in the view is made there now, with the
 * permissions mkdir would give it */
int scr_engine_materialize(const scr_preload_target* t, int* handled)
{
  if (!scr.initialized || !t->directory || !scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  struct stat st;
  int rc = -1;
  if (scr_view_is_directory(t->path)) {
    /* there already when another rank of this node made it since the
     * caller's call failed: the call is worth making again all the same */
    *handled = SCR_PRELOAD_HANDLED;
    rc = lstat(t->path, &st) == 0 || scr_io_mkdir_p(t->path, 0777) == SCR_SUCCESS ? 0 : -1;
    if (rc == 0) scr_dbg(1, "preload: %s made %s on the file system (it was virtual)", t->call, t->path);
    else errno = EIO;
  }
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}
