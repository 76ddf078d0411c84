/* scr_preload_exec.c - processes started with an environment of the program's choosing
 * (execve, execvpe, execle, fexecve, execveat, posix_spawn[p]) still see the rank's files. */
#include "config.h"
#include <dlfcn.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_preload_child.h"
#include "scr_preload_wrap.h"

/* A rank's children see its checkpoint files through two variables they
 * inherit: LD_PRELOAD, which loads this library, and SCR_PRELOAD_PARENT
 * (scr_preload_child.c). A program that passes an environment of its own
 * (Python's subprocess with env=, os.spawnve, a shell's `env -i`) drops
 * both, and its child found ENOENT where the rank has a file. To the
 * program's author the files are on the file system, whatever the
 * environment: so the two are added to the one given, and nothing else of
 * it changes. Only where there is a view to show (this process has the
 * variable); a library already named in LD_PRELOAD under its own file name
 * (libscr_preload*) is not added again.
 *
 * execve may run in a vfork child (posix_spawn's, CPython's subprocess),
 * which shares the parent's memory while the parent waits: the new list is
 * made on the stack, never with malloc, sized to what it holds (a thread
 * with a small stack pays nothing when nothing is added), up to
 * EXEC_STACK_ENTRIES entries; a longer environment is passed as it is. */
#define EXEC_STACK_ENTRIES 4096
#define EXEC_STACK_TEXT (4 * PATH_MAX + 65536)
#define EXEC_PRELOAD_NAME "LD_PRELOAD="
#define EXEC_PARENT_NAME SCR_PRELOAD_PARENT_VARIABLE "="

extern char** environ;

/* what LD_PRELOAD must hold for this library: its file, found once where
 * the loader may be asked safely. In a sanitizer build a child that is not
 * instrumented needs the runtime too (README, Sanitizers): AddressSanitizer's
 * ahead of the library (it checks that it comes first), ThreadSanitizer's
 * right behind it, with libscr_preload_tsan.so from beside it. */
static char exec_library[3 * PATH_MAX];

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* the file of the sanitizer's runtime, "" when not found */
static const char* exec_runtime(void)
{
#if defined(__SANITIZE_ADDRESS__)
  void* init = dlsym(RTLD_DEFAULT, "__asan_init");
#else
  void* init = dlsym(RTLD_DEFAULT, "__tsan_init");
#endif
  Dl_info runtime;
  if (!init || !dladdr(init, &runtime) || !runtime.dli_fname || strlen(runtime.dli_fname) >= PATH_MAX) return "";
  return runtime.dli_fname;
}
#endif

void scr_preload_exec_prepare(void)
{
  Dl_info info;
  if (exec_library[0] || !dladdr((void*) scr_preload_exec_prepare, &info) || !info.dli_fname) return;
  const char* library = info.dli_fname;
  if (strlen(library) >= PATH_MAX) return;
#if defined(__SANITIZE_ADDRESS__)
  const char* runtime = exec_runtime();
  snprintf(exec_library, sizeof(exec_library), "%s%s%s", runtime, runtime[0] ? ":" : "", library);
#elif defined(__SANITIZE_THREAD__)
  const char* runtime = exec_runtime();
  const char* slash = strrchr(library, '/');
  if (runtime[0] && slash)
    snprintf(exec_library, sizeof(exec_library), "%s:%s:%.*s/libscr_preload_tsan.so", library, runtime,
             (int) (slash - library), library);
  else
    snprintf(exec_library, sizeof(exec_library), "%s", library);
#else
  snprintf(exec_library, sizeof(exec_library), "%s", library);
#endif
}

/* the entry of envp that sets name (with its '='), or NULL */
static const char* exec_find(char* const envp[], const char* name)
{
  size_t n = strlen(name);
  for (size_t i = 0; envp[i]; i++)
    if (strncmp(envp[i], name, n) == 0) return envp[i];
  return NULL;
}

/* 1 when the LD_PRELOAD value names a libscr_preload library */
static int exec_preloads_us(const char* value)
{
  while (*value) {
    size_t n = strcspn(value, ": ");
    const char* base = value;
    for (const char* p = value; p < value + n; p++)
      if (*p == '/') base = p + 1;
    if ((size_t) (value + n - base) >= strlen("libscr_preload") && strncmp(base, "libscr_preload", 14) == 0) return 1;
    value += n;
    value += strspn(value, ": ");
  }
  return 0;
}

/* What the list passed as envp lacks (a first pass, nothing written): 0 when
 * it is to be passed as it is; else its entries in *count and the bytes the
 * added text needs in *text_size */
static int exec_plan(char* const envp[], size_t* count, size_t* text_size)
{
  const char* parent = getenv(SCR_PRELOAD_PARENT_VARIABLE);
  if (!envp || envp == environ || !parent || !scr_preload_state_rules() || !exec_library[0]) return 0;
  const char* their_preload = exec_find(envp, EXEC_PRELOAD_NAME);
  int add_parent = exec_find(envp, EXEC_PARENT_NAME) == NULL;
  int add_library = !their_preload || !exec_preloads_us(their_preload + strlen(EXEC_PRELOAD_NAME));
  if (!add_parent && !add_library) return 0;
  size_t n = 0;
  while (envp[n]) n++;
  size_t text = (add_library ? strlen(EXEC_PRELOAD_NAME) + (their_preload ? strlen(their_preload) : 0) + 1 +
                                   strlen(exec_library) + 1
                             : 0) +
                (add_parent ? strlen(EXEC_PARENT_NAME) + strlen(parent) + 1 : 0);
  if (n + 3 > EXEC_STACK_ENTRIES || text > EXEC_STACK_TEXT) return 0;
  *count = n;
  *text_size = text;
  return 1;
}

/* the list exec_plan asked for, in list (count + 3 entries) and text */
static char* const* exec_build(char* const envp[], size_t count, char** list, char* text, size_t size)
{
  const char* parent = getenv(SCR_PRELOAD_PARENT_VARIABLE);
  const char* their_preload = exec_find(envp, EXEC_PRELOAD_NAME);
  int add_parent = exec_find(envp, EXEC_PARENT_NAME) == NULL;
  int add_library = !their_preload || !exec_preloads_us(their_preload + strlen(EXEC_PRELOAD_NAME));
  size_t used = 0, k = 0;
  for (size_t i = 0; i < count; i++)
    if (!(add_library && envp[i] == their_preload)) list[k++] = envp[i];
  if (add_library) {
    const char* theirs = their_preload ? their_preload + strlen(EXEC_PRELOAD_NAME) : "";
    int n = snprintf(text, size, "%s%s%s%s", EXEC_PRELOAD_NAME, theirs, theirs[0] ? ":" : "", exec_library);
    if (n < 0 || (size_t) n >= size) return envp;
    list[k++] = text;
    used = (size_t) n + 1;
  }
  if (add_parent) {
    int n = snprintf(text + used, size - used, "%s%s", EXEC_PARENT_NAME, parent);
    if (n < 0 || (size_t) n >= size - used) return envp;
    list[k++] = text + used;
  }
  list[k] = NULL;
  return list;
}

/* The first lines of every wrapper below: the list to pass (exec_envp) for
 * envp, in arrays on the stack sized to what it needs (one byte each when
 * nothing is added, the common case) */

/* The exec wrappers run in vfork children (CPython's subprocess) on their
 * parent's stack and do not return from the real call. AddressSanitizer's
 * redzones around their arrays then stayed poisoned in the parent's stack,
 * and a later call of the parent's that reached that depth was reported as
 * a stack overflow (t/4370 in an ASan build: mkdir_routed writing its own
 * lookup, after test_os had spawned children with env=). The runtime cleans
 * up after vfork only when its interceptor comes before libc's vfork, which
 * it does not in a program that is not instrumented. So these frames have
 * no redzones; the wrappers' helpers return before the real call. */
#define EXEC_UNCHECKED __attribute__((no_sanitize_address))
#define EXEC_ENVIRONMENT(envp) \
  size_t exec_count = 0, exec_text_size = 0; \
  int exec_add = exec_plan((envp), &exec_count, &exec_text_size); \
  char* exec_list[exec_add ? exec_count + 3 : 1]; \
  char exec_text[exec_add ? exec_text_size : 1]; \
  char* const* exec_envp = exec_add ? exec_build((envp), exec_count, exec_list, exec_text, exec_text_size) : (envp)

SCR_PRELOAD_API EXEC_UNCHECKED int execve(const char* path, char* const argv[], char* const envp[])
{
  EXEC_ENVIRONMENT(envp);
  int (*real)(const char*, char* const*, char* const*) = SCR_REAL(execve);
  if (!real) return errno = ENOSYS, -1;
  return real(path, argv, exec_envp);
}

SCR_PRELOAD_API EXEC_UNCHECKED int execvpe(const char* file, char* const argv[], char* const envp[])
{
  EXEC_ENVIRONMENT(envp);
  int (*real)(const char*, char* const*, char* const*) = SCR_REAL(execvpe);
  if (!real) return errno = ENOSYS, -1;
  return real(file, argv, exec_envp);
}

SCR_PRELOAD_API EXEC_UNCHECKED int fexecve(int fd, char* const argv[], char* const envp[])
{
  EXEC_ENVIRONMENT(envp);
  int (*real)(int, char* const*, char* const*) = SCR_REAL(fexecve);
  if (!real) return errno = ENOSYS, -1;
  return real(fd, argv, exec_envp);
}

SCR_PRELOAD_API EXEC_UNCHECKED int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                                            int flags)
{
  EXEC_ENVIRONMENT(envp);
  int (*real)(int, const char*, char* const*, char* const*, int) = SCR_REAL(execveat);
  if (!real) return errno = ENOSYS, -1;
  return real(dirfd, path, argv, exec_envp, flags);
}

/* glibc's execle calls its internal execve, which no interposer sees: the
 * list of arguments is gathered here as glibc does, then goes through execve
 * above */
SCR_PRELOAD_API EXEC_UNCHECKED int execle(const char* path, const char* arg, ...)
{
  va_list ap;
  size_t argc = 1;
  va_start(ap, arg);
  while (va_arg(ap, const char*)) argc++;
  va_end(ap);
  if (argc >= EXEC_STACK_ENTRIES) return errno = E2BIG, -1;
  const char* argv[argc + 1];
  va_start(ap, arg);
  argv[0] = arg;
  for (size_t i = 1; i <= argc; i++) argv[i] = va_arg(ap, const char*);
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return execve(path, (char* const*) argv, envp);
}

SCR_PRELOAD_API int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                                const posix_spawnattr_t* attributes, char* const argv[], char* const envp[])
{
  EXEC_ENVIRONMENT(envp);
  int (*real)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*, char* const*,
              char* const*) = SCR_REAL(posix_spawn);
  if (!real) return ENOSYS;
  return real(pid, path, actions, attributes, argv, exec_envp);
}

SCR_PRELOAD_API int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                                 const posix_spawnattr_t* attributes, char* const argv[], char* const envp[])
{
  EXEC_ENVIRONMENT(envp);
  int (*real)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*, char* const*,
              char* const*) = SCR_REAL(posix_spawnp);
  if (!real) return ENOSYS;
  return real(pid, file, actions, attributes, argv, exec_envp);
}
