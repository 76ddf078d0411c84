/* app_common.h - the "physics" the C and C++ example applications share:
 * command line, deterministic per-rank state, its evolution, the checksum of
 * the result and the simulated node crash. Checkpoint I/O is in each program,
 * written the way real codes write it; nothing here (or there) knows about
 * any checkpoint library. fortran_unformatted.f90 computes the same numbers.
 *
 *   state:     words = max(1, bytes / 8) 64-bit words per rank
 *   initial:   s[i] = xs(xs(((rank + 1) << 32) ^ (i + 1)))
 *   step t:    p = s[n-1]; for i: c = s[i]; s[i] = xs(c ^ t ^ (p >> 1)); p = c
 *   rank sum:  h = xs(((rank + 1) << 40) ^ 0x1E3779B97F4A7C15); h = xs(h ^ s[i])
 *   result:    MPI_Reduce(h, BXOR) of the rank sums, printed as 16 hex digits
 * with xs the xorshift64 permutation (x ^= x << 13; x ^= x >> 7; x ^= x << 17).
 * The rank enters the checksum, so a rank that resumes from another rank's
 * file changes the result. */
#ifndef APP_COMMON_H
#define APP_COMMON_H

#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* the header in front of the state in every binary checkpoint file */
#define APP_MAGIC 0x31544b4350505841ULL /* "AXPPCKT1" little-endian */
typedef struct {
  uint64_t magic;
  uint64_t step;
  uint64_t rank;
  uint64_t words;
} app_header;

typedef struct {
  long steps;  /* --steps N: total steps */
  long every;  /* --every K: checkpoint after every K-th step */
  long bytes;  /* --bytes B: state size per rank */
  long die_at; /* --die-at STEP: all ranks SIGKILL themselves after that step, -1: never */
  long keep;   /* --keep K: checkpoints to keep, 0: all (only programs that delete) */
  long step_ms; /* --step-ms MS: each step also sleeps that long, 0: not at all */
} app_opts;

/* --step-ms for app_step: time for a test to act while the program runs
 * (kill a node, stop a rank) without changing what it computes */
static long app_step_ms = 0;

/* parse the command line; on an error rank 0 prints usage and 0 is returned */
static inline int app_parse(int argc, char** argv, int rank, app_opts* o, int with_keep)
{
  o->steps = 20;
  o->every = 5;
  o->bytes = 4096;
  o->die_at = -1;
  o->keep = 0;
  o->step_ms = 0;
  for (int i = 1; i < argc; i++) {
    long* dst = NULL;
    long min = 1;
    if (strcmp(argv[i], "--steps") == 0) {
      dst = &o->steps;
      min = 0;
    } else if (strcmp(argv[i], "--every") == 0) {
      dst = &o->every;
    } else if (strcmp(argv[i], "--bytes") == 0) {
      dst = &o->bytes;
    } else if (strcmp(argv[i], "--die-at") == 0) {
      dst = &o->die_at;
    } else if (strcmp(argv[i], "--step-ms") == 0) {
      dst = &o->step_ms;
      min = 0;
    } else if (with_keep && strcmp(argv[i], "--keep") == 0) {
      dst = &o->keep;
      min = 0;
    }
    char* end = NULL;
    if (dst != NULL && i + 1 < argc) {
      *dst = strtol(argv[++i], &end, 10);
    }
    if (dst == NULL || end == NULL || *end != '\0' || end == argv[i] || *dst < min || *dst > 1000000000L) {
      if (rank == 0) {
        fprintf(stderr, "usage: %s [--steps N] [--every K] [--bytes B] [--die-at STEP] [--step-ms MS]%s\n",
                argv[0], with_keep ? " [--keep K]" : "");
      }
      return 0;
    }
  }
  app_step_ms = o->step_ms;
  return 1;
}

static inline size_t app_words(const app_opts* o)
{
  return o->bytes >= 8 ? (size_t) o->bytes / 8 : 1;
}

static inline uint64_t app_xs(uint64_t x)
{
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

static inline void app_init_state(uint64_t* s, size_t n, int rank)
{
  for (size_t i = 0; i < n; i++) {
    s[i] = app_xs(app_xs(((uint64_t) (rank + 1) << 32) ^ (uint64_t) (i + 1)));
  }
}

/* one step of the "simulation": step is 1-based */
static inline void app_step(uint64_t* s, size_t n, long step)
{
  if (app_step_ms > 0) {
    struct timespec ts = {app_step_ms / 1000, (app_step_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
  }
  uint64_t prev = s[n - 1];
  for (size_t i = 0; i < n; i++) {
    uint64_t cur = s[i];
    s[i] = app_xs(cur ^ (uint64_t) step ^ (prev >> 1));
    prev = cur;
  }
}

/* rank 0 prints "result: <16 hex digits>" for the global state */
static inline void app_result(const uint64_t* s, size_t n, int rank)
{
  uint64_t h = app_xs(((uint64_t) (rank + 1) << 40) ^ 0x1E3779B97F4A7C15ULL);
  for (size_t i = 0; i < n; i++) {
    h = app_xs(h ^ s[i]);
  }
  uint64_t global = 0;
  MPI_Reduce(&h, &global, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("result: %016llx\n", (unsigned long long) global);
    fflush(stdout);
  }
}

/* rank 0 says where the run starts: "resumed from step N" or "starting from step 0" */
static inline void app_say_start(long step, int rank)
{
  if (rank == 0) {
    if (step > 0) {
      printf("resumed from step %ld\n", step);
    } else {
      printf("starting from step 0\n");
    }
    fflush(stdout);
  }
}

static inline void app_say_checkpoint(long step, int rank)
{
  if (rank == 0) {
    printf("checkpoint %ld written\n", step);
    fflush(stdout);
  }
}

/* the simulated node crash: once every rank is past the step (and so has
 * written and closed that step's checkpoint, if it had one), all die at once,
 * rank 0 a moment first: the launcher forwards what it printed before it
 * hears of a death (hydra lost rank 0's last lines when another rank's
 * death came first) */
static inline void app_maybe_die(const app_opts* o, long step, int rank)
{
  if (o->die_at == step) {
    if (rank == 0) {
      printf("dying at step %ld\n", step);
    }
    fflush(stdout);
    fflush(stderr);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) usleep(200000);
    raise(SIGKILL);
  }
}

/* a fatal I/O error: say what failed and take the job down */
static inline void app_fail(const char* what, const char* path, int err)
{
  fprintf(stderr, "error: %s %s: %s\n", what, path, strerror(err));
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* does the header describe this rank's checkpoint of that step? */
static inline int app_header_ok(const app_header* h, long step, int rank, size_t words)
{
  return h->magic == APP_MAGIC && h->step == (uint64_t) step && h->rank == (uint64_t) rank &&
         h->words == (uint64_t) words;
}

static inline app_header app_make_header(long step, int rank, size_t words)
{
  app_header h;
  h.magic = APP_MAGIC;
  h.step = (uint64_t) step;
  h.rank = (uint64_t) rank;
  h.words = (uint64_t) words;
  return h;
}

#endif
