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
#include "scr_cache.h"
#include "scr_cache_restart.h"
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

int scr_restart_select(int below)
{
  int id = -1;
  scr_cache_select_restart(below, &id);
  if (id >= 0) {
    if (scr.rank == 0)
      scr_info("restarting from dataset %d in cache", id);
  } else if (scr.fetch) {
    if (below < 0) scr_fetch_latest(&id);
    else scr_fetch_older(below, &id);
  }
  scr_restart_set(id);
  return id >= 0 ? SCR_SUCCESS : SCR_ERR_NOENT;
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
