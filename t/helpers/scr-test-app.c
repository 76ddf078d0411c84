/* scr-test-app.c - an MPI program checkpointing through the SCR API, for the tests:
 * deterministic per-rank content, restart verification and ways to fail on purpose. */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr.h"

static int rank, ranks;

/* word i of the file rank r writes at step s */
static uint64_t content_word(int step, int r, uint64_t i)
{
  uint64_t x = (uint64_t) step * 1000003u + (uint64_t) r * 7919u + i;
  x ^= x >> 31;
  x *= 0x9E3779B97F4A7C15ull;
  return x ^ (x >> 29);
}

static int write_file(const char* path, int step, size_t bytes)
{
  FILE* f = fopen(path, "w");
  if (!f) { perror(path); return 0; }
  uint64_t buf[4096];
  size_t words = bytes / 8, i = 0;
  while (i < words) {
    size_t n = words - i < 4096 ? words - i : 4096;
    for (size_t k = 0; k < n; k++) buf[k] = content_word(step, rank, i + k);
    if (fwrite(buf, 8, n, f) != n) { fclose(f); return 0; }
    i += n;
  }
  return fclose(f) == 0;
}

/* 1 if path holds exactly what rank r wrote at step s with the given size */
static int check_file(const char* path, int step, int r, size_t bytes)
{
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  uint64_t buf[4096];
  size_t words = bytes / 8, i = 0;
  int ok = 1;
  while (ok && i < words) {
    size_t n = words - i < 4096 ? words - i : 4096;
    if (fread(buf, 8, n, f) != n) ok = 0;
    for (size_t k = 0; ok && k < n; k++) ok = buf[k] == content_word(step, r, i + k);
    i += n;
  }
  if (ok && fgetc(f) != EOF) ok = 0;
  fclose(f);
  return ok;
}

static void usage(void)
{
  fprintf(stderr, "usage: scr-test-app [--steps N] [--bytes B] [--crash-after STEP] "
          "[--output-every K] [--until-exit] [--invalid-restart] [--ignore-restart]\n"
          "       scr-test-app --check FILE STEP RANK BYTES\n");
  exit(2);
}

int main(int argc, char** argv)
{
  int steps = 3, crash_after = -1, output_every = 0, until_exit = 0, invalid_restart = 0;
  int ignore_restart = 0;
  size_t bytes = 1 << 16;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--check") && i + 4 < argc)
      return check_file(argv[i + 1], atoi(argv[i + 2]), atoi(argv[i + 3]),
                        (size_t) strtoull(argv[i + 4], NULL, 0)) ? 0 : 1;
    else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--bytes") && i + 1 < argc) bytes = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--crash-after") && i + 1 < argc) crash_after = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--output-every") && i + 1 < argc) output_every = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--until-exit")) until_exit = 1;
    else if (!strcmp(argv[i], "--invalid-restart")) invalid_restart = 1;
    else if (!strcmp(argv[i], "--ignore-restart")) ignore_restart = 1;
    else usage();
  }

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (SCR_Init() != SCR_SUCCESS) {
    fprintf(stderr, "SCR_Init failed\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }

  int start = 1;
  int have = 0;
  char name[SCR_MAX_FILENAME];
  char file[SCR_MAX_FILENAME];
  char path[SCR_MAX_FILENAME];
  SCR_Have_restart(&have, name);
  while (have && !ignore_restart) {
    int step = 0;
    SCR_Start_restart(name);
    sscanf(name, "ckpt.%d", &step);
    snprintf(path, sizeof(path), "ckpt.%d/rank_%d.dat", step, rank);
    int valid = SCR_Route_file(path, file) == SCR_SUCCESS && check_file(file, step, rank, bytes);
    if (invalid_restart) valid = 0, invalid_restart = 0;
    if (SCR_Complete_restart(valid) == SCR_SUCCESS) {
      if (rank == 0) printf("restart: %s\n", name);
      start = step + 1;
      break;
    }
    if (rank == 0) printf("restart rejected: %s\n", name);
    SCR_Have_restart(&have, name);
  }
  if (start == 1 && rank == 0) printf("restart: none\n");

  int step;
  for (step = start; step <= steps; step++) {
    int need = 0;
    SCR_Need_checkpoint(&need);
    if (need) {
      snprintf(name, sizeof(name), "ckpt.%d", step);
      SCR_Start_output(name, SCR_FLAG_CHECKPOINT);
      snprintf(path, sizeof(path), "ckpt.%d/rank_%d.dat", step, rank);
      int valid = SCR_Route_file(path, file) == SCR_SUCCESS && write_file(file, step, bytes);
      if (SCR_Complete_output(valid) == SCR_SUCCESS && rank == 0) printf("checkpoint: %s\n", name);
      if (step == crash_after) {
        MPI_Barrier(MPI_COMM_WORLD);
        fflush(stdout);
        raise(SIGKILL);
      }
    }
    if (output_every > 0 && step % output_every == 0) {
      snprintf(name, sizeof(name), "out.%d", step);
      SCR_Start_output(name, SCR_FLAG_OUTPUT);
      snprintf(path, sizeof(path), "out.%d/rank_%d.dat", step, rank);
      int valid = SCR_Route_file(path, file) == SCR_SUCCESS && write_file(file, step, bytes);
      if (SCR_Complete_output(valid) == SCR_SUCCESS && rank == 0) printf("output: %s\n", name);
    }
    if (until_exit) {
      int flag = 0;
      SCR_Should_exit(&flag);
      if (flag) {
        if (rank == 0) printf("halted after step %d\n", step);
        break;
      }
    }
  }
  if (rank == 0) printf("done: step %d\n", step > steps ? steps : step);
  SCR_Finalize();
  MPI_Finalize();
  return 0;
}
