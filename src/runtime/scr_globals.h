/* scr_globals.h - the state of the library in one process: communicators,
 * configuration read at SCR_Init, directories and the dataset in progress. */
#ifndef SCR_GLOBALS_H
#define SCR_GLOBALS_H

#include <mpi.h>
#include <stdint.h>
#include "scr_kvtree.h"

struct scr_state {
  int initialized;       /* SCR_Init done and SCR_Finalize not yet */
  int enabled;           /* SCR_ENABLE: 0 turns every call into a pass-through */

  /* communicators: duplicates so our traffic never matches the application's */
  MPI_Comm comm_world;
  MPI_Comm comm_node;    /* ranks on the same host name */
  int rank, ranks;
  int node_rank, node_ranks;
  char hostname[256];

  /* identity and directories (absolute, normalised) */
  char* user;
  char* job_id;
  char* job_name;
  char* prefix;          /* SCR_PREFIX: where datasets are flushed */
  char* prefix_scr;      /* <prefix>/.scr */
  char* cntl_dir;        /* <cntl_base>/<user>/scr.<jobid> */
  char* cache_dir;       /* <cache_base>/<user>/scr.<jobid> */

  /* parameters */
  int debug;
  int cache_bypass;
  /* the cache was predicted too small for the next dataset at the last
   * completion (scr_cache_predict_next): it bypasses the cache */
  int cache_full;
  /* this node's numbers when it predicted a full cache, for rank 0's warning */
  unsigned long long cache_full_need, cache_full_free;
  int cache_full_evicting;
  uint64_t cache_red_bytes;  /* redundancy bytes of the last cached dataset on this rank */
  long long cache_size;  /* datasets kept in cache */
  long long flush;       /* flush every N checkpoints; 0 never */
  int fetch;
  int crc_on_flush;
  int crc_on_copy;
  long long checkpoint_interval;
  long long checkpoint_seconds;
  double checkpoint_overhead;
  double mtbf;                   /* SCR_MTBF in seconds, 0 unset: the Young/Daly interval */
  long long halt_seconds;
  long long end_time;            /* SCR_END_TIME: the allocation's end (epoch seconds), 0: unknown */
  int halt_exit;
  int halt_enabled;
  int flush_on_restart;
  int flush_async;               /* SCR_FLUSH_ASYNC: checkpoints go through scr_transfer */
  int flush_redundancy;          /* SCR_FLUSH_REDUNDANCY: a synchronous flush copies the redundancy data too */
  int scavenge_redundancy;       /* SCR_SCAVENGE_REDUNDANCY: scr_scavenge does (it sets flush_redundancy) */
  double flush_async_bw;         /* bytes/s per node, 0: no limit */
  double flush_async_percent;    /* of a CPU, 0: no limit */
  uint64_t file_buf_size;
  char* copy_type;

  /* dataset ids count up across runs */
  int dataset_id;        /* last id handed out */
  int checkpoint_id;     /* last checkpoint number */

  /* the per-rank filemap: what this rank has in cache */
  scr_kvtree* filemap;
  char* filemap_file;

  /* dataset in progress between Start_output and Complete_output */
  int in_output;
  int output_id;
  int output_flags;
  char* output_name;
  double output_start_time;

  /* set before SCR_Init by whoever embeds the library, called first on every
   * thread the library starts (the cache's reaper): the preload engine makes
   * such a thread's file calls its own, which its wrappers pass to libc */
  void (*thread_start)(void);
  /* set before SCR_Init by whoever embeds the library, called collectively
   * once the filemap is loaded and before a restart is chosen: the preload
   * engine moves cached files a run that died had begun to rename */
  void (*before_restart)(void);
  /* set before SCR_Init by whoever embeds the library, called collectively
   * on SCR_HALT_EXIT's exit, before SCR_Finalize and MPI_Finalize: the
   * preload engine frees the communicator it holds, which the program's own
   * MPI_Finalize (never reached) would have (MPI keeps what a communicator
   * not freed by then allocated) */
  void (*before_halt_exit)(void);

  /* set before SCR_Init by the preload engine: a flush copies into a stage
   * on the prefix directory and publishes it by renames at a point the
   * engine controls (scr_flush_publish.h), since the program renames and
   * deletes its files at any time; the background copy included */
  int flush_publish;

  /* set before SCR_Init by the preload engine: SCR_HALT_EXIT's default is 1
   * for a program that cannot ask SCR_Should_exit */
  int halt_exit_by_default;

  /* set before SCR_Init by the preload engine, which settles the other cached
   * datasets after SCR_Init restored one: it logs RESTORED itself, then */
  int restore_logged_by_caller;

  /* set before SCR_Init by scr_scavenge: restart from the newest checkpoint
   * in cache whatever SCR_CURRENT says (it would drop the later ones) */
  int restart_newest;

  /* restart state */
  int restart_id;        /* dataset to restart from, -1 if none */
  char* restart_name;
  int in_restart;

  /* halt */
  int should_exit;

  /* timing for SCR_Need_checkpoint */
  int need_checkpoint_calls;
  double time_init;
  double time_last_checkpoint_end;
  double time_in_checkpoints;
  /* this run's checkpoints, for the Young/Daly interval and its advice:
   * how many, the time they stopped the program (Start_output to the end of
   * Complete_output, synchronous flush included), when the first and the
   * last began */
  int checkpoints_this_run;
  double time_blocked_in_checkpoints;
  double time_first_checkpoint_start, time_last_checkpoint_start;

  /* totals of the datasets completed in this run (this rank's bytes), for
   * the preload layer's summary at MPI_Finalize */
  int stat_datasets;
  uint64_t stat_bytes;
  double stat_output_seconds;      /* Start_output to the end of Complete_output */
  double stat_redundancy_seconds;
  double stat_flush_seconds;
};

extern struct scr_state scr;

#endif
