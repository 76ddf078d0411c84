/* mpi-local-module.c - a module linked with MPI that a program without MPI loads
 * with RTLD_LOCAL, as Python loads mpi4py: MPI is then outside the global scope. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* MPI_Init_thread, a checkpoint file per rank (ckpt.1/rank_R.dat, 1000
 * bytes), a barrier, MPI_Finalize; 0 when every call succeeded */
int mpi_local_run(void)
{
  int provided = 0, rank = -1;
  int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "MPI_Init_thread failed: %d\n", rc);
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[64];
  snprintf(path, sizeof(path), "ckpt.1/rank_%d.dat", rank);
  FILE* f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  char buf[1000];
  memset(buf, 'a' + rank, sizeof(buf));
  fwrite(buf, 1, sizeof(buf), f);
  if (fclose(f) != 0) return 1;
  if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) return 1;
  rc = MPI_Finalize();
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "MPI_Finalize failed: %d\n", rc);
    return 1;
  }
  if (rank == 0) printf("module done\n");
  return 0;
}
