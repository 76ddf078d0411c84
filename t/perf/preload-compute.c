/* preload-compute.c - an unmodified MPI program that checkpoints and then
 * computes, for the background flush benchmark: time in close() against time computing. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perf-write.h"

/* preload-compute DIR MIB CHECKPOINTS WORK: each checkpoint, every rank
 * writes DIR/ckpt.<n>/rank_<r>.dat (MIB MiB, write(2) in 4 MiB pieces) and
 * closes it (under the preload the checkpoint completes in that close),
 * then computes: 10 steps of WORK million multiply-adds each, every step
 * ended by an MPI_Allreduce, as a bulk-synchronous code does (no barrier:
 * the preload layer makes nothing of an allreduce). Rank 0 prints, per
 * checkpoint, the slowest rank's seconds in write, close and compute:
 * "checkpoint N write W close C compute P". With CHECKPOINTS 0 it computes
 * one phase and prints "rate R" (million multiply-adds per second), so that
 * a script can give every run the same WORK. */
static double compute(long work)
{
  /* a dependent chain the compiler cannot fold or vectorise away */
  volatile double sink = 0;
  double x = 1.0, a = 1.0000001, b = 1e-9;
  for (long i = 0; i < work * 1000000L; i++) x = x * a + b;
  sink = x;
  return sink;
}

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: preload-compute DIR MIB CHECKPOINTS WORK\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* dir = argv[1];
  size_t bytes = (size_t) atol(argv[2]) << 20;
  int checkpoints = atoi(argv[3]);
  long work = atol(argv[4]);
  double out = 0, in = 0;
  if (checkpoints == 0) {
    double start = MPI_Wtime();
    for (int s = 0; s < 10; s++) {
      in = compute(work);
      MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double seconds = MPI_Wtime() - start, slowest = 0;
    MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("rate %.1f\n", 10.0 * (double) work / slowest);
    MPI_Finalize();
    return 0;
  }
  size_t piece = 4u << 20;
  char* buf = malloc(piece);
  double* times = calloc((size_t) checkpoints * 3, sizeof(double));
  if (!buf || !times) MPI_Abort(MPI_COMM_WORLD, 1);
  for (size_t i = 0; i < piece; i++) buf[i] = (char) (i * 131 + rank);
  for (int c = 1; c <= checkpoints; c++) {
    char into[2048], path[4096];
    snprintf(into, sizeof(into), "%s/ckpt.%d", dir, c);
    mkdir(into, 0755);
    snprintf(path, sizeof(path), "%s/rank_%d.dat", into, rank);
    double start = MPI_Wtime();
    int fd = perf_write_file(path, buf, piece, bytes);
    double written = MPI_Wtime();
    close(fd);
    double closed = MPI_Wtime();
    for (int s = 0; s < 10; s++) {
      in = compute(work);
      MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double computed = MPI_Wtime();
    times[3 * (c - 1)] = written - start;
    times[3 * (c - 1) + 1] = closed - written;
    times[3 * (c - 1) + 2] = computed - closed;
  }
  double* slowest = calloc((size_t) checkpoints * 3, sizeof(double));
  if (!slowest) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Reduce(times, slowest, checkpoints * 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int c = 1; c <= checkpoints; c++)
      printf("checkpoint %d write %.4f close %.4f compute %.4f\n", c, slowest[3 * (c - 1)], slowest[3 * (c - 1) + 1],
             slowest[3 * (c - 1) + 2]);
  /* seen before MPI_Finalize: a script measuring the flush knows the
   * computing is over */
  fflush(stdout);
  free(slowest);
  free(times);
  free(buf);
  MPI_Finalize();
  return 0;
}
