/* scr_preload_desc.c - the descriptor wrappers: close, fclose, dup, dup2, dup3,
 * fcntl. They keep the marks of tracked files; any other descriptor costs a load. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_wrap.h"

SCR_PRELOAD_WRAPPER int close(int fd)
{
  if (__builtin_expect(!scr_preload_fd_mark(fd), 1)) {
    int (*real)(int) = SCR_REAL(close);
    return real ? real(fd) : (int) syscall(SYS_close, fd);
  }
  return scr_preload_wrap_close(fd);
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
