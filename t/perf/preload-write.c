/* preload-write.c - an unmodified checkpointing MPI program for the preload
 * benchmark: each rank writes one file per checkpoint and reports the bandwidth. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perf-write.h"

/* preload-write DIR MIB CHECKPOINTS [rename]: DIR/ckpt.<n>/rank_<r>.dat,
 * written with write(2) in 4 MiB pieces; rank 0 prints "checkpoint seconds
 * S bytes B" for all ranks together, open to the last close (a barrier on
 * each side), then "checkpoint times T1 T2 ..." with the time of each
 * checkpoint. With "rename", each checkpoint is written into DIR/ckpt.tmp,
 * which rank 0 renames to DIR/ckpt.<n> once every rank closed its file; a
 * barrier follows, and the time includes both. */
int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int rename_dir = argc == 5 && strcmp(argv[4], "rename") == 0;
  if (argc != 4 + rename_dir) {
    if (rank == 0) fprintf(stderr, "usage: preload-write DIR MIB CHECKPOINTS [rename]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* dir = argv[1];
  size_t bytes = (size_t) atol(argv[2]) << 20;
  int checkpoints = atoi(argv[3]);
  size_t piece = 4u << 20;
  char* buf = malloc(piece);
  for (size_t i = 0; i < piece; i++) buf[i] = (char) (i * 131 + rank);
  double total = 0;
  double* times = calloc((size_t) (checkpoints > 0 ? checkpoints : 1), sizeof(double));
  for (int c = 1; c <= checkpoints; c++) {
    char final[2048], into[2048], path[4096];
    snprintf(final, sizeof(final), "%s/ckpt.%d", dir, c);
    if (rename_dir) snprintf(into, sizeof(into), "%s/ckpt.tmp", dir);
    else snprintf(into, sizeof(into), "%s", final);
    mkdir(into, 0755);
    snprintf(path, sizeof(path), "%s/rank_%d.dat", into, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    int fd = perf_write_file(path, buf, piece, bytes);
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rename_dir) {
      if (rank == 0 && rename(into, final) != 0) {
        perror(final);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
    times[c - 1] = MPI_Wtime() - start;
    total += times[c - 1];
  }
  if (rank == 0) {
    printf("checkpoint seconds %.6f bytes %llu\n", total,
           (unsigned long long) bytes * (unsigned long long) ranks * (unsigned long long) checkpoints);
    printf("checkpoint times");
    for (int c = 0; c < checkpoints; c++) printf(" %.6f", times[c]);
    printf("\n");
  }
  free(times);
  free(buf);
  MPI_Finalize();
  return 0;
}
