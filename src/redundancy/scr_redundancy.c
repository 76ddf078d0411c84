/* scr_redundancy.c - XOR and RS applied to datasets: metadata shared inside the set,
 * parity files with a header describing every member, rebuild at restart. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "scr.h"
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
#include "scr_redundancy.h"
#include "scr_parity_file.h"

#define SCR_PARITY_PIECE (1 << 20)

/* this rank's files of a dataset in stream order (sorted by cache path) */
static scr_kvtree* scr_redundancy_my_files(int id)
{
  scr_kvtree* files = scr_kvtree_copy(scr_filemap_get_files(scr.filemap, id, scr.rank));
  if (!files) files = scr_kvtree_new();
  scr_kvtree_sort(files, SCR_KVTREE_SORT_ASCENDING);
  return files;
}

/* a file with other names (hard links, scr_filemap.h) says so in the
 * header too, so that a rebuild makes them one file again */
static void scr_redundancy_keep_link(scr_kvtree* f, const scr_kvtree* meta)
{
  const char* group = scr_kvtree_get_val(meta, SCR_FILEMAP_KEY_LINK);
  if (group) scr_kvtree_set_kv(f, SCR_FILEMAP_KEY_LINK, group);
}

/* MEMBER/<index>/{RANK, FILES, FILE/<i>/{PATH, ORIG, RELPATH, SIZE, CRC, LINK}} for this rank */
static scr_kvtree* scr_redundancy_member_meta(int index, const scr_kvtree* files, uint64_t* length)
{
  scr_kvtree* tree = scr_kvtree_new();
  scr_kvtree* me = scr_kvtree_add_kv_int(tree, "MEMBER", index);
  scr_kvtree_set_kv_int(me, "RANK", scr.rank);
  int i = 0;
  *length = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e), i++) {
    scr_kvtree* meta = scr_kvtree_elem_tree(e);
    uint64_t size = 0;
    scr_kvtree_get_uint64(meta, "SIZE", &size);
    scr_kvtree* f = scr_kvtree_add_kv_int(me, "FILE", i);
    scr_kvtree_set_kv(f, "PATH", scr_kvtree_elem_key(e));
    scr_kvtree_set_kv(f, "ORIG", scr_kvtree_get_val(meta, "ORIG"));
    scr_kvtree_set_kv(f, "RELPATH", scr_kvtree_get_val(meta, "RELPATH"));
    scr_kvtree_set_kv_uint64(f, "SIZE", size);
    scr_kvtree_set_kv(f, "CRC", "0x00000000"); /* fixed width: the header size is known early */
    scr_redundancy_keep_link(f, meta);
    *length += size;
  }
  scr_kvtree_set_kv_int(me, "FILES", i);
  return tree;
}

/* all members' trees merged on every member of the set */
static void scr_redundancy_allgather(const scr_kvtree* mine, scr_kvtree* all, MPI_Comm comm)
{
  scr_mpi_gather_kvtree(mine, all, 0, comm);
  scr_mpi_bcast_kvtree(all, 0, comm);
}

/* open a member's data stream from its MEMBER tree */
static int scr_redundancy_open_data(struct scr_stream* s, const scr_kvtree* member, int writing)
{
  int count = scr_kvtree_size(scr_kvtree_get(member, "FILE"));
  char** paths = calloc(count > 0 ? count : 1, sizeof(char*));
  uint64_t* sizes = calloc(count > 0 ? count : 1, sizeof(uint64_t));
  for (int i = 0; i < count; i++) {
    scr_kvtree* f = scr_kvtree_get_kv_int(member, "FILE", i);
    paths[i] = (char*) scr_kvtree_get_val(f, "PATH");
    scr_kvtree_get_uint64(f, "SIZE", &sizes[i]);
    char* inside = paths[i] ? scr_path_relative_to(scr.cache_dir, paths[i]) : NULL;
    free(inside);
    if (!inside) {
      scr_err("redundancy metadata names %s outside the cache %s: refusing it",
              paths[i] ? paths[i] : "(none)", scr.cache_dir);
      free(paths);
      free(sizes);
      return SCR_ERR_SECURITY;
    }
  }
  int rc = scr_stream_open(s, count, paths, sizes, writing);
  free(paths);
  free(sizes);
  return rc;
}

static char* scr_redundancy_parity_path(int id, int index, int n, int set_id, const char* type)
{
  char* dir = scr_cache_dataset_dir(id);
  char* path = NULL;
  if (dir && asprintf(&path, "%s/%d_of_%d_in_%d.%s", dir, index + 1, n, set_id, type) < 0)
    path = NULL;
  free(dir);
  return path;
}

void scr_redundancy_register(int id, const char* path, uint64_t size, uint32_t crc, uint32_t parity_crc)
{
  scr_kvtree* r = scr_kvtree_add_kv_int(scr_filemap_add_dataset(scr.filemap, id), "RANK", scr.rank);
  scr_kvtree* f = scr_kvtree_add_kv(r, "REDFILE", path);
  scr_kvtree_set_kv_uint64(f, "SIZE", size);
  scr_kvtree_set_kvf(f, "CRC", "0x%08x", crc);
  scr_kvtree_set_kvf(f, "PARITY_CRC", "0x%08x", parity_crc);
}

/* encode this rank's part; ok flag of this rank */
static int scr_redundancy_encode(int id, const struct scr_reddesc* d)
{
  int k = d->type == SCR_COPY_RS ? d->set_failures : 1;
  const char* ext = d->type == SCR_COPY_RS ? "rs" : "xor";
  scr_kvtree* files = scr_redundancy_my_files(id);
  uint64_t length = 0, longest = 0;
  scr_kvtree* mine = scr_redundancy_member_meta(d->set_rank, files, &length);
  scr_kvtree* all = scr_kvtree_new();
  scr_redundancy_allgather(mine, all, d->set_comm);
  MPI_Allreduce(&length, &longest, 1, MPI_UINT64_T, MPI_MAX, d->set_comm);

  struct scr_erasure e;
  uint64_t chunk = scr_erasure_chunk_size(longest, d->set_ranks, k);
  int rc = scr_erasure_init(&e, d->set_comm, k, chunk, scr.file_buf_size < SCR_PARITY_PIECE ?
                           scr.file_buf_size : SCR_PARITY_PIECE);

  /* the header: scheme, set, chunk, dataset and every member's files */
  scr_kvtree* header = scr_kvtree_new();
  scr_kvtree_set_kv(header, "TYPE", scr_reddesc_type_name(d->type));
  scr_kvtree_set_kv_uint64(header, "CHUNK", chunk);
  scr_kvtree_set(header, "DSETDESC",
                 scr_kvtree_copy(scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC")));
  scr_kvtree_set(header, "REDDESC", scr_kvtree_new());
  scr_reddesc_record(d, scr_kvtree_get(header, "REDDESC"));
  scr_kvtree_set(header, "SET", scr_kvtree_copy(all));
  size_t header_len = scr_kvtree_pack_size(header);

  char* path = scr_redundancy_parity_path(id, d->set_rank, d->set_ranks, d->set_id, ext);
  uint64_t parity_size = (uint64_t) k * chunk + header_len + 16;
  struct scr_stream data, parity;
  int ok = rc == SCR_SUCCESS && path;
  int data_open = 0, parity_open = 0;
  if (ok) ok = data_open = scr_redundancy_open_data(&data, scr_kvtree_get_kv_int(all, "MEMBER", d->set_rank), 0) == SCR_SUCCESS;
  if (ok) ok = parity_open = scr_stream_open(&parity, 1, &path, &parity_size, 1) == SCR_SUCCESS;
  /* every member runs the collective encode, even one that failed to open */
  ok = scr_mpi_all_true(ok, d->set_comm);
  if (ok) ok = scr_erasure_encode(&e, &data, &parity) == SCR_SUCCESS;
  scr_fault_point("encode"); /* parity written, its header not yet */
  ok = scr_mpi_all_true(ok, d->set_comm);

  /* CRC of each of our files, shared so every header describes every member */
  scr_kvtree* crcs = scr_kvtree_new();
  scr_kvtree* my_crcs = scr_kvtree_add_kv_int(crcs, "MEMBER", d->set_rank);
  int i = 0;
  for (scr_kvtree_elem* f = scr_kvtree_first(files); ok && f; f = scr_kvtree_next(f), i++) {
    uint32_t crc = 0;
    if (scr_stream_file_crc(&data, i, &crc) != SCR_SUCCESS) ok = 0;
    scr_kvtree_set_kvf(scr_kvtree_add_kv_int(my_crcs, "FILE", i), "CRC", "0x%08x", crc);
    /* the filemap keeps the CRC: a restart verifies cached files with it */
    scr_kvtree* meta = scr_kvtree_get(scr_filemap_get_files(scr.filemap, id, scr.rank),
                                      scr_kvtree_elem_key(f));
    scr_kvtree_set_kvf(meta, "CRC", "0x%08x", crc);
  }
  scr_kvtree* all_crcs = scr_kvtree_new();
  scr_redundancy_allgather(crcs, all_crcs, d->set_comm);
  scr_kvtree* members = scr_kvtree_get(scr_kvtree_get(header, "SET"), "MEMBER");
  for (scr_kvtree_elem* m = scr_kvtree_first(scr_kvtree_get(all_crcs, "MEMBER")); m; m = scr_kvtree_next(m)) {
    scr_kvtree* target = scr_kvtree_get(members, scr_kvtree_elem_key(m));
    for (scr_kvtree_elem* f = scr_kvtree_first(scr_kvtree_get(scr_kvtree_elem_tree(m), "FILE")); f;
         f = scr_kvtree_next(f))
      scr_kvtree_set_kv(scr_kvtree_get_kv(target, "FILE", scr_kvtree_elem_key(f)), "CRC",
                        scr_kvtree_get_val(scr_kvtree_elem_tree(f), "CRC"));
  }
  if (ok && parity_open)
    ok = scr_parity_write_header(&parity, (uint64_t) k * chunk, header) == SCR_SUCCESS;
  uint32_t file_crc = 0, parity_crc = 0;
  if (ok && parity_open) ok = scr_stream_file_crc(&parity, 0, &file_crc) == SCR_SUCCESS &&
                              scr_stream_file_crc_upto(&parity, 0, (uint64_t) k * chunk, &parity_crc) == SCR_SUCCESS;
  if (data_open) scr_stream_close(&data);
  if (parity_open && scr_stream_close(&parity) != SCR_SUCCESS) ok = 0;
  if (ok) scr_redundancy_register(id, path, parity_size, file_crc, parity_crc);

  scr_erasure_finalize(&e);
  free(path);
  scr_kvtree_delete(&all_crcs);
  scr_kvtree_delete(&crcs);
  scr_kvtree_delete(&header);
  scr_kvtree_delete(&all);
  scr_kvtree_delete(&mine);
  scr_kvtree_delete(&files);
  return ok;
}

/* this rank's member of the header, with each file under the name it has
 * now, in the order the parity was computed in; NULL when a file is gone,
 * new, or not what was encoded (size, CRC) */
static scr_kvtree* scr_redundancy_member_renamed(int id, const scr_kvtree* member, int index)
{
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, id, scr.rank);
  int count = scr_kvtree_size(scr_kvtree_get(member, "FILE"));
  if (count != scr_kvtree_size(files)) return NULL;
  scr_kvtree* tree = scr_kvtree_new();
  scr_kvtree* me = scr_kvtree_add_kv_int(tree, "MEMBER", index);
  scr_kvtree_set_kv_int(me, "RANK", scr.rank);
  scr_kvtree_set_kv_int(me, "FILES", count);
  int found = 0;
  for (int i = 0; i < count; i++) {
    scr_kvtree* old = scr_kvtree_get_kv_int(member, "FILE", i);
    const char* known = scr_kvtree_get_val(old, "PATH");
    for (scr_kvtree_elem* e = scr_kvtree_first(files); e && known; e = scr_kvtree_next(e)) {
      scr_kvtree* meta = scr_kvtree_elem_tree(e);
      const char* was = scr_kvtree_get_val(meta, SCR_FILEMAP_KEY_REDUNDANCY_PATH);
      if (strcmp(was ? was : scr_kvtree_elem_key(e), known) != 0) continue;
      uint64_t size = 0, encoded = 0;
      scr_kvtree_get_uint64(meta, "SIZE", &size);
      scr_kvtree_get_uint64(old, "SIZE", &encoded);
      const char* crc = scr_kvtree_get_val(meta, "CRC");
      const char* encoded_crc = scr_kvtree_get_val(old, "CRC");
      if (size != encoded || !crc || !encoded_crc || strcmp(crc, encoded_crc) != 0) break;
      scr_kvtree* f = scr_kvtree_add_kv_int(me, "FILE", i);
      scr_kvtree_set_kv(f, "PATH", scr_kvtree_elem_key(e));
      scr_kvtree_set_kv(f, "ORIG", scr_kvtree_get_val(meta, "ORIG"));
      scr_kvtree_set_kv(f, "RELPATH", scr_kvtree_get_val(meta, "RELPATH"));
      scr_kvtree_set_kv_uint64(f, "SIZE", size);
      scr_kvtree_set_kv(f, "CRC", crc);
      scr_redundancy_keep_link(f, meta);
      found++;
      break;
    }
  }
  if (found != count) scr_kvtree_delete(&tree);
  return tree;
}

/* 1 when the header was written by d's scheme, with this rank as member index */
static int scr_redundancy_header_is_of(const scr_kvtree* header, const struct scr_reddesc* d)
{
  scr_kvtree* record = scr_kvtree_new();
  scr_reddesc_record(d, record);
  const scr_kvtree* recorded = scr_kvtree_get(header, "REDDESC");
  size_t length = scr_kvtree_pack_size(record);
  int same = recorded && scr_kvtree_pack_size(recorded) == length;
  char* packed = same ? malloc(2 * length) : NULL;
  if (packed) {
    scr_kvtree_pack(record, packed);
    scr_kvtree_pack(recorded, packed + length);
  }
  same = packed && memcmp(packed, packed + length, length) == 0;
  free(packed);
  scr_kvtree_delete(&record);
  return same;
}

/* The header with new names goes after the old header and trailer, and the
 * file then ends with the new trailer, which readers go by. Nothing is
 * overwritten: a crash before the filemap records the new size leaves the
 * size and CRC it records naming the old file, which the restart's check
 * cuts the file back to (scr_redundancy_check_parity_local). */
static int scr_redundancy_rewrite_header(int id, const char* path, uint64_t old_size, uint32_t old_crc,
                                         uint32_t parity_crc, const scr_kvtree* header)
{
  size_t length = 0;
  unsigned char* buf = scr_parity_pack_header(header, &length);
  int fd = buf ? open(path, O_WRONLY | O_CLOEXEC) : -1;
  struct stat st;
  int ok = fd >= 0 && fstat(fd, &st) == 0 && (uint64_t) st.st_size == old_size &&
           scr_io_pwrite_full(fd, buf, length, (off_t) old_size) == (ssize_t) length;
  scr_fault_point("encode"); /* the new header written, the filemap still names the old one */
  ok = ok && fsync(fd) == 0;
  if (fd >= 0 && close(fd) != 0) ok = 0;
  if (ok) {
    uLong tail = crc32(crc32(0L, Z_NULL, 0), buf, (uInt) length);
    uint32_t crc = (uint32_t) crc32_combine(old_crc, tail, (z_off_t) length);
    scr_redundancy_register(id, path, old_size + length, crc, parity_crc);
  } else {
    scr_err("cannot write the new header of redundancy file %s: %s", path, strerror(errno));
  }
  free(buf);
  return ok;
}

/* the names in this rank's parity file for dataset id made those its files
 * have now; 1 on success (collective over the set) */
static int scr_redundancy_rename_part(int id, const struct scr_reddesc* d)
{
  scr_kvtree* r = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, id), "RANK", scr.rank);
  scr_kvtree_elem* redfile = scr_kvtree_first(scr_kvtree_get(r, "REDFILE"));
  const char* path = redfile ? scr_kvtree_elem_key(redfile) : NULL;
  scr_kvtree* header = scr_kvtree_new();
  scr_kvtree* mine = NULL;
  /* the parity's own CRC, which the new file's is made from (recorded since
   * this version: older parity files are encoded anew) */
  const char* parity_crc = redfile ? scr_kvtree_get_val(scr_kvtree_elem_tree(redfile), "PARITY_CRC") : NULL;
  const char* file_crc = redfile ? scr_kvtree_get_val(scr_kvtree_elem_tree(redfile), "CRC") : NULL;
  uint64_t file_size = 0;
  if (redfile) scr_kvtree_get_uint64(scr_kvtree_elem_tree(redfile), "SIZE", &file_size);
  int ok = path && parity_crc && file_crc && scr_kvtree_size(scr_kvtree_get(r, "REDFILE")) == 1 &&
           scr_parity_read_header(path, header) == SCR_SUCCESS && scr_redundancy_header_is_of(header, d);
  scr_kvtree* member = scr_kvtree_get_kv_int(scr_kvtree_get(header, "SET"), "MEMBER", d->set_rank);
  if (ok) ok = (mine = scr_redundancy_member_renamed(id, member, d->set_rank)) != NULL;
  ok = scr_mpi_all_true(ok, d->set_comm);
  scr_kvtree* all = scr_kvtree_new();
  if (ok) {
    scr_redundancy_allgather(mine, all, d->set_comm);
    scr_kvtree_set(scr_kvtree_get(header, "SET"), "MEMBER", scr_kvtree_copy(scr_kvtree_get(all, "MEMBER")));
    scr_kvtree_set(header, "DSETDESC",
                   scr_kvtree_copy(scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC")));
    ok = scr_redundancy_rewrite_header(id, path, file_size, (uint32_t) strtoul(file_crc, NULL, 16),
                                       (uint32_t) strtoul(parity_crc, NULL, 16), header);
  }
  if (ok)
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e;
         e = scr_kvtree_next(e))
    {
      scr_kvtree_unset(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_REDUNDANCY_PATH);
      scr_kvtree_unset(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_REDUNDANCY_ALIAS);
    }
  scr_kvtree_delete(&all);
  scr_kvtree_delete(&mine);
  scr_kvtree_delete(&header);
  return ok;
}

int scr_redundancy_rename(int id, const struct scr_reddesc* d)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  int parity = d->type == SCR_COPY_XOR || d->type == SCR_COPY_RS;
  if (!scr_mpi_all_true(parity && dset, scr.comm_world)) return SCR_ERR_INVALID;
  int ok = scr_redundancy_rename_part(id, d);
  ok = scr_mpi_all_true(ok && scr_cache_save_filemap() == SCR_SUCCESS, scr.comm_world);
  return ok ? SCR_SUCCESS : SCR_ERR_IO;
}

/* a CRC32 into the filemap for each of this rank's files of dataset id that
 * has none; 0 when a file cannot be read. Not for a dataset that bypassed
 * the cache: its files are on the prefix directory already, and its flush,
 * which follows at once, reads them for their CRC32 anyway */
static int scr_redundancy_record_crcs(int id)
{
  int ok = 1;
  if (scr_cache_dataset_bypassed(id)) return 1;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e;
       e = scr_kvtree_next(e)) {
    scr_kvtree* meta = scr_kvtree_elem_tree(e);
    if (scr_kvtree_get_val(meta, "CRC")) continue;
    uint32_t crc = 0;
    uint64_t size = 0;
    if (scr_io_crc32_file(scr_kvtree_elem_key(e), &crc, &size) == SCR_SUCCESS) {
      scr_kvtree_set_kvf(meta, "CRC", "0x%08x", crc);
    } else {
      scr_err("dataset %d: cannot read cached file %s for its CRC32: %s", id, scr_kvtree_elem_key(e),
              strerror(errno));
      ok = 0;
    }
  }
  return ok;
}

int scr_redundancy_apply_unsaved(int id, const struct scr_reddesc* d)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  /* a bypass dataset is on the prefix directory, which is what redundancy
   * would stand in for; and its parity would go to a cache it did not fit
   * in. The bypass is the same on every rank (scr_output_begin). */
  struct scr_reddesc single = { .index = d->index, .type = SCR_COPY_SINGLE };
  if (scr_cache_dataset_bypassed(id)) d = &single;
  scr_kvtree* record = scr_kvtree_new();
  scr_reddesc_record(d, record);
  scr_kvtree_set(dset, "REDDESC", record);
  int ok = 1;
  if (d->type == SCR_COPY_XOR || d->type == SCR_COPY_RS) ok = scr_redundancy_encode(id, d);
  else if (d->type == SCR_COPY_PARTNER) ok = scr_partner_apply(id, d);
  /* every file of a complete dataset carries a CRC, so that a restart never
   * restores a byte flipped in cache: the schemes above computed it while
   * they read the bytes; SINGLE (or XOR that formed no set) reads each file
   * once more for it */
  if (ok) ok = scr_redundancy_record_crcs(id);
  /* whatever the scheme, it knows the files by the names they have now
   * (SINGLE by none: a name kept from before would make every restart
   * protect the dataset again) */
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); ok && e;
       e = scr_kvtree_next(e)) {
    scr_kvtree_unset(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_REDUNDANCY_PATH);
    scr_kvtree_unset(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_REDUNDANCY_ALIAS);
  }
  return ok;
}

int scr_redundancy_apply(int id, const struct scr_reddesc* d)
{
  int ok = scr_redundancy_apply_unsaved(id, d);
  ok = scr_mpi_all_true(ok && scr_cache_save_filemap() == SCR_SUCCESS, scr.comm_world);
  if (!ok && scr.rank == 0)
    scr_err("applying %s redundancy to dataset %d failed: the dataset is not protected",
            scr_reddesc_type_name(d->type), id);
  return ok ? SCR_SUCCESS : SCR_ERR_IO;
}

int scr_redundancy_check_local(int id)
{
  return scr_cache_check_dataset(id) && scr_redundancy_check_parity_local(id);
}

int scr_redundancy_check_parity_local(int id)
{
  scr_kvtree* r = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, id), "RANK", scr.rank);
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(r, "REDFILE")); e; e = scr_kvtree_next(e)) {
    uint64_t want = 0, size = 0;
    uint32_t crc = 0;
    scr_kvtree_get_uint64(scr_kvtree_elem_tree(e), "SIZE", &want);
    const char* want_crc = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "CRC");
    /* longer than recorded: a header with new names was being added when
     * the job died (scr_redundancy_rewrite_header); the old one is whole */
    struct stat st;
    if (stat(scr_kvtree_elem_key(e), &st) == 0 && (uint64_t) st.st_size > want)
      truncate(scr_kvtree_elem_key(e), (off_t) want);
    if (scr_io_crc32_file(scr_kvtree_elem_key(e), &crc, &size) != SCR_SUCCESS || size != want ||
        (want_crc && strtoul(want_crc, NULL, 16) != crc)) {
      scr_warn("dataset %d: redundancy file %s is missing or damaged", id, scr_kvtree_elem_key(e));
      return 0;
    }
  }
  return scr_partner_check_local(id);
}
