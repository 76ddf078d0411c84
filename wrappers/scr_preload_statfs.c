/* scr_preload_statfs.c - statvfs and statfs of a path the view shows: the file
 * system the files are kept on (the node-local cache) answers for it. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include "scr_preload_path.h"
#include "scr_preload_wrap.h"

/* A program may ask how much room there is where it is about to write a
 * checkpoint (statvfs of the checkpoint directory, Python's
 * shutil.disk_usage). A rule directory made by mkdir exists only in the view,
 * and a cached file only in the cache: the real call finds neither. The
 * answer is then that of the file system that holds them, which is also
 * where the bytes go. */

/* A rule directory that another rank made exists only in that rank's view:
 * this rank cannot tell it from one nobody made, and creating a file in it
 * succeeds (scr_preload(7)). ROMIO's MPI_File_open asks statfs of the
 * directory before it creates its file there (to choose a driver), so that
 * question gets the same answer: the file system the files would go to. */

/* the real call failed for a missing name: ask again where the view keeps
 * it, or, for a rule directory the view does not show, where it would */
#define STATFS_MISSING(name, buf_type) \
  static SCR_PRELOAD_COLD int name##_missing(int (*real)(const char*, buf_type*), const char* path, buf_type* buf, \
                                             int saved_errno) \
  { \
    char shown[PATH_MAX]; \
    scr_preload_lookup l; \
    const scr_preload_ruleset* rules = scr_preload_wrap_rules(); \
    if (!scr_preload_lookup_shown(&l, rules, #name, AT_FDCWD, path, shown) && \
        (!scr_preload_lookup_path(&l, rules, #name, AT_FDCWD, path, SCR_PRELOAD_LOOKUP_DIRECTORY) || \
         !l.t.directory || !scr_preload_path_mirror(shown, sizeof(shown)))) \
      return -1; \
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
