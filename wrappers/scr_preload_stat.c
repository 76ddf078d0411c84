/* scr_preload_stat.c - the stat and access wrappers, old (__xstat) and new ABI,
 * through one driver, so that restored files are visible at their original paths. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_wrap.h"

enum stat_kind {
  STAT, LSTAT, FSTATAT, STAT64, LSTAT64, FSTATAT64, STATX,
  XSTAT, LXSTAT, FXSTATAT, XSTAT64, LXSTAT64, FXSTATAT64, ACCESS, FACCESSAT
};

static const char* const stat_names[] = {
  "stat", "lstat", "fstatat", "stat64", "lstat64", "fstatat64", "statx",
  "__xstat", "__lxstat", "__fxstatat", "__xstat64", "__lxstat64", "__fxstatat64", "access", "faccessat"
};

/* one call's arguments besides the path, whichever function it came through */
typedef struct {
  int kind;
  int version;        /* __xstat and friends: the struct stat version */
  int dirfd;
  int flags;          /* the *at and statx flags */
  unsigned int mask;  /* statx */
  int amode;          /* access */
  void* buf;
} stat_call;

static int stat_syscall(const stat_call* c, const char* path, int flags)
{
#if defined(SYS_newfstatat)
  return (int) syscall(SYS_newfstatat, c->dirfd, path, c->buf, flags);
#else
  (void) c; (void) path; (void) flags;
  errno = ENOSYS;
  return -1;
#endif
}

/* the real function of the call's kind on path; the system call when the
 * function cannot be had (reached from inside dlsym on this thread) */
static int stat_real(const stat_call* c, const char* path)
{
  switch (c->kind) {
  case STAT: if (SCR_REAL(stat)) return SCR_REAL(stat)(path, c->buf); break;
  case LSTAT: if (SCR_REAL(lstat)) return SCR_REAL(lstat)(path, c->buf); break;
  case FSTATAT: if (SCR_REAL(fstatat)) return SCR_REAL(fstatat)(c->dirfd, path, c->buf, c->flags); break;
  case STAT64: if (SCR_REAL(stat64)) return SCR_REAL(stat64)(path, c->buf); break;
  case LSTAT64: if (SCR_REAL(lstat64)) return SCR_REAL(lstat64)(path, c->buf); break;
  case FSTATAT64: if (SCR_REAL(fstatat64)) return SCR_REAL(fstatat64)(c->dirfd, path, c->buf, c->flags); break;
  case STATX:
    if (SCR_REAL(statx)) return SCR_REAL(statx)(c->dirfd, path, c->flags, c->mask, c->buf);
    return (int) syscall(SYS_statx, c->dirfd, path, c->flags, c->mask, c->buf);
  case XSTAT: if (SCR_REAL(__xstat)) return SCR_REAL(__xstat)(c->version, path, c->buf); break;
  case LXSTAT: if (SCR_REAL(__lxstat)) return SCR_REAL(__lxstat)(c->version, path, c->buf); break;
  case FXSTATAT:
    if (SCR_REAL(__fxstatat)) return SCR_REAL(__fxstatat)(c->version, c->dirfd, path, c->buf, c->flags);
    break;
  case XSTAT64: if (SCR_REAL(__xstat64)) return SCR_REAL(__xstat64)(c->version, path, c->buf); break;
  case LXSTAT64: if (SCR_REAL(__lxstat64)) return SCR_REAL(__lxstat64)(c->version, path, c->buf); break;
  case FXSTATAT64:
    if (SCR_REAL(__fxstatat64)) return SCR_REAL(__fxstatat64)(c->version, c->dirfd, path, c->buf, c->flags);
    break;
  case ACCESS:
    if (SCR_REAL(access)) return SCR_REAL(access)(path, c->amode);
    return (int) syscall(SYS_faccessat, AT_FDCWD, path, c->amode);
  case FACCESSAT:
    if (SCR_REAL(faccessat)) return SCR_REAL(faccessat)(c->dirfd, path, c->amode, c->flags);
#if defined(SYS_faccessat2)
    return (int) syscall(SYS_faccessat2, c->dirfd, path, c->amode, c->flags);
#else
    errno = ENOSYS;
    return -1;
#endif
  }
  int nofollow = c->kind == LSTAT || c->kind == LSTAT64 || c->kind == LXSTAT || c->kind == LXSTAT64;
  return stat_syscall(c, path, nofollow ? AT_SYMLINK_NOFOLLOW : c->flags);
}

/* the flags the hook sees: the l-forms as AT_SYMLINK_NOFOLLOW */
static int stat_at_flags(const stat_call* c)
{
  switch (c->kind) {
  case LSTAT: case LSTAT64: case LXSTAT: case LXSTAT64: return AT_SYMLINK_NOFOLLOW;
  case FSTATAT: case FSTATAT64: case STATX: case FXSTATAT: case FXSTATAT64: case FACCESSAT: return c->flags;
  default: return 0;
  }
}

/* ask the engine about t; returns 1 when the call is decided (*rc set,
 * errno as the application must see it), 0 to go on with the real call on
 * path (the original or the redirect, errno restored) */
static int stat_ask(const stat_call* c, const scr_preload_target* t, char* redirect, const char** path, int* rc)
{
  int saved_errno = errno, handled = SCR_PRELOAD_PASS, result;
  int is_access = c->kind == ACCESS || c->kind == FACCESSAT;
  if (is_access)
    SCR_PRELOAD_HOOK_CALL(result, scr_preload_hook_access(t, c->amode, stat_at_flags(c), redirect, &handled));
  else
    SCR_PRELOAD_HOOK_CALL(result, scr_preload_hook_stat(t, stat_at_flags(c), redirect, &handled));
  /* a stat hook cannot fill the buffer: it may only refuse */
  if (handled == SCR_PRELOAD_HANDLED && (is_access || result == -1)) {
    SCR_PRELOAD_ERRNO_KEEP(saved_errno, result == -1);
    *rc = result;
    return 1;
  }
  errno = saved_errno;
  if (handled == SCR_PRELOAD_REDIRECT) *path = redirect;
  return 0;
}

static int stat_routed(const scr_preload_ruleset* rules, const stat_call* c, const char* path);

/* a file of a rule: the engine first, as the cache may hold a newer one;
 * then the file system, where a symbolic link at the rule's name may lead
 * into the view */
static SCR_PRELOAD_COLD int stat_matched(const stat_call* c, const scr_preload_lookup* l, const char* path)
{
  char redirect[PATH_MAX], followed[PATH_MAX];
  redirect[0] = '\0';
  int rc;
  if (scr_preload_state_dryrun()) return stat_real(c, path);
  const char* named = path;
  if (stat_ask(c, &l->t, redirect, &path, &rc)) return rc;
  int saved_errno = errno;
  rc = stat_real(c, path);
  if (rc == 0 || errno != ENOENT || path != named) return rc;
  if (!scr_preload_wrap_follow(l->t.rules, c->dirfd, named, !(stat_at_flags(c) & AT_SYMLINK_NOFOLLOW), followed)) {
    /* below a file the view shows: the kernel's lookup stops there */
    if (scr_preload_wrap_below_file(l->t.rules, stat_names[c->kind], c->dirfd, named, 0)) errno = ENOTDIR;
    return rc;
  }
  errno = saved_errno;
  SCR_PRELOAD_FOLLOWED(rc, stat_routed(l->t.rules, c, followed));
  return rc;
}

/* the real call failed with ENOENT or ENOTDIR: a rule directory that the
 * file system does not have may be virtual, or a symbolic link lead into one */
static SCR_PRELOAD_COLD int stat_missing(const scr_preload_ruleset* rules, const stat_call* c, const char* path,
                                        int saved_errno)
{
  int failure = errno;
  scr_preload_lookup l;
  if (!scr_preload_lookup_virtual_directory(&l, rules, stat_names[c->kind], c->dirfd, path)) {
    /* a symbolic link on the way into the view: the call again, there */
    char followed[PATH_MAX];
    if (!scr_preload_wrap_follow(rules, c->dirfd, path, !(stat_at_flags(c) & AT_SYMLINK_NOFOLLOW), followed))
      return -1;
    errno = saved_errno;
    int rc;
    SCR_PRELOAD_FOLLOWED(rc, stat_routed(rules, c, followed));
    return rc;
  }
  errno = saved_errno;
  char redirect[PATH_MAX];
  redirect[0] = '\0';
  const char* target = path;
  int rc;
  if (stat_ask(c, &l.t, redirect, &target, &rc)) return rc;
  if (target == path) {
    errno = failure;
    return -1;
  }
  return stat_real(c, target);
}

static int stat_routed(const scr_preload_ruleset* rules, const stat_call* c, const char* path)
{
  if (!rules) return stat_real(c, path);
  scr_preload_lookup l;
  if (__builtin_expect(scr_preload_lookup_path(&l, rules, stat_names[c->kind], c->dirfd, path,
                                               SCR_PRELOAD_LOOKUP_FILE), 0))
    return stat_matched(c, &l, path);
  int saved_errno = errno;
  int rc = stat_real(c, path);
  if (__builtin_expect(!scr_preload_wrap_missing(rc), 1)) return rc;
  return stat_missing(rules, c, path, saved_errno);
}

/* a relative path from a descriptor the table marks: from a virtual
 * directory's mirror the call is made on the original path, so that a name
 * the view does not show is answered as the file system answers it (".." is
 * the directory the mirror's parent stands for); SCR_PRELOAD_WRAP_MIRRORED */
static SCR_PRELOAD_COLD int stat_mirrored(stat_call* c, const char* path)
{
  char original[PATH_MAX];
  if (scr_preload_wrap_unmirror(c->dirfd, path, original)) {
    c->dirfd = AT_FDCWD;
    return stat_routed(scr_preload_wrap_rules(), c, original);
  }
  return stat_routed(scr_preload_wrap_rules(), c, path);
}

/* the real function at once with no rules, or with a path no rule's file
 * can match unless it fails for a missing name (a rule directory may be
 * virtual); the full lookup otherwise. The call's description is made only
 * off the fast path. */
#define STAT_BODY(name, init, ...) STAT_BODY_AT(name, AT_FDCWD, init, __VA_ARGS__)
#define STAT_BODY_AT(name, dirfd, init, ...) \
  SCR_PRELOAD_WRAP_DIRECTORY_AT(name, dirfd, path, ({ stat_call c = init; stat_mirrored(&c, path); }), \
                                ({ stat_call c = init; stat_missing(rules, &c, path, saved_errno); }), \
                                ({ stat_call c = init; stat_routed(scr_preload_wrap_rules(), &c, path); }), \
                                __VA_ARGS__)

SCR_PRELOAD_WRAPPER int stat(const char* path, struct stat* buf)
{
  STAT_BODY(stat, ((stat_call) { STAT, 0, AT_FDCWD, 0, 0, 0, buf }), path, buf);
}

SCR_PRELOAD_WRAPPER int lstat(const char* path, struct stat* buf)
{
  STAT_BODY(lstat, ((stat_call) { LSTAT, 0, AT_FDCWD, 0, 0, 0, buf }), path, buf);
}

SCR_PRELOAD_WRAPPER int fstatat(int dirfd, const char* path, struct stat* buf, int flags)
{
  STAT_BODY_AT(fstatat, dirfd, ((stat_call) { FSTATAT, 0, dirfd, flags, 0, 0, buf }), dirfd, path, buf, flags);
}

SCR_PRELOAD_WRAPPER int stat64(const char* path, struct stat64* buf)
{
  STAT_BODY(stat64, ((stat_call) { STAT64, 0, AT_FDCWD, 0, 0, 0, buf }), path, buf);
}

SCR_PRELOAD_WRAPPER int lstat64(const char* path, struct stat64* buf)
{
  STAT_BODY(lstat64, ((stat_call) { LSTAT64, 0, AT_FDCWD, 0, 0, 0, buf }), path, buf);
}

SCR_PRELOAD_WRAPPER int fstatat64(int dirfd, const char* path, struct stat64* buf, int flags)
{
  STAT_BODY_AT(fstatat64, dirfd, ((stat_call) { FSTATAT64, 0, dirfd, flags, 0, 0, buf }), dirfd, path, buf, flags);
}

SCR_PRELOAD_WRAPPER int statx(int dirfd, const char* path, int flags, unsigned int mask, struct statx* buf)
{
  STAT_BODY_AT(statx, dirfd, ((stat_call) { STATX, 0, dirfd, flags, mask, 0, buf }), dirfd, path, flags, mask, buf);
}

/* programs built against glibc before 2.33 call these; no header declares
 * them any more */
SCR_PRELOAD_WRAPPER int __xstat(int version, const char* path, struct stat* buf);
SCR_PRELOAD_WRAPPER int __lxstat(int version, const char* path, struct stat* buf);
SCR_PRELOAD_WRAPPER int __fxstatat(int version, int dirfd, const char* path, struct stat* buf, int flags);
SCR_PRELOAD_WRAPPER int __xstat64(int version, const char* path, struct stat64* buf);
SCR_PRELOAD_WRAPPER int __lxstat64(int version, const char* path, struct stat64* buf);
SCR_PRELOAD_WRAPPER int __fxstatat64(int version, int dirfd, const char* path, struct stat64* buf, int flags);

SCR_PRELOAD_WRAPPER int __xstat(int version, const char* path, struct stat* buf)
{
  STAT_BODY(__xstat, ((stat_call) { XSTAT, version, AT_FDCWD, 0, 0, 0, buf }), version, path, buf);
}

SCR_PRELOAD_WRAPPER int __lxstat(int version, const char* path, struct stat* buf)
{
  STAT_BODY(__lxstat, ((stat_call) { LXSTAT, version, AT_FDCWD, 0, 0, 0, buf }), version, path, buf);
}

SCR_PRELOAD_WRAPPER int __fxstatat(int version, int dirfd, const char* path, struct stat* buf, int flags)
{
  STAT_BODY_AT(__fxstatat, dirfd, ((stat_call) { FXSTATAT, version, dirfd, flags, 0, 0, buf }), version, dirfd, path,
               buf, flags);
}

SCR_PRELOAD_WRAPPER int __xstat64(int version, const char* path, struct stat64* buf)
{
  STAT_BODY(__xstat64, ((stat_call) { XSTAT64, version, AT_FDCWD, 0, 0, 0, buf }), version, path, buf);
}

SCR_PRELOAD_WRAPPER int __lxstat64(int version, const char* path, struct stat64* buf)
{
  STAT_BODY(__lxstat64, ((stat_call) { LXSTAT64, version, AT_FDCWD, 0, 0, 0, buf }), version, path, buf);
}

SCR_PRELOAD_WRAPPER int __fxstatat64(int version, int dirfd, const char* path, struct stat64* buf, int flags)
{
  STAT_BODY_AT(__fxstatat64, dirfd, ((stat_call) { FXSTATAT64, version, dirfd, flags, 0, 0, buf }), version, dirfd,
               path, buf, flags);
}

SCR_PRELOAD_WRAPPER int access(const char* path, int amode)
{
  STAT_BODY(access, ((stat_call) { ACCESS, 0, AT_FDCWD, 0, 0, amode, NULL }), path, amode);
}

SCR_PRELOAD_WRAPPER int faccessat(int dirfd, const char* path, int amode, int flags)
{
  STAT_BODY_AT(faccessat, dirfd, ((stat_call) { FACCESSAT, 0, dirfd, flags, 0, amode, NULL }), dirfd, path, amode,
               flags);
}
