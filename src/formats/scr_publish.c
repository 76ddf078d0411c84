/* scr_publish.c - the staging area of a flush, its commit record, the moves into
 * place and the recovery after a crash (see scr_publish.h for why and the layout). */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_fault.h"
#include "scr_dataset.h"
#include "scr_prefix_dir.h"
#include "scr_summary_file.h"
#include "scr_index_file.h"
#include "scr_flush_file.h"
#include "scr_publish.h"

#define SCR_PUBLISH_VERSION 1

/* "<prefix>/.scr/<stem>.<id><suffix>", malloc'd */
static char* publish_name(const char* prefix, const char* stem, int id, const char* suffix)
{
  char* path = NULL;
  if (asprintf(&path, "%s/%s/%s.%d%s", prefix, SCR_PREFIX_DIR_NAME, stem, id, suffix) < 0) return NULL;
  return path;
}

char* scr_publish_stage_dir(const char* prefix, int id)
{
  return publish_name(prefix, "stage", id, "");
}

char* scr_publish_stage_path(const char* prefix, int id, const char* relpath)
{
  char* dir = scr_publish_stage_dir(prefix, id);
  char* path = dir ? scr_path_join(dir, relpath) : NULL;
  free(dir);
  return path;
}

static char* publish_record_path(const char* prefix, int id)
{
  return publish_name(prefix, "publish", id, ".scr");
}

int scr_publish_stage_open(const char* prefix, int id, int* fd)
{
  *fd = -1;
  char* dir = scr_publish_stage_dir(prefix, id);
  int rc = !dir ? SCR_ERR_NOMEM : scr_prefix_dir_create(prefix);
  if (rc == SCR_SUCCESS && scr_io_check_own_dir(dir) != SCR_SUCCESS) rc = SCR_ERR_SECURITY;
  if (rc == SCR_SUCCESS && scr_io_mkdir_p(dir, 0777) != SCR_SUCCESS) {
    scr_err("cannot create %s: %s", dir, strerror(errno));
    rc = SCR_ERR_IO;
  }
  if (rc == SCR_SUCCESS) {
    /* the directory itself is locked (no file more on the parallel file
     * system), for the stage's life: never waited for, so a try suffices */
    int lock_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (lock_fd >= 0 && flock(lock_fd, LOCK_EX | LOCK_NB) == 0) {
      *fd = lock_fd;
    } else {
      scr_warn("cannot lock %s (%s): another job at this prefix directory may take the stage of dataset %d for "
               "one it left", dir, strerror(errno), id);
      if (lock_fd >= 0) close(lock_fd);
    }
  }
  free(dir);
  return rc;
}

int scr_publish_record_write(const char* prefix, int id, const scr_kvtree* record)
{
  char* path = publish_record_path(prefix, id);
  if (!path) return SCR_ERR_NOMEM;
  scr_kvtree* copy = scr_kvtree_copy(record);
  int rc = copy ? SCR_SUCCESS : SCR_ERR_NOMEM;
  if (copy) {
    scr_kvtree_set_kv_int(copy, "VERSION", SCR_PUBLISH_VERSION);
    rc = scr_kvtree_write_file_mode(path, copy, 1);
  }
  scr_kvtree_delete(&copy);
  free(path);
  return rc;
}

int scr_publish_record_read(const char* prefix, int id, scr_kvtree* record)
{
  char* path = publish_record_path(prefix, id);
  if (!path) return SCR_ERR_NOMEM;
  int rc = scr_kvtree_read_file(path, record);
  long long version = 0;
  scr_kvtree_get_int(record, "VERSION", &version);
  if (rc == SCR_SUCCESS && version != SCR_PUBLISH_VERSION) {
    scr_err("%s has version %lld, this library reads version %d", path, version, SCR_PUBLISH_VERSION);
    rc = SCR_ERR_CORRUPT;
  }
  /* it comes from a shared file system: it names nothing outside the prefix */
  scr_kvtree_elem* r;
  for (r = scr_kvtree_first(scr_kvtree_get(scr_kvtree_get(record, "RANK2FILE"), "RANK"));
       rc == SCR_SUCCESS && r; r = scr_kvtree_next(r)) {
    for (scr_kvtree_elem* f = scr_kvtree_first(scr_kvtree_get(scr_kvtree_elem_tree(r), "FILE")); f;
         f = scr_kvtree_next(f)) {
      const char* stage = scr_kvtree_get_val(scr_kvtree_elem_tree(f), SCR_PUBLISH_KEY_STAGE);
      if (!scr_path_is_safe_relative(scr_kvtree_elem_key(f)) || (stage && !scr_path_is_safe_relative(stage))) {
        scr_err("%s names a file outside the prefix directory: refusing to use it", path);
        rc = SCR_ERR_SECURITY;
        break;
      }
    }
  }
  free(path);
  return rc;
}

/* staged (a file of this user's, not a link) moved to dst; a file system
 * boundary inside the prefix is crossed by a copy */
static int publish_move(const char* staged, const char* dst)
{
  char* parent = scr_path_dirname(dst);
  int rc = parent && scr_io_mkdir_p(parent, 0777) == SCR_SUCCESS ? SCR_SUCCESS : SCR_ERR_IO;
  free(parent);
  if (rc == SCR_SUCCESS && rename(staged, dst) != 0) {
    rc = errno == EXDEV && scr_io_copy_file(staged, dst, 0777, NULL, NULL) == SCR_SUCCESS && unlink(staged) == 0
             ? SCR_SUCCESS : SCR_ERR_IO;
  }
  if (rc != SCR_SUCCESS) scr_err("cannot move %s to %s: %s", staged, dst, strerror(errno));
  return rc;
}

/* 1 when a and b name one file */
static int publish_same_file(const char* a, const char* b)
{
  struct stat x, y;
  return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int scr_publish_move_rank(const char* prefix, int id, const scr_kvtree* rank, int* failed)
{
  int bad = 0;
  /* LINK/<group> = where the staged name of a file with several went */
  scr_kvtree* heads = scr_kvtree_new();
  scr_kvtree* files = scr_kvtree_get(rank, "FILE");
  for (int pass = 0; pass < 2; pass++) {
    for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
      const scr_kvtree* f = scr_kvtree_elem_tree(e);
      const char* stage = scr_kvtree_get_val(f, SCR_PUBLISH_KEY_STAGE);
      const char* group = scr_kvtree_get_val(f, "LINK");
      char* dst = scr_path_join(prefix, scr_kvtree_elem_key(e));
      if (!dst) {
        bad++;
        continue;
      }
      if (pass == 0 && stage) {
        char* staged = scr_publish_stage_path(prefix, id, stage);
        struct stat st;
        /* gone from the stage: moved by an earlier attempt */
        if (!staged || (lstat(staged, &st) == 0 && publish_move(staged, dst) != SCR_SUCCESS)) bad++;
        free(staged);
        scr_fault_point("publish"); /* some files in place, not all */
        if (group && !scr_kvtree_get_kv(heads, "LINK", group))
          scr_kvtree_set_kv(scr_kvtree_add_kv(heads, "LINK", group), "DST", dst);
      } else if (pass == 1 && !stage && group) {
        /* another name of a file moved above: the same file there too */
        const char* head = scr_kvtree_get_val(scr_kvtree_get_kv(heads, "LINK", group), "DST");
        if (head && !publish_same_file(head, dst) && scr_io_link_file(head, dst, 0777) != SCR_SUCCESS) {
          scr_err("cannot link %s to %s: %s", dst, head, strerror(errno));
          bad++;
        }
      }
      free(dst);
    }
  }
  scr_kvtree_delete(&heads);
  if (failed) *failed = bad;
  return bad ? SCR_ERR_IO : SCR_SUCCESS;
}

/* ---- the dataset's metadata */

struct publish_index_arg {
  int id;
  const scr_kvtree* desc;
  int current;    /* a checkpoint becomes the index's current one */
  int complete;
};

static int publish_add_to_index(scr_kvtree* index, void* arg)
{
  struct publish_index_arg* a = arg;
  const char* name = scr_dataset_get_name(a->desc);
  /* one that was the current checkpoint stays so under a new name */
  const char* old = scr_index_file_get_name(index, a->id);
  const char* current = scr_index_file_get_current(index);
  int was_current = old && current && strcmp(old, current) == 0;
  scr_index_file_add(index, a->id, name, a->desc, a->complete);
  scr_index_file_set_flushed(index, a->id, time(NULL));
  if (!a->complete && was_current) scr_index_file_unset_current(index);
  if (a->complete && (a->current || was_current) && scr_dataset_is_checkpoint(a->desc))
    scr_index_file_set_current(index, name);
  return SCR_SUCCESS;
}

int scr_publish_metadata(const char* prefix, int id, const scr_kvtree* desc, const scr_kvtree* rank2file,
                         int current, int complete)
{
  long long ranks = 0;
  scr_kvtree_get_int(rank2file, "RANKS", &ranks);
  /* the STAGE keys say where the bytes waited: not part of the map */
  scr_kvtree* map = scr_kvtree_copy(rank2file);
  for (scr_kvtree_elem* r = scr_kvtree_first(scr_kvtree_get(map, "RANK")); r; r = scr_kvtree_next(r))
    for (scr_kvtree_elem* f = scr_kvtree_first(scr_kvtree_get(scr_kvtree_elem_tree(r), "FILE")); f;
         f = scr_kvtree_next(f))
      scr_kvtree_unset(scr_kvtree_elem_tree(f), SCR_PUBLISH_KEY_STAGE);
  char* dir = scr_summary_dataset_dir(prefix, id);
  int rc = !map || !dir ? SCR_ERR_NOMEM : scr_io_mkdir_p(dir, 0777);
  if (rc == SCR_SUCCESS) rc = scr_rank2file_write(prefix, id, map);
  if (rc == SCR_SUCCESS) rc = scr_summary_file_write(prefix, id, desc, (int) ranks);
  if (rc == SCR_SUCCESS) {
    struct publish_index_arg arg = { id, desc, current, complete };
    rc = scr_index_file_update(prefix, publish_add_to_index, &arg);
  }
  if (rc == SCR_SUCCESS)
    rc = scr_flush_file_set_location(prefix, id, scr_dataset_get_name(desc), SCR_FLUSH_FILE_PFS);
  free(dir);
  scr_kvtree_delete(&map);
  return rc;
}

/* the stage, the record and the lock gone, the record after the stage: a
 * record found without its stage is a publish whose moves are all done */
static int publish_remove(const char* prefix, int id)
{
  char* dir = scr_publish_stage_dir(prefix, id);
  char* record = publish_record_path(prefix, id);
  int rc = dir && record ? scr_io_remove_tree(dir) : SCR_ERR_NOMEM;
  if (rc == SCR_SUCCESS && unlink(record) != 0 && errno != ENOENT) rc = SCR_ERR_IO;
  free(record);
  free(dir);
  return rc;
}

int scr_publish_finish(const char* prefix, int id, const scr_kvtree* record)
{
  long long current = 0, complete = 0;
  scr_kvtree_get_int(record, "CURRENT", &current);
  scr_kvtree_get_int(record, "COMPLETE", &complete);
  int rc = scr_publish_metadata(prefix, id, scr_kvtree_get(record, "DSETDESC"), scr_kvtree_get(record, "RANK2FILE"),
                                (int) current, (int) complete);
  scr_fault_point("published"); /* every file in place and indexed, the record not yet removed */
  if (rc == SCR_SUCCESS) rc = publish_remove(prefix, id);
  return rc;
}

/* ---- the finish in a thread of its own (scr_publish_finish_later) */

static struct {
  int running;
  pthread_t thread;
  char* prefix;
  int id;
  scr_kvtree* record;
  int lock_fd;
  void (*start)(void);
} finisher;
/* the thread finishing (its kernel id, 0 when none): its own metadata
 * updates do not wait for it. Not thread-local storage: this library is
 * loaded by dlopen under the preload, where LeakSanitizer's scan of dynamic
 * TLS crashed at exit ("Tracer caught signal 11" in ScanRangeForPointers, a
 * known fault of the runtime), and a compare of ids needs none */
static pid_t finisher_tid;

static pid_t finisher_this_thread(void)
{
  return (pid_t) syscall(SYS_gettid);
}

static int finisher_is_this_thread(void)
{
  return __atomic_load_n(&finisher_tid, __ATOMIC_RELAXED) == finisher_this_thread();
}

/* The finisher waits for scr_publish_release before it writes: the caller
 * returns to the program first. Its writes are file syncs on the prefix
 * directory and a few serialized trees, which on a node with a rank per core
 * took a rank's core, and the disk, in the middle of the close() that
 * published (rank 0's, on which every rank then waited). A second at most:
 * a program that never comes back to the layer still has its index. */
#define FINISHER_PATIENCE_SECONDS 1
static pthread_mutex_t finisher_gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finisher_gate = PTHREAD_COND_INITIALIZER;
static int finisher_released = 1; /* atomic; changed under the gate's lock */

static void finisher_wait_for_release(void)
{
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += FINISHER_PATIENCE_SECONDS;
  pthread_mutex_lock(&finisher_gate_lock);
  while (!__atomic_load_n(&finisher_released, __ATOMIC_RELAXED) &&
         pthread_cond_timedwait(&finisher_gate, &finisher_gate_lock, &until) == 0) {}
  pthread_mutex_unlock(&finisher_gate_lock);
}

void scr_publish_release(void)
{
  /* every routed close() asks: nothing to do but a load when none waits */
  if (__atomic_load_n(&finisher_released, __ATOMIC_RELAXED)) return;
  pthread_mutex_lock(&finisher_gate_lock);
  __atomic_store_n(&finisher_released, 1, __ATOMIC_RELAXED);
  pthread_cond_signal(&finisher_gate);
  pthread_mutex_unlock(&finisher_gate_lock);
}

/* own_thread: NULL when the caller finishes it itself, without a thread */
static void* finisher_main(void* own_thread)
{
  __atomic_store_n(&finisher_tid, finisher_this_thread(), __ATOMIC_RELAXED);
  if (own_thread) {
    /* released, it waits for its turn rather than preempt the thread that
     * released it on that thread's way back to the program (as scr_transfer
     * does, sched(7)); for this thread only */
#ifdef SCHED_BATCH
    struct sched_param batch = { 0 };
    (void) pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch);
#endif
    finisher_wait_for_release();
  }
  if (finisher.start) finisher.start();
  if (scr_publish_finish(finisher.prefix, finisher.id, finisher.record) != SCR_SUCCESS)
    scr_err("cannot record dataset %d on %s: the next run does, from %s/%s/publish.%d.scr", finisher.id,
            finisher.prefix, finisher.prefix, SCR_PREFIX_DIR_NAME, finisher.id);
  /* the stage is gone: another job's recovery may look now */
  scr_io_unlock(finisher.lock_fd);
  return NULL;
}

void scr_publish_settle(void)
{
  /* the finisher's own thread first: it must not read running, which the
   * thread that started it writes after pthread_create */
  if (finisher_is_this_thread() || !finisher.running) return;
  scr_publish_release();
  pthread_join(finisher.thread, NULL);
  __atomic_store_n(&finisher_tid, 0, __ATOMIC_RELAXED);
  finisher.running = 0;
  free(finisher.prefix);
  scr_kvtree_delete(&finisher.record);
}

void scr_publish_finish_later(const char* prefix, int id, scr_kvtree* record, int lock_fd,
                               void (*thread_start)(void))
{
  scr_publish_settle();
  finisher.prefix = strdup(prefix);
  finisher.id = id;
  finisher.record = record;
  finisher.lock_fd = lock_fd;
  finisher.start = thread_start;
  pthread_mutex_lock(&finisher_gate_lock);
  __atomic_store_n(&finisher_released, 0, __ATOMIC_RELAXED); /* no finisher runs: settled above */
  pthread_mutex_unlock(&finisher_gate_lock);
  if (finisher.prefix && pthread_create(&finisher.thread, NULL, finisher_main, &finisher) == 0) {
    finisher.running = 1;
    return;
  }
  /* no thread: here and now */
  finisher_main(NULL);
  __atomic_store_n(&finisher_tid, 0, __ATOMIC_RELAXED);
  free(finisher.prefix);
  scr_kvtree_delete(&finisher.record);
}

void scr_publish_abandon(const char* prefix, int id, const char* name)
{
  publish_remove(prefix, id);
  if (name) scr_flush_file_set_location(prefix, id, name, SCR_FLUSH_FILE_CACHE);
}

/* ---- recovery */

/* 1 when a running job holds the stage of dataset id */
static int publish_stage_held(const char* prefix, int id)
{
  char* dir = scr_publish_stage_dir(prefix, id);
  int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  int held = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  if (fd >= 0) close(fd);
  free(dir);
  return held;
}

/* complete the publish of dataset id from its record */
static int publish_roll_forward(const char* prefix, int id, scr_kvtree* published)
{
  scr_kvtree* record = scr_kvtree_new();
  int rc = scr_publish_record_read(prefix, id, record);
  const char* name = scr_dataset_get_name(scr_kvtree_get(record, "DSETDESC"));
  int failed = 0;
  if (rc == SCR_SUCCESS) {
    for (scr_kvtree_elem* r = scr_kvtree_first(scr_kvtree_get(scr_kvtree_get(record, "RANK2FILE"), "RANK")); r;
         r = scr_kvtree_next(r)) {
      int bad = 0;
      scr_publish_move_rank(prefix, id, scr_kvtree_elem_tree(r), &bad);
      failed += bad;
    }
    /* a file that cannot be moved leaves the dataset indexed, not offered */
    if (failed) scr_kvtree_set_kv_int(record, "COMPLETE", 0);
    rc = scr_publish_finish(prefix, id, record);
  }
  if (rc == SCR_SUCCESS) {
    scr_info("dataset %d (%s) had been committed to %s by a job that died while publishing it: published now%s", id,
             name ? name : "?", prefix, failed ? ", not whole" : "");
    if (published && name) scr_kvtree_set_kv(scr_kvtree_add_kv_int(published, "DSET", id), "NAME", name);
  } else {
    scr_err("cannot complete the publish of dataset %d in %s: %s", id, prefix, scr_error_string(rc));
  }
  scr_kvtree_delete(&record);
  return rc;
}

/* ID/<id> for each stage and each record, the latter with RECORD = 1 */
static scr_kvtree* publish_ids(const char* prefix)
{
  char* dir = scr_prefix_dir_file(prefix, NULL);
  DIR* d = dir ? opendir(dir) : NULL;
  free(dir);
  scr_kvtree* ids = scr_kvtree_new();
  for (struct dirent* e = d ? readdir(d) : NULL; e; e = readdir(d)) {
    int id = -1, end = 0;
    if (sscanf(e->d_name, "publish.%d.scr%n", &id, &end) == 1 && e->d_name[end] == '\0' && id >= 0)
      scr_kvtree_set_kv(scr_kvtree_add_kv_int(ids, "ID", id), "RECORD", "1");
    else if (sscanf(e->d_name, "stage.%d%n", &id, &end) == 1 && id >= 0 && e->d_name[end] == '\0')
      scr_kvtree_add_kv_int(ids, "ID", id);
  }
  if (d) closedir(d);
  return ids;
}

void scr_publish_list(const char* prefix, scr_kvtree* where)
{
  scr_kvtree* ids = publish_ids(prefix);
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(ids, "ID")); e; e = scr_kvtree_next(e)) {
    int id = (int) scr_kvtree_elem_key_int(e);
    int committed = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "RECORD") != NULL;
    scr_kvtree* dset = scr_kvtree_add_kv_int(where, "DSET", id);
    scr_kvtree_set_kv(dset, "LOCATION", committed ? SCR_FLUSH_FILE_PUBLISHING : SCR_FLUSH_FILE_FLUSHING);
    /* a dataset flushed from its completion on is in flush.scr only once
     * published: its name, when committed, is the record's */
    scr_kvtree* record = scr_kvtree_new();
    const char* name = NULL;
    if (committed && !scr_kvtree_get_val(dset, "NAME") && scr_publish_record_read(prefix, id, record) == SCR_SUCCESS)
      name = scr_dataset_get_name(scr_kvtree_get(record, "DSETDESC"));
    if (name) scr_kvtree_set_kv(dset, "NAME", name);
    scr_kvtree_delete(&record);
  }
  scr_kvtree_delete(&ids);
}

int scr_publish_recover(const char* prefix, scr_kvtree* published)
{
  scr_publish_settle();
  /* the ids first: the directory changes as they are handled */
  scr_kvtree* ids = publish_ids(prefix);
  int rc = SCR_SUCCESS;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(ids, "ID")); e; e = scr_kvtree_next(e)) {
    int id = (int) scr_kvtree_elem_key_int(e);
    if (publish_stage_held(prefix, id)) continue;
    if (scr_kvtree_get_val(scr_kvtree_elem_tree(e), "RECORD")) {
      if (publish_roll_forward(prefix, id, published) != SCR_SUCCESS) rc = SCR_ERR_IO;
    } else {
      /* no commit: the program's paths never showed any of it */
      scr_dbg(1, "removing the stage of dataset %d in %s, left by a flush that did not commit", id, prefix);
      publish_remove(prefix, id);
      if (published) scr_kvtree_add_kv_int(published, "ABANDONED", id);
    }
  }
  scr_kvtree_delete(&ids);
  return rc;
}
