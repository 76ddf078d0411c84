/* scr_preload_engine.c - the engine's hooks: opens and closes of files the rules match
 * routed into cache or redirected to the view, MPI_Init, MPI_Barrier and MPI_Finalize. */
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
#include <mpi.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_fault.h"
#include "scr_filemap.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_flush.h"
#include "scr_flush_async.h"
#include "scr_api.h"
#include "scr_restart.h"
#include "scr_recovery.h"
#include "scr_preload_child.h"
#include "scr_preload_engine.h"
#include "scr_preload_engine_impl.h"
#include "scr_preload_real.h"
#include "scr_preload_state.h"

pthread_mutex_t scr_engine_lock = PTHREAD_MUTEX_INITIALIZER;

/* a duplicate of the job's communicator for the barrier's decision (engine_barrier) */
static MPI_Comm engine_barrier_comm = MPI_COMM_NULL;

/* ---- routing */

/* a new cache file holding what the descriptor in reads, with its mode: 0 or -1 */
static int engine_copy_from(int in, const char* cache)
{
  struct stat st;
  int out = fstat(in, &st) == 0 ? open(cache, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
  if (out < 0) return -1;
  char buf[65536];
  off_t offset = 0;
  ssize_t n;
  int rc = 0;
  while ((n = pread(in, buf, sizeof(buf), offset)) > 0) {
    if (scr_io_write_full(out, buf, (size_t) n) != n) {
      rc = -1;
      break;
    }
    offset += n;
  }
  if (n < 0 || fchmod(out, st.st_mode & 07777) != 0) rc = -1;
  if (close(out) != 0) rc = -1;
  return rc;
}

/* O_TRUNC without O_CREAT opens only a file that exists, shown by the view or
 * on the file system: path (what the view shows, or the path itself) opened
 * with flags but without O_TRUNC fails as the real open would (ENOENT,
 * EISDIR, EACCES...) and changes nothing. 0 with the file's mode in *mode,
 * or -1 with errno */
static int engine_open_existing(const char* path, int flags, mode_t* mode)
{
  struct stat st;
  int fd = open(path, (flags & ~O_TRUNC) | O_CLOEXEC);  /* inside the guard: the real open */
  if (fd < 0) return -1;
  int rc = fstat(fd, &st);
  int saved_errno = errno;
  close(fd);
  errno = saved_errno;
  if (rc == 0) *mode = st.st_mode & 07777;
  return rc;
}

static int engine_open_cache(const char* cache, int flags, mode_t mode, int* handled)
{
  int fd = open(cache, flags, mode);  /* inside the guard: the real open */
  /* an empty directory of the cache tree at the file's name, left by a
   * run before scr_engine_prune_cache_dirs took such directories away */
  if (fd < 0 && errno == EISDIR && (flags & O_CREAT) && rmdir(cache) == 0) fd = open(cache, flags, mode);
  *handled = SCR_PRELOAD_HANDLED;
  return fd;
}

/* a virtual directory opened as a descriptor (the real open found
 * nothing): the descriptor is its mirror, filled with what the view shows */
static int engine_open_directory(const scr_preload_target* t, char* redirect, int* handled)
{
  if (!scr.initialized || !scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  char* mirror = scr_view_is_directory(t->path) ? scr_mirror_directory(t->path, 1) : NULL;
  if (mirror) {
    snprintf(redirect, PATH_MAX, "%s", mirror);
    *handled = SCR_PRELOAD_REDIRECT;
  }
  free(mirror);
  pthread_mutex_unlock(&scr_engine_lock);
  return -1;
}

/* a file of a completed dataset opened for writing, not created anew: this
 * rank's own file is changed in place and protected again later; a file
 * attached to the dataset (a pointer) is recorded again at its close */
static struct scr_engine_file* engine_open_update(const scr_preload_target* t, int dataset, const char* shown)
{
  char* relpath = scr_path_relative_to(scr.prefix, t->path);
  struct scr_engine_file* f = NULL;
  if (relpath) {
    f = scr_engine_update_begin(dataset, t->path, relpath, shown);
    scr_kvtree* mine = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, dataset), "RANK", scr.rank);
    if (!f && scr_kvtree_get(scr_kvtree_get(mine, "ATTACHED"), shown))
      f = scr_engine_file_new(dataset, 1, t->path, relpath, shown);
  }
  free(relpath);
  return f;
}

/* scr_engine_parent_missing for a path the view does not show, when only this
 * rank's cached files were looked at (looked 0): a copy of an attached file
 * on the prefix directory shows it too (*shown, *dataset), in a directory
 * the file system may lack; errno as scr_engine_parent_missing leaves it */
static int engine_parent_missing_unshown(const char* path, int looked, char** shown, int* dataset)
{
  int saved_errno = errno;
  nlink_t nlink;
  if (!scr_engine_parent_missing(path, &nlink)) return scr_engine_name_is_directory(path, nlink);
  if (looked) return 1;
  int missing_errno = errno;
  *shown = scr_view_find(path, dataset);
  errno = *shown ? saved_errno : missing_errno;
  return !*shown;
}

static int engine_open(const scr_preload_target* t, int flags, mode_t mode, char* redirect, void** file,
                       int* handled)
{
  if (t->directory) return engine_open_directory(t, redirect, handled);
  const scr_preload_rule* rule = scr_engine_rule(t);
  int creating = (flags & O_ACCMODE) != O_RDONLY && (flags & (O_CREAT | O_TRUNC)) &&
                 (flags & O_TMPFILE) != O_TMPFILE;
  if (!rule || t->directory || !scr.initialized) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  /* whatever comes of it (routed, redirected, passed): only such a
   * descriptor can be mapped shared and writable */
  scr_engine_mapped_may(flags);
  int fd = -1, dataset = -1;
  /* A new version of a file (O_CREAT|O_TRUNC, the common case) needs only
   * this rank's cached files; the copies of attached files on the prefix
   * directory are looked at (one system call per cached dataset) where they
   * change what happens: a directory the file system lacks, and whether a
   * late file of a step joins its dataset (scr_engine_route_new_shown) */
  int fresh = creating && (flags & (O_CREAT | O_TRUNC | O_EXCL)) == (O_CREAT | O_TRUNC);
  char* shown = fresh ? scr_view_find_cached(t->path, &dataset) : scr_view_find(t->path, &dataset);
  int looked = !fresh || shown;
  /* A file of a rule with {step} opened without O_TRUNC, with O_CREAT or
   * without, is a change to the checkpoint its path names (a log appended to
   * with fopen "a" after that checkpoint completed), not a new version of
   * it, which would hold only this file and replace the checkpoint that
   * holds the rank's other files. Without {step} the same name is written
   * again at every checkpoint (open(O_CREAT) with no O_TRUNC, as ROMIO's
   * MPI_MODE_CREATE does): that starts the next checkpoint. */
  if (shown && creating && !(flags & (O_TRUNC | O_EXCL)) && rule->has_step) creating = 0;
  if (shown && (!creating || scr_engine_writing(dataset))) {
    /* an existing file of a cached dataset: read it, write the one in
     * progress, or change a completed one in place */
    struct scr_engine_file* update = (flags & O_ACCMODE) != O_RDONLY && !scr_engine_writing(dataset)
                                         ? engine_open_update(t, dataset, shown)
                                         : NULL;
    if (update) {
      fd = engine_open_cache(shown, flags, mode, handled);
      if (fd >= 0) {
        *file = update;
      } else {
        int saved_errno = errno;
        if (update->updating) scr_engine_update_end(update);
        scr_engine_file_free(update);
        errno = saved_errno;
      }
    } else if (scr_engine_dataset_reopening(dataset, t->path)) {
      /* MPI_File_open opening again the file it created and closed: tracked,
       * so that its close completes the dataset as the first close did not */
      char* relpath = scr_path_relative_to(scr.prefix, t->path);
      fd = relpath ? engine_open_cache(shown, flags, mode, handled) : -1;
      *file = fd >= 0 ? scr_engine_file_new(dataset, 0, t->path, relpath, shown) : NULL;
      scr_engine_dataset_reopened(*file != NULL);
      free(relpath);
    } else {
      snprintf(redirect, PATH_MAX, "%s", shown);
      *handled = SCR_PRELOAD_REDIRECT;
    }
  } else if (creating && (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL) &&
             (shown || faccessat(AT_FDCWD, t->path, F_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0)) {
    /* the file exists, in the cache or on the file system (one the flush
     * would otherwise overwrite) */
    *handled = SCR_PRELOAD_HANDLED;
    errno = EEXIST;
  } else if (creating && !(flags & O_CREAT) && engine_open_existing(shown ? shown : t->path, flags, &mode) != 0) {
    /* O_TRUNC without O_CREAT of a file neither the view nor the file system
     * has: the real open's failure, before any dataset begins */
    *handled = SCR_PRELOAD_HANDLED;
  } else if (creating && !shown && engine_parent_missing_unshown(t->path, looked, &shown, &dataset)) {
    /* a new file in a directory no rank made (errno says which failure):
     * the file system's answer, and no dataset begins */
    *handled = SCR_PRELOAD_HANDLED;
  } else if (creating) {
    /* O_TRUNC without O_CREAT of an existing file (mode is its mode now) is
     * the new version O_CREAT|O_TRUNC makes of it; its cache file is new */
    int create = flags & O_CREAT ? flags : (flags & ~O_EXCL) | O_CREAT;
    char* relpath = scr_path_relative_to(scr.prefix, t->path);
    char cache[SCR_MAX_FILENAME];
    int attached = 0;
    /* an existing file opened for writing without O_TRUNC keeps its bytes
     * (and its mode) in its new version; opened now, since beginning the
     * new dataset may evict the one that holds it */
    int keep = shown && !(flags & O_TRUNC) ? open(shown, O_RDONLY | O_CLOEXEC) : -1;
    static int warned_outside = 0;
    if (!relpath || strcmp(relpath, ".") == 0) {
      if (!warned_outside++)
        scr_warn("%s matches PRELOAD=%s but lies outside the prefix directory %s: written there unprotected "
                 "(said once)", t->path, rule->pattern, scr.prefix);
    } else if (scr_engine_route_new_shown(t, rule, relpath, cache, sizeof(cache), &attached,
                                          shown ? dataset : looked ? -1 : SCR_ENGINE_UNKNOWN) == SCR_SUCCESS) {
      int id = attached ? scr_engine_done_id() : scr.output_id;
      if (keep >= 0 && strcmp(shown, cache) != 0 && engine_copy_from(keep, cache) != 0)
        scr_err("cannot copy %s to %s for %s opened without O_TRUNC: it starts empty", shown, cache, t->path);
      fd = engine_open_cache(cache, create, mode, handled);
      if (fd >= 0) scr_fault_point("open"); /* created in cache, nothing written yet */
      /* the file keeps its mode, which open's mode, with the umask, may not give */
      if (fd >= 0 && create != flags && fchmod(fd, mode) != 0)
        scr_warn("cannot give %s mode %o: %s", cache, (unsigned) mode, strerror(errno));
      if (fd >= 0) {
        *file = scr_engine_file_new(id, attached, t->path, relpath, cache);
        if (!attached) scr_engine_dataset_file_opened();
        scr_dbg(2, "preload: %s -> %s (dataset %d%s)", t->path, cache, id, attached ? ", attached" : "");
      } else if (!attached) {
        int saved_errno = errno;
        /* a name or flags the file system refuses too (EINVAL for O_CREAT |
         * O_DIRECTORY, ENAMETOOLONG) created nothing there either: the
         * application sees the failure, and the rank's other files still
         * make a checkpoint; a failure of the cache itself does not */
        int refused = errno == EINVAL || errno == ENAMETOOLONG || errno == EISDIR || errno == ELOOP;
        if (!refused) {
          scr_err("cannot create %s in cache for %s: %s", cache, t->path, strerror(errno));
          scr_engine_dataset_broken();
        } else {
          scr_kvtree_unset(scr_filemap_get_files(scr.filemap, id, scr.rank), cache);
          scr_cache_save_filemap();
        }
        errno = saved_errno;
      }
    } else if (scr.in_output && scr_engine_writing(scr.output_id)) {
      scr_engine_dataset_broken();
    }
    if (keep >= 0) close(keep);
    free(relpath);
  }
  free(shown);
  pthread_mutex_unlock(&scr_engine_lock);
  return fd;
}

static int engine_close(int fd, void* file, int rc, int* handled)
{
  (void) fd;
  (void) handled;
  struct scr_engine_file* f = file;
  /* a file read after a restore, before the next checkpoint, is the
   * program's restart read: its end is when the program resumed */
  scr_recovery_read_closed();
  if (!f) return rc;
  int saved_errno = errno;
  pthread_mutex_lock(&scr_engine_lock);
  if (f->attached) {
    scr_pointers_closed(f);
  } else if (f->updating) {
    scr_engine_update_end(f);
  } else if (scr_engine_writing(f->dataset) && scr_preload_mpi_file_opening()) {
    /* ROMIO's create-and-close inside MPI_File_open: the file is not done
     * (an empty checkpoint would complete here); its reopen (engine_open)
     * counts as the same open, and its close at MPI_File_close ends it */
    scr_engine_dataset_reopen_later(f->orig);
  } else if (scr_engine_writing(f->dataset)) {
    scr_engine_dataset_file_closed();
  }
  /* a flush handed over or published here goes on as close() returns */
  scr_flush_async_release();
  pthread_mutex_unlock(&scr_engine_lock);
  scr_engine_file_free(f);
  errno = saved_errno;
  return rc;
}

/* ---- start and end */

/* the rank of a directory "<stem>.<rank>" of the cache directory, or -1 */
static int engine_stray_rank(const char* name)
{
  static const char* const stems[] = { SCR_MIRROR_DIRECTORY ".", SCR_SHARE_DIRECTORY ".", SCR_PEER_DIRECTORY "." };
  for (size_t i = 0; i < sizeof(stems) / sizeof(stems[0]); i++) {
    size_t n = strlen(stems[i]);
    char* end = NULL;
    if (strncmp(name, stems[i], n) != 0 || name[n] < '0' || name[n] > '9') continue;
    long rank = strtol(name + n, &end, 10);
    if (*end == '\0' && rank <= 0x7fffffff) return (int) rank;
  }
  return -1;
}

/* A run that died leaves each rank's mirrors and shared copies in its
 * node's cache; every rank clears its own at start, but the next run may
 * place that rank on another node, or have fewer ranks. The node's first
 * rank removes those of ranks that are not on this node now (the others
 * only ever touch their own, so nothing races). */
static void engine_remove_strays(void)
{
  int* ranks = malloc((size_t) scr.node_ranks * sizeof(int));
  /* every rank of the node takes part in the same collectives, or none */
  int ok = scr_mpi_all_true(ranks != NULL, scr.comm_node) &&
           MPI_Allgather(&scr.rank, 1, MPI_INT, ranks, 1, MPI_INT, scr.comm_node) == MPI_SUCCESS;
  DIR* dir = ok && scr.node_rank == 0 ? opendir(scr.cache_dir) : NULL;
  struct dirent* e;
  while (dir && (e = readdir(dir)) != NULL) {
    int rank = engine_stray_rank(e->d_name), here = 0;
    for (int i = 0; rank >= 0 && i < scr.node_ranks; i++) here |= ranks[i] == rank;
    if (rank < 0 || here) continue;
    char* path = scr_path_join(scr.cache_dir, e->d_name);
    if (path && scr_io_remove_tree(path) == SCR_SUCCESS) scr_dbg(1, "preload: removed %s, left by an earlier run", path);
    free(path);
  }
  if (dir) closedir(dir);
  free(ranks);
}

/* A directory rename a run that died had begun: before the restart checks
 * the cached files, the ranks that had not followed it (or had moved a
 * file without recording it) follow now, so that their files are found */
static void engine_follow_renames(void)
{
  pthread_mutex_lock(&scr_engine_lock);
  scr_engine_rename_recover();
  pthread_mutex_unlock(&scr_engine_lock);
}

/* collective: the engine's communicator goes before MPI_Finalize, at the
 * program's or at SCR_HALT_EXIT's, which the program never sees (MPI keeps
 * what a communicator still there allocated: a leak under LeakSanitizer) */
static void engine_free_comm(void)
{
  if (engine_barrier_comm != MPI_COMM_NULL) MPI_Comm_free(&engine_barrier_comm);
}

static int engine_init(void)
{
  /* the preload loaded the rules: there is at least one */
  scr_engine_dataset_start(scr_preload_state_current());

  /* the cache's reaper deletes while SCR_Finalize, under the engine's lock,
   * waits for it: none of its calls may reach the engine */
  scr.thread_start = scr_preload_real_own_thread;
  scr.before_restart = engine_follow_renames;
  /* the program cannot ask SCR_Should_exit: a halt condition (scr_halt, the
   * time left, a count of checkpoints) ends it after the checkpoint that
   * meets it, unless SCR_HALT_EXIT=0 says otherwise */
  scr.halt_exit_by_default = 1;
  scr.before_halt_exit = engine_free_comm;
  /* the restore ends once the other cached datasets are settled, below */
  scr.restore_logged_by_caller = 1;
  /* An unmodified program renames and deletes its checkpoint files and
   * directories itself, at any time: a flush, and the background copy of
   * SCR_FLUSH_ASYNC=1 above all, must not write where the program's paths
   * look while it runs (a file it deleted coming back, a removal failing
   * with ENOTEMPTY for the copier's temporary file). So every flush copies
   * into a stage under <prefix>/.scr and publishes it by renames at a
   * completion or MPI_Finalize, where the engine is in control, following
   * the renames and deletions the program made since (scr_publish.h) */
  scr.flush_publish = 1;
  if (SCR_Init() != SCR_SUCCESS) return SCR_FAILURE;
  if (!scr.enabled) {
    SCR_Finalize();
    return SCR_ERR_NOENT;
  }
  MPI_Comm_dup(scr.comm_world, &engine_barrier_comm);
  engine_remove_strays();
  scr_mirror_init();
  scr_share_clear();
  scr_peers_init();
  /* the restored dataset is visible at once; it is read through the view */
  int have = 0, restored = -1;
  char name[SCR_MAX_FILENAME] = "";
  if (SCR_Have_restart(&have, name) == SCR_SUCCESS && have && SCR_Start_restart(name) == SCR_SUCCESS) {
    restored = scr.restart_id;
    scr_engine_dataset_restored(restored);
    SCR_Complete_restart(1);
    pthread_mutex_lock(&scr_engine_lock);
    scr_engine_update_adopt(restored);
    scr_share_restored(restored);
    pthread_mutex_unlock(&scr_engine_lock);
    if (scr.rank == 0) scr_info("preload: the application sees checkpoint '%s' at its original paths", name);
  }
  /* the view shows every cached dataset, not only the restored one: after a
   * lost node, an older one (named by a pointer attached to it) must be
   * whole on every rank, or shown on none */
  scr_restart_settle_cached();
  pthread_mutex_lock(&scr_engine_lock);
  scr_engine_links_restore();
  /* again: files rebuilt since came back under the names they were encoded with */
  scr_engine_rename_recover();
  scr_peers_gather_cached();
  scr_pointers_verify();
  scr_pointers_pin();
  /* the checkpoint a program that renames each into place resumes from,
   * which need not be the newest SCR restored */
  scr_pointers_pin_renamed_start();
  pthread_mutex_unlock(&scr_engine_lock);
  scr_preload_hooks_virtual_directories(1);
  scr_recovery_restored(restored, name);
  /* the processes the program starts see what it sees, read-only */
  scr_preload_child_export(scr.rank, restored, scr.prefix, scr.cntl_dir, scr.cache_dir);
  return SCR_SUCCESS;
}

static void engine_finalize(void)
{
  /* a process the program starts from now on sees the file system, as the
   * program does once MPI_Finalize returns */
  scr_preload_child_export(scr.rank, -1, NULL, NULL, NULL);
  pthread_mutex_lock(&scr_engine_lock);
  scr_engine_dataset_finalize();
  scr_engine_deletions_settle();
  scr_preload_hooks_virtual_directories(0);
  scr_mirror_finalize();
  scr_share_clear();
  scr_peers_unpublish();
  scr_peers_clear();
  scr_preload_state_install(NULL);
  engine_free_comm();
  /* SCR_Finalize may still flush the newest checkpoint: the summary comes
   * after it, over the MPI library's world, which is still there */
  int rank = scr.rank;
  SCR_Finalize();
  unsigned long long bytes = scr.stat_bytes, total = 0;
  PMPI_Reduce(&bytes, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  double mib = (double) total / (1024.0 * 1024.0), seconds = scr.stat_output_seconds;
  scr_log_rank = rank; /* SCR_Finalize forgot it; the line still says who speaks */
  if (rank == 0)
    scr_info("preload summary: %d datasets, %.1f MiB, %.3f s in checkpoints (redundancy %.3f s, flush %.3f s), "
             "%.1f MiB/s", scr.stat_datasets, mib, seconds, scr.stat_redundancy_seconds, scr.stat_flush_seconds,
             seconds > 0 ? mib / seconds : 0.0);
  pthread_mutex_unlock(&scr_engine_lock);
}

/* 1 when from, which a rule matches as a file, is a directory that holds
 * shown files (a pattern ending in ** matches ckpt/d as it matches
 * ckpt/d/x): its rename moves them, as a rule directory's does (lock held) */
static int engine_rename_is_directory(const scr_preload_target* from)
{
  struct stat st;
  int dataset = -1;
  if (!from->path || (lstat(from->path, &st) == 0 && !S_ISDIR(st.st_mode))) return 0;
  char* file = scr_view_find(from->path, &dataset);
  free(file);
  return !file && scr_view_is_directory(from->path);
}

/* rename(2): a directory the view shows files in moves them all
 * (scr_preload_engine_rename_dir.c), a file moves alone
 * (scr_preload_engine_names.c); the background copy hears of either */
static int engine_rename(const scr_preload_target* from, const scr_preload_target* to, unsigned int flags,
                         int* handled)
{
  if (scr.initialized && from->path && to->path && flags == 0 && !from->directory) {
    pthread_mutex_lock(&scr_engine_lock);
    int rc = -1;
    if (engine_rename_is_directory(from)) rc = scr_engine_rename_directory(from, to, handled);
    int saved_errno = errno, was = *handled == SCR_PRELOAD_HANDLED;
    pthread_mutex_unlock(&scr_engine_lock);
    errno = saved_errno;
    if (was) return scr_engine_tell_background_copy(rc, handled);
  }
  if (scr.initialized && from->directory && from->path && to->path && flags == 0) {
    pthread_mutex_lock(&scr_engine_lock);
    int rc = scr_engine_rename_directory(from, to, handled);
    int saved_errno = errno;
    pthread_mutex_unlock(&scr_engine_lock);
    errno = saved_errno;
    return scr_engine_tell_background_copy(rc, handled);
  }
  return scr_engine_rename_file(from, to, flags, handled);
}

/* a barrier on MPI_COMM_WORLD is a meeting point: its collectives take
 * every rank of the job, so they stand for the barrier (one collective
 * where a barrier was) */
static int engine_barrier(MPI_Comm comm)
{
  if (comm != MPI_COMM_WORLD || engine_barrier_comm == MPI_COMM_NULL) return 0;
  /* the collective that decides runs without the lock, which another
   * thread of this rank may need to reach its own part in the job
   * (MPI_THREAD_MULTIPLE), and on a communicator of its own, so that it
   * cannot pair with a completion's collectives another thread started;
   * the work it finds, if any, takes the lock */
  scr_engine_dataset_meet_at_barrier(engine_barrier_comm);
  pthread_mutex_lock(&scr_engine_lock);
  scr_flush_async_release();
  pthread_mutex_unlock(&scr_engine_lock);
  return 1;
}

__attribute__((visibility("default"))) const struct scr_preload_engine scr_preload_engine_table = {
  .init = engine_init,
  .finalize = engine_finalize,
  .barrier = engine_barrier,
  .open = engine_open,
  .close = engine_close,
  .rename = engine_rename,
  .link = scr_engine_link,
  .unlink = scr_engine_unlink,
  .truncate = scr_engine_truncate,
  .mkdir = scr_engine_mkdir,
  .materialize = scr_engine_materialize,
  .stat = scr_view_stat,
  .access = scr_view_access,
  .opendir = scr_view_opendir,
  .readdir = scr_view_readdir,
  .rewinddir = scr_view_rewinddir,
  .closedir = scr_view_closedir,
};
