/* api_checkpoint.c - example MPI application checkpointing through the SCR API
 * (LLNL SCR 3.x calls only), restarting from its newest checkpoint after a crash. */
#define _POSIX_C_SOURCE 200809L /* nanosleep, also under -std=c99 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include "scr.h"

/* Header at the start of every rank file; the step and checksum inside let a
 * restart reject a file from another step or one damaged on the way. */
#define CKPT_MAGIC "SCRXMPL1"
struct ckpt_header {
  char     magic[8];
  uint64_t step;
  uint64_t rank;
  uint64_t ranks;
  uint64_t count;    /* number of doubles that follow */
  uint64_t checksum; /* FNV-1a of those doubles */
};

static int rank, ranks;

static void usage(const char* prog)
{
  if (rank == 0)
    fprintf(stderr,
            "usage: %s [--steps N] [--bytes B] [--crash-at STEP] [--sleep MS]\n"
            "  --steps N       total number of time steps (default 20)\n"
            "  --bytes B       state size per rank in bytes (default 1048576)\n"
            "  --crash-at STEP kill every rank (SIGKILL) once the checkpoint of\n"
            "                  step STEP or the first one after it is complete\n"
            "  --sleep MS      sleep MS milliseconds per step, to look like work\n",
            prog);
}

static int parse_long(const char* s, long* out)
{
  char* end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 0)
    return -1;
  *out = v;
  return 0;
}

/* FNV-1a over raw bytes: fixed, portable, and sensitive to every bit, so two
 * runs agree only if their states are bit-identical. */
static uint64_t fnv1a(uint64_t h, const void* buf, size_t len)
{
  const unsigned char* p = buf;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}
#define FNV_OFFSET 14695981039346656037ULL

static void init_state(double* x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    x[i] = (double)(rank + 1) + (double)i / (double)n;
}

/* One time step of a 1-D diffusion over all ranks: the boundary values come
 * from the neighbours on a ring, so the result depends on every rank's state.
 * Only +,* on doubles in a fixed order: bit-reproducible between runs. */
static void evolve(double* x, double* tmp, size_t n, long step)
{
  int left = (rank + ranks - 1) % ranks, right = (rank + 1) % ranks;
  double from_left, from_right;
  MPI_Sendrecv(&x[n - 1], 1, MPI_DOUBLE, right, 0, &from_left, 1, MPI_DOUBLE, left, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&x[0], 1, MPI_DOUBLE, left, 1, &from_right, 1, MPI_DOUBLE, right, 1,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (size_t i = 0; i < n; i++) {
    double l = (i == 0) ? from_left : x[i - 1];
    double r = (i == n - 1) ? from_right : x[i + 1];
    double source = (double)((step * 31 + (long)i * 7 + rank) % 101) * 1.0e-3;
    tmp[i] = 0.5 * x[i] + 0.25 * (l + r) + source;
  }
  memcpy(x, tmp, n * sizeof(double));
}

static int write_all(int fd, const void* buf, size_t len)
{
  const char* p = buf;
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, void* buf, size_t len)
{
  char* p = buf;
  while (len > 0) {
    ssize_t r = read(fd, p, len);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    p += r;
    len -= (size_t)r;
  }
  return 0;
}

/* Write this rank's file of checkpoint "ckpt.<step>". Every rank takes part
 * in the start/complete calls even if its write fails: they are collective,
 * and SCR then knows the dataset is not valid on this rank. */
static int checkpoint(long step, const double* x, size_t n)
{
  char dataset[SCR_MAX_FILENAME], name[SCR_MAX_FILENAME], path[SCR_MAX_FILENAME];
  snprintf(dataset, sizeof(dataset), "ckpt.%ld", step);
  snprintf(name, sizeof(name), "ckpt.%ld/rank_%d.dat", step, rank);

  if (SCR_Start_output(dataset, SCR_FLAG_CHECKPOINT) != SCR_SUCCESS) {
    if (rank == 0)
      fprintf(stderr, "api_checkpoint: SCR_Start_output(%s) failed\n", dataset);
    return -1;
  }

  int valid = 0;
  if (SCR_Route_file(name, path) == SCR_SUCCESS) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      struct ckpt_header h;
      memset(&h, 0, sizeof(h));
      memcpy(h.magic, CKPT_MAGIC, sizeof(h.magic));
      h.step = (uint64_t)step;
      h.rank = (uint64_t)rank;
      h.ranks = (uint64_t)ranks;
      h.count = n;
      h.checksum = fnv1a(FNV_OFFSET, x, n * sizeof(double));
      valid = write_all(fd, &h, sizeof(h)) == 0 && write_all(fd, x, n * sizeof(double)) == 0;
      if (close(fd) != 0)
        valid = 0;
    }
    if (!valid)
      fprintf(stderr, "api_checkpoint: rank %d: writing %s: %s\n", rank, path, strerror(errno));
  }

  /* SCR_Complete_output agrees on validity over all ranks: it succeeds only
   * if every rank wrote its file. */
  if (SCR_Complete_output(valid) != SCR_SUCCESS) {
    if (rank == 0)
      fprintf(stderr, "api_checkpoint: checkpoint %s is not valid\n", dataset);
    return -1;
  }
  if (rank == 0) {
    printf("checkpoint %s written\n", dataset);
    fflush(stdout);
  }
  return 0;
}

/* Read this rank's file of the checkpoint SCR loaded; returns 1 if it is
 * complete and consistent with this run (rank count, state size). */
static int read_checkpoint(const char* dataset, long* step, double* x, size_t n)
{
  long s;
  char rest;
  if (sscanf(dataset, "ckpt.%ld%c", &s, &rest) != 1 || s < 0) {
    fprintf(stderr, "api_checkpoint: rank %d: unexpected dataset name '%s'\n", rank, dataset);
    return 0;
  }

  char name[SCR_MAX_FILENAME], path[SCR_MAX_FILENAME];
  snprintf(name, sizeof(name), "ckpt.%ld/rank_%d.dat", s, rank);
  if (SCR_Route_file(name, path) != SCR_SUCCESS) {
    fprintf(stderr, "api_checkpoint: rank %d: %s is not in checkpoint %s\n", rank, name, dataset);
    return 0;
  }
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    fprintf(stderr, "api_checkpoint: rank %d: open %s: %s\n", rank, path, strerror(errno));
    return 0;
  }
  struct ckpt_header h;
  int ok = read_all(fd, &h, sizeof(h)) == 0
        && memcmp(h.magic, CKPT_MAGIC, sizeof(h.magic)) == 0
        && h.step == (uint64_t)s && h.rank == (uint64_t)rank
        && h.ranks == (uint64_t)ranks && h.count == n
        && read_all(fd, x, n * sizeof(double)) == 0
        && h.checksum == fnv1a(FNV_OFFSET, x, n * sizeof(double));
  char extra;
  if (ok && read(fd, &extra, 1) != 0)
    ok = 0; /* trailing bytes: not a file this program wrote */
  close(fd);
  if (!ok)
    fprintf(stderr, "api_checkpoint: rank %d: %s is damaged or from another run\n", rank, path);
  else
    *step = s;
  return ok;
}

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  long steps = 20, bytes = 1048576, crash_at = -1, sleep_ms = 0;
  for (int i = 1; i < argc; i++) {
    long* target = NULL;
    if (strcmp(argv[i], "--steps") == 0)
      target = &steps;
    else if (strcmp(argv[i], "--bytes") == 0)
      target = &bytes;
    else if (strcmp(argv[i], "--crash-at") == 0)
      target = &crash_at;
    else if (strcmp(argv[i], "--sleep") == 0)
      target = &sleep_ms;
    else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(argv[0]);
      MPI_Finalize();
      return 0;
    }
    if (target == NULL || i + 1 >= argc || parse_long(argv[i + 1], target) != 0) {
      usage(argv[0]);
      MPI_Finalize();
      return 2;
    }
    i++;
  }
  size_t n = (size_t)bytes / sizeof(double);
  if (n == 0)
    n = 1;

  double* x = malloc(n * sizeof(double));
  double* tmp = malloc(n * sizeof(double));
  if (x == NULL || tmp == NULL) {
    fprintf(stderr, "api_checkpoint: rank %d: out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  if (SCR_Init() != SCR_SUCCESS) {
    if (rank == 0)
      fprintf(stderr, "api_checkpoint: SCR_Init failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  /* Try the newest checkpoint SCR has; if any rank cannot read its part,
   * SCR_Complete_restart fails everywhere and SCR offers the next older one. */
  long step = 0;
  int restored = 0;
  for (;;) {
    int have = 0;
    char dataset[SCR_MAX_FILENAME] = "";
    if (SCR_Have_restart(&have, dataset) != SCR_SUCCESS || !have)
      break;
    if (SCR_Start_restart(dataset) != SCR_SUCCESS)
      break;
    int valid = read_checkpoint(dataset, &step, x, n);
    if (SCR_Complete_restart(valid) == SCR_SUCCESS) {
      restored = 1;
      if (rank == 0)
        printf("resumed from step %ld (checkpoint %s)\n", step, dataset);
      break;
    }
    if (rank == 0)
      printf("checkpoint %s could not be read, trying an older one\n", dataset);
  }
  if (!restored) {
    step = 0;
    init_state(x, n);
    if (rank == 0)
      printf("starting from step 0\n");
  }
  fflush(stdout);

  while (step < steps) {
    evolve(x, tmp, n, step);
    step++;
    if (sleep_ms > 0) {
      struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };
      nanosleep(&ts, NULL);
    }

    int need = 0;
    SCR_Need_checkpoint(&need);
    if (!need)
      continue;
    if (checkpoint(step, x, n) != 0)
      continue;

    if (crash_at >= 0 && step >= crash_at) {
      /* The barrier makes sure no rank is still inside SCR_Complete_output
       * when the first one dies; then the crash is real: no SCR_Finalize,
       * no MPI_Finalize, nothing flushed on the way out. */
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) {
        printf("simulated crash after checkpoint ckpt.%ld\n", step);
        fflush(stdout);
      }
      fflush(stderr);
      raise(SIGKILL);
    }

    int stop = 0;
    SCR_Should_exit(&stop);
    if (stop) {
      if (rank == 0)
        printf("SCR asks the job to stop after step %ld\n", step);
      break;
    }
  }

  /* Combine the ranks' hashes in rank order so the result does not depend
   * on reduction order; equal results mean bit-identical final states. */
  uint64_t mine = fnv1a(FNV_OFFSET, x, n * sizeof(double));
  uint64_t* all = rank == 0 ? malloc((size_t)ranks * sizeof(uint64_t)) : NULL;
  MPI_Gather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    uint64_t h = fnv1a(FNV_OFFSET, all, (size_t)ranks * sizeof(uint64_t));
    if (step >= steps)
      printf("completed %ld steps\n", steps);
    printf("result: %016llx\n", (unsigned long long)h);
    fflush(stdout);
    free(all);
  }

  SCR_Finalize();
  free(x);
  free(tmp);
  MPI_Finalize();
  return 0;
}
