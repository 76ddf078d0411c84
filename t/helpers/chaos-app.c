/* chaos-app.c - an unmodified MPI program (no SCR) with the checkpoint idioms the
 * examples lack, for the chaos harness t/4300: it must resume right after any kill.
 *
 * usage: chaos-app --idiom NAME [--steps N] [--every K] [--bytes B] [--die-at STEP]
 * The state, the result line and the other options are those of
 * examples/preload/app_common.h, so the result equals the examples'. Idioms:
 *   ptr-inplace      ckpt/<step>/rank<rank>.dat (rank 0 makes the directory),
 *                    then rank 0 rewrites ckpt/LATEST in place (fopen "w")
 *   tmpdir-rename    tmp.<step>/rank<rank>.dat, then rank 0 renames tmp.<step>
 *                    to step.<step>; restart lists "." for step.* directories
 *   mkdir-tmp-rename rank 0 makes chk/ once; each rank writes chk/.tmp_<rank>
 *                    and renames it to chk/step_<step>_<rank>.bin
 *   h5-latest        d/<step>/r<rank>.h5, then rank 0 moves the pointer d/LATEST
 *                    by d/LATEST.tmp and rename; every rank reads d/LATEST and
 *                    trusts it: a file it names that cannot be read ends the job
 *   delete-old       ptr-inplace, and once the pointer moved rank 0 deletes the
 *                    checkpoint two back (each rank's file by name, then rmdir)
 * Every file is an app_header and the state; a rank that cannot read its file
 * of a step counts as not having it, as in the examples. */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "app_common.h"

enum idiom { PTR_INPLACE, TMPDIR_RENAME, MKDIR_TMP_RENAME, H5_LATEST, DELETE_OLD };
static const char* const idiom_names[] = { "ptr-inplace", "tmpdir-rename", "mkdir-tmp-rename", "h5-latest",
                                           "delete-old" };
#define IDIOMS ((int) (sizeof(idiom_names) / sizeof(idiom_names[0])))

static int rank = 0;
static app_opts opts;
static size_t words = 0;

static void write_state(const char* name, long step, const uint64_t* state)
{
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

/* why read_state failed last, for the messages of the idioms that trust a pointer */
static const char* read_error = "";

/* 1 when name holds this rank's state of step (read into state) */
static int read_state(const char* name, long step, uint64_t* state)
{
  FILE* f = fopen(name, "rb");
  if (f == NULL) {
    read_error = strerror(errno);
    return 0;
  }
  app_header h;
  int ok = fread(&h, sizeof(h), 1, f) == 1 && app_header_ok(&h, step, rank, words) &&
           fread(state, sizeof(uint64_t), words, f) == words;
  fclose(f);
  read_error = "short, or not this rank's file of that step";
  return ok;
}

static void make_dir(const char* name)
{
  if (mkdir(name, 0755) != 0 && errno != EEXIST) {
    app_fail("mkdir", name, errno);
  }
}

static int all_true(int mine)
{
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

/* the file of a rank for a step, by idiom (the final name) */
static void file_name(char* buf, size_t len, enum idiom idiom, long step, int r)
{
  switch (idiom) {
  case PTR_INPLACE:
  case DELETE_OLD:
    snprintf(buf, len, "ckpt/%ld/rank%d.dat", step, r);
    break;
  case TMPDIR_RENAME:
    snprintf(buf, len, "step.%ld/rank%d.dat", step, r);
    break;
  case MKDIR_TMP_RENAME:
    snprintf(buf, len, "chk/step_%ld_%d.bin", step, r);
    break;
  case H5_LATEST:
    snprintf(buf, len, "d/%ld/r%d.h5", step, r);
    break;
  }
}

/* ---- writing */

static void write_ptr_inplace(enum idiom idiom, long step, const uint64_t* state)
{
  char dir[64], name[128];
  snprintf(dir, sizeof(dir), "ckpt/%ld", step);
  if (rank == 0) {
    make_dir("ckpt");
    make_dir(dir);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  file_name(name, sizeof(name), idiom, step, rank);
  write_state(name, step, state);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    FILE* p = fopen("ckpt/LATEST", "w");
    if (p == NULL) {
      app_fail("fopen", "ckpt/LATEST", errno);
    }
    fprintf(p, "%ld\n", step);
    if (fclose(p) != 0) {
      app_fail("fclose", "ckpt/LATEST", errno);
    }
  }
  long old = step - 2 * opts.every;
  if (idiom == DELETE_OLD && rank == 0 && old > 0) {
    /* the pointer has moved on: the checkpoint two back is no longer needed */
    int ranks = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    for (int r = 0; r < ranks; r++) {
      file_name(name, sizeof(name), idiom, old, r);
      if (unlink(name) != 0 && errno != ENOENT) {
        app_fail("unlink", name, errno);
      }
    }
    snprintf(dir, sizeof(dir), "ckpt/%ld", old);
    if (rmdir(dir) != 0 && errno != ENOENT) {
      app_fail("rmdir", dir, errno);
    }
  }
}

static void write_tmpdir_rename(long step, const uint64_t* state)
{
  char tmp[64], final[64], name[128];
  snprintf(tmp, sizeof(tmp), "tmp.%ld", step);
  snprintf(final, sizeof(final), "step.%ld", step);
  if (rank == 0) {
    make_dir(tmp);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  snprintf(name, sizeof(name), "%s/rank%d.dat", tmp, rank);
  write_state(name, step, state);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && rename(tmp, final) != 0) {
    app_fail("rename to", final, errno);
  }
}

static void write_mkdir_tmp_rename(long step, const uint64_t* state)
{
  char tmp[64], name[128];
  snprintf(tmp, sizeof(tmp), "chk/.tmp_%d", rank);
  file_name(name, sizeof(name), MKDIR_TMP_RENAME, step, rank);
  write_state(tmp, step, state);
  if (rename(tmp, name) != 0) {
    app_fail("rename to", name, errno);
  }
}

static void write_h5_latest(long step, const uint64_t* state)
{
  char dir[64], name[128];
  snprintf(dir, sizeof(dir), "d/%ld", step);
  if (rank == 0) {
    make_dir("d");
    make_dir(dir);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  file_name(name, sizeof(name), H5_LATEST, step, rank);
  write_state(name, step, state);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    FILE* p = fopen("d/LATEST.tmp", "w");
    if (p == NULL) {
      app_fail("fopen", "d/LATEST.tmp", errno);
    }
    fprintf(p, "%ld\n", step);
    if (fclose(p) != 0) {
      app_fail("fclose", "d/LATEST.tmp", errno);
    }
    if (rename("d/LATEST.tmp", "d/LATEST") != 0) {
      app_fail("rename to", "d/LATEST", errno);
    }
  }
}

/* ---- restarting: each returns the step resumed from (state filled), 0 for none */

/* the newest step at most bound every rank can read, by probing names downwards */
static long probe_down(enum idiom idiom, long bound, uint64_t* state)
{
  char name[128];
  while (bound > 0) {
    long mine = 0;
    struct stat st;
    for (long s = bound; s >= 1 && mine == 0; s--) {
      file_name(name, sizeof(name), idiom, s, rank);
      if (stat(name, &st) == 0) {
        mine = s;
      }
    }
    long step = 0;
    MPI_Allreduce(&mine, &step, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (step == 0) {
      return 0;
    }
    file_name(name, sizeof(name), idiom, step, rank);
    if (all_true(read_state(name, step, state))) {
      return step;
    }
    bound = step - 1;
  }
  return 0;
}

/* a pointer file's step: >0, 0 when there is none, -1 when it holds no step
 * (a job killed while rewriting it in place leaves it empty) */
static long read_pointer(const char* path)
{
  FILE* p = fopen(path, "r");
  if (p == NULL) {
    if (errno != ENOENT) {
      app_fail("fopen", path, errno);
    }
    return 0;
  }
  long step = -1;
  if (fscanf(p, "%ld", &step) != 1 || step < 1 || step > opts.steps) {
    step = -1;
  }
  fclose(p);
  return step;
}

static long restart_ptr_inplace(enum idiom idiom, uint64_t* state)
{
  long step = rank == 0 ? read_pointer("ckpt/LATEST") : 0;
  MPI_Bcast(&step, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  if (step < 0) {
    /* killed between fopen "w" and fclose: the careful way out is what
     * the directories hold */
    if (rank == 0) {
      fprintf(stderr, "warning: ckpt/LATEST holds no step: looking for the newest checkpoint\n");
    }
    return probe_down(idiom, opts.steps, state);
  }
  if (step == 0) {
    return 0;
  }
  char name[128];
  file_name(name, sizeof(name), idiom, step, rank);
  int mine = read_state(name, step, state);
  if (!mine) {
    fprintf(stderr, "error: ckpt/LATEST names step %ld, but %s cannot be read: %s\n", step, name, read_error);
  }
  if (!all_true(mine)) {
    /* a pointer to a checkpoint that is not there cannot happen on a file
     * system: the pointer moves only once every rank's file is written */
    MPI_Finalize();
    exit(1);
  }
  return step;
}

static int by_step_desc(const void* a, const void* b)
{
  long x = *(const long*) a, y = *(const long*) b;
  return x < y ? 1 : x > y ? -1 : 0;
}

static long restart_tmpdir_rename(uint64_t* state)
{
  /* rank 0 lists; every rank checks it can read its file, newest first */
  long steps[1024];
  long count = 0;
  if (rank == 0) {
    DIR* d = opendir(".");
    if (d == NULL) {
      app_fail("opendir", ".", errno);
    }
    struct dirent* e;
    while ((e = readdir(d)) != NULL && count < 1024) {
      long s = 0;
      int end = 0;
      if (sscanf(e->d_name, "step.%ld%n", &s, &end) == 1 && e->d_name[end] == '\0' && s >= 1 &&
          s <= opts.steps) {
        steps[count++] = s;
      }
    }
    closedir(d);
    qsort(steps, (size_t) count, sizeof(long), by_step_desc);
  }
  MPI_Bcast(&count, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  MPI_Bcast(steps, (int) count, MPI_LONG, 0, MPI_COMM_WORLD);
  char name[128];
  for (long i = 0; i < count; i++) {
    file_name(name, sizeof(name), TMPDIR_RENAME, steps[i], rank);
    if (all_true(read_state(name, steps[i], state))) {
      return steps[i];
    }
  }
  return 0;
}

static long restart_h5_latest(uint64_t* state)
{
  /* every rank reads the pointer itself */
  long step = read_pointer("d/LATEST");
  long lo = 0, hi = 0;
  MPI_Allreduce(&step, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&step, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (lo != hi || lo < 0) {
    if (rank == 0) {
      fprintf(stderr, "error: d/LATEST reads %ld on some ranks and %ld on others (or holds no step): "
              "the job is stuck\n", lo, hi);
    }
    MPI_Finalize();
    exit(1);
  }
  if (step == 0) {
    return 0;
  }
  char name[128];
  file_name(name, sizeof(name), H5_LATEST, step, rank);
  int mine = read_state(name, step, state);
  if (!mine) {
    fprintf(stderr, "error: d/LATEST names step %ld, but %s cannot be read (%s): the job is stuck\n", step, name,
            read_error);
  }
  if (!all_true(mine)) {
    MPI_Finalize();
    exit(1);
  }
  return step;
}

/* --idiom NAME is taken out of argv, for app_parse */
static int take_idiom(int* argc, char** argv)
{
  int idiom = -1;
  for (int i = 1; i < *argc; i++) {
    if (strcmp(argv[i], "--idiom") != 0 || i + 1 >= *argc) {
      continue;
    }
    for (int k = 0; k < IDIOMS; k++) {
      if (strcmp(argv[i + 1], idiom_names[k]) == 0) {
        idiom = k;
      }
    }
    for (int j = i; j + 2 <= *argc; j++) {
      argv[j] = argv[j + 2];
    }
    *argc -= 2;
    break;
  }
  return idiom;
}

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int idiom = take_idiom(&argc, argv);
  if (idiom < 0 || !app_parse(argc, argv, rank, &opts, 0)) {
    if (rank == 0) {
      fprintf(stderr, "usage: %s --idiom ptr-inplace|tmpdir-rename|mkdir-tmp-rename|h5-latest|delete-old "
              "[--steps N] [--every K] [--bytes B] [--die-at STEP]\n", argv[0]);
    }
    MPI_Finalize();
    return 2;
  }
  words = app_words(&opts);
  uint64_t* state = malloc(words * sizeof(uint64_t));
  if (state == NULL) {
    app_fail("malloc", "state", ENOMEM);
  }

  long start = 0;
  switch ((enum idiom) idiom) {
  case PTR_INPLACE:
  case DELETE_OLD:
    start = restart_ptr_inplace((enum idiom) idiom, state);
    break;
  case TMPDIR_RENAME:
    start = restart_tmpdir_rename(state);
    break;
  case MKDIR_TMP_RENAME:
    start = probe_down(MKDIR_TMP_RENAME, opts.steps, state);
    break;
  case H5_LATEST:
    start = restart_h5_latest(state);
    break;
  }
  if (start == 0) {
    app_init_state(state, words, rank);
  }
  app_say_start(start, rank);
  if (idiom == MKDIR_TMP_RENAME) {
    if (rank == 0) {
      make_dir("chk");
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  for (long t = start + 1; t <= opts.steps; t++) {
    app_step(state, words, t);
    if (t % opts.every == 0) {
      switch ((enum idiom) idiom) {
      case PTR_INPLACE:
      case DELETE_OLD:
        write_ptr_inplace((enum idiom) idiom, t, state);
        break;
      case TMPDIR_RENAME:
        write_tmpdir_rename(t, state);
        break;
      case MKDIR_TMP_RENAME:
        write_mkdir_tmp_rename(t, state);
        break;
      case H5_LATEST:
        write_h5_latest(t, state);
        break;
      }
      app_say_checkpoint(t, rank);
    }
    app_maybe_die(&opts, t, rank);
  }

  app_result(state, words, rank);
  free(state);
  MPI_Finalize();
  return 0;
}
