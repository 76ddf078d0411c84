/* scr_preload_attr.c - chmod, chown, the utime and the xattr families on a path
 * the view shows: the cached file (or a virtual directory's mirror) is what they see. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <utime.h>
#include "scr_preload_child.h"
#include "scr_preload_wrap.h"

/* A program may set the mode of the checkpoint it just wrote (read-only, to
 * protect it), or copy a file's mode, times and extended attributes onto a
 * new one (Python's shutil.copy and copy2, cp -p): on a file that exists only
 * in the cache the real call finds nothing. The call then acts on the cache
 * file, which stat shows, and a change on the file's copy on the prefix
 * directory as well when it was flushed, so that both agree; the answer is
 * the cache file's. A path the view does not show costs the screen, as for
 * every wrapped call. */

#define ATTR_UNPARENTHESIZE(...) __VA_ARGS__

/* ATTR_ROUTED(type, name, (parameters), dirfd, path, follow, change, (arguments)):
 * type name_routed(real, failed, saved_errno, parameters...), the real call with
 * `arguments` on the path the view keeps for (dirfd, path) (P in the
 * arguments stands for the path to use, D for the directory descriptor), or
 * on path itself. failed: the
 * real call on path was made and failed for a missing name (errno says
 * so); saved_errno: errno before it. A link on the way into the view is
 * followed (follow: also the last component). change: the call changes the
 * file (made on the flushed copy too), else it only asks. */
#define ATTR_ROUTED(type, name, parameters, dirfd, path, follow, change, arguments) \
  static SCR_PRELOAD_COLD type name##_routed(__typeof__(scr_preload_real.name) real, int failed, int saved_errno, ATTR_UNPARENTHESIZE parameters) \
  { \
    if (!real) real = SCR_REAL(name); \
    if (!real) { \
      errno = ENOSYS; \
      return -1; \
    } \
    const scr_preload_ruleset* rules = scr_preload_wrap_rules(); \
    char shown[PATH_MAX], followed[PATH_MAX]; \
    scr_preload_lookup l; \
    const char* P = path; \
    int D = dirfd; \
    /* relative to a virtual directory's mirror: its original path, where \
     * a file that the view does not show is (scr_preload_wrap.h) */ \
    char original[PATH_MAX]; \
    if (scr_preload_wrap_at_marked(D) && scr_preload_wrap_unmirror(D, P, original)) { \
      D = AT_FDCWD; \
      P = original; \
      failed = 0; \
    } \
    const char* named = P; \
    if (!scr_preload_lookup_shown(&l, rules, #name, D, named, shown)) { \
      type rc = failed ? -1 : real arguments; \
      if (rc != -1 || (errno != ENOENT && errno != ENOTDIR)) return rc; \
      int failure = errno; \
      if (!scr_preload_wrap_follow(rules, D, named, follow, followed) || \
          !scr_preload_lookup_shown(&l, rules, #name, AT_FDCWD, followed, shown)) { \
        errno = failure; \
        return -1; \
      } \
    } \
    /* a rank's child process sees the rank's files read-only */ \
    if ((change) && scr_preload_child_view()) { \
      errno = EROFS; \
      return -1; \
    } \
    errno = saved_errno; \
    P = shown; \
    type rc = real arguments; \
    int error = errno; \
    /* the flushed copy too, where there is one (none: ENOENT, ignored) */ \
    P = l.path; \
    if ((change) && rc == 0) (void) (real arguments); \
    errno = error; \
    return rc; \
  }

/* the screen first; a path no rule names that the real call does not find
 * may still be a directory that exists only in the view */
#define ATTR_BODY(name, path, ...) \
  SCR_PRELOAD_WRAP_DIRECTORY(name, path, name##_routed(real, 1, saved_errno, __VA_ARGS__), \
                             name##_routed(real, 0, errno, __VA_ARGS__), __VA_ARGS__)

/* the same for the *at forms (SCR_PRELOAD_WRAP_MIRRORED: a descriptor the
 * table marks goes to name_routed, which takes a mirror's as its original) */
#define ATTR_BODY_AT(name, dirfd, path, ...) \
  SCR_PRELOAD_WRAP_DIRECTORY_AT(name, dirfd, path, name##_routed(real, 0, errno, __VA_ARGS__), \
                                name##_routed(real, 1, saved_errno, __VA_ARGS__), \
                                name##_routed(real, 0, errno, __VA_ARGS__), __VA_ARGS__)

#define ATTR_FOLLOWS(flags) (((flags) & AT_SYMLINK_NOFOLLOW) == 0)

ATTR_ROUTED(int, chmod, (const char* path, mode_t mode), AT_FDCWD, path, 1, 1, (P, mode))
ATTR_ROUTED(int, fchmodat, (int dirfd, const char* path, mode_t mode, int flags), dirfd, path, ATTR_FOLLOWS(flags), 1,
            (D, P, mode, flags))
ATTR_ROUTED(int, chown, (const char* path, uid_t owner, gid_t group), AT_FDCWD, path, 1, 1, (P, owner, group))
ATTR_ROUTED(int, lchown, (const char* path, uid_t owner, gid_t group), AT_FDCWD, path, 0, 1, (P, owner, group))
ATTR_ROUTED(int, fchownat, (int dirfd, const char* path, uid_t owner, gid_t group, int flags), dirfd, path,
            ATTR_FOLLOWS(flags), 1, (D, P, owner, group, flags))
ATTR_ROUTED(int, utime, (const char* path, const struct utimbuf* times), AT_FDCWD, path, 1, 1, (P, times))
ATTR_ROUTED(int, utimes, (const char* path, const struct timeval* times), AT_FDCWD, path, 1, 1, (P, times))
ATTR_ROUTED(int, utimensat, (int dirfd, const char* path, const struct timespec* times, int flags), dirfd, path,
            ATTR_FOLLOWS(flags), 1, (D, P, times, flags))
/* extended attributes: the l forms do not follow the last link */
ATTR_ROUTED(ssize_t, getxattr, (const char* path, const char* name, void* value, size_t size), AT_FDCWD, path, 1, 0,
            (P, name, value, size))
ATTR_ROUTED(ssize_t, lgetxattr, (const char* path, const char* name, void* value, size_t size), AT_FDCWD, path, 0, 0,
            (P, name, value, size))
ATTR_ROUTED(ssize_t, listxattr, (const char* path, char* list, size_t size), AT_FDCWD, path, 1, 0, (P, list, size))
ATTR_ROUTED(ssize_t, llistxattr, (const char* path, char* list, size_t size), AT_FDCWD, path, 0, 0, (P, list, size))
ATTR_ROUTED(int, setxattr, (const char* path, const char* name, const void* value, size_t size, int flags), AT_FDCWD,
            path, 1, 1, (P, name, value, size, flags))
ATTR_ROUTED(int, lsetxattr, (const char* path, const char* name, const void* value, size_t size, int flags), AT_FDCWD,
            path, 0, 1, (P, name, value, size, flags))
ATTR_ROUTED(int, removexattr, (const char* path, const char* name), AT_FDCWD, path, 1, 1, (P, name))
ATTR_ROUTED(int, lremovexattr, (const char* path, const char* name), AT_FDCWD, path, 0, 1, (P, name))

SCR_PRELOAD_WRAPPER int chmod(const char* path, mode_t mode)
{
  ATTR_BODY(chmod, path, path, mode);
}

SCR_PRELOAD_WRAPPER int fchmodat(int dirfd, const char* path, mode_t mode, int flags)
{
  ATTR_BODY_AT(fchmodat, dirfd, path, dirfd, path, mode, flags);
}

SCR_PRELOAD_WRAPPER int chown(const char* path, uid_t owner, gid_t group)
{
  ATTR_BODY(chown, path, path, owner, group);
}

SCR_PRELOAD_WRAPPER int lchown(const char* path, uid_t owner, gid_t group)
{
  ATTR_BODY(lchown, path, path, owner, group);
}

SCR_PRELOAD_WRAPPER int fchownat(int dirfd, const char* path, uid_t owner, gid_t group, int flags)
{
  ATTR_BODY_AT(fchownat, dirfd, path, dirfd, path, owner, group, flags);
}

SCR_PRELOAD_WRAPPER int utime(const char* path, const struct utimbuf* times)
{
  ATTR_BODY(utime, path, path, times);
}

SCR_PRELOAD_WRAPPER int utimes(const char* path, const struct timeval times[2])
{
  ATTR_BODY(utimes, path, path, times);
}

/* utimensat(dirfd, NULL, ...) is futimens on dirfd: no path to look up */
SCR_PRELOAD_WRAPPER int utimensat(int dirfd, const char* path, const struct timespec times[2], int flags)
{
  ATTR_BODY_AT(utimensat, dirfd, path, dirfd, path, times, flags);
}

SCR_PRELOAD_WRAPPER ssize_t getxattr(const char* path, const char* name, void* value, size_t size)
{
  ATTR_BODY(getxattr, path, path, name, value, size);
}

SCR_PRELOAD_WRAPPER ssize_t lgetxattr(const char* path, const char* name, void* value, size_t size)
{
  ATTR_BODY(lgetxattr, path, path, name, value, size);
}

SCR_PRELOAD_WRAPPER ssize_t listxattr(const char* path, char* list, size_t size)
{
  ATTR_BODY(listxattr, path, path, list, size);
}

SCR_PRELOAD_WRAPPER ssize_t llistxattr(const char* path, char* list, size_t size)
{
  ATTR_BODY(llistxattr, path, path, list, size);
}

SCR_PRELOAD_WRAPPER int setxattr(const char* path, const char* name, const void* value, size_t size, int flags)
{
  ATTR_BODY(setxattr, path, path, name, value, size, flags);
}

SCR_PRELOAD_WRAPPER int lsetxattr(const char* path, const char* name, const void* value, size_t size, int flags)
{
  ATTR_BODY(lsetxattr, path, path, name, value, size, flags);
}

SCR_PRELOAD_WRAPPER int removexattr(const char* path, const char* name)
{
  ATTR_BODY(removexattr, path, path, name);
}

SCR_PRELOAD_WRAPPER int lremovexattr(const char* path, const char* name)
{
  ATTR_BODY(lremovexattr, path, path, name);
}
