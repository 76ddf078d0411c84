/* scr_preload_child_view.c - the view a rank's child process gets (system, popen,
 * posix_spawn, fork): the rank's cached files, read from its filemap, read-only; no MPI. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_filemap_journal.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_preload_child.h"
#include "scr_preload_engine.h"
#include "scr_preload_engine_impl.h"

/* The view's own code (scr_preload_view.c) answers here as in the rank,
 * from the engine's globals, which this table fills from disk instead of
 * from SCR_Init: scr.filemap is the rank's filemap file, read again
 * whenever the rank has replaced it (it writes a new file and renames it
 * into place, so a reader never sees half of one), and scr.in_output marks
 * the rank's newest dataset while it is not complete, so that a program
 * that writes a checkpoint and runs gzip on it before its last file closes
 * finds the file. What the child may do is read: a change to a file the
 * view shows would be a change the rank's dataset does not know of (its
 * size, its CRC, its redundancy), so it fails with EROFS, as on a file
 * system mounted read-only; a file the view does not show is the file
 * system's, written there as without the layer. Other ranks' files, which
 * the rank learns of through collectives and keeps in memory, are read
 * from the list its node's first rank writes beside the filemaps
 * (scr_preload_peers.c); the copies of files other ranks wrote that the
 * rank keeps since its restart from their directory; the copies of
 * attached files on the prefix directory the view finds itself. */

/* This module's own: it links no libscr (which needs MPI), only the view's
 * MPI-free parts and the MPI-free base, and keeps the globals they use */
struct scr_state scr = { .restart_id = -1, .output_id = -1 };
pthread_mutex_t scr_engine_lock = PTHREAD_MUTEX_INITIALIZER;

/* the files as last read: read again when any of these changed */
struct child_file {
  struct stat seen;
  int read;
};
static struct child_file child_filemap, child_journal, child_names;
static char* child_journal_file; /* beside the filemap */
/* the process whose view the globals hold: in any other (the copy a fork
 * made of a process that showed the view), what they hold is abandoned,
 * not freed */
static pid_t child_owner = 0;
static int child_owns = 0;
static int child_restored = -1;

static int child_same_file(const struct stat* a, const struct stat* b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
         a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* 1 when path is not as f last saw it (a missing file is all zeroes), with
 * *now what it is. Both files are written anew and renamed into place, so a
 * reader never sees half of one; one replaced between this stat and the
 * read is read newer than its stat says, and once more at the next call,
 * which is all that costs */
static int child_changed(const char* path, const struct child_file* f, struct stat* now)
{
  if (!path || stat(path, now) != 0) memset(now, 0, sizeof(*now));
  return !f->read || !child_same_file(now, &f->seen);
}

/* the rank's filemap and its node's names of other ranks' files, read again
 * if they changed since (lock held). Two stats per hook call: only calls on
 * paths the rules match make them */
static void child_refresh(void)
{
  struct stat st, journal_st;
  /* the files of the dataset in progress are in the journal until its
   * completion writes the filemap (scr_filemap_journal.h) */
  int map_changed = child_changed(scr.filemap_file, &child_filemap, &st);
  if (child_changed(child_journal_file, &child_journal, &journal_st) || map_changed) {
    scr_kvtree* map = scr_kvtree_new();
    if (map && st.st_ino && scr_kvtree_read_file(scr.filemap_file, map) != SCR_SUCCESS) {
      scr_dbg(1, "preload: cannot read rank %d's filemap %s: its files are shown as they were", scr.rank,
              scr.filemap_file);
      scr_kvtree_delete(&map);
    }
    if (map) {
      scr_filemap_journal_merge(child_journal_file, scr.rank, map);
      scr_kvtree_delete(&scr.filemap);
      scr.filemap = map;
      child_filemap.seen = st;
      child_filemap.read = 1;
      child_journal.seen = journal_st;
      child_journal.read = 1;
      /* the rank's dataset in progress: its newest, until it is complete
       * (one that failed is deleted right after it is marked so) */
      int newest = scr_filemap_latest_dataset(map);
      scr_kvtree* dset = newest >= 0 ? scr_filemap_get_dataset(map, newest) : NULL;
      scr.in_output = dset && !scr_dataset_is_complete(scr_kvtree_get(dset, "DSETDESC"));
      scr.output_id = scr.in_output ? newest : -1;
      /* the rank's copies of other ranks' files stay for the life of the
       * rank, unless the program deletes one: looked for with the filemap */
      scr_share_load(child_restored);
    }
  }
  char* names = scr_path_join(scr.cntl_dir, SCR_PEERS_PUBLISHED);
  if (child_changed(names, &child_names, &st)) {
    scr_peers_load();
    child_names.seen = st;
    child_names.read = 1;
  }
  free(names);
}

static void child_fresh(void)
{
  pthread_mutex_lock(&scr_engine_lock);
  child_refresh();
  pthread_mutex_unlock(&scr_engine_lock);
}

/* *field = a copy of value; the old one freed when it is this view's */
static int child_set(char** field, char* value)
{
  if (child_owns) free(*field);
  *field = value;
  return value != NULL;
}

static void child_forget(void)
{
  child_set(&scr.prefix, NULL);
  child_set(&scr.prefix_scr, NULL);
  child_set(&scr.cntl_dir, NULL);
  child_set(&scr.cache_dir, NULL);
  child_set(&scr.filemap_file, NULL);
  child_set(&child_journal_file, NULL);
  if (child_owns) {
    scr_kvtree_delete(&scr.filemap);
    scr_share_load(-1);
    scr_peers_forget();
  }
  scr.filemap = NULL;
  scr.initialized = 0;
  scr.in_output = 0;
  scr.output_id = -1;
  child_filemap.read = child_journal.read = child_names.read = 0;
}

static int child_init(void)
{
  const struct scr_preload_parent* parent = scr_preload_child_parent();
  if (!parent) return SCR_FAILURE;
  /* A copy fork made of a process that showed the view may hold the lock,
   * for a thread that does not exist here, and lists that thread was
   * changing: all of it is left behind, and the view starts from disk */
  pthread_mutex_init(&scr_engine_lock, NULL);
  child_owns = child_owner == getpid();
  if (!child_owns) {
    scr_view_forget_inherited();
    scr_mirror_forget_inherited();
    scr_peers_forget_inherited();
    scr_share_forget_inherited();
    scr.filemap = NULL;
  }
  child_forget();
  child_owner = getpid();
  child_owns = 1;
  scr.rank = parent->rank;
  child_restored = parent->restored;
  int ok = child_set(&scr.prefix, strdup(parent->prefix)) &&
           child_set(&scr.prefix_scr, scr_path_join(parent->prefix, ".scr")) &&
           child_set(&scr.cntl_dir, strdup(parent->cntl_dir)) && child_set(&scr.cache_dir, strdup(parent->cache_dir)) &&
           child_set(&scr.filemap_file, scr_filemap_path(parent->cntl_dir, parent->rank)) &&
           child_set(&child_journal_file, scr_filemap_journal_path(parent->cntl_dir, parent->rank)) &&
           (scr.filemap = scr_kvtree_new()) != NULL;
  if (!ok) {
    child_forget();
    return SCR_ERR_NOMEM;
  }
  scr.initialized = 1;
  scr.enabled = 1;
  scr_log_rank = parent->rank;
  scr_log_debug_level = parent->debug;
  child_fresh();
  scr_dbg(1, "preload: process %ld shows rank %d's checkpoint files (process %ld), read-only", (long) getpid(),
          parent->rank, (long) parent->pid);
  return SCR_SUCCESS;
}

/* before this process's own MPI_Init makes it a rank (of a job of its own,
 * in the engine module): the view is forgotten */
static void child_finalize(void)
{
  pthread_mutex_lock(&scr_engine_lock);
  child_forget();
  pthread_mutex_unlock(&scr_engine_lock);
}

/* no MPI here: a barrier is the program's own */
static int child_barrier(MPI_Comm comm)
{
  (void) comm;
  return 0;
}

/* the file the view shows at path (malloc'd), NULL for none (lock held) */
static char* child_shown(const char* path)
{
  int dataset = -1;
  return path ? scr_view_find(path, &dataset) : NULL;
}

static int child_refuse(int error, int* handled)
{
  *handled = SCR_PRELOAD_HANDLED;
  errno = error;
  return -1;
}

/* read a shown file: its cache file; write it: EROFS; a file the view does
 * not show (a new one) is the file system's, and so is another rank's
 * opened for reading (its bytes are on another node: ENOENT, as in the rank) */
static int child_open(const scr_preload_target* t, int flags, mode_t mode, char* redirect, void** file,
                      int* handled)
{
  (void) mode;
  (void) file;
  /* a directory only the view has, opened as a descriptor: the rank makes a
   * mirror of it, which is the rank's; here the file system answers */
  if (t->directory) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  child_refresh();
  char* shown = child_shown(t->path);
  int rc = -1;
  if (!shown && !scr_peers_shows(t->path)) {
    /* passed */
  } else if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
    rc = child_refuse(EEXIST, handled);
  } else if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) {
    rc = child_refuse(EROFS, handled);
  } else if (shown) {
    snprintf(redirect, PATH_MAX, "%s", shown);
    *handled = SCR_PRELOAD_REDIRECT;
  }
  free(shown);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

static int child_close(int fd, void* file, int rc, int* handled)
{
  (void) fd;
  (void) file;
  (void) handled;
  return rc;
}

/* 1 when path is a file the view shows (another rank's too), or a
 * directory it shows files in (lock held) */
static int child_holds(const char* path)
{
  char* shown = child_shown(path);
  int holds = shown || (path && (scr_peers_shows(path) || scr_view_is_directory(path)));
  free(shown);
  return holds;
}

/* a rename that would move or replace what the view shows: EROFS */
static int child_rename(const scr_preload_target* from, const scr_preload_target* to, unsigned int flags,
                        int* handled)
{
  (void) flags;
  pthread_mutex_lock(&scr_engine_lock);
  child_refresh();
  int rc = child_holds(from->path) || child_holds(to->path) ? child_refuse(EROFS, handled) : -1;
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

/* unlink of a shown file: EROFS; rmdir of a directory that shows files:
 * ENOTEMPTY, of a shown file: ENOTDIR, as the file system would say */
static int child_unlink(const scr_preload_target* t, int at_flags, int* handled)
{
  if (t->directory && !(at_flags & AT_REMOVEDIR)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  child_refresh();
  char* shown = child_shown(t->path);
  int rc = -1;
  if (shown || scr_peers_shows(t->path)) rc = child_refuse(at_flags & AT_REMOVEDIR ? ENOTDIR : EROFS, handled);
  else if ((at_flags & AT_REMOVEDIR) && scr_view_is_directory(t->path)) rc = child_refuse(ENOTEMPTY, handled);
  free(shown);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

static int child_truncate(const scr_preload_target* t, off64_t length, int* handled)
{
  (void) length;
  pthread_mutex_lock(&scr_engine_lock);
  child_refresh();
  char* shown = child_shown(t->path);
  int rc = shown || scr_peers_shows(t->path) ? child_refuse(EROFS, handled) : -1;
  free(shown);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

/* mkdir of a shown file's name, or of a directory only the view has (a
 * restored checkpoint's that the file system lost): EEXIST, as in the rank */
static int child_mkdir(const scr_preload_target* t, mode_t mode, int* handled)
{
  (void) mode;
  if (!scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  child_refresh();
  struct stat st;
  char* shown = t->directory ? NULL : child_shown(t->path);
  int rc = -1;
  if (shown || (t->directory && lstat(t->path, &st) != 0 && scr_view_is_directory(t->path)))
    rc = child_refuse(EEXIST, handled);
  free(shown);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

/* chdir into a directory only the view has: made on the file system, as the
 * rank would make it (it holds nothing of the rank's; the files stay shown) */
static int child_materialize(const scr_preload_target* t, int* handled)
{
  if (!t->directory || !scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  child_refresh();
  struct stat st;
  int rc = -1;
  if (scr_view_is_directory(t->path)) {
    *handled = SCR_PRELOAD_HANDLED;
    rc = lstat(t->path, &st) == 0 || scr_io_mkdir_p(t->path, 0777) == SCR_SUCCESS ? 0 : -1;
    if (rc != 0) errno = EIO;
  }
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

static int child_stat(const scr_preload_target* t, int at_flags, char* redirect, int* handled)
{
  child_fresh();
  return scr_view_stat(t, at_flags, redirect, handled);
}

/* W_OK of a shown file: EROFS, as access(2) says of a read-only file system */
static int child_access(const scr_preload_target* t, int amode, int at_flags, char* redirect, int* handled)
{
  if (amode & W_OK) {
    pthread_mutex_lock(&scr_engine_lock);
    child_refresh();
    char* shown = t->directory ? NULL : child_shown(t->path);
    int rc = shown || (!t->directory && scr_peers_shows(t->path)) ? child_refuse(EROFS, handled) : 0;
    free(shown);
    pthread_mutex_unlock(&scr_engine_lock);
    if (rc) return rc;
  } else {
    child_fresh();
  }
  return scr_view_access(t, amode, at_flags, redirect, handled);
}

static DIR* child_opendir(const scr_preload_target* t, char* redirect, void** dir, int* handled)
{
  child_fresh();
  return scr_view_opendir(t, redirect, dir, handled);
}

__attribute__((visibility("default"))) const struct scr_preload_engine scr_preload_child_table = {
  .init = child_init,
  .finalize = child_finalize,
  .barrier = child_barrier,
  .open = child_open,
  .close = child_close,
  .rename = child_rename,
  .unlink = child_unlink,
  .truncate = child_truncate,
  .mkdir = child_mkdir,
  .materialize = child_materialize,
  .stat = child_stat,
  .access = child_access,
  .opendir = child_opendir,
  .readdir = scr_view_readdir,
  .rewinddir = scr_view_rewinddir,
  .closedir = scr_view_closedir,
};
