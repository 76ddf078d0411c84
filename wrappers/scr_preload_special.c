/* scr_preload_special.c - mkfifo, mkfifoat, mknod, mknodat: special files are the file system's,
 * as directories and symbolic links are, also in a rule directory that exists only in the view. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_wrap.h"

/* A FIFO or device node holds no checkpoint bytes: no rule routes it. The
 * real call makes it; where it failed for a missing directory that the view
 * shows (a restored checkpoint's directory the file system lacks), that
 * directory is made on the file system first, and a name the view shows (a
 * cached file) is EEXIST, as it is on a file system. */

enum special_kind { MKFIFO, MKFIFOAT, MKNOD, MKNODAT };
static const char* const special_names[] = { "mkfifo", "mkfifoat", "mknod", "mknodat" };

typedef struct {
  enum special_kind kind;
  int dirfd;
  const char* path;
  mode_t mode;
  dev_t dev;
} special_call;

static int special_real(void* arg)
{
  const special_call* c = arg;
  switch (c->kind) {
  case MKFIFO: if (SCR_REAL(mkfifo)) return SCR_REAL(mkfifo)(c->path, c->mode); break;
  case MKFIFOAT: if (SCR_REAL(mkfifoat)) return SCR_REAL(mkfifoat)(c->dirfd, c->path, c->mode); break;
  case MKNOD: if (SCR_REAL(mknod)) return SCR_REAL(mknod)(c->path, c->mode, c->dev); break;
  case MKNODAT: if (SCR_REAL(mknodat)) return SCR_REAL(mknodat)(c->dirfd, c->path, c->mode, c->dev); break;
  }
  mode_t mode = c->kind == MKFIFO || c->kind == MKFIFOAT ? (c->mode & ~(mode_t) S_IFMT) | S_IFIFO : c->mode;
  return (int) syscall(SYS_mknodat, c->dirfd, c->path, mode, c->dev);
}

static int special_routed(const scr_preload_ruleset* rules, special_call* c)
{
  if (!rules) return special_real(c);
  char original[PATH_MAX], shown[PATH_MAX];
  if (scr_preload_wrap_at_marked(c->dirfd) && scr_preload_wrap_unmirror(c->dirfd, c->path, original)) {
    c->dirfd = AT_FDCWD;
    c->path = original;
  }
  scr_preload_lookup l;
  if (scr_preload_lookup_shown(&l, rules, special_names[c->kind], c->dirfd, c->path, shown)) {
    errno = EEXIST;
    return -1;
  }
  return scr_preload_wrap_make(rules, special_names[c->kind], c->dirfd, c->path, special_real, c);
}

/* as SYMLINK_BODY (scr_preload_links.c): a name the rules may take is looked
 * up; any other is made on the file system, and looked at only when that
 * failed for a missing name */
#define SPECIAL_BODY(name, kind, dirfd, mode, dev, ...) \
  SCR_PRELOAD_WRAP_DIRECTORY_CALL(name, -1, dirfd, path, \
                                  ({ special_call c = { kind, dirfd, path, mode, dev }; \
                                     special_routed(scr_preload_wrap_rules(), &c); }), \
                                  ({ special_call c = { kind, dirfd, path, mode, dev }; \
                                     scr_preload_wrap_make_missing(rules, #name, dirfd, path, special_real, &c, \
                                                                   saved_errno); }), \
                                  ({ special_call c = { kind, dirfd, path, mode, dev }; \
                                     special_routed(scr_preload_wrap_rules(), &c); }), \
                                  __VA_ARGS__)

SCR_PRELOAD_WRAPPER int mkfifo(const char* path, mode_t mode)
{
  SPECIAL_BODY(mkfifo, MKFIFO, AT_FDCWD, mode, 0, path, mode);
}

SCR_PRELOAD_WRAPPER int mkfifoat(int dirfd, const char* path, mode_t mode)
{
  SPECIAL_BODY(mkfifoat, MKFIFOAT, dirfd, mode, 0, dirfd, path, mode);
}

SCR_PRELOAD_WRAPPER int mknod(const char* path, mode_t mode, dev_t dev)
{
  SPECIAL_BODY(mknod, MKNOD, AT_FDCWD, mode, dev, path, mode, dev);
}

SCR_PRELOAD_WRAPPER int mknodat(int dirfd, const char* path, mode_t mode, dev_t dev)
{
  SPECIAL_BODY(mknodat, MKNODAT, dirfd, mode, dev, dirfd, path, mode, dev);
}
