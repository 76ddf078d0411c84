/* checkpoint-bandwidth.c - checkpoint bandwidth through SCR into cache against the
 * same bytes written directly to the same device, alternating in one run. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr.h"

static int rank, ranks;

static int write_bytes(const char* path, const char* buf, size_t chunk, size_t bytes)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) { perror(path); return 0; }
  for (size_t done = 0; done < bytes; done += chunk)
    if (write(fd, buf, chunk) != (ssize_t) chunk) { perror("write"); close(fd); return 0; }
  return close(fd) == 0;
}

static int cmp_double(const void* a, const void* b)
{
  double x = *(const double*) a, y = *(const double*) b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv)
{
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 256;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  const char* direct_dir = argc > 3 ? argv[3] : "/dev/shm/scr-bench-direct";
  size_t chunk = 1 << 20, bytes = mib << 20;
  char* buf = malloc(chunk);
  memset(buf, 0xA5, chunk);

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  SCR_Init();
  mkdir(direct_dir, 0700);

  double* t_scr = calloc(reps, sizeof(double));
  double* t_direct = calloc(reps, sizeof(double));
  double* t_start = calloc(reps, sizeof(double));
  double* t_unlink = calloc(reps, sizeof(double));
  char path[1024], file[SCR_MAX_FILENAME];
  for (int i = 0; i < reps; i++) {
    /* direct: create, write, close; then measure what deleting it costs */
    snprintf(path, sizeof(path), "%s/rank_%d.dat", direct_dir, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    write_bytes(path, buf, chunk, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    t_direct[i] = MPI_Wtime() - t0;
    t0 = MPI_Wtime();
    unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    t_unlink[i] = MPI_Wtime() - t0;

    /* through SCR: the same bytes, Start_output to Complete_output */
    char name[64];
    snprintf(name, sizeof(name), "bench.%d", i);
    snprintf(path, sizeof(path), "bench.%d/rank_%d.dat", i, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    SCR_Start_output(name, SCR_FLAG_CHECKPOINT);
    t_start[i] = MPI_Wtime() - t0;
    SCR_Route_file(path, file);
    int ok = write_bytes(file, buf, chunk, bytes);
    SCR_Complete_output(ok);
    MPI_Barrier(MPI_COMM_WORLD);
    t_scr[i] = MPI_Wtime() - t0;
  }
  if (rank == 0) {
    qsort(t_scr, reps, sizeof(double), cmp_double);
    qsort(t_direct, reps, sizeof(double), cmp_double);
    qsort(t_start, reps, sizeof(double), cmp_double);
    qsort(t_unlink, reps, sizeof(double), cmp_double);
    double total = (double) bytes * ranks / (1 << 20);
    double scr_bw = total / t_scr[reps / 2], direct_bw = total / t_direct[reps / 2];
    printf("ranks %d, %zu MiB per rank, %d repetitions (medians)\n", ranks, mib, reps);
    printf("direct write   : %8.3f s  %9.1f MiB/s\n", t_direct[reps / 2], direct_bw);
    printf("SCR checkpoint : %8.3f s  %9.1f MiB/s\n", t_scr[reps / 2], scr_bw);
    printf("ratio SCR/direct bandwidth: %.3f\n", scr_bw / direct_bw);
    printf("SCR_Start_output with eviction of the previous dataset: %.4f s "
           "(plain unlink of the same bytes: %.4f s)\n", t_start[reps / 2], t_unlink[reps / 2]);
  }
  SCR_Finalize();
  MPI_Finalize();
  rmdir(direct_dir);
  return 0;
}
