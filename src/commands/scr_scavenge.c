/* scr_scavenge.c - the copy step of scr_postrun: an MPI job of the last run's size
 * restores the cache as a restart would (rebuilding lost files) and flushes what never reached the prefix;
 * one of fewer ranks copies what the surviving nodes hold (scr_scavenge_survivors.c). */
#include "config.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_flush.h"
#include "scr_index_file.h"
#include "scr_api.h"
#include "scr_scavenge.h"

/* Why an MPI job rather than a copy per node: a lost node's files exist only
 * as redundancy data spread over the set, and rebuilding them is what
 * SCR_Init already does at every restart, on any placement of the ranks. So
 * the scavenge is a restart that copies instead of computing, with the one
 * rebuild the tests cover, and it runs under whichever launcher ran the job.
 * Run with fewer ranks than the job had, when lost nodes left no spare to
 * take their place, it copies what the surviving nodes hold instead, and
 * scr_index --build rebuilds the rest on the prefix directory. */

static void scr_scavenge_usage(FILE* out)
{
  fprintf(out,
    "Usage: LAUNCHER [ARGS] scr_scavenge\n"
    "Run by scr_postrun with as many ranks as the job had, on its healthy nodes,\n"
    "in its working directory: restores the datasets still in node-local cache\n"
    "(rebuilding what lost nodes held) and copies to the prefix directory the\n"
    "newest checkpoint and the output datasets after it that are not there yet,\n"
    "with their redundancy data (SCR_SCAVENGE_REDUNDANCY=1, the default).\n"
    "Run with fewer ranks than the job had (lost nodes and no spare), it copies\n"
    "what the surviving nodes hold, and a dataset lacking the ranks of the lost\n"
    "nodes stays incomplete until scr_index --build rebuilds them.\n"
    "\n"
    "Exit status: 0 when nothing was left to copy or everything was copied,\n"
    "1 when a copy failed, 2 on a usage error.\n");
}

/* collective: 1 when every rank's filemap says the dataset is on the prefix */
static int scr_scavenge_is_flushed(int id)
{
  int mine = scr_flush_is_flushed(id), all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, scr.comm_world);
  return all;
}

/* collective: the newest dataset below `below` that some rank holds, or -1 */
static int scr_scavenge_previous(int below)
{
  int mine = scr_filemap_previous_dataset(scr.filemap, below), newest = -1;
  MPI_Allreduce(&mine, &newest, 1, MPI_INT, MPI_MAX, scr.comm_world);
  return newest;
}

/* collective: the newest complete checkpoint in the index of the prefix
 * directory, -1 when there is none */
static int scr_scavenge_newest_indexed(void)
{
  int newest = -1;
  if (scr.rank == 0) {
    scr_kvtree* index = scr_kvtree_new();
    if (scr_index_file_read(scr.prefix, index) != SCR_SUCCESS ||
        scr_index_file_most_recent_checkpoint(index, -1, &newest) != SCR_SUCCESS)
      newest = -1;
    scr_kvtree_delete(&index);
  }
  MPI_Bcast(&newest, 1, MPI_INT, 0, scr.comm_world);
  return newest;
}

/* collective: flush the restored checkpoint and the output datasets after it
 * (SCR_Init kept only those its redundancy could restore); the number of
 * datasets copied, or -1 when one could not be. A checkpoint older than the
 * newest in the index stays out: flushed, it would become the current one. */
static int scr_scavenge_datasets(void)
{
  int copied = 0, failed = 0;
  int newest_indexed = scr_scavenge_newest_indexed();
  for (int id = scr_scavenge_previous(-1); id >= 0 && id >= scr.restart_id; id = scr_scavenge_previous(id)) {
    scr_kvtree* desc = scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC");
    const char* name = scr_dataset_get_name(desc);
    if (scr_dataset_is_checkpoint(desc) && id < newest_indexed) {
      if (scr.rank == 0)
        printf("scr_scavenge: dataset %d (%s) is older than checkpoint %d in the index of %s: not copied\n", id,
               name ? name : "?", newest_indexed, scr.prefix);
      continue;
    }
    if (scr_scavenge_is_flushed(id)) {
      if (scr.rank == 0) printf("scr_scavenge: dataset %d (%s) is already in %s\n", id, name ? name : "?", scr.prefix);
      continue;
    }
    if (scr_flush_dataset(id) == SCR_SUCCESS) {
      copied++;
      if (scr.rank == 0) printf("scr_scavenge: dataset %d (%s) copied to %s\n", id, name ? name : "?", scr.prefix);
    } else {
      failed = 1;
      if (scr.rank == 0)
        scr_err("scavenge of dataset %d (%s) into %s failed: it stays in cache only", id, name ? name : "?",
                scr.prefix);
    }
  }
  return failed ? -1 : copied;
}

int main(int argc, char** argv)
{
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      scr_scavenge_usage(stdout);
      return 0;
    }
    fprintf(stderr, "scr_scavenge: unknown argument '%s'\n", argv[i]);
    scr_scavenge_usage(stderr);
    return 2;
  }
  /* the prefix directory is where the copy goes, not a source (the
   * environment outranks every configuration file); and the newest
   * checkpoint in cache is the one to keep, whatever SCR_CURRENT named for
   * the job (a restart from it would drop the later ones) */
  setenv("SCR_FETCH", "0", 1);
  scr.restart_newest = 1;
  MPI_Init(&argc, &argv);
  int rc = 1;
  if (scr_init_setup() == SCR_SUCCESS) {
    int job_ranks = scr.enabled ? scr_scavenge_job_ranks() : -1;
    if (job_ranks > scr.ranks) {
      rc = scr_scavenge_survivors(job_ranks) < 0;
      scr_init_release();
    } else if (!scr.enabled || scr_init_restore() == SCR_SUCCESS) {
      scr.flush_redundancy = scr.scavenge_redundancy;
      int copied = scr.enabled ? scr_scavenge_datasets() : 0;
      if (scr.rank == 0 && scr.enabled && copied == 0 && scr.restart_id < 0)
        printf("scr_scavenge: no dataset left in cache\n");
      rc = copied < 0;
      if (SCR_Finalize() != SCR_SUCCESS) rc = 1;
    }
  }
  fflush(stdout);
  MPI_Finalize();
  return rc;
}
