/* scr_scavenge_survivors.c - a scavenge from fewer nodes than the job had: each node's ranks
 * copy, as they are, the files and redundancy data its control directory's filemaps name. */
#include "config.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_summary_file.h"
#include "scr_index_file.h"
#include "scr_flush_file.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_flush.h"
#include "scr_flush_redundancy.h"
#include "scr_reddesc_type.h"
#include "scr_prefix_rebuild.h"
#include "scr_scavenge.h"

/* Why not SCR_Init: a restart needs as many ranks as the job had, each
 * finding its filemap, and it rebuilds in cache what lost nodes held. With
 * fewer ranks (the allocation's spare nodes used up), SCR_Init would take
 * the filemaps of other ranks for its own and delete what it cannot
 * restore. This copy moves nothing in cache: each node's ranks copy the
 * parts of the job ranks whose filemaps the node holds, and rank 0 records
 * the dataset on the prefix directory, complete or lacking the ranks whose
 * node is lost, which scr_index --build then rebuilds from the redundancy
 * data copied beside it. */

/* node leader: HELD/<r>/{LATEST, RANKS} for each filemap in the control directory */
static void scr_survivors_list(scr_kvtree* held)
{
  DIR* dir = opendir(scr.cntl_dir);
  struct dirent* ent;
  while (dir && (ent = readdir(dir)) != NULL) {
    int r = -1;
    char tail = 0;
    if (sscanf(ent->d_name, "filemap_%d.sc%c", &r, &tail) != 2 || tail != 'r' || r < 0) continue;
    char* path = scr_filemap_path(scr.cntl_dir, r);
    scr_kvtree* map = scr_kvtree_new();
    if (path && scr_kvtree_read_file(path, map) == SCR_SUCCESS) {
      long long ranks = r + 1;
      for (scr_kvtree_elem* d = scr_kvtree_first(scr_kvtree_get(map, "DSET")); d; d = scr_kvtree_next(d)) {
        long long v = 0;
        if (scr_kvtree_get_int(scr_kvtree_get(scr_kvtree_elem_tree(d), "REDDESC"), "RANKS", &v) == SCR_SUCCESS &&
            v > ranks)
          ranks = v;
      }
      scr_kvtree* h = scr_kvtree_add_kv_int(held, "HELD", r);
      scr_kvtree_set_kv_int(h, "LATEST", scr_filemap_latest_dataset(map));
      scr_kvtree_set_kv_int(h, "RANKS", ranks);
    }
    scr_kvtree_delete(&map);
    free(path);
  }
  if (dir) closedir(dir);
}

int scr_scavenge_job_ranks(void)
{
  long long mine = -1;
  int ranks = -1;
  if (scr.node_rank == 0) {
    scr_kvtree* held = scr_kvtree_new();
    scr_survivors_list(held);
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(held, "HELD")); e; e = scr_kvtree_next(e)) {
      long long v = -1;
      scr_kvtree_get_int(scr_kvtree_elem_tree(e), "RANKS", &v);
      if (v > mine) mine = v;
    }
    scr_kvtree_delete(&held);
  }
  int local = mine > 0x7fffffffLL ? 0x7fffffff : (int) mine;
  MPI_Allreduce(&local, &ranks, 1, MPI_INT, MPI_MAX, scr.comm_world);
  return ranks;
}

/* collective: which job ranks' filemaps this rank copies from, JOB/<r>; a
 * node's ranks share the work, and a filemap two nodes hold (a move cut
 * short) is taken where it names the newer dataset */
static void scr_survivors_assign(scr_kvtree* jobs)
{
  int leader = scr.rank;
  MPI_Bcast(&leader, 1, MPI_INT, 0, scr.comm_node);
  scr_kvtree* mine = scr_kvtree_new();
  scr_kvtree* node = scr_kvtree_add_kv_int(mine, "NODE", leader);
  scr_kvtree_add_kv_int(node, "MEMBER", scr.rank);
  if (scr.node_rank == 0) scr_survivors_list(node);
  scr_kvtree* all = scr_kvtree_new();
  scr_kvtree* plan = scr_kvtree_new();
  scr_mpi_gather_kvtree(mine, all, 0, scr.comm_world);
  if (scr.rank == 0) {
    scr_kvtree* best = scr_kvtree_new();   /* JOB/<r>/{NODE, LATEST} */
    for (scr_kvtree_elem* n = scr_kvtree_first(scr_kvtree_get(all, "NODE")); n; n = scr_kvtree_next(n))
      for (scr_kvtree_elem* h = scr_kvtree_first(scr_kvtree_get(scr_kvtree_elem_tree(n), "HELD")); h;
           h = scr_kvtree_next(h)) {
        long long latest = -1, known = -2;
        scr_kvtree_get_int(scr_kvtree_elem_tree(h), "LATEST", &latest);
        scr_kvtree* b = scr_kvtree_get_kv(best, "JOB", scr_kvtree_elem_key(h));
        scr_kvtree_get_int(b, "LATEST", &known);
        if (b && known >= latest) continue;
        b = scr_kvtree_add_kv(best, "JOB", scr_kvtree_elem_key(h));
        scr_kvtree_set_kv(b, "NODE", scr_kvtree_elem_key(n));
        scr_kvtree_set_kv_int(b, "LATEST", latest);
      }
    /* round robin over the ranks of the holding node */
    scr_kvtree* next = scr_kvtree_new();
    for (scr_kvtree_elem* j = scr_kvtree_first(scr_kvtree_get(best, "JOB")); j; j = scr_kvtree_next(j)) {
      const char* n = scr_kvtree_get_val(scr_kvtree_elem_tree(j), "NODE");
      scr_kvtree* members = scr_kvtree_get(scr_kvtree_get_kv(all, "NODE", n), "MEMBER");
      long long turn = 0;
      scr_kvtree_get_int(next, n, &turn);
      scr_kvtree_elem* m = scr_kvtree_first(members);
      for (long long i = 0; m && i < turn % scr_kvtree_size(members); i++) m = scr_kvtree_next(m);
      scr_kvtree_set_kv_int(next, n, turn + 1);
      if (m) scr_kvtree_add_kv(scr_kvtree_add_kv(plan, "RANK", scr_kvtree_elem_key(m)), "JOB", scr_kvtree_elem_key(j));
    }
    scr_kvtree_delete(&next);
    scr_kvtree_delete(&best);
  }
  scr_mpi_scatter_kvtree(plan, jobs, 0, scr.comm_world);
  scr_kvtree_delete(&plan);
  scr_kvtree_delete(&all);
  scr_kvtree_delete(&mine);
}

/* the filemaps of the job ranks in jobs: MAP/<r>/..., with what names files
 * outside the cache dropped as SCR_Init drops it */
static void scr_survivors_load(const scr_kvtree* jobs, scr_kvtree* maps)
{
  for (scr_kvtree_elem* j = scr_kvtree_first(scr_kvtree_get(jobs, "JOB")); j; j = scr_kvtree_next(j)) {
    int r = (int) scr_kvtree_elem_key_int(j);
    char* path = scr_filemap_path(scr.cntl_dir, r);
    scr_kvtree* map = scr_kvtree_new();
    if (path && scr_kvtree_read_file(path, map) == SCR_SUCCESS) {
      scr_filemap_drop_unsafe(map, path, scr.cache_dir, scr.prefix);
      scr_kvtree_set(scr_kvtree_get_or_create(maps, "MAP"), scr_kvtree_elem_key(j), map);
      map = NULL;
    }
    scr_kvtree_delete(&map);
    free(path);
  }
}

/* 1 when rank r's part of dataset dset carries the redundancy its scheme
 * makes: a parity file (XOR, RS) or a partner's copy (PARTNER); what a job
 * killed while encoding left lacks it, and cannot rebuild a lost rank */
static int scr_survivors_protected(const scr_kvtree* dset, int r)
{
  enum scr_copy_type type;
  long long stale = 0;
  scr_kvtree_get_int(dset, SCR_FILEMAP_KEY_REDUNDANCY_STALE, &stale);
  if (stale || scr_reddesc_type_from_name(scr_kvtree_get_val(scr_kvtree_get(dset, "REDDESC"), "TYPE"), &type) !=
                   SCR_SUCCESS)
    return 0;
  if (type == SCR_COPY_PARTNER) return scr_kvtree_size(scr_kvtree_get(dset, "PARTNER")) > 0;
  if (type == SCR_COPY_XOR || type == SCR_COPY_RS)
    return scr_kvtree_size(scr_kvtree_get(scr_kvtree_get_kv_int(dset, "RANK", r), "REDFILE")) > 0;
  return 0;
}

/* collective: the datasets to copy, DSET/<id>/DESC, newest first: the
 * newest checkpoint not older than the index's and the output datasets
 * after it, each unless it is on the prefix already, the program took it
 * apart, or a surviving rank holds it incomplete or, when ranks are
 * missing, unprotected (the job died while it completed or encoded it: an
 * older one is taken instead) */
static void scr_survivors_plan(const scr_kvtree* maps, int job_ranks, scr_kvtree* plan)
{
  scr_kvtree* mine = scr_kvtree_new();
  for (scr_kvtree_elem* m = scr_kvtree_first(scr_kvtree_get(maps, "MAP")); m; m = scr_kvtree_next(m)) {
    scr_kvtree_add_kv(mine, "HELD", scr_kvtree_elem_key(m));
    for (scr_kvtree_elem* d = scr_kvtree_first(scr_kvtree_get(scr_kvtree_elem_tree(m), "DSET")); d;
         d = scr_kvtree_next(d)) {
      scr_kvtree* dset = scr_kvtree_elem_tree(d);
      scr_kvtree* desc = scr_kvtree_get(dset, "DSETDESC");
      if (!desc || !scr_dataset_is_complete(desc)) continue;
      scr_kvtree* info = scr_kvtree_add_kv(mine, "DSET", scr_kvtree_elem_key(d));
      if (!scr_kvtree_get(info, "DESC")) scr_kvtree_set(info, "DESC", scr_kvtree_copy(desc));
      scr_kvtree_add_kv(info, "COMPLETE", scr_kvtree_elem_key(m));
      if (scr_survivors_protected(dset, (int) scr_kvtree_elem_key_int(m)))
        scr_kvtree_add_kv(info, "PROTECTED", scr_kvtree_elem_key(m));
      long long flag = 0;
      if (scr_kvtree_get_int(dset, "FLUSHED", &flag) == SCR_SUCCESS && flag == 1)
        scr_kvtree_add_kv(info, "FLUSHED", scr_kvtree_elem_key(m));
      flag = 0;
      if (scr_kvtree_get_int(dset, SCR_FILEMAP_KEY_TAKEN_APART, &flag) == SCR_SUCCESS && flag)
        scr_kvtree_add_kv(info, "APART", scr_kvtree_elem_key(m));
    }
  }
  scr_kvtree* all = scr_kvtree_new();
  /* descriptors of one dataset agree: merged, the first stays */
  scr_mpi_gather_kvtree(mine, all, 0, scr.comm_world);
  if (scr.rank == 0) {
    scr_kvtree* index = scr_kvtree_new();
    int newest_indexed = -1;
    if (scr_index_file_read(scr.prefix, index) != SCR_SUCCESS ||
        scr_index_file_most_recent_checkpoint(index, -1, &newest_indexed) != SCR_SUCCESS)
      newest_indexed = -1;
    int held = scr_kvtree_size(scr_kvtree_get(all, "HELD"));
    scr_kvtree_sort_int(scr_kvtree_get(all, "DSET"), SCR_KVTREE_SORT_DESCENDING);
    for (scr_kvtree_elem* d = scr_kvtree_first(scr_kvtree_get(all, "DSET")); d; d = scr_kvtree_next(d)) {
      int id = (int) scr_kvtree_elem_key_int(d);
      scr_kvtree* info = scr_kvtree_elem_tree(d);
      const scr_kvtree* desc = scr_kvtree_get(info, "DESC");
      const char* name = scr_dataset_get_name(desc);
      int ckpt = scr_dataset_is_checkpoint(desc);
      if (ckpt && id < newest_indexed) {
        printf("scr_scavenge: dataset %d (%s) is older than checkpoint %d in the index of %s: not copied\n", id,
               name ? name : "?", newest_indexed, scr.prefix);
        break;
      }
      if (scr_kvtree_get(info, "FLUSHED")) {
        printf("scr_scavenge: dataset %d (%s) is already in %s\n", id, name ? name : "?", scr.prefix);
      } else if (scr_kvtree_get(info, "APART")) {
        printf("scr_scavenge: the program deleted files of dataset %d (%s): not copied\n", id, name ? name : "?");
        continue;
      } else if (scr_kvtree_size(scr_kvtree_get(info, "COMPLETE")) < held) {
        printf("scr_scavenge: dataset %d (%s) is not complete on every surviving rank: not copied\n", id,
               name ? name : "?");
        continue;
      } else if (held < job_ranks && scr_kvtree_size(scr_kvtree_get(info, "PROTECTED")) < held) {
        scr_err("dataset %d (%s) lacks the ranks of lost nodes, and its redundancy is not on every surviving rank "
                "to rebuild them from (SINGLE, or the job died while encoding it): not copied", id, name ? name : "?");
        scr_kvtree_set_kv_int(plan, "UNSAVED", id);
        continue;
      } else {
        scr_kvtree_set(scr_kvtree_add_kv(plan, "DSET", scr_kvtree_elem_key(d)), "DESC", scr_kvtree_copy(desc));
      }
      if (ckpt) break;
    }
    scr_kvtree_delete(&index);
  }
  scr_mpi_bcast_kvtree(plan, 0, scr.comm_world);
  scr_kvtree_sort_int(scr_kvtree_get(plan, "DSET"), SCR_KVTREE_SORT_DESCENDING);
  scr_kvtree_delete(&all);
  scr_kvtree_delete(&mine);
}

/* job rank r's part of dataset id, as its filemap map names it, into out
 * (RANK/<r>/...); 1 when every file arrived whole */
static int scr_survivors_copy_rank(int id, int r, const scr_kvtree* map, scr_kvtree* out, uint64_t* red_bytes)
{
  scr_kvtree* files = scr_filemap_get_files(map, id, r);
  scr_kvtree* entry = scr_kvtree_add_kv_int(out, "RANK", r);
  scr_kvtree_set_kv_int(entry, "FILES", scr_kvtree_size(files));
  int ok = scr_kvtree_size(files) == scr_filemap_get_file_count(map, id, r);
  for (scr_kvtree_elem* e = scr_kvtree_first(files); ok && e; e = scr_kvtree_next(e)) {
    const char* src = scr_kvtree_elem_key(e);
    scr_kvtree* meta = scr_kvtree_elem_tree(e);
    const char* recorded = scr_kvtree_get_val(meta, "CRC");
    char* dst = scr_flush_destination(meta);
    uint32_t crc = 0;
    uint64_t size = 0;
    int rc = !dst ? SCR_ERR_INVALID
             : recorded ? scr_io_copy_file_expecting(src, dst, 0777, (uint32_t) strtoul(recorded, NULL, 16), &crc, &size)
                        : scr_io_copy_file(src, dst, 0777, &crc, &size);
    if (rc == SCR_ERR_CORRUPT) rc = SCR_SUCCESS; /* scr_flush_check_copy says what it is */
    ok = dst && scr_flush_check_copy(id, src, dst, meta, rc, size, crc, entry);
    free(dst);
  }
  /* the pointer files attached to it go along to their places */
  scr_kvtree* attached = scr_kvtree_get(scr_kvtree_get_kv_int(scr_filemap_get_dataset(map, id), "RANK", r), "ATTACHED");
  for (scr_kvtree_elem* e = scr_kvtree_first(attached); ok && e; e = scr_kvtree_next(e)) {
    char* dst = scr_flush_destination(scr_kvtree_elem_tree(e));
    if (dst && scr_io_copy_file(scr_kvtree_elem_key(e), dst, 0777, NULL, NULL) != SCR_SUCCESS)
      scr_warn("dataset %d: copying %s to %s failed", id, scr_kvtree_elem_key(e), dst);
    free(dst);
  }
  if (ok && scr.scavenge_redundancy) {
    uint64_t bytes = 0;
    scr_flush_redundancy_copy_of(map, r, id, entry, &bytes);
    *red_bytes += bytes;
  }
  if (!ok) {
    scr_warn("dataset %d: the files of rank %d could not all be copied from cache: rank %d is missing on the "
             "prefix directory", id, r, r);
    scr_kvtree_unset_kv_int(out, "RANK", r);
  }
  return ok;
}

struct scr_survivors_index_arg {
  int id;
  const char* name;
  const scr_kvtree* desc;
  int complete;
};

static int scr_survivors_index(scr_kvtree* index, void* arg)
{
  struct scr_survivors_index_arg* a = arg;
  int rc = scr_index_file_add(index, a->id, a->name, a->desc, a->complete);
  if (rc == SCR_SUCCESS) rc = scr_index_file_set_flushed(index, a->id, time(NULL));
  if (rc == SCR_SUCCESS && a->complete && scr_dataset_is_checkpoint(a->desc))
    rc = scr_index_file_set_current(index, a->name);
  return rc;
}

/* rank 0: rank2file, summary and index entry of what arrived; SCR_SUCCESS */
static int scr_survivors_record(int id, int job_ranks, const scr_kvtree* desc_in, scr_kvtree* rank2file,
                                uint64_t red_bytes, double start)
{
  int present = 0;
  int* have = calloc(job_ranks, sizeof(int));
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(rank2file, "RANK")); have && e; e = scr_kvtree_next(e)) {
    long long r = scr_kvtree_elem_key_int(e);
    if (r >= 0 && r < job_ranks && !have[r]) {
      have[r] = 1;
      present++;
    }
  }
  int missing = job_ranks - present;
  scr_kvtree* desc = scr_kvtree_copy(desc_in);
  const char* name = scr_dataset_get_name(desc);
  if (missing) scr_kvtree_set_kv_int(desc, "COMPLETE", 0);
  scr_kvtree_set_kv_int(rank2file, "RANKS", job_ranks);
  int rc = have ? scr_rank2file_write(scr.prefix, id, rank2file) : SCR_ERR_NOMEM;
  if (rc == SCR_SUCCESS) rc = scr_summary_file_write_missing(scr.prefix, id, desc, job_ranks, missing);
  struct scr_survivors_index_arg arg = { id, name, desc, missing == 0 };
  if (rc == SCR_SUCCESS) rc = scr_index_file_update(scr.prefix, scr_survivors_index, &arg);
  if (rc == SCR_SUCCESS && !missing) scr_flush_file_set_location(scr.prefix, id, name, SCR_FLUSH_FILE_PFS);
  if (rc != SCR_SUCCESS) {
    scr_err("dataset %d: cannot write its metadata under %s: %s", id, scr.prefix_scr, scr_error_string(rc));
  } else if (missing) {
    char list[512];
    for (int r = 0; r < job_ranks; r++) have[r] = !have[r];
    scr_prefix_rebuild_ranks_text(have, job_ranks, list, sizeof(list));
    printf("scr_scavenge: dataset %d (%s) copied to %s from the surviving nodes in %.3f s without rank%s %s "
           "(%llu bytes of redundancy data): incomplete%s\n", id, name ? name : "?", scr.prefix,
           scr_log_seconds() - start, missing > 1 ? "s" : "", list, (unsigned long long) red_bytes,
           red_bytes ? "; scr_index --build rebuilds the missing ranks from the redundancy data" : "");
    if (!red_bytes) {
      scr_err("dataset %d (%s): no redundancy data came with it (SINGLE, or SCR_SCAVENGE_REDUNDANCY=0): rank%s %s "
              "cannot be rebuilt", id, name ? name : "?", missing > 1 ? "s" : "", list);
      rc = SCR_ERR_NOENT;
    }
  } else {
    printf("scr_scavenge: dataset %d (%s) copied to %s from the surviving nodes in %.3f s (%llu bytes of "
           "redundancy data)\n", id, name ? name : "?", scr.prefix, scr_log_seconds() - start,
           (unsigned long long) red_bytes);
  }
  free(have);
  scr_kvtree_delete(&desc);
  return rc;
}

/* collective: dataset id from every part the ranks hold; SCR_SUCCESS when recorded */
static int scr_survivors_copy(int id, int job_ranks, const scr_kvtree* desc, const scr_kvtree* maps)
{
  double start = scr_log_seconds();
  int rc = SCR_SUCCESS;
  if (scr.rank == 0) {
    char* dir = scr_summary_dataset_dir(scr.prefix, id);
    rc = !dir ? SCR_ERR_NOMEM : scr_io_check_own_dir(dir) != SCR_SUCCESS ? SCR_ERR_SECURITY : scr_io_mkdir_p(dir, 0777);
    if (rc != SCR_SUCCESS) scr_err("cannot create %s", dir ? dir : "the dataset directory");
    free(dir);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, scr.comm_world);
  if (rc != SCR_SUCCESS) return rc;
  scr_kvtree* out = scr_kvtree_new();
  uint64_t red_bytes = 0, all_red = 0;
  for (scr_kvtree_elem* m = scr_kvtree_first(scr_kvtree_get(maps, "MAP")); m; m = scr_kvtree_next(m))
    if (scr_filemap_get_dataset(scr_kvtree_elem_tree(m), id))
      scr_survivors_copy_rank(id, (int) scr_kvtree_elem_key_int(m), scr_kvtree_elem_tree(m), out, &red_bytes);
  scr_kvtree* rank2file = scr_kvtree_new();
  scr_mpi_gather_kvtree(out, rank2file, 0, scr.comm_world);
  MPI_Reduce(&red_bytes, &all_red, 1, MPI_UINT64_T, MPI_SUM, 0, scr.comm_world);
  if (scr.rank == 0) rc = scr_survivors_record(id, job_ranks, desc, rank2file, all_red, start);
  MPI_Bcast(&rc, 1, MPI_INT, 0, scr.comm_world);
  scr_kvtree_delete(&rank2file);
  scr_kvtree_delete(&out);
  return rc;
}

int scr_scavenge_survivors(int job_ranks)
{
  if (scr.rank == 0)
    printf("scr_scavenge: %d ranks run, the job had %d: copying what the surviving nodes hold, as it is\n", scr.ranks,
           job_ranks);
  scr_kvtree* jobs = scr_kvtree_new();
  scr_kvtree* maps = scr_kvtree_new();
  scr_kvtree* plan = scr_kvtree_new();
  scr_survivors_assign(jobs);
  scr_survivors_load(jobs, maps);
  scr_survivors_plan(maps, job_ranks, plan);
  int copied = 0, failed = 0;
  for (scr_kvtree_elem* d = scr_kvtree_first(scr_kvtree_get(plan, "DSET")); d; d = scr_kvtree_next(d)) {
    int id = (int) scr_kvtree_elem_key_int(d);
    if (scr_survivors_copy(id, job_ranks, scr_kvtree_get(scr_kvtree_elem_tree(d), "DESC"), maps) == SCR_SUCCESS)
      copied++;
    else
      failed = 1;
  }
  /* a checkpoint the surviving nodes cannot save, and none older instead */
  if (copied == 0 && scr_kvtree_get(plan, "UNSAVED")) failed = 1;
  if (scr.rank == 0 && copied == 0 && !failed) printf("scr_scavenge: no dataset left in cache\n");
  scr_kvtree_delete(&plan);
  scr_kvtree_delete(&maps);
  scr_kvtree_delete(&jobs);
  return failed ? -1 : copied;
}
