/* scr_cache_restart.c - restart from cache: every rank checks its part of each
 * cached dataset, newest first, and the ranks agree before anything is used. */
#include "config.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_cache_restart.h"

int scr_cache_select_restart(int below, int* id)
{
  *id = -1;
  for (;;) {
    int local = scr_filemap_previous_dataset(scr.filemap, below);
    int candidate = -1;
    MPI_Allreduce(&local, &candidate, 1, MPI_INT, MPI_MAX, scr.comm_world);
    if (candidate < 0) break;

    int valid = scr_mpi_all_true(scr_cache_check_dataset(candidate), scr.comm_world);
    scr_kvtree* desc = scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, candidate), "DSETDESC");
    if (!valid) {
      if (scr.rank == 0)
        scr_warn("dataset %d in cache is incomplete or damaged on at least one rank: deleting it",
                 candidate);
      scr_cache_delete_dataset(candidate);
    } else if (scr_dataset_is_checkpoint(desc)) {
      *id = candidate;
      break;
    }
    below = candidate;
  }
  return *id >= 0 ? SCR_SUCCESS : SCR_ERR_NOENT;
}
