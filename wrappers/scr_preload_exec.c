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
 * made on the stack, never with malloc, up to EXEC_STACK_ENTRIES entries,
 * and a longer environment is passed as it is. */
#define EXEC_STACK_ENTRIES 4096
#define EXEC_PRELOAD_NAME "LD_PRELOAD="
#define EXEC_PARENT_NAME SCR_PRELOAD_PARENT_VARIABLE "="

extern char** environ;

/* this library's file, found once where the loader may be asked safely */
static char exec_library[PATH_MAX];

void scr_preload_exec_prepare(void)
{
  Dl_info info;
  if (exec_library[0] || !dladdr((void*) scr_preload_exec_prepare, &info) || !info.dli_fname) return;
  size_t n = strlen(info.dli_fname);
  if (n < sizeof(exec_library)) memcpy(exec_library, info.dli_fname, n + 1);
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

/* The list to pass instead of envp, built in list (room for `room`
 * entries) and text (size bytes), or envp itself when nothing is to add */
static char* const* exec_environment(char* const envp[], char** list, size_t room, char* text, size_t size)
{
  const char* parent = getenv(SCR_PRELOAD_PARENT_VARIABLE);
  if (!envp || envp == environ || !parent || !scr_preload_state_rules() || !exec_library[0]) return envp;
  const char* their_parent = exec_find(envp, EXEC_PARENT_NAME);
  const char* their_preload = exec_find(envp, EXEC_PRELOAD_NAME);
  int add_parent = their_parent == NULL;
  int add_library = !their_preload || !exec_preloads_us(their_preload + strlen(EXEC_PRELOAD_NAME));
  if (!add_parent && !add_library) return envp;
  size_t count = 0;
  while (envp[count]) count++;
  if (count + 3 > room) return envp;
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

/* the declarations every wrapper below begins with: the list and its text */
#define EXEC_ROOM \
  char* exec_list[EXEC_STACK_ENTRIES]; \
  char exec_text[2 * PATH_MAX + 8192]
#define EXEC_ENV(envp) exec_environment((envp), exec_list, EXEC_STACK_ENTRIES, exec_text, sizeof(exec_text))

SCR_PRELOAD_API int execve(const char* path, char* const argv[], char* const envp[])
{
  EXEC_ROOM;
  int (*real)(const char*, char* const*, char* const*) = SCR_REAL(execve);
  if (!real) return errno = ENOSYS, -1;
  return real(path, argv, EXEC_ENV(envp));
}

SCR_PRELOAD_API int execvpe(const char* file, char* const argv[], char* const envp[])
{
  EXEC_ROOM;
  int (*real)(const char*, char* const*, char* const*) = SCR_REAL(execvpe);
  if (!real) return errno = ENOSYS, -1;
  return real(file, argv, EXEC_ENV(envp));
}

SCR_PRELOAD_API int fexecve(int fd, char* const argv[], char* const envp[])
{
  EXEC_ROOM;
  int (*real)(int, char* const*, char* const*) = SCR_REAL(fexecve);
  if (!real) return errno = ENOSYS, -1;
  return real(fd, argv, EXEC_ENV(envp));
}

SCR_PRELOAD_API int execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags)
{
  EXEC_ROOM;
  int (*real)(int, const char*, char* const*, char* const*, int) = SCR_REAL(execveat);
  if (!real) return errno = ENOSYS, -1;
  return real(dirfd, path, argv, EXEC_ENV(envp), flags);
}

/* glibc's execle calls its internal execve, which no interposer sees: the
 * list of arguments is gathered here as glibc does, then goes through execve
 * above */
SCR_PRELOAD_API int execle(const char* path, const char* arg, ...)
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
  EXEC_ROOM;
  int (*real)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*, char* const*,
              char* const*) = SCR_REAL(posix_spawn);
  if (!real) return ENOSYS;
  return real(pid, path, actions, attributes, argv, EXEC_ENV(envp));
}

SCR_PRELOAD_API int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                                 const posix_spawnattr_t* attributes, char* const argv[], char* const envp[])
{
  EXEC_ROOM;
  int (*real)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*, char* const*,
              char* const*) = SCR_REAL(posix_spawnp);
  if (!real) return ENOSYS;
  return real(pid, file, actions, attributes, argv, EXEC_ENV(envp));
}
