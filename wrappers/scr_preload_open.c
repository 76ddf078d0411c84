/* scr_preload_open.c - the opening wrappers: open, openat, creat and their 64-bit
 * and _FORTIFY_SOURCE forms, fopen and freopen. Matching opens go to the engine. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_report.h"
#include "scr_preload_wrap.h"

/* which open-like function a call came through, so that the real call
 * after a lookup is the same function with the same arguments */
enum open_kind {
  OPEN, OPEN64, OPENAT, OPENAT64, CREAT, CREAT64, OPEN_2, OPEN64_2, OPENAT_2, OPENAT64_2
};

static const char* const open_names[] = {
  "open", "open64", "openat", "openat64", "creat", "creat64", "__open_2", "__open64_2", "__openat_2", "__openat64_2"
};

/* the real function of kind; the system call when it cannot be had (a
 * wrapper reached from inside dlsym on this thread) */
static int open_real(int kind, int dirfd, const char* path, int flags, mode_t mode)
{
  switch (kind) {
  case OPEN: { int (*real)(const char*, int, ...) = SCR_REAL(open); if (real) return real(path, flags, mode); break; }
  case OPEN64: { int (*real)(const char*, int, ...) = SCR_REAL(open64); if (real) return real(path, flags, mode); break; }
  case OPENAT: { int (*real)(int, const char*, int, ...) = SCR_REAL(openat); if (real) return real(dirfd, path, flags, mode); break; }
  case OPENAT64: { int (*real)(int, const char*, int, ...) = SCR_REAL(openat64); if (real) return real(dirfd, path, flags, mode); break; }
  case CREAT: { int (*real)(const char*, mode_t) = SCR_REAL(creat); if (real) return real(path, mode); break; }
  case CREAT64: { int (*real)(const char*, mode_t) = SCR_REAL(creat64); if (real) return real(path, mode); break; }
  case OPEN_2: { int (*real)(const char*, int) = SCR_REAL(__open_2); if (real) return real(path, flags); break; }
  case OPEN64_2: { int (*real)(const char*, int) = SCR_REAL(__open64_2); if (real) return real(path, flags); break; }
  case OPENAT_2: { int (*real)(int, const char*, int) = SCR_REAL(__openat_2); if (real) return real(dirfd, path, flags); break; }
  case OPENAT64_2: { int (*real)(int, const char*, int) = SCR_REAL(__openat64_2); if (real) return real(dirfd, path, flags); break; }
  }
  if (kind == OPEN64 || kind == OPENAT64 || kind == CREAT64 || kind == OPEN64_2 || kind == OPENAT64_2) flags |= O_LARGEFILE;
  return (int) syscall(SYS_openat, dirfd, path, flags, mode);
}

static int open_routed(int kind, int dirfd, const char* path, int flags, mode_t mode);

/* a matching open: the engine decides. flags are those of the open as the
 * engine sees them (creat's O_CREAT|O_WRONLY|O_TRUNC included) */
static SCR_PRELOAD_COLD int open_matched(int kind, const scr_preload_lookup* l, int dirfd, const char* path,
                                         int flags, mode_t mode)
{
  if (scr_preload_state_dryrun()) {
    scr_preload_report_open(&l->t, SCR_PRELOAD_DECISION_DRYRUN);
    int fd = open_real(kind, dirfd, path, flags, mode);
    if (fd >= 0) scr_preload_wrap_track(fd, SCR_PRELOAD_FD_FILE, &l->t, 0, NULL);
    return fd;
  }
  int saved_errno = errno, handled = SCR_PRELOAD_PASS, fd;
  void* file = NULL;
  char redirect[PATH_MAX];
  redirect[0] = '\0';
  SCR_PRELOAD_HOOK_CALL(fd, scr_preload_hook_open(&l->t, flags, scr_preload_needs_mode(flags) ? mode : 0, redirect,
                                                  &file, &handled));
  int decision = SCR_PRELOAD_DECISION_ROUTED;
  if (handled == SCR_PRELOAD_HANDLED) {
    SCR_PRELOAD_ERRNO_KEEP(saved_errno, fd < 0);
  } else {
    errno = saved_errno;
    file = NULL;
    decision = handled == SCR_PRELOAD_REDIRECT ? SCR_PRELOAD_DECISION_REDIRECTED : SCR_PRELOAD_DECISION_PASSED;
    fd = handled == SCR_PRELOAD_REDIRECT ? open_real(kind, AT_FDCWD, redirect, flags, mode)
                                         : open_real(kind, dirfd, path, flags, mode);
    /* a symbolic link at the rule's name that leads into the view */
    char followed[PATH_MAX];
    if (fd < 0 && handled == SCR_PRELOAD_PASS && errno == ENOENT &&
        scr_preload_wrap_follow(l->t.rules, dirfd, path, !(flags & O_NOFOLLOW), followed)) {
      errno = saved_errno;
      SCR_PRELOAD_FOLLOWED(fd, open_routed(kind, AT_FDCWD, followed, flags, mode));
      return fd;
    }
    /* below a file the view shows: the kernel's lookup stops there */
    if (fd < 0 && handled == SCR_PRELOAD_PASS && errno == ENOENT &&
        scr_preload_wrap_below_file(l->t.rules, open_names[kind], dirfd, path, 0))
      errno = ENOTDIR;
  }
  if (fd >= 0) scr_preload_wrap_track(fd, SCR_PRELOAD_FD_FILE, &l->t, 1, file);
  scr_preload_report_open(&l->t, decision);
  return fd;
}

/* the real open failed with ENOENT or ENOTDIR: a rule directory that the
 * file system does not have may be virtual, and a program may open it as a
 * descriptor (to list it, or to work relative to it); the engine then
 * answers with a real directory that mirrors it */
static SCR_PRELOAD_COLD int open_missing(const scr_preload_ruleset* rules, int kind, int dirfd, const char* path,
                                         int flags, mode_t mode, int saved_errno)
{
  int failure = errno;
  /* a file made in a virtual directory: the directory is made on the file
   * system, and the open tried again */
  if (failure == ENOENT && (flags & O_CREAT) && scr_preload_wrap_materialize_parent(open_names[kind], dirfd, path)) {
    errno = saved_errno;
    return open_real(kind, dirfd, path, flags, mode);
  }
  scr_preload_lookup l;
  if (!scr_preload_lookup_virtual_directory(&l, rules, open_names[kind], dirfd, path)) {
    /* a symbolic link on the way into the view: the open again, there */
    char followed[PATH_MAX];
    if (!scr_preload_wrap_follow(rules, dirfd, path, !(flags & O_NOFOLLOW), followed)) return -1;
    errno = saved_errno;
    int fd;
    SCR_PRELOAD_FOLLOWED(fd, open_routed(kind, AT_FDCWD, followed, flags, mode));
    return fd;
  }
  char redirect[PATH_MAX];
  void* file = NULL;
  int handled = SCR_PRELOAD_PASS, answer;
  SCR_PRELOAD_HOOK_CALL(answer, scr_preload_hook_open(&l.t, flags, mode, redirect, &file, &handled));
  (void) answer; /* only a redirect means anything here */
  if (handled != SCR_PRELOAD_REDIRECT) {
    errno = failure;
    return -1;
  }
  errno = saved_errno;
  int fd = open_real(kind, AT_FDCWD, redirect, flags, mode);
  /* calls relative to it are to act on the original path (scr_preload_wrap.h) */
  if (fd >= 0) scr_preload_wrap_track(fd, SCR_PRELOAD_FD_MIRROR, &l.t, 0, NULL);
  return fd;
}

/* the real open, and the virtual directories' turn when it finds nothing */
static int open_passed(const scr_preload_ruleset* rules, int kind, int dirfd, const char* path, int flags,
                       mode_t mode)
{
  int saved_errno = errno;
  int fd = open_real(kind, dirfd, path, flags, mode);
  if (__builtin_expect(!scr_preload_wrap_missing(fd), 1)) return fd;
  return open_missing(rules, kind, dirfd, path, flags, mode, saved_errno);
}

static int open_routed(int kind, int dirfd, const char* path, int flags, mode_t mode)
{
  const scr_preload_ruleset* rules = scr_preload_wrap_rules();
  if (!rules) return open_real(kind, dirfd, path, flags, mode);
  scr_preload_lookup l;
  int what = SCR_PRELOAD_LOOKUP_FILE | SCR_PRELOAD_LOOKUP_CALLER;
  if (__builtin_expect(!scr_preload_lookup_path(&l, rules, open_names[kind], dirfd, path, what), 1))
    return open_passed(rules, kind, dirfd, path, flags, mode);
  return open_matched(kind, &l, dirfd, path, flags, mode);
}

/* a relative path from a descriptor the table marks: from a virtual
 * directory's mirror it names the original path, which the open then takes,
 * as if the application had named it in full (SCR_PRELOAD_WRAP_MIRRORED) */
static SCR_PRELOAD_COLD int open_mirrored(int kind, int dirfd, const char* path, int flags, mode_t mode)
{
  char original[PATH_MAX];
  if (scr_preload_wrap_unmirror(dirfd, path, original)) return open_routed(kind, AT_FDCWD, original, flags, mode);
  return open_routed(kind, dirfd, path, flags, mode);
}

/* the wrappers (SCR_PRELOAD_WRAPPER_VARIADIC): the mode as passed, read only
 * when the flags say it was */
#if SCR_PRELOAD_VARIADIC_AS_FIXED
#define OPEN_MODE(flags, last) (void) 0
#else
#define OPEN_MODE(flags, last) \
  mode_t mode = 0; \
  if (scr_preload_needs_mode(flags)) { \
    va_list ap; \
    va_start(ap, last); \
    mode = (mode_t) va_arg(ap, int); \
    va_end(ap); \
  }
#endif

/* the mode as this library uses it: the one passed, or 0 when none was */
#define OPEN_GIVEN(flags) (scr_preload_needs_mode(flags) ? mode : 0)

/* a rule directory that exists only in the view may be opened as a
 * descriptor; open_routed decides the rest: the guard, the full lookup, the
 * engine */
#define OPEN_BODY(name, kind, dirfd, path, flags, mode, ...) \
  SCR_PRELOAD_WRAP_DIRECTORY_AT(name, dirfd, path, open_mirrored(kind, dirfd, path, flags, mode), \
                                open_missing(rules, kind, dirfd, path, flags, mode, saved_errno), \
                                open_routed(kind, dirfd, path, flags, mode), __VA_ARGS__)

SCR_PRELOAD_WRAPPER_VARIADIC(open, mode_t mode, const char* path, int flags)
{
  OPEN_MODE(flags, flags);
  OPEN_BODY(open, OPEN, AT_FDCWD, path, flags, OPEN_GIVEN(flags), path, flags, mode);
}

SCR_PRELOAD_WRAPPER_VARIADIC(open64, mode_t mode, const char* path, int flags)
{
  OPEN_MODE(flags, flags);
  OPEN_BODY(open64, OPEN64, AT_FDCWD, path, flags, OPEN_GIVEN(flags), path, flags, mode);
}

SCR_PRELOAD_WRAPPER_VARIADIC(openat, mode_t mode, int dirfd, const char* path, int flags)
{
  OPEN_MODE(flags, flags);
  OPEN_BODY(openat, OPENAT, dirfd, path, flags, OPEN_GIVEN(flags), dirfd, path, flags, mode);
}

SCR_PRELOAD_WRAPPER_VARIADIC(openat64, mode_t mode, int dirfd, const char* path, int flags)
{
  OPEN_MODE(flags, flags);
  OPEN_BODY(openat64, OPENAT64, dirfd, path, flags, OPEN_GIVEN(flags), dirfd, path, flags, mode);
}

SCR_PRELOAD_WRAPPER int creat(const char* path, mode_t mode)
{
  OPEN_BODY(creat, CREAT, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, path, mode);
}

SCR_PRELOAD_WRAPPER int creat64(const char* path, mode_t mode)
{
  OPEN_BODY(creat64, CREAT64, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, path, mode);
}

/* _FORTIFY_SOURCE: the __open*_2 forms are called when the compiler cannot
 * see a mode is needed; with O_CREAT or O_TMPFILE libc ends the program,
 * which the real function does itself */
#define OPEN_2_BODY(name, kind, dirfd, path, flags, ...) \
  if (scr_preload_needs_mode(flags)) return open_real(kind, dirfd, path, flags, 0); \
  OPEN_BODY(name, kind, dirfd, path, flags, 0, __VA_ARGS__)

SCR_PRELOAD_WRAPPER int __open_2(const char* path, int flags)
{
  OPEN_2_BODY(__open_2, OPEN_2, AT_FDCWD, path, flags, path, flags);
}

SCR_PRELOAD_WRAPPER int __open64_2(const char* path, int flags)
{
  OPEN_2_BODY(__open64_2, OPEN64_2, AT_FDCWD, path, flags, path, flags);
}

SCR_PRELOAD_WRAPPER int __openat_2(int dirfd, const char* path, int flags)
{
  OPEN_2_BODY(__openat_2, OPENAT_2, dirfd, path, flags, dirfd, path, flags);
}

SCR_PRELOAD_WRAPPER int __openat64_2(int dirfd, const char* path, int flags)
{
  OPEN_2_BODY(__openat64_2, OPENAT64_2, dirfd, path, flags, dirfd, path, flags);
}

/* --- stdio */

enum stdio_kind { FOPEN, FOPEN64, FREOPEN, FREOPEN64 };
static const char* const stdio_names[] = { "fopen", "fopen64", "freopen", "freopen64" };

/* the open flags of an fopen mode, as glibc reads it (first letter, then up
 * to six modifiers); 0 when fopen would refuse it with EINVAL */
static int stdio_flags(const char* mode, int is64, int* flags)
{
  __asm__("" : "+r"(mode));
  if (!mode) return 0;
  int f;
  switch (mode[0]) {
  case 'r': f = O_RDONLY; break;
  case 'w': f = O_WRONLY | O_CREAT | O_TRUNC; break;
  case 'a': f = O_WRONLY | O_CREAT | O_APPEND; break;
  default: return 0;
  }
  for (int i = 1; i < 7 && mode[i] && mode[i] != ','; i++) {
    if (mode[i] == '+') f = (f & ~O_ACCMODE) | O_RDWR;
    else if (mode[i] == 'x') f |= O_EXCL;
    else if (mode[i] == 'e') f |= O_CLOEXEC;
  }
  *flags = f | (is64 ? O_LARGEFILE : 0);
  return 1;
}

static FILE* stdio_real(int kind, const char* path, const char* mode, FILE* stream)
{
  FILE* (*open)(const char*, const char*) = NULL;
  FILE* (*reopen)(const char*, const char*, FILE*) = NULL;
  switch (kind) {
  case FOPEN: open = SCR_REAL(fopen); break;
  case FOPEN64: open = SCR_REAL(fopen64); break;
  case FREOPEN: reopen = SCR_REAL(freopen); break;
  case FREOPEN64: reopen = SCR_REAL(freopen64); break;
  }
  if (open) return open(path, mode);
  if (reopen) return reopen(path, mode, stream);
  errno = ENOSYS;
  return NULL;
}

static void stdio_track(FILE* f, const scr_preload_target* t, int hooked)
{
  if (!f) return;
  int saved_errno = errno;
  int fd = fileno(f);
  errno = saved_errno;
  if (fd >= 0) scr_preload_wrap_track(fd, SCR_PRELOAD_FD_FILE, t, hooked, NULL);
}

/* a stream on the descriptor the engine opened: fdopen for fopen; for
 * freopen, which must reuse the caller's FILE, a reopen of the same file
 * through /proc/self/fd (without 'x': the file exists now), after which
 * the engine's descriptor is closed and the stream's carries its record.
 * flags: those of mode (stdio_flags). */
static FILE* stdio_adopt(int kind, const scr_preload_target* t, int fd, void* file, const char* mode, int flags,
                         FILE* stream)
{
  scr_preload_wrap_track(fd, SCR_PRELOAD_FD_FILE, t, 1, file);
  FILE* f = NULL;
  if (kind == FOPEN || kind == FOPEN64) {
    /* glibc's fopen "a" (not "a+") moves the new descriptor to the end of
     * the file, so that ftell tells the size at once; its fdopen does so only
     * when it adds O_APPEND itself, and the engine's descriptor has it
     * already: the seek is made here, and fails the fopen as it would */
    if ((flags & O_APPEND) && (flags & O_ACCMODE) == O_WRONLY && lseek(fd, 0, SEEK_END) < 0 && errno != ESPIPE) {
      int error = errno;
      scr_preload_wrap_close(fd);
      errno = error;
      return NULL;
    }
    f = fdopen(fd, mode);
  } else {
    char proc[64], reopen_mode[16];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    size_t n = 0;
    for (const char* m = mode; *m && n < sizeof(reopen_mode) - 1; m++)
      if (*m != 'x') reopen_mode[n++] = *m;
    reopen_mode[n] = '\0';
    f = stdio_real(kind, proc, reopen_mode, stream);
    if (f) {
      int saved_errno = errno;
      int stream_fd = fileno(f);
      scr_preload_fd_file last;
      if (stream_fd >= 0 && stream_fd != fd && scr_preload_fd_share(fd, stream_fd, &last))
        scr_preload_wrap_closed(stream_fd, &last, 0, 1);
      scr_preload_wrap_close(fd);
      errno = saved_errno;
    }
  }
  if (!f) {
    /* the engine hears of the close like of any other */
    int error = errno;
    scr_preload_wrap_close(fd);
    errno = error;
  }
  return f;
}

static FILE* stdio_routed(int kind, const scr_preload_ruleset* rules, const char* path, const char* mode,
                          FILE* stream);

/* the new file of an fopen or freopen with rules loaded */
static SCR_PRELOAD_COLD FILE* stdio_matched(int kind, const scr_preload_lookup* l, int flags, const char* path,
                                            const char* mode, FILE* stream)
{
  if (scr_preload_state_dryrun()) {
    scr_preload_report_open(&l->t, SCR_PRELOAD_DECISION_DRYRUN);
    FILE* f = stdio_real(kind, path, mode, stream);
    stdio_track(f, &l->t, 0);
    return f;
  }
  int saved_errno = errno, handled = SCR_PRELOAD_PASS, fd;
  void* file = NULL;
  char redirect[PATH_MAX];
  redirect[0] = '\0';
  SCR_PRELOAD_HOOK_CALL(fd, scr_preload_hook_open(&l->t, flags, 0666, redirect, &file, &handled));
  FILE* f;
  if (handled == SCR_PRELOAD_HANDLED) {
    if (fd >= 0) {
      errno = saved_errno;
      f = stdio_adopt(kind, &l->t, fd, file, mode, flags, stream);
    } else {
      /* freopen closes the stream whatever happens to the new file */
      int error = errno;
      if (stream) {
        int (*real_fclose)(FILE*) = SCR_REAL(fclose);
        if (real_fclose) real_fclose(stream);
      }
      errno = error;
      f = NULL;
    }
    scr_preload_report_open(&l->t, SCR_PRELOAD_DECISION_ROUTED);
    return f;
  }
  errno = saved_errno;
  f = stdio_real(kind, handled == SCR_PRELOAD_REDIRECT ? redirect : path, mode, stream);
  /* a symbolic link at the rule's name that leads into the view (not for
   * freopen: its stream is closed by now) */
  char followed[PATH_MAX];
  if (!f && handled == SCR_PRELOAD_PASS && errno == ENOENT && (kind == FOPEN || kind == FOPEN64) &&
      scr_preload_wrap_follow(l->t.rules, AT_FDCWD, path, 1, followed)) {
    errno = saved_errno;
    SCR_PRELOAD_FOLLOWED(f, stdio_routed(kind, l->t.rules, followed, mode, stream));
    return f;
  }
  stdio_track(f, &l->t, 1);
  scr_preload_report_open(&l->t, handled == SCR_PRELOAD_REDIRECT ? SCR_PRELOAD_DECISION_REDIRECTED
                                                                 : SCR_PRELOAD_DECISION_PASSED);
  return f;
}

/* the real fopen found no directory for a new file: one that exists only
 * in the view is made on the file system, and the fopen tried again; or
 * it met a symbolic link into the view, and is made again on its target */
static SCR_PRELOAD_COLD FILE* stdio_missing(int kind, const char* path, const char* mode, FILE* stream,
                                            int saved_errno)
{
  int failure = errno, flags = 0;
  if (failure == ENOENT && stdio_flags(mode, 0, &flags) && (flags & O_CREAT) &&
      scr_preload_wrap_materialize_parent(stdio_names[kind], AT_FDCWD, path)) {
    errno = saved_errno;
    return stdio_real(kind, path, mode, stream);
  }
  char followed[PATH_MAX];
  if ((kind == FOPEN || kind == FOPEN64) &&
      scr_preload_wrap_follow(scr_preload_wrap_rules(), AT_FDCWD, path, 1, followed)) {
    errno = saved_errno;
    FILE* f;
    SCR_PRELOAD_FOLLOWED(f, stdio_routed(kind, scr_preload_wrap_rules(), followed, mode, stream));
    return f;
  }
  errno = failure;
  return NULL;
}

static FILE* stdio_routed(int kind, const scr_preload_ruleset* rules, const char* path, const char* mode,
                          FILE* stream)
{
  if (!rules) return stdio_real(kind, path, mode, stream);
  scr_preload_lookup l;
  int flags = 0;
  int what = SCR_PRELOAD_LOOKUP_FILE | SCR_PRELOAD_LOOKUP_CALLER;
  if (__builtin_expect(!stdio_flags(mode, kind == FOPEN64 || kind == FREOPEN64, &flags) ||
                       !scr_preload_lookup_path(&l, rules, stdio_names[kind], AT_FDCWD, path, what), 1)) {
    int saved_errno = errno;
    FILE* f = stdio_real(kind, path, mode, stream);
    /* not freopen: its stream is closed by now, whatever follows */
    if (f || errno != ENOENT || kind == FREOPEN || kind == FREOPEN64) return f;
    return stdio_missing(kind, path, mode, stream, saved_errno);
  }
  return stdio_matched(kind, &l, flags, path, mode, stream);
}

/* a new file ("w" or "a") may be made in a directory that exists only in the
 * view, so such an fopen looks at its result; one for reading stays a tail
 * call into libc */
#define STDIO_BODY(name, kind) \
  __asm__("" : "+r"(mode)); \
  if (!mode || (mode[0] != 'w' && mode[0] != 'a')) { \
    SCR_PRELOAD_WRAP_FILE(name, path, stdio_routed(kind, scr_preload_wrap_rules(), path, mode, NULL), path, mode); \
  } \
  SCR_PRELOAD_WRAP_DIRECTORY_FAILING(name, NULL, path, stdio_missing(kind, path, mode, NULL, saved_errno), \
                                     stdio_routed(kind, scr_preload_wrap_rules(), path, mode, NULL), path, mode)

SCR_PRELOAD_WRAPPER FILE* fopen(const char* path, const char* mode)
{
  STDIO_BODY(fopen, FOPEN);
}

SCR_PRELOAD_WRAPPER FILE* fopen64(const char* path, const char* mode)
{
  STDIO_BODY(fopen64, FOPEN64);
}

/* freopen closes the stream's descriptor (path NULL: reopens the same file
 * with a new mode, keeping the descriptor number), then opens the new file */
static FILE* stdio_reopen(int kind, const char* path, const char* mode, FILE* stream)
{
  const scr_preload_ruleset* rules = scr_preload_wrap_rules();
  int oldfd = -1;
  if (stream && __atomic_load_n(&scr_preload_hot.fd_active, __ATOMIC_ACQUIRE)) {
    int saved_errno = errno;
    oldfd = fileno(stream);
    errno = saved_errno;
  }
  __asm__("" : "+r"(path));
  if (__builtin_expect(!scr_preload_fd_mark(oldfd), 1))
    return rules && path ? stdio_routed(kind, rules, path, mode, stream) : stdio_real(kind, path, mode, stream);

  scr_preload_fd_file last;
  if (!path) {
    /* same file, new mode: the record follows the stream */
    FILE* f = stdio_real(kind, path, mode, stream);
    int error = errno;
    int newfd = f ? fileno(f) : -1;
    if (newfd != oldfd) {
      if (newfd >= 0 && scr_preload_fd_share(oldfd, newfd, &last)) scr_preload_wrap_closed(newfd, &last, 0, 1);
      if (scr_preload_fd_release(oldfd, &last)) scr_preload_wrap_closed(oldfd, &last, 0, 1);
    }
    errno = error;
    return f;
  }
  /* glibc's freopen writes the stream's buffer and closes its descriptor
   * before it opens path; the engine hears of that close first, with the
   * bytes written, so that an open of the same file finds it closed (a
   * checkpoint that completes at the close then holds them all). Unmarked
   * before the real call, which may give the new file the same number. */
  int is_last = scr_preload_fd_release(oldfd, &last);
  if (is_last) {
    int saved_errno = errno;
    /* only a stream being written: fflush of a read stream moves the
     * descriptor's offset back, which freopen does not */
    if (__fwriting(stream)) fflush(stream);
    scr_preload_wrap_closed(oldfd, &last, 0, 1);
    errno = saved_errno;
  }
  return rules ? stdio_routed(kind, rules, path, mode, stream) : stdio_real(kind, path, mode, stream);
}

SCR_PRELOAD_WRAPPER FILE* freopen(const char* path, const char* mode, FILE* stream)
{
  return stdio_reopen(FREOPEN, path, mode, stream);
}

SCR_PRELOAD_WRAPPER FILE* freopen64(const char* path, const char* mode, FILE* stream)
{
  return stdio_reopen(FREOPEN64, path, mode, stream);
}
