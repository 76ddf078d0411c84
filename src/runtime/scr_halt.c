/* scr_halt.c - decide, once for all ranks, whether the job must stop.
 * The reason is printed by rank 0 once, when the decision is first taken. */
#include "config.h"
#include <stdio.h>
#include <time.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_halt_file.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_halt.h"
#include "scr_event_log.h"

int scr_halt_decide(int after_checkpoint)
{
  int halt = 0;
  if (scr.halt_enabled && scr.rank == 0) {
    char reason[512] = "";
    scr_kvtree* tree = scr_kvtree_new();
    if (after_checkpoint) scr_halt_file_count_checkpoint(scr.prefix);
    time_t now = time(NULL);
    if (scr_halt_file_read(scr.prefix, tree) == SCR_SUCCESS)
      halt = scr_halt_file_check(tree, now, scr.halt_seconds, reason, sizeof(reason));
    /* the allocation's end, as the resource manager gave it to scr_run: the
     * checkpoint just written may be the last one that can still be flushed */
    if (!halt && scr.halt_seconds > 0 && scr.end_time > 0 &&
        (long long) now >= scr.end_time - scr.halt_seconds) {
      halt = 1;
      snprintf(reason, sizeof(reason), "less than %lld seconds before the allocation ends (SCR_END_TIME %lld)",
               scr.halt_seconds, scr.end_time);
    }
    if (halt && !scr.should_exit) {
      scr_info("halting: %s", reason);
      scr_event_log("HALT", "reason=%s", reason);
    }
    scr_kvtree_delete(&tree);
  }
  return halt;
}

int scr_halt_check(int after_checkpoint)
{
  if (!scr.halt_enabled) return scr.should_exit;
  int halt = scr_halt_decide(after_checkpoint);
  MPI_Bcast(&halt, 1, MPI_INT, 0, scr.comm_world);
  if (halt) scr.should_exit = 1;
  return scr.should_exit;
}
