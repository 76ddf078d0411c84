/* preload-spawn.c - what a process costs from start to exit, run again and again:
 * for the price of libscr_preload.so in the processes a rank starts (t/perf/preload-children.sh). */
#include "config.h"
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Usage: preload-spawn COUNT PROGRAM [ARGS...]
 * Starts PROGRAM COUNT times, one after the other, with posix_spawn and this
 * environment, its standard output to /dev/null, and prints one line
 * "wall W cpu C": microseconds from the spawn to the end of the wait, the
 * median over the children, and the children's own CPU time (user and
 * system, from wait4) on average. CPU time is what the library adds to a
 * child; on a shared machine it drifts less than the wall clock, which
 * waits for other processes too. Exits non-zero when a child fails. */

extern char** environ;

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int compare_doubles(const void* a, const void* b)
{
  double x = *(const double*) a, y = *(const double*) b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv)
{
  long count = argc > 2 ? atol(argv[1]) : 0;
  if (count < 1) {
    fprintf(stderr, "usage: preload-spawn COUNT PROGRAM [ARGS...]\n");
    return 2;
  }
  double* wall = malloc((size_t) count * sizeof(double));
  if (!wall) return 1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  double cpu = 0;
  for (long i = 0; i < count; i++) {
    pid_t pid;
    int status = 0;
    struct rusage usage;
    double start = now();
    if (posix_spawn(&pid, argv[2], &actions, NULL, argv + 2, environ) != 0 || wait4(pid, &status, 0, &usage) != pid ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "preload-spawn: %s failed\n", argv[2]);
      return 1;
    }
    wall[i] = now() - start;
    cpu += (double) (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
           (double) (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  }
  qsort(wall, (size_t) count, sizeof(double), compare_doubles);
  printf("wall %.1f cpu %.1f\n", wall[count / 2], cpu / (double) count);
  posix_spawn_file_actions_destroy(&actions);
  free(wall);
  return 0;
}
