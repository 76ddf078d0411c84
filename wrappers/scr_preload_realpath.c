/* scr_preload_realpath.c - realpath and canonicalize_file_name of paths that
 * exist only in the view: glibc resolves them through an lstat no wrapper sees. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "scr_preload_wrap.h"

/* the normal path, with its longest part the file system has resolved by
 * the real realpath (symbolic links above the prefix directory), the rest
 * as it stands (the view has no links); into resolved, or malloc'd */
static char* realpath_compose(char* (*real)(const char*, char*), const char* normal, char* resolved)
{
  char head[PATH_MAX], known[PATH_MAX];
  size_t length = strlen(normal);
  if (length >= sizeof(head)) return NULL;
  memcpy(head, normal, length + 1);
  const char* rest = NULL;
  for (;;) {
    char* slash = strrchr(head, '/');
    if (!slash) return NULL;
    if (slash == head) {
      strcpy(known, "/");
      rest = normal + 1;
      break;
    }
    *slash = '\0';
    if (real(head, known)) {
      rest = normal + (slash - head) + 1;
      break;
    }
  }
  char out[PATH_MAX];
  int n = snprintf(out, sizeof(out), "%s%s%s", known, strcmp(known, "/") == 0 ? "" : "/", rest);
  if (n < 0 || (size_t) n >= sizeof(out)) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  if (!resolved) return strdup(out);
  memcpy(resolved, out, (size_t) n + 1);
  return resolved;
}

/* the real answer, unless it is that path is missing and the view shows it */
static char* realpath_routed(char* (*real)(const char*, char*), const char* call, const char* path, char* resolved)
{
  char* answer = real(path, resolved);
  if (answer || (errno != ENOENT && errno != ENOTDIR)) return answer;
  const scr_preload_ruleset* rules = scr_preload_wrap_rules();
  if (!rules || scr_preload_lookup_screen(rules, path) == SCR_PRELOAD_EXCLUDE_ALL)
    return NULL;
  int failure = errno;
  scr_preload_lookup l;
  char shown[PATH_MAX];
  answer = scr_preload_lookup_shown(&l, rules, call, AT_FDCWD, path, shown) ? realpath_compose(real, l.path, resolved)
                                                                             : NULL;
  /* a symbolic link on the way into the view, which glibc could not follow */
  char followed[PATH_MAX];
  if (!answer && scr_preload_wrap_follow(rules, AT_FDCWD, path, 1, followed) &&
      scr_preload_lookup_shown(&l, rules, call, AT_FDCWD, followed, shown))
    answer = realpath_compose(real, l.path, resolved);
  if (!answer) errno = failure;
  return answer;
}

static char* realpath_missing(void)
{
  errno = ENOSYS;
  return NULL;
}

SCR_PRELOAD_WRAPPER char* realpath(const char* path, char* resolved)
{
  SCR_PRELOAD_WRAP_INERT(realpath, (real ? realpath_routed(real, "realpath", path, resolved) : realpath_missing()),
                         path, resolved);
}

/* realpath with a buffer of its own, as glibc defines it */
SCR_PRELOAD_WRAPPER char* canonicalize_file_name(const char* path)
{
  char* (*resolve)(const char*, char*) = SCR_REAL(realpath);
  SCR_PRELOAD_WRAP_INERT(canonicalize_file_name,
                         (resolve ? realpath_routed(resolve, "canonicalize_file_name", path, NULL) : realpath_missing()),
                         path);
}
