/* threaded-ckpt.c - an MPI program whose threads write, read and delete its
 * checkpoint files at the same time, for the preload tests: the physics of
 * examples/preload/app_common.h (so its result is posix_fpp's for the same
 * options), each rank's state cut into THREADS x FILES parts.
 *
 * usage: threaded-ckpt [--threads T] [--files F] [app_common options, --keep K]
 *   At each checkpoint every thread makes ckpt.<step>/ (mkdir, EEXIST is
 *   fine) and writes its F files ckpt.<step>/rank<R>.t<T>.f<F>.dat: even
 *   threads with open, write in 4 KiB pieces and close, odd ones with fopen,
 *   fwrite and fclose; with --keep K each then unlinks its files of the
 *   checkpoint that falls out, and the main thread tries rmdir of its
 *   directory. The main thread joins them and calls MPI_Barrier. On start-up
 *   the main thread stats every file of the candidate steps from --steps
 *   down, the ranks agree on the newest one all have (MPI_Allreduce MIN), and
 *   the threads read their files back at once; a rank that cannot read its
 *   files makes all look below. MPI_THREAD_MULTIPLE is required: a thread's
 *   last close may complete the checkpoint, with MPI calls on that thread. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app_common.h"

#define MAX_THREADS 64
#define MAX_FILES 64

typedef struct {
  int threads, files, rank;
  uint64_t* state;
  size_t words;
} layout;

/* one thread's work on one checkpoint */
typedef struct {
  const layout* l;
  int thread;
  long step, drop; /* drop: the step whose files go, 0 none */
  int ok;          /* reading: all its files were read back whole */
} job;

/* file f of thread t holds words [first, first + count) of the rank's state */
static void part(const layout* l, int t, int f, size_t* first, size_t* count)
{
  size_t parts = (size_t) l->threads * (size_t) l->files, i = (size_t) t * (size_t) l->files + (size_t) f;
  *first = l->words * i / parts;
  *count = l->words * (i + 1) / parts - *first;
}

static void name_of(char* buf, size_t len, long step, int rank, int t, int f)
{
  snprintf(buf, len, "ckpt.%ld/rank%d.t%d.f%d.dat", step, rank, t, f);
}

static void write_fd(int fd, const void* buf, size_t len, const char* name)
{
  const char* p = buf;
  while (len > 0) {
    size_t piece = len < 4096 ? len : 4096;
    ssize_t n = write(fd, p, piece);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) app_fail("write", name, n < 0 ? errno : EIO);
    p += n;
    len -= (size_t) n;
  }
}

static void write_part(const job* j, int f)
{
  char name[256];
  size_t first, count;
  part(j->l, j->thread, f, &first, &count);
  name_of(name, sizeof(name), j->step, j->l->rank, j->thread, f);
  app_header h = app_make_header(j->step, j->l->rank, count);
  if (j->thread % 2 == 0) {
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) app_fail("open", name, errno);
    write_fd(fd, &h, sizeof(h), name);
    write_fd(fd, j->l->state + first, count * sizeof(uint64_t), name);
    if (close(fd) != 0) app_fail("close", name, errno);
  } else {
    FILE* fp = fopen(name, "w");
    if (!fp) app_fail("fopen", name, errno);
    if (fwrite(&h, sizeof(h), 1, fp) != 1 ||
        (count && fwrite(j->l->state + first, sizeof(uint64_t), count, fp) != count))
      app_fail("fwrite", name, errno);
    if (fclose(fp) != 0) app_fail("fclose", name, errno);
  }
}

static void* write_main(void* arg)
{
  const job* j = arg;
  char dir[64], name[256];
  snprintf(dir, sizeof(dir), "ckpt.%ld", j->step);
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) app_fail("mkdir", dir, errno);
  for (int f = 0; f < j->l->files; f++) write_part(j, f);
  for (int f = 0; j->drop > 0 && f < j->l->files; f++) {
    name_of(name, sizeof(name), j->drop, j->l->rank, j->thread, f);
    if (unlink(name) != 0 && errno != ENOENT) app_fail("unlink", name, errno);
  }
  return NULL;
}

static int read_part(const job* j, int f)
{
  char name[256];
  size_t first, count;
  part(j->l, j->thread, f, &first, &count);
  name_of(name, sizeof(name), j->step, j->l->rank, j->thread, f);
  int fd = open(name, O_RDONLY);
  if (fd < 0) return 0;
  app_header h;
  int ok = read(fd, &h, sizeof(h)) == (ssize_t) sizeof(h) && app_header_ok(&h, j->step, j->l->rank, count);
  char* p = (char*) (j->l->state + first);
  size_t left = count * sizeof(uint64_t);
  while (ok && left > 0) {
    ssize_t n = read(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) {
      p += n;
      left -= (size_t) n;
    }
  }
  char extra;
  ok = ok && read(fd, &extra, 1) == 0;
  close(fd);
  return ok;
}

static void* read_main(void* arg)
{
  job* j = arg;
  j->ok = 1;
  for (int f = 0; f < j->l->files; f++) j->ok = read_part(j, f) && j->ok;
  return NULL;
}

/* every thread runs fn on its job for the step; 1 when all report ok */
static int run_threads(const layout* l, void* (*fn)(void*), long step, long drop)
{
  pthread_t ids[MAX_THREADS];
  job jobs[MAX_THREADS];
  for (int t = 0; t < l->threads; t++) {
    jobs[t] = (job) { l, t, step, drop, 1 };
    int rc = pthread_create(&ids[t], NULL, fn, &jobs[t]);
    if (rc != 0) app_fail("pthread_create", "worker", rc);
  }
  int ok = 1;
  for (int t = 0; t < l->threads; t++) {
    pthread_join(ids[t], NULL);
    ok = ok && jobs[t].ok;
  }
  return ok;
}

/* this rank's newest step at or below bound (a multiple of every) whose
 * files all exist with their sizes, 0 for none */
static long newest_own(const layout* l, long bound, long every)
{
  for (long s = bound - bound % every; s >= every; s -= every) {
    int all = 1;
    for (int t = 0; all && t < l->threads; t++) {
      for (int f = 0; all && f < l->files; f++) {
        char name[256];
        size_t first, count;
        struct stat st;
        part(l, t, f, &first, &count);
        name_of(name, sizeof(name), s, l->rank, t, f);
        all = stat(name, &st) == 0 && S_ISREG(st.st_mode) &&
              (size_t) st.st_size == sizeof(app_header) + count * sizeof(uint64_t);
      }
    }
    if (all) return s;
  }
  return 0;
}

/* the step to resume from (its state in l->state), 0 for the start */
static long restart(const layout* l, long steps, long every)
{
  long bound = steps;
  for (;;) {
    long mine = newest_own(l, bound, every), step = 0;
    MPI_Allreduce(&mine, &step, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (step == 0) return 0;
    int ok = run_threads(l, read_main, step, 0), all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) return step;
    bound = step - 1;
  }
}

/* take --threads and --files out of argv; the rest is app_common's */
static int own_options(int* argc, char** argv, int* threads, int* files)
{
  int out = 1;
  for (int i = 1; i < *argc; i++) {
    int* dst = strcmp(argv[i], "--threads") == 0 ? threads : strcmp(argv[i], "--files") == 0 ? files : NULL;
    if (!dst) {
      argv[out++] = argv[i];
      continue;
    }
    if (i + 1 >= *argc) return 0;
    *dst = atoi(argv[++i]);
  }
  *argc = out;
  return *threads >= 1 && *threads <= MAX_THREADS && *files >= 1 && *files <= MAX_FILES;
}

int main(int argc, char** argv)
{
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  layout l = { 4, 1, rank, NULL, 0 };
  app_opts o;
  if (!own_options(&argc, argv, &l.threads, &l.files) || !app_parse(argc, argv, rank, &o, 1)) {
    if (rank == 0) fprintf(stderr, "also: [--threads 1-%d] [--files 1-%d]\n", MAX_THREADS, MAX_FILES);
    MPI_Finalize();
    return 2;
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) fprintf(stderr, "error: the MPI library gives thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
    MPI_Finalize();
    return 2;
  }
  l.words = app_words(&o);
  l.state = malloc(l.words * sizeof(uint64_t));
  if (!l.state) app_fail("malloc", "state", ENOMEM);
  app_init_state(l.state, l.words, rank);
  long start = restart(&l, o.steps, o.every);
  if (start == 0) app_init_state(l.state, l.words, rank);
  app_say_start(start, rank);
  for (long step = start + 1; step <= o.steps; step++) {
    app_step(l.state, l.words, step);
    if (step % o.every == 0) {
      long drop = o.keep > 0 ? step - o.keep * o.every : 0;
      run_threads(&l, write_main, step, drop > 0 ? drop : 0);
      if (drop > 0) {
        char dir[64];
        snprintf(dir, sizeof(dir), "ckpt.%ld", drop);
        rmdir(dir); /* another rank may have emptied and removed it first */
      }
      MPI_Barrier(MPI_COMM_WORLD);
      app_say_checkpoint(step, rank);
    }
    app_maybe_die(&o, step, rank);
  }
  app_result(l.state, l.words, rank);
  free(l.state);
  MPI_Finalize();
  return 0;
}
