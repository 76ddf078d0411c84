/* scr_preload_materialize.c - calls the layer does not route but that need a
 * rule directory on the file system: chdir, and mkstemp and its kin. */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
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

/* dir, if it names a rule directory the view shows, exists on the file
 * system afterwards; keeps errno */
static void materialize(const char* call, const char* dir)
{
  const scr_preload_ruleset* rules = scr_preload_wrap_rules();
  if (!rules || scr_preload_state_dryrun() || scr_preload_lookup_screen(rules, dir) == SCR_PRELOAD_EXCLUDE_ALL)
    return;
  int saved_errno = errno;
  scr_preload_lookup l;
  if (scr_preload_lookup_path(&l, rules, call, AT_FDCWD, dir, SCR_PRELOAD_LOOKUP_DIRECTORY)) {
    int handled = SCR_PRELOAD_PASS, rc;
    SCR_PRELOAD_HOOK_CALL(rc, scr_preload_hook_materialize(&l.t, &handled));
    (void) rc; /* the real call reports what is still missing */
  }
  errno = saved_errno;
}

/* the same for the directory a template names ("dir/nameXXXXXX"); one
 * without a directory is relative to the current one, which exists */
static void materialize_parent(const char* call, const char* template)
{
  __asm__("" : "+r"(template));
  const char* slash = template ? strrchr(template, '/') : NULL;
  if (!slash) return;
  char dir[PATH_MAX];
  size_t n = slash == template ? 1 : (size_t) (slash - template);
  if (n >= sizeof(dir)) return;
  memcpy(dir, template, n);
  dir[n] = '\0';
  materialize(call, dir);
}

SCR_PRELOAD_WRAPPER int chdir(const char* path)
{
  SCR_PRELOAD_WRAP_INERT(chdir, (materialize("chdir", path), real ? real(path) : (int) syscall(SYS_chdir, path)),
                         path);
}

/* mk*temp: the template's directory first; without the real function (only
 * while dlsym runs) the call fails as unsupported */
#define TEMP_BODY(name, fail, template, ...) \
  SCR_PRELOAD_WRAP_INERT(name, (materialize_parent(#name, template), \
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
