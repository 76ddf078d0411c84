/* scr_preload_glob.c - glob(3) through the wrapped directory and stat functions,
 * so that a pattern finds the checkpoint files and directories the view shows. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <sys/stat.h>
#include "scr_preload_wrap.h"

/* glibc's glob reads directories and stats names through internal calls no
 * wrapper sees, so a pattern would find only what the file system holds
 * (an application that looks for its newest checkpoint with glob("ckpt.*")
 * would miss the cached ones). GLOB_ALTDIRFUNC hands glob the wrapped
 * functions instead, while virtual directories are shown; a call that brings
 * its own GLOB_ALTDIRFUNC functions is left alone. */

static void* glob_opendir(const char* path) { return opendir(path); }
static struct dirent* glob_readdir(void* dir) { return readdir(dir); }
static struct dirent64* glob_readdir64(void* dir) { return readdir64(dir); }
static void glob_closedir(void* dir) { closedir(dir); }

/* the layer's functions, unless the caller has its own or nothing is shown */
#define GLOB_ROUTED(name, glob_type, readdir_function, stat_function, lstat_function) \
  static int glob_routed_##name(int (*real)(const char*, int, int (*)(const char*, int), glob_type*), \
                                const char* pattern, int flags, int (*errfunc)(const char*, int), glob_type* pglob) \
  { \
    if (!real) { \
      errno = ENOSYS; \
      return GLOB_ABORTED; \
    } \
    if ((flags & GLOB_ALTDIRFUNC) || !pglob || !scr_preload_wrap_rules() || \
        !__atomic_load_n(&scr_preload_hot.directories, __ATOMIC_RELAXED)) \
      return real(pattern, flags, errfunc, pglob); \
    pglob->gl_opendir = glob_opendir; \
    pglob->gl_readdir = readdir_function; \
    pglob->gl_closedir = glob_closedir; \
    pglob->gl_stat = stat_function; \
    pglob->gl_lstat = lstat_function; \
    return real(pattern, flags | GLOB_ALTDIRFUNC, errfunc, pglob); \
  }

GLOB_ROUTED(glob, glob_t, glob_readdir, stat, lstat)
GLOB_ROUTED(glob64, glob64_t, glob_readdir64, stat64, lstat64)

#define GLOB_BODY(name) \
  SCR_PRELOAD_WRAP_INERT(name, glob_routed_##name(real, pattern, flags, errfunc, pglob), pattern, flags, errfunc, pglob)

SCR_PRELOAD_WRAPPER int glob(const char* pattern, int flags, int (*errfunc)(const char*, int), glob_t* pglob)
{
  GLOB_BODY(glob);
}

SCR_PRELOAD_WRAPPER int glob64(const char* pattern, int flags, int (*errfunc)(const char*, int), glob64_t* pglob)
{
  GLOB_BODY(glob64);
}
