/* step-writer.c - an unmodified MPI program that writes, at every step, an
 * output file and then a checkpoint file per rank, and resumes from the newest
 * checkpoint it can stat: for the preload tests of datasets of two kinds. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_file(const char* path, int step, int rank)
{
  char text[64];
  int length = snprintf(text, sizeof(text), "step %d rank %d\n", step, rank);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, text, (size_t) length) != length || close(fd) != 0) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* step-writer STEPS: out/field_<s>.<r> then ckpt.<s>/rank_<r> for each step */
int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, steps = argc > 1 ? atoi(argv[1]) : 3;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[256];
  int start = 0;
  for (int s = steps; s > 0 && !start; s--) {
    struct stat st;
    snprintf(path, sizeof(path), "ckpt.%d/rank_%d", s, rank);
    if (stat(path, &st) == 0) start = s;
  }
  MPI_Allreduce(MPI_IN_PLACE, &start, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("resumed from step %d\n", start);
  mkdir("out", 0755);
  for (int s = start + 1; s <= steps; s++) {
    snprintf(path, sizeof(path), "out/field_%d.%d", s, rank);
    write_file(path, s, rank);
    snprintf(path, sizeof(path), "ckpt.%d", s);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "ckpt.%d/rank_%d", s, rank);
    write_file(path, s, rank);
  }
  MPI_Finalize();
  return 0;
}
