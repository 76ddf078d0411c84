/* scr_preload_statfs.c - statvfs and statfs of a path the view shows: the file
 * system the files are kept on (the node-local cache) answers for it. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include "scr_preload_wrap.h"

/* A program may ask how much room there is where it is about to write a
 * checkpoint (statvfs of the checkpoint directory, Python's
 * shutil.disk_usage). A rule directory made by mkdir exists only in the view,
 * and a cached file only in the cache: the real call finds neither. The
 * answer is then that of the file system that holds them, which is also
 * where the bytes go. */

/* the real call failed for a missing name: ask again where the view keeps it */
#define STATFS_MISSING(name, buf_type) \
  static SCR_PRELOAD_COLD int name##_missing(int (*real)(const char*, buf_type*), const char* path, buf_type* buf, \
                                             int saved_errno) \
  { \
    char shown[PATH_MAX]; \
    scr_preload_lookup l; \
    if (!scr_preload_lookup_shown(&l, scr_preload_wrap_rules(), #name, AT_FDCWD, path, shown)) return -1; \
    errno = saved_errno; \
    return real(shown, buf); \
  } \
  static int name##_routed(int (*real)(const char*, buf_type*), const char* path, buf_type* buf) \
  { \
    int saved_errno = errno; \
    int rc = real(path, buf); \
    if (rc == 0 || (errno != ENOENT && errno != ENOTDIR) || !scr_preload_wrap_rules()) return rc; \
    return name##_missing(real, path, buf, saved_errno); \
  }

STATFS_MISSING(statvfs, struct statvfs)
STATFS_MISSING(statvfs64, struct statvfs64)
STATFS_MISSING(statfs, struct statfs)
STATFS_MISSING(statfs64, struct statfs64)

#define STATFS_BODY(name) \
  SCR_PRELOAD_WRAP_DIRECTORY(name, path, name##_missing(real, path, buf, saved_errno), \
                             (real ? name##_routed(real, path, buf) : (errno = ENOSYS, -1)), path, buf)

SCR_PRELOAD_WRAPPER int statvfs(const char* path, struct statvfs* buf)
{
  STATFS_BODY(statvfs);
}

SCR_PRELOAD_WRAPPER int statvfs64(const char* path, struct statvfs64* buf)
{
  STATFS_BODY(statvfs64);
}

SCR_PRELOAD_WRAPPER int statfs(const char* path, struct statfs* buf)
{
  STATFS_BODY(statfs);
}

SCR_PRELOAD_WRAPPER int statfs64(const char* path, struct statfs64* buf)
{
  STATFS_BODY(statfs64);
}
