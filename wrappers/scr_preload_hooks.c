/* scr_preload_hooks.c - the hooks hand each call to the engine once MPI_Init
 * loaded it; before that (and outside MPI) they route nothing and let the real call go ahead. */
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_preload_child.h"
#include "scr_preload_engine.h"
#include "scr_preload_hooks.h"

const struct scr_preload_engine* scr_preload_engine_active = NULL;

/* The engine module links the MPI library, which this one must not: an
 * unrelated process that inherits LD_PRELOAD would otherwise load MPI. It
 * lives next to this library and is opened by the first MPI_Init; the child
 * view's module, beside it too, in a rank's child process by its first call
 * on a path the rules match. */
const struct scr_preload_engine* scr_preload_engine_module(const char* name, const char* symbol)
{
  Dl_info info;
  char path[PATH_MAX];
  if (!dladdr((void*) &scr_preload_engine_module, &info) || !info.dli_fname) return NULL;
  const char* slash = strrchr(info.dli_fname, '/');
  int dir_length = slash ? (int) (slash - info.dli_fname) : 1;
  snprintf(path, sizeof(path), "%.*s/%s", dir_length, slash ? info.dli_fname : ".", name);
  void* module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!module) {
    scr_err("cannot load the preload engine %s: %s: checkpoint files are not protected", path, dlerror());
    return NULL;
  }
  const struct scr_preload_engine* engine = dlsym(module, symbol);
  if (!engine) scr_err("%s has no %s: reinstall SCR", path, symbol);
  return engine;
}

/* the engine in force; in a rank's child, the view is loaded at the first
 * hook call (only a path the rules match gets here) */
static const struct scr_preload_engine* hook_engine(void)
{
  const struct scr_preload_engine* engine = __atomic_load_n(&scr_preload_engine_active, __ATOMIC_ACQUIRE);
  if (__builtin_expect(!engine && __atomic_load_n(&scr_preload_child_pending, __ATOMIC_RELAXED), 0))
    engine = scr_preload_child_engine();
  return engine;
}

/* the engine's answer when it is loaded */
#define HOOK_DISPATCH(name, ...) \
  do { \
    const struct scr_preload_engine* engine_ = hook_engine(); \
    if (engine_) return engine_->name(__VA_ARGS__); \
  } while (0)

/* "PRELOAD=pattern" of the rule a target matched, for the messages */
static const char* hook_pattern(const scr_preload_target* t)
{
  const scr_preload_rule* rule = scr_preload_rules_at(t->rules, t->match.rule);
  return rule ? rule->pattern : "(none)";
}

/* scr_dbg keeps errno; the hooks must not change it when they pass */
#define HOOK_SAY(...) scr_dbg(2, __VA_ARGS__)

int scr_preload_hook_open(const scr_preload_target* target, int flags, mode_t mode, char* redirect,
                          void** file, int* handled)
{
  HOOK_DISPATCH(open, target, flags, mode, redirect, file, handled);
  (void) redirect;
  (void) file;
  HOOK_SAY("preload hook: %s %s flags 0%o mode 0%o (PRELOAD=%s): not handled", target->call, target->path,
           (unsigned) flags, (unsigned) mode, hook_pattern(target));
  *handled = SCR_PRELOAD_PASS;
  return -1;
}

int scr_preload_hook_close(int fd, void* file, int rc, int* handled)
{
  HOOK_DISPATCH(close, fd, file, rc, handled);
  (void) file;
  HOOK_SAY("preload hook: last close of a matching file (descriptor %d, result %d): not handled", fd, rc);
  *handled = SCR_PRELOAD_PASS;
  return rc;
}

int scr_preload_hook_rename(const scr_preload_target* from, const scr_preload_target* to, unsigned int flags,
                            int* handled)
{
  HOOK_DISPATCH(rename, from, to, flags, handled);
  HOOK_SAY("preload hook: %s %s -> %s flags %u: not handled", from->call, from->path ? from->path : "(unresolved)",
           to->path ? to->path : "(unresolved)", flags);
  *handled = SCR_PRELOAD_PASS;
  return -1;
}

int scr_preload_hook_link(const scr_preload_target* from, const scr_preload_target* to, int flags, int* handled)
{
  HOOK_DISPATCH(link, from, to, flags, handled);
  HOOK_SAY("preload hook: %s %s -> %s flags 0x%x: not handled", from->call, from->path ? from->path : "(unresolved)",
           to->path ? to->path : "(unresolved)", (unsigned) flags);
  *handled = SCR_PRELOAD_PASS;
  return -1;
}

int scr_preload_hook_unlink(const scr_preload_target* target, int at_flags, int* handled)
{
  HOOK_DISPATCH(unlink, target, at_flags, handled);
  HOOK_SAY("preload hook: %s %s flags 0x%x (PRELOAD=%s): not handled", target->call, target->path,
           (unsigned) at_flags, hook_pattern(target));
  *handled = SCR_PRELOAD_PASS;
  return -1;
}

int scr_preload_hook_truncate(const scr_preload_target* target, off64_t length, int* handled)
{
  HOOK_DISPATCH(truncate, target, length, handled);
  HOOK_SAY("preload hook: %s %s to %lld bytes (PRELOAD=%s): not handled", target->call, target->path,
           (long long) length, hook_pattern(target));
  *handled = SCR_PRELOAD_PASS;
  return -1;
}

int scr_preload_hook_mkdir(const scr_preload_target* target, mode_t mode, int* handled)
{
  HOOK_DISPATCH(mkdir, target, mode, handled);
  HOOK_SAY("preload hook: %s %s mode 0%o (directory of PRELOAD=%s): not handled", target->call, target->path,
           (unsigned) mode, hook_pattern(target));
  *handled = SCR_PRELOAD_PASS;
  return -1;
}

int scr_preload_hook_materialize(const scr_preload_target* target, int* handled)
{
  HOOK_DISPATCH(materialize, target, handled);
  HOOK_SAY("preload hook: %s needs %s on the file system (directory of PRELOAD=%s): not handled", target->call,
           target->path, hook_pattern(target));
  *handled = SCR_PRELOAD_PASS;
  return -1;
}

int scr_preload_hook_stat(const scr_preload_target* target, int at_flags, char* redirect, int* handled)
{
  HOOK_DISPATCH(stat, target, at_flags, redirect, handled);
  (void) redirect;
  HOOK_SAY("preload hook: %s %s flags 0x%x (%s of PRELOAD=%s): not handled", target->call, target->path,
           (unsigned) at_flags, target->directory ? "directory" : "file", hook_pattern(target));
  *handled = SCR_PRELOAD_PASS;
  return -1;
}

int scr_preload_hook_access(const scr_preload_target* target, int amode, int at_flags, char* redirect,
                            int* handled)
{
  HOOK_DISPATCH(access, target, amode, at_flags, redirect, handled);
  (void) redirect;
  HOOK_SAY("preload hook: %s %s mode %d flags 0x%x (%s of PRELOAD=%s): not handled", target->call, target->path,
           amode, (unsigned) at_flags, target->directory ? "directory" : "file", hook_pattern(target));
  *handled = SCR_PRELOAD_PASS;
  return -1;
}

DIR* scr_preload_hook_opendir(const scr_preload_target* target, char* redirect, void** dir, int* handled)
{
  HOOK_DISPATCH(opendir, target, redirect, dir, handled);
  (void) redirect;
  (void) dir;
  HOOK_SAY("preload hook: %s %s (directory of PRELOAD=%s): not handled", target->call, target->path,
           hook_pattern(target));
  *handled = SCR_PRELOAD_PASS;
  return NULL;
}

struct dirent64* scr_preload_hook_readdir(DIR* stream, void* dir, int* handled)
{
  HOOK_DISPATCH(readdir, stream, dir, handled);
  (void) stream;
  (void) dir;
  *handled = SCR_PRELOAD_PASS;
  return NULL;
}

void scr_preload_hook_rewinddir(DIR* stream, void* dir)
{
  const struct scr_preload_engine* engine = hook_engine();
  if (engine) engine->rewinddir(stream, dir);
}

int scr_preload_hook_closedir(DIR* stream, void* dir, int* handled)
{
  HOOK_DISPATCH(closedir, stream, dir, handled);
  (void) stream;
  (void) dir;
  *handled = SCR_PRELOAD_PASS;
  return 0;
}
