/* scr_halt.c - decide, once for all ranks, whether the job must stop.
 * The reason is printed by rank 0 once, when the decision is first taken. */
#include "config.h"
#include <time.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_halt_file.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_halt.h"

int scr_halt_decide(int after_checkpoint)
{
  int halt = 0;
  if (scr.halt_enabled && scr.rank == 0) {
    char reason[512] = "";
    scr_kvtree* tree = scr_kvtree_new();
    if (after_checkpoint) scr_halt_file_count_checkpoint(scr.prefix);
    if (scr_halt_file_read(scr.prefix, tree) == SCR_SUCCESS)
      halt = scr_halt_file_check(tree, time(NULL), scr.halt_seconds, reason, sizeof(reason));
    if (halt && !scr.should_exit) scr_info("halting: %s", reason);
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
