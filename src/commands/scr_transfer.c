/* scr_transfer.c - the scr_transfer daemon: copies, in the background and within
 * its bandwidth and CPU limits, the files a node's ranks list in their transfer file. */
#include "config.h"
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_kvtree.h"
#include "scr_transfer_file.h"

/* How often an idle daemon looks at its file, and how many bytes it copies
 * between two looks at the command while busy (a STOP or EXIT waits no longer) */
#define TRANSFER_POLL_SECONDS 0.1
#define TRANSFER_COMMAND_EVERY (64ull << 20)

static const char* transfer_path;
static pid_t transfer_parent;   /* 0: run until told to exit */
static volatile sig_atomic_t transfer_stop_signal;
/* SIGUSR1: new work in the file, look now rather than at the next poll */
static volatile sig_atomic_t transfer_wake_signal;
/* when the daemon last woke: all it does until it sleeps again (copies,
 * renames, its own bookkeeping) counts against PERCENT */
static double transfer_busy_since;

static void transfer_usage(FILE* out)
{
  fprintf(out,
    "Usage: scr_transfer [--parent PID] FILE\n"
    "Copy the files listed in the transfer file FILE (<control dir>/transfer.scr)\n"
    "to their destinations while its COMMAND is RUN, within its BW (bytes/s) and\n"
    "PERCENT (of a CPU) limits, recording each file's WRITTEN and CRC, and DONE\n"
    "once all are copied. The library starts one per node when SCR_FLUSH_ASYNC=1.\n"
    "\n"
    "  --parent PID   exit when process PID (the rank that started it) is gone\n"
    "  -h, --help     print this help\n"
    "\n"
    "It exits when COMMAND is EXIT, when FILE is removed after it existed, and on\n"
    "SIGTERM or SIGINT (recording what it copied). SIGUSR1 makes an idle daemon\n"
    "look at FILE at once rather than at its next poll (every 0.1 s).\n");
}

static double transfer_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

/* idle: a wake-up ends the sleep early (the pacing sleeps ignore it) */
static void transfer_sleep_until_woken(double seconds, int wakeable)
{
  if (seconds <= 0) return;
  struct timespec t = { (time_t) seconds, (long) ((seconds - (double) (time_t) seconds) * 1e9) };
  while (nanosleep(&t, &t) != 0 && errno == EINTR && !transfer_stop_signal && !(wakeable && transfer_wake_signal)) {}
}

static void transfer_sleep(double seconds)
{
  transfer_sleep_until_woken(seconds, 0);
}

static int transfer_orphaned(void)
{
  return transfer_stop_signal || (transfer_parent > 0 && getppid() != transfer_parent);
}

static double transfer_double(const scr_kvtree* t, const char* key)
{
  const char* v = scr_kvtree_get_val(t, key);
  double d = v ? strtod(v, NULL) : 0.0;
  return d > 0 ? d : 0.0;
}

/* ---- one file */
struct transfer_job {
  char* src;
  char* dst;
  uint64_t size;
  double bw, percent;
  double start;
  uint64_t checked;     /* bytes copied at the last look at the command */
  /* how it ended */
  int expecting;        /* EXPECT was given: the copy is checked against expect */
  uint32_t expect;
  int rc;
  uint32_t crc;
  uint64_t copied;
  char why[512];
};

static scr_kvtree* transfer_entry_of(const scr_kvtree* t, const char* src, const char* dst, const char** now);

/* after each buffer: stay within the limits; give up on STOP, EXIT or orphaning */
static int transfer_pace(uint64_t copied, void* arg)
{
  struct transfer_job* job = arg;
  double now = transfer_now();
  if (job->percent > 0 && job->percent < 100) {
    /* sleep so that busy / (busy + asleep) stays at percent */
    transfer_sleep((now - transfer_busy_since) * (100.0 / job->percent - 1.0));
  }
  if (job->bw > 0) transfer_sleep((double) copied / job->bw - (transfer_now() - job->start));
  transfer_busy_since = transfer_now();
  if (transfer_orphaned()) return 1;
  if (copied - job->checked >= TRANSFER_COMMAND_EVERY) {
    job->checked = copied;
    scr_kvtree* t = scr_kvtree_new();
    const char* named;
    int go = scr_transfer_file_read(transfer_path, t) == SCR_SUCCESS &&
             strcmp(scr_kvtree_get_val(t, SCR_TRANSFER_KEY_COMMAND) ?: "", SCR_TRANSFER_COMMAND_RUN) == 0 &&
             transfer_entry_of(t, job->src, job->dst, &named) != NULL;
    scr_kvtree_delete(&t);
    if (!go) return 1;
  }
  return 0;
}

/* ---- the file's tree, under the lock. Files are taken and recorded in
 * batches: each look reads and each record rewrites the whole file, which
 * with thousands of small files per node would cost more than the copies. */
#define TRANSFER_BATCH_FILES 64
#define TRANSFER_BATCH_BYTES (256ull << 20)

struct transfer_pick {
  struct transfer_job jobs[TRANSFER_BATCH_FILES];   /* the next files to copy */
  int count;
  int exit;                   /* COMMAND is EXIT */
};

static int transfer_pick_next(scr_kvtree* t, void* arg)
{
  struct transfer_pick* pick = arg;
  const char* command = scr_kvtree_get_val(t, SCR_TRANSFER_KEY_COMMAND);
  const char* state = SCR_TRANSFER_STATE_STOPPED;
  int changed = 0;
  if (command && strcmp(command, SCR_TRANSFER_COMMAND_EXIT) == 0) {
    pick->exit = 1;
  } else if (command && strcmp(command, SCR_TRANSFER_COMMAND_RUN) == 0) {
    int pending = 0;
    uint64_t bytes = 0;
    double bw = transfer_double(t, SCR_TRANSFER_KEY_BW), percent = transfer_double(t, SCR_TRANSFER_KEY_PERCENT);
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(t, SCR_TRANSFER_KEY_FILES)); e; e = scr_kvtree_next(e)) {
      scr_kvtree* f = scr_kvtree_elem_tree(e);
      uint64_t size = 0, written = 0;
      scr_kvtree_get_uint64(f, SCR_TRANSFER_KEY_SIZE, &size);
      scr_kvtree_get_uint64(f, SCR_TRANSFER_KEY_WRITTEN, &written);
      if (written >= size && scr_kvtree_get_val(f, SCR_TRANSFER_KEY_CRC)) continue;
      if (scr_kvtree_get_val(f, SCR_TRANSFER_KEY_ERROR)) continue;
      const char* dst = scr_kvtree_get_val(f, SCR_TRANSFER_KEY_DESTINATION);
      if (!dst) {
        scr_kvtree_set_kv(f, SCR_TRANSFER_KEY_ERROR, "no DESTINATION");
        changed = 1;
        continue;
      }
      pending = 1;
      struct transfer_job* job = &pick->jobs[pick->count];
      job->src = strdup(scr_kvtree_elem_key(e));
      job->dst = strdup(dst);
      if (!job->src || !job->dst) {   /* out of memory: the next look tries again */
        free(job->src);
        free(job->dst);
        job->src = job->dst = NULL;
        break;
      }
      pick->count++;
      const char* expect = scr_kvtree_get_val(f, SCR_TRANSFER_KEY_EXPECT);
      job->expecting = expect != NULL;
      job->expect = expect ? (uint32_t) strtoul(expect, NULL, 16) : 0;
      job->size = size;
      job->bw = bw;
      job->percent = percent;
      bytes += size;
      if (pick->count == TRANSFER_BATCH_FILES || bytes >= TRANSFER_BATCH_BYTES) break;
    }
    const char* flag = scr_kvtree_get_val(t, SCR_TRANSFER_KEY_FLAG);
    if (pending) {
      state = SCR_TRANSFER_STATE_RUNNING;
      if (flag) scr_kvtree_unset(t, SCR_TRANSFER_KEY_FLAG), changed = 1;
    } else if (!flag && scr_kvtree_size(scr_kvtree_get(t, SCR_TRANSFER_KEY_FILES)) > 0) {
      scr_kvtree_set_kv(t, SCR_TRANSFER_KEY_FLAG, SCR_TRANSFER_FLAG_DONE);
      changed = 1;
    }
  }
  const char* was = scr_kvtree_get_val(t, SCR_TRANSFER_KEY_STATE);
  if (scr_kvtree_size(t) > 0 && (!was || strcmp(was, state) != 0)) {
    scr_kvtree_set_kv(t, SCR_TRANSFER_KEY_STATE, state);
    changed = 1;
  }
  /* an idle daemon looks often: it writes only what changed */
  return changed ? SCR_SUCCESS : SCR_ERR_NOENT;
}

/* the entry of the file copied to dst, under whatever name the library
 * gives its source now (the program may rename it while it is copied) */
static scr_kvtree* transfer_entry_of(const scr_kvtree* t, const char* src, const char* dst, const char** now)
{
  scr_kvtree* f = scr_kvtree_get_kv(t, SCR_TRANSFER_KEY_FILES, src);
  *now = src;
  for (scr_kvtree_elem* e = f ? NULL : scr_kvtree_first(scr_kvtree_get(t, SCR_TRANSFER_KEY_FILES)); e;
       e = scr_kvtree_next(e)) {
    const char* to = scr_kvtree_get_val(scr_kvtree_elem_tree(e), SCR_TRANSFER_KEY_DESTINATION);
    if (to && strcmp(to, dst) == 0) {
      *now = scr_kvtree_elem_key(e);
      return scr_kvtree_elem_tree(e);
    }
  }
  return f;
}

/* how each copy of a batch ended: recorded for the files still wanted; a
 * file the library took back meanwhile (its program deleted it) must not
 * stay where the copy put it */
static int transfer_record(scr_kvtree* t, void* arg)
{
  struct transfer_pick* pick = arg;
  for (int i = 0; i < pick->count; i++) {
    struct transfer_job* job = &pick->jobs[i];
    if (job->rc == SCR_ERR_FAILURE) continue;   /* given up on purpose: tried again when asked */
    const char* now;
    scr_kvtree* f = transfer_entry_of(t, job->src, job->dst, &now);
    const char* dst = scr_kvtree_get_val(f, SCR_TRANSFER_KEY_DESTINATION);
    if (!f || !dst || strcmp(dst, job->dst) != 0) {
      if (job->rc == SCR_SUCCESS) unlink(job->dst);
    } else if (job->rc == SCR_SUCCESS) {
      scr_kvtree_set_kv_uint64(f, SCR_TRANSFER_KEY_WRITTEN, job->copied);
      scr_kvtree_set_kvf(f, SCR_TRANSFER_KEY_CRC, "0x%08x", job->crc);
    } else {
      scr_kvtree_set_kv(f, SCR_TRANSFER_KEY_ERROR, job->why);
    }
  }
  return SCR_SUCCESS;
}

/* the source to copy to dst again after the one picked was not found: its
 * name as the library lists it now, when the file is there (malloc'd; NULL:
 * no longer wanted, or not found). The library renames the file, then its
 * entry: a name still listed and gone is looked at again a few times. */
static char* transfer_renamed(const char* src, const char* dst)
{
  char* renamed = NULL;
  for (int look = 0; look < 10 && !renamed && !transfer_orphaned(); look++) {
    scr_kvtree* t = scr_kvtree_new();
    const char* now = src;
    int listed = scr_transfer_file_read(transfer_path, t) == SCR_SUCCESS && transfer_entry_of(t, src, dst, &now);
    if (listed && (strcmp(now, src) != 0 || access(src, F_OK) == 0)) renamed = strdup(now);
    scr_kvtree_delete(&t);
    if (!listed) break;
    if (!renamed) transfer_sleep(0.02);
  }
  return renamed;
}

static void transfer_copy(struct transfer_job* job)
{
  job->start = transfer_now();
  job->checked = 0;
  job->rc = scr_io_copy_file_paced_expecting(job->src, job->dst, 0755, job->expecting ? &job->expect : NULL,
                                             &job->crc, &job->copied, transfer_pace, job);
  char* renamed = job->rc == SCR_ERR_NOENT ? transfer_renamed(job->src, job->dst) : NULL;
  if (renamed) {
    /* renamed by the program after the batch was picked: once more, from there */
    free(job->src);
    job->src = renamed;
    job->rc = scr_io_copy_file_paced_expecting(job->src, job->dst, 0755, job->expecting ? &job->expect : NULL,
                                               &job->crc, &job->copied, transfer_pace, job);
  }
  if (job->rc == SCR_ERR_CORRUPT) {
    snprintf(job->why, sizeof(job->why), "CRC32 of the cached file is 0x%08x, 0x%08x was recorded: the cached copy "
             "is corrupt; %s was left as it was", job->crc, job->expect, job->dst);
  } else if (job->rc != SCR_SUCCESS && job->rc != SCR_ERR_FAILURE) {
    snprintf(job->why, sizeof(job->why), "copy to %s failed: %s", job->dst, scr_error_string(job->rc));
  } else if (job->rc == SCR_SUCCESS && job->copied != job->size) {
    snprintf(job->why, sizeof(job->why), "%llu bytes copied, %llu expected: the cached file changed",
             (unsigned long long) job->copied, (unsigned long long) job->size);
    job->rc = SCR_ERR_INVALID;
  }
}

static void transfer_on_signal(int sig)
{
  if (sig == SIGUSR1) transfer_wake_signal = 1;
  else transfer_stop_signal = 1;
}

int main(int argc, char** argv)
{
  scr_log_program = "scr_transfer";
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      transfer_usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--parent") && i + 1 < argc) {
      transfer_parent = (pid_t) atol(argv[++i]);
    } else {
      scr_err("unknown option '%s': see scr_transfer --help", argv[i]);
      return 2;
    }
  }
  if (argc - i != 1) {
    scr_err("give one transfer file: see scr_transfer --help");
    return 2;
  }
  transfer_path = argv[i];
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = transfer_on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
  /* the library starts it with SIGUSR1 blocked until the handler is here */
  sigset_t wake;
  sigemptyset(&wake);
  sigaddset(&wake, SIGUSR1);
  sigprocmask(SIG_UNBLOCK, &wake, NULL);
  /* the rank that started it may be killed without a word: then it stops
   * too, at its next look (PR_SET_PDEATHSIG would follow the thread that
   * started it, which may end long before the rank) */

  /* a copier, not a program: woken with new work (SIGUSR1, which a rank
   * sends inside the close() that completed a checkpoint) it waits for the
   * scheduler's next turn instead of taking the core of a rank on its way
   * back to the program. It keeps its fair share of the CPU (sched(7)) */
#ifdef SCHED_BATCH
  struct sched_param batch = { 0 };
  if (sched_setscheduler(0, SCHED_BATCH, &batch) != 0)
    scr_dbg(1, "scr_transfer: cannot take SCHED_BATCH: %s", strerror(errno));
#endif
  int seen = 0;
  static struct transfer_pick pick;
  transfer_busy_since = transfer_now();
  while (!transfer_orphaned()) {
    memset(&pick, 0, sizeof(pick));
    int exists = access(transfer_path, F_OK) == 0;
    if (seen && !exists) break;
    seen |= exists;
    int rc = exists ? scr_transfer_file_update(transfer_path, transfer_pick_next, &pick) : SCR_ERR_NOENT;
    if (rc != SCR_SUCCESS && rc != SCR_ERR_NOENT) {
      /* a damaged or unwritable file: the library will say so */
      for (int i = 0; i < pick.count; i++) {
        free(pick.jobs[i].src);
        free(pick.jobs[i].dst);
      }
      transfer_sleep(1.0);
      continue;
    }
    if (pick.exit) break;
    for (int i = 0; i < pick.count; i++) {
      /* a stop, an exit or an orphaned daemon gives up the rest of the batch */
      if (i > 0 && pick.jobs[i - 1].rc == SCR_ERR_FAILURE) pick.jobs[i].rc = SCR_ERR_FAILURE;
      else transfer_copy(&pick.jobs[i]);
    }
    if (pick.count > 0) {
      scr_transfer_file_update(transfer_path, transfer_record, &pick);
    } else {
      if (!transfer_wake_signal) transfer_sleep_until_woken(TRANSFER_POLL_SECONDS, 1);
      transfer_wake_signal = 0;
      transfer_busy_since = transfer_now();
    }
    for (int i = 0; i < pick.count; i++) {
      free(pick.jobs[i].src);
      free(pick.jobs[i].dst);
    }
  }
  return 0;
}
