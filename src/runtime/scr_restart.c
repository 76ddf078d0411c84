/* scr_restart.c - pick the restart dataset and keep dataset/checkpoint numbers
 * increasing across runs, whichever of cache and index remembers more. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_index_file.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_redundancy.h"
#include "scr_fetch.h"
#include "scr_restart.h"

static void scr_restart_set(int id)
{
  free(scr.restart_name);
  scr.restart_name = NULL;
  scr.restart_id = id;
  if (id >= 0) {
    scr_kvtree* desc = scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC");
    const char* name = scr_dataset_get_name(desc);
    scr.restart_name = strdup(name ? name : "");
  }
}

/* collective: newest checkpoint below `below` (-1: no bound) that every rank holds
 * intact, after rebuilding lost parts; datasets that cannot be restored are
 * deleted from cache with one line each */
static int scr_restart_from_cache(int below)
{
  for (;;) {
    int local = scr_filemap_previous_dataset(scr.filemap, below);
    int candidate = -1;
    MPI_Allreduce(&local, &candidate, 1, MPI_INT, MPI_MAX, scr.comm_world);
    if (candidate < 0) return -1;
    int rc = scr_redundancy_recover(candidate);
    if (rc != SCR_SUCCESS) {
      /* SCR_ERR_INVALID: the program took it apart, and recover said so */
      if (scr.rank == 0 && rc != SCR_ERR_INVALID)
        scr_warn("dataset %d in cache is incomplete or damaged beyond what its redundancy can "
                 "rebuild: deleting it", candidate);
      scr_cache_delete_dataset(candidate);
    } else {
      scr_kvtree* desc = scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, candidate), "DSETDESC");
      if (scr_dataset_is_checkpoint(desc)) return candidate;
    }
    below = candidate;
  }
}

int scr_restart_select(int below)
{
  int id = scr_restart_from_cache(below);
  if (id >= 0) {
    if (scr.rank == 0)
      scr_info("restarting from dataset %d (%s) in cache", id,
               scr_dataset_get_name(scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC")));
  } else if (scr.fetch) {
    if (below < 0) scr_fetch_latest(&id);
    else scr_fetch_older(below, &id);
  }
  scr_restart_set(id);
  return id >= 0 ? SCR_SUCCESS : SCR_ERR_NOENT;
}

/* collective: id of the checkpoint called name in cache, intact on every rank
 * after its redundancy rebuilt what was lost, else -1 */
static int scr_restart_find_cached(const char* name)
{
  int local = -1, found = -1;
  scr_kvtree_elem* e;
  for (e = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); e; e = scr_kvtree_next(e)) {
    scr_kvtree* desc = scr_kvtree_get(scr_kvtree_elem_tree(e), "DSETDESC");
    const char* n = scr_dataset_get_name(desc);
    int id = (int) scr_kvtree_elem_key_int(e);
    if (n && strcmp(n, name) == 0 && scr_dataset_is_checkpoint(desc) && id > local) local = id;
  }
  /* a rank that lost its cache does not know the name: the others tell it the id */
  MPI_Allreduce(&local, &found, 1, MPI_INT, MPI_MAX, scr.comm_world);
  if (found < 0) return -1;
  if (scr_redundancy_recover(found) == SCR_SUCCESS) return found;
  /* gone on every rank before a fetch refills the directory the ranks of a node share */
  if (scr.rank == 0)
    scr_warn("dataset %d (%s) in cache is damaged beyond what its redundancy can rebuild: "
             "deleting it", found, name);
  scr_cache_delete_dataset(found);
  MPI_Barrier(scr.comm_world);
  return -1;
}

void scr_restart_settle_cached(void)
{
  for (int below = -1;;) {
    int local = scr_filemap_previous_dataset(scr.filemap, below), id = -1;
    /* a rank that lost its cache knows none of them: the others name each */
    MPI_Allreduce(&local, &id, 1, MPI_INT, MPI_MAX, scr.comm_world);
    if (id < 0) return;
    int rc = id == scr.restart_id ? SCR_SUCCESS : scr_redundancy_recover(id);
    if (rc != SCR_SUCCESS) {
      if (scr.rank == 0 && rc != SCR_ERR_INVALID)
        scr_warn("dataset %d in cache is incomplete or damaged beyond what its redundancy can rebuild: "
                 "deleting it", id);
      scr_cache_delete_dataset(id);
    }
    below = id;
  }
}

static int scr_restart_mark_current(scr_kvtree* index, void* arg)
{
  return scr_index_file_set_current(index, (const char*) arg);
}

int scr_restart_select_named(const char* name)
{
  int id = scr_restart_find_cached(name);
  if (id < 0 && scr.fetch) scr_fetch_by_name(name, &id);
  if (id >= 0) {
    scr_kvtree* desc = scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC");
    if (!scr_dataset_is_checkpoint(desc)) {
      if (scr.rank == 0)
        scr_err("dataset '%s' is output, not a checkpoint: it cannot be restarted from", name);
      scr_cache_delete_dataset(id);
      return SCR_ERR_INVALID;
    }
  }
  if (id < 0) {
    if (scr.rank == 0)
      scr_err("no complete checkpoint named '%s' in cache%s%s", name,
              scr.fetch ? " or in the index of " : "", scr.fetch ? scr.prefix : "");
    return SCR_ERR_NOENT;
  }
  /* everything cached after the named checkpoint goes, as in LLNL SCR, so that
   * this run and the next one restart from it rather than from a newer one;
   * output that never reached the prefix directory is kept */
  int later = scr_filemap_latest_dataset(scr.filemap);
  while (later > id) {
    scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, later);
    long long flushed = 0;
    scr_kvtree_get_int(dset, "FLUSHED", &flushed);
    if (scr_dataset_is_checkpoint(scr_kvtree_get(dset, "DSETDESC")) || flushed)
      scr_cache_delete_dataset(later);
    later = scr_filemap_previous_dataset(scr.filemap, later);
  }
  /* a new allocation restarts from it too, when it is on the prefix directory */
  if (scr.rank == 0) scr_index_file_update(scr.prefix, scr_restart_mark_current, (void*) name);
  scr_restart_set(id);
  return SCR_SUCCESS;
}

void scr_restart_init_counters(void)
{
  int ids[2] = { -1, 0 };
  scr_kvtree_elem* e;
  for (e = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); e; e = scr_kvtree_next(e)) {
    long long ckpt = 0;
    int id = (int) scr_kvtree_elem_key_int(e);
    if (id > ids[0]) ids[0] = id;
    scr_kvtree_get_int(scr_kvtree_get(scr_kvtree_elem_tree(e), "DSETDESC"), "CKPT", &ckpt);
    if (ckpt > ids[1]) ids[1] = (int) ckpt;
  }
  if (scr.rank == 0) {
    scr_kvtree* index = scr_kvtree_new();
    scr_index_file_read(scr.prefix, index);
    for (e = scr_kvtree_first(scr_kvtree_get(index, "DSET")); e; e = scr_kvtree_next(e)) {
      long long ckpt = 0;
      int id = (int) scr_kvtree_elem_key_int(e);
      if (id > ids[0]) ids[0] = id;
      scr_kvtree_get_int(scr_kvtree_get(scr_kvtree_elem_tree(e), "DSETDESC"), "CKPT", &ckpt);
      if (ckpt > ids[1]) ids[1] = (int) ckpt;
    }
    scr_kvtree_delete(&index);
  }
  int out[2];
  MPI_Allreduce(ids, out, 2, MPI_INT, MPI_MAX, scr.comm_world);
  scr.dataset_id = out[0] < 0 ? 0 : out[0];
  scr.checkpoint_id = out[1];
}
