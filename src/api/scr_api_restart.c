/* scr_api_restart.c - reading a restart and managing named datasets:
 * SCR_Have_restart, SCR_Start_restart, SCR_Complete_restart, SCR_Current, SCR_Drop, SCR_Delete. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_index_file.h"
#include "scr_flush_file.h"
#include "scr_flush_async.h"
#include "scr_summary_file.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_restart.h"
#include "scr_api.h"

int SCR_Have_restart(int* flag, char* name)
{
  if (!flag || scr_api_check_ready("SCR_Have_restart") != SCR_SUCCESS) return SCR_FAILURE;
  *flag = scr.enabled && scr.restart_id >= 0;
  if (name) snprintf(name, SCR_MAX_FILENAME, "%s", *flag ? scr.restart_name : "");
  return SCR_SUCCESS;
}

int SCR_Start_restart(char* name)
{
  if (scr_api_check_ready("SCR_Start_restart") != SCR_SUCCESS) return SCR_FAILURE;
  if (!scr.enabled || scr.restart_id < 0) {
    scr_err("SCR_Start_restart called but there is no restart: check SCR_Have_restart first");
    return SCR_FAILURE;
  }
  if (scr.in_output || scr.in_restart) {
    scr_err("SCR_Start_restart called inside %s", scr.in_output ? "an output phase" : "a restart");
    return SCR_FAILURE;
  }
  scr.in_restart = 1;
  if (name) snprintf(name, SCR_MAX_FILENAME, "%s", scr.restart_name);
  return SCR_SUCCESS;
}

struct scr_restart_fail_arg {
  const char* name;
};

static int scr_restart_mark_failed(scr_kvtree* index, void* arg)
{
  struct scr_restart_fail_arg* a = arg;
  int id = -1;
  if (scr_index_file_get_id_by_name(index, a->name, &id) == SCR_SUCCESS)
    scr_index_file_mark_failed(index, id, time(NULL), "the application could not read it");
  return SCR_SUCCESS;
}

int SCR_Complete_restart(int valid)
{
  if (scr_api_check_ready("SCR_Complete_restart") != SCR_SUCCESS) return SCR_FAILURE;
  if (!scr.in_restart) {
    scr_err("SCR_Complete_restart called without SCR_Start_restart");
    return SCR_FAILURE;
  }
  scr.in_restart = 0;
  int ok = scr_mpi_all_true(valid, scr.comm_world);
  int failed = scr.restart_id;
  if (ok) {
    free(scr.restart_name);
    scr.restart_name = NULL;
    scr.restart_id = -1;
    return SCR_SUCCESS;
  }
  /* the application rejected this checkpoint: forget it and offer the next older one */
  if (scr.rank == 0) {
    scr_warn("restart from '%s' was reported invalid by at least one rank: trying an older "
             "checkpoint", scr.restart_name);
    struct scr_restart_fail_arg arg = { scr.restart_name };
    scr_index_file_update(scr.prefix, scr_restart_mark_failed, &arg);
  }
  scr_cache_delete_dataset(failed);
  scr_restart_select(failed);
  return SCR_FAILURE;
}

int SCR_Current(const char* name)
{
  if (!name || scr_api_check_ready("SCR_Current") != SCR_SUCCESS) return SCR_FAILURE;
  if (!scr.enabled) return SCR_SUCCESS;
  if (scr.in_output || scr.in_restart) {
    scr_err("SCR_Current(\"%s\") must be called before SCR_Start_restart and outside output",
            name);
    return SCR_FAILURE;
  }
  if (scr_restart_select_named(name) != SCR_SUCCESS) {
    if (scr.rank == 0) scr_err("SCR_Current(\"%s\") failed: the restart is unchanged", name);
    return SCR_FAILURE;
  }
  return SCR_SUCCESS;
}

static int scr_drop_from_index(scr_kvtree* index, void* arg)
{
  const char* name = arg;
  int id = -1;
  if (scr_index_file_get_id_by_name(index, name, &id) != SCR_SUCCESS) return SCR_ERR_NOENT;
  return scr_index_file_remove(index, name);
}

int SCR_Drop(const char* name)
{
  if (!name || scr_api_check_ready("SCR_Drop") != SCR_SUCCESS) return SCR_FAILURE;
  if (!scr.enabled) return SCR_SUCCESS;
  /* a background flush must not index what this removes, after it */
  scr_flush_async_wait();
  int rc = SCR_SUCCESS;
  if (scr.rank == 0) {
    rc = scr_index_file_update(scr.prefix, scr_drop_from_index, (void*) name);
    if (rc == SCR_ERR_NOENT) rc = SCR_SUCCESS; /* nothing to drop is not an error */
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, scr.comm_world);
  return rc == SCR_SUCCESS ? SCR_SUCCESS : SCR_FAILURE;
}

static void scr_delete_files(const scr_kvtree* files)
{
  scr_kvtree_elem* e;
  for (e = scr_kvtree_first(scr_kvtree_get(files, "FILE")); e; e = scr_kvtree_next(e)) {
    char* path = scr_path_join(scr.prefix, scr_kvtree_elem_key(e));
    if (path && unlink(path) != 0 && errno != ENOENT)
      scr_warn("SCR_Delete: cannot remove %s: %s", path, strerror(errno));
    free(path);
  }
}

/* rank 0, once every file is gone: the directories that held them are removed
 * when that left them empty, up to the prefix directory (as LLNL SCR does) */
static void scr_delete_empty_dirs(const scr_kvtree* rank2file)
{
  scr_kvtree* dirs = scr_kvtree_new();
  scr_kvtree_elem* r;
  for (r = scr_kvtree_first(scr_kvtree_get(rank2file, "RANK")); r; r = scr_kvtree_next(r)) {
    scr_kvtree_elem* f;
    for (f = scr_kvtree_first(scr_kvtree_get(scr_kvtree_elem_tree(r), "FILE")); f;
         f = scr_kvtree_next(f)) {
      char* dir = scr_path_dirname(scr_kvtree_elem_key(f));
      if (dir && strcmp(dir, ".") != 0) scr_kvtree_add_kv(dirs, "DIR", dir);
      free(dir);
    }
  }
  scr_kvtree_elem* d;
  for (d = scr_kvtree_first(scr_kvtree_get(dirs, "DIR")); d; d = scr_kvtree_next(d)) {
    char* rel = strdup(scr_kvtree_elem_key(d));
    while (rel && strcmp(rel, ".") != 0) {
      char* path = scr_path_join(scr.prefix, rel);
      int gone = path && rmdir(path) == 0;
      free(path);
      if (!gone) break;
      char* up = scr_path_dirname(rel);
      free(rel);
      rel = up;
    }
    free(rel);
  }
  scr_kvtree_delete(&dirs);
}

/* each rank removes its own files of dataset id from the prefix directory,
 * rank 0 those of ranks this run does not have */
static void scr_delete_from_prefix(int id)
{
  scr_kvtree* rank2file = scr_kvtree_new();
  scr_kvtree* mine = scr_kvtree_new();
  int have = 0;
  if (scr.rank == 0) have = scr_rank2file_read(scr.prefix, id, rank2file) == SCR_SUCCESS;
  MPI_Bcast(&have, 1, MPI_INT, 0, scr.comm_world);
  if (have) {
    scr_mpi_scatter_kvtree(rank2file, mine, 0, scr.comm_world);
    scr_delete_files(mine);
    if (scr.rank == 0) {
      scr_kvtree_elem* r;
      for (r = scr_kvtree_first(scr_kvtree_get(rank2file, "RANK")); r; r = scr_kvtree_next(r))
        if (scr_kvtree_elem_key_int(r) >= scr.ranks) scr_delete_files(scr_kvtree_elem_tree(r));
    }
  }
  MPI_Barrier(scr.comm_world);
  if (scr.rank == 0) {
    if (have) scr_delete_empty_dirs(rank2file);
    char* dir = scr_summary_dataset_dir(scr.prefix, id);
    if (dir) scr_io_remove_tree(dir);
    free(dir);
    scr_flush_file_remove(scr.prefix, id);
  }
  scr_kvtree_delete(&mine);
  scr_kvtree_delete(&rank2file);
}

int SCR_Delete(const char* name)
{
  if (!name || scr_api_check_ready("SCR_Delete") != SCR_SUCCESS) return SCR_FAILURE;
  if (!scr.enabled) return SCR_SUCCESS;
  /* a background flush must not index what this removes, after it */
  scr_flush_async_wait();

  /* in cache: every rank drops its copy */
  scr_kvtree_elem* e;
  int cached = -1;
  for (e = scr_kvtree_first(scr_kvtree_get(scr.filemap, "DSET")); e; e = scr_kvtree_next(e)) {
    const char* n = scr_dataset_get_name(scr_kvtree_get(scr_kvtree_elem_tree(e), "DSETDESC"));
    if (n && strcmp(n, name) == 0) cached = (int) scr_kvtree_elem_key_int(e);
  }
  if (cached >= 0) scr_cache_delete_dataset(cached);
  if (cached >= 0 && cached == scr.restart_id) {
    scr.restart_id = -1;
    free(scr.restart_name);
    scr.restart_name = NULL;
  }

  /* on the prefix directory: files, metadata, index entry */
  int id = -1;
  if (scr.rank == 0) {
    scr_kvtree* index = scr_kvtree_new();
    scr_index_file_read(scr.prefix, index);
    if (scr_index_file_get_id_by_name(index, name, &id) != SCR_SUCCESS) id = -1;
    scr_kvtree_delete(&index);
  }
  MPI_Bcast(&id, 1, MPI_INT, 0, scr.comm_world);
  if (id >= 0) {
    scr_delete_from_prefix(id);
    if (scr.rank == 0) scr_index_file_update(scr.prefix, scr_drop_from_index, (void*) name);
  }
  MPI_Barrier(scr.comm_world);
  return SCR_SUCCESS;
}
