/* preload-probe.c - drives libscr_preload.so through dry runs, CALLER= rules,
 * fatal signals, threads, fork and its hooks (it exports its own, routing to a cache). */
#include "config.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "scr_preload_hooks.h"
#include "scr_preload_report.h"

/* Usage: preload-probe MODE [ARGS]; runs in the current directory, whose
 * .scrconf holds the rules (loaded as MPI_Init will, through dlsym).
 *   dryrun            the scripted opens of t/4010 (some match, some not)
 *   caller N [both]   N opens of ckpt.I/rank_0.dat, from write_checkpoint_file
 *                     (with open) for even I and from write_other_file (with
 *                     fopen) for odd I; with "both", each I from both
 *   crash KIND        segv, abort, fpe, overflow, chain (an application
 *                     handler installed first), inert (no rules loaded)
 *   threads           8 threads opening, duping and closing; marks checked
 *   fork              marks and rules in a forked child
 *   signals           handlers installed with sigaction and the signal
 *                     family, as the program sees them afterwards; what
 *                     reaches the hooks from a handler, and after a
 *                     siglongjmp out of one
 *   route CACHE       the hooks below route writes into CACHE (a mirror of
 *                     the absolute paths) and show it back; prints what it sees
 * Every mode prints "hooks: open=N close=M" at the end: the calls the
 * library made to the hooks defined here. */

/* --- the hooks: counting, and in route mode a small engine */

static const char* route_cache = NULL;
static long hook_opens = 0, hook_closes = 0, hook_others = 0;
/* libc's own directory functions: the library's would come back to the hooks */
static struct dirent64* (*libc_readdir64)(DIR*);
static DIR* (*libc_opendir)(const char*);
static int (*libc_closedir)(DIR*);

static void count(long* counter)
{
  __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
}

/* the cache file of a path: CACHE + the absolute path */
static int cache_path(const char* path, char* out, size_t size)
{
  return route_cache && path && (size_t) snprintf(out, size, "%s%s", route_cache, path) < size;
}

static void make_parents(const char* path)
{
  char buffer[PATH_MAX];
  snprintf(buffer, sizeof(buffer), "%s", path);
  for (char* p = buffer + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    mkdir(buffer, 0755);
    *p = '/';
  }
}

int scr_preload_hook_open(const scr_preload_target* t, int flags, mode_t mode, char* redirect, void** file,
                          int* handled)
{
  count(&hook_opens);
  char cache[PATH_MAX];
  if (!cache_path(t->path, cache, sizeof(cache))) return -1;
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT)) {
    make_parents(cache);
    int fd = open(cache, flags, mode);
    if (fd >= 0) *file = strdup(cache);
    *handled = SCR_PRELOAD_HANDLED;
    return fd;
  }
  if (access(cache, F_OK) == 0) {
    strcpy(redirect, cache);
    *handled = SCR_PRELOAD_REDIRECT;
  }
  return -1;
}

int scr_preload_hook_close(int fd, void* file, int rc, int* handled)
{
  (void) fd;
  (void) handled;
  count(&hook_closes);
  free(file);
  return rc;
}

int scr_preload_hook_rename(const scr_preload_target* from, const scr_preload_target* to, unsigned int flags,
                            int* handled)
{
  (void) flags;
  count(&hook_others);
  char a[PATH_MAX], b[PATH_MAX];
  if (!cache_path(from->path, a, sizeof(a)) || !cache_path(to->path, b, sizeof(b)) || access(a, F_OK) != 0) return -1;
  make_parents(b);
  *handled = SCR_PRELOAD_HANDLED;
  return rename(a, b);
}

int scr_preload_hook_unlink(const scr_preload_target* t, int at_flags, int* handled)
{
  count(&hook_others);
  char cache[PATH_MAX];
  if (!cache_path(t->path, cache, sizeof(cache)) || access(cache, F_OK) != 0) return -1;
  *handled = SCR_PRELOAD_HANDLED;
  return (at_flags & AT_REMOVEDIR) ? rmdir(cache) : unlink(cache);
}

int scr_preload_hook_truncate(const scr_preload_target* t, off64_t length, int* handled)
{
  count(&hook_others);
  char cache[PATH_MAX];
  if (!cache_path(t->path, cache, sizeof(cache)) || access(cache, F_OK) != 0) return -1;
  *handled = SCR_PRELOAD_HANDLED;
  return truncate(cache, (off_t) length);
}

int scr_preload_hook_mkdir(const scr_preload_target* t, mode_t mode, int* handled)
{
  count(&hook_others);
  char cache[PATH_MAX];
  if (!cache_path(t->path, cache, sizeof(cache))) return -1;
  make_parents(cache);
  *handled = SCR_PRELOAD_HANDLED;
  if (mkdir(cache, mode) == 0) return 0;
  return -1;
}

/* stat and access show the cache's copy when there is one */
static int hook_show(const scr_preload_target* t, char* redirect, int* handled)
{
  count(&hook_others);
  char cache[PATH_MAX];
  if (cache_path(t->path, cache, sizeof(cache)) && access(cache, F_OK) == 0) {
    strcpy(redirect, cache);
    *handled = SCR_PRELOAD_REDIRECT;
  }
  return -1;
}

int scr_preload_hook_stat(const scr_preload_target* t, int at_flags, char* redirect, int* handled)
{
  (void) at_flags;
  return hook_show(t, redirect, handled);
}

int scr_preload_hook_access(const scr_preload_target* t, int amode, int at_flags, char* redirect, int* handled)
{
  (void) amode;
  (void) at_flags;
  return hook_show(t, redirect, handled);
}

/* a listing of a rule directory: the file system's entries, then the cache's */
typedef struct {
  DIR* cache;
} probe_dir;

DIR* scr_preload_hook_opendir(const scr_preload_target* t, char* redirect, void** dir, int* handled)
{
  count(&hook_others);
  char cache[PATH_MAX];
  struct stat st;
  if (!cache_path(t->path, cache, sizeof(cache)) || stat(cache, &st) != 0) return NULL;
  if (stat(t->path, &st) != 0) {
    strcpy(redirect, cache);
    *handled = SCR_PRELOAD_REDIRECT;
    return NULL;
  }
  probe_dir* d = calloc(1, sizeof(*d));
  d->cache = libc_opendir(cache);
  *dir = d;
  return NULL;
}

struct dirent64* scr_preload_hook_readdir(DIR* stream, void* dir, int* handled)
{
  probe_dir* d = dir;
  *handled = SCR_PRELOAD_HANDLED;
  struct dirent64* e = libc_readdir64(stream);
  while (!e && d->cache) {
    e = libc_readdir64(d->cache);
    if (!e) break;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) e = NULL;
  }
  return e;
}

int scr_preload_hook_closedir(DIR* stream, void* dir, int* handled)
{
  (void) stream;
  (void) handled;
  probe_dir* d = dir;
  if (d->cache) libc_closedir(d->cache);
  free(d);
  return 0;
}

/* --- access to the library's internals */

static int (*fd_lookup)(int, void*);
static int (*fd_count_marked)(void);
static int (*fd_count_files)(void);

static void load_rules(void)
{
  int (*load)(char*, size_t) = (int (*)(char*, size_t)) dlsym(RTLD_DEFAULT, "scr_preload_state_load");
  if (!load) {
    fprintf(stderr, "preload-probe: no preload library\n");
    exit(3);
  }
  char message[1024] = "";
  int rc = load(message, sizeof(message));
  if (rc != 0) {
    fprintf(stderr, "preload-probe: rules: %s\n", message);
    exit(3);
  }
}

static int marked(int fd)
{
  char record[64];
  return fd_lookup ? fd_lookup(fd, record) : 0;
}

/* a file made without the wrappers seeing it */
static void make_file(const char* path)
{
  int fd = (int) syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT, 0644);
  if (fd >= 0) close(fd);
}

/* --- dry run */

int __open_2(const char* path, int flags);

static void mode_dryrun(void)
{
  char cwd[PATH_MAX], path[PATH_MAX + 32];
  if (!getcwd(cwd, sizeof(cwd))) exit(2);
  mkdir("ckpt.1", 0755);
  mkdir("ckpt.2", 0755);
  mkdir("ckpt.3", 0755);
  mkdir("data", 0755);
  make_file("data/input.dat");
  make_file("ckpt.1/rank_4.dat");
  close(open("ckpt.1/rank_0.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644));
  close(open("ckpt.1/rank_0.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644));   /* the same file again */
  close(open64("ckpt.1/rank_1.dat", O_WRONLY | O_CREAT, 0644));
  int dirfd = open("ckpt.1", O_RDONLY | O_DIRECTORY);
  close(openat(dirfd, "rank_2.dat", O_RDWR | O_CREAT, 0600));
  close(dirfd);
  close(creat("ckpt.1/rank_3.dat", 0644));
  fclose(fopen("ckpt.1/meta.json", "w"));
  FILE* f = fopen64("ckpt.latest.tmp", "w");                               /* no rule */
  fclose(f);
  rename("ckpt.latest.tmp", "ckpt.latest");                                 /* not an open */
  fclose(fopen("ckpt.latest", "r"));
  f = fopen("data/input.dat", "r");                                         /* no rule */
  f = freopen("ckpt.2/rank_0.dat", "w", f);
  fclose(f);
  close(__open_2("ckpt.1/rank_4.dat", O_RDONLY));
  close(open("ckpt.1/../ckpt.1/rank_5.dat", O_WRONLY | O_CREAT, 0644));
  snprintf(path, sizeof(path), "%s/ckpt.3/rank_0.dat", cwd);
  close(open(path, O_WRONLY | O_CREAT, 0644));
  close(open("/etc/passwd", O_RDONLY));                                     /* no rule */
  struct stat st;
  stat("ckpt.1/rank_0.dat", &st);                                           /* not an open */
  close(open("ckpt.4/rank_6.dat", O_RDONLY));                               /* fails, but would match */
  /* never a rule's file: a name ending in '/' (or going on below it) is a
   * directory's, as the kernel resolves it */
  close(open("ckpt.3/rank_8.dat/", O_RDONLY));
  close(open("ckpt.3/rank_9.dat/x/..", O_RDONLY));
  printf("dry run done\n");
}

/* --- CALLER= */

__attribute__((noinline)) int write_checkpoint_file(int step)
{
  char path[64];
  snprintf(path, sizeof(path), "ckpt.%d/rank_0.dat", step);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  return fd >= 0 ? close(fd) : -1;
}

__attribute__((noinline)) int write_other_file(int step)
{
  char path[64];
  snprintf(path, sizeof(path), "ckpt.%d/rank_0.dat", step);
  FILE* f = fopen(path, "w");
  return f ? fclose(f) : -1;
}

/* alternate: the two functions take turns by step; both: each step's file
 * is opened by both, the unlisted one first and then in the other order */
static void mode_caller(int n, int both)
{
  for (int i = 0; i < n; i++) {
    char dir[32];
    snprintf(dir, sizeof(dir), "ckpt.%d", i);
    mkdir(dir, 0755);
    /* twice each: the second time the answer comes from the cache */
    for (int k = 0; k < 2; k++) {
      if (!both) {
        (i % 2 == 0 ? write_checkpoint_file : write_other_file)(i);
      } else if (i % 2 == 0) {
        write_other_file(i);
        write_checkpoint_file(i);
      } else {
        write_checkpoint_file(i);
        write_other_file(i);
      }
    }
  }
  printf("caller done\n");
}

/* --- fatal signals */

__attribute__((noinline)) void crash_here(void)
{
  volatile int* volatile nowhere = NULL;
  *nowhere = 42;
}

__attribute__((noinline)) int divide_here(int d)
{
  volatile int zero = d;
  return 7 / zero;
}

/* deeper than any stack: the limit only hides the recursion from the compiler */
static volatile int recurse_limit = 1 << 30;

__attribute__((noinline)) int recurse_here(int depth)
{
  volatile char frame[1024];
  frame[0] = (char) depth;
  if (depth > recurse_limit) return 0;
  return recurse_here(depth + 1) + frame[0];
}

static void application_handler(int sig)
{
  char line[64];
  int n = snprintf(line, sizeof(line), "application handler: signal %d\n", sig);
  if (write(STDERR_FILENO, line, (size_t) n) < 0) _exit(43);
  _exit(42);
}

static void mode_crash(const char* kind)
{
  if (strcmp(kind, "chain") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = application_handler;
    sigaction(SIGSEGV, &sa, NULL);
  }
  if (strcmp(kind, "inert") != 0) load_rules();
  fprintf(stderr, "preload-probe: crashing (%s)\n", kind);
  if (strcmp(kind, "abort") == 0) abort();
  if (strcmp(kind, "fpe") == 0) printf("%d\n", divide_here(0));
  if (strcmp(kind, "overflow") == 0) printf("%d\n", recurse_here(0));
  crash_here();
  printf("still alive\n");
}

/* --- threads */

static long thread_errors = 0;

static void expect(int condition, const char* what, int id, int i)
{
  if (condition) return;
  if (__atomic_add_fetch(&thread_errors, 1, __ATOMIC_RELAXED) <= 10)
    fprintf(stderr, "thread %d iteration %d: %s\n", id, i, what);
}

static void* thread_main(void* arg)
{
  int id = (int) (long) arg;
  char path[64], other[64];
  snprintf(path, sizeof(path), "threads.d/t%d.dat", id);
  snprintf(other, sizeof(other), "threads.d/t%d.txt", id);
  int placeholder = open("/dev/null", O_RDONLY);
  for (int i = 0; i < 1000; i++) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int plain = open(other, O_WRONLY | O_CREAT, 0644);
    expect(fd >= 0 && marked(fd), "a matching open is marked", id, i);
    expect(plain >= 0 && !marked(plain), "another open is not", id, i);
    int copy = dup(fd);
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 64);
    int plain_copy = dup(plain);
    expect(marked(copy) && marked(high), "dup and F_DUPFD copy the mark", id, i);
    expect(!marked(plain_copy), "a copy of a foreign descriptor is foreign", id, i);
    dup2(fd, placeholder);
    expect(marked(placeholder), "dup2 onto a descriptor marks it", id, i);
    close(fd);
    close(copy);
    expect(marked(high) && marked(placeholder), "the other copies stay marked", id, i);
    dup3(plain, placeholder, O_CLOEXEC);
    expect(!marked(placeholder), "dup3 of a foreign descriptor unmarks the target", id, i);
    close(plain);
    close(plain_copy);
    /* (a closed number may be another thread's by now: checked at the end) */
    close(high);
    FILE* f = fopen(path, "a");
    expect(f && marked(fileno(f)), "fopen marks its descriptor", id, i);
    if (f) fclose(f);
  }
  close(placeholder);
  return NULL;
}

static void mode_threads(void)
{
  load_rules();
  mkdir("threads.d", 0755);
  pthread_t threads[8];
  for (long i = 0; i < 8; i++) pthread_create(&threads[i], NULL, thread_main, (void*) i);
  for (int i = 0; i < 8; i++) pthread_join(threads[i], NULL);
  printf("threads: errors=%ld marked=%d files=%d\n", thread_errors, fd_count_marked(), fd_count_files());
}

/* --- fork */

static void mode_fork(void)
{
  load_rules();
  mkdir("threads.d", 0755);
  long opens = hook_opens, closes = hook_closes;
  int fd = open("threads.d/fork.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    const void* (*current)(void) = (const void* (*)(void)) dlsym(RTLD_DEFAULT, "scr_preload_state_current");
    int child_fd = open("threads.d/child.dat", O_WRONLY | O_CREAT, 0644);
    printf("child: marked=%d rules=%s matching open marked=%d\n", marked(fd), current() ? "loaded" : "none",
           marked(child_fd));
    close(child_fd);
    close(fd);
    printf("child: hooks open=%ld close=%ld\n", hook_opens - opens - 1, hook_closes - closes);
    fflush(stdout);
    _exit(0);
  }
  int status;
  waitpid(child, &status, 0);
  printf("parent: marked=%d\n", marked(fd));
  /* a vfork child shares this memory: what it opens and closes must not
   * reach the hooks or the parent's marks */
  long before_opens = hook_opens, before_closes = hook_closes;
  child = vfork();
  if (child == 0) {
    int child_fd = open("threads.d/vfork.dat", O_WRONLY | O_CREAT, 0644);
    close(child_fd);
    close(fd);
    _exit(0);
  }
  waitpid(child, &status, 0);
  printf("after vfork: marked=%d hooks open=%ld close=%ld\n", marked(fd), hook_opens - before_opens,
         hook_closes - before_closes);
  close(fd);
  printf("parent: hooks open=%ld close=%ld\n", hook_opens - opens, hook_closes - closes);
}

/* --- signal handlers: the program's own, whose calls go to libc */

static volatile sig_atomic_t signal_seen, signal_code, signal_value, signal_context;
static long signal_handler_opens;
static sigjmp_buf signal_jump;

/* gone from POSIX, still in glibc (not declared under _GNU_SOURCE) */
sighandler_t bsd_signal(int sig, sighandler_t handler);

static void on_plain(int sig) { signal_seen = sig; }

static void on_info(int sig, siginfo_t* info, void* context)
{
  signal_seen = sig;
  signal_code = info->si_code;
  signal_value = info->si_value.sival_int;
  signal_context = context != NULL;
}

/* a handler that writes a checkpoint file, as codes do on SIGTERM */
static void on_write(int sig)
{
  long before = hook_opens;
  int fd = open("signals.d/handler.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) close(fd);
  signal_handler_opens = hook_opens - before;
  signal_seen = sig;
}

static void on_jump(int sig)
{
  signal_seen = sig;
  siglongjmp(signal_jump, 1);
}

/* raise or queue the signal and wait for its handler: ThreadSanitizer runs
 * a handler at the next call it intercepts, not at once */
static void signal_send(int sig, int queued)
{
  signal_seen = 0;
  union sigval value = { .sival_int = 42 };
  if (queued) sigqueue(getpid(), sig, value);
  else raise(sig);
  for (int i = 0; i < 2000 && !signal_seen; i++) {
    struct timespec pause = { 0, 1000 * 1000 };
    nanosleep(&pause, NULL);
  }
}

static const char* handler_name(sighandler_t h)
{
  return h == SIG_DFL ? "SIG_DFL" : h == SIG_IGN ? "SIG_IGN" : h == on_plain ? "on_plain" : h == SIG_ERR ? "SIG_ERR"
                                                                                                         : "other";
}

/* the hook calls one open and close of a matching file makes */
static long signal_program_opens(void)
{
  long before = hook_opens;
  int fd = open("signals.d/program.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) close(fd);
  return hook_opens - before;
}

static void mode_signals(void)
{
  load_rules();
  mkdir("signals.d", 0755);
  struct sigaction act, old;
  memset(&act, 0, sizeof(act));
  act.sa_handler = on_plain;
  act.sa_flags = SA_RESTART;
  sigemptyset(&act.sa_mask);
  sigaddset(&act.sa_mask, SIGUSR2);
  sigaction(SIGUSR1, &act, NULL);
  sigaction(SIGUSR1, NULL, &old);
  printf("sigaction: %s restart=%d siginfo=%d mask=%d\n", handler_name(old.sa_handler),
         (old.sa_flags & SA_RESTART) != 0, (old.sa_flags & SA_SIGINFO) != 0, sigismember(&old.sa_mask, SIGUSR2));
  signal_send(SIGUSR1, 0);
  printf("plain handler: signal=%d\n", (int) signal_seen);

  act.sa_sigaction = on_info;
  act.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR1, &act, &old);
  printf("replaced: %s siginfo=%d\n", handler_name(old.sa_handler), (old.sa_flags & SA_SIGINFO) != 0);
  sigaction(SIGUSR1, NULL, &old);
  signal_send(SIGUSR1, 1);
  printf("siginfo handler: %s signal=%d queued=%d value=%d context=%d\n",
         old.sa_sigaction == on_info && (old.sa_flags & SA_SIGINFO) ? "mine" : "other", (int) signal_seen,
         signal_code == SI_QUEUE, (int) signal_value, (int) signal_context);

  sighandler_t first = signal(SIGUSR2, on_plain), second = signal(SIGUSR2, SIG_IGN), third = signal(SIGUSR2, SIG_DFL);
  printf("signal: %s %s %s\n", handler_name(first), handler_name(second), handler_name(third));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  sighandler_t held = sigset(SIGUSR2, on_plain), back = sigset(SIGUSR2, SIG_DFL);
#pragma GCC diagnostic pop
  printf("sigset: %s %s\n", handler_name(held), handler_name(back));
  /* System V's signal is one-shot: the kernel resets it as it delivers */
  sysv_signal(SIGUSR2, on_plain);
  signal_send(SIGUSR2, 0);
  sigaction(SIGUSR2, NULL, &old);
  printf("sysv_signal: signal=%d then %s\n", (int) signal_seen, handler_name(old.sa_handler));

  bsd_signal(SIGUSR1, on_write);
  long program = signal_program_opens();
  signal_send(SIGUSR1, 0);
  struct stat st;
  printf("routing: program=%ld handler=%ld on the file system=%d\n", program, signal_handler_opens,
         stat("signals.d/handler.dat", &st) == 0);

  signal(SIGUSR1, on_jump);
  if (sigsetjmp(signal_jump, 1) == 0) signal_send(SIGUSR1, 0);
  printf("after siglongjmp: program=%ld\n", signal_program_opens());
}

/* --- route */

static void show_stat(const char* label, const char* path)
{
  struct stat st;
  errno = 0;
  int rc = stat(path, &st);
  if (rc == 0) printf("%s: size=%lld %s\n", label, (long long) st.st_size, S_ISDIR(st.st_mode) ? "dir" : "file");
  else printf("%s: errno=%s\n", label, strerrorname_np(errno));
}

static int by_text(const void* a, const void* b)
{
  return strcmp((const char*) a, (const char*) b);
}

static int by_name(const struct dirent** a, const struct dirent** b)
{
  return strcmp((*a)->d_name, (*b)->d_name);
}

static void mode_route(const char* cache)
{
  route_cache = cache;
  load_rules();
  void (*directories)(int) = (void (*)(int)) dlsym(RTLD_DEFAULT, "scr_preload_hooks_virtual_directories");
  directories(1);
  /* the rule directory exists on disk, with a file of its own; the dataset
   * directory below it will not */
  syscall(SYS_mkdirat, AT_FDCWD, "route.d", 0755);
  make_file("route.d/notes.txt");
  printf("mkdir dataset: %d\n", mkdir("route.d/ckpt.1", 0700));
  printf("dataset directory on disk: %s\n", syscall(SYS_faccessat, AT_FDCWD, "route.d/ckpt.1", F_OK) == 0 ? "yes" : "no");
  show_stat("stat virtual dataset directory", "route.d/ckpt.1");

  int fd = open("route.d/ckpt.1/rank_0.dat", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  printf("open for writing: marked=%d write=%zd\n", marked(fd), write(fd, "hello", 5));
  int copy = dup(fd);
  close(fd);
  printf("after the first close: hooks close=%ld\n", hook_closes);
  close(copy);
  printf("after the last close: hooks close=%ld\n", hook_closes);

  FILE* f = fopen("route.d/ckpt.1/rank_1.dat", "w");
  fputs("stdio text\n", f);
  fclose(f);
  f = fopen("/dev/null", "w");
  f = freopen("route.d/ckpt.1/rank_2.dat", "wx", f);
  fputs("reopened\n", f);
  printf("freopen: marked=%d\n", marked(fileno(f)));
  fclose(f);

  show_stat("stat routed file", "route.d/ckpt.1/rank_0.dat");
  printf("routed file at its own path on disk: %s\n",
         syscall(SYS_faccessat, AT_FDCWD, "route.d/ckpt.1/rank_0.dat", F_OK) == 0 ? "yes" : "no");
  printf("access routed file: %d\n", access("route.d/ckpt.1/rank_1.dat", R_OK));
  char text[32] = "";
  fd = open("route.d/ckpt.1/rank_0.dat", O_RDONLY);
  ssize_t n = read(fd, text, sizeof(text) - 1);
  printf("read back: %.*s\n", (int) (n > 0 ? n : 0), text);
  close(fd);

  printf("rename routed: %d\n", rename("route.d/ckpt.1/rank_1.dat", "route.d/ckpt.1/rank_9.dat"));
  show_stat("stat old name", "route.d/ckpt.1/rank_1.dat");
  show_stat("stat new name", "route.d/ckpt.1/rank_9.dat");
  printf("truncate routed: %d\n", truncate("route.d/ckpt.1/rank_9.dat", 3));
  show_stat("stat truncated", "route.d/ckpt.1/rank_9.dat");

  /* the listing merges the disk's entries and the cache's (sorted here) */
  DIR* d = opendir("route.d");
  char names[16][sizeof(((struct dirent*) 0)->d_name)];
  int count = 0;
  for (struct dirent* e; d && count < 16 && (e = readdir(d));)
    if (e->d_name[0] != '.') snprintf(names[count++], sizeof(names[0]), "%s", e->d_name);
  if (d) closedir(d);
  qsort(names, (size_t) count, sizeof(names[0]), by_text);
  printf("readdir of route.d:");
  for (int i = 0; i < count; i++) printf(" %s", names[i]);
  printf("\n");
  static const char* const scanned[] = { "route.d", "route.d/ckpt.1" };
  for (int k = 0; k < 2; k++) {
    struct dirent** list;
    n = scandir(scanned[k], &list, NULL, by_name);
    printf("scandir of %s:", scanned[k]);
    for (ssize_t i = 0; i < n; i++) {
      if (list[i]->d_name[0] != '.') printf(" %s", list[i]->d_name);
      free(list[i]);
    }
    if (n >= 0) free(list);
    printf("\n");
  }
  printf("unlink routed: %d\n", unlink("route.d/ckpt.1/rank_9.dat"));
  show_stat("stat unlinked", "route.d/ckpt.1/rank_9.dat");

  void (*summary)(const scr_preload_summary*) =
      (void (*)(const scr_preload_summary*)) dlsym(RTLD_DEFAULT, "scr_preload_report_summary");
  scr_preload_summary engine = { 1, 3 * 1024 * 1024, 0.5, 0.25, -1 };
  fflush(stdout);
  summary(&engine);
}

int main(int argc, char** argv)
{
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  libc_readdir64 = (struct dirent64* (*)(DIR*)) dlsym(libc, "readdir64");
  libc_opendir = (DIR* (*)(const char*)) dlsym(libc, "opendir");
  libc_closedir = (int (*)(DIR*)) dlsym(libc, "closedir");
  fd_lookup = (int (*)(int, void*)) dlsym(RTLD_DEFAULT, "scr_preload_fd_lookup");
  fd_count_marked = (int (*)(void)) dlsym(RTLD_DEFAULT, "scr_preload_fd_count_marked");
  fd_count_files = (int (*)(void)) dlsym(RTLD_DEFAULT, "scr_preload_fd_count_files");
  if (argc < 2) {
    fprintf(stderr, "usage: preload-probe dryrun|caller N|crash KIND|threads|fork|signals|route CACHE\n");
    return 2;
  }
  const char* mode = argv[1];
  if (strcmp(mode, "dryrun") == 0) {
    load_rules();
    mode_dryrun();
  } else if (strcmp(mode, "caller") == 0 && argc > 2) {
    load_rules();
    mode_caller(atoi(argv[2]), argc > 3 && strcmp(argv[3], "both") == 0);
  } else if (strcmp(mode, "crash") == 0 && argc > 2) {
    mode_crash(argv[2]);
  } else if (strcmp(mode, "threads") == 0) {
    mode_threads();
  } else if (strcmp(mode, "fork") == 0) {
    mode_fork();
  } else if (strcmp(mode, "signals") == 0) {
    mode_signals();
  } else if (strcmp(mode, "route") == 0 && argc > 2) {
    mode_route(argv[2]);
  } else {
    fprintf(stderr, "preload-probe: unknown mode %s\n", mode);
    return 2;
  }
  printf("hooks: open=%ld close=%ld\n", hook_opens, hook_closes);
  return 0;
}
