/* scr_preload_desc.c - the descriptor wrappers: close, close_range, closefrom, fclose,
 * dup, dup2, dup3, fcntl. They keep the marks of tracked files; any other descriptor costs a load. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_wrap.h"

/* glibc 2.34 declares both; older headers do not, and the flags come from
 * the kernel's <linux/close_range.h> */
int close_range(unsigned int first, unsigned int last, int flags);
void closefrom(int lowfd);
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

SCR_PRELOAD_WRAPPER int close(int fd)
{
  if (__builtin_expect(!scr_preload_fd_mark(fd), 1)) {
    int (*real)(int) = SCR_REAL(close);
    return real ? real(fd) : (int) syscall(SYS_close, fd);
  }
  return scr_preload_wrap_close(fd);
}

/* A range of descriptors closed at once (Python's os.closerange, glibc's
 * closefrom, a child about to exec). Each tracked one ends as at its close:
 * a file whose last descriptor was in the range is closed for the engine,
 * after the real call, in the order of the numbers. Unmarked first, as
 * close does, so that a number the real call frees and another thread's
 * open takes keeps its new mark; with CLOSE_RANGE_UNSHARE afterwards
 * instead, since the call may fail (ENOMEM) having closed nothing, and the
 * numbers it closes are then this thread's alone (no other thread can take
 * them). A failure of the call with flags 0 and a valid range can only be
 * ENOSYS (a kernel before 5.9, or a seccomp filter), which is asked once. */
static int desc_range_real(unsigned int first, unsigned int last, int flags)
{
  int (*real)(unsigned int, unsigned int, int) = SCR_REAL(close_range);
  if (real) return real(first, last, flags);
#ifdef SYS_close_range
  return (int) syscall(SYS_close_range, first, last, flags);
#else
  errno = ENOSYS;
  return -1;
#endif
}

static int desc_range_works(void)
{
  static int works = 0; /* 1 yes, -1 no, 0 not asked */
  int known = __atomic_load_n(&works, __ATOMIC_RELAXED);
  if (known) return known > 0;
  int saved_errno = errno;
  /* closes nothing: no descriptor has that number */
  known = desc_range_real(~0U, ~0U, 0) == 0 ? 1 : -1;
  errno = saved_errno;
  __atomic_store_n(&works, known, __ATOMIC_RELAXED);
  return known > 0;
}

/* the engine told of each file whose last descriptor was in the range */
static void desc_range_ended(scr_preload_fd_list* ended)
{
  int saved_errno = errno, fd;
  scr_preload_fd_file last;
  while (scr_preload_fd_next(ended, &fd, &last)) scr_preload_wrap_closed(fd, &last, 0, 1);
  errno = saved_errno;
}

static SCR_PRELOAD_COLD int desc_close_range(unsigned int first, unsigned int last, int flags)
{
  scr_preload_fd_list ended = { 0, 0 };
  int unshare = (flags & CLOSE_RANGE_UNSHARE) != 0;
  /* what the kernel refuses closes nothing (EINVAL) */
  if (first > last || (flags & ~(int) (CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) || (!unshare && !desc_range_works()))
    return desc_range_real(first, last, flags);
  if (!unshare) scr_preload_fd_release_range(first, last, &ended);
  int rc = desc_range_real(first, last, flags);
  if (unshare && rc == 0) scr_preload_fd_release_range(first, last, &ended);
  desc_range_ended(&ended);
  return rc;
}

SCR_PRELOAD_WRAPPER int close_range(unsigned int first, unsigned int last, int flags)
{
  /* CLOSE_RANGE_CLOEXEC marks the descriptors close-on-exec, closing none */
  if (__builtin_expect(!__atomic_load_n(&scr_preload_hot.fd_active, __ATOMIC_ACQUIRE), 1) ||
      (flags & (int) CLOSE_RANGE_CLOEXEC))
    return desc_range_real(first, last, flags);
  return desc_close_range(first, last, flags);
}

/* glibc's closefrom closes through its own close_range (or, where the kernel
 * lacks it, its own closes), never through our symbols; it cannot fail
 * (it aborts the process first) */
SCR_PRELOAD_WRAPPER void closefrom(int lowfd)
{
  void (*real)(int) = SCR_REAL(closefrom);
  scr_preload_fd_list ended = { 0, 0 };
  int active = __atomic_load_n(&scr_preload_hot.fd_active, __ATOMIC_ACQUIRE);
  if (__builtin_expect(active, 0)) scr_preload_fd_release_range(lowfd < 0 ? 0 : (unsigned int) lowfd, ~0U, &ended);
  if (real) {
    real(lowfd);
  } else {
    int saved_errno = errno;
    desc_range_real(lowfd < 0 ? 0 : (unsigned int) lowfd, ~0U, 0);
    errno = saved_errno;
  }
  if (__builtin_expect(active, 0)) desc_range_ended(&ended);
}

SCR_PRELOAD_WRAPPER int fclose(FILE* stream)
{
  int (*real)(FILE*) = SCR_REAL(fclose);
  if (__builtin_expect(!__atomic_load_n(&scr_preload_hot.fd_active, __ATOMIC_ACQUIRE), 1) && real) return real(stream);
  if (!real) {
    errno = ENOSYS;
    return EOF;
  }
  /* fileno fails with EBADF on a stream without a descriptor (fmemopen) */
  int saved_errno = errno;
  int fd = stream ? fileno(stream) : -1;
  errno = saved_errno;
  if (!scr_preload_fd_mark(fd)) return real(stream);
  /* unmarked first: once the real fclose closed it, the number may be reused */
  scr_preload_fd_file last;
  int is_last = scr_preload_fd_release(fd, &last);
  int rc = real(stream);
  return is_last ? scr_preload_wrap_closed(fd, &last, rc, 0) : rc;
}

/* newfd was made a copy of oldfd: it takes oldfd's mark, and what it
 * referred to before (dup2, dup3) loses a descriptor */
static SCR_PRELOAD_COLD void desc_copied(int oldfd, int newfd)
{
  int saved_errno = errno;
  scr_preload_fd_file last;
  if (scr_preload_fd_share(oldfd, newfd, &last)) scr_preload_wrap_closed(newfd, &last, 0, 1);
  errno = saved_errno;
}

SCR_PRELOAD_WRAPPER int dup(int fd)
{
  int (*real)(int) = SCR_REAL(dup);
  int copy = real ? real(fd) : (int) syscall(SYS_dup, fd);
  if (__builtin_expect(copy < 0 || !scr_preload_fd_mark(fd), 1)) return copy;
  desc_copied(fd, copy);
  return copy;
}

SCR_PRELOAD_WRAPPER int dup2(int oldfd, int newfd)
{
  int (*real)(int, int) = SCR_REAL(dup2);
  int rc;
  if (real) {
    rc = real(oldfd, newfd);
  } else if (oldfd == newfd) {
    /* dup3 refuses equal descriptors; dup2 checks oldfd and returns it */
    rc = fcntl(oldfd, F_GETFD) < 0 ? -1 : newfd;
  } else {
    rc = (int) syscall(SYS_dup3, oldfd, newfd, 0);
  }
  if (__builtin_expect(rc < 0 || oldfd == newfd || (!scr_preload_fd_mark(oldfd) && !scr_preload_fd_mark(newfd)), 1))
    return rc;
  desc_copied(oldfd, newfd);
  return rc;
}

SCR_PRELOAD_WRAPPER int dup3(int oldfd, int newfd, int flags)
{
  int (*real)(int, int, int) = SCR_REAL(dup3);
  int rc = real ? real(oldfd, newfd, flags) : (int) syscall(SYS_dup3, oldfd, newfd, flags);
  if (__builtin_expect(rc < 0 || (!scr_preload_fd_mark(oldfd) && !scr_preload_fd_mark(newfd)), 1)) return rc;
  desc_copied(oldfd, newfd);
  return rc;
}

/* fcntl's third argument: none, an int, or a pointer, by command. Reading
 * the wrong type is undefined and, where int and pointer differ in size,
 * wrong; a command this table does not know is taken to pass a pointer,
 * which is what glibc's own fcntl reads for every command. */
enum { FCNTL_NONE, FCNTL_INT, FCNTL_POINTER };

static int fcntl_argument(int cmd)
{
  switch (cmd) {
  case F_GETFD: case F_GETFL: case F_GETOWN:
#ifdef F_GETSIG
  case F_GETSIG:
#endif
#ifdef F_GETLEASE
  case F_GETLEASE:
#endif
#ifdef F_GETPIPE_SZ
  case F_GETPIPE_SZ:
#endif
#ifdef F_GET_SEALS
  case F_GET_SEALS:
#endif
    return FCNTL_NONE;
  case F_DUPFD: case F_DUPFD_CLOEXEC: case F_SETFD: case F_SETFL: case F_SETOWN:
#ifdef F_SETSIG
  case F_SETSIG:
#endif
#ifdef F_SETLEASE
  case F_SETLEASE:
#endif
#ifdef F_NOTIFY
  case F_NOTIFY:
#endif
#ifdef F_SETPIPE_SZ
  case F_SETPIPE_SZ:
#endif
#ifdef F_ADD_SEALS
  case F_ADD_SEALS:
#endif
    return FCNTL_INT;
  default:
    return FCNTL_POINTER;
  }
}

/* the real fcntl or fcntl64 with the argument as it came; after a
 * successful F_DUPFD or F_DUPFD_CLOEXEC the copy takes the mark */
static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, int kind, int number, void* pointer)
{
  int rc;
  if (!real) {
    rc = (int) syscall(SYS_fcntl, fd, cmd, kind == FCNTL_INT ? (void*) (intptr_t) number : pointer);
  } else if (kind == FCNTL_NONE) {
    rc = real(fd, cmd);
  } else if (kind == FCNTL_INT) {
    rc = real(fd, cmd, number);
  } else {
    rc = real(fd, cmd, pointer);
  }
  if (__builtin_expect(rc < 0 || (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) || !scr_preload_fd_mark(fd), 1)) return rc;
  desc_copied(fd, rc);
  return rc;
}

/* the argument as its kind says (SCR_PRELOAD_WRAPPER_VARIADIC): from the
 * register it came in, or by va_arg; only a copy of one of our descriptors
 * needs more than a tail call into libc with the argument as it came */
#if SCR_PRELOAD_VARIADIC_AS_FIXED
#define FCNTL_BODY(name) \
  int (*real)(int, int, ...) = SCR_REAL(name); \
  if (__builtin_expect(real && ((cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) || !scr_preload_fd_mark(fd)), 1)) \
    return real(fd, cmd, argument); \
  int kind = fcntl_argument(cmd); \
  return fcntl_common(real, fd, cmd, kind, kind == FCNTL_INT ? (int) argument : 0, \
                      kind == FCNTL_POINTER ? (void*) argument : NULL)
#else
#define FCNTL_BODY(name) \
  int kind = fcntl_argument(cmd), number = 0; \
  void* pointer = NULL; \
  if (kind != FCNTL_NONE) { \
    va_list ap; \
    va_start(ap, cmd); \
    if (kind == FCNTL_INT) number = va_arg(ap, int); \
    else pointer = va_arg(ap, void*); \
    va_end(ap); \
  } \
  return fcntl_common(SCR_REAL(name), fd, cmd, kind, number, pointer)
#endif

SCR_PRELOAD_WRAPPER_VARIADIC(fcntl, uintptr_t argument, int fd, int cmd)
{
  FCNTL_BODY(fcntl);
}

SCR_PRELOAD_WRAPPER_VARIADIC(fcntl64, uintptr_t argument, int fd, int cmd)
{
  FCNTL_BODY(fcntl64);
}
