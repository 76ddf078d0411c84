/* scr_api_init.c - SCR_Init, SCR_Finalize, configuration and environment calls.
 * SCR_Init reads the configuration, prepares the directories and chooses the restart. */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_interval.h"
#include "scr_env.h"
#include "scr_fault.h"
#include "scr_param.h"
#include "scr_config.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_setup.h"
#include "scr_cache.h"
#include "scr_cache_distribute.h"
#include "scr_flush.h"
#include "scr_flush_file.h"
#include "scr_flush_async.h"
#include "scr_flush_publish.h"
#include "scr_publish.h"
#include "scr_halt.h"
#include "scr_restart.h"
#include "scr_event_log.h"
#include "scr_recovery.h"
#include "scr_reddesc.h"
#include "scr_api.h"

struct scr_state scr = { .restart_id = -1 };

/* A bad configuration must stop the job before it touches any data, with the
 * one message rank 0 printed: every rank leaves MPI cleanly and exits non-zero. */
static void scr_init_fail(void)
{
  MPI_Barrier(scr.comm_world);
  MPI_Finalize();
  exit(1);
}

int scr_init_setup(void)
{
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  if (!mpi_up) {
    scr_err("SCR_Init called before MPI_Init: call MPI_Init first");
    return SCR_FAILURE;
  }
  if (scr.initialized) {
    scr_err("SCR_Init called twice: call it once after MPI_Init");
    return SCR_FAILURE;
  }

  MPI_Comm_dup(MPI_COMM_WORLD, &scr.comm_world);
  MPI_Comm_rank(scr.comm_world, &scr.rank);
  MPI_Comm_size(scr.comm_world, &scr.ranks);
  scr_log_rank = scr.rank;
  scr_fault_set_rank(scr.rank);
  scr.time_init = scr_log_seconds();
  scr.restart_id = -1;
  scr.checkpoints_this_run = 0;
  scr.time_blocked_in_checkpoints = 0;

  if (scr_setup_config() != SCR_SUCCESS) scr_init_fail();
  if (!scr.enabled) {
    if (scr.rank == 0) scr_dbg(1, "SCR_ENABLE=0: SCR calls pass through");
    scr.initialized = 1;
    return SCR_SUCCESS;
  }

  scr_env_hostname(scr.hostname, sizeof(scr.hostname));
  scr_mpi_split_by_host(scr.comm_world, scr.hostname, &scr.comm_node);
  MPI_Comm_rank(scr.comm_node, &scr.node_rank);
  MPI_Comm_size(scr.comm_node, &scr.node_ranks);

  if (scr_setup_directories() != SCR_SUCCESS) scr_init_fail();
  /* where SCR_FAULT_CORRUPT, a test's hook, finds the files it damages */
  const char* fault_roots[] = { scr.cache_dir, scr.prefix_scr };
  scr_fault_set_roots(fault_roots, 2);
  return SCR_SUCCESS;
}

void scr_init_release(void)
{
  if (scr.enabled) MPI_Comm_free(&scr.comm_node);
  MPI_Comm_free(&scr.comm_world);
  scr_setup_finalize();
  scr.initialized = 0;
  scr_log_rank = -1;
}

int SCR_Init(void)
{
  int rc = scr_init_setup();
  if (rc != SCR_SUCCESS || !scr.enabled) return rc;
  return scr_init_restore();
}

int scr_init_restore(void)
{
  scr_event_log_init();
  /* a run of the job begins: scr_log(1) draws a row from here to FINALIZE,
   * or marks the run failed when FINALIZE never comes */
  int leaders = 0, leader = scr.node_rank == 0;
  MPI_Allreduce(&leader, &leaders, 1, MPI_INT, MPI_SUM, scr.comm_world);
  scr_event_log("INIT", "ranks=%d nodes=%d host=%s prefix=%s", scr.ranks, leaders, scr.hostname, scr.prefix);
  scr_reddesc_init();
  /* a publish a job that died committed is completed, a stage it left
   * removed, before anything reads the prefix directory */
  scr_flush_publish_recover();
  scr_cache_load_filemap();
  scr_flush_async_init();
  double distribute_start = scr_log_seconds();
  scr_cache_distribute();
  if (scr.rank == 0) scr_dbg(2, "cached files placed on their ranks in %.3f s", scr_log_seconds() - distribute_start);
  scr_flush_publish_adopt();
  scr_cache_start_reaper();
  scr_restart_init_counters();
  if (scr.before_restart) scr.before_restart();
  /* SCR_CURRENT (often set with SCR_Configf) names the checkpoint to restart from */
  const char* current = scr.restart_newest ? NULL : scr_param_get("SCR_CURRENT");
  if (current && *current && scr_restart_select_named(current) != SCR_SUCCESS) {
    if (scr.rank == 0)
      scr_warn("SCR_CURRENT=%s (%s): no such checkpoint; restarting from the newest instead",
               current, scr_param_origin("SCR_CURRENT"));
    current = NULL;
  }
  if (!current || !*current) scr_restart_select(-1);
  if (scr.restart_id >= 0 && !scr_flush_agree_flushed(scr.restart_id) && scr.flush_on_restart)
    scr_flush_dataset(scr.restart_id);
  /* whether the first dataset of this run fits in the cache, from the size
   * of the newest one there */
  scr_cache_predict_next(scr_cache_newest_checkpoint());
  /* what scr_postrun reads to know whether the cache holds anything to scavenge */
  if (scr.rank == 0) scr_flush_file_match(scr.prefix, scr.filemap);
  /* a flush the job that died had begun of the checkpoint restored */
  scr_flush_publish_resume();

  if (!scr.restore_logged_by_caller) scr_recovery_restored(scr.restart_id, scr.restart_name);
  scr.time_last_checkpoint_end = scr_log_seconds();
  scr.initialized = 1;
  if (scr.rank == 0)
    scr_dbg(1, "initialized: %d ranks, prefix %s, cache %s, job %s", scr.ranks, scr.prefix,
            scr.cache_dir, scr.job_id);
  return SCR_SUCCESS;
}

void scr_api_interval_advice(void)
{
  if (scr.rank != 0 || scr.checkpoints_this_run <= 0) return;
  /* the cost is what a checkpoint stopped the program for; "you checkpoint
   * every" is the mean time from one checkpoint's start to the next's */
  double cost = scr.time_blocked_in_checkpoints / scr.checkpoints_this_run;
  double every = scr.checkpoints_this_run > 1
               ? (scr.time_last_checkpoint_start - scr.time_first_checkpoint_start) / (scr.checkpoints_this_run - 1)
               : 0;
  char line[256];
  scr_interval_advice(cost, scr.mtbf, every, line, sizeof(line));
  scr_info("%s", line);
}

int SCR_Finalize(void)
{
  if (!scr.initialized) {
    scr_err("SCR_Finalize called without SCR_Init");
    return SCR_FAILURE;
  }
  int rc = SCR_SUCCESS;
  if (scr.enabled) {
    if (scr.in_output) {
      if (scr.rank == 0)
        scr_warn("SCR_Finalize called inside SCR_Start_output: the dataset '%s' is discarded",
                 scr.output_name ? scr.output_name : "");
      scr_api_abandon_output();
    }
    /* the newest checkpoint must survive the allocation when flushing is on */
    /* agreed, as the flush is collective: a rank may lack a dataset others have */
    int mine = scr_api_latest_checkpoint(), latest = -1;
    MPI_Allreduce(&mine, &latest, 1, MPI_INT, MPI_MAX, scr.comm_world);
    /* a background flush of an older one that has not finished copying is
     * given up for the newest, under the preload layer; else completed */
    double finish_start = scr_log_seconds();
    scr_flush_async_finish(latest);
    scr.stat_flush_seconds += scr_log_seconds() - finish_start;
    if (latest >= 0 && scr.flush > 0 && !scr_flush_agree_flushed(latest)) {
      double flush_start = scr_log_seconds();
      if (scr_flush_dataset(latest) != SCR_SUCCESS) rc = SCR_FAILURE;
      scr.stat_flush_seconds += scr_log_seconds() - flush_start;
      scr.stat_output_seconds += scr_log_seconds() - flush_start;
    }
    scr_flush_async_finalize();
    scr_api_interval_advice();
    scr_recovery_resumed("SCR_Finalize");
    /* the last publish recorded (scr_publish_finish_later) */
    scr_publish_settle();
    /* exact when the job ends: during it, changes no reader would see were
     * left for the next write (scr_flush_file.h); written only if it differs */
    if (scr.rank == 0) scr_flush_file_match(scr.prefix, scr.filemap);
    scr_event_log("FINALIZE", "datasets=%d checkpoints=%d seconds=%.3f", scr.dataset_id, scr.checkpoint_id,
                  scr_log_seconds() - scr.time_init);
    scr_cache_stop_reaper();
    scr_reddesc_finalize();
    /* abandoned output wrote the filemap: a journal still used names files
     * of a dataset that stays incomplete, for the next run to remove */
    scr_cache_journal_close();
    scr_kvtree_delete(&scr.filemap);
    free(scr.filemap_file);
    scr.filemap_file = NULL;
    free(scr.restart_name);
    scr.restart_name = NULL;
    MPI_Comm_free(&scr.comm_node);
  }
  MPI_Comm_free(&scr.comm_world);
  scr_setup_finalize();
  scr.initialized = 0;
  scr_log_rank = -1;
  return rc;
}

/* every rank passes the same SCR_Config lines (LLNL SCR requires it), so only
 * rank 0 of MPI_COMM_WORLD (or a process outside MPI) reports what is wrong */
static int scr_config_reports(void)
{
  int up = 0, rank = 0;
  MPI_Initialized(&up);
  if (up) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0;
}

/* 1 if a KEY=VALUE or descriptor line parses, without printing anything */
static int scr_config_line_parses(const char* line)
{
  char err[1024];
  scr_kvtree* scratch = scr_kvtree_new();
  int ok = scr_config_parse_string(line, "SCR_Config", scratch, err, sizeof(err)) == SCR_SUCCESS;
  scr_kvtree_delete(&scratch);
  return ok;
}

int scr_api_config(const char* config, char** value)
{
  *value = NULL;
  if (!config) return SCR_FAILURE;
  /* a query names a key ("KEY") or one descriptor attribute ("CKPT=0 TYPE"):
   * its last word has no '=' and, with several words, its first word has one */
  const char* start = config;
  while (*start == ' ' || *start == '\t') start++;
  const char* end = config + strlen(config);
  while (end > start && (end[-1] == ' ' || end[-1] == '\t')) end--;
  const char* last = end;
  while (last > start && last[-1] != ' ' && last[-1] != '\t') last--;
  size_t first_len = strcspn(start, " \t");
  int is_query = last < end && memchr(last, '=', (size_t) (end - last)) == NULL;
  if (is_query && (last == start || memchr(start, '=', first_len) != NULL)) {
    *value = scr_param_app_query(config);
    return *value ? SCR_SUCCESS : SCR_FAILURE;
  }
  if (scr.initialized) {
    scr_err("SCR_Config(\"%s\") after SCR_Init has no effect: call SCR_Config before SCR_Init",
            config);
    return SCR_FAILURE;
  }
  if (start == end) return SCR_SUCCESS; /* an empty line sets nothing, as in a config file */
  if (is_query) {
    /* "SCR_FLUSH 1" is neither a setting nor a query: SCR_Init will fail */
    if (scr_config_reports())
      scr_err("SCR_Config(\"%s\"): expected KEY=VALUE, KEY=, a descriptor line "
              "(NAME=VALUE KEY=VALUE ...), or KEY to query", config);
    scr_setup_app_config_error = 1;
    return SCR_FAILURE;
  }
  size_t n = (size_t) (end - start);
  int unset = start[n - 1] == '=';
  if (!unset && !scr_config_reports() && !scr_config_line_parses(config)) {
    /* rank 0 prints the reason; this rank only remembers that SCR_Init must fail */
    scr_setup_app_config_error = 1;
    return SCR_FAILURE;
  }
  if (scr_param_app_set(config) != SCR_SUCCESS) {
    scr_setup_app_config_error = 1;
    return SCR_FAILURE;
  }
  return SCR_SUCCESS;
}

const char* SCR_Config(const char* config)
{
  char* value;
  scr_api_config(config, &value);
  return value;
}

const char* SCR_Configf(const char* format, ...)
{
  va_list ap;
  char* text = NULL;
  va_start(ap, format);
  int n = vasprintf(&text, format, ap);
  va_end(ap);
  if (n < 0) return NULL;
  const char* value = SCR_Config(text);
  free(text);
  return value;
}

char* SCR_Get_version(void)
{
  static char version[] = PACKAGE_VERSION;
  return version;
}

int SCR_Should_exit(int* flag)
{
  if (!flag) return SCR_FAILURE;
  *flag = 0;
  if (!scr.initialized) {
    scr_err("SCR_Should_exit called without SCR_Init");
    return SCR_FAILURE;
  }
  if (!scr.enabled) return SCR_SUCCESS;
  *flag = scr_halt_check(0);
  return SCR_SUCCESS;
}
