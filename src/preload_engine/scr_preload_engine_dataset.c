/* scr_preload_engine_dataset.c - the dataset in progress on a rank: begun by its first
 * routed file, agreed on at meeting points, completed at its rule's boundary. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_fault.h"
#include "scr_filemap.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_flush_async.h"
#include "scr_api.h"
#include "scr_preload_engine.h"
#include "scr_preload_engine_impl.h"

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

int scr_engine_would_complete(const scr_preload_target* target)
{
  const scr_preload_rule* rule = scr_engine_rule(target);
  return rule && rule->has_step && engine.active && engine.step >= 0 && engine.step != target->match.step;
}

/* ---- datasets */


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
/* Collective: the completion's agreement. A rank whose last file closed
 * waits here for every other rank's last close; one that writes its files
 * only after a barrier (or another collective) this rank is already past
 * never comes (scr_preload(7), LIMITATIONS): say so rather than hang mute */
#define ENGINE_AGREE_PATIENCE 30.0
static void engine_agree(const long long mine[AGREE_VALUES], long long all[AGREE_VALUES])
{
  char message[512];
  snprintf(message, sizeof(message),
           "preload: rank %d has waited %.0f s for the other ranks to complete dataset %d (%s) with it; a rank "
           "that writes its files of it only after an MPI call this one has passed never will: see LIMITATIONS "
           "in scr_preload(7)",
           scr.rank, ENGINE_AGREE_PATIENCE, scr.output_id, scr.output_name ? scr.output_name : "name not known yet");
  MPI_Request request;
  if (MPI_Iallreduce(mine, all, AGREE_VALUES, MPI_LONG_LONG, MPI_MAX, scr.comm_world, &request) == MPI_SUCCESS)
    scr_mpi_wait_all_or_say(1, &request, ENGINE_AGREE_PATIENCE, message);
}

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
  engine_agree(mine, all);
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

/* a new file for the dataset this target belongs to; returns the cache path
 * to open (in cache) and whether it is attached, or SCR_FAILURE to pass.
 * existing: the dataset the view shows the path in (-1: none), when the
 * caller has just looked it up, else SCR_ENGINE_UNKNOWN */
static int engine_route_new(const scr_preload_target* t, const scr_preload_rule* rule, const char* relpath,
                            char* cache, size_t length, int* attached, int existing)
{
  *attached = 0;
  if (rule->has_step) {
    if (engine.active && engine.step >= 0 && engine.step != t->match.step) {
      engine_complete();
      existing = SCR_ENGINE_UNKNOWN;  /* the completion may have dropped or evicted it */
    }
    int late = !engine.active && t->match.step == engine.done_step && engine.done_rule &&
               engine.done_rule->type == rule->type && engine.done_id >= 0;
    /* looked up only where it decides (the copies on the prefix directory
     * cost a system call per cached dataset) */
    if (late && existing == SCR_ENGINE_UNKNOWN) {
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
  return engine_route_new(t, rule, relpath, cache, length, attached, SCR_ENGINE_UNKNOWN);
}

int scr_engine_route_new_shown(const scr_preload_target* t, const scr_preload_rule* rule, const char* relpath,
                               char* cache, size_t length, int* attached, int existing)
{
  return engine_route_new(t, rule, relpath, cache, length, attached, existing);
}

/* a file of the dataset in progress is closed: with BOUNDARY=CLOSE, the
 * dataset completes once every file opened is closed and FILES= are */
void scr_engine_dataset_file_closed(void)
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
  scr_engine_dataset_file_closed();
}

int scr_engine_writing(int dataset)
{
  return engine.active && dataset == scr.output_id;
}

int scr_engine_done_id(void)
{
  return engine.done_id;
}

/* ---- what the hooks (scr_preload_engine.c) tell the dataset in progress */

void scr_engine_dataset_start(const scr_preload_ruleset* rules)
{
  for (int i = 0; i < scr_preload_rules_count(rules); i++)
    if (scr_preload_rules_at(rules, i)->boundary == SCR_PRELOAD_BOUNDARY_BARRIER) engine.barrier_rules = 1;
}

void scr_engine_dataset_restored(int id)
{
  engine.done_id = id;
}

void scr_engine_dataset_file_opened(void)
{
  engine.opened++;
}

void scr_engine_dataset_broken(void)
{
  engine.broken = 1;
}

int scr_engine_dataset_reopening(int dataset, const char* path)
{
  return engine.reopening && scr_engine_writing(dataset) && strcmp(engine.reopening, path) == 0;
}

void scr_engine_dataset_reopened(int opened)
{
  if (opened) engine.opened++;
  free(engine.reopening);
  engine.reopening = NULL;
}

void scr_engine_dataset_reopen_later(const char* path)
{
  engine.opened--;
  free(engine.reopening);
  engine.reopening = strdup(path);
}

void scr_engine_dataset_finalize(void)
{
  engine_finalizing = 1;
  engine_last_point = "MPI_Finalize";
  engine_complete_if_pending(SCR_PRELOAD_BOUNDARY_FINALIZE);
}

void scr_engine_dataset_meet_at_barrier(MPI_Comm comm)
{
  int mine[ENGINE_MEET_VALUES], all[ENGINE_MEET_VALUES];
  pthread_mutex_lock(&scr_engine_lock);
  engine_meet_local(engine.barrier_rules && engine.active && engine.boundary <= SCR_PRELOAD_BOUNDARY_BARRIER, mine);
  pthread_mutex_unlock(&scr_engine_lock);
  scr_mpi_allreduce(mine, all, ENGINE_MEET_VALUES, MPI_INT, MPI_MAX, comm);
  if (engine_meet_busy(all)) {
    pthread_mutex_lock(&scr_engine_lock);
    if (engine_meet_act(all)) engine_complete();
    pthread_mutex_unlock(&scr_engine_lock);
  }
}
