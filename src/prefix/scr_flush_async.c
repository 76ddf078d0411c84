/* scr_flush_async.c - the library's side of the asynchronous flush: list the files
 * in the node's transfer file, start the node's scr_transfer daemon, and complete the flush. */
#define _GNU_SOURCE
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_transfer_file.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_event_log.h"
#include "scr_flush.h"
#include "scr_flush_async.h"
#include "scr_flush_redundancy.h"
#include "scr_flush_publish.h"
#include "scr_publish.h"

extern char** environ;

/* One flush in flight at most, the same on every rank: started and completed
 * collectively. Only the node's first rank starts and stops the daemon. */
static int async_id = -1;
static double async_start;
static int async_respawned;     /* the node's daemon was started again during it */
static char* transfer_path;
static pid_t daemon_pid;
/* publish mode (scr.flush_publish): the files handed over, FILES/<cache
 * path>/DESTINATION..., as they were named then (the program may rename
 * them since; their filemap entries keep STAGE) */
static scr_kvtree* async_list;

#define FLUSHING_KEY "FLUSHING"

/* ---- the daemon */

/* scr_transfer next to the library in a build tree or an installation, else
 * in the configured bindir */
static char* daemon_program(void)
{
  Dl_info info;
  char here[PATH_MAX];
  if (dladdr((void*) daemon_program, &info) && info.dli_fname && realpath(info.dli_fname, here)) {
    char* dir = scr_path_dirname(here);
    const char* candidates[] = { "../bin/scr_transfer", "../scr_transfer", "scr_transfer" };
    for (size_t i = 0; dir && i < sizeof(candidates) / sizeof(candidates[0]); i++) {
      char* path = scr_path_join(dir, candidates[i]);
      if (path && access(path, X_OK) == 0) {
        free(dir);
        return path;
      }
      free(path);
    }
    free(dir);
  }
  return strdup(SCR_BINDIR "/scr_transfer");
}

/* node leader: CPU seconds the node's daemons used, once reaped (what a
 * background flush takes from the program's cores) */
static double daemon_cpu;

/* the daemon reaped (options: as waitpid's): 1 when it is gone */
static int daemon_reap(int options)
{
  struct rusage usage;
  pid_t pid = wait4(daemon_pid, NULL, options, &usage);
  if (pid != daemon_pid) return pid < 0;
  daemon_cpu += (double) usage.ru_utime.tv_sec + (double) usage.ru_utime.tv_usec * 1e-6 +
                (double) usage.ru_stime.tv_sec + (double) usage.ru_stime.tv_usec * 1e-6;
  return 1;
}

static int daemon_alive(void)
{
  return daemon_pid > 0 && !daemon_reap(WNOHANG);
}

/* node leader: 1 when a daemon runs for this node (started now if needed) */
static int daemon_ensure(void)
{
  if (daemon_alive()) return 1;
  daemon_pid = 0;
  char* program = daemon_program();
  char parent[32];
  snprintf(parent, sizeof(parent), "%ld", (long) getpid());
  char* argv[] = { "scr_transfer", "--parent", parent, transfer_path, NULL };
  /* without LD_PRELOAD: the daemon is no MPI program and needs no interposition */
  size_t n = 0;
  while (environ[n]) n++;
  char** env = calloc(n + 1, sizeof(char*));
  size_t k = 0;
  for (size_t i = 0; env && i < n; i++)
    if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0) env[k++] = environ[i];
  /* it starts with SIGUSR1 (a wake-up, see daemon_wake) blocked, until its
   * handler is in place: one sent at once would end it */
  posix_spawnattr_t attr;
  sigset_t mask;
  posix_spawnattr_init(&attr);
  sigemptyset(&mask);
  sigaddset(&mask, SIGUSR1);
  posix_spawnattr_setsigmask(&attr, &mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  int rc = env ? posix_spawn(&daemon_pid, program, NULL, &attr, argv, env) : ENOMEM;
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    scr_err("cannot start %s for the asynchronous flush: %s", program, strerror(rc));
    daemon_pid = 0;
  }
  free(env);
  free(program);
  return rc == 0;
}

static int command_exit(scr_kvtree* t, void* arg)
{
  (void) arg;
  if (scr_kvtree_size(t) == 0) return SCR_ERR_NOENT;
  scr_kvtree_set_kv(t, SCR_TRANSFER_KEY_COMMAND, SCR_TRANSFER_COMMAND_EXIT);
  return SCR_SUCCESS;
}

static void daemon_stop(void)
{
  if (daemon_pid <= 0) return;
  scr_transfer_file_update(transfer_path, command_exit, NULL);
  /* idle, it looks at its file ten times a second, or when woken */
  if (daemon_alive()) kill(daemon_pid, SIGUSR1);
  for (int i = 0; i < 500 && daemon_alive(); i++) {
    struct timespec t = { 0, 10 * 1000 * 1000 };
    nanosleep(&t, NULL);
  }
  if (daemon_alive()) {
    kill(daemon_pid, SIGTERM);
    daemon_reap(0);
  }
  daemon_pid = 0;
}

/* node leader: the daemon stopped now, what it copied recorded (it records
 * its batch as it exits); started again by the next flush */
static void daemon_halt(void)
{
  if (daemon_pid > 0 && daemon_alive()) {
    kill(daemon_pid, SIGTERM);
    daemon_reap(0);
  }
  daemon_pid = 0;
}

/* node leader: the daemon looks at the transfer file now */
static int wake_pending;
static void daemon_wake(void)
{
  wake_pending = 0;
  if (scr.node_rank == 0 && daemon_alive()) kill(daemon_pid, SIGUSR1);
}

void scr_flush_async_release(void)
{
  if (wake_pending) daemon_wake();
  scr_publish_release();
}

/* ---- this rank's files in the transfer file */

/* FILES/<cache path>/{DESTINATION, SIZE} of this rank's files of the dataset;
 * NULL when a file has no destination or already is there (cache bypass).
 * *occupied (may be NULL) counts destinations a file already holds. */
static scr_kvtree* my_transfers(int id, int* occupied)
{
  scr_kvtree* list = scr_kvtree_new();
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e;
       e = scr_kvtree_next(e)) {
    const char* src = scr_kvtree_elem_key(e);
    char* dst = scr_flush_destination(scr_kvtree_elem_tree(e));
    if (!dst || strcmp(src, dst) == 0) {
      free(dst);
      scr_kvtree_delete(&list);
      return NULL;
    }
    if (scr.flush_publish) {
      /* into the stage, under the name the file has now, which its entry
       * keeps through the program's renames until the publish */
      const char* relpath = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "RELPATH");
      free(dst);
      dst = scr_publish_stage_path(scr.prefix, id, relpath);
      if (!dst) {
        scr_kvtree_delete(&list);
        return NULL;
      }
      scr_kvtree_set_kv(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_STAGE, relpath);
    }
    uint64_t size = 0;
    scr_kvtree_get_uint64(scr_kvtree_elem_tree(e), "SIZE", &size);
    if (occupied && access(dst, F_OK) == 0) (*occupied)++;
    scr_kvtree* f = scr_kvtree_add_kv(list, SCR_TRANSFER_KEY_FILES, src);
    scr_kvtree_set_kv(f, SCR_TRANSFER_KEY_DESTINATION, dst);
    scr_kvtree_set_kv_uint64(f, SCR_TRANSFER_KEY_SIZE, size);
    /* the daemon checks the bytes before its copy takes the file's name */
    const char* crc = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "CRC");
    if (crc && scr.crc_on_flush) scr_kvtree_set_kv(f, SCR_TRANSFER_KEY_EXPECT, crc);
    free(dst);
  }
  /* the redundancy data goes with it (SCR_FLUSH_REDUNDANCY) */
  if (scr.flush_redundancy) scr_flush_redundancy_list(id, list);
  return list;
}

static int add_files(scr_kvtree* t, void* arg)
{
  const scr_kvtree* list = arg;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(list, SCR_TRANSFER_KEY_FILES)); e;
       e = scr_kvtree_next(e)) {
    scr_kvtree* f = scr_kvtree_add_kv(t, SCR_TRANSFER_KEY_FILES, scr_kvtree_elem_key(e));
    scr_kvtree_clear(f);
    scr_kvtree_merge(f, scr_kvtree_elem_tree(e));
    scr_kvtree_set_kv_uint64(f, SCR_TRANSFER_KEY_WRITTEN, 0);
  }
  scr_kvtree_set_kv_double(t, SCR_TRANSFER_KEY_BW, scr.flush_async_bw);
  scr_kvtree_set_kv_double(t, SCR_TRANSFER_KEY_PERCENT, scr.flush_async_percent);
  scr_kvtree_set_kv(t, SCR_TRANSFER_KEY_COMMAND, SCR_TRANSFER_COMMAND_RUN);
  scr_kvtree_unset(t, SCR_TRANSFER_KEY_FLAG);
  return SCR_SUCCESS;
}

static int remove_files(scr_kvtree* t, void* arg)
{
  const scr_kvtree* list = arg;
  int had = scr_kvtree_get(t, SCR_TRANSFER_KEY_FILES) != NULL;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(list, SCR_TRANSFER_KEY_FILES)); e;
       e = scr_kvtree_next(e))
    scr_kvtree_unset_kv(t, SCR_TRANSFER_KEY_FILES, scr_kvtree_elem_key(e));
  /* the last rank's files gone: the daemon idles until the next flush */
  if (had && !scr_kvtree_get(t, SCR_TRANSFER_KEY_FILES)) {
    scr_kvtree_unset(t, SCR_TRANSFER_KEY_FLAG);
    scr_kvtree_set_kv(t, SCR_TRANSFER_KEY_COMMAND, SCR_TRANSFER_COMMAND_STOP);
  }
  return SCR_SUCCESS;
}

/* save: written at once (a restart forgets the mark anyway, so a caller
 * whose next step writes the filemap leaves it to that one) */
static void set_flushing(int id, int on, int save)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  if (!dset) return;
  if (on) scr_kvtree_set_kv_int(dset, FLUSHING_KEY, 1);
  else scr_kvtree_unset(dset, FLUSHING_KEY);
  if (save) scr_cache_save_filemap();
}

/* ---- the program renamed files in flight: the daemon copies them from
 * their new names (their places in the stage do not change) */

/* FROM/<old cache path>/TO = <new>, not yet told to the daemon */
static scr_kvtree* moves_pending;

void scr_flush_async_moved(const char* from, const char* to)
{
  if (!async_list || !scr_kvtree_get_kv(async_list, SCR_TRANSFER_KEY_FILES, from)) return;
  /* this rank's list follows at once: the entry keeps its destination */
  scr_kvtree* entry = scr_kvtree_copy(scr_kvtree_get_kv(async_list, SCR_TRANSFER_KEY_FILES, from));
  scr_kvtree_unset_kv(async_list, SCR_TRANSFER_KEY_FILES, from);
  scr_kvtree* moved = scr_kvtree_add_kv(async_list, SCR_TRANSFER_KEY_FILES, to);
  scr_kvtree_merge(moved, entry);
  scr_kvtree_delete(&entry);
  if (!moves_pending) moves_pending = scr_kvtree_new();
  scr_kvtree_set_kv(scr_kvtree_add_kv(moves_pending, "FROM", from), "TO", to);
}

void scr_flush_async_dropped(const char* cache)
{
  if (!async_list || !scr_kvtree_get_kv(async_list, SCR_TRANSFER_KEY_FILES, cache)) return;
  scr_kvtree_unset_kv(async_list, SCR_TRANSFER_KEY_FILES, cache);
  if (!moves_pending) moves_pending = scr_kvtree_new();
  scr_kvtree_add_kv(moves_pending, "DROP", cache);
}

static int apply_moves(scr_kvtree* t, void* arg)
{
  (void) arg;
  /* a file deleted: the daemon need not look for it (its copy, if made, is
   * removed with the stage) */
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(moves_pending, "DROP")); e; e = scr_kvtree_next(e))
    scr_kvtree_unset_kv(t, SCR_TRANSFER_KEY_FILES, scr_kvtree_elem_key(e));
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(moves_pending, "FROM")); e; e = scr_kvtree_next(e)) {
    const char* from = scr_kvtree_elem_key(e);
    scr_kvtree* entry = scr_kvtree_get_kv(t, SCR_TRANSFER_KEY_FILES, from);
    if (!entry) continue;
    entry = scr_kvtree_copy(entry);
    scr_kvtree_unset_kv(t, SCR_TRANSFER_KEY_FILES, from);
    scr_kvtree_merge(scr_kvtree_add_kv(t, SCR_TRANSFER_KEY_FILES, scr_kvtree_get_val(scr_kvtree_elem_tree(e), "TO")),
                     entry);
    scr_kvtree_delete(&entry);
  }
  return SCR_SUCCESS;
}

void scr_flush_async_tell_moves(void)
{
  if (!moves_pending) return;
  /* one rewrite of the node's file for a whole directory moved */
  if (transfer_path && scr_transfer_file_update(transfer_path, apply_moves, NULL) != SCR_SUCCESS)
    scr_dbg(1, "cannot tell the background copy about renamed files: they are copied at the publish");
  scr_kvtree_delete(&moves_pending);
}

int scr_flush_async_in_flight(int id)
{
  return scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), FLUSHING_KEY) != NULL;
}

/* ---- the steps */

void scr_flush_async_init(void)
{
  async_id = -1;
  scr_kvtree_delete(&async_list);
  free(transfer_path);
  transfer_path = scr_transfer_file_path(scr.cntl_dir);
  /* a run killed during a background flush left its list: nothing of it is
   * being copied now (its daemon stopped with it) */
  if (scr.node_rank == 0 && transfer_path) unlink(transfer_path);
  int marked = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); e; e = scr_kvtree_next(e)) {
    if (!scr_kvtree_get(scr_kvtree_elem_tree(e), FLUSHING_KEY)) continue;
    scr_kvtree_unset(scr_kvtree_elem_tree(e), FLUSHING_KEY);
    /* its stage is gone (scr_publish_recover) */
    int id = (int) scr_kvtree_elem_key_int(e);
    for (scr_kvtree_elem* f = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); f;
         f = scr_kvtree_next(f))
      scr_kvtree_unset(scr_kvtree_elem_tree(f), SCR_FILEMAP_KEY_STAGE);
    marked = 1;
  }
  if (marked) scr_cache_save_filemap();
  MPI_Barrier(scr.comm_node);
}

static int staged_start(int id);
static void flight_begins(int id, scr_kvtree* list);

int scr_flush_async_start(int id)
{
  if (!scr.flush_async || !transfer_path) return SCR_ERR_INVALID;
  scr_flush_async_wait();
  if (scr.flush_publish) return staged_start(id);
  int usable = scr.node_rank != 0 || daemon_ensure();
  if (!scr_mpi_all_true(usable, scr.comm_world)) {
    if (scr.rank == 0)
      scr_warn("asynchronous flush unavailable (no scr_transfer daemon on some node): flushing synchronously "
               "from now on");
    scr.flush_async = 0;
    return SCR_ERR_INVALID;
  }
  int occupied = 0;
  scr_kvtree* list = my_transfers(id, scr.flush_publish ? NULL : &occupied);
  /* cache bypass: the files are on the prefix already. Names a flushed
   * checkpoint uses already (a program that writes the same names at every
   * step): the background copy would replace the files of the checkpoint the
   * index names while the program runs on; a synchronous flush keeps that
   * window as short as it can be. (A copy into the stage replaces nothing:
   * its publish does, at once.) */
  if (!scr_mpi_all_true(list != NULL && occupied == 0, scr.comm_world)) {
    scr_kvtree_delete(&list);
    return SCR_ERR_INVALID;
  }
  int rc = scr_flush_prepare(id);
  if (rc != SCR_SUCCESS) {
    scr_kvtree_delete(&list);
    return rc;
  }
  int added = scr_transfer_file_update(transfer_path, add_files, list) == SCR_SUCCESS;
  if (!scr_mpi_all_true(added, scr.comm_world)) {
    if (added) scr_transfer_file_update(transfer_path, remove_files, list);
    if (!added) scr_err("cannot list the files of dataset %d in %s for the asynchronous flush", id, transfer_path);
    scr_kvtree_delete(&list);
    return SCR_ERR_IO;
  }
  flight_begins(id, list);
  return SCR_SUCCESS;
}

/* the dataset is in flight from now on (list: this rank's files handed over) */
static void flight_begins(int id, scr_kvtree* list)
{
  /* the daemon looks at once, not at its next poll; under the preload
   * once the program has the call that completed the checkpoint back */
  if (scr.flush_publish) wake_pending = 1;
  else daemon_wake();
  scr_kvtree_delete(&async_list);
  if (scr.flush_publish) async_list = list;
  else scr_kvtree_delete(&list);
  /* the preload layer's: the mark keeps the dataset in cache, and its
   * STAGE keys matter to this run only */
  set_flushing(id, 1, !scr.flush_publish);
  async_id = id;
  async_start = scr_log_seconds();
  async_respawned = 0;
  scr_flush_log_start(id, "async");
  if (scr.rank == 0) scr_dbg(1, "flushing dataset %d to %s in the background", id, scr.prefix);
}

/* publish mode: everything done at once, then one agreement (a checkpoint's
 * completion pays one collective for handing its files over); what came
 * about is undone when some rank failed */
static int staged_start(int id)
{
  int usable = scr.node_rank != 0 || daemon_ensure();
  scr_kvtree* list = usable ? my_transfers(id, NULL) : NULL;
  int prepared = list && (scr.rank != 0 || scr_flush_prepare_local(id) == SCR_SUCCESS);
  int added = prepared && scr_transfer_file_update(transfer_path, add_files, list) == SCR_SUCCESS;
  int mine[3] = { !usable, !list, !added }, all[3];
  MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MAX, scr.comm_world);
  if (!all[0] && !all[1] && !all[2]) {
    flight_begins(id, list);
    return SCR_SUCCESS;
  }
  if (added) scr_transfer_file_update(transfer_path, remove_files, list);
  if (usable && list && !added) scr_err("cannot list the files of dataset %d in %s for the asynchronous flush", id,
                                        transfer_path);
  if (scr.rank == 0 && prepared) scr_flush_publish_abandon_local(id);
  scr_kvtree_delete(&list);
  if (all[0]) {
    if (scr.rank == 0)
      scr_warn("asynchronous flush unavailable (no scr_transfer daemon on some node): flushing synchronously "
               "from now on");
    scr.flush_async = 0;
  }
  return SCR_ERR_INVALID;
}

/* this rank's files of the flush in flight: 1 all copied, 0 some pending,
 * -1 some failed (said, with the reason the daemon gave) */
static int my_state(const scr_kvtree* list, const scr_kvtree* transfer)
{
  int state = 1;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(list, SCR_TRANSFER_KEY_FILES)); e;
       e = scr_kvtree_next(e)) {
    scr_kvtree* f = scr_kvtree_get_kv(transfer, SCR_TRANSFER_KEY_FILES, scr_kvtree_elem_key(e));
    const char* error = scr_kvtree_get_val(f, SCR_TRANSFER_KEY_ERROR);
    if (!f || error) {
      scr_err("asynchronous flush of dataset %d: %s: %s", async_id, scr_kvtree_elem_key(e),
              error ? error : "no longer in the transfer file");
      return -1;
    }
    uint64_t size = 0, written = 0;
    scr_kvtree_get_uint64(f, SCR_TRANSFER_KEY_SIZE, &size);
    scr_kvtree_get_uint64(f, SCR_TRANSFER_KEY_WRITTEN, &written);
    if (written < size || !scr_kvtree_get_val(f, SCR_TRANSFER_KEY_CRC)) state = 0;
  }
  return state;
}

/* node leader: 1 when the node's daemon runs, started once more if it died */
/* the temporary copies a killed daemon left beside the files it had not
 * finished (the next one has another pid, and would leave them) */
static void remove_abandoned_copies(void)
{
  scr_kvtree* transfer = scr_kvtree_new();
  if (scr_transfer_file_read(transfer_path, transfer) == SCR_SUCCESS)
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(transfer, SCR_TRANSFER_KEY_FILES)); e;
         e = scr_kvtree_next(e)) {
      const char* dst = scr_kvtree_get_val(scr_kvtree_elem_tree(e), SCR_TRANSFER_KEY_DESTINATION);
      if (dst && !scr_kvtree_get_val(scr_kvtree_elem_tree(e), SCR_TRANSFER_KEY_CRC)) scr_io_remove_stale_copies(dst);
    }
  scr_kvtree_delete(&transfer);
}

static int daemon_running(void)
{
  if (scr.node_rank != 0 || daemon_alive()) return 1;
  remove_abandoned_copies();
  if (!async_respawned) {
    async_respawned = 1;
    scr_warn("asynchronous flush of dataset %d: the scr_transfer of this node exited: starting it again", async_id);
    if (daemon_ensure()) return 1;
  }
  scr_err("asynchronous flush of dataset %d: the scr_transfer of this node exited again", async_id);
  return 0;
}

/* ---- publish mode: the copies go to the stage, and an error only means
 * that the publish copies that file itself */

/* this rank's files handed over: 1 when the daemon is done with each
 * (copied, or given up with an error), 0 while it is not */
static int staged_state(const scr_kvtree* transfer)
{
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(async_list, SCR_TRANSFER_KEY_FILES)); e;
       e = scr_kvtree_next(e)) {
    scr_kvtree* f = scr_kvtree_get_kv(transfer, SCR_TRANSFER_KEY_FILES, scr_kvtree_elem_key(e));
    uint64_t size = 0, written = 0;
    scr_kvtree_get_uint64(f, SCR_TRANSFER_KEY_SIZE, &size);
    scr_kvtree_get_uint64(f, SCR_TRANSFER_KEY_WRITTEN, &written);
    if (f && !scr_kvtree_get_val(f, SCR_TRANSFER_KEY_ERROR) &&
        (written < size || !scr_kvtree_get_val(f, SCR_TRANSFER_KEY_CRC)))
      return 0;
  }
  return 1;
}

/* what the daemon recorded of the files of list (this rank's handed over),
 * by where it copied them: DST/<destination>/{WRITTEN, CRC, ERROR} */
static scr_kvtree* copies_of(const scr_kvtree* list, const scr_kvtree* transfer)
{
  scr_kvtree* copied = scr_kvtree_new();
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(list, SCR_TRANSFER_KEY_FILES)); e;
       e = scr_kvtree_next(e)) {
    scr_kvtree* f = scr_kvtree_get_kv(transfer, SCR_TRANSFER_KEY_FILES, scr_kvtree_elem_key(e));
    const char* dst = scr_kvtree_get_val(f, SCR_TRANSFER_KEY_DESTINATION);
    if (!dst) continue;
    scr_kvtree* done = scr_kvtree_add_kv(copied, "DST", dst);
    const char* keys[] = { SCR_TRANSFER_KEY_WRITTEN, SCR_TRANSFER_KEY_CRC, SCR_TRANSFER_KEY_ERROR };
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
      const char* value = scr_kvtree_get_val(f, keys[k]);
      if (value) scr_kvtree_set_kv(done, keys[k], value);
    }
  }
  return copied;
}

/* the flush in flight leaves the daemons' list, and is no longer in flight
 * (save: as set_flushing's) */
static void staged_forget(int id, int save)
{
  scr_kvtree_delete(&moves_pending);
  if (async_list) scr_transfer_file_update(transfer_path, remove_files, async_list);
  scr_kvtree_delete(&async_list);
  async_id = -1;
  set_flushing(id, 0, save);
}

int scr_flush_async_copied(void)
{
  /* a rank at a barrier looks at the node's file ten times a second at most */
  static double looked;
  static int answer, answered_id = -1;
  if (!scr.flush_publish || async_id < 0) return -1;
  double now = scr_log_seconds();
  if (answered_id == async_id && (answer == 0 || now - looked < 0.1)) return answer;
  answered_id = async_id;
  scr_kvtree* transfer = scr_kvtree_new();
  answer = scr_transfer_file_read(transfer_path, transfer) == SCR_SUCCESS && staged_state(transfer) ? 0 : 1;
  looked = now;
  scr_kvtree_delete(&transfer);
  return answer;
}

/* collective, once every rank's daemon is done with the files (transfer:
 * the node's file as it says so): published */
static void staged_publish(int id, const scr_kvtree* transfer)
{
  scr_kvtree* copied = copies_of(async_list, transfer);
  double start = async_start;
  /* a publish that succeeds writes the filemap */
  staged_forget(id, 0);
  if (scr_flush_publish(id, copied, 1, start, "async", NULL) != SCR_SUCCESS) scr_cache_save_filemap();
  scr_kvtree_delete(&copied);
}

/* collective; force: the daemons are stopped first, and what they did not
 * copy is copied by the publish. 1 when nothing is in flight afterwards */
static int staged_progress(int force)
{
  int id = async_id;
  scr_flush_async_tell_moves();
  if (force) {
    if (scr.node_rank == 0) daemon_halt();
    MPI_Barrier(scr.comm_node);
  }
  scr_kvtree* transfer = scr_kvtree_new();
  int done = 1, dead = 0;
  if (scr_transfer_file_read(transfer_path, transfer) != SCR_SUCCESS)
    scr_warn("asynchronous flush of dataset %d: cannot read %s: its files are copied at the publish", id,
             transfer_path);
  else if (!force && !daemon_running())
    dead = 1;
  else if (!force)
    done = staged_state(transfer);
  int mine[2] = { !done, dead }, all[2];
  MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, scr.comm_world);
  if (all[0] || all[1]) {
    scr_kvtree_delete(&transfer);
    /* a node's daemon is gone for good: the ranks copy what it left */
    return all[1] ? staged_progress(1) : 0;
  }
  staged_publish(id, transfer);
  scr_kvtree_delete(&transfer);
  return 1;
}

void scr_flush_async_publish(void)
{
  if (!scr.flush_publish || async_id < 0) return;
  scr_flush_async_tell_moves();
  /* the engine calls it outside SCR_Complete_output's own count */
  double start = scr_log_seconds();
  scr_kvtree* transfer = scr_kvtree_new();
  if (scr_transfer_file_read(transfer_path, transfer) != SCR_SUCCESS)
    scr_warn("asynchronous flush of dataset %d: cannot read %s: its files are copied at the publish", async_id,
             transfer_path);
  staged_publish(async_id, transfer);
  scr_kvtree_delete(&transfer);
  scr.stat_flush_seconds += scr_log_seconds() - start;
}

/* collective: the flush in flight given up, its stage removed */
static void staged_cancel(void)
{
  int id = async_id;
  if (scr.node_rank == 0) daemon_halt();
  MPI_Barrier(scr.comm_node);
  scr_flush_publish_abandon(id);
  staged_forget(id, 1);
  if (scr.rank == 0) scr_dbg(1, "the background flush of dataset %d is given up: a newer checkpoint is flushed", id);
  scr_event_log("FLUSH_FAILED", "dset=%d mode=async seconds=%.3f cancelled=1", id, scr_log_seconds() - async_start);
}

int scr_flush_async_progress(void)
{
  if (async_id < 0) return 1;
  if (scr.flush_publish) return staged_progress(0);
  int id = async_id;
  scr_kvtree* list = my_transfers(id, NULL);
  scr_kvtree* transfer = scr_kvtree_new();
  int state = -1;
  if (!list) scr_err("asynchronous flush of dataset %d: its files left the cache", id);
  else if (scr_transfer_file_read(transfer_path, transfer) != SCR_SUCCESS)
    scr_err("asynchronous flush of dataset %d: cannot read %s", id, transfer_path);
  else if (daemon_running()) state = my_state(list, transfer);
  int states[2] = { state == 0, state < 0 }, all[2];
  MPI_Allreduce(states, all, 2, MPI_INT, MPI_MAX, scr.comm_world);
  if (all[0] && !all[1]) {
    scr_kvtree_delete(&transfer);
    scr_kvtree_delete(&list);
    return 0;
  }
  /* every rank's files copied, or one failed: complete it either way */
  int ok = !all[1];
  scr_kvtree* rank2file = scr_kvtree_new();
  scr_kvtree* mine = scr_flush_rank2file_start(id, rank2file);
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e && ok;
       e = scr_kvtree_next(e)) {
    scr_kvtree* f = scr_kvtree_get_kv(transfer, SCR_TRANSFER_KEY_FILES, scr_kvtree_elem_key(e));
    uint64_t written = 0;
    scr_kvtree_get_uint64(f, SCR_TRANSFER_KEY_WRITTEN, &written);
    const char* crc = scr_kvtree_get_val(f, SCR_TRANSFER_KEY_CRC);
    ok = scr_flush_check_copy(id, scr_kvtree_elem_key(e), scr_kvtree_get_val(f, SCR_TRANSFER_KEY_DESTINATION),
                              scr_kvtree_elem_tree(e), SCR_SUCCESS, written,
                              crc ? (uint32_t) strtoul(crc, NULL, 16) : 0, mine);
  }
  if (ok) scr_flush_copy_attached(id);
  if (ok && scr.flush_redundancy) {
    scr_kvtree* copied = copies_of(list, transfer);
    scr_flush_redundancy_take(id, copied, mine);
    scr_kvtree_delete(&copied);
  }
  if (list) scr_transfer_file_update(transfer_path, remove_files, list);
  scr_kvtree_delete(&transfer);
  scr_kvtree_delete(&list);
  set_flushing(id, 0, 1);
  async_id = -1;
  scr_flush_finish(id, ok, rank2file, async_start, 1, "async");
  scr_kvtree_delete(&rank2file);
  return 1;
}

void scr_flush_async_wait(void)
{
  /* publish mode: what the throttled daemons have not copied yet is
   * copied by the ranks themselves, at full speed */
  if (scr.flush_publish && async_id >= 0 && !staged_progress(0)) staged_progress(1);
  while (!scr_flush_async_progress()) {
    struct timespec t = { 0, 50 * 1000 * 1000 };
    nanosleep(&t, NULL);
  }
}

void scr_flush_async_finish(int newer)
{
  if (async_id < 0 || scr_flush_async_progress()) return;
  if (scr.flush_publish && newer > async_id && scr.flush > 0) staged_cancel();
  else scr_flush_async_wait();
}

void scr_flush_async_finalize(void)
{
  scr_flush_async_wait();
  if (scr.node_rank == 0) daemon_stop();
  if (scr.node_rank == 0 && daemon_cpu > 0)
    scr_dbg(1, "the scr_transfer of %s used %.3f s of CPU for background flushes", scr.hostname, daemon_cpu);
  daemon_cpu = 0;
  free(transfer_path);
  transfer_path = NULL;
}
