/* redundancy-bench.c - one MPI run of checkpoints (or of SCR_Init alone) printing
 * the time spent writing and inside SCR_Complete_checkpoint; driven by redundancy.sh. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr.h"

int main(int argc, char** argv)
{
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 256;
  int ckpts = argc > 2 ? atoi(argv[2]) : 2;
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  SCR_Init();
  MPI_Barrier(MPI_COMM_WORLD);
  double t_init = MPI_Wtime() - t0;

  size_t chunk = 1 << 20;
  char* buf = malloc(chunk);
  for (size_t i = 0; i < chunk; i++) buf[i] = (char) (i * 131 + rank);
  double write_total = 0, complete_total = 0;
  for (int c = 0; c < ckpts; c++) {
    char name[64], path[64], file[SCR_MAX_FILENAME];
    snprintf(name, sizeof(name), "bench.%d", c);
    snprintf(path, sizeof(path), "bench.%d/rank_%d.dat", c, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    SCR_Start_output(name, SCR_FLAG_CHECKPOINT);
    SCR_Route_file(path, file);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    for (size_t i = 0; i < mib; i++)
      if (write(fd, buf, chunk) != (ssize_t) chunk) return 1;
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    SCR_Complete_output(1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t3 = MPI_Wtime();
    write_total += t2 - t1;
    complete_total += t3 - t2;
  }
  if (rank == 0)
    printf("init %.4f write %.4f complete %.4f\n", t_init, ckpts ? write_total / ckpts : 0,
           ckpts ? complete_total / ckpts : 0);
  SCR_Finalize();
  MPI_Finalize();
  return 0;
}
