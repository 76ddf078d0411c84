/* scr_preload_materialize.c - calls the layer does not route but that need a
 * rule directory on the file system: chdir, fchdir, and mkstemp and its kin. */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_wrap.h"

/* A rule directory made by mkdir exists only in the view until its dataset
 * is flushed. Most calls on it reach the engine through a wrapper, but
 * glibc's mk*temp functions open the file they make through internal names
 * that no wrapper sees, and a process cannot chdir into a directory that is
 * not there. So before such a call the directory is made on the file system
 * (an empty directory: it is where the temporary file or the relative
 * names then go, as without the layer; a file renamed from there to a
 * rule's name moves into the cache). */

static int chdir_real(int (*real)(const char*), const char* path)
{
  return real ? real(path) : (int) syscall(SYS_chdir, path);
}

/* a symbolic link to a rule directory that exists only in the view (a
 * "latest" link to a checkpoint directory) is followed by hand: the
 * directory it leads to is made, and the process goes there */
static int chdir_routed(int (*real)(const char*), const char* path)
{
  int saved_errno = errno;
  scr_preload_wrap_materialize("chdir", AT_FDCWD, path);
  int rc = chdir_real(real, path);
  char followed[PATH_MAX];
  if (rc == 0 || (errno != ENOENT && errno != ENOTDIR) ||
      !scr_preload_wrap_follow(scr_preload_wrap_rules(), AT_FDCWD, path, 1, followed))
    return rc;
  errno = saved_errno;
  scr_preload_wrap_materialize("chdir", AT_FDCWD, followed);
  return chdir_real(real, followed);
}

SCR_PRELOAD_WRAPPER int chdir(const char* path)
{
  SCR_PRELOAD_WRAP_INERT(chdir, chdir_routed(real, path), path);
}

/* fchdir to a descriptor of a virtual directory, which is one of its
 * mirror (scr_preload_wrap.h): there the process would make its files in
 * the cache, where they are lost at MPI_Finalize, getcwd would name the
 * cache, and ".." lead into it. So it goes to the original path as chdir
 * does, the directory made on the file system; a directory that is not
 * there any more (the view dropped it) is still entered, as the kernel
 * enters a removed one. The walk of nftw enters mirrors itself
 * (scr_preload_walk.c), through the real function. */
static int fchdir_routed(int (*real)(int), int fd)
{
  char original[PATH_MAX];
  int saved_errno = errno;
  if (scr_preload_wrap_at_marked(fd) && scr_preload_wrap_unmirror(fd, ".", original) &&
      chdir_routed(SCR_REAL(chdir), original) == 0)
    return 0;
  errno = saved_errno;
  return real ? real(fd) : (int) syscall(SYS_fchdir, fd);
}

SCR_PRELOAD_WRAPPER int fchdir(int fd)
{
  SCR_PRELOAD_WRAP_INERT(fchdir, fchdir_routed(real, fd), fd);
}

/* mk*temp: the template's directory first; without the real function (only
 * while dlsym runs) the call fails as unsupported */
#define TEMP_BODY(name, fail, template, ...) \
  SCR_PRELOAD_WRAP_INERT(name, (scr_preload_wrap_materialize_parent(#name, AT_FDCWD, template), \
                                real ? real(__VA_ARGS__) : (errno = ENOSYS, fail)), __VA_ARGS__)

SCR_PRELOAD_WRAPPER int mkstemp(char* template)
{
  TEMP_BODY(mkstemp, -1, template, template);
}

SCR_PRELOAD_WRAPPER int mkstemp64(char* template)
{
  TEMP_BODY(mkstemp64, -1, template, template);
}

SCR_PRELOAD_WRAPPER int mkostemp(char* template, int flags)
{
  TEMP_BODY(mkostemp, -1, template, template, flags);
}

SCR_PRELOAD_WRAPPER int mkostemp64(char* template, int flags)
{
  TEMP_BODY(mkostemp64, -1, template, template, flags);
}

SCR_PRELOAD_WRAPPER int mkstemps(char* template, int suffix_length)
{
  TEMP_BODY(mkstemps, -1, template, template, suffix_length);
}

SCR_PRELOAD_WRAPPER int mkstemps64(char* template, int suffix_length)
{
  TEMP_BODY(mkstemps64, -1, template, template, suffix_length);
}

SCR_PRELOAD_WRAPPER int mkostemps(char* template, int suffix_length, int flags)
{
  TEMP_BODY(mkostemps, -1, template, template, suffix_length, flags);
}

SCR_PRELOAD_WRAPPER int mkostemps64(char* template, int suffix_length, int flags)
{
  TEMP_BODY(mkostemps64, -1, template, template, suffix_length, flags);
}

SCR_PRELOAD_WRAPPER char* mkdtemp(char* template)
{
  TEMP_BODY(mkdtemp, NULL, template, template);
}
