/* scr_fetch.c - restart from the prefix directory: rank 0 reads the index, summary
 * and rank2file map, each rank copies and checks its own files (size and CRC32). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_summary_file.h"
#include "scr_index_file.h"
#include "scr_flush_file.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_event_log.h"
#include "scr_prefix_rebuild.h"
#include "scr_fetch.h"

/* copy this rank's files of dataset id; returns 1 if every file arrived intact */
static int scr_fetch_copy_files(int id, const scr_kvtree* mine)
{
  int ok = 1;
  long long expected = 0;
  scr_kvtree* files = scr_kvtree_get(mine, "FILE");
  scr_kvtree_get_int(mine, "FILES", &expected);
  if (expected != scr_kvtree_size(files)) {
    scr_err("fetch of dataset %d: the rank2file map lists %d of the %lld files of rank %d",
            id, scr_kvtree_size(files), expected, scr.rank);
    return 0;
  }
  scr_filemap_set_file_count(scr.filemap, id, scr.rank, (int) expected);
  char path[4096];
  /* LINK/<group>/{PATH, SIZE, CRC}: the cache file of each file with several
   * names, which its other names are made hard links of, not copied again */
  scr_kvtree* linked = scr_kvtree_new();
  scr_kvtree_elem* e;
  for (e = scr_kvtree_first(files); e && ok; e = scr_kvtree_next(e)) {
    const char* relpath = scr_kvtree_elem_key(e);
    scr_kvtree* info = scr_kvtree_elem_tree(e);
    char* src = scr_path_join(scr.prefix, relpath);
    uint64_t want = 0, size = 0;
    uint32_t crc = 0;
    scr_kvtree_get_uint64(info, "SIZE", &want);
    const char* want_crc = scr_kvtree_get_val(info, "CRC");
    const char* group = scr_kvtree_get_val(info, SCR_FILEMAP_KEY_LINK);
    scr_kvtree* first = group ? scr_kvtree_get_kv(linked, "LINK", group) : NULL;
    int got = scr_cache_route_file(id, src, relpath, path, sizeof(path)) == SCR_SUCCESS;
    if (got && first) {
      got = scr_io_link_file(scr_kvtree_get_val(first, "PATH"), path, 0700) == SCR_SUCCESS;
      scr_kvtree_get_uint64(first, "SIZE", &size);
      crc = (uint32_t) strtoul(scr_kvtree_get_val(first, "CRC"), NULL, 16);
    } else if (got) {
      got = scr_io_copy_file(src, path, 0700, &crc, &size) == SCR_SUCCESS;
    }
    if (got && group && !first) {
      scr_kvtree* made = scr_kvtree_add_kv(linked, "LINK", group);
      scr_kvtree_set_kv(made, "PATH", path);
      scr_kvtree_set_kv_uint64(made, "SIZE", size);
      scr_kvtree_set_kvf(made, "CRC", "0x%08x", crc);
    }
    if (!got) {
      scr_err("fetch of dataset %d: cannot copy %s into cache", id, src);
      ok = 0;
    } else if (size != want) {
      scr_err("fetch of dataset %d: %s has %llu bytes, the rank2file map says %llu", id, src,
              (unsigned long long) size, (unsigned long long) want);
      ok = 0;
    } else if (want_crc && strtoul(want_crc, NULL, 16) != crc) {
      scr_err("fetch of dataset %d: CRC32 mismatch in %s (0x%08x, expected %s): the file on "
              "the prefix directory is corrupt", id, src, crc, want_crc);
      ok = 0;
    } else {
      scr_kvtree* meta = scr_kvtree_get(scr_filemap_get_files(scr.filemap, id, scr.rank), path);
      scr_kvtree_set_kv_uint64(meta, "SIZE", size);
      scr_kvtree_set_kvf(meta, "CRC", "0x%08x", crc);
      scr_kvtree_set_kv_int(meta, "COMPLETE", 1);
      if (group) scr_kvtree_set_kv(meta, SCR_FILEMAP_KEY_LINK, group);
    }
    free(src);
  }
  scr_kvtree_delete(&linked);
  return ok;
}

/* rank 0 side of an attempt: summary and rank2file of id, checked against this job */
static int scr_fetch_read_metadata(int id, scr_kvtree* summary, scr_kvtree* rank2file,
                                   char* reason, size_t len, int* damaged)
{
  long long ranks = 0;
  if (scr_summary_file_read(scr.prefix, id, summary) != SCR_SUCCESS ||
      scr_rank2file_read(scr.prefix, id, rank2file) != SCR_SUCCESS) {
    snprintf(reason, len, "summary or rank2file map missing or unreadable");
    return 0;
  }
  scr_kvtree_get_int(summary, "RANKS", &ranks);
  if (ranks != scr.ranks) {
    /* the dataset is fine, only not for this run: it must stay usable */
    snprintf(reason, len, "written by %lld ranks, this run has %d", ranks, scr.ranks);
    *damaged = 0;
    return 0;
  }
  if (!scr_dataset_is_complete(scr_kvtree_get(summary, "DSETDESC"))) {
    snprintf(reason, len, "the dataset is marked incomplete");
    return 0;
  }
  return 1;
}

/* collective: one attempt at fetching id; 1 on success */
static int scr_fetch_attempt(int id, char* reason, size_t len, int* damaged)
{
  scr_kvtree* summary = scr_kvtree_new();
  scr_kvtree* rank2file = scr_kvtree_new();
  scr_kvtree* mine = scr_kvtree_new();
  int ok = 1;
  *damaged = 1;
  if (scr.rank == 0) ok = scr_fetch_read_metadata(id, summary, rank2file, reason, len, damaged);
  MPI_Bcast(&ok, 1, MPI_INT, 0, scr.comm_world);
  if (ok) {
    scr_mpi_bcast_kvtree(summary, 0, scr.comm_world);
    scr_mpi_scatter_kvtree(rank2file, mine, 0, scr.comm_world);
    /* the cache may hold a stale copy under the same id: replace it. Ranks of a
     * node share the dataset directory, so all of them let it go before any
     * rank copies into a new one */
    int stale = scr_filemap_get_dataset(scr.filemap, id) != NULL;
    if (!scr_mpi_all_true(!stale, scr.comm_world)) {
      scr_cache_delete_dataset(id);
      MPI_Barrier(scr.comm_world);
    }
    scr_kvtree* dset = scr_filemap_add_dataset(scr.filemap, id);
    scr_kvtree_set(dset, "DSETDESC", scr_kvtree_copy(scr_kvtree_get(summary, "DSETDESC")));
    scr_kvtree_set_kv(scr_kvtree_get_or_create(dset, "REDDESC"), "TYPE", "SINGLE");
    ok = scr_mpi_all_true(scr_fetch_copy_files(id, mine), scr.comm_world);
    if (ok) {
      scr_kvtree_set_kv_int(dset, "FLUSHED", 1);
      scr_cache_save_filemap();
    } else {
      snprintf(reason, len, "files missing or corrupt on the prefix directory");
      scr_cache_delete_dataset(id);
    }
  }
  scr_kvtree_delete(&mine);
  scr_kvtree_delete(&rank2file);
  scr_kvtree_delete(&summary);
  return ok;
}

struct scr_fetch_mark_arg {
  int id;
  int ok;
  const char* reason;
};

static int scr_fetch_mark(scr_kvtree* index, void* arg)
{
  struct scr_fetch_mark_arg* a = arg;
  if (a->ok) scr_index_file_mark_fetched(index, a->id, time(NULL));
  else scr_index_file_mark_failed(index, a->id, time(NULL), a->reason);
  return SCR_SUCCESS;
}

/* rank 0, after a failed fetch of id whose files are damaged or missing:
 * 1 when the redundancy data flushed beside it rebuilt what was missing
 * (scr_index --build's work, done here so that a restart does not fall back
 * to an older checkpoint that the prefix directory can make whole);
 * *ranks: how many ranks' files it rebuilt */
static int scr_fetch_rebuild(int id, const char* name, const char* reason, int* ranks)
{
  char* red = scr_summary_dataset_file(scr.prefix, id, SCR_SUMMARY_REDUNDANCY_DIR);
  int rebuildable = red && name && access(red, F_OK) == 0;
  free(red);
  if (!rebuildable) return 0;
  scr_info("cannot fetch dataset %d (%s) from %s: %s; rebuilding it from the redundancy data there", id, name,
           scr.prefix, reason);
  return scr_prefix_rebuild(scr.prefix, id, ranks) == SCR_SUCCESS;
}

/* collective loop over candidates chosen by rank 0, starting at first */
static int scr_fetch_from(int first, int fall_back, int* id_out)
{
  int candidate = first;
  int rebuilt = -1; /* the candidate rebuilt on the prefix: fetched once more, not rebuilt again */
  *id_out = -1;
  for (;;) {
    MPI_Bcast(&candidate, 1, MPI_INT, 0, scr.comm_world);
    if (candidate < 0) break;
    char reason[256] = "";
    double start = scr_log_seconds();
    int damaged = 1;
    scr_event_log("FETCH_START", "dset=%d", candidate);
    int ok = scr_fetch_attempt(candidate, reason, sizeof(reason), &damaged);
    if (scr.rank == 0) {
      scr_kvtree* index = scr_kvtree_new();
      if (!ok && damaged && rebuilt != candidate) {
        scr_index_file_read(scr.prefix, index);
        const char* name = scr_index_file_get_name(index, candidate);
        int ranks = 0;
        if (scr_fetch_rebuild(candidate, name, reason, &ranks)) {
          /* the same candidate again (broadcast at the top of the loop) */
          scr_event_log("FETCH_FAILED", "dset=%d name=%s seconds=%.3f reason=%s; %d ranks rebuilt on the prefix",
                        candidate, name, scr_log_seconds() - start, reason, ranks);
          rebuilt = candidate;
          scr_kvtree_delete(&index);
          continue;
        }
        scr_kvtree_delete(&index);
        index = scr_kvtree_new();
      }
      struct scr_fetch_mark_arg arg = { candidate, ok, reason };
      if (ok || damaged) scr_index_file_update(scr.prefix, scr_fetch_mark, &arg);
      scr_index_file_read(scr.prefix, index);
      const char* name = scr_index_file_get_name(index, candidate);
      uint64_t bytes = 0;
      scr_kvtree_get_uint64(scr_index_file_get_dsetdesc(index, candidate), "SIZE", &bytes);
      scr_event_log(ok ? "FETCH_COMPLETE" : "FETCH_FAILED", "dset=%d name=%s bytes=%llu seconds=%.3f%s%s",
                    candidate, name ? name : "?", (unsigned long long) bytes, scr_log_seconds() - start,
                    ok ? "" : " reason=", ok ? "" : reason);
      if (ok) {
        scr_info("restarting from dataset %d (%s) fetched from %s in %.3f s", candidate,
                 name ? name : "?", scr.prefix, scr_log_seconds() - start);
      } else {
        scr_warn("cannot fetch dataset %d (%s) from %s: %s%s", candidate, name ? name : "?", scr.prefix, reason,
                 damaged ? "; marked FAILED in the index" : "");
        int older = -1;
        if (fall_back && scr_index_file_most_recent_checkpoint(index, candidate, &older) == SCR_SUCCESS)
          candidate = older;
        else
          candidate = -1;
      }
      scr_kvtree_delete(&index);
    }
    if (ok) {
      *id_out = candidate;
      break;
    }
  }
  return *id_out >= 0 ? SCR_SUCCESS : SCR_ERR_NOENT;
}

int scr_fetch_latest(int* id)
{
  int first = -1;
  if (scr.rank == 0) {
    scr_kvtree* index = scr_kvtree_new();
    scr_index_file_read(scr.prefix, index);
    const char* current = scr_index_file_get_current(index);
    int cur_id = -1;
    if (current && scr_index_file_get_id_by_name(index, current, &cur_id) == SCR_SUCCESS &&
        scr_index_file_most_recent_checkpoint(index, cur_id + 1, &first) == SCR_SUCCESS &&
        first == cur_id) {
      /* the current dataset is a usable checkpoint */
    } else if (scr_index_file_most_recent_checkpoint(index, -1, &first) != SCR_SUCCESS) {
      first = -1;
    }
    scr_kvtree_delete(&index);
  }
  return scr_fetch_from(first, 1, id);
}

int scr_fetch_by_name(const char* name, int* id)
{
  int first = -1;
  if (scr.rank == 0) {
    scr_kvtree* index = scr_kvtree_new();
    scr_index_file_read(scr.prefix, index);
    if (scr_index_file_get_id_by_name(index, name, &first) != SCR_SUCCESS) first = -1;
    scr_kvtree_delete(&index);
  }
  return scr_fetch_from(first, 0, id);
}

int scr_fetch_older(int below, int* id)
{
  int first = -1;
  if (scr.rank == 0) {
    scr_kvtree* index = scr_kvtree_new();
    scr_index_file_read(scr.prefix, index);
    if (scr_index_file_most_recent_checkpoint(index, below, &first) != SCR_SUCCESS) first = -1;
    scr_kvtree_delete(&index);
  }
  return scr_fetch_from(first, 1, id);
}
