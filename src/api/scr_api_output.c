/* scr_api_output.c - writing datasets: SCR_Need_checkpoint, SCR_Start_output,
 * SCR_Route_file, SCR_Complete_output and their checkpoint-only forms. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_fault.h"
#include "scr_log.h"
#include "scr_interval.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_fault.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_flush.h"
#include "scr_flush_file.h"
#include "scr_flush_async.h"
#include "scr_halt.h"
#include "scr_event_log.h"
#include "scr_recovery.h"
#include "scr_reddesc.h"
#include "scr_redundancy.h"
#include "scr_api.h"

int scr_api_check_ready(const char* function)
{
  if (!scr.initialized) {
    scr_err("%s called without SCR_Init: call SCR_Init after MPI_Init", function);
    return SCR_FAILURE;
  }
  return SCR_SUCCESS;
}

int scr_api_latest_checkpoint(void)
{
  int latest = -1;
  scr_kvtree_elem* e;
  for (e = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); e; e = scr_kvtree_next(e)) {
    scr_kvtree* desc = scr_kvtree_get(scr_kvtree_elem_tree(e), "DSETDESC");
    int id = (int) scr_kvtree_elem_key_int(e);
    if (scr_dataset_is_checkpoint(desc) && scr_dataset_is_complete(desc) && id > latest)
      latest = id;
  }
  return latest;
}

void scr_api_abandon_output(void)
{
  scr_cache_delete_dataset(scr.output_id);
  free(scr.output_name);
  scr.output_name = NULL;
  scr.in_output = 0;
}

/* the Young/Daly interval for SCR_MTBF and the checkpoints of this run so
 * far: the mean time a checkpoint stopped the program is its cost; 0 when
 * no checkpoint measured it yet */
double scr_api_optimal_interval(void)
{
  if (scr.checkpoints_this_run <= 0 || !(scr.mtbf > 0)) return 0;
  return scr_interval_daly(scr.time_blocked_in_checkpoints / scr.checkpoints_this_run, scr.mtbf);
}

int SCR_Need_checkpoint(int* flag)
{
  if (!flag || scr_api_check_ready("SCR_Need_checkpoint") != SCR_SUCCESS) return SCR_FAILURE;
  if (!scr.enabled) {
    *flag = 1;
    return SCR_SUCCESS;
  }
  scr.need_checkpoint_calls++;
  /* past its restart: a step of the program is done */
  scr_recovery_resumed("SCR_Need_checkpoint");
  int need = 0;
  if (scr.rank == 0) {
    double now = scr_log_seconds();
    int any_rule = 0;
    if (scr.checkpoint_interval > 0) {
      any_rule = 1;
      if (scr.need_checkpoint_calls % scr.checkpoint_interval == 0) need = 1;
    }
    if (scr.checkpoint_seconds > 0) {
      any_rule = 1;
      if (now - scr.time_last_checkpoint_end >= (double) scr.checkpoint_seconds) need = 1;
    }
    if (scr.checkpoint_overhead > 0) {
      /* checkpoint when doing so keeps the time spent checkpointing under the
       * given percentage of the run so far */
      any_rule = 1;
      double total = now - scr.time_init;
      /* the average over this run's checkpoints: scr.checkpoint_id also counts
       * earlier runs, whose time is not in time_in_checkpoints */
      double last = scr.checkpoints_this_run > 0
                  ? scr.time_in_checkpoints / scr.checkpoints_this_run : 0;
      if (total > 0 && (scr.time_in_checkpoints + last) / total * 100.0 <= scr.checkpoint_overhead)
        need = 1;
    }
    if (scr.mtbf > 0 && scr.checkpoint_interval <= 0 && scr.checkpoint_seconds <= 0) {
      /* SCR_MTBF alone: the interval that loses the least time to
       * checkpoints and failures; the first checkpoint measures the cost */
      any_rule = 1;
      double best = scr_api_optimal_interval();
      if (best <= 0 || now - scr.time_last_checkpoint_end >= best) need = 1;
    }
    if (!any_rule) need = 1;
  }
  MPI_Bcast(&need, 1, MPI_INT, 0, scr.comm_world);
  scr_flush_async_progress();
  /* a pending halt asks for one last checkpoint */
  if (!need && scr_halt_check(0)) need = 1;
  *flag = need;
  return SCR_SUCCESS;
}

/* Open a dataset on this rank. Collective (SCR_Start_output): every rank takes
 * rank 0's creation time and learns whether all could start. Local (the preload
 * layer, which starts a dataset inside a rank's first matching open and must
 * not wait for the others there): the creation time is agreed at completion
 * (scr_output_agree). Every rank hands out the same id either way, as every
 * rank starts the same sequence of datasets. */
int scr_output_begin(const char* name, int flags, int collective)
{
  if (scr.in_output) {
    scr_err("SCR_Start_output(\"%s\") called while dataset '%s' is open: call "
            "SCR_Complete_output first", name ? name : "", scr.output_name);
    return SCR_FAILURE;
  }
  if (!(flags & (SCR_FLAG_CHECKPOINT | SCR_FLAG_OUTPUT))) {
    scr_err("SCR_Start_output(\"%s\", %d): flags must include SCR_FLAG_CHECKPOINT and/or "
            "SCR_FLAG_OUTPUT", name ? name : "", flags);
    return SCR_FAILURE;
  }
  if (scr.in_restart) {
    scr_err("SCR_Start_output called inside a restart: call SCR_Complete_restart first");
    return SCR_FAILURE;
  }
  /* a restart the application chose not to read is over */
  free(scr.restart_name);
  scr.restart_name = NULL;
  scr.restart_id = -1;

  int id = scr.dataset_id + 1;
  int ckpt = (flags & SCR_FLAG_CHECKPOINT) ? scr.checkpoint_id + 1 : 0;
  char generated[64];
  if (!name || !*name) {
    snprintf(generated, sizeof(generated), "scr.dataset.%d", id);
    name = generated;
  }

  scr_recovery_resumed("dataset-start");
  double start = scr_log_seconds();
  /* the write span of the timeline begins (compute ends) with making room */
  scr_event_log((flags & SCR_FLAG_CHECKPOINT) ? "CHECKPOINT_START" : "OUTPUT_START", "dset=%d name=%s", id, name);
  int room = collective ? scr_cache_make_room(-1) : scr_cache_make_room_local(-1);
  if (room != SCR_SUCCESS && collective) return SCR_FAILURE;

  scr.dataset_id = id;
  if (flags & SCR_FLAG_CHECKPOINT) scr.checkpoint_id = ckpt;
  scr_kvtree* dset = scr_filemap_add_dataset(scr.filemap, id);
  scr_kvtree* desc = scr_kvtree_set(dset, "DSETDESC", scr_dataset_new(id, name, flags, ckpt,
                                                                    scr.user, scr.job_name, scr.job_id));
  scr_filemap_set_file_count(scr.filemap, id, scr.rank, 0);
  /* a bypass dataset is written on the prefix directory: flushing it is only
   * metadata. A cache predicted too small for it at the last completion
   * (scr_cache_predict_next) makes one: every rank agreed on that there, so
   * a local start decides as every other rank does */
  if (scr.cache_bypass || scr.cache_full) scr_kvtree_set_kv_int(dset, "BYPASS", 1);
  int ok = 1;
  if (collective) {
    /* one creation time for the whole dataset, so every rank's descriptor is the same */
    long long created = 0;
    scr_kvtree_get_int(desc, "CREATED", &created);
    MPI_Bcast(&created, 1, MPI_LONG_LONG, 0, scr.comm_world);
    scr_kvtree_set_kv_int(desc, "CREATED", created);
    /* with the datasets make_room evicted */
    ok = scr_mpi_all_true(scr_cache_save_filemap() == SCR_SUCCESS, scr.comm_world);
  } else {
    /* Not written: the rank's first routed file names the dataset in the
     * journal (scr_cache_route_file), which a restart merges to find and
     * remove the dataset, as it must any dataset in progress, and the
     * evicted ones are recorded with the completion (scr_cache_make_room).
     * A begin that wrote the filemap was one of its two writes a checkpoint. */
    ok = room == SCR_SUCCESS;
  }
  if (!ok && collective) {
    scr_cache_delete_dataset(id);
    return SCR_FAILURE;
  }
  /* a local start that failed stays open, so that this rank still takes part
   * in the completion, where it declares the dataset invalid */
  scr.in_output = 1;
  scr.output_id = id;
  scr.output_flags = flags;
  scr.output_name = strdup(name);
  scr.output_start_time = start;
  scr_dbg(2, "started dataset %d (%s)", id, name);
  return ok ? SCR_SUCCESS : SCR_FAILURE;
}

int scr_output_add_flags(int flags)
{
  int merged = scr.output_flags | flags;
  if (!scr.in_output || merged == scr.output_flags) return SCR_SUCCESS;
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, scr.output_id);
  long long created = 0;
  scr_kvtree_get_int(scr_kvtree_get(dset, "DSETDESC"), "CREATED", &created);
  if ((merged & SCR_FLAG_CHECKPOINT) && !(scr.output_flags & SCR_FLAG_CHECKPOINT)) scr.checkpoint_id++;
  scr_kvtree* desc = scr_dataset_new(scr.output_id, scr.output_name, merged,
                                     (merged & SCR_FLAG_CHECKPOINT) ? scr.checkpoint_id : 0, scr.user,
                                     scr.job_name, scr.job_id);
  scr_kvtree_set_kv_int(desc, "CREATED", created);
  scr_kvtree_set(dset, "DSETDESC", desc);
  scr.output_flags = merged;
  return scr_cache_save_filemap();
}

void scr_output_proposal(long long values[SCR_OUTPUT_PROPOSAL])
{
  scr_kvtree* desc = scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, scr.output_id), "DSETDESC");
  values[0] = scr.output_flags;
  values[1] = 0;
  values[2] = 0;
  values[3] = scr.checkpoint_id;
  scr_kvtree_get_int(desc, "CKPT", &values[1]);
  scr_kvtree_get_int(desc, "CREATED", &values[2]);
}

/* the dataset in progress takes these flags, checkpoint number, creation
 * time, counter and name */
static void scr_output_adopt(const long long values[SCR_OUTPUT_PROPOSAL], const char* name)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, scr.output_id);
  scr_kvtree* agreed = scr_dataset_new(scr.output_id, name, (int) values[0], (int) values[1], scr.user,
                                       scr.job_name, scr.job_id);
  scr_kvtree_set_kv_int(agreed, "CREATED", values[2]);
  scr_kvtree_set(dset, "DSETDESC", agreed);
  scr.output_flags = (int) values[0];
  scr.checkpoint_id = (int) values[3];
  char* copy = strdup(name);
  free(scr.output_name);
  scr.output_name = copy;
  /* not written here: SCR_Complete_output (or the abandon) that follows
   * writes the filemap, and until then the dataset is incomplete, which a
   * crash discards whatever name it has on disk. A write here, of every
   * cached dataset's files, was a quarter of the filemap writes of a
   * checkpoint. */
}

int scr_output_agree(int root)
{
  long long values[SCR_OUTPUT_PROPOSAL];
  scr_output_proposal(values);
  char name[SCR_MAX_FILENAME];
  snprintf(name, sizeof(name), "%s", scr.output_name ? scr.output_name : "");
  MPI_Bcast(values, SCR_OUTPUT_PROPOSAL, MPI_LONG_LONG, root, scr.comm_world);
  MPI_Bcast(name, (int) sizeof(name), MPI_CHAR, root, scr.comm_world);
  scr_output_adopt(values, name);
  return SCR_SUCCESS;
}

int scr_output_agree_known(long long created)
{
  long long values[SCR_OUTPUT_PROPOSAL];
  scr_output_proposal(values);
  values[2] = created;
  char name[SCR_MAX_FILENAME];
  snprintf(name, sizeof(name), "%s", scr.output_name ? scr.output_name : "");
  scr_output_adopt(values, name);
  return SCR_SUCCESS;
}

/* SCR disabled (SCR_ENABLE=0): between SCR_Start_output and
 * SCR_Complete_output, where SCR_Route_file still makes the directories a
 * file goes in, as it does when enabled: the application need not */
static int scr_disabled_output = 0;

int SCR_Start_output(const char* name, int flags)
{
  if (scr_api_check_ready("SCR_Start_output") != SCR_SUCCESS) return SCR_FAILURE;
  if (!scr.enabled) {
    scr_disabled_output = 1;
    return SCR_SUCCESS;
  }
  scr_flush_async_progress();
  return scr_output_begin(name, flags, 1);
}

int SCR_Start_checkpoint(void)
{
  return SCR_Start_output(NULL, SCR_FLAG_CHECKPOINT);
}

/* map a user path onto the prefix: absolute path and relative path under it */
static int scr_route_resolve(const char* name, char** abs, char** rel)
{
  *abs = scr_path_absolute(name);
  *rel = *abs ? scr_path_relative_to(scr.prefix, *abs) : NULL;
  if (!*rel || strcmp(*rel, ".") == 0) {
    free(*rel);
    *rel = NULL;
    return SCR_FAILURE;
  }
  return SCR_SUCCESS;
}

/* during restart: the cached copy of name in the restart dataset. A bare file
 * name that is not found as given is looked up by its base name, as LLNL SCR
 * still allows (deprecated there); it must then name exactly one file. */
static int scr_route_restart(const char* name, const char* abs, char* file)
{
  const char* found = NULL;
  int matches = 0;
  int bare = strchr(name, '/') == NULL;
  scr_kvtree_elem* e;
  for (e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, scr.restart_id, scr.rank)); e;
       e = scr_kvtree_next(e)) {
    const char* orig = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "ORIG");
    if (!orig) continue;
    if (strcmp(orig, abs) == 0) {
      found = scr_kvtree_elem_key(e);
      matches = 1;
      break;
    }
    const char* base = strrchr(orig, '/');
    if (bare && strcmp(base ? base + 1 : orig, name) == 0) {
      found = scr_kvtree_elem_key(e);
      matches++;
    }
  }
  if (matches > 1) {
    scr_err("SCR_Route_file(\"%s\"): %d files of restart dataset '%s' have that name: give "
            "the path the file was written under", name, matches, scr.restart_name);
    return SCR_FAILURE;
  }
  /* LLNL SCR checks that a restart file can be read before handing it out */
  if (!found || access(found, R_OK) != 0) return SCR_FAILURE;
  snprintf(file, SCR_MAX_FILENAME, "%s", found);
  return SCR_SUCCESS;
}

int SCR_Route_file(const char* name, char* file)
{
  if (!name || !file) return SCR_FAILURE;
  if (scr_api_check_ready("SCR_Route_file") != SCR_SUCCESS) return SCR_FAILURE;
  if (!scr.enabled) {
    snprintf(file, SCR_MAX_FILENAME, "%s", name);
    char* parent = scr_disabled_output ? scr_path_dirname(name) : NULL;
    int rc = parent ? scr_io_mkdir_p(parent, 0777) : SCR_SUCCESS;
    if (rc != SCR_SUCCESS) scr_err("SCR_Route_file(\"%s\"): cannot create %s: %s", name, parent, strerror(errno));
    free(parent);
    return rc == SCR_SUCCESS ? SCR_SUCCESS : SCR_FAILURE;
  }
  char* abs = NULL;
  char* rel = NULL;
  int rc = scr_route_resolve(name, &abs, &rel);
  if (!abs) return SCR_FAILURE;

  if (scr.in_output) {
    if (rc != SCR_SUCCESS) {
      scr_err("SCR_Route_file(\"%s\"): %s is not inside the prefix directory %s, where the "
              "dataset is flushed: write it under SCR_PREFIX", name, abs, scr.prefix);
    } else {
      /* a bypass dataset's files are routed to where they belong */
      rc = scr_cache_route_file(scr.output_id, abs, rel, file, SCR_MAX_FILENAME);
    }
    if (rc == SCR_SUCCESS) scr_dbg(2, "routed %s to %s", abs, file);
  } else if (scr.in_restart) {
    rc = scr_route_restart(name, abs, file);
    if (rc != SCR_SUCCESS)
      scr_dbg(1, "SCR_Route_file(\"%s\"): not part of restart dataset '%s'", name,
              scr.restart_name);
  } else {
    /* outside output and restart LLNL SCR hands the name back verbatim */
    snprintf(file, SCR_MAX_FILENAME, "%s", name);
    rc = SCR_SUCCESS;
  }
  free(rel);
  free(abs);
  return rc == SCR_SUCCESS ? SCR_SUCCESS : SCR_FAILURE;
}

/* statistics of a completed dataset, printed at debug level 1 by rank 0 */
static void scr_complete_report(int id, uint64_t files, uint64_t bytes, double seconds)
{
  if (scr.rank != 0) return;
  double mib = (double) bytes / (1024.0 * 1024.0);
  scr_dbg(1, "completed dataset %d (%s): %llu files, %.1f MiB in %.3f s (%.1f MiB/s)", id,
          scr.output_name, (unsigned long long) files, mib, seconds,
          seconds > 0 ? mib / seconds : 0.0);
}

int SCR_Complete_output(int valid)
{
  if (scr_api_check_ready("SCR_Complete_output") != SCR_SUCCESS) return SCR_FAILURE;
  if (!scr.enabled) {
    scr_disabled_output = 0;
    return SCR_SUCCESS;
  }
  if (!scr.in_output) {
    scr_err("SCR_Complete_output called without SCR_Start_output");
    return SCR_FAILURE;
  }
  int id = scr.output_id;
  int flags = scr.output_flags;
  /* Two agreements in all (and the redundancy scheme's own collectives):
   * whether every rank's files are there, with the totals, then whether
   * every rank recorded the dataset, with the redundancy's outcome, whether
   * the next dataset fits in the cache, and rank 0's halt verdict. The
   * filemap is written once, with the dataset complete and protected: a
   * crash before every rank wrote it leaves it incomplete on some rank, and
   * a restart takes the one before, which is still whole (the newest
   * complete checkpoint is never evicted). */
  uint64_t counts[3] = { 0, 0, 0 }, totals[3] = { 0, 0, 0 }; /* invalid ranks, files, bytes */
  counts[0] = !scr_cache_complete_files(id, valid, &counts[1], &counts[2]);
  scr_mpi_allreduce(counts, totals, 3, MPI_UINT64_T, MPI_SUM, scr.comm_world);
  int all_valid = totals[0] == 0;

  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  scr_dataset_set_complete(scr_kvtree_get(dset, "DSETDESC"), all_valid, totals[1], totals[2]);
  /* not recorded, not protected, the next dataset does not fit, halt */
  int outcome[4] = { 0, 0, 0, 0 }, agreed[4] = { 0, 0, 0, 0 };
  double redundancy_seconds = 0;
  const struct scr_reddesc* reddesc = NULL;
  if (all_valid) {
    long long ckpt = 0;
    scr_kvtree_get_int(scr_kvtree_get(dset, "DSETDESC"), "CKPT", &ckpt);
    reddesc = scr_reddesc_select((int) ckpt, flags);
    const char* scheme = reddesc ? scr_reddesc_type_name(reddesc->type) : "NONE";
    double redundancy_start = scr_log_seconds();
    /* the write span ends and the encoding span begins */
    scr_event_log("ENCODE_START", "dset=%d scheme=%s files=%llu bytes=%llu write_seconds=%.3f", id, scheme,
                  (unsigned long long) totals[1], (unsigned long long) totals[2],
                  redundancy_start - scr.output_start_time);
    outcome[1] = !scr_redundancy_apply_unsaved(id, reddesc);
    redundancy_seconds = scr_log_seconds() - redundancy_start;
    scr_event_log("ENCODE_COMPLETE", "dset=%d scheme=%s bytes=%llu seconds=%.3f", id, scheme,
                  (unsigned long long) totals[2], redundancy_seconds);
    outcome[0] = scr_cache_save_filemap() != SCR_SUCCESS;
    scr_fault_point("recorded"); /* this rank's filemap says complete, maybe not every rank's */
    /* whether the next dataset fits in the cache, from this one's size */
    outcome[2] = scr_cache_predict_node(id);
    /* a checkpoint is counted against a halt condition's CheckpointsLeft
     * here, before every rank is known to have recorded it: only a failed
     * write of a filemap makes the count one too many */
    if (flags & SCR_FLAG_CHECKPOINT) outcome[3] = scr_halt_decide(1);
    scr_mpi_allreduce(outcome, agreed, 4, MPI_INT, MPI_MAX, scr.comm_world);
  }
  if (!all_valid || agreed[0]) {
    if (scr.rank == 0)
      scr_err("dataset %d (%s) is invalid on at least one rank: it is discarded and the "
              "previous checkpoint stays the newest", id, scr.output_name);
    scr_event_log("DATASET_INVALID", "dset=%d name=%s seconds=%.3f", id, scr.output_name,
                  scr_log_seconds() - scr.output_start_time);
    scr_api_abandon_output();
    return SCR_FAILURE;
  }
  if (agreed[1] && scr.rank == 0)
    scr_err("applying %s redundancy to dataset %d failed: the dataset is not protected",
            scr_reddesc_type_name(reddesc->type), id);
  scr_cache_predict_agreed(outcome[2], agreed[2]);
  if (agreed[3]) scr.should_exit = 1;

  scr.stat_redundancy_seconds += redundancy_seconds;
  scr_dbg(2, "redundancy of dataset %d took %.3f s", id, redundancy_seconds);
  double seconds = scr_log_seconds() - scr.output_start_time;
  scr_complete_report(id, totals[1], totals[2], seconds);
  /* in cache only, until a flush: scr_postrun scavenges what this file says.
   * A flush that publishes and begins now says it by its stage instead (a
   * write and two syncs fewer on the prefix directory per checkpoint) */
  int flush_now = scr_flush_is_due(id);
  long long bypass = 0;
  scr_kvtree_get_int(scr_filemap_get_dataset(scr.filemap, id), "BYPASS", &bypass);
  if (scr.rank == 0 && !(flush_now && scr.flush_publish && !bypass))
    scr_flush_file_set_location(scr.prefix, id, scr.output_name, SCR_FLUSH_FILE_CACHE);
  scr_event_log((flags & SCR_FLAG_CHECKPOINT) ? "CHECKPOINT_COMPLETE" : "OUTPUT_COMPLETE",
                "dset=%d name=%s files=%llu bytes=%llu seconds=%.3f", id, scr.output_name,
                (unsigned long long) totals[1], (unsigned long long) totals[2], seconds);
  free(scr.output_name);
  scr.output_name = NULL;
  scr.in_output = 0;

  int rc = SCR_SUCCESS;
  scr_fault_point("encoded"); /* complete and protected in cache, not yet flushed */
  double flush_start = scr_log_seconds();
  /* a checkpoint may go in the background; output is on the prefix directory
   * when SCR_Complete_output returns, as its return value says */
  if (flush_now && ((flags & SCR_FLAG_OUTPUT) || scr_flush_async_start(id) != SCR_SUCCESS) &&
      scr_flush_dataset(id) != SCR_SUCCESS && (flags & SCR_FLAG_OUTPUT))
    rc = SCR_FAILURE;
  scr.stat_flush_seconds += scr_log_seconds() - flush_start;
  scr.stat_datasets++;
  scr.stat_bytes += counts[2];
  scr.stat_output_seconds += scr_log_seconds() - scr.output_start_time;
  /* output-only data leaves the cache once it is on the prefix directory, as in
   * LLNL SCR; a new checkpoint lets the one it replaces go (scr_cache_evict_to) */
  if (!(flags & SCR_FLAG_CHECKPOINT) && scr_flush_is_flushed(id)) scr_cache_delete_dataset(id);
  /* every rank evicts the same datasets, and nothing here needs to know
   * whether another rank failed to: no agreement */
  scr_cache_trim_local();

  if (flags & SCR_FLAG_CHECKPOINT) {
    scr.time_in_checkpoints += seconds;
    scr.time_blocked_in_checkpoints += scr_log_seconds() - scr.output_start_time;
    if (scr.checkpoints_this_run == 0) scr.time_first_checkpoint_start = scr.output_start_time;
    scr.time_last_checkpoint_start = scr.output_start_time;
    scr.checkpoints_this_run++;
    scr.time_last_checkpoint_end = scr_log_seconds();
    if (scr.should_exit) {
      /* the job stops after this checkpoint: make sure it outlives the allocation */
      scr_flush_async_finish(id);
      if (!scr_flush_is_flushed(id) && scr.flush > 0) scr_flush_dataset(id);
      if (scr.halt_exit) {
        if (scr.rank == 0) scr_info("exiting after checkpoint %d (SCR_HALT_EXIT=1)", id);
        scr_event_log("HALT_EXIT", "dset=%d", id);
        if (scr.before_halt_exit) scr.before_halt_exit();
        SCR_Finalize();
        MPI_Finalize();
        exit(0);
      }
    }
  }
  return rc;
}

int SCR_Complete_checkpoint(int valid)
{
  return SCR_Complete_output(valid);
}
