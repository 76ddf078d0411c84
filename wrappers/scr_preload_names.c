/* scr_preload_names.c - wrappers that change names, not contents: rename,
 * unlink, rmdir, remove, truncate, mkdir and their *at forms, so the engine's file lists stay exact. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_wrap.h"

/* the calls below are rare next to open and stat, and a directory may be a
 * rule's: relative paths are resolved (one getcwd) whenever rules are loaded */

/* --- rename, renameat, renameat2 */

enum rename_kind { RENAME, RENAMEAT, RENAMEAT2 };
static const char* const rename_names[] = { "rename", "renameat", "renameat2" };

static int rename_real(int kind, int olddir, const char* from, int newdir, const char* to, unsigned int flags)
{
  if (kind == RENAME) {
    int (*real)(const char*, const char*) = SCR_REAL(rename);
    if (real) return real(from, to);
  } else if (kind == RENAMEAT) {
    int (*real)(int, const char*, int, const char*) = SCR_REAL(renameat);
    if (real) return real(olddir, from, newdir, to);
  } else {
    int (*real)(int, const char*, int, const char*, unsigned int) = SCR_REAL(renameat2);
    if (real) return real(olddir, from, newdir, to, flags);
  }
  return (int) syscall(SYS_renameat2, olddir, from, newdir, to, flags);
}

static int rename_routed(int kind, const scr_preload_ruleset* rules, int olddir, const char* from, int newdir,
                         const char* to, unsigned int flags)
{
  if (!rules) return rename_real(kind, olddir, from, newdir, to, flags);
  /* a side relative to a virtual directory's mirror is its original path
   * (scr_preload_wrap.h) */
  char original_from[PATH_MAX], original_to[PATH_MAX];
  if (scr_preload_wrap_at_marked(olddir) && scr_preload_wrap_unmirror(olddir, from, original_from)) {
    olddir = AT_FDCWD;
    from = original_from;
  }
  if (scr_preload_wrap_at_marked(newdir) && scr_preload_wrap_unmirror(newdir, to, original_to)) {
    newdir = AT_FDCWD;
    to = original_to;
  }
  /* the write-temp-then-rename idiom: either side may be the rule's */
  scr_preload_lookup a, b;
  int what = SCR_PRELOAD_LOOKUP_FILE | SCR_PRELOAD_LOOKUP_DIRECTORY;
  int from_matches = scr_preload_lookup_path(&a, rules, rename_names[kind], olddir, from, what);
  int to_matches = scr_preload_lookup_path(&b, rules, rename_names[kind], newdir, to, what);
  if ((!from_matches && !to_matches) || scr_preload_state_dryrun())
    return rename_real(kind, olddir, from, newdir, to, flags);
  if (!from_matches) scr_preload_lookup_resolve(&a, rules, rename_names[kind], olddir, from);
  if (!to_matches) scr_preload_lookup_resolve(&b, rules, rename_names[kind], newdir, to);
  int saved_errno = errno, handled = SCR_PRELOAD_PASS, rc;
  SCR_PRELOAD_HOOK_CALL(rc, scr_preload_hook_rename(&a.t, &b.t, flags, &handled));
  if (handled == SCR_PRELOAD_HANDLED) {
    SCR_PRELOAD_ERRNO_KEEP(saved_errno, rc == -1);
    return rc;
  }
  errno = saved_errno;
  return rename_real(kind, olddir, from, newdir, to, flags);
}

#define NAMES_BODY(name, routed, ...) SCR_PRELOAD_WRAP_INERT(name, routed, __VA_ARGS__)

SCR_PRELOAD_WRAPPER int rename(const char* from, const char* to)
{
  NAMES_BODY(rename, rename_routed(RENAME, scr_preload_wrap_rules(), AT_FDCWD, from, AT_FDCWD, to, 0), from, to);
}

SCR_PRELOAD_WRAPPER int renameat(int olddir, const char* from, int newdir, const char* to)
{
  NAMES_BODY(renameat, rename_routed(RENAMEAT, scr_preload_wrap_rules(), olddir, from, newdir, to, 0), olddir, from,
             newdir, to);
}

SCR_PRELOAD_WRAPPER int renameat2(int olddir, const char* from, int newdir, const char* to, unsigned int flags)
{
  NAMES_BODY(renameat2, rename_routed(RENAMEAT2, scr_preload_wrap_rules(), olddir, from, newdir, to, flags), olddir,
             from, newdir, to, flags);
}

/* --- unlink, unlinkat, rmdir, remove */

enum unlink_kind { UNLINK, UNLINKAT, RMDIR };
static const char* const unlink_names[] = { "unlink", "unlinkat", "rmdir" };

static int unlink_real(int kind, int dirfd, const char* path, int flags)
{
  if (kind == UNLINK) {
    int (*real)(const char*) = SCR_REAL(unlink);
    if (real) return real(path);
  } else if (kind == RMDIR) {
    int (*real)(const char*) = SCR_REAL(rmdir);
    if (real) return real(path);
  } else {
    int (*real)(int, const char*, int) = SCR_REAL(unlinkat);
    if (real) return real(dirfd, path, flags);
  }
  return (int) syscall(SYS_unlinkat, dirfd, path, flags);
}

/* an unlink (not rmdir) that failed for a missing name: a rule directory
 * that exists only in the view is a directory, as unlink(2) says (EISDIR),
 * which is what glibc's remove goes on to rmdir for */
static SCR_PRELOAD_COLD int unlink_missing(const scr_preload_ruleset* rules, int kind, int dirfd, const char* path)
{
  int failure = errno;
  scr_preload_lookup l;
  if (!scr_preload_lookup_virtual_directory(&l, rules, unlink_names[kind], dirfd, path)) return -1;
  char redirect[PATH_MAX];
  int handled = SCR_PRELOAD_PASS, answer;
  SCR_PRELOAD_HOOK_CALL(answer, scr_preload_hook_stat(&l.t, AT_SYMLINK_NOFOLLOW, redirect, &handled));
  (void) answer; /* a redirect means the view shows a directory there */
  errno = handled == SCR_PRELOAD_REDIRECT ? EISDIR : failure;
  return -1;
}

/* flags as unlinkat's: AT_REMOVEDIR for rmdir */
static int unlink_routed(int kind, const scr_preload_ruleset* rules, int dirfd, const char* path, int flags)
{
  if (!rules) return unlink_real(kind, dirfd, path, flags);
  /* relative to a virtual directory's mirror: the original path */
  char original[PATH_MAX];
  if (scr_preload_wrap_at_marked(dirfd) && scr_preload_wrap_unmirror(dirfd, path, original)) {
    dirfd = AT_FDCWD;
    path = original;
  }
  scr_preload_lookup l;
  /* only rmdir-like calls can name a rule directory */
  int what = SCR_PRELOAD_LOOKUP_FILE | ((flags & AT_REMOVEDIR) ? SCR_PRELOAD_LOOKUP_DIRECTORY : 0);
  if (!scr_preload_lookup_path(&l, rules, unlink_names[kind], dirfd, path, what) ||
      scr_preload_state_dryrun()) {
    int rc = unlink_real(kind, dirfd, path, flags);
    /* rmdir looked the directory up above; an unlink may still name one */
    if ((flags & AT_REMOVEDIR) || !scr_preload_wrap_missing(rc)) return rc;
    return unlink_missing(rules, kind, dirfd, path);
  }
  int saved_errno = errno, handled = SCR_PRELOAD_PASS, rc;
  SCR_PRELOAD_HOOK_CALL(rc, scr_preload_hook_unlink(&l.t, flags, &handled));
  if (handled == SCR_PRELOAD_HANDLED) {
    SCR_PRELOAD_ERRNO_KEEP(saved_errno, rc == -1);
    return rc;
  }
  errno = saved_errno;
  return unlink_real(kind, dirfd, path, flags);
}

SCR_PRELOAD_WRAPPER int unlink(const char* path)
{
  SCR_PRELOAD_WRAP_DIRECTORY(unlink, path, unlink_missing(rules, UNLINK, AT_FDCWD, path),
                             unlink_routed(UNLINK, scr_preload_wrap_rules(), AT_FDCWD, path, 0), path);
}

SCR_PRELOAD_WRAPPER int unlinkat(int dirfd, const char* path, int flags)
{
  NAMES_BODY(unlinkat, unlink_routed(UNLINKAT, scr_preload_wrap_rules(), dirfd, path, flags), dirfd, path, flags);
}

SCR_PRELOAD_WRAPPER int rmdir(const char* path)
{
  NAMES_BODY(rmdir, unlink_routed(RMDIR, scr_preload_wrap_rules(), AT_FDCWD, path, AT_REMOVEDIR), path);
}

/* glibc's remove unlinks, then removes the directory on EISDIR, through its
 * internal names, which no wrapper sees: the same through the wrappers (a
 * rule directory that exists only in the view says EISDIR to unlink too) */
static int remove_routed(const char* path)
{
  if (unlink(path) == 0) return 0;
  if (errno != EISDIR) return -1;
  return rmdir(path);
}

SCR_PRELOAD_WRAPPER int remove(const char* path)
{
  NAMES_BODY(remove, remove_routed(path), path);
}

/* --- truncate, truncate64 */

static int truncate_real(int is64, const char* path, off64_t length)
{
  if (!is64) {
    int (*real)(const char*, off_t) = SCR_REAL(truncate);
    if (real) return real(path, (off_t) length);
  } else {
    int (*real)(const char*, off64_t) = SCR_REAL(truncate64);
    if (real) return real(path, length);
  }
  errno = ENOSYS;
  return -1;
}

static int truncate_routed(int is64, const scr_preload_ruleset* rules, const char* path, off64_t length)
{
  if (!rules) return truncate_real(is64, path, length);
  scr_preload_lookup l;
  if (!scr_preload_lookup_path(&l, rules, is64 ? "truncate64" : "truncate", AT_FDCWD, path,
                               SCR_PRELOAD_LOOKUP_FILE) || scr_preload_state_dryrun())
    return truncate_real(is64, path, length);
  int saved_errno = errno, handled = SCR_PRELOAD_PASS, rc;
  SCR_PRELOAD_HOOK_CALL(rc, scr_preload_hook_truncate(&l.t, length, &handled));
  if (handled == SCR_PRELOAD_HANDLED) {
    SCR_PRELOAD_ERRNO_KEEP(saved_errno, rc == -1);
    return rc;
  }
  errno = saved_errno;
  return truncate_real(is64, path, length);
}

SCR_PRELOAD_WRAPPER int truncate(const char* path, off_t length)
{
  SCR_PRELOAD_WRAP_FILE(truncate, path, truncate_routed(0, scr_preload_wrap_rules(), path, length), path, length);
}

SCR_PRELOAD_WRAPPER int truncate64(const char* path, off64_t length)
{
  SCR_PRELOAD_WRAP_FILE(truncate64, path, truncate_routed(1, scr_preload_wrap_rules(), path, length), path,
                        length);
}

/* --- mkdir, mkdirat: made on the file system, where every rank sees them */

typedef struct {
  int is_at;
  int dirfd;
  const char* path;
  mode_t mode;
} mkdir_call;

static int mkdir_real(void* arg)
{
  const mkdir_call* c = arg;
  if (!c->is_at) {
    int (*real)(const char*, mode_t) = SCR_REAL(mkdir);
    if (real) return real(c->path, c->mode);
  } else {
    int (*real)(int, const char*, mode_t) = SCR_REAL(mkdirat);
    if (real) return real(c->dirfd, c->path, c->mode);
  }
  return (int) syscall(SYS_mkdirat, c->dirfd, c->path, c->mode);
}

/* the real mkdir; below a rule directory that exists only in the view,
 * that one is made on the file system first, unless the name is a file the
 * view shows (a cached checkpoint file: EEXIST, as on a file system) or
 * lies below one (ENOTDIR) */
static int mkdir_passed(const scr_preload_ruleset* rules, int is_at, int dirfd, const char* path, mode_t mode)
{
  mkdir_call c = { is_at, dirfd, path, mode };
  if (!rules) return mkdir_real(&c);
  return scr_preload_wrap_make(rules, is_at ? "mkdirat" : "mkdir", dirfd, path, mkdir_real, &c);
}

static int mkdir_routed(int is_at, const scr_preload_ruleset* rules, int dirfd, const char* path, mode_t mode)
{
  if (!rules) return mkdir_passed(NULL, is_at, dirfd, path, mode);
  /* in a virtual directory's mirror: the directory is made at its original
   * path, which materializes the virtual one (mkdir_passed) */
  char original[PATH_MAX];
  if (scr_preload_wrap_at_marked(dirfd) && scr_preload_wrap_unmirror(dirfd, path, original)) {
    dirfd = AT_FDCWD;
    path = original;
  }
  scr_preload_lookup l;
  /* a file name too: a cached file there makes it EEXIST, which the file
   * system, holding the directory but not the file, cannot say */
  if (!scr_preload_lookup_path(&l, rules, is_at ? "mkdirat" : "mkdir", dirfd, path,
                               SCR_PRELOAD_LOOKUP_FILE | SCR_PRELOAD_LOOKUP_DIRECTORY) ||
      scr_preload_state_dryrun())
    return mkdir_passed(rules, is_at, dirfd, path, mode);
  int saved_errno = errno, handled = SCR_PRELOAD_PASS, rc;
  SCR_PRELOAD_HOOK_CALL(rc, scr_preload_hook_mkdir(&l.t, mode, &handled));
  if (handled == SCR_PRELOAD_HANDLED) {
    SCR_PRELOAD_ERRNO_KEEP(saved_errno, rc == -1);
    return rc;
  }
  errno = saved_errno;
  return mkdir_passed(rules, is_at, dirfd, path, mode);
}

SCR_PRELOAD_WRAPPER int mkdir(const char* path, mode_t mode)
{
  NAMES_BODY(mkdir, mkdir_routed(0, scr_preload_wrap_rules(), AT_FDCWD, path, mode), path, mode);
}

SCR_PRELOAD_WRAPPER int mkdirat(int dirfd, const char* path, mode_t mode)
{
  NAMES_BODY(mkdirat, mkdir_routed(1, scr_preload_wrap_rules(), dirfd, path, mode), dirfd, path, mode);
}
