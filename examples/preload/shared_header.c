/* shared_header.c - an MPI application in C whose checkpoint is a directory
 * run/step_<step>/ holding one part_<rank>.bin per rank and a header.txt that
 * rank 0 writes for everyone (step, ranks, words); a barrier ends each
 * checkpoint. On start-up every rank reads the header of each step from
 * --steps downwards (fopen, fscanf), and the newest step whose header and
 * parts every rank can read is resumed. It knows nothing about checkpoint
 * libraries. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "app_common.h"

static void step_path(char* buf, size_t len, long step, const char* file)
{
  snprintf(buf, len, "run/step_%ld/%s", step, file);
}

static void write_part(long step, int rank, const uint64_t* state, size_t words)
{
  char name[256], part[64];
  snprintf(part, sizeof(part), "part_%d.bin", rank);
  step_path(name, sizeof(name), step, part);
  FILE* f = fopen(name, "wb");
  if (f == NULL) {
    app_fail("fopen", name, errno);
  }
  app_header h = app_make_header(step, rank, words);
  if (fwrite(&h, sizeof(h), 1, f) != 1 || fwrite(state, sizeof(uint64_t), words, f) != words) {
    app_fail("fwrite", name, errno);
  }
  if (fclose(f) != 0) {
    app_fail("fclose", name, errno);
  }
}

static void write_checkpoint(long step, int rank, int ranks, const uint64_t* state, size_t words)
{
  char dir[256], name[256];
  snprintf(dir, sizeof(dir), "run/step_%ld", step);
  if (rank == 0) {
    if (mkdir("run", 0755) != 0 && errno != EEXIST) {
      app_fail("mkdir", "run", errno);
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
      app_fail("mkdir", dir, errno);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  write_part(step, rank, state, words);
  if (rank == 0) {
    step_path(name, sizeof(name), step, "header.txt");
    FILE* f = fopen(name, "w");
    if (f == NULL) {
      app_fail("fopen", name, errno);
    }
    fprintf(f, "step %ld\nranks %d\nwords %zu\n", step, ranks, words);
    if (fclose(f) != 0) {
      app_fail("fclose", name, errno);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* 1 when the step's header, read by this rank, describes this run */
static int header_ok(long step, int ranks, size_t words)
{
  char name[256];
  step_path(name, sizeof(name), step, "header.txt");
  FILE* f = fopen(name, "r");
  if (f == NULL) {
    return 0;
  }
  long s = 0;
  int n = 0;
  size_t w = 0;
  int ok = fscanf(f, "step %ld ranks %d words %zu", &s, &n, &w) == 3 && s == step && n == ranks && w == words;
  fclose(f);
  return ok;
}

static int read_part(long step, int rank, uint64_t* state, size_t words)
{
  char name[256], part[64];
  snprintf(part, sizeof(part), "part_%d.bin", rank);
  step_path(name, sizeof(name), step, part);
  FILE* f = fopen(name, "rb");
  if (f == NULL) {
    return 0;
  }
  app_header h;
  int ok = fread(&h, sizeof(h), 1, f) == 1 && app_header_ok(&h, step, rank, words) &&
           fread(state, sizeof(uint64_t), words, f) == words;
  fclose(f);
  return ok;
}

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
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
  for (long s = o.steps; s >= 1 && start == 0; s--) {
    int mine = header_ok(s, ranks, words) && read_part(s, rank, state, words);
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
      start = s;
    }
  }
  if (start == 0) {
    app_init_state(state, words, rank);
  }
  app_say_start(start, rank);

  for (long t = start + 1; t <= o.steps; t++) {
    app_step(state, words, t);
    if (t % o.every == 0) {
      write_checkpoint(t, rank, ranks, state, words);
      app_say_checkpoint(t, rank);
    }
    app_maybe_die(&o, t, rank);
  }

  app_result(state, words, rank);
  free(state);
  MPI_Finalize();
  return 0;
}
