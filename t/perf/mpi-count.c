/* mpi-count.c - an LD_PRELOAD interposer that counts the MPI calls of a process,
 * for t/perf/checkpoint-fixed-cost.sh; rank 0 prints its counts when the process ends. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

/* Each wrapper hands the call to the next definition of its name (RTLD_NEXT),
 * not to PMPI_: first in LD_PRELOAD, this library must not bypass
 * libscr_preload.so's own MPI_Barrier, MPI_Init and MPI_Finalize, which are
 * where the engine does its work. The library's own calls from inside
 * libscr_preload.so reach these wrappers too, since symbols resolve
 * globally, which is what is counted. */

enum {
  C_ALLREDUCE, C_IALLREDUCE, C_BCAST, C_BARRIER, C_ALLGATHER, C_IALLGATHER, C_ALLGATHERV, C_GATHER, C_GATHERV, C_REDUCE,
  C_ALLTOALL, C_SCAN, C_SEND, C_RECV, C_ISEND, C_IRECV, C_SENDRECV, C_COMM_SPLIT, C_COMM_DUP, C_COUNT
};
static const char* const names[C_COUNT] = {
  "allreduce", "iallreduce", "bcast", "barrier", "allgather", "iallgather", "allgatherv", "gather", "gatherv", "reduce",
  "alltoall", "scan", "send", "recv", "isend", "irecv", "sendrecv", "comm_split", "comm_dup"
};
static long counts[C_COUNT];
static int my_rank = -1;

#define NEXT(name) \
  static __typeof__(&name) next_fn = NULL; \
  if (!next_fn) next_fn = (__typeof__(&name)) dlsym(RTLD_NEXT, #name)

int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c)
{
  NEXT(MPI_Allreduce);
  counts[C_ALLREDUCE]++;
  return next_fn(s, r, n, t, o, c);
}

int MPI_Iallreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Request* q)
{
  NEXT(MPI_Iallreduce);
  counts[C_IALLREDUCE]++;
  return next_fn(s, r, n, t, o, c, q);
}

int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
  NEXT(MPI_Bcast);
  counts[C_BCAST]++;
  return next_fn(b, n, t, root, c);
}

int MPI_Barrier(MPI_Comm c)
{
  NEXT(MPI_Barrier);
  counts[C_BARRIER]++;
  return next_fn(c);
}

int MPI_Allgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c)
{
  NEXT(MPI_Allgather);
  counts[C_ALLGATHER]++;
  return next_fn(s, sn, st, r, rn, rt, c);
}

int MPI_Iallgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c,
                   MPI_Request* q)
{
  NEXT(MPI_Iallgather);
  counts[C_IALLGATHER]++;
  return next_fn(s, sn, st, r, rn, rt, c, q);
}

int MPI_Allgatherv(const void* s, int sn, MPI_Datatype st, void* r, const int* rn, const int* d, MPI_Datatype rt,
                   MPI_Comm c)
{
  NEXT(MPI_Allgatherv);
  counts[C_ALLGATHERV]++;
  return next_fn(s, sn, st, r, rn, d, rt, c);
}

int MPI_Gather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, int root, MPI_Comm c)
{
  NEXT(MPI_Gather);
  counts[C_GATHER]++;
  return next_fn(s, sn, st, r, rn, rt, root, c);
}

int MPI_Gatherv(const void* s, int sn, MPI_Datatype st, void* r, const int* rn, const int* d, MPI_Datatype rt,
                int root, MPI_Comm c)
{
  NEXT(MPI_Gatherv);
  counts[C_GATHERV]++;
  return next_fn(s, sn, st, r, rn, d, rt, root, c);
}

int MPI_Reduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c)
{
  NEXT(MPI_Reduce);
  counts[C_REDUCE]++;
  return next_fn(s, r, n, t, o, root, c);
}

int MPI_Alltoall(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c)
{
  NEXT(MPI_Alltoall);
  counts[C_ALLTOALL]++;
  return next_fn(s, sn, st, r, rn, rt, c);
}

int MPI_Scan(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c)
{
  NEXT(MPI_Scan);
  counts[C_SCAN]++;
  return next_fn(s, r, n, t, o, c);
}

int MPI_Send(const void* b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c)
{
  NEXT(MPI_Send);
  counts[C_SEND]++;
  return next_fn(b, n, t, to, tag, c);
}

int MPI_Recv(void* b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Status* st)
{
  NEXT(MPI_Recv);
  counts[C_RECV]++;
  return next_fn(b, n, t, from, tag, c, st);
}

int MPI_Isend(const void* b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c, MPI_Request* q)
{
  NEXT(MPI_Isend);
  counts[C_ISEND]++;
  return next_fn(b, n, t, to, tag, c, q);
}

int MPI_Irecv(void* b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Request* q)
{
  NEXT(MPI_Irecv);
  counts[C_IRECV]++;
  return next_fn(b, n, t, from, tag, c, q);
}

int MPI_Sendrecv(const void* sb, int sn, MPI_Datatype st, int to, int stag, void* rb, int rn, MPI_Datatype rt,
                 int from, int rtag, MPI_Comm c, MPI_Status* status)
{
  NEXT(MPI_Sendrecv);
  counts[C_SENDRECV]++;
  return next_fn(sb, sn, st, to, stag, rb, rn, rt, from, rtag, c, status);
}

int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm* out)
{
  NEXT(MPI_Comm_split);
  counts[C_COMM_SPLIT]++;
  return next_fn(c, color, key, out);
}

int MPI_Comm_dup(MPI_Comm c, MPI_Comm* out)
{
  NEXT(MPI_Comm_dup);
  counts[C_COMM_DUP]++;
  return next_fn(c, out);
}

/* the rank is taken while MPI still runs; the counts include what
 * MPI_Finalize does underneath (the engine completes a pending dataset) */
int MPI_Finalize(void)
{
  NEXT(MPI_Finalize);
  PMPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  int rc = next_fn();
  if (my_rank == 0) {
    fprintf(stderr, "mpi-count");
    for (int i = 0; i < C_COUNT; i++) fprintf(stderr, " %s %ld", names[i], counts[i]);
    fprintf(stderr, "\n");
  }
  return rc;
}
