/* preload-smallfiles.c - an unmodified MPI program that checkpoints into many
 * small files per rank (one per variable or block), for t/perf/preload-smallfiles.sh. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* preload-smallfiles DIR FILES KIB CHECKPOINTS: each checkpoint c, every rank
 * creates DIR/ckpt.<c>/r<rank>_v<i>.dat for i = 0..FILES-1 with open(2),
 * writes KIB KiB into each with one write(2) and closes it. Rank 0 makes the
 * directory, a barrier follows (the program's own, as an application orders
 * its ranks), and the time runs from a barrier before the first open to one
 * after the last close. Rank 0 prints "checkpoint seconds S bytes B files F"
 * for all checkpoints, then "checkpoint times T1 T2 ...". */
int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: preload-smallfiles DIR FILES KIB CHECKPOINTS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* dir = argv[1];
  int files = atoi(argv[2]);
  size_t bytes = (size_t) atol(argv[3]) << 10;
  int checkpoints = atoi(argv[4]);
  char* buf = malloc(bytes ? bytes : 1);
  for (size_t i = 0; i < bytes; i++) buf[i] = (char) (i * 131 + rank);
  double total = 0;
  double* times = calloc((size_t) (checkpoints > 0 ? checkpoints : 1), sizeof(double));
  for (int c = 1; c <= checkpoints; c++) {
    char into[2048], path[4096];
    snprintf(into, sizeof(into), "%s/ckpt.%d", dir, c);
    if (rank == 0 && mkdir(into, 0755) != 0 && errno != EEXIST) {
      perror(into);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < files; i++) {
      snprintf(path, sizeof(path), "%s/r%d_v%d.dat", into, rank, i);
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      for (size_t done = 0; done < bytes;) {
        ssize_t w = write(fd, buf + done, bytes - done);
        if (w <= 0) {
          perror("write");
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
        done += (size_t) w;
      }
      if (close(fd) != 0) {
        perror("close");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    times[c - 1] = MPI_Wtime() - start;
    total += times[c - 1];
  }
  if (rank == 0) {
    printf("checkpoint seconds %.6f bytes %llu files %llu\n", total,
           (unsigned long long) bytes * (unsigned long long) files * (unsigned long long) ranks *
               (unsigned long long) checkpoints,
           (unsigned long long) files * (unsigned long long) ranks * (unsigned long long) checkpoints);
    printf("checkpoint times");
    for (int c = 0; c < checkpoints; c++) printf(" %.6f", times[c]);
    printf("\n");
  }
  free(times);
  free(buf);
  MPI_Finalize();
  return 0;
}
