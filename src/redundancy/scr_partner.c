/* scr_partner.c - copy files to the partner rank and back, piece by piece through
 * MPI, CRC32 computed on the way so that copies are verified when used. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_fault.h"
#include "scr_filemap.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_stream.h"
#include "scr_partner.h"

#define SCR_PARTNER_TAG 7302

/* FILE/<i>/{PATH, ORIG, RELPATH, SIZE, LINK} of this rank, in a fixed order */
static scr_kvtree* scr_partner_my_meta(int id)
{
  scr_kvtree* files = scr_kvtree_copy(scr_filemap_get_files(scr.filemap, id, scr.rank));
  if (!files) files = scr_kvtree_new();
  scr_kvtree_sort(files, SCR_KVTREE_SORT_ASCENDING);
  scr_kvtree* meta = scr_kvtree_new();
  scr_kvtree_set_kv_int(meta, "RANK", scr.rank);
  int i = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e), i++) {
    scr_kvtree* f = scr_kvtree_add_kv_int(meta, "FILE", i);
    scr_kvtree* src = scr_kvtree_elem_tree(e);
    scr_kvtree_set_kv(f, "PATH", scr_kvtree_elem_key(e));
    scr_kvtree_set_kv(f, "ORIG", scr_kvtree_get_val(src, "ORIG"));
    scr_kvtree_set_kv(f, "RELPATH", scr_kvtree_get_val(src, "RELPATH"));
    scr_kvtree_set_kv(f, "SIZE", scr_kvtree_get_val(src, "SIZE"));
    /* names of one file (scr_filemap.h): one again after a rebuild */
    const char* group = scr_kvtree_get_val(src, SCR_FILEMAP_KEY_LINK);
    if (group) scr_kvtree_set_kv(f, SCR_FILEMAP_KEY_LINK, group);
  }
  scr_kvtree_set_kv_int(meta, "FILES", i);
  scr_kvtree_delete(&files);
  return meta;
}

/* paths and sizes of a FILE/<i> list; with `under` the files are placed below it */
static int scr_partner_open(struct scr_stream* s, const scr_kvtree* meta, const char* under,
                            int writing)
{
  int count = scr_kvtree_size(scr_kvtree_get(meta, "FILE"));
  char** paths = calloc(count + 1, sizeof(char*));
  uint64_t* sizes = calloc(count + 1, sizeof(uint64_t));
  int rc = SCR_SUCCESS;
  for (int i = 0; i < count && rc == SCR_SUCCESS; i++) {
    scr_kvtree* f = scr_kvtree_get_kv_int(meta, "FILE", i);
    const char* rel = scr_kvtree_get_val(f, "RELPATH");
    const char* path = scr_kvtree_get_val(f, "PATH");
    scr_kvtree_get_uint64(f, "SIZE", &sizes[i]);
    if (under) {
      if (!rel || !scr_path_is_safe_relative(rel)) rc = SCR_ERR_SECURITY;
      else paths[i] = scr_path_join(under, rel);
    } else {
      char* inside = path ? scr_path_relative_to(scr.cache_dir, path) : NULL;
      if (!inside) rc = SCR_ERR_SECURITY;
      else paths[i] = strdup(path);
      free(inside);
    }
  }
  if (rc == SCR_SUCCESS) rc = scr_stream_open(s, count, paths, sizes, writing);
  else scr_err("partner metadata names a file outside the cache: refusing it");
  for (int i = 0; i < count; i++) free(paths[i]);
  free(paths);
  free(sizes);
  return rc;
}

/* send stream `out` to rank `to` while receiving stream `in` from rank `from`
 * (either may be NULL); lengths are exchanged first */
static int scr_partner_exchange(struct scr_stream* out, int to, struct scr_stream* in, int from,
                                MPI_Comm comm)
{
  uint64_t out_len = out ? out->length : 0, in_len = 0;
  int sent = scr_mpi_sendrecv(&out_len, out ? sizeof(out_len) : 0, to, &in_len, in ? sizeof(in_len) : 0, from,
                              SCR_PARTNER_TAG, comm) == SCR_SUCCESS;
  size_t piece = scr.file_buf_size;
  unsigned char* send_buf = malloc(piece);
  unsigned char* recv_buf = malloc(piece);
  int ok = sent && send_buf && recv_buf && (!in || in_len == in->length);
  uint64_t total = out_len > in_len ? out_len : in_len;
  for (uint64_t off = 0; off < total; off += piece) {
    int send_n = out && off < out_len ? (int) (out_len - off < piece ? out_len - off : piece) : 0;
    int recv_n = in && off < in_len ? (int) (in_len - off < piece ? in_len - off : piece) : 0;
    if (send_n && ok && scr_stream_read(out, off, send_buf, send_n) != SCR_SUCCESS) ok = 0;
    if (scr_mpi_sendrecv(send_buf, (size_t) send_n, to, recv_buf, (size_t) recv_n, from, SCR_PARTNER_TAG,
                         comm) != SCR_SUCCESS)
      ok = 0;
    if (recv_n && ok && scr_stream_write(in, off, recv_buf, recv_n) != SCR_SUCCESS) ok = 0;
  }
  free(send_buf);
  free(recv_buf);
  return ok;
}

/* CRCs from a stream into FILE/<i>/CRC of meta; 1 if all known */
static int scr_partner_set_crcs(struct scr_stream* s, scr_kvtree* meta)
{
  int ok = 1;
  for (int i = 0; i < s->file_count; i++) {
    uint32_t crc = 0;
    if (scr_stream_file_crc(s, i, &crc) != SCR_SUCCESS) ok = 0;
    scr_kvtree_set_kvf(scr_kvtree_get_kv_int(meta, "FILE", i), "CRC", "0x%08x", crc);
  }
  return ok;
}

static char* scr_partner_dir(int id, int rank)
{
  char* dir = scr_cache_dataset_dir(id);
  char* path = NULL;
  if (dir && asprintf(&path, "%s/.partner.%d", dir, rank) < 0) path = NULL;
  free(dir);
  return path;
}

int scr_partner_apply(int id, const struct scr_reddesc* d)
{
  return scr_partner_apply_to(id, d, NULL);
}

int scr_partner_apply_to(int id, const struct scr_reddesc* d, const int* only)
{
  int n = d->set_ranks;
  int right = (d->set_rank + d->hop_distance) % n;
  int left = ((d->set_rank - d->hop_distance) % n + n) % n;
  /* with `only`, a member sends its files to its partner on the right when
   * that one is marked, and receives when it is marked itself */
  int sending = !only || only[right], receiving = !only || only[d->set_rank];
  scr_kvtree* mine = scr_partner_my_meta(id);
  scr_kvtree* theirs = scr_kvtree_new();

  /* metadata first, so each side knows what it receives */
  size_t out_len = scr_kvtree_pack_size(mine);
  char* out = malloc(out_len);
  scr_kvtree_pack(mine, out);
  unsigned long long in_len = 0, send_len = out_len;
  int ok = scr_mpi_sendrecv(&send_len, sending ? sizeof(send_len) : 0, right, &in_len,
                            receiving ? sizeof(in_len) : 0, left, SCR_PARTNER_TAG, d->set_comm) == SCR_SUCCESS;
  char* in = malloc(in_len ? in_len : 1);
  ok = ok && scr_mpi_sendrecv(out, sending ? out_len : 0, right, in, in_len, left, SCR_PARTNER_TAG,
                              d->set_comm) == SCR_SUCCESS;
  if (receiving) ok = ok && scr_kvtree_unpack(in, in_len, theirs, NULL) == SCR_SUCCESS;
  free(in);
  free(out);

  long long left_rank = -1;
  scr_kvtree_get_int(theirs, "RANK", &left_rank);
  char* dir = receiving ? scr_partner_dir(id, (int) left_rank) : NULL;
  struct scr_stream my_stream, copy_stream;
  int mine_open = ok && sending && scr_partner_open(&my_stream, mine, NULL, 0) == SCR_SUCCESS;
  int copy_open = ok && receiving && dir && scr_partner_open(&copy_stream, theirs, dir, 1) == SCR_SUCCESS;
  ok = scr_mpi_all_true(ok && mine_open == sending && copy_open == receiving, d->set_comm);
  if (ok) ok = scr_partner_exchange(sending ? &my_stream : NULL, right, receiving ? &copy_stream : NULL, left,
                                    d->set_comm);
  scr_fault_point("encode"); /* the copy written, not yet recorded */
  if (ok && receiving) ok = scr_partner_set_crcs(&copy_stream, theirs);
  if (mine_open && ok) ok = scr_partner_set_crcs(&my_stream, mine);
  if (mine_open) scr_stream_close(&my_stream);
  if (copy_open && scr_stream_close(&copy_stream) != SCR_SUCCESS) ok = 0;

  if (ok && sending) {
    /* own CRCs into the filemap */
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(mine, "FILE")); e; e = scr_kvtree_next(e)) {
      scr_kvtree* f = scr_kvtree_elem_tree(e);
      scr_kvtree* meta = scr_kvtree_get(scr_filemap_get_files(scr.filemap, id, scr.rank),
                                        scr_kvtree_get_val(f, "PATH"));
      scr_kvtree_set_kv(meta, "CRC", scr_kvtree_get_val(f, "CRC"));
    }
  }
  if (ok && receiving) {
    /* the copy is recorded under PARTNER/<rank> */
    scr_kvtree* held = scr_kvtree_add_kv_int(scr_filemap_add_dataset(scr.filemap, id), "PARTNER",
                                             (int) left_rank);
    scr_kvtree_set_kv(held, "DIR", dir);
    scr_kvtree_set(held, "META", scr_kvtree_copy(theirs));
  }
  free(dir);
  scr_kvtree_delete(&theirs);
  scr_kvtree_delete(&mine);
  return ok;
}

int scr_partner_check_local(int id)
{
  scr_kvtree* held = scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "PARTNER");
  for (scr_kvtree_elem* e = scr_kvtree_first(held); e; e = scr_kvtree_next(e)) {
    scr_kvtree* h = scr_kvtree_elem_tree(e);
    const char* dir = scr_kvtree_get_val(h, "DIR");
    scr_kvtree* meta = scr_kvtree_get(h, "META");
    for (scr_kvtree_elem* f = scr_kvtree_first(scr_kvtree_get(meta, "FILE")); f; f = scr_kvtree_next(f)) {
      scr_kvtree* m = scr_kvtree_elem_tree(f);
      char* path = scr_path_join(dir, scr_kvtree_get_val(m, "RELPATH"));
      uint64_t want = 0, size = 0;
      uint32_t crc = 0;
      scr_kvtree_get_uint64(m, "SIZE", &want);
      const char* want_crc = scr_kvtree_get_val(m, "CRC");
      int good = path && scr_io_crc32_file(path, &crc, &size) == SCR_SUCCESS && size == want &&
                 want_crc && strtoul(want_crc, NULL, 16) == crc;
      if (!good) scr_warn("dataset %d: partner copy %s is missing or damaged", id, path ? path : "");
      free(path);
      if (!good) return 0;
    }
  }
  return 1;
}

int scr_partner_restore(int id, MPI_Comm comm, int hop, const int* lost, scr_kvtree* my_meta)
{
  int n, me;
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &me);
  int right = (me + hop) % n, left = ((me - hop) % n + n) % n;
  /* we hold the copy of the member hop to our left; a lost member gets its
   * metadata, then its bytes, from the member hop to its right */
  int send = lost[left] && !lost[me];
  int recv = lost[me] && !lost[right];
  int ok = !(lost[me] && lost[right]); /* the copy went with the partner */
  struct scr_stream copy, restored;
  scr_kvtree* held = NULL;
  if (send) {
    scr_kvtree* all = scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "PARTNER");
    held = scr_kvtree_first(all) ? scr_kvtree_elem_tree(scr_kvtree_first(all)) : NULL;
    unsigned long long len = held ? scr_kvtree_pack_size(scr_kvtree_get(held, "META")) : 0;
    char* buf = malloc(len ? len : 1);
    if (held) scr_kvtree_pack(scr_kvtree_get(held, "META"), buf);
    MPI_Send(&len, 1, MPI_UNSIGNED_LONG_LONG, left, SCR_PARTNER_TAG, comm);
    scr_mpi_send(buf, len, left, SCR_PARTNER_TAG, comm);
    free(buf);
    send = held && scr_partner_open(&copy, scr_kvtree_get(held, "META"),
                                    scr_kvtree_get_val(held, "DIR"), 0) == SCR_SUCCESS;
    ok = ok && send;
  }
  if (recv) {
    unsigned long long len = 0;
    MPI_Recv(&len, 1, MPI_UNSIGNED_LONG_LONG, right, SCR_PARTNER_TAG, comm, MPI_STATUS_IGNORE);
    char* buf = malloc(len ? len : 1);
    int received = scr_mpi_recv(buf, len, right, SCR_PARTNER_TAG, comm) == SCR_SUCCESS;
    scr_kvtree_clear(my_meta);
    recv = received && len > 0 && scr_kvtree_unpack(buf, len, my_meta, NULL) == SCR_SUCCESS &&
           scr_partner_open(&restored, my_meta, NULL, 1) == SCR_SUCCESS;
    free(buf);
    ok = ok && recv;
  }
  if (!scr_mpi_all_true(ok, comm)) {
    if (send) scr_stream_close(&copy);
    if (recv) scr_stream_close(&restored);
    return 0;
  }
  ok = scr_partner_exchange(send ? &copy : NULL, left, recv ? &restored : NULL, right, comm);
  if (recv) {
    /* exact or nothing: the copy must match the CRC recorded when it was made */
    for (int i = 0; ok && i < restored.file_count; i++) {
      uint32_t crc = 0;
      const char* want = scr_kvtree_get_val(scr_kvtree_get_kv_int(my_meta, "FILE", i), "CRC");
      if (scr_stream_file_crc(&restored, i, &crc) != SCR_SUCCESS || !want ||
          strtoul(want, NULL, 16) != crc)
        ok = 0;
    }
    if (scr_stream_close(&restored) != SCR_SUCCESS) ok = 0;
  }
  if (send) scr_stream_close(&copy);
  return ok;
}
