/* dirscan.c - an MPI application in C that finds its newest checkpoint by
 * listing the checkpoint directory. Rank 0 creates chk/ at start-up; each
 * rank writes chk/state-<step>-<rank>.dat with creat() and write(). On
 * start-up each rank lists chk/ (opendir/readdir), keeps the steps of the
 * names "state-<step>-<rank>.dat" with its own rank, and the ranks agree on
 * the largest step every one of them has (MPI_Allreduce MIN of each rank's
 * largest); should a rank not have that step or fail to read it, the ranks
 * look below it. It knows nothing about checkpoint libraries. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "app_common.h"

#define CHK_DIR "chk"

static void write_all(int fd, const void* buf, size_t len, const char* name)
{
  const char* p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      app_fail("write", name, n < 0 ? errno : EIO);
    }
    p += n;
    len -= (size_t) n;
  }
}

static int read_all(int fd, void* buf, size_t len)
{
  char* p = buf;
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return 0;
    }
    p += n;
    len -= (size_t) n;
  }
  return 1;
}

static void write_checkpoint(long step, int rank, const uint64_t* state, size_t words)
{
  char name[256];
  snprintf(name, sizeof(name), CHK_DIR "/state-%ld-%d.dat", step, rank);
  int fd = creat(name, 0644);
  if (fd < 0) {
    app_fail("creat", name, errno);
  }
  app_header h = app_make_header(step, rank, words);
  write_all(fd, &h, sizeof(h), name);
  write_all(fd, state, words * sizeof(uint64_t), name);
  if (close(fd) != 0) {
    app_fail("close", name, errno);
  }
}

static int read_checkpoint(long step, int rank, uint64_t* state, size_t words)
{
  char name[256];
  snprintf(name, sizeof(name), CHK_DIR "/state-%ld-%d.dat", step, rank);
  int fd = open(name, O_RDONLY);
  if (fd < 0) {
    return 0;
  }
  app_header h;
  int ok = read_all(fd, &h, sizeof(h)) && app_header_ok(&h, step, rank, words) &&
           read_all(fd, state, words * sizeof(uint64_t));
  close(fd);
  return ok;
}

/* "state-<step>-<rank>.dat" with decimal numbers and nothing else: 1 and the step */
static int parse_name(const char* name, int rank, long* step)
{
  long s = 0;
  int r = 0, end = 0;
  if (sscanf(name, "state-%ld-%d.dat%n", &s, &r, &end) != 2 || name[end] != '\0' ||
      name[6] < '0' || name[6] > '9' || s < 1 || r != rank) {
    return 0;
  }
  *step = s;
  return 1;
}

/* the steps of this rank's files in chk/, in *steps (caller frees); returns the count */
static size_t list_own_steps(int rank, long** steps)
{
  size_t count = 0, cap = 16;
  *steps = malloc(cap * sizeof(long));
  if (*steps == NULL) {
    app_fail("malloc", "steps", ENOMEM);
  }
  DIR* d = opendir(CHK_DIR);
  if (d == NULL) {
    if (errno != ENOENT) {
      app_fail("opendir", CHK_DIR, errno);
    }
    return 0;
  }
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    long s;
    if (!parse_name(e->d_name, rank, &s)) {
      continue;
    }
    if (count == cap) {
      cap *= 2;
      long* more = realloc(*steps, cap * sizeof(long));
      if (more == NULL) {
        app_fail("realloc", "steps", ENOMEM);
      }
      *steps = more;
    }
    (*steps)[count++] = s;
  }
  closedir(d);
  return count;
}

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  app_opts o;
  if (!app_parse(argc, argv, rank, &o, 0)) {
    MPI_Finalize();
    return 2;
  }
  size_t words = app_words(&o);
  uint64_t* state = malloc(words * sizeof(uint64_t));
  if (state == NULL) {
    app_fail("malloc", "state", ENOMEM);
  }

  long* steps = NULL;
  size_t nsteps = list_own_steps(rank, &steps);
  long start = 0;
  long bound = o.steps;
  while (bound > 0) {
    long mine = 0;
    for (size_t i = 0; i < nsteps; i++) {
      if (steps[i] <= bound && steps[i] > mine) {
        mine = steps[i];
      }
    }
    long step = 0;
    MPI_Allreduce(&mine, &step, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (step == 0) {
      break;
    }
    int have = 0;
    for (size_t i = 0; i < nsteps; i++) {
      have |= steps[i] == step;
    }
    int ok = have && read_checkpoint(step, rank, state, words);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
      start = step;
      break;
    }
    bound = step - 1;
  }
  free(steps);
  if (start == 0) {
    app_init_state(state, words, rank);
  }
  app_say_start(start, rank);

  if (rank == 0 && mkdir(CHK_DIR, 0755) != 0 && errno != EEXIST) {
    app_fail("mkdir", CHK_DIR, errno);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  for (long t = start + 1; t <= o.steps; t++) {
    app_step(state, words, t);
    if (t % o.every == 0) {
      write_checkpoint(t, rank, state, words);
      app_say_checkpoint(t, rank);
    }
    app_maybe_die(&o, t, rank);
  }

  app_result(state, words, rank);
  free(state);
  MPI_Finalize();
  return 0;
}
