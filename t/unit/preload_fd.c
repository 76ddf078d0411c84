/* preload_fd.c - unit tests of the preload layer's descriptor table: records
 * count their descriptors, dup'd copies share them, the last close is reported once. */
#include "config.h"
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "scr_preload_fd.h"
#include "tap.h"

static scr_preload_fd_file file_of(int rule, void* cookie)
{
  scr_preload_fd_file f = { SCR_PRELOAD_FD_FILE, rule, 1, cookie };
  return f;
}

static void test_records(void)
{
  ok(scr_preload_fd_mark(5) == 0, "nothing is marked before the first track");
  is_int(scr_preload_fd_init(), 0, "the table is made");
  struct rlimit limit;
  getrlimit(RLIMIT_NOFILE, &limit);
  ok(scr_preload_hot.fd_capacity >= 1024 && (rlim_t) scr_preload_hot.fd_capacity >= limit.rlim_cur,
     "it covers RLIMIT_NOFILE (%d descriptors)", scr_preload_hot.fd_capacity);

  int cookie = 0;
  scr_preload_fd_file f = file_of(3, &cookie), last;
  is_int(scr_preload_fd_track(10, &f), 0, "track a descriptor");
  ok(scr_preload_fd_mark(10) != 0, "it is marked");
  ok(scr_preload_fd_mark(11) == 0, "its neighbour is not");
  is_int(scr_preload_fd_count_files(), 1, "one file");

  is_int(scr_preload_fd_share(10, 11, &last), 0, "dup: a second descriptor");
  is_int(scr_preload_fd_mark(11), scr_preload_fd_mark(10), "the copy carries the same record");
  is_int(scr_preload_fd_share(10, 12, &last), 0, "dup: a third");
  is_int(scr_preload_fd_count_marked(), 3, "three marked descriptors");
  is_int(scr_preload_fd_count_files(), 1, "still one file");

  is_int(scr_preload_fd_release(10, &last), 0, "close of the first: not the last");
  is_int(scr_preload_fd_release(10, &last), 0, "a second close of it: not ours any more");
  is_int(scr_preload_fd_release(11, &last), 0, "close of the second: not the last");
  is_int(scr_preload_fd_release(12, &last), 1, "close of the third: the last");
  ok(last.cookie == &cookie && last.rule == 3 && last.kind == SCR_PRELOAD_FD_FILE && last.hooked == 1,
     "the last close hands back the record");
  is_int(scr_preload_fd_count_files(), 0, "no file left");
  is_int(scr_preload_fd_count_marked(), 0, "no mark left");

  /* dup2 onto a descriptor of another tracked file closes that one */
  int other = 0;
  scr_preload_fd_file g = file_of(1, &other);
  scr_preload_fd_track(20, &f);
  scr_preload_fd_track(21, &g);
  is_int(scr_preload_fd_share(20, 21, &last), 1, "dup2 onto the only descriptor of another file closes it");
  ok(last.cookie == &other, "... and reports that file");
  is_int(scr_preload_fd_share(20, 21, &last), 0, "dup2 onto a descriptor of the same file changes nothing");
  is_int(scr_preload_fd_share(20, 20, &last), 0, "dup2 onto itself changes nothing");
  is_int(scr_preload_fd_count_files(), 1, "one file, two descriptors");
  is_int(scr_preload_fd_share(30, 21, &last), 0, "dup2 of a foreign descriptor onto ours: not the last yet");
  ok(scr_preload_fd_mark(21) == 0, "... and the target is foreign now");
  is_int(scr_preload_fd_release(20, &last), 1, "the file's last descriptor");

  /* a descriptor closed behind the wrappers' back and opened again */
  int fd = -1;
  scr_preload_fd_track(40, &f);
  scr_preload_fd_track(40, &g);
  is_int(scr_preload_fd_count_files(), 1, "a stale mark is dropped when its number is tracked again");
  ok(scr_preload_fd_any_deferred(), "... and its file waits to be told closed");
  ok(scr_preload_fd_next_deferred(&fd, &last) && fd == 40 && last.cookie == &cookie, "... the old file, at 40");
  ok(!scr_preload_fd_any_deferred() && !scr_preload_fd_next_deferred(&fd, &last), "... once");
  is_int(scr_preload_fd_release(40, &last), 1, "the new record is the one left");
  ok(last.cookie == &other, "... the new file's");

  is_int(scr_preload_fd_track(scr_preload_hot.fd_capacity, &f), -1, "a descriptor beyond the table is not tracked");
  is_int(scr_preload_fd_track(-1, &f), -1, "nor a negative one");
  ok(scr_preload_fd_mark(-1) == 0 && scr_preload_fd_mark(scr_preload_hot.fd_capacity) == 0, "out-of-range marks read 0");
}

/* close_range and closefrom: every tracked descriptor in the range ends, the
 * files whose last one it was come back in the order of the numbers */
static void test_ranges(void)
{
  int a = 0, b = 0, c = 0, fd = -1;
  scr_preload_fd_file fa = file_of(1, &a), fb = file_of(2, &b), fc = file_of(3, &c), last;
  scr_preload_fd_track(60, &fa);
  scr_preload_fd_share(60, 70, &last);   /* a: 60 and 70 */
  scr_preload_fd_track(62, &fb);         /* b: 62 only */
  scr_preload_fd_track(65, &fc);
  scr_preload_fd_share(65, 80, &last);   /* c: 65, and 80 outside the range */
  scr_preload_fd_list ended = { 0, 0 };
  scr_preload_fd_release_range(60, 75, &ended);
  ok(!scr_preload_fd_mark(60) && !scr_preload_fd_mark(62) && !scr_preload_fd_mark(65) && !scr_preload_fd_mark(70),
     "close_range 60..75 unmarks every descriptor in it");
  ok(scr_preload_fd_mark(80) != 0, "... and none beyond");
  ok(scr_preload_fd_next(&ended, &fd, &last) && fd == 62 && last.cookie == &b, "b ended, at 62");
  ok(scr_preload_fd_next(&ended, &fd, &last) && fd == 70 && last.cookie == &a, "then a, at 70, its last");
  ok(!scr_preload_fd_next(&ended, &fd, &last), "c did not: its descriptor 80 is open");
  is_int(scr_preload_fd_count_files(), 1, "one file left");

  scr_preload_fd_release_range(81, 90, &ended);
  ok(!ended.head && scr_preload_fd_mark(80) != 0, "a range of no tracked descriptor changes nothing");
  scr_preload_fd_release_range(0, ~0U, &ended);
  ok(scr_preload_fd_next(&ended, &fd, &last) && fd == 80 && last.cookie == &c, "closefrom(0): c at 80");
  ok(!scr_preload_fd_next(&ended, &fd, &last), "... alone");
  is_int(scr_preload_fd_count_files(), 0, "no file left");
  is_int(scr_preload_fd_count_marked(), 0, "no mark left");

  /* a last close that could not be told now */
  scr_preload_fd_defer(61, &fb);
  ok(scr_preload_fd_next_deferred(&fd, &last) && fd == 61 && last.cookie == &b, "a deferred file comes back once");
  scr_preload_fd_file dir = { SCR_PRELOAD_FD_DIR, 0, 1, &a };
  scr_preload_fd_defer(62, &dir);
  ok(!scr_preload_fd_any_deferred(), "only files are deferred (a listing's end tells nothing)");
}

/* records are reused: many files opened and closed leave none behind */
static void* thread_churn(void* arg)
{
  int base = (int) (long) arg;
  long errors = 0;
  scr_preload_fd_file f = file_of(0, NULL), last;
  for (int i = 0; i < 20000; i++) {
    errors += scr_preload_fd_track(base, &f) != 0;
    errors += scr_preload_fd_share(base, base + 1, &last) != 0;
    errors += scr_preload_fd_release(base, &last) != 0;
    errors += scr_preload_fd_release(base + 1, &last) != 1;
  }
  return (void*) errors;
}

static void test_threads(void)
{
  pthread_t threads[8];
  long errors = 0;
  for (long i = 0; i < 8; i++) pthread_create(&threads[i], NULL, thread_churn, (void*) (100 + 2 * i));
  for (int i = 0; i < 8; i++) {
    void* result;
    pthread_join(threads[i], &result);
    errors += (long) result;
  }
  is_int(errors, 0, "8 threads tracking, sharing and releasing: every answer as expected");
  is_int(scr_preload_fd_count_files(), 0, "no record left behind");
}

static void test_fork(void)
{
  scr_preload_fd_file f = file_of(0, NULL), last;
  scr_preload_fd_track(50, &f);
  scr_preload_fd_defer(51, &f);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    /* what pthread_atfork runs in the child */
    scr_preload_fd_atfork_child();
    _exit(scr_preload_fd_mark(50) == 0 && scr_preload_fd_count_files() == 0 && !scr_preload_fd_any_deferred() ? 0
                                                                                                              : 1);
  }
  int status = -1;
  waitpid(child, &status, 0);
  ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a forked child starts without marks");
  ok(scr_preload_fd_mark(50) != 0, "the parent keeps its own");
  is_int(scr_preload_fd_release(50, &last), 1, "and closes it as before");
  int fd = -1;
  ok(scr_preload_fd_next_deferred(&fd, &last) && fd == 51, "a deferred file stays the parent's");
}

int main(void)
{
  test_records();
  test_ranges();
  test_threads();
  test_fork();
  return tap_done();
}
