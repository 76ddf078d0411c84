/* scr_preload_engine_names.c - the engine's answers to calls that change names:
 * rename, unlink, rmdir, truncate, mkdir, and making a virtual directory real. */
#include "config.h"
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
#include "scr_globals.h"
#include "scr_cache.h"
#include "scr_flush.h"
#include "scr_preload_engine_impl.h"


/* rename within the cache: the entry of this rank's filemap follows the file */
static int engine_rename_cached(const char* cache_from, int dataset, const scr_preload_target* to,
                                const char* relpath)
{
  char cache_to[SCR_MAX_FILENAME];
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, dataset, scr.rank);
  scr_kvtree* old = files ? scr_kvtree_get(files, cache_from) : NULL;
  int rc;
  if (old && scr_engine_writing(dataset)) {
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
  if (rc != SCR_SUCCESS || rename(cache_from, cache_to) != 0) return SCR_FAILURE;
  scr_kvtree* mine = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, dataset), "RANK", scr.rank);
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
    scr_kvtree_unset(entries, cache_from);
    scr_kvtree_set_kv(moved, "ORIG", to->path);
    scr_kvtree_set_kv(moved, "RELPATH", relpath);
    scr_kvtree_set(entries, cache_to, moved);
    if (list == 1) {
      /* a renamed pointer file: its prefix-directory copy follows */
      const struct scr_engine_file f = { .dataset = dataset, .attached = 1, .orig = (char*) to->path,
                                         .relpath = (char*) relpath, .cache = cache_to };
      scr_engine_attach_done(&f);
    }
  }
  scr_filemap_set_file_count(scr.filemap, dataset, scr.rank,
                             scr_kvtree_size(scr_filemap_get_files(scr.filemap, dataset, scr.rank)));
  return scr_cache_save_filemap();
}

/* path left the view: its directory stays, empty, until the application
 * removes it, as on a file system (unless the file system has it anyway) */
static void engine_keep_parent(const char* path)
{
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
  engine_keep_parent(orig);
  return 1;
}

/* this rank's cached file of dataset, shown at orig, leaves the cache and the
 * dataset, and its copy on the prefix directory goes too: 0, or -1 with
 * errno when neither existed. The dataset keeps its count of files, so a
 * complete one that lost a file no longer checks as complete here, and no
 * restart picks what the application took apart. */
static int engine_drop_cached(const char* cached, int dataset, const char* orig)
{
  scr_kvtree* mine = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, dataset), "RANK", scr.rank);
  int rc = unlink(cached);
  int saved_errno = errno;
  scr_kvtree_unset(scr_kvtree_get(mine, "FILE"), cached);
  scr_kvtree_unset(scr_kvtree_get(mine, "ATTACHED"), cached);
  scr_cache_save_filemap();
  scr_mirror_forget(orig);
  if (unlink(orig) == 0) rc = 0;
  engine_keep_parent(orig);
  if (rc != 0) errno = saved_errno;
  return rc;
}

/* a cached file (this rank's, or its copy of another rank's) renamed to a
 * name no rule matches leaves the cache for the file system, where rename
 * would have put it: copied under a temporary name beside the target and
 * renamed over it, so the target is replaced whole or not at all, and only
 * then taken from the cache. The target's directory must exist, on the file
 * system or in the view (then it is made); errors are rename's. */
static int engine_rename_out(const char* cached, int dataset, int shared, const scr_preload_target* from,
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
  return 0;
}

int scr_engine_rename(const scr_preload_target* from, const scr_preload_target* to, unsigned int flags,
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
  if (in_cache && rule && relpath) {
    /* write-temp-then-rename inside the cache */
    *handled = SCR_PRELOAD_HANDLED;
    rc = engine_rename_cached(cached, dataset, to, relpath) == SCR_SUCCESS ? 0 : -1;
    if (rc != 0) errno = EIO;
  } else if ((in_cache || shared) && !rule) {
    /* no longer a checkpoint file: out of the cache */
    *handled = SCR_PRELOAD_HANDLED;
    rc = engine_rename_out(cached, dataset, shared, from, to);
  } else if (rule && relpath && source && access(source, F_OK) == 0) {
    /* a file written on the prefix directory, or a copy of another rank's,
     * becomes a checkpoint file: copy it into the cache under its new name,
     * then remove the original */
    char cache[SCR_MAX_FILENAME];
    int attached = 0;
    *handled = SCR_PRELOAD_HANDLED;
    if (scr_engine_route_new(to, rule, relpath, cache, sizeof(cache), &attached) == SCR_SUCCESS &&
        scr_io_copy_file(source, cache, 0700, NULL, NULL) == SCR_SUCCESS) {
      rc = shared ? (engine_drop_shared(source, from->path) ? 0 : -1) : unlink(source);
      struct scr_engine_file f = { .dataset = attached ? scr_engine_done_id() : scr.output_id,
                                   .attached = attached, .orig = (char*) to->path, .relpath = relpath,
                                   .cache = cache };
      if (attached) scr_engine_attach_done(&f);
    } else {
      errno = EIO;
    }
  }
  free(relpath);
  free(cached);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

/* rmdir of a rule directory: one that exists only in the view (made by
 * mkdir, or emptied by removals) goes when nothing shown is left in it; a
 * directory that shows cached files is not empty, whatever the file system
 * holds, and a shown file is not a directory; the file system decides the
 * rest (the view is changed only when the answer is the view's) */
static int engine_rmdir(const scr_preload_target* t, int* handled)
{
  if (!scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int rc = -1, dataset = -1;
  struct stat st;
  char* file = scr_view_find(t->path, &dataset);
  int state = file || !t->directory ? SCR_VIEW_DIRECTORY_UNKNOWN : scr_view_remove_directory(t->path, 0);
  if (file) {
    *handled = SCR_PRELOAD_HANDLED;
    errno = ENOTDIR;
  } else if (state == SCR_VIEW_DIRECTORY_NOT_EMPTY) {
    *handled = SCR_PRELOAD_HANDLED;
    errno = ENOTEMPTY;
  } else if (state == SCR_VIEW_DIRECTORY_REMOVED && lstat(t->path, &st) != 0) {
    scr_view_remove_directory(t->path, 1);
    scr_mirror_forget(t->path);
    engine_keep_parent(t->path);
    *handled = SCR_PRELOAD_HANDLED;
    rc = 0;
  }
  free(file);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

int scr_engine_unlink(const scr_preload_target* t, int at_flags, int* handled)
{
  if (!scr.initialized) return -1;
  if (at_flags & AT_REMOVEDIR) return engine_rmdir(t, handled);
  if (t->directory) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int rc = -1, dataset = -1;
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
  } else if (mine) {
    /* the application drops an old checkpoint file: so does the cache, and
     * the copy on the prefix directory goes as the application asked */
    *handled = SCR_PRELOAD_HANDLED;
    rc = engine_drop_cached(cached, dataset, t->path);
  }
  free(cached);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
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

/* a rule directory exists virtually until the dataset is flushed */
int scr_engine_mkdir(const scr_preload_target* t, mode_t mode, int* handled)
{
  (void) mode;
  /* outside the prefix directory nothing is routed, so nothing is virtual */
  if (!scr.initialized || !t->directory || !scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  struct stat st;
  *handled = SCR_PRELOAD_HANDLED;
  int rc = 0;
  if (scr_view_is_directory(t->path) || lstat(t->path, &st) == 0) {
    errno = EEXIST;
    rc = -1;
  } else {
    char* parent = scr_path_dirname(t->path);
    if (parent && !scr_view_is_directory(parent) && stat(parent, &st) != 0) {
      errno = ENOENT;
      rc = -1;
    } else {
      scr_view_add_directory(t->path);
    }
    free(parent);
  }
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
  if (lstat(t->path, &st) != 0 && scr_view_is_directory(t->path)) {
    *handled = SCR_PRELOAD_HANDLED;
    rc = scr_io_mkdir_p(t->path, 0777) == SCR_SUCCESS ? 0 : -1;
    if (rc == 0) scr_dbg(1, "preload: %s made %s on the file system (it was virtual)", t->call, t->path);
    else errno = EIO;
  }
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}
