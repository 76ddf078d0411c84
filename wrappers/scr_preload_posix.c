/* scr_preload_posix.c - the POSIX and stdio wrappers of libscr_preload.so. For
 * now they consult the rules (to prove the match path) and pass calls through. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_path.h"
#include "scr_preload_real.h"
#include "scr_preload_rules.h"
#include "scr_preload_state.h"

/* resolve every real function before main, while one thread runs; wrappers
 * still resolve lazily for calls made by constructors that run before ours */
__attribute__((constructor)) static void posix_constructor(void)
{
  scr_preload_real_resolve_all();
}

/* the rule that the file named by (dirfd, path) matches, or -1. Straight -1
 * when no rules are loaded or for the library's own calls; otherwise one
 * normalization into a stack buffer and a match, without malloc. Keeps errno
 * as the caller found it, so that a successful call leaves it untouched. */
static int posix_lookup(const char* call, int dirfd, const char* path, int is_open)
{
  const scr_preload_ruleset* rules = scr_preload_state_rules();
  if (__builtin_expect(rules == NULL, 1) || scr_preload_real_is_internal()) return -1;
  /* libc declares these paths nonnull, which would let the compiler drop the
   * check below; applications do pass NULL and must get EFAULT from libc */
  __asm__("" : "+r"(path));
  if (!path) return -1;
  if (path[0] != '/') {
    /* a relative path needs its directory looked up (a system call), so
     * first rule it out by its file name, unless that is "." or ".." */
    const char* name = strrchr(path, '/');
    name = name ? name + 1 : path;
    size_t length = strlen(name);
    int dots = length <= 2 && strspn(name, ".") == length;
    if (!dots && !scr_preload_rules_match_name(rules, name, length)) return -1;
  }
  char buffer[PATH_MAX];
  size_t length = scr_preload_path_resolve(dirfd, path, buffer, sizeof(buffer));
  if (length == 0) return -1;
  scr_preload_match match;
  int rule = scr_preload_rules_match(rules, buffer, length, &match);
  if (rule >= 0 && is_open) scr_preload_state_report(rules, call, buffer, &match);
  return rule;
}

/* open(2) and openat(2) take a mode only with O_CREAT or O_TMPFILE */
static int posix_needs_mode(int flags)
{
#ifdef __OPEN_NEEDS_MODE
  return __OPEN_NEEDS_MODE(flags);
#else
  return (flags & O_CREAT) != 0;
#endif
}

/* used only when the real function cannot be had: inside dlsym on this thread */
static int posix_openat_syscall(int dirfd, const char* path, int flags, mode_t mode)
{
  return (int) syscall(SYS_openat, dirfd, path, flags, mode);
}

static int posix_stat_syscall(const char* path, struct stat* buf, int flags)
{
#if defined(SYS_newfstatat)
  return (int) syscall(SYS_newfstatat, AT_FDCWD, path, buf, flags);
#else
  (void) path; (void) buf; (void) flags;
  errno = ENOSYS;
  return -1;
#endif
}

int open(const char* path, int flags, ...)
{
  mode_t mode = 0;
  if (posix_needs_mode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = (mode_t) va_arg(ap, int);
    va_end(ap);
  }
  posix_lookup("open", AT_FDCWD, path, 1);
  int (*real)(const char*, int, ...) = SCR_REAL(open);
  if (!real) return posix_openat_syscall(AT_FDCWD, path, flags, mode);
  return real(path, flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...)
{
  mode_t mode = 0;
  if (posix_needs_mode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = (mode_t) va_arg(ap, int);
    va_end(ap);
  }
  posix_lookup("openat", dirfd, path, 1);
  int (*real)(int, const char*, int, ...) = SCR_REAL(openat);
  if (!real) return posix_openat_syscall(dirfd, path, flags, mode);
  return real(dirfd, path, flags, mode);
}

FILE* fopen(const char* path, const char* mode)
{
  posix_lookup("fopen", AT_FDCWD, path, 1);
  FILE* (*real)(const char*, const char*) = SCR_REAL(fopen);
  if (!real) {
    errno = ENOSYS;
    return NULL;
  }
  return real(path, mode);
}

int stat(const char* path, struct stat* buf)
{
  posix_lookup("stat", AT_FDCWD, path, 0);
  int (*real)(const char*, struct stat*) = SCR_REAL(stat);
  if (!real) return posix_stat_syscall(path, buf, 0);
  return real(path, buf);
}
