/* preload_real.c - unit tests of the real-function table: every libc entry
 * resolves to libc's own symbol, the guard nests per thread, dlsym cannot recurse. */
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr_preload_path.h"
#include "scr_preload_real.h"
#include "tap.h"

/* --- an allocator that, like some do during their first call, opens a file:
 * while armed, each malloc asks the table for unlink, which exists in libc
 * but is not resolved yet; inside dlsym the table must refuse. A sanitizer
 * owns malloc (ThreadSanitizer's runtime allocates through it while it
 * starts, before instrumented code may run). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define REAL_SANITIZER_MALLOC 1
#endif
#if !REAL_SANITIZER_MALLOC
extern void* __libc_malloc(size_t size);
static int allocator_armed = 0;
static int allocator_calls = 0;
static int allocator_resolved = 0;
void* malloc(size_t size)
{
  if (allocator_armed) {
    allocator_armed = 0;
    allocator_calls++;
    allocator_resolved += scr_preload_real_resolve(SCR_PRELOAD_REAL_INDEX_unlink);
    allocator_armed = 1;
  }
  return __libc_malloc(size);
}
#endif

static void* thread_guard(void* arg)
{
  (void) arg;
  return (void*) (long) scr_preload_real_is_internal();
}

static void* thread_own(void* arg)
{
  (void) arg;
  scr_preload_real_own_thread();
  return (void*) (long) scr_preload_real_is_internal();
}

static void test_table(void)
{
  is_int(SCR_PRELOAD_REAL_COUNT, 132, "the table declares every wrapped function");
  is_str(scr_preload_real_name(SCR_PRELOAD_REAL_INDEX_open), "open", "name column");
  is_str(scr_preload_real_symbol(SCR_PRELOAD_REAL_INDEX_MPI_Init), "PMPI_Init", "MPI entries use the profiling name");
  is_str(scr_preload_real_version(SCR_PRELOAD_REAL_INDEX_stat), "GLIBC_2.33", "stat asks for the 2.33 symbol");
  ok(scr_preload_real_name(-1) == NULL && scr_preload_real_name(SCR_PRELOAD_REAL_COUNT) == NULL, "out-of-range index");
  is_int(scr_preload_real_resolve(SCR_PRELOAD_REAL_COUNT), 0, "resolving an out-of-range index fails");

  scr_preload_real_resolve_all();
  int missing = 0;
  for (int i = 0; i < SCR_PRELOAD_REAL_COUNT; i++) {
    const char* symbol = scr_preload_real_symbol(i);
    void* slot = scr_preload_real_address(i);
    if (strncmp(symbol, "PMPI_", 5) == 0) continue;
    /* the test does not define these, so the first definition is libc's */
    void* expected = dlsym(RTLD_DEFAULT, symbol);
    if (!slot || slot != expected) {
      missing++;
      printf("# %s: resolved %p, libc has %p\n", symbol, slot, expected);
    }
  }
  is_int(missing, 0, "every libc entry resolves to libc's symbol");
  ok(SCR_REAL(MPI_Init) == NULL, "PMPI_Init is absent outside an MPI program");

  /* the resolved pointers work and keep errno as libc sets it */
  int fd = SCR_REAL(open)("/", O_RDONLY | O_DIRECTORY);
  ok(fd >= 0, "SCR_REAL(open) opens");
  is_int(SCR_REAL(close)(fd), 0, "SCR_REAL(close) closes");
  errno = 0;
  struct stat st;
  is_int(SCR_REAL(stat)("/nonexistent/x", &st), -1, "SCR_REAL(stat) of a missing file fails");
  is_int(errno, ENOENT, "... with ENOENT");
  errno = 1234;
  ok(SCR_REAL(fopen)("/nonexistent/y", "r") == NULL && errno == ENOENT, "SCR_REAL(fopen) sets errno");
  errno = 1234;
  scr_preload_real_resolve(SCR_PRELOAD_REAL_INDEX_MPI_Barrier);
  is_int(errno, 1234, "a failed lookup keeps errno");
  ok(dlerror() == NULL, "a failed lookup leaves no dlerror message behind");
}

static void test_guard(void)
{
  is_int(scr_preload_real_is_internal(), 0, "outside the guard");
  scr_preload_real_enter();
  scr_preload_real_enter();
  is_int(scr_preload_real_is_internal(), 1, "inside the guard");
  scr_preload_real_leave();
  is_int(scr_preload_real_is_internal(), 1, "the guard nests");
  pthread_t thread;
  void* other = (void*) 1;
  pthread_create(&thread, NULL, thread_guard, NULL);
  pthread_join(thread, &other);
  is_int((long) other, 0, "another thread is not inside this thread's guard");
  pthread_create(&thread, NULL, thread_own, NULL);
  pthread_join(thread, &other);
  is_int((long) other, 1, "a thread the library starts is inside its own");
  scr_preload_real_leave();
  is_int(scr_preload_real_is_internal(), 0, "left the guard");
}

static void test_reentry(void)
{
#if !REAL_SANITIZER_MALLOC
  /* a lookup that fails makes glibc allocate its error message */
  scr_preload_real.unlink = NULL;
  allocator_armed = 1;
  int found = scr_preload_real_resolve(SCR_PRELOAD_REAL_INDEX_MPI_Finalize);
  allocator_armed = 0;
  is_int(found, 0, "PMPI_Finalize is absent");
  if (allocator_calls == 0) {
    printf("ok %d - # SKIP dlsym did not allocate here\n", ++tap_count);
  } else {
    is_int(allocator_resolved, 0, "a lookup from inside dlsym returns at once, without recursing");
  }
  ok(scr_preload_real.unlink == NULL, "the refused entry stays unresolved");
  ok(SCR_REAL(unlink) == dlsym(RTLD_DEFAULT, "unlink"), "and resolves on its next use outside dlsym");
  is_int(scr_preload_real_is_internal(), 0, "the guard is left after a lookup");
#else
  printf("ok %d - # SKIP the sanitizer owns malloc\n", ++tap_count);
#endif
}

/* symbolic links into directories the file system lacks (the view's) */
static void test_follow(void)
{
  char top[] = "/tmp/preload_follow.XXXXXX", out[4200], expect[4200], link[4200];
  if (!mkdtemp(top)) {
    ok(0, "follow: mkdtemp");
    return;
  }
  char top_real[4096];
  if (!realpath(top, top_real)) snprintf(top_real, sizeof(top_real), "%s", top);
  /* top/real/ exists; top/latest -> ckpt.5 (missing), top/abs -> /top/real,
   * top/real/up -> ../ckpt.5, top/loop -> loop, top/final -> real */
  snprintf(link, sizeof(link), "%s/real", top);
  mkdir(link, 0755);
  snprintf(link, sizeof(link), "%s/latest", top);
  symlink("ckpt.5", link);
  snprintf(link, sizeof(link), "%s/abs", top);
  snprintf(expect, sizeof(expect), "%s/real", top_real);
  symlink(expect, link);
  snprintf(link, sizeof(link), "%s/real/up", top);
  symlink("../ckpt.5", link);
  snprintf(link, sizeof(link), "%s/loop", top);
  symlink("loop", link);
  snprintf(link, sizeof(link), "%s/final", top);
  symlink("real", link);

  char path[4200];
  snprintf(path, sizeof(path), "%s/latest/rank_0.dat", top);
  snprintf(expect, sizeof(expect), "%s/ckpt.5/rank_0.dat", top_real);
  errno = 77;
  is_int((int) scr_preload_path_follow(AT_FDCWD, path, 1, NULL, out, sizeof(out)), (int) strlen(expect),
         "follow: a link to a missing directory: length");
  is_str(out, expect, "follow: a link to a missing directory: the rest taken as it stands");
  is_int(errno, 77, "follow: keeps errno");
  snprintf(path, sizeof(path), "%s/abs/up/x/../y", top);
  scr_preload_path_follow(AT_FDCWD, path, 1, NULL, out, sizeof(out));
  snprintf(expect, sizeof(expect), "%s/ckpt.5/y", top_real);
  is_str(out, expect, "follow: an absolute link, then a relative one with '..', then lexical '..'");
  int dirfd = open(top, O_RDONLY | O_DIRECTORY);
  scr_preload_path_follow(dirfd, "real/../latest", 1, NULL, out, sizeof(out));
  snprintf(expect, sizeof(expect), "%s/ckpt.5", top_real);
  is_str(out, expect, "follow: relative to a descriptor, the last component followed");
  is_int((int) scr_preload_path_follow(dirfd, "latest", 0, NULL, out, sizeof(out)), 0,
         "follow: the last component not followed (lstat): no link, 0");
  is_int((int) scr_preload_path_follow(dirfd, "latest/", 0, NULL, out, sizeof(out)), (int) strlen(expect) + 1,
         "follow: a trailing '/' follows the last component all the same");
  is_int(out[strlen(expect)], '/', "follow: and stays at the end, for the call made again");
  snprintf(path, sizeof(path), "%s/latest/x", top);
  snprintf(link, sizeof(link), "%s/latest/", top);
  is_int((int) scr_preload_path_follow(AT_FDCWD, path, 1, link, out, sizeof(out)), 0,
         "follow: directories on the way to the trusted one are taken as they stand");
  is_int((int) scr_preload_path_follow(dirfd, "real/x", 1, NULL, out, sizeof(out)), 0, "follow: no link on the way: 0");
  is_int((int) scr_preload_path_follow(dirfd, "loop/x", 1, NULL, out, sizeof(out)), 0, "follow: a loop of links: 0");
  scr_preload_path_follow(dirfd, "final", 1, NULL, out, sizeof(out));
  snprintf(expect, sizeof(expect), "%s/real", top_real);
  is_str(out, expect, "follow: a link to a directory that exists");
  close(dirfd);
  const char* names[] = { "real/up", "real", "latest", "abs", "loop", "final" };
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    snprintf(link, sizeof(link), "%s/%s", top, names[i]);
    if (unlink(link) != 0) rmdir(link);
  }
  rmdir(top);
}

static void test_paths(void)
{
  char out[64];
  is_int(scr_preload_path_normalize(NULL, "/a//b/./c/../d/", out, sizeof(out)), 6, "normalize: length");
  is_str(out, "/a/b/d", "normalize: '//', '.', '..' and a trailing '/'");
  scr_preload_path_normalize("/base/dir", "../x/./y", out, sizeof(out));
  is_str(out, "/base/x/y", "normalize: relative to a base");
  scr_preload_path_normalize(NULL, "/a/.b/..c/.../x.", out, sizeof(out));
  is_str(out, "/a/.b/..c/.../x.", "normalize: names made of or starting with dots are names");
  scr_preload_path_normalize(NULL, "/a/b/..", out, sizeof(out));
  is_str(out, "/a", "normalize: a final '..'");
  scr_preload_path_normalize(NULL, "/../..", out, sizeof(out));
  is_str(out, "/", "normalize: never above the root");
  is_int(scr_preload_path_normalize(NULL, "/abc", out, 4), 0, "normalize: 0 when it does not fit");
  is_int(scr_preload_path_normalize(NULL, "", out, sizeof(out)), 0, "normalize: the empty path gives 0");
  is_int(scr_preload_path_normalize(NULL, NULL, out, sizeof(out)), 0, "normalize: NULL gives 0");
  is_int(scr_preload_path_normalize(NULL, "relative", out, sizeof(out)), 0, "normalize: relative without base gives 0");

  char cwd[4096], expect[4200], buffer[4200];
  if (!getcwd(cwd, sizeof(cwd))) cwd[0] = '\0';
  snprintf(expect, sizeof(expect), "%s/x", strcmp(cwd, "/") ? cwd : "");
  errno = 77;
  scr_preload_path_resolve(AT_FDCWD, "./x", buffer, sizeof(buffer));
  is_str(buffer, expect, "resolve: relative to the current directory");
  is_int(errno, 77, "resolve: keeps errno");
  int dirfd = open("/usr", O_RDONLY | O_DIRECTORY);
  scr_preload_path_resolve(dirfd, "lib/../bin", buffer, sizeof(buffer));
  is_str(buffer, "/usr/bin", "resolve: relative to a directory descriptor");
  close(dirfd);
  is_int(scr_preload_path_resolve(9999, "x", buffer, sizeof(buffer)), 0, "resolve: a bad descriptor gives 0");
  scr_preload_path_resolve(9999, "/abs//y", buffer, sizeof(buffer));
  is_str(buffer, "/abs/y", "resolve: an absolute path ignores the descriptor");
  test_follow();
}

/* what scr_preload_path_scan must find, the slow way */
static size_t scan_reference(const char* path, size_t* name, int* odd)
{
  size_t length = strlen(path);
  const char* slash = strrchr(path, '/');
  *name = slash ? (size_t) (slash - path) + 1 : 0;
  *odd = strstr(path, "//") || strstr(path, "/.") || (length > 1 && path[length - 1] == '/');
  return length;
}

static void test_scan(void)
{
  static const char* const paths[] = {
    "", "/", "a", "/etc/passwd", "relative/dir/file.dat", "/p/run/ckpt.12/rank_3.dat", "//x", "/a//b", "/a/./b",
    "/a/../b", "/a/.hidden", "/a/b/", "name.", "a/b.c/d", "/very/long/path/with/many/components/to/cross/words/x",
    "./x", "../x", "x/.", "/.", "/..", "ab/", "/tmp/pw/data/input.dat", "12345678", "1234567/", "/234567/9",
    "/p/run/dumps/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/chk_1.2/",
    "/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so.40.30.0.and/./more",
  };
  /* every path at every place in a cache line and across into the next,
   * with junk around it that looks special ('/' and '.') */
  static char buffer[320] __attribute__((aligned(64)));
  int wrong = 0;
  for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
    for (size_t shift = 0; shift < 72; shift++) {
      for (size_t i = 0; i < sizeof(buffer); i++) buffer[i] = (i & 1) ? '.' : '/';
      char* at = buffer + 8 + shift;
      size_t n = strlen(paths[p]);
      memcpy(at, paths[p], n + 1);
      size_t name = 99, want_name;
      int odd = -1, want_odd;
      size_t length = scr_preload_path_scan(at, &name, &odd);
      size_t want = scan_reference(at, &want_name, &want_odd);
      if (length != want || name != want_name || odd != want_odd) {
        wrong++;
        printf("# '%s' at +%zu: length %zu/%zu name %zu/%zu odd %d/%d\n", paths[p], shift, length, want, name,
               want_name, odd, want_odd);
      }
    }
  }
  is_int(wrong, 0, "scan: length, last component and oddness of every path at every place in a line");
}

int main(void)
{
  test_table();
  test_guard();
  test_reentry();
  test_paths();
  test_scan();
  return tap_done();
}
