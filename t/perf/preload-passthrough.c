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

/* Usage: preload-passthrough [--load-rules|--load-rules-mpi] PATH ITERATIONS
 * Run under LD_PRELOAD=libscr_preload.so, the plain names reach the wrappers
 * while the pointers taken from libc.so.6 itself do not; blocks of calls of
 * each kind alternate so that both see the same machine. Prints one line:
 * "open+close W D stat W D fopen+fclose W D", nanoseconds per call pair in
 * the fastest block, through the wrapper (W) and direct (D). --load-rules asks the preload
 * library, when loaded, to read .scrconf now, as MPI_Init will; --load-rules-mpi
 * also turns on virtual rule directories, as the engine does under MPI (a call
 * that no rule's file can match then goes to libc and returns through the
 * wrapper, which looks at its result). */

#define BLOCK 200

typedef struct {
  int (*open)(const char*, int, ...);
  int (*stat)(const char*, struct stat*);
  FILE* (*fopen)(const char*, const char*);
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

/* one block of each operation with the given functions; keeps the fastest
 * block of each, since on a shared machine the slower ones measure the neighbours */
static void run_block(const calls* c, const char* path, double best[3])
{
  struct stat st;
  double start = now();
  for (int i = 0; i < BLOCK; i++) {
    int fd = c->open(path, O_RDONLY);
    if (fd < 0 || close(fd) != 0) fail(path);
  }
  double middle = now();
  for (int i = 0; i < BLOCK; i++)
    if (c->stat(path, &st) != 0) fail(path);
  double late = now();
  for (int i = 0; i < BLOCK; i++) {
    FILE* f = c->fopen(path, "r");
    if (!f || fclose(f) != 0) fail(path);
  }
  double end = now();
  double elapsed[3] = { middle - start, late - middle, end - late };
  for (int k = 0; k < 3; k++)
    if (elapsed[k] < best[k]) best[k] = elapsed[k];
}

int main(int argc, char** argv)
{
  int mpi = argc > 1 && strcmp(argv[1], "--load-rules-mpi") == 0;
  int rules = mpi || (argc > 1 && strcmp(argv[1], "--load-rules") == 0);
  if (argc != 3 + rules) {
    fprintf(stderr, "usage: preload-passthrough [--load-rules|--load-rules-mpi] PATH ITERATIONS\n");
    return 2;
  }
  const char* path = argv[1 + rules];
  long blocks = atol(argv[2 + rules]) / BLOCK;
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
  }

  calls wrapped = { open, stat, fopen };
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  calls direct;
  *(void**) &direct.open = libc ? dlsym(libc, "open") : NULL;
  *(void**) &direct.stat = libc ? dlsym(libc, "stat") : NULL;
  *(void**) &direct.fopen = libc ? dlsym(libc, "fopen") : NULL;
  if (!direct.open || !direct.stat || !direct.fopen) {
    fprintf(stderr, "preload-passthrough: cannot find libc's own functions\n");
    return 1;
  }

  double through[3] = { 1e30, 1e30, 1e30 }, straight[3] = { 1e30, 1e30, 1e30 };
  for (long b = 0; b < blocks; b++) {
    /* swap the order each time so neither side always runs on a warm cache */
    if (b & 1) {
      run_block(&wrapped, path, through);
      run_block(&direct, path, straight);
    } else {
      run_block(&direct, path, straight);
      run_block(&wrapped, path, through);
    }
  }
  printf("open+close %.1f %.1f stat %.1f %.1f fopen+fclose %.1f %.1f\n",
         through[0] / BLOCK, straight[0] / BLOCK, through[1] / BLOCK,
         straight[1] / BLOCK, through[2] / BLOCK, straight[2] / BLOCK);
  return 0;
}
