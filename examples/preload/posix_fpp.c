/* posix_fpp.c - an MPI application in C that checkpoints file-per-process
 * with POSIX calls: every rank makes sure data/ exists (mkdir, EEXIST is
 * fine), then open(O_CREAT|O_TRUNC), write, fsync and close of
 * data/step<step>_rank<rank>.chk. On start-up each rank stat()s its candidate
 * names from --steps downwards and takes the newest one of the right size; the
 * ranks agree on the smallest of those (MPI_Allreduce MIN) and, should a rank
 * fail to read it, look below it. It knows nothing about checkpoint libraries. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "app_common.h"

static void ckpt_name(char* buf, size_t len, long step, int rank)
{
  snprintf(buf, len, "data/step%ld_rank%d.chk", step, rank);
}

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
  if (mkdir("data", 0755) != 0 && errno != EEXIST) {
    app_fail("mkdir", "data", errno);
  }
  ckpt_name(name, sizeof(name), step, rank);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    app_fail("open", name, errno);
  }
  app_header h = app_make_header(step, rank, words);
  write_all(fd, &h, sizeof(h), name);
  write_all(fd, state, words * sizeof(uint64_t), name);
  if (fsync(fd) != 0) {
    app_fail("fsync", name, errno);
  }
  if (close(fd) != 0) {
    app_fail("close", name, errno);
  }
}

static int read_checkpoint(long step, int rank, uint64_t* state, size_t words)
{
  char name[256];
  ckpt_name(name, sizeof(name), step, rank);
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

/* this rank's newest checkpoint at or below the bound whose size is right, 0 for none */
static long newest_own(long bound, int rank, size_t words)
{
  char name[256];
  for (long s = bound; s >= 1; s--) {
    struct stat st;
    ckpt_name(name, sizeof(name), s, rank);
    if (stat(name, &st) == 0 && S_ISREG(st.st_mode) &&
        (size_t) st.st_size == sizeof(app_header) + words * sizeof(uint64_t)) {
      return s;
    }
  }
  return 0;
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

  long start = 0;
  long bound = o.steps;
  while (bound > 0) {
    long mine = newest_own(bound, rank, words);
    long step = 0;
    MPI_Allreduce(&mine, &step, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (step == 0) {
      break;
    }
    int ok = read_checkpoint(step, rank, state, words);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
      start = step;
      break;
    }
    bound = step - 1;
  }
  if (start == 0) {
    app_init_state(state, words, rank);
  }
  app_say_start(start, rank);

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
