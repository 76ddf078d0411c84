/* scr_preload_engine.c - turns the opens and closes of an unmodified program into
 * SCR datasets: start at the first matching open, completion at the rule's boundary. */
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

/* A rank has at most one dataset in progress (scr.in_output). Every rank
 * starts the same sequence of datasets, so ids agree without talking; the
 * name is agreed at completion. */
static struct {
  int active;              /* a dataset is in progress on this rank */
  long long step;          /* its {step}; -1 while not known (its name is provisional) */
  int boundary;            /* enum scr_preload_rule_boundary */
  long long expected;      /* files to close before a CLOSE completion */
  int opened, closed;      /* routed opens of the dataset, and their last closes */
  int broken;              /* a file could not be routed: the dataset is invalid */
  long long done_step;     /* {step} of the last completed dataset, -1 if none */
  int done_id;             /* id of the newest dataset completed in this run, -1 */
  int barrier_rules;       /* some rule completes at MPI_Barrier */
  const scr_preload_rule* rule;       /* the rule that began the dataset */
  const scr_preload_rule* done_rule;  /* the one that began the last completed dataset */
  char* reopening;         /* a file of it closed inside MPI_File_open, which opens it again */
} engine = { .step = -1, .done_step = -1, .done_id = -1 };

/* a meeting point after which no file still mapped (scr_engine_mapped_watch)
 * waits for a later one: MPI_Finalize, the next dataset's completion */
static const char* engine_last_point = NULL;
static int engine_finalizing = 0;

/* the rule a target matched, or NULL */
const scr_preload_rule* scr_engine_rule(const scr_preload_target* target)
{
  return target->rules ? scr_preload_rules_at(target->rules, target->match.rule) : NULL;
}

int scr_engine_would_complete(const scr_preload_target* target)
{
  const scr_preload_rule* rule = scr_engine_rule(target);
  return rule && rule->has_step && engine.active && engine.step >= 0 && engine.step != target->match.step;
}

void scr_engine_file_free(struct scr_engine_file* f)
{
  if (!f) return;
  free(f->orig);
  free(f->relpath);
  free(f->cache);
  free(f);
}

/* ---- datasets */

/* The dataset name: the path up to the component that holds {step}, with
 * the rank digits, when they are in it, spelled "{rank}" so that every rank
 * proposes the same name ("ckpt.12", "restart_{rank}_000012.dat"). */
char* scr_engine_dataset_name(const scr_preload_target* t, const char* relpath)
{
  size_t rel_start = strlen(t->path) - strlen(relpath);
  size_t end = t->match.step_offset + t->match.step_length;
  while (end < t->length && t->path[end] != '/') end++;
  if (end <= rel_start) return strdup(relpath);
  size_t rank_at = t->match.rank_length ? t->match.rank_offset : (size_t) -1;
  size_t length = end - rel_start + 8;
  char* name = malloc(length + 1);
  if (!name) return NULL;
  size_t out = 0;
  for (size_t i = rel_start; i < end; i++) {
    if (i == rank_at) {
      memcpy(name + out, "{rank}", 6);
      out += 6;
      i += t->match.rank_length - 1;
    } else {
      name[out++] = t->path[i];
    }
  }
  name[out] = '\0';
  return name;
}

/* begin a dataset on this rank, without waiting for the others */
static void engine_begin(const char* name, const scr_preload_rule* rule, long long step)
{
  int flags = rule && rule->type == SCR_PRELOAD_TYPE_OUTPUT ? SCR_FLAG_OUTPUT : SCR_FLAG_CHECKPOINT;
  if (scr_output_begin(name, flags, 0) != SCR_SUCCESS) engine.broken = 1;
  engine.active = 1;
  engine.step = step;
  engine.boundary = rule ? rule->boundary : SCR_PRELOAD_BOUNDARY_CLOSE;
  engine.expected = rule && rule->files > 0 ? rule->files : 1;
  engine.opened = engine.closed = 0;
  engine.rule = rule;
  scr_dbg(1, "preload: dataset %d (%s) begins", scr.dataset_id, name ? name : "name not known yet");
}

/* Collective: what every meeting point of the ranks begins with (one
 * MPI_Allreduce when there is nothing to do): the directories other ranks
 * renamed, the datasets they changed in place, the newest checkpoint renamed
 * into place, whether the background flush is ready to publish; 1 when some
 * rank has `pending` set */
#define ENGINE_MEET_FLUSH 7 /* scr_flush_async_copied: 0 on every rank when all copies are done */
#define ENGINE_MEET_VALUES 8
static void engine_meet_local(int pending, int mine[ENGINE_MEET_VALUES])
{
  scr_engine_mapped_release(engine_last_point);
  mine[0] = pending;
  mine[1] = scr_engine_rename_pending();
  mine[2] = scr_engine_update_pending();
  mine[3] = scr_peers_pending();
  mine[4] = scr_pointers_renamed_newest();
  mine[5] = engine.active;
  mine[6] = scr_pointers_renamed_pinned(); /* the same on every rank */
  /* a background flush whose copies are all done is published here */
  mine[ENGINE_MEET_FLUSH] = scr_flush_async_copied();
}

/* the pin of the newest checkpoint renamed into place moves at a meeting
 * point where no rank has begun a dataset (the renaming rank knows of the
 * rename at once, every rank at the next meeting) */
static int engine_meet_moves_pin(const int all[ENGINE_MEET_VALUES])
{
  return !all[5] && all[4] != all[6];
}

/* 1 when a meeting point has work beyond its collective */
static int engine_meet_busy(const int all[ENGINE_MEET_VALUES])
{
  return all[0] || all[1] || all[2] >= 0 || all[3] || engine_meet_moves_pin(all) || all[ENGINE_MEET_FLUSH] == 0;
}

static int engine_meet_act(const int all[ENGINE_MEET_VALUES])
{

  if (all[1]) scr_engine_rename_sync();
  /* after the directories moved: a deletion names the file as it is now */
  if (all[3]) scr_peers_sync();
  /* the names other ranks' files have now, for the processes ranks start */
  if (all[1] || all[3]) scr_peers_publish(1);
  if (all[2] >= 0) scr_engine_update_reprotect();
  if (all[1] || all[2] >= 0) scr_engine_rename_journal_settle();
  scr_pointers_renamed_agreed(all[4], engine_meet_moves_pin(all));
  /* the daemons learn of the files other ranks' renames and deletions moved
   * here; last, the publish, which follows them as every rank has them now */
  scr_flush_async_tell_moves();
  if (all[ENGINE_MEET_FLUSH] == 0) scr_flush_async_publish();
  return all[0];
}

static int engine_meet(int pending)
{
  int mine[ENGINE_MEET_VALUES], all[ENGINE_MEET_VALUES];
  engine_meet_local(pending, mine);
  MPI_Allreduce(mine, all, ENGINE_MEET_VALUES, MPI_INT, MPI_MAX, scr.comm_world);
  return engine_meet_act(all);
}

/* a hash of the dataset's name, so that one collective of numbers can tell
 * whether every rank proposes the same name (FNV-1a, 64 bits) */
static long long engine_name_hash(const char* name)
{
  unsigned long long h = 14695981039346656037ULL;
  for (const unsigned char* p = (const unsigned char*) (name ? name : ""); *p; p++) h = (h ^ *p) * 1099511628211ULL;
  return (long long) (h >> 1); /* non-negative, so that its negation is too */
}

/* The collective a completion begins with: the meeting point's values
 * (engine_meet_local), then whether a rank closed fewer files than FILES=,
 * whether any rank kept a file of it, whether every rank knows the {step},
 * and every rank's proposal for the dataset's flags, numbers and name, as
 * maxima (a minimum as the maximum of its negation). */
enum {
  AGREE_SHORT = ENGINE_MEET_VALUES, /* some rank is short of its FILES= */
  AGREE_KEPT,                       /* some rank kept a file of it */
  AGREE_NAMELESS,                   /* some rank does not know the {step} */
  AGREE_PIN,                        /* the newest dataset a pointer file pins (scr_pointers_pin_local) */
  AGREE_PACKED,                     /* the largest pack of names (scr_peers_pack) */
  AGREE_ROOM,                       /* -(the least room for one, scr_peers_slot_room) */
  AGREE_PROPOSAL,                   /* flags, ckpt, created, counter, name hash: max and -min each */
  AGREE_VALUES = AGREE_PROPOSAL + 2 * (SCR_OUTPUT_PROPOSAL + 1)
};

/* Collective: complete the dataset in progress (ranks that have none take
 * part with an empty one). The name, flags and creation time are those of
 * the lowest rank that knows the dataset's {step}.
 *
 * One MPI_Allreduce decides it all when, as at nearly every checkpoint,
 * nothing else is pending at this meeting point and every rank knows the
 * {step} and proposes the same name, flags and numbers: the creation time
 * is then the earliest any rank began it. Otherwise a second one and
 * scr_output_agree's broadcasts follow, after what the meeting point had to
 * do, as they always did. */
static void engine_complete(void)
{
  /* a file of an earlier dataset still mapped is protected with what it
   * holds before this one completes, which may let that dataset go */
  const char* last_point = engine_last_point;
  if (!last_point) engine_last_point = "the next dataset's completion";
  int meet[ENGINE_MEET_VALUES];
  engine_meet_local(0, meet);
  engine_last_point = last_point;
  double start = scr_log_seconds();
  long long mine[AGREE_VALUES], all[AGREE_VALUES];
  for (int i = 0; i < AGREE_VALUES; i++) mine[i] = LLONG_MIN;
  for (int i = 0; i < ENGINE_MEET_VALUES; i++) mine[i] = meet[i];
  int known = engine.active && engine.step >= 0 && scr.in_output;
  mine[AGREE_SHORT] = engine.active && engine.boundary == SCR_PRELOAD_BOUNDARY_CLOSE && engine.opened > 0 &&
                      engine.closed < engine.expected;
  mine[AGREE_KEPT] = engine.active && scr.in_output &&
                     scr_kvtree_size(scr_filemap_get_files(scr.filemap, scr.output_id, scr.rank)) > 0;
  mine[AGREE_NAMELESS] = !known;
  /* what the pinning and the exchange of names would agree on first */
  mine[AGREE_PIN] = scr_pointers_pin_local();
  int packed_bytes = 0;
  char* packed = known ? scr_peers_pack(scr.output_id, &packed_bytes) : NULL;
  mine[AGREE_PACKED] = packed ? packed_bytes : LLONG_MAX;
  mine[AGREE_ROOM] = -(long long) scr_peers_slot_room();
  if (known) {
    long long proposal[SCR_OUTPUT_PROPOSAL + 1];
    scr_output_proposal(proposal);
    proposal[SCR_OUTPUT_PROPOSAL] = engine_name_hash(scr.output_name);
    for (int i = 0; i <= SCR_OUTPUT_PROPOSAL; i++) {
      mine[AGREE_PROPOSAL + 2 * i] = proposal[i];
      mine[AGREE_PROPOSAL + 2 * i + 1] = -proposal[i];
    }
  }
  scr_mpi_allreduce(mine, all, AGREE_VALUES, MPI_LONG_LONG, MPI_MAX, scr.comm_world);
  int meet_all[ENGINE_MEET_VALUES];
  for (int i = 0; i < ENGINE_MEET_VALUES; i++) meet_all[i] = (int) all[i];
  int quiet = !meet_all[1] && meet_all[2] < 0 && !meet_all[3];
  int same = !all[AGREE_NAMELESS];
  for (int i = 0; same && i <= SCR_OUTPUT_PROPOSAL; i++)
    if (i != 2 && all[AGREE_PROPOSAL + 2 * i] != -all[AGREE_PROPOSAL + 2 * i + 1]) same = 0;
  int short_of_files = 0, kept = 0;
  int id = scr.output_id;
  int fast = quiet && same && all[AGREE_ROOM] < 0 && all[AGREE_PACKED] <= -all[AGREE_ROOM];
  if (fast) {
    /* a background flush every rank's daemon is done with is published
     * first (engine_meet_act does it on the other way) */
    if (meet_all[ENGINE_MEET_FLUSH] == 0) scr_flush_async_publish();
    /* every rank proposed what the root would have broadcast */
    short_of_files = all[AGREE_SHORT] > 0;
    kept = all[AGREE_KEPT] > 0;
    scr_output_agree_known(-all[AGREE_PROPOSAL + 2 * 2 + 1]);
    /* what engine_meet_act takes from a meeting that has more to do */
    scr_pointers_renamed_agreed(meet_all[4], engine_meet_moves_pin(meet_all));
  } else {
    free(packed);
    packed = NULL;
    engine_meet_act(meet_all);
    if (!engine.active) engine_begin(NULL, NULL, -1);
    /* who names the dataset, and whether a rank never reached its FILES= */
    int shortfall = engine.boundary == SCR_PRELOAD_BOUNDARY_CLOSE && engine.opened > 0 &&
                    engine.closed < engine.expected;
    /* and whether some rank kept a file of it: the program may have deleted
     * them all before it completed (gfortran's close(status='delete')) */
    int mine_kept = scr_kvtree_size(scr_filemap_get_files(scr.filemap, scr.output_id, scr.rank)) > 0;
    int values[3] = { engine.step >= 0 ? scr.rank : INT_MAX, -shortfall, -mine_kept }, agreed[3];
    MPI_Allreduce(values, agreed, 3, MPI_INT, MPI_MIN, scr.comm_world);
    int root = agreed[0] == INT_MAX ? 0 : agreed[0];
    short_of_files = agreed[1] < 0;
    kept = agreed[2] < 0;
    /* a local begin always leaves the rank in output (scr_output_begin), so
     * every rank runs the same collectives below */
    id = scr.output_id;
    scr_output_agree(root);
  }
  if (short_of_files && scr.rank == 0)
    scr_warn("dataset %d (%s) completed late: a rank closed fewer files than PRELOAD=%s (%s) expects "
             "(FILES=%lld); set FILES= to the number every rank writes, or BOUNDARY=", id, scr.output_name,
             engine.rule ? engine.rule->pattern : "?",
             engine.rule && engine.rule->origin ? engine.rule->origin : "configuration", engine.expected);
  /* a dataset that failed is gone: later files of its step must not join
   * the one before it. One whose files the program deleted is no checkpoint,
   * as on a file system: completed, it would be flushed and restored as
   * one, and would let the cache evict the newest checkpoint that is */
  int done = 0;
  if (!kept) {
    if (scr.rank == 0)
      scr_info("preload: every file of dataset %d (%s) was deleted before it completed: it is dropped", id,
               scr.output_name);
    scr_api_abandon_output();
  } else {
    /* before the completion trims the cache: the pointer the program wrote
     * since the last one names the checkpoint it was attached to, and the
     * checkpoint it renamed into place last is the one it resumes from */
    if (fast) scr_pointers_pin_finish((int) all[AGREE_PIN]);
    else scr_pointers_pin();
    scr_pointers_pin_renamed();
    /* every rank, done or not: a collective; a dataset that fails is not
     * shown. Before the completion's own collectives, which therefore wait
     * for the node's list of names the processes ranks start read (a child
     * a rank starts once the completion returned finds them) */
    if (fast) scr_peers_gather_slots(id, packed, packed_bytes, (int) all[AGREE_PACKED]);
    else scr_peers_gather(id);
    done = SCR_Complete_output(!engine.broken) == SCR_SUCCESS;
    if (done && !engine_finalizing) scr_engine_mapped_watch(id);
  }
  free(packed);
  if (done) engine.done_id = id;
  if (done) scr_fault_point("complete"); /* before the program writes its pointer to it */
  scr_dbg(2, "preload: completing dataset %d took %.6f s", id, scr_log_seconds() - start);
  engine.done_step = done ? engine.step : -1;
  engine.done_rule = done ? engine.rule : NULL;
  engine.active = 0;
  engine.broken = 0;
  engine.step = -1;
  free(engine.reopening);
  engine.reopening = NULL;
}

/* Collective where every rank may or may not have something pending (a
 * barrier, MPI_Finalize): complete when any rank has a dataset in progress
 * whose boundary is `boundary` or earlier. */
static void engine_complete_if_pending(int boundary)
{
  if (engine_meet(engine.active && engine.boundary <= boundary)) engine_complete();
}

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

struct scr_engine_file* scr_engine_file_new(int dataset, int attached, const char* orig, const char* relpath,
                                            const char* cache)
{
  struct scr_engine_file* f = calloc(1, sizeof(*f));
  if (!f) return NULL;
  f->dataset = dataset;
  f->attached = attached;
  f->orig = strdup(orig);
  f->relpath = strdup(relpath);
  f->cache = strdup(cache);
  if (!f->orig || !f->relpath || !f->cache) {
    scr_engine_file_free(f);
    return NULL;
  }
  return f;
}

/* a new file for the dataset this target belongs to; returns the cache path
 * to open (in cache) and whether it is attached, or SCR_FAILURE to pass.
 * existing: the dataset the view shows the path in (-1: none), when the
 * caller has just looked it up, else ENGINE_UNKNOWN */
#define ENGINE_UNKNOWN (-2)
static int engine_route_new(const scr_preload_target* t, const scr_preload_rule* rule, const char* relpath,
                            char* cache, size_t length, int* attached, int existing)
{
  *attached = 0;
  if (rule->has_step) {
    if (engine.active && engine.step >= 0 && engine.step != t->match.step) {
      engine_complete();
      existing = ENGINE_UNKNOWN;  /* the completion may have dropped or evicted it */
    }
    int late = !engine.active && t->match.step == engine.done_step && engine.done_rule &&
               engine.done_rule->type == rule->type && engine.done_id >= 0;
    /* looked up only where it decides (the copies on the prefix directory
     * cost a system call per cached dataset) */
    if (late && existing == ENGINE_UNKNOWN) {
      existing = -1;
      free(scr_view_find(t->path, &existing));
    }
    if (late && existing != engine.done_id && scr_filemap_get_dataset(scr.filemap, engine.done_id)) {
      /* a new file of the step that just completed, of the same type,
       * later than FILES= or the boundary waited for: it joins that dataset
       * as a pointer file does, where a second dataset of the same step
       * would evict the first (an output file of a checkpoint's step, or the
       * other way round, starts its own; so does a file of the dataset
       * written again, which must not change the protected one in place) */
      static int warned_id = -1;
      if (warned_id != engine.done_id) {
        warned_id = engine.done_id;
        const scr_preload_rule* first = engine.done_rule;
        char when[128];
        if (first->boundary == SCR_PRELOAD_BOUNDARY_CLOSE)
          snprintf(when, sizeof(when), "had its FILES=%lld", first->files > 0 ? first->files : 1);
        else
          snprintf(when, sizeof(when), "met its BOUNDARY= (a barrier, or the next checkpoint)");
        scr_warn("%s is a file of step %lld, which completed when PRELOAD=%s (%s) %s: it is kept with that "
                 "checkpoint outside its redundancy (in cache, and a copy on the prefix directory); write it before "
                 "the checkpoint completes%s (said once per checkpoint)", t->path, t->match.step, first->pattern,
                 first->origin ? first->origin : "configuration", when,
                 first->boundary == SCR_PRELOAD_BOUNDARY_CLOSE
                     ? ", or set FILES= to the number of files each rank writes per step, or BOUNDARY="
                     : "");
      }
      *attached = 1;
      return scr_pointers_attach(engine.done_id, t->path, relpath, cache, length);
    }
    char* name = scr_engine_dataset_name(t, relpath);
    if (!engine.active) {
      engine_begin(name, rule, t->match.step);
    } else if (engine.step < 0) {
      /* the dataset began under a name without {step}: now it is known */
      free(scr.output_name);
      scr.output_name = strdup(name);
      engine.step = t->match.step;
    }
    free(name);
  } else if (!engine.active && !rule->has_rank && engine.done_id >= 0 &&
             scr_filemap_get_dataset(scr.filemap, engine.done_id)) {
    *attached = 1;
    return scr_pointers_attach(engine.done_id, t->path, relpath, cache, length);
  } else if (!engine.active) {
    engine_begin(NULL, rule, -1);
  }
  /* a later rule of the same dataset can only move its completion later,
   * and a checkpoint file makes an output dataset a checkpoint too */
  if (rule->boundary > engine.boundary) engine.boundary = rule->boundary;
  scr_output_add_flags(rule->type == SCR_PRELOAD_TYPE_OUTPUT ? SCR_FLAG_OUTPUT : SCR_FLAG_CHECKPOINT);
  if (!scr.in_output) return SCR_FAILURE;
  unsigned long before = scr_kvtree_changes();
  int rc = scr_cache_route_file(scr.output_id, t->path, relpath, cache, length);
  if (rc == SCR_SUCCESS) scr_view_routed(before, t->path, cache, scr.output_id);
  return rc;
}

int scr_engine_route_new(const scr_preload_target* t, const scr_preload_rule* rule, const char* relpath,
                         char* cache, size_t length, int* attached)
{
  return engine_route_new(t, rule, relpath, cache, length, attached, ENGINE_UNKNOWN);
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

/* 1 when dir, or a directory above it in the prefix directory, is a file
 * the view shows: where the kernel's lookup of a name below it stops with
 * ENOTDIR (the file system has nothing there, and says ENOENT) */
static int engine_below_shown_file(const char* dir)
{
  char* at = strdup(dir);
  int found = 0;
  while (!found && at && scr_path_is_within(at, scr.prefix) && strcmp(at, scr.prefix) != 0) {
    int dataset = -1;
    char* shown = scr_view_find(at, &dataset);
    found = shown != NULL;
    free(shown);
    char* up = scr_path_dirname(at);
    free(at);
    at = up;
  }
  free(at);
  return found;
}

/* 1, with errno ENOENT or ENOTDIR, when the directory a new file of path
 * would go in is neither on the file system (where every rank makes its
 * directories) nor shown by the view (a restored checkpoint's directory the
 * file system no longer has); *nlink: the directory's st_nlink when the
 * file system has it, else 0 */
static int engine_parent_missing(const char* path, nlink_t* nlink)
{
  int saved_errno = errno;
  char* parent = scr_path_dirname(path);
  struct stat st;
  int missing = 0;
  *nlink = 0;
  if (parent && stat(parent, &st) == 0) {
    missing = !S_ISDIR(st.st_mode);
    if (missing) saved_errno = ENOTDIR;
    else *nlink = st.st_nlink;
  } else if (parent && (errno == ENOENT || errno == ENOTDIR)) {
    int stat_errno = errno; /* before the view's lookup, which may change it */
    missing = !scr_view_is_directory(parent);
    if (missing) saved_errno = stat_errno == ENOENT && engine_below_shown_file(parent) ? ENOTDIR : stat_errno;
  }
  free(parent);
  errno = saved_errno; /* the program's, unless this is the open's failure */
  return missing;
}

int scr_engine_parent_missing(const char* path)
{
  nlink_t nlink;
  return engine_parent_missing(path, &nlink);
}

/* a new file at path, in a directory of the file system with st_nlink
 * nlink: 1 with errno EISDIR when path itself is a directory there, which
 * a rule that matches directories too (a pattern ending in **: out/d as
 * well as out/d/x), or any rule where the program made a directory at a
 * file's name, would otherwise put a cache file in front of. Asked of the
 * file system only when that directory has subdirectories (st_nlink other
 * than 2, which file systems that do not count them give too): in a
 * checkpoint directory of files alone it costs no look-up more per file. */
static int engine_name_is_directory(const char* path, nlink_t nlink)
{
  struct stat st;
  int saved_errno = errno;
  int directory = nlink != 0 && nlink != 2 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
  errno = directory ? EISDIR : saved_errno;
  return directory;
}

/* scr_engine_parent_missing for a path the view does not show, when only this
 * rank's cached files were looked at (looked 0): a copy of an attached file
 * on the prefix directory shows it too (*shown, *dataset), in a directory
 * the file system may lack; errno as scr_engine_parent_missing leaves it */
static int engine_parent_missing_unshown(const char* path, int looked, char** shown, int* dataset)
{
  int saved_errno = errno;
  nlink_t nlink;
  if (!engine_parent_missing(path, &nlink)) return engine_name_is_directory(path, nlink);
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
   * late file of a step joins its dataset (engine_route_new) */
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
  if (shown && (!creating || (engine.active && dataset == scr.output_id))) {
    /* an existing file of a cached dataset: read it, write the one in
     * progress, or change a completed one in place */
    struct scr_engine_file* update = (flags & O_ACCMODE) != O_RDONLY && !(engine.active && dataset == scr.output_id)
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
    } else if (engine.reopening && engine.active && dataset == scr.output_id && strcmp(engine.reopening, t->path) == 0) {
      /* MPI_File_open opening again the file it created and closed: tracked,
       * so that its close completes the dataset as the first close did not */
      char* relpath = scr_path_relative_to(scr.prefix, t->path);
      fd = relpath ? engine_open_cache(shown, flags, mode, handled) : -1;
      *file = fd >= 0 ? scr_engine_file_new(dataset, 0, t->path, relpath, shown) : NULL;
      if (*file) engine.opened++;
      free(relpath);
      free(engine.reopening);
      engine.reopening = NULL;
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
    } else if (engine_route_new(t, rule, relpath, cache, sizeof(cache), &attached,
                                shown ? dataset : looked ? -1 : ENGINE_UNKNOWN) == SCR_SUCCESS) {
      int id = attached ? engine.done_id : scr.output_id;
      if (keep >= 0 && strcmp(shown, cache) != 0 && engine_copy_from(keep, cache) != 0)
        scr_err("cannot copy %s to %s for %s opened without O_TRUNC: it starts empty", shown, cache, t->path);
      fd = engine_open_cache(cache, create, mode, handled);
      if (fd >= 0) scr_fault_point("open"); /* created in cache, nothing written yet */
      /* the file keeps its mode, which open's mode, with the umask, may not give */
      if (fd >= 0 && create != flags && fchmod(fd, mode) != 0)
        scr_warn("cannot give %s mode %o: %s", cache, (unsigned) mode, strerror(errno));
      if (fd >= 0) {
        *file = scr_engine_file_new(id, attached, t->path, relpath, cache);
        if (!attached) engine.opened++;
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
          engine.broken = 1;
        } else {
          scr_kvtree_unset(scr_filemap_get_files(scr.filemap, id, scr.rank), cache);
          scr_cache_save_filemap();
        }
        errno = saved_errno;
      }
    } else if (scr.in_output && engine.active) {
      engine.broken = 1;
    }
    if (keep >= 0) close(keep);
    free(relpath);
  }
  free(shown);
  pthread_mutex_unlock(&scr_engine_lock);
  return fd;
}

/* a file of the dataset in progress is closed: with BOUNDARY=CLOSE, the
 * dataset completes once every file opened is closed and FILES= are */
static void engine_file_closed(void)
{
  scr_fault_point("close"); /* closed, the completion not yet decided */
  engine.closed++;
  if (engine.boundary == SCR_PRELOAD_BOUNDARY_CLOSE && engine.closed >= engine.expected &&
      engine.closed == engine.opened)
    engine_complete();
}

void scr_engine_file_joined(void)
{
  if (!engine.active) return;
  engine.opened++;
  engine_file_closed();
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
  } else if (engine.active && f->dataset == scr.output_id && scr_preload_mpi_file_opening()) {
    /* ROMIO's create-and-close inside MPI_File_open: the file is not done
     * (an empty checkpoint would complete here); its reopen (engine_open)
     * counts as the same open, and its close at MPI_File_close ends it */
    engine.opened--;
    free(engine.reopening);
    engine.reopening = strdup(f->orig);
  } else if (engine.active && f->dataset == scr.output_id) {
    engine_file_closed();
  }
  pthread_mutex_unlock(&scr_engine_lock);
  scr_engine_file_free(f);
  errno = saved_errno;
  return rc;
}

int scr_engine_writing(int dataset)
{
  return engine.active && dataset == scr.output_id;
}

int scr_engine_done_id(void)
{
  return engine.done_id;
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

static int engine_init(void)
{
  /* the preload loaded the rules: there is at least one */
  const scr_preload_ruleset* rules = scr_preload_state_current();
  for (int i = 0; i < scr_preload_rules_count(rules); i++)
    if (scr_preload_rules_at(rules, i)->boundary == SCR_PRELOAD_BOUNDARY_BARRIER) engine.barrier_rules = 1;

  /* the cache's reaper deletes while SCR_Finalize, under the engine's lock,
   * waits for it: none of its calls may reach the engine */
  scr.thread_start = scr_preload_real_own_thread;
  scr.before_restart = engine_follow_renames;
  /* the program cannot ask SCR_Should_exit: a halt condition (scr_halt, the
   * time left, a count of checkpoints) ends it after the checkpoint that
   * meets it, unless SCR_HALT_EXIT=0 says otherwise */
  scr.halt_exit_by_default = 1;
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
    engine.done_id = restored = scr.restart_id;
    SCR_Complete_restart(1);
    pthread_mutex_lock(&scr_engine_lock);
    scr_engine_update_adopt(engine.done_id);
    scr_share_restored(engine.done_id);
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
  engine_finalizing = 1;
  engine_last_point = "MPI_Finalize";
  engine_complete_if_pending(SCR_PRELOAD_BOUNDARY_FINALIZE);
  scr_engine_deletions_settle();
  scr_preload_hooks_virtual_directories(0);
  scr_mirror_finalize();
  scr_share_clear();
  scr_peers_unpublish();
  scr_peers_clear();
  scr_preload_state_install(NULL);
  if (engine_barrier_comm != MPI_COMM_NULL) MPI_Comm_free(&engine_barrier_comm);
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
  int mine[ENGINE_MEET_VALUES], all[ENGINE_MEET_VALUES];
  pthread_mutex_lock(&scr_engine_lock);
  engine_meet_local(engine.barrier_rules && engine.active && engine.boundary <= SCR_PRELOAD_BOUNDARY_BARRIER, mine);
  pthread_mutex_unlock(&scr_engine_lock);
  scr_mpi_allreduce(mine, all, ENGINE_MEET_VALUES, MPI_INT, MPI_MAX, engine_barrier_comm);
  if (engine_meet_busy(all)) {
    pthread_mutex_lock(&scr_engine_lock);
    if (engine_meet_act(all)) engine_complete();
    pthread_mutex_unlock(&scr_engine_lock);
  }
  return 1;
}

__attribute__((visibility("default"))) const struct scr_preload_engine scr_preload_engine_table = {
  .init = engine_init,
  .finalize = engine_finalize,
  .barrier = engine_barrier,
  .open = engine_open,
  .close = engine_close,
  .rename = scr_engine_rename,
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
