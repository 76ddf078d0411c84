/* scr_redundancy_rebuild.c - restart side of redundancy: find out which members of
 * each set lost their part of a dataset and rebuild them exactly, or fail. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_fault.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_stream.h"
#include "scr_erasure.h"
#include "scr_partner.h"
#include "scr_reddesc.h"
#include "scr_redundancy.h"
#include "scr_parity_file.h"
#include "scr_event_log.h"

/* how one rank takes part in the rebuild of a dataset */
struct scr_rebuild_role {
  enum scr_copy_type type;
  int set_id, index, size, failures, hop;
};

/* collective: each rank's set as recorded by the ranks that still hold the
 * dataset, and the dataset descriptor; 0 if this rank's role is unknown */
static int scr_rebuild_learn_role(int id, struct scr_rebuild_role* role, scr_kvtree* desc)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  scr_kvtree* mine = scr_kvtree_new();
  if (dset && scr_kvtree_get(dset, "REDDESC")) {
    scr_kvtree* r = scr_kvtree_add_kv_int(mine, "RANK", scr.rank);
    scr_kvtree_set(r, "REDDESC", scr_kvtree_copy(scr_kvtree_get(dset, "REDDESC")));
    scr_kvtree_set(r, "DSETDESC", scr_kvtree_copy(scr_kvtree_get(dset, "DSETDESC")));
  }
  scr_kvtree* all = scr_kvtree_new();
  scr_kvtree* roles = scr_kvtree_new();
  scr_mpi_gather_kvtree(mine, all, 0, scr.comm_world);
  if (scr.rank == 0) {
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(all, "RANK")); e; e = scr_kvtree_next(e)) {
      scr_kvtree* rec = scr_kvtree_get(scr_kvtree_elem_tree(e), "REDDESC");
      scr_kvtree* set = scr_kvtree_get(rec, "SET");
      if (scr_kvtree_size(desc) == 0)
        scr_kvtree_merge(desc, scr_kvtree_get(scr_kvtree_elem_tree(e), "DSETDESC"));
      for (scr_kvtree_elem* m = scr_kvtree_first(scr_kvtree_get(set, "MEMBER")); m; m = scr_kvtree_next(m)) {
        const char* w = scr_kvtree_elem_val(m);
        if (!w) continue;
        scr_kvtree* r = scr_kvtree_add_kv(roles, "RANK", w);
        scr_kvtree_set(r, "REDDESC", scr_kvtree_copy(rec));
        scr_kvtree_set_kv(r, "INDEX", scr_kvtree_elem_key(m));
      }
      if (!set) {
        /* SINGLE: the rank that recorded it is its own role */
        scr_kvtree* r = scr_kvtree_add_kv(roles, "RANK", scr_kvtree_elem_key(e));
        scr_kvtree_set(r, "REDDESC", scr_kvtree_copy(rec));
        scr_kvtree_set_kv_int(r, "INDEX", 0);
      }
    }
  }
  scr_mpi_bcast_kvtree(desc, 0, scr.comm_world);
  scr_kvtree* got = scr_kvtree_new();
  scr_mpi_scatter_kvtree(roles, got, 0, scr.comm_world);

  int known = 0;
  scr_kvtree* rec = scr_kvtree_get(got, "REDDESC");
  if (rec && scr_reddesc_type_from_name(scr_kvtree_get_val(rec, "TYPE"), &role->type) == SCR_SUCCESS) {
    long long v = 0;
    scr_kvtree* set = scr_kvtree_get(rec, "SET");
    role->set_id = scr.rank;
    role->index = 0;
    role->size = 1;
    role->failures = 0;
    role->hop = 1;
    if (scr_kvtree_get_int(set, "ID", &v) == SCR_SUCCESS) role->set_id = (int) v;
    if (scr_kvtree_get_int(got, "INDEX", &v) == SCR_SUCCESS) role->index = (int) v;
    if (scr_kvtree_get_int(set, "SIZE", &v) == SCR_SUCCESS) role->size = (int) v;
    if (scr_kvtree_get_int(set, "FAILURES", &v) == SCR_SUCCESS) role->failures = (int) v;
    if (scr_kvtree_get_int(rec, "HOP", &v) == SCR_SUCCESS) role->hop = (int) v;
    known = 1;
  }
  scr_kvtree_delete(&got);
  scr_kvtree_delete(&roles);
  scr_kvtree_delete(&all);
  scr_kvtree_delete(&mine);
  return known;
}

/* a lost member's filemap entry rebuilt from metadata other members kept */
static void scr_rebuild_adopt(int id, const scr_kvtree* desc, const scr_kvtree* reddesc,
                              const scr_kvtree* files)
{
  /* files attached to it (a pointer) are outside the redundancy and were
   * not lost with this member's data: they stay, with their copies on the
   * prefix directory */
  scr_kvtree* mine = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, id), "RANK", scr.rank);
  scr_kvtree* attached = scr_kvtree_get(mine, "ATTACHED") ? scr_kvtree_copy(scr_kvtree_get(mine, "ATTACHED")) : NULL;
  if (attached) scr_kvtree_unset(mine, "ATTACHED");
  if (scr_filemap_get_dataset(scr.filemap, id)) scr_cache_delete_dataset(id);
  scr_kvtree* dset = scr_filemap_add_dataset(scr.filemap, id);
  if (attached) scr_kvtree_set(scr_kvtree_add_kv_int(dset, "RANK", scr.rank), "ATTACHED", attached);
  scr_kvtree_set(dset, "DSETDESC", scr_kvtree_copy(desc));
  if (reddesc) scr_kvtree_set(dset, "REDDESC", scr_kvtree_copy(reddesc));
  int count = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(files, "FILE")); e; e = scr_kvtree_next(e)) {
    scr_kvtree* f = scr_kvtree_elem_tree(e);
    scr_kvtree* meta = scr_filemap_add_file(scr.filemap, id, scr.rank, scr_kvtree_get_val(f, "PATH"),
                                            scr_kvtree_get_val(f, "ORIG"),
                                            scr_kvtree_get_val(f, "RELPATH"));
    scr_kvtree_set_kv(meta, "SIZE", scr_kvtree_get_val(f, "SIZE"));
    scr_kvtree_set_kv(meta, "CRC", scr_kvtree_get_val(f, "CRC"));
    scr_kvtree_set_kv_int(meta, "COMPLETE", 1);
    /* rebuilt one by one: the preload layer links the names again */
    const char* group = scr_kvtree_get_val(f, SCR_FILEMAP_KEY_LINK);
    if (group) scr_kvtree_set_kv(meta, SCR_FILEMAP_KEY_LINK, group);
    count++;
  }
  scr_filemap_set_file_count(scr.filemap, id, scr.rank, count);
}

/* where this surviving member's file encoded as `encoded` is now: a file the
 * program renamed since keeps the path it was encoded under (REDPATH), and
 * the parity stays valid for it (its bytes did not change); so does a file
 * one of whose names (hard links) the program deleted, for that name
 * (REDALIAS); NULL if none */
static const char* scr_rebuild_current_path(int id, const char* encoded)
{
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, id, scr.rank);
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
    const char* was = scr_kvtree_get_val(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_REDUNDANCY_PATH);
    if (strcmp(was ? was : scr_kvtree_elem_key(e), encoded) == 0) return scr_kvtree_elem_key(e);
  }
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e))
    if (scr_kvtree_get(scr_kvtree_get(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_REDUNDANCY_ALIAS), encoded))
      return scr_kvtree_elem_key(e);
  return NULL;
}

/* path of this member's parity file as recorded, or NULL */
static const char* scr_rebuild_parity_file(int id, uint64_t* size)
{
  scr_kvtree* r = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, id), "RANK", scr.rank);
  scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(r, "REDFILE"));
  if (!e) return NULL;
  scr_kvtree_get_uint64(scr_kvtree_elem_tree(e), "SIZE", size);
  return scr_kvtree_elem_key(e);
}

static int scr_rebuild_erasure(int id, const struct scr_rebuild_role* role, MPI_Comm comm,
                               const int* lost, const scr_kvtree* desc)
{
  int n = role->size, k = role->type == SCR_COPY_RS ? role->failures : 1;
  int me = role->index;
  /* the first survivor's header describes every member */
  int source = 0;
  while (source < n && lost[source]) source++;
  scr_kvtree* header = scr_kvtree_new();
  int ok = 1;
  if (me == source) {
    uint64_t size = 0;
    const char* path = scr_rebuild_parity_file(id, &size);
    ok = path && scr_parity_read_header(path, header) == SCR_SUCCESS;
  }
  MPI_Bcast(&ok, 1, MPI_INT, source, comm);
  if (!ok) {
    scr_kvtree_delete(&header);
    return 0;
  }
  scr_mpi_bcast_kvtree(header, source, comm);

  uint64_t chunk = 0;
  scr_kvtree_get_uint64(header, "CHUNK", &chunk);
  scr_kvtree* member = scr_kvtree_get_kv_int(scr_kvtree_get(header, "SET"), "MEMBER", me);
  /* a survivor streams its files as its own header lists them: a job that
   * died while the set wrote headers with new names may have left the
   * source's with the old ones and this one's with the new (the order, the
   * one the parity was computed in, is the same in both) */
  scr_kvtree* own = scr_kvtree_new();
  uint64_t own_size = 0;
  const char* own_path = lost[me] ? NULL : scr_rebuild_parity_file(id, &own_size);
  if (own_path && me != source && scr_parity_read_header(own_path, own) == SCR_SUCCESS)
    member = scr_kvtree_get_kv_int(scr_kvtree_get(own, "SET"), "MEMBER", me);
  size_t header_len = scr_kvtree_pack_size(header);
  uint64_t parity_size = (uint64_t) k * chunk + header_len + 16;
  char* parity_path = NULL;
  if (lost[me]) {
    scr_rebuild_adopt(id, desc, scr_kvtree_get(header, "REDDESC"), member);
    char* dir = scr_cache_dataset_dir(id);
    if (asprintf(&parity_path, "%s/%d_of_%d_in_%d.%s", dir, me + 1, n, role->set_id,
                 role->type == SCR_COPY_RS ? "rs" : "xor") < 0)
      parity_path = NULL;
    free(dir);
  } else {
    const char* p = scr_rebuild_parity_file(id, &parity_size);
    parity_path = p ? strdup(p) : NULL;
  }

  /* data stream in the order the header lists the files */
  int count = scr_kvtree_size(scr_kvtree_get(member, "FILE"));
  char** paths = calloc(count + 1, sizeof(char*));
  uint64_t* sizes = calloc(count + 1, sizeof(uint64_t));
  for (int i = 0; i < count; i++) {
    scr_kvtree* f = scr_kvtree_get_kv_int(member, "FILE", i);
    const char* path = scr_kvtree_get_val(f, "PATH");
    if (path && !lost[me]) path = scr_rebuild_current_path(id, path);
    char* inside = path ? scr_path_relative_to(scr.cache_dir, path) : NULL;
    if (!inside) ok = 0;
    free(inside);
    paths[i] = (char*) path;
    scr_kvtree_get_uint64(f, "SIZE", &sizes[i]);
  }
  struct scr_stream data, parity;
  int data_open = ok && scr_stream_open(&data, count, paths, sizes, lost[me]) == SCR_SUCCESS;
  int parity_open = parity_path &&
                    scr_stream_open(&parity, 1, &parity_path, &parity_size, lost[me]) == SCR_SUCCESS;
  ok = scr_mpi_all_true(data_open && parity_open, comm);
  struct scr_erasure e;
  if (ok) ok = scr_erasure_init(&e, comm, k, chunk, scr.file_buf_size) == SCR_SUCCESS;
  if (ok) {
    ok = scr_erasure_rebuild(&e, lost, &data, &parity) == SCR_SUCCESS;
    scr_erasure_finalize(&e);
  }
  scr_fault_point("rebuild"); /* lost files rewritten, not yet checked nor recorded */

  if (ok && lost[me]) {
    /* exact or nothing: every rebuilt file must have the CRC it was written with */
    for (int i = 0; ok && i < count; i++) {
      uint32_t crc = 0;
      const char* want = scr_kvtree_get_val(scr_kvtree_get_kv_int(member, "FILE", i), "CRC");
      if (scr_stream_file_crc(&data, i, &crc) != SCR_SUCCESS || !want || strtoul(want, NULL, 16) != crc) {
        scr_err("rebuilt %s does not match its recorded CRC32: the dataset cannot be restored", paths[i]);
        ok = 0;
      }
    }
    if (ok) ok = scr_parity_write_header(&parity, (uint64_t) k * chunk, header) == SCR_SUCCESS;
    uint32_t file_crc = 0, parity_crc = 0;
    if (ok) ok = scr_stream_file_crc(&parity, 0, &file_crc) == SCR_SUCCESS &&
                 scr_stream_file_crc_upto(&parity, 0, (uint64_t) k * chunk, &parity_crc) == SCR_SUCCESS;
    if (ok) scr_redundancy_register(id, parity_path, parity_size, file_crc, parity_crc);
  }
  if (data_open && scr_stream_close(&data) != SCR_SUCCESS) ok = 0;
  if (parity_open && scr_stream_close(&parity) != SCR_SUCCESS) ok = 0;
  free(paths);
  free(sizes);
  free(parity_path);
  scr_kvtree_delete(&own);
  scr_kvtree_delete(&header);
  return ok;
}

static int scr_rebuild_partner(int id, const struct scr_rebuild_role* role, MPI_Comm comm,
                               const int* lost, const scr_kvtree* desc)
{
  scr_kvtree* meta = scr_kvtree_new();
  scr_kvtree* reddesc = NULL;
  /* survivors know the record; lost members get it from the first survivor */
  int source = 0;
  while (source < role->size && lost[source]) source++;
  scr_kvtree* rec = scr_kvtree_new();
  if (role->index == source)
    scr_kvtree_merge(rec, scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "REDDESC"));
  scr_mpi_bcast_kvtree(rec, source, comm);
  reddesc = rec;

  int ok = scr_partner_restore(id, comm, role->hop, lost, meta);
  scr_fault_point("rebuild"); /* lost files rewritten, not yet recorded */
  if (ok && lost[role->index]) scr_rebuild_adopt(id, desc, reddesc, meta);
  ok = scr_mpi_all_true(ok, comm);
  if (ok) {
    /* the copies the lost members held are gone: their partners on the left
     * send them again; every other copy still matches the files it copies
     * (a restored member's files are the bytes its copy held) */
    struct scr_reddesc d;
    memset(&d, 0, sizeof(d));
    d.type = SCR_COPY_PARTNER;
    d.set_comm = comm;
    d.set_rank = role->index;
    d.set_ranks = role->size;
    d.hop_distance = role->hop;
    if (lost[role->index]) scr_kvtree_unset(scr_filemap_get_dataset(scr.filemap, id), "PARTNER");
    ok = scr_partner_apply_to(id, &d, lost);
  }
  scr_kvtree_delete(&rec);
  scr_kvtree_delete(&meta);
  return ok;
}

/* 1 when this rank holds what the scheme recorded with dataset id made: its
 * redundancy files (XOR, RS) or copies of its partners' files (PARTNER);
 * 0 when no scheme was recorded, as when the job died while encoding */
static int scr_redundancy_is_applied(int id)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  const char* name = scr_kvtree_get_val(scr_kvtree_get(dset, "REDDESC"), "TYPE");
  enum scr_copy_type type;
  if (!name || scr_reddesc_type_from_name(name, &type) != SCR_SUCCESS) return 0;
  if (type == SCR_COPY_XOR || type == SCR_COPY_RS)
    return scr_kvtree_size(scr_kvtree_get(scr_kvtree_get_kv_int(dset, "RANK", scr.rank), "REDFILE")) > 0;
  if (type == SCR_COPY_PARTNER) return scr_kvtree_size(scr_kvtree_get(dset, "PARTNER")) > 0;
  return 1;
}

/* collective: dataset id, whole on every rank, gets the redundancy a killed
 * job did not finish encoding, or whose files (parity, a partner's copy)
 * were found damaged, with the scheme the configuration gives it: with every
 * file whole, encoding it again makes the same as rebuilding the member that
 * held the damaged part */
static void scr_redundancy_reapply(int id)
{
  scr_kvtree* desc = scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC");
  long long ckpt = 0;
  scr_kvtree_get_int(desc, "CKPT", &ckpt);
  const struct scr_reddesc* d = scr_reddesc_select((int) ckpt, scr_dataset_get_flags(desc));
  if (scr.rank == 0)
    scr_warn("dataset %d: its files are whole but its redundancy is not (a job died while encoding it, or its "
             "redundancy data is damaged): "
             "encoding it now with %s", id, scr_reddesc_type_name(d->type));
  /* what the cut-short encoding left goes first: a rebuild reads the first
   * redundancy file a rank records */
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  scr_kvtree* mine = scr_kvtree_get_kv_int(dset, "RANK", scr.rank);
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(mine, "REDFILE")); e; e = scr_kvtree_next(e))
    unlink(scr_kvtree_elem_key(e));
  scr_kvtree_unset(mine, "REDFILE");
  scr_kvtree_unset(dset, "PARTNER");
  /* a failure is reported there; the files stay usable either way */
  scr_redundancy_apply(id, d);
}

/* the event log's end of a restore from cache: source says whether lost
 * parts were rebuilt or every file was there */
static int scr_recover_logged(int id, int rc, const char* source, double start)
{
  uint64_t bytes = 0;
  scr_kvtree_get_uint64(scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC"), "SIZE", &bytes);
  scr_event_log(rc == SCR_SUCCESS ? "RESTORE_COMPLETE" : "RESTORE_FAILED", "dset=%d source=%s bytes=%llu seconds=%.3f",
                id, source, (unsigned long long) bytes, scr_log_seconds() - start);
  return rc;
}

static int scr_redundancy_recover_cached(int id, double start);

int scr_redundancy_recover(int id)
{
  double start = scr_log_seconds();
  scr_event_log("RESTORE_START", "dset=%d", id);
  return scr_redundancy_recover_cached(id, start);
}

static int scr_redundancy_recover_cached(int id, double start)
{
  /* what the program took apart is no checkpoint, whatever survived of it */
  long long apart = 0;
  scr_kvtree_get_int(scr_filemap_get_dataset(scr.filemap, id), SCR_FILEMAP_KEY_TAKEN_APART, &apart);
  if (!scr_mpi_all_true(!apart, scr.comm_world)) {
    if (scr.rank == 0) scr_info("dataset %d: the program deleted files of it: it is not restored", id);
    return scr_recover_logged(id, SCR_ERR_INVALID, "cache", start);
  }
  int files_intact = scr_filemap_get_dataset(scr.filemap, id) && scr_cache_check_dataset(id);
  int intact = files_intact && scr_redundancy_check_parity_local(id);
  int all_files_intact = scr_mpi_all_true(files_intact, scr.comm_world);
  double checked = scr_log_seconds();
  if (scr.rank == 0) scr_dbg(2, "dataset %d: files checked in %.3f s", id, checked - start);
  if (all_files_intact) {
    /* every file is whole: redundancy a job died writing (encoding, or
     * giving it new names) is made again, not rebuilt from */
    if (!scr_mpi_all_true(intact && scr_redundancy_is_applied(id), scr.comm_world)) scr_redundancy_reapply(id);
    return scr_recover_logged(id, SCR_SUCCESS, "cache", start);
  }

  struct scr_rebuild_role role;
  scr_kvtree* desc = scr_kvtree_new();
  int known = scr_rebuild_learn_role(id, &role, desc);
  /* a rank that changed its files in place since the redundancy was
   * encoded (REDUNDANCY_STALE) would get back a mix of old and new bytes */
  long long stale = 0;
  scr_kvtree_get_int(scr_filemap_get_dataset(scr.filemap, id), SCR_FILEMAP_KEY_REDUNDANCY_STALE, &stale);
  if (stale) scr_warn("dataset %d: a file of it was changed in place after its redundancy was encoded: "
                      "it cannot be rebuilt", id);
  int possible = known && !stale && (intact || role.type != SCR_COPY_SINGLE) &&
                 scr_dataset_is_complete(desc);
  if (!scr_mpi_all_true(possible, scr.comm_world)) {
    scr_kvtree_delete(&desc);
    return scr_recover_logged(id, SCR_ERR_NOENT, "rebuild", start);
  }

  MPI_Comm comm;
  MPI_Comm_split(scr.comm_world, role.set_id, role.index, &comm);
  int* lost = calloc(role.size, sizeof(int));
  int mine = !intact;
  MPI_Allgather(&mine, 1, MPI_INT, lost, 1, MPI_INT, comm);
  int nlost = 0;
  for (int i = 0; i < role.size; i++) nlost += lost[i];

  int ok = 1;
  if (nlost > 0) {
    int tolerated = role.type == SCR_COPY_RS ? role.failures : 1;
    if (role.type == SCR_COPY_PARTNER) tolerated = role.size - 1; /* checked pairwise */
    if (role.type == SCR_COPY_SINGLE || nlost > tolerated) ok = 0;
    if (!ok && role.index == 0)
      scr_warn("dataset %d: %d of the %d members of %s set %d are lost, more than it can rebuild",
               id, nlost, role.size, scr_reddesc_type_name(role.type), role.set_id);
    if (ok && (role.type == SCR_COPY_XOR || role.type == SCR_COPY_RS))
      ok = scr_rebuild_erasure(id, &role, comm, lost, desc);
    else if (ok)
      ok = scr_rebuild_partner(id, &role, comm, lost, desc);
    if (ok && lost[role.index]) scr_cache_save_filemap();
  }
  ok = scr_mpi_all_true(ok, scr.comm_world);
  if (ok && scr.rank == 0)
    scr_info("dataset %d: rebuilt the lost parts from %s redundancy", id,
             scr_reddesc_type_name(role.type));
  if (scr.rank == 0) scr_dbg(2, "dataset %d: rebuild took %.3f s", id, scr_log_seconds() - checked);
  free(lost);
  MPI_Comm_free(&comm);
  scr_kvtree_delete(&desc);
  return scr_recover_logged(id, ok ? SCR_SUCCESS : SCR_ERR_IO, "rebuild", start);
}
