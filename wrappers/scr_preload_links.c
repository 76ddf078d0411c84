/* scr_preload_links.c - the wrappers of links: link, linkat, symlink, symlinkat,
 * readlink, readlinkat, so that a cached file's names, and links at rule paths, are a file system's. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_wrap.h"

/* A hard link of a cached file is a second name of it in its checkpoint (the
 * engine decides: scr_preload_hook_link); a symbolic link, like a directory,
 * is the file system's wherever it is made, only the view's names must not
 * be taken (EEXIST); readlink of a name the view shows is EINVAL, as of any
 * file. Each wrapper screens its path(s) first, as the stat wrappers do, so
 * that a call no rule concerns costs what the screen costs. */

/* --- link, linkat */

enum link_kind { LINK, LINKAT };
static const char* const link_names[] = { "link", "linkat" };

typedef struct {
  int kind;
  int olddir;
  const char* from;
  int newdir;
  const char* to;
  int flags;
} link_call;

static int link_real(void* arg)
{
  const link_call* c = arg;
  if (c->kind == LINK) {
    int (*real)(const char*, const char*) = SCR_REAL(link);
    if (real) return real(c->from, c->to);
  } else {
    int (*real)(int, const char*, int, const char*, int) = SCR_REAL(linkat);
    if (real) return real(c->olddir, c->from, c->newdir, c->to, c->flags);
  }
  return (int) syscall(SYS_linkat, c->olddir, c->from, c->newdir, c->to, c->flags);
}

static int link_routed(const scr_preload_ruleset* rules, link_call* c);

/* the real link failed for a missing name (errno as it left it): symbolic
 * links on the way into the view (the last one too for linkat with
 * AT_SYMLINK_FOLLOW) lead to what is linked; otherwise the new name is made
 * as any name on the file system (scr_preload_wrap_make_missing) */
static SCR_PRELOAD_COLD int link_missing(const scr_preload_ruleset* rules, link_call* c, int saved_errno)
{
  char followed[PATH_MAX];
  if (scr_preload_wrap_follow(rules, c->olddir, c->from, (c->flags & AT_SYMLINK_FOLLOW) != 0, followed)) {
    link_call again = *c;
    again.olddir = AT_FDCWD;
    again.from = followed;
    errno = saved_errno;
    int rc;
    SCR_PRELOAD_FOLLOWED(rc, link_routed(rules, &again));
    return rc;
  }
  return scr_preload_wrap_make_missing(rules, link_names[c->kind], c->newdir, c->to, link_real, c, saved_errno);
}

/* neither side a rule's file: the file system's link */
static int link_passed(const scr_preload_ruleset* rules, link_call* c)
{
  int saved_errno = errno;
  int rc = link_real(c);
  if (!scr_preload_wrap_missing(rc)) return rc;
  return link_missing(rules, c, saved_errno);
}

static int link_routed(const scr_preload_ruleset* rules, link_call* c)
{
  if (!rules) return link_real(c);
  /* a side relative to a virtual directory's mirror is its original path */
  char original_from[PATH_MAX], original_to[PATH_MAX], followed[PATH_MAX];
  if (scr_preload_wrap_at_marked(c->olddir) && scr_preload_wrap_unmirror(c->olddir, c->from, original_from)) {
    c->olddir = AT_FDCWD;
    c->from = original_from;
  }
  if (scr_preload_wrap_at_marked(c->newdir) && scr_preload_wrap_unmirror(c->newdir, c->to, original_to)) {
    c->newdir = AT_FDCWD;
    c->to = original_to;
  }
  /* AT_SYMLINK_FOLLOW: a symbolic link (at a rule's name, or on the way) to
   * a cached file links that file */
  if ((c->flags & AT_SYMLINK_FOLLOW) && scr_preload_wrap_follow(rules, c->olddir, c->from, 1, followed)) {
    c->olddir = AT_FDCWD;
    c->from = followed;
  }
  scr_preload_lookup a, b;
  const char* call = link_names[c->kind];
  int from_matches = scr_preload_lookup_path(&a, rules, call, c->olddir, c->from, SCR_PRELOAD_LOOKUP_FILE);
  int to_matches = scr_preload_lookup_path(&b, rules, call, c->newdir, c->to, SCR_PRELOAD_LOOKUP_FILE);
  if ((!from_matches && !to_matches) || scr_preload_state_dryrun()) return link_passed(rules, c);
  if (!from_matches) scr_preload_lookup_resolve(&a, rules, call, c->olddir, c->from);
  if (!to_matches) scr_preload_lookup_resolve(&b, rules, call, c->newdir, c->to);
  int saved_errno = errno, handled = SCR_PRELOAD_PASS, rc;
  SCR_PRELOAD_HOOK_CALL(rc, scr_preload_hook_link(&a.t, &b.t, c->flags, &handled));
  if (handled == SCR_PRELOAD_HANDLED) {
    SCR_PRELOAD_ERRNO_KEEP(saved_errno, rc == -1);
    return rc;
  }
  errno = saved_errno;
  return link_passed(rules, c);
}

/* SCR_PRELOAD_WRAP_DIRECTORY for a call that names two paths: when a rule's
 * file can match neither, libc's call, and `missing` only when it failed for
 * a missing name while the view shows directories (a tail call when both
 * lie outside everything the rules name); `routed` otherwise, and for a
 * path relative to a marked descriptor (SCR_PRELOAD_WRAP_MIRRORED) */
#define LINK_BODY(name, olddir, from, newdir, to, missing, routed, ...) \
  __typeof__(scr_preload_real.name) real = __atomic_load_n(&scr_preload_real.name, __ATOMIC_RELAXED); \
  const scr_preload_ruleset* rules = scr_preload_state_rules(); \
  if (__builtin_expect(rules == NULL && real != NULL, 1)) return real(__VA_ARGS__); \
  int screen_from = real && rules ? scr_preload_lookup_screen(rules, from) : SCR_PRELOAD_EXCLUDE_NONE; \
  int screen_to = screen_from != SCR_PRELOAD_EXCLUDE_NONE ? scr_preload_lookup_screen(rules, to) \
                                                          : SCR_PRELOAD_EXCLUDE_NONE; \
  SCR_PRELOAD_WRAP_MIRRORED(olddir, screen_from, routed); \
  SCR_PRELOAD_WRAP_MIRRORED(newdir, screen_to, routed); \
  if (screen_to == SCR_PRELOAD_EXCLUDE_NONE) return routed; \
  if (__builtin_expect(screen_from == SCR_PRELOAD_EXCLUDE_ALL && screen_to == SCR_PRELOAD_EXCLUDE_ALL, 1)) \
    return real(__VA_ARGS__); \
  int saved_errno = errno; \
  int result = real(__VA_ARGS__); \
  if (__builtin_expect(!scr_preload_wrap_missing(result), 1) || scr_preload_real_is_internal()) return result; \
  return missing

SCR_PRELOAD_WRAPPER int link(const char* from, const char* to)
{
  LINK_BODY(link, AT_FDCWD, from, AT_FDCWD, to,
            ({ link_call c = { LINK, AT_FDCWD, from, AT_FDCWD, to, 0 }; link_missing(rules, &c, saved_errno); }),
            ({ link_call c = { LINK, AT_FDCWD, from, AT_FDCWD, to, 0 }; link_routed(scr_preload_wrap_rules(), &c); }),
            from, to);
}

SCR_PRELOAD_WRAPPER int linkat(int olddir, const char* from, int newdir, const char* to, int flags)
{
  LINK_BODY(linkat, olddir, from, newdir, to,
            ({ link_call c = { LINKAT, olddir, from, newdir, to, flags }; link_missing(rules, &c, saved_errno); }),
            ({ link_call c = { LINKAT, olddir, from, newdir, to, flags };
               link_routed(scr_preload_wrap_rules(), &c); }),
            olddir, from, newdir, to, flags);
}

/* --- symlink, symlinkat: made on the file system, unless the view has the name */

typedef struct {
  int is_at;
  const char* target;
  int dirfd;
  const char* path;
} symlink_call;

static int symlink_real(void* arg)
{
  const symlink_call* c = arg;
  if (!c->is_at) {
    int (*real)(const char*, const char*) = SCR_REAL(symlink);
    if (real) return real(c->target, c->path);
  } else {
    int (*real)(const char*, int, const char*) = SCR_REAL(symlinkat);
    if (real) return real(c->target, c->dirfd, c->path);
  }
  return (int) syscall(SYS_symlinkat, c->target, c->dirfd, c->path);
}

static int symlink_routed(const scr_preload_ruleset* rules, symlink_call* c)
{
  if (!rules) return symlink_real(c);
  char original[PATH_MAX], shown[PATH_MAX];
  if (scr_preload_wrap_at_marked(c->dirfd) && scr_preload_wrap_unmirror(c->dirfd, c->path, original)) {
    c->dirfd = AT_FDCWD;
    c->path = original;
  }
  /* a cached file or another rank's is there, which the file system lacks */
  scr_preload_lookup l;
  if (scr_preload_lookup_shown(&l, rules, c->is_at ? "symlinkat" : "symlink", c->dirfd, c->path, shown)) {
    errno = EEXIST;
    return -1;
  }
  return scr_preload_wrap_make(rules, c->is_at ? "symlinkat" : "symlink", c->dirfd, c->path, symlink_real, c);
}

/* the three expressions of SCR_PRELOAD_WRAP_DIRECTORY_CALL for one symlink
 * call: a name the rules may take is looked up; any other is made on the file
 * system, and looked at only when that failed for a missing name */
#define SYMLINK_BODY(name, is_at, dirfd, ...) \
  SCR_PRELOAD_WRAP_DIRECTORY_CALL(name, -1, dirfd, path, \
                                  ({ symlink_call c = { is_at, target, dirfd, path }; \
                                     symlink_routed(scr_preload_wrap_rules(), &c); }), \
                                  ({ symlink_call c = { is_at, target, dirfd, path }; \
                                     scr_preload_wrap_make_missing(rules, #name, dirfd, path, symlink_real, &c, \
                                                                   saved_errno); }), \
                                  ({ symlink_call c = { is_at, target, dirfd, path }; \
                                     symlink_routed(scr_preload_wrap_rules(), &c); }), \
                                  __VA_ARGS__)

SCR_PRELOAD_WRAPPER int symlink(const char* target, const char* path)
{
  SYMLINK_BODY(symlink, 0, AT_FDCWD, target, path);
}

SCR_PRELOAD_WRAPPER int symlinkat(const char* target, int dirfd, const char* path)
{
  SYMLINK_BODY(symlinkat, 1, dirfd, target, dirfd, path);
}

/* --- readlink, readlinkat and their _FORTIFY_SOURCE forms */

enum readlink_kind { READLINK, READLINKAT, READLINK_CHK, READLINKAT_CHK };
static const char* const readlink_names[] = { "readlink", "readlinkat", "__readlink_chk", "__readlinkat_chk" };

typedef struct {
  int kind;
  int dirfd;
  char* buf;
  size_t size;
  size_t buflen;   /* the _chk forms: the buffer's size as the compiler knew it */
} readlink_call;

static ssize_t readlink_real(const readlink_call* c, const char* path)
{
  switch (c->kind) {
  case READLINK: if (SCR_REAL(readlink)) return SCR_REAL(readlink)(path, c->buf, c->size); break;
  case READLINKAT: if (SCR_REAL(readlinkat)) return SCR_REAL(readlinkat)(c->dirfd, path, c->buf, c->size); break;
  case READLINK_CHK:
    if (SCR_REAL(__readlink_chk)) return SCR_REAL(__readlink_chk)(path, c->buf, c->size, c->buflen);
    break;
  case READLINKAT_CHK:
    if (SCR_REAL(__readlinkat_chk)) return SCR_REAL(__readlinkat_chk)(c->dirfd, path, c->buf, c->size, c->buflen);
    break;
  }
  return (ssize_t) syscall(SYS_readlinkat, c->dirfd, path, c->buf, c->size);
}

static ssize_t readlink_routed(const scr_preload_ruleset* rules, readlink_call* c, const char* path);

/* readlink of a name the view shows: a file or a directory, not a link */
static int readlink_shown(const scr_preload_ruleset* rules, const readlink_call* c, const char* path)
{
  scr_preload_lookup l;
  char shown[PATH_MAX];
  return scr_preload_lookup_shown(&l, rules, readlink_names[c->kind], c->dirfd, path, shown);
}

/* the real readlink failed for a missing name: what the view shows there
 * (EINVAL), below a file it shows (ENOTDIR), or through a symbolic link
 * on the way into the view (the call again, there) */
static SCR_PRELOAD_COLD ssize_t readlink_missing(const scr_preload_ruleset* rules, readlink_call* c,
                                                 const char* path, int saved_errno)
{
  int failure = errno;
  char followed[PATH_MAX];
  if (readlink_shown(rules, c, path)) {
    errno = EINVAL;
    return -1;
  }
  if (failure == ENOENT && scr_preload_wrap_below_file(rules, readlink_names[c->kind], c->dirfd, path, 0)) {
    errno = ENOTDIR;
    return -1;
  }
  if (scr_preload_wrap_follow(rules, c->dirfd, path, 0, followed)) {
    errno = saved_errno;
    readlink_call again = *c;
    again.dirfd = AT_FDCWD;
    ssize_t n;
    SCR_PRELOAD_FOLLOWED(n, readlink_routed(rules, &again, followed));
    return n;
  }
  errno = failure;
  return -1;
}

static ssize_t readlink_routed(const scr_preload_ruleset* rules, readlink_call* c, const char* path)
{
  /* a _chk form given a buffer longer than it is aborts first, as in libc */
  if (!rules || ((c->kind == READLINK_CHK || c->kind == READLINKAT_CHK) && c->size > c->buflen))
    return readlink_real(c, path);
  char original[PATH_MAX];
  if (scr_preload_wrap_at_marked(c->dirfd) && scr_preload_wrap_unmirror(c->dirfd, path, original)) {
    c->dirfd = AT_FDCWD;
    path = original;
  }
  /* a cached file is no link, even where the file system kept one that it
   * replaced (a checkpoint file created at the link's name) */
  if (!scr_preload_state_dryrun() && readlink_shown(rules, c, path)) {
    errno = EINVAL;
    return -1;
  }
  int saved_errno = errno;
  ssize_t n = readlink_real(c, path);
  if (!scr_preload_wrap_missing((int) n)) return n;
  return readlink_missing(rules, c, path, saved_errno);
}

#define READLINK_BODY(name, kind, dirfd, buflen, ...) \
  SCR_PRELOAD_WRAP_DIRECTORY_CALL(name, -1, dirfd, path, \
                                  ({ readlink_call c = { kind, dirfd, buf, size, buflen }; \
                                     readlink_routed(scr_preload_wrap_rules(), &c, path); }), \
                                  ({ readlink_call c = { kind, dirfd, buf, size, buflen }; \
                                     readlink_missing(rules, &c, path, saved_errno); }), \
                                  ({ readlink_call c = { kind, dirfd, buf, size, buflen }; \
                                     readlink_routed(scr_preload_wrap_rules(), &c, path); }), \
                                  __VA_ARGS__)

SCR_PRELOAD_WRAPPER ssize_t readlink(const char* path, char* buf, size_t size)
{
  READLINK_BODY(readlink, READLINK, AT_FDCWD, size, path, buf, size);
}

SCR_PRELOAD_WRAPPER ssize_t readlinkat(int dirfd, const char* path, char* buf, size_t size)
{
  READLINK_BODY(readlinkat, READLINKAT, dirfd, size, dirfd, path, buf, size);
}

/* no header declares them without _FORTIFY_SOURCE */
SCR_PRELOAD_WRAPPER ssize_t __readlink_chk(const char* path, char* buf, size_t size, size_t buflen);
SCR_PRELOAD_WRAPPER ssize_t __readlinkat_chk(int dirfd, const char* path, char* buf, size_t size, size_t buflen);

SCR_PRELOAD_WRAPPER ssize_t __readlink_chk(const char* path, char* buf, size_t size, size_t buflen)
{
  READLINK_BODY(__readlink_chk, READLINK_CHK, AT_FDCWD, buflen, path, buf, size, buflen);
}

SCR_PRELOAD_WRAPPER ssize_t __readlinkat_chk(int dirfd, const char* path, char* buf, size_t size, size_t buflen)
{
  READLINK_BODY(__readlinkat_chk, READLINKAT_CHK, dirfd, buflen, dirfd, path, buf, size, buflen);
}
