/* stdio_latest.c - an MPI application in C that checkpoints with stdio and
 * the write-temporary-then-rename idiom: each rank fopen()s ckpt.tmp.<rank>,
 * fwrite()s its state, fclose()s it and rename()s it to ckpt.<step>.<rank>.
 * Once every rank is done (MPI_Barrier), rank 0 records the step in the
 * pointer file ckpt.latest, again through a temporary (ckpt.latest.tmp) and
 * rename, so the pointer never names a checkpoint that is not complete. On
 * start-up rank 0 reads ckpt.latest with fopen/fscanf and broadcasts the step;
 * a checkpoint the pointer names that a rank cannot read ends the job (exit 1).
 * With --keep K, once the pointer has moved on, each rank unlink()s its file
 * of the checkpoint K checkpoints back. It knows nothing about checkpoint
 * libraries. */
#include <errno.h>
#include <unistd.h>

#include "app_common.h"

static void ckpt_name(char* buf, size_t len, long step, int rank)
{
  snprintf(buf, len, "ckpt.%ld.%d", step, rank);
}

static void write_checkpoint(long step, int rank, const uint64_t* state, size_t words)
{
  char tmp[64], name[64];
  snprintf(tmp, sizeof(tmp), "ckpt.tmp.%d", rank);
  ckpt_name(name, sizeof(name), step, rank);
  FILE* f = fopen(tmp, "wb");
  if (f == NULL) {
    app_fail("fopen", tmp, errno);
  }
  app_header h = app_make_header(step, rank, words);
  if (fwrite(&h, sizeof(h), 1, f) != 1 || fwrite(state, sizeof(uint64_t), words, f) != words) {
    app_fail("fwrite", tmp, errno);
  }
  if (fclose(f) != 0) {
    app_fail("fclose", tmp, errno);
  }
  if (rename(tmp, name) != 0) {
    app_fail("rename to", name, errno);
  }

  /* the pointer moves once every rank's file is in place */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    FILE* p = fopen("ckpt.latest.tmp", "w");
    if (p == NULL) {
      app_fail("fopen", "ckpt.latest.tmp", errno);
    }
    fprintf(p, "%ld\n", step);
    if (fclose(p) != 0) {
      app_fail("fclose", "ckpt.latest.tmp", errno);
    }
    if (rename("ckpt.latest.tmp", "ckpt.latest") != 0) {
      app_fail("rename to", "ckpt.latest", errno);
    }
  }
}

/* only a checkpoint the pointer has left behind is deleted: the barrier makes
 * sure rank 0 has moved it on */
static void delete_old(long step, long every, long keep, int rank)
{
  long old = step - keep * every;
  if (keep > 0 && old > 0) {
    char name[64];
    MPI_Barrier(MPI_COMM_WORLD);
    ckpt_name(name, sizeof(name), old, rank);
    if (unlink(name) != 0 && errno != ENOENT) {
      app_fail("unlink", name, errno);
    }
  }
}

/* this rank's file of the checkpoint into state; on failure says why and returns 0 */
static int read_checkpoint(long step, int rank, uint64_t* state, size_t words)
{
  char name[64];
  ckpt_name(name, sizeof(name), step, rank);
  FILE* f = fopen(name, "rb");
  if (f == NULL) {
    fprintf(stderr, "error: ckpt.latest names a checkpoint that cannot be opened: %s: %s\n", name,
            strerror(errno));
    return 0;
  }
  app_header h;
  int ok = fread(&h, sizeof(h), 1, f) == 1 && app_header_ok(&h, step, rank, words) &&
           fread(state, sizeof(uint64_t), words, f) == words;
  fclose(f);
  if (!ok) {
    fprintf(stderr, "error: ckpt.latest names a checkpoint that cannot be read: %s\n", name);
  }
  return ok;
}

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  app_opts o;
  if (!app_parse(argc, argv, rank, &o, 1)) {
    MPI_Finalize();
    return 2;
  }
  size_t words = app_words(&o);
  uint64_t* state = malloc(words * sizeof(uint64_t));
  if (state == NULL) {
    app_fail("malloc", "state", ENOMEM);
  }

  /* rank 0 reads the pointer; -1: it is there but makes no sense */
  long start = 0;
  if (rank == 0) {
    FILE* p = fopen("ckpt.latest", "r");
    if (p != NULL) {
      if (fscanf(p, "%ld", &start) != 1 || start < 1 || start > o.steps) {
        fprintf(stderr, "error: ckpt.latest does not hold a step from 1 to %ld\n", o.steps);
        start = -1;
      }
      fclose(p);
    } else if (errno != ENOENT) {
      app_fail("fopen", "ckpt.latest", errno);
    }
  }
  MPI_Bcast(&start, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  int ok = start >= 0;
  if (start > 0) {
    /* the pointer is trusted: a checkpoint it names that a rank cannot read ends the job */
    int mine = read_checkpoint(start, rank, state, words);
    MPI_Allreduce(&mine, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  } else {
    app_init_state(state, words, rank);
  }
  if (!ok) {
    fflush(stderr);
    free(state);
    MPI_Finalize();
    return 1;
  }
  app_say_start(start, rank);

  for (long t = start + 1; t <= o.steps; t++) {
    app_step(state, words, t);
    if (t % o.every == 0) {
      write_checkpoint(t, rank, state, words);
      app_say_checkpoint(t, rank);
      delete_old(t, o.every, o.keep, rank);
    }
    app_maybe_die(&o, t, rank);
  }

  app_result(state, words, rank);
  free(state);
  MPI_Finalize();
  return 0;
}
