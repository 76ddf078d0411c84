/* scr_cache_distribute.c - find filemaps left on a node by ranks that now run
 * elsewhere and send their files to those ranks, so rebuild starts from all that survived. */
#include "config.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_filemap.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_cache_distribute.h"

#define SCR_DISTRIBUTE_TAG 7303

/* every file a filemap names: app files, redundancy files, partner copies */
static void scr_distribute_list_files(const scr_kvtree* map, scr_kvtree* paths)
{
  for (scr_kvtree_elem* d = scr_kvtree_first(scr_kvtree_get(map, "DSET")); d; d = scr_kvtree_next(d)) {
    scr_kvtree* dset = scr_kvtree_elem_tree(d);
    for (scr_kvtree_elem* r = scr_kvtree_first(scr_kvtree_get(dset, "RANK")); r; r = scr_kvtree_next(r)) {
      scr_kvtree* rank = scr_kvtree_elem_tree(r);
      for (scr_kvtree_elem* f = scr_kvtree_first(scr_kvtree_get(rank, "FILE")); f; f = scr_kvtree_next(f))
        scr_kvtree_get_or_create(paths, scr_kvtree_elem_key(f));
      for (scr_kvtree_elem* f = scr_kvtree_first(scr_kvtree_get(rank, "REDFILE")); f; f = scr_kvtree_next(f))
        scr_kvtree_get_or_create(paths, scr_kvtree_elem_key(f));
    }
    for (scr_kvtree_elem* p = scr_kvtree_first(scr_kvtree_get(dset, "PARTNER")); p; p = scr_kvtree_next(p)) {
      const char* dir = scr_kvtree_get_val(scr_kvtree_elem_tree(p), "DIR");
      scr_kvtree* meta = scr_kvtree_get(scr_kvtree_elem_tree(p), "META");
      for (scr_kvtree_elem* f = scr_kvtree_first(scr_kvtree_get(meta, "FILE")); f; f = scr_kvtree_next(f)) {
        const char* rel = scr_kvtree_get_val(scr_kvtree_elem_tree(f), "RELPATH");
        char* path = (dir && rel && scr_path_is_safe_relative(rel)) ? scr_path_join(dir, rel) : NULL;
        if (path) scr_kvtree_get_or_create(paths, path);
        free(path);
      }
    }
  }
}

/* the newest dataset a filemap file names, -1 for none or unreadable */
static int scr_distribute_latest(const char* path)
{
  scr_kvtree* map = scr_kvtree_new();
  int latest = scr_kvtree_read_file(path, map) == SCR_SUCCESS ? scr_filemap_latest_dataset(map) : -1;
  scr_kvtree_delete(&map);
  return latest;
}

/* node leader: ranks with a filemap in the control directory that do not run
 * here, HELD/<rank>/LATEST = the newest dataset it names */
static void scr_distribute_find_foreign(scr_kvtree* held)
{
  int* here = malloc(sizeof(int) * scr.node_ranks);
  MPI_Allgather(&scr.rank, 1, MPI_INT, here, 1, MPI_INT, scr.comm_node);
  if (scr.node_rank == 0) {
    DIR* dir = opendir(scr.cntl_dir);
    struct dirent* ent;
    while (dir && (ent = readdir(dir)) != NULL) {
      int r = -1;
      char tail = 0;
      if (sscanf(ent->d_name, "filemap_%d.sc%c", &r, &tail) != 2 || tail != 'r' || r < 0 ||
          r >= scr.ranks)
        continue;
      int local = 0;
      for (int i = 0; i < scr.node_ranks; i++) local |= here[i] == r;
      if (!local) {
        char* path = scr_filemap_path(scr.cntl_dir, r);
        int latest = path ? scr_distribute_latest(path) : -1;
        scr_kvtree_set_kv_int(scr_kvtree_add_kv_int(held, "HELD", r), "LATEST", latest);
        free(path);
      }
    }
    if (dir) closedir(dir);
  }
  free(here);
}

static int scr_distribute_send_file(const char* path, int to)
{
  uint64_t size = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  long long announced = -1;
  if (fd >= 0 && scr_io_file_size(path, &size) == SCR_SUCCESS) announced = (long long) size;
  MPI_Send(&announced, 1, MPI_LONG_LONG, to, SCR_DISTRIBUTE_TAG, scr.comm_world);
  unsigned char* buf = malloc(scr.file_buf_size);
  int whole = announced >= 0;
  for (uint64_t off = 0; announced >= 0 && off < size; off += scr.file_buf_size) {
    size_t n = size - off < scr.file_buf_size ? size - off : scr.file_buf_size;
    /* the receiver expects the bytes announced; what cannot be read goes as
     * zeros, and this copy is then not the only one kept */
    if (scr_io_pread_full(fd, buf, n, (off_t) off) != (ssize_t) n) {
      memset(buf, 0, n);
      whole = 0;
    }
    scr_mpi_send(buf, n, to, SCR_DISTRIBUTE_TAG, scr.comm_world);
  }
  free(buf);
  if (fd >= 0) close(fd);
  return whole;
}

/* one file into path; with path NULL its bytes are received and dropped */
static int scr_distribute_recv_file(const char* path, int from)
{
  long long size = -1;
  MPI_Recv(&size, 1, MPI_LONG_LONG, from, SCR_DISTRIBUTE_TAG, scr.comm_world, MPI_STATUS_IGNORE);
  if (size < 0) return 0;
  char* inside = path ? scr_path_relative_to(scr.cache_dir, path) : NULL;
  char* parent = path ? scr_path_dirname(path) : NULL;
  int fd = -1;
  /* never through a link or into a file someone else planted in the cache */
  if (inside && parent && scr_io_mkdir_p(parent, 0700) == SCR_SUCCESS && scr_io_check_name(path, 0) == SCR_SUCCESS)
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  free(parent);
  free(inside);
  unsigned char* buf = malloc(scr.file_buf_size);
  int ok = fd >= 0;
  for (long long off = 0; off < size; off += (long long) scr.file_buf_size) {
    size_t n = (size_t) (size - off) < scr.file_buf_size ? (size_t) (size - off) : scr.file_buf_size;
    if (scr_mpi_recv(buf, n, from, SCR_DISTRIBUTE_TAG, scr.comm_world) != SCR_SUCCESS) ok = 0;
    if (ok && scr_io_write_full(fd, buf, n) != (ssize_t) n) ok = 0;
  }
  free(buf);
  if (fd >= 0 && (fsync(fd) != 0 || close(fd) != 0)) ok = 0;
  return ok;
}

/* holder side: the filemap and every file of rank owner; forgotten here only
 * once the owner says it has them on its disk and a filemap naming them
 * (until then a crash leaves this copy, which the next run moves again) */
static void scr_distribute_send(int owner)
{
  char* path = scr_filemap_path(scr.cntl_dir, owner);
  scr_kvtree* map = scr_kvtree_new();
  if (scr_kvtree_read_file(path, map) != SCR_SUCCESS) scr_kvtree_clear(map);
  /* the files of a dataset owner was writing when it died travel too, named
   * as files of that incomplete dataset, which the owner then removes */
  scr_cache_journal_merge(owner, map);
  unsigned long long len = scr_kvtree_pack_size(map);
  char* buf = malloc(len);
  scr_kvtree_pack(map, buf);
  MPI_Send(&len, 1, MPI_UNSIGNED_LONG_LONG, owner, SCR_DISTRIBUTE_TAG, scr.comm_world);
  scr_mpi_send(buf, len, owner, SCR_DISTRIBUTE_TAG, scr.comm_world);
  free(buf);
  scr_kvtree* files = scr_kvtree_new();
  scr_distribute_list_files(map, files);
  /* how many files follow, so that an owner that could not read the
   * filemap still takes (and drops) them all */
  int count = scr_kvtree_size(files), sent = 1;
  MPI_Send(&count, 1, MPI_INT, owner, SCR_DISTRIBUTE_TAG, scr.comm_world);
  for (scr_kvtree_elem* f = scr_kvtree_first(files); f; f = scr_kvtree_next(f))
    if (!scr_distribute_send_file(scr_kvtree_elem_key(f), owner)) sent = 0;
  int kept = 0;
  MPI_Recv(&kept, 1, MPI_INT, owner, SCR_DISTRIBUTE_TAG, scr.comm_world, MPI_STATUS_IGNORE);
  if (kept && sent) {
    for (scr_kvtree_elem* f = scr_kvtree_first(files); f; f = scr_kvtree_next(f)) unlink(scr_kvtree_elem_key(f));
    unlink(path);
    scr_cache_journal_remove(owner);
  } else {
    scr_warn("rank %d could not store the cached files this node sent it: this node keeps its copies, which "
             "the next run sends again", owner);
  }
  scr_kvtree_delete(&files);
  scr_kvtree_delete(&map);
  free(path);
}

/* owner side: take the datasets of the received filemap in place of ours */
static void scr_distribute_receive(int holder)
{
  unsigned long long len = 0;
  MPI_Recv(&len, 1, MPI_UNSIGNED_LONG_LONG, holder, SCR_DISTRIBUTE_TAG, scr.comm_world, MPI_STATUS_IGNORE);
  char* buf = malloc(len ? len : 1);
  int ok = scr_mpi_recv(buf, len, holder, SCR_DISTRIBUTE_TAG, scr.comm_world) == SCR_SUCCESS;
  scr_kvtree* map = scr_kvtree_new();
  ok = ok && scr_kvtree_unpack(buf, len, map, NULL) == SCR_SUCCESS;
  free(buf);
  scr_kvtree* files = scr_kvtree_new();
  if (ok) scr_distribute_list_files(map, files);
  int count = 0;
  MPI_Recv(&count, 1, MPI_INT, holder, SCR_DISTRIBUTE_TAG, scr.comm_world, MPI_STATUS_IGNORE);
  int kept = ok && count == scr_kvtree_size(files);
  scr_kvtree_elem* f = kept ? scr_kvtree_first(files) : NULL;
  for (int i = 0; i < count; i++, f = f ? scr_kvtree_next(f) : NULL)
    if (!scr_distribute_recv_file(f ? scr_kvtree_elem_key(f) : NULL, holder)) kept = 0;
  /* only all of it replaces what we had of the same datasets, and only then
   * may the holder forget its copy; otherwise no filemap here names what
   * arrived, and the holder's copy stays the one a later run moves */
  if (kept) {
    for (scr_kvtree_elem* d = scr_kvtree_first(scr_kvtree_get(map, "DSET")); d; d = scr_kvtree_next(d)) {
      scr_kvtree_unset_kv(scr.filemap, "DSET", scr_kvtree_elem_key(d));
      scr_kvtree_set(scr_kvtree_get_or_create(scr.filemap, "DSET"), scr_kvtree_elem_key(d),
                     scr_kvtree_copy(scr_kvtree_elem_tree(d)));
    }
    if (scr_cache_save_filemap() != SCR_SUCCESS) kept = 0;
  } else {
    scr_warn("rank %d: the cached files rank %d's node held for it did not all arrive: they stay there", scr.rank,
             holder);
  }
  /* every file fsynced and the filemap saved: the holder may forget them */
  MPI_Send(&kept, 1, MPI_INT, holder, SCR_DISTRIBUTE_TAG, scr.comm_world);
  scr_kvtree_delete(&files);
  scr_kvtree_delete(&map);
}

int scr_cache_distribute(void)
{
  scr_kvtree* held = scr_kvtree_new();
  scr_distribute_find_foreign(held);
  scr_kvtree* mine = scr_kvtree_new();
  /* a rank that sees its own filemap did not move (or the control directory is
   * shared, as on a single machine): nothing to send it, unless another node
   * holds a newer one (a move cut short after this copy was saved, before
   * the holder forgot its own, left this one behind: it is stale) */
  if (access(scr.filemap_file, F_OK) == 0)
    scr_kvtree_set_kv_int(scr_kvtree_add_kv_int(mine, "PRESENT", scr.rank), "LATEST",
                          scr_filemap_latest_dataset(scr.filemap));
  if (scr_kvtree_size(held) > 0)
    scr_kvtree_set(scr_kvtree_add_kv_int(mine, "HOLDER", scr.rank), "HELD",
                   scr_kvtree_copy(scr_kvtree_get(held, "HELD")));

  /* rank 0 makes one plan; transfers run in that order on every rank, so each
   * pair meets without any cycle of waiting ranks */
  scr_kvtree* all = scr_kvtree_new();
  scr_kvtree* plan = scr_kvtree_new();
  scr_mpi_gather_kvtree(mine, all, 0, scr.comm_world);
  if (scr.rank == 0) {
    int n = 0;
    scr_kvtree* taken = scr_kvtree_new();
    for (scr_kvtree_elem* h = scr_kvtree_first(scr_kvtree_get(all, "HOLDER")); h; h = scr_kvtree_next(h))
      for (scr_kvtree_elem* r = scr_kvtree_first(scr_kvtree_get(scr_kvtree_elem_tree(h), "HELD")); r;
           r = scr_kvtree_next(r)) {
        scr_kvtree* present = scr_kvtree_get_kv(all, "PRESENT", scr_kvtree_elem_key(r));
        long long held_latest = -1, present_latest = -1;
        scr_kvtree_get_int(scr_kvtree_elem_tree(r), "LATEST", &held_latest);
        scr_kvtree_get_int(present, "LATEST", &present_latest);
        if (scr_kvtree_get(taken, scr_kvtree_elem_key(r)) || (present && held_latest <= present_latest)) continue;
        scr_kvtree_get_or_create(taken, scr_kvtree_elem_key(r));
        scr_kvtree* t = scr_kvtree_add_kv_int(plan, "T", n++);
        scr_kvtree_set_kv(t, "FROM", scr_kvtree_elem_key(h));
        scr_kvtree_set_kv(t, "TO", scr_kvtree_elem_key(r));
      }
    scr_kvtree_delete(&taken);
  }
  scr_mpi_bcast_kvtree(plan, 0, scr.comm_world);
  int moved = scr_kvtree_size(scr_kvtree_get(plan, "T"));
  for (int i = 0; i < moved; i++) {
    long long from = -1, to = -1;
    scr_kvtree* t = scr_kvtree_get_kv_int(plan, "T", i);
    scr_kvtree_get_int(t, "FROM", &from);
    scr_kvtree_get_int(t, "TO", &to);
    if (scr.rank == from) scr_distribute_send((int) to);
    else if (scr.rank == to) scr_distribute_receive((int) from);
  }
  if (moved > 0 && scr.rank == 0)
    scr_info("moved the cached files of %d ranks to the nodes they run on now", moved);
  scr_kvtree_delete(&plan);
  scr_kvtree_delete(&all);
  scr_kvtree_delete(&mine);
  scr_kvtree_delete(&held);
  return SCR_SUCCESS;
}
