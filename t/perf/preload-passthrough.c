/* preload-passthrough.c - cost of open/close, stat and fopen/fclose on a path no
 * rule matches, through the wrappers and straight into libc, alternating in one run. */
#include "config.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Usage: preload-passthrough [--load-rules|--load-rules-mpi [--screen NAME]] PATH ITERATIONS
 * Run under LD_PRELOAD=libscr_preload.so, the plain names reach the wrappers
 * while the pointers taken from libc.so.6 itself do not (close and fclose
 * included, so the direct side is libc alone); blocks of calls of
 * each kind alternate so that both see the same machine. Prints one line:
 * "open+close W D R stat W D R fopen+fclose W D R": nanoseconds per call
 * pair in the fastest block through the wrapper (W) and direct (D), and the
 * median over neighbouring pairs of blocks of wrapped/direct time (R). --load-rules asks the preload
 * library, when loaded, to read .scrconf now, as MPI_Init will; --load-rules-mpi
 * also turns on virtual rule directories, as the engine does under MPI (a call
 * that no rule's file can match then goes to libc and returns through the
 * wrapper, which looks at its result). --screen screens paths with the
 * implementation NAME ("baseline": no AVX2) in place of the fastest. */

#define BLOCK 200

typedef struct {
  int (*open)(const char*, int, ...);
  int (*close)(int);
  int (*stat)(const char*, struct stat*);
  FILE* (*fopen)(const char*, const char*);
  int (*fclose)(FILE*);
} calls;

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static void fail(const char* what)
{
  perror(what);
  exit(1);
}

/* one block of each operation with the given functions: nanoseconds each took */
static void run_block(const calls* c, const char* path, double elapsed[3])
{
  struct stat st;
  double start = now();
  for (int i = 0; i < BLOCK; i++) {
    int fd = c->open(path, O_RDONLY);
    if (fd < 0 || c->close(fd) != 0) fail(path);
  }
  double middle = now();
  for (int i = 0; i < BLOCK; i++)
    if (c->stat(path, &st) != 0) fail(path);
  double late = now();
  for (int i = 0; i < BLOCK; i++) {
    FILE* f = c->fopen(path, "r");
    if (!f || c->fclose(f) != 0) fail(path);
  }
  double end = now();
  elapsed[0] = middle - start;
  elapsed[1] = late - middle;
  elapsed[2] = end - late;
}

static int compare_doubles(const void* a, const void* b)
{
  double x = *(const double*) a, y = *(const double*) b;
  return (x > y) - (x < y);
}

static double median(double* values, long n)
{
  qsort(values, (size_t) n, sizeof(double), compare_doubles);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int main(int argc, char** argv)
{
  int mpi = argc > 1 && strcmp(argv[1], "--load-rules-mpi") == 0;
  int rules = mpi || (argc > 1 && strcmp(argv[1], "--load-rules") == 0);
  const char* screen = rules && argc > 3 && strcmp(argv[2], "--screen") == 0 ? argv[3] : NULL;
  int options = rules + (screen ? 2 : 0);
  if (argc != 3 + options) {
    fprintf(stderr, "usage: preload-passthrough [--load-rules|--load-rules-mpi [--screen NAME]] PATH ITERATIONS\n");
    return 2;
  }
  const char* path = argv[1 + options];
  long blocks = atol(argv[2 + options]) / BLOCK;
  if (blocks < 1) blocks = 1;
  if (rules) {
    int (*load)(char*, size_t) = (int (*)(char*, size_t)) dlsym(RTLD_DEFAULT, "scr_preload_state_load");
    char message[1024] = "";
    if (load && load(message, sizeof(message)) != 0) {
      fprintf(stderr, "preload-passthrough: %s\n", message);
      return 1;
    }
    void (*directories)(int) = (void (*)(int)) dlsym(RTLD_DEFAULT, "scr_preload_hooks_virtual_directories");
    if (mpi && directories) directories(1);
    int (*use)(const char*) = (int (*)(const char*)) dlsym(RTLD_DEFAULT, "scr_preload_screen_use");
    if (screen && use && use(screen) != 0) {
      fprintf(stderr, "preload-passthrough: no screen %s in this build or on this processor\n", screen);
      return 1;
    }
  }

  calls wrapped = { open, close, stat, fopen, fclose };
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  calls direct;
  *(void**) &direct.open = libc ? dlsym(libc, "open") : NULL;
  *(void**) &direct.stat = libc ? dlsym(libc, "stat") : NULL;
  *(void**) &direct.fopen = libc ? dlsym(libc, "fopen") : NULL;
  *(void**) &direct.close = libc ? dlsym(libc, "close") : NULL;
  *(void**) &direct.fclose = libc ? dlsym(libc, "fclose") : NULL;
  if (!direct.open || !direct.close || !direct.stat || !direct.fopen || !direct.fclose) {
    fprintf(stderr, "preload-passthrough: cannot find libc's own functions\n");
    return 1;
  }

  /* the fastest block of each side (on a shared machine the slower ones
   * measure the neighbours), and the ratio of each pair of neighbouring
   * blocks, whose median drifts least from run to run */
  double through[3] = { 1e30, 1e30, 1e30 }, straight[3] = { 1e30, 1e30, 1e30 };
  double* ratios[3];
  for (int k = 0; k < 3; k++)
    if (!(ratios[k] = malloc((size_t) blocks * sizeof(double)))) fail("malloc");
  for (long b = 0; b < blocks; b++) {
    double w[3], d[3];
    /* swap the order each time so neither side always runs on a warm cache */
    if (b & 1) {
      run_block(&wrapped, path, w);
      run_block(&direct, path, d);
    } else {
      run_block(&direct, path, d);
      run_block(&wrapped, path, w);
    }
    for (int k = 0; k < 3; k++) {
      if (w[k] < through[k]) through[k] = w[k];
      if (d[k] < straight[k]) straight[k] = d[k];
      ratios[k][b] = w[k] / d[k];
    }
  }
  printf("open+close %.1f %.1f %.4f stat %.1f %.1f %.4f fopen+fclose %.1f %.1f %.4f\n",
         through[0] / BLOCK, straight[0] / BLOCK, median(ratios[0], blocks), through[1] / BLOCK,
         straight[1] / BLOCK, median(ratios[1], blocks), through[2] / BLOCK, straight[2] / BLOCK,
         median(ratios[2], blocks));
  for (int k = 0; k < 3; k++) free(ratios[k]);
  return 0;
}
