/* scr_mpi.c - key-value trees over MPI (packed bytes) and the node communicator.
 * Sizes go first in a separate collective so receivers can allocate exactly. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_mpi.h"

int scr_mpi_bcast_kvtree(scr_kvtree* tree, int root, MPI_Comm comm)
{
  int rank;
  unsigned long long size = 0;
  char* buf = NULL;
  MPI_Comm_rank(comm, &rank);
  if (rank == root) {
    size = scr_kvtree_pack_size(tree);
    buf = malloc(size);
    if (buf) scr_kvtree_pack(tree, buf);
    else size = 0;
  }
  MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, root, comm);
  if (rank != root) buf = malloc(size ? size : 1);
  if (size > 0) MPI_Bcast(buf, (int) size, MPI_BYTE, root, comm);
  int rc = SCR_SUCCESS;
  if (rank != root) {
    scr_kvtree_clear(tree);
    if (size > 0) rc = scr_kvtree_unpack(buf, size, tree, NULL);
  }
  free(buf);
  return rc;
}

int scr_mpi_gather_kvtree(const scr_kvtree* mine, scr_kvtree* all, int root, MPI_Comm comm)
{
  int rank, ranks, rc = SCR_SUCCESS;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  int size = (int) scr_kvtree_pack_size(mine);
  char* buf = malloc(size ? size : 1);
  scr_kvtree_pack(mine, buf);

  int* sizes = NULL;
  int* displs = NULL;
  char* recv = NULL;
  if (rank == root) {
    sizes = calloc(ranks, sizeof(int));
    displs = calloc(ranks, sizeof(int));
  }
  MPI_Gather(&size, 1, MPI_INT, sizes, 1, MPI_INT, root, comm);
  if (rank == root) {
    long long total = 0;
    for (int i = 0; i < ranks; i++) { displs[i] = (int) total; total += sizes[i]; }
    recv = malloc(total ? total : 1);
  }
  MPI_Gatherv(buf, size, MPI_BYTE, recv, sizes, displs, MPI_BYTE, root, comm);
  if (rank == root) {
    for (int i = 0; i < ranks && rc == SCR_SUCCESS; i++)
      if (sizes[i] > 0) rc = scr_kvtree_unpack(recv + displs[i], sizes[i], all, NULL);
  }
  free(recv);
  free(displs);
  free(sizes);
  free(buf);
  return rc;
}

int scr_mpi_scatter_kvtree(const scr_kvtree* per_rank, scr_kvtree* mine, int root, MPI_Comm comm)
{
  int rank, ranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  int* sizes = NULL;
  int* displs = NULL;
  char* send = NULL;
  if (rank == root) {
    scr_kvtree* empty = scr_kvtree_new();
    long long total = 0;
    sizes = calloc(ranks, sizeof(int));
    displs = calloc(ranks, sizeof(int));
    for (int i = 0; i < ranks; i++) {
      const scr_kvtree* t = scr_kvtree_get_kv_int(per_rank, "RANK", i);
      sizes[i] = (int) scr_kvtree_pack_size(t ? t : empty);
      displs[i] = (int) total;
      total += sizes[i];
    }
    send = malloc(total ? total : 1);
    for (int i = 0; i < ranks; i++) {
      const scr_kvtree* t = scr_kvtree_get_kv_int(per_rank, "RANK", i);
      scr_kvtree_pack(t ? t : empty, send + displs[i]);
    }
    scr_kvtree_delete(&empty);
  }
  int size = 0;
  MPI_Scatter(sizes, 1, MPI_INT, &size, 1, MPI_INT, root, comm);
  char* buf = malloc(size ? size : 1);
  MPI_Scatterv(send, sizes, displs, MPI_BYTE, buf, size, MPI_BYTE, root, comm);
  scr_kvtree_clear(mine);
  int rc = size > 0 ? scr_kvtree_unpack(buf, size, mine, NULL) : SCR_SUCCESS;
  free(buf);
  free(send);
  free(displs);
  free(sizes);
  return rc;
}

/* the ranks that arrive first wait politely (scr_mpi_wait_all): they are
 * often waiting for ranks still encoding on the same cores */
int scr_mpi_all_true(int flag, MPI_Comm comm)
{
  int in = flag ? 1 : 0, out = 0;
  MPI_Request request;
  MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_LAND, comm, &request);
  scr_mpi_wait_all(1, &request);
  return out;
}

int scr_mpi_allreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
  MPI_Request request;
  int rc = MPI_Iallreduce(in, out, count, type, op, comm, &request);
  if (rc != MPI_SUCCESS) return rc;
  return scr_mpi_wait_all(1, &request) == SCR_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
}

/* Split by a hash of the host name first (scales to any job size), then by the
 * exact name inside each hash bucket in case two names collide. */
int scr_mpi_split_by_host(MPI_Comm comm, const char* hostname, MPI_Comm* node_comm)
{
  int rank;
  MPI_Comm bucket;
  MPI_Comm_rank(comm, &rank);
  int color = (int) (crc32(0L, (const Bytef*) hostname, (uInt) strlen(hostname)) & 0x7fffffff);
  MPI_Comm_split(comm, color, rank, &bucket);

  int brank, branks;
  MPI_Comm_rank(bucket, &brank);
  MPI_Comm_size(bucket, &branks);
  char name[256];
  memset(name, 0, sizeof(name));
  strncpy(name, hostname, sizeof(name) - 1);
  char* names = malloc((size_t) branks * sizeof(name));
  MPI_Allgather(name, sizeof(name), MPI_CHAR, names, sizeof(name), MPI_CHAR, bucket);
  int first = 0;
  while (strcmp(names + (size_t) first * sizeof(name), name) != 0) first++;
  free(names);
  MPI_Comm_split(bucket, first, brank, node_comm);
  MPI_Comm_free(&bucket);
  return SCR_SUCCESS;
}
