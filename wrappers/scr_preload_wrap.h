/* scr_preload_wrap.h - what every wrapper of libscr_preload.so shares: the "is
 * anything to do" test, the path lookup, and the bookkeeping around hooks. */
#ifndef SCR_PRELOAD_WRAP_H
#define SCR_PRELOAD_WRAP_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include "scr_preload_fd.h"
#include "scr_preload_hooks.h"
#include "scr_preload_real.h"
#include "scr_preload_rules.h"
#include "scr_preload_state.h"

/* The shape of every wrapper (Darshan style):
 *
 *   int unlink(const char* path)
 *   {
 *     SCR_PRELOAD_WRAP_FILE(unlink, path, unlink_routed(...), path);
 *   }
 *
 * With no rules (every process outside an MPI job) a call costs two loads
 * and a branch before the jump into libc; with rules a path outside them
 * costs the rule set's prefix compare (or a file-name filter), without a
 * copy or a system call, and only a path that may match reaches the routed
 * function, with its path buffers. Where a system call leaves caches and
 * branch predictors cold (virtual machines), every extra branch and cache
 * line on this path shows in the time of the call. */

/* the inert case, then the pass-through case, then `slow` (which must cope
 * with a real function not found yet, and with the library's own calls) */
#define SCR_PRELOAD_WRAP_FILE(name, path, slow, ...) \
  __typeof__(scr_preload_real.name) real = __atomic_load_n(&scr_preload_real.name, __ATOMIC_RELAXED); \
  const scr_preload_ruleset* rules = scr_preload_state_rules(); \
  if (__builtin_expect(rules == NULL && real != NULL, 1)) return real(__VA_ARGS__); \
  if (__builtin_expect(real != NULL && (rules == NULL || scr_preload_wrap_pass(rules, path)), 1)) \
    return real(__VA_ARGS__); \
  return slow

/* As SCR_PRELOAD_WRAP_FILE, for calls that may also name a rule directory
 * that exists only in the view, or a file in one (stat, access, open,
 * fopen): while those are shown, a path that no rule's file can match goes
 * to libc first, and `missing` is evaluated (with saved_errno, the errno
 * before the call, in scope, which it may ignore) only when that call failed
 * (returned `failure`) for a missing name; outside everything the rules
 * could name it is a tail call into libc (a return after a system call is
 * one more misprediction). `routed` decides the rest. */
#define SCR_PRELOAD_WRAP_DIRECTORY(name, path, missing, routed, ...) \
  SCR_PRELOAD_WRAP_DIRECTORY_FAILING(name, -1, path, missing, routed, __VA_ARGS__)
#define SCR_PRELOAD_WRAP_DIRECTORY_FAILING(name, failure, path, missing, routed, ...) \
  SCR_PRELOAD_WRAP_DIRECTORY_CALL(name, failure, AT_FDCWD, path, routed, missing, routed, __VA_ARGS__)
/* the one body of both: `mirrored` below (SCR_PRELOAD_WRAP_MIRRORED) */
#define SCR_PRELOAD_WRAP_DIRECTORY_CALL(name, failure, dirfd, path, mirrored, missing, routed, ...) \
  __typeof__(scr_preload_real.name) real = __atomic_load_n(&scr_preload_real.name, __ATOMIC_RELAXED); \
  const scr_preload_ruleset* rules = scr_preload_state_rules(); \
  if (__builtin_expect(rules == NULL && real != NULL, 1)) return real(__VA_ARGS__); \
  int screen = real && rules ? scr_preload_lookup_screen(rules, path) : SCR_PRELOAD_EXCLUDE_NONE; \
  SCR_PRELOAD_WRAP_MIRRORED(dirfd, screen, mirrored); \
  if (__builtin_expect(screen == SCR_PRELOAD_EXCLUDE_ALL || (screen == SCR_PRELOAD_EXCLUDE_FILE && \
                       !__atomic_load_n(&scr_preload_hot.directories, __ATOMIC_RELAXED)), 1)) \
    return real(__VA_ARGS__); \
  if (screen == SCR_PRELOAD_EXCLUDE_FILE) { \
    int* error = scr_preload_real_errno(); \
    int saved_errno = *error; \
    __typeof__(real(__VA_ARGS__)) result = real(__VA_ARGS__); \
    if (__builtin_expect(result != (failure) || (*error != ENOENT && *error != ENOTDIR), 1) || \
        scr_preload_real_is_internal()) \
      return result; \
    (void) saved_errno; \
    return missing; \
  } \
  return routed

/* A descriptor of a rule directory that exists only in the view is one of
 * its mirror (scr_preload_mirror.c), a tree of empty placeholders in the
 * cache. A call relative to it that the engine does not take must act on
 * the original path, not in the mirror, which goes at MPI_Finalize: a log
 * made there by openat, a directory by mkdirat, would be lost. Such
 * descriptors are marked in the descriptor table (SCR_PRELOAD_FD_MIRROR, and
 * a listing's stream as SCR_PRELOAD_FD_DIR), so that telling them from the
 * others costs the wrappers what a close costs: with AT_FDCWD nothing (the
 * compiler drops the test), else the table's load, none at all in a process
 * that never tracked a descriptor. A marked one (also a tracked file's)
 * takes `mirrored`, which resolves (dirfd, path) in full
 * (scr_preload_wrap_unmirror). Absolute paths, which ignore dirfd, never do. */
#define SCR_PRELOAD_WRAP_MIRRORED(dirfd, screen, mirrored) \
  if (__builtin_expect((screen) != SCR_PRELOAD_EXCLUDE_ALL && scr_preload_wrap_at_marked(dirfd), 0)) \
    return mirrored

/* SCR_PRELOAD_WRAP_DIRECTORY for the *at calls: `mirrored` as above */
#define SCR_PRELOAD_WRAP_DIRECTORY_AT(name, dirfd, path, mirrored, missing, routed, ...) \
  SCR_PRELOAD_WRAP_DIRECTORY_CALL(name, -1, dirfd, path, mirrored, missing, routed, __VA_ARGS__)

/* the same for calls whose paths are always looked up in full (directories) */
#define SCR_PRELOAD_WRAP_INERT(name, slow, ...) \
  __typeof__(scr_preload_real.name) real = __atomic_load_n(&scr_preload_real.name, __ATOMIC_RELAXED); \
  const scr_preload_ruleset* rules = scr_preload_state_rules(); \
  if (__builtin_expect(rules == NULL && real != NULL, 1)) return real(__VA_ARGS__); \
  return slow

/* on the definition of a wrapped function: exported, and in .text.hot with
 * the screen (their split-off slow parts go to .text.unlikely). The code is
 * the same; only where it lies changed, and with it, after an open+close,
 * 1.0-1.5% of the call on a path no rule matches
 * (t/perf/preload-passthrough.sh, 10 rules): the wrappers had been spread
 * over the library's .text among the code only a match runs. */
#define SCR_PRELOAD_WRAPPER SCR_PRELOAD_API SCR_PRELOAD_HOT

/* The variadic functions (open, openat, fcntl and their 64-bit forms). GCC
 * makes no tail call out of a function that calls va_start, and returning
 * through the wrapper after the system call made an open+close 1.9% slower
 * than libc's with no rule loaded at all, where stat and fopen, which end in
 * a tail call, cost 0.1-0.2%. Where the first variadic arguments travel
 * exactly like named ones (x86-64 and AArch64 on Linux), such a wrapper is a
 * plain function with one more parameter, `last`, defined under the symbol's
 * name: its register holds what the caller passed, or anything when the
 * caller passed nothing. libc gets it untouched and reads it only when the
 * other arguments say it was passed; so must the wrapper. Elsewhere the
 * wrapper is variadic and reads it with va_arg under the same condition.
 *   SCR_PRELOAD_WRAPPER_VARIADIC(open, mode_t mode, const char* path, int flags) */
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define SCR_PRELOAD_VARIADIC_AS_FIXED 1
#define SCR_PRELOAD_WRAPPER_VARIADIC(name, last, ...) \
  SCR_PRELOAD_WRAPPER int scr_preload_wrapper_##name(__VA_ARGS__, last) __asm__(#name); \
  SCR_PRELOAD_WRAPPER int scr_preload_wrapper_##name(__VA_ARGS__, last)
#else
#define SCR_PRELOAD_VARIADIC_AS_FIXED 0
#define SCR_PRELOAD_WRAPPER_VARIADIC(name, last, ...) SCR_PRELOAD_WRAPPER int name(__VA_ARGS__, ...)
#endif

/* the rule set to consult, or NULL: none loaded, or the library's own I/O */
static inline const scr_preload_ruleset* scr_preload_wrap_rules(void)
{
  const scr_preload_ruleset* rules = scr_preload_state_rules();
  if (__builtin_expect(rules == NULL, 1) || scr_preload_real_is_internal()) return NULL;
  return rules;
}

/* 1 when dirfd is a descriptor the table marks (SCR_PRELOAD_WRAP_MIRRORED) */
static inline int scr_preload_wrap_at_marked(int dirfd)
{
  return dirfd != AT_FDCWD && scr_preload_fd_mark(dirfd) != 0;
}

/* (dirfd, path), dirfd marked: when path is relative to a directory in the
 * mirror and the library's own I/O is not calling, 1 with the original path
 * it stands for in original (PATH_MAX bytes), on which the call is then made
 * with AT_FDCWD, as if the application had named it in full (so a file or
 * directory that no rule matches made there materializes the virtual
 * directory, as an open of the original path does; ".." is the directory
 * the mirror's parent stands for); 0 otherwise. Keeps errno. */
int scr_preload_wrap_unmirror(int dirfd, const char* path, char* original);

/* what a lookup asks for */
enum {
  SCR_PRELOAD_LOOKUP_FILE = 1,       /* a file a rule matches */
  SCR_PRELOAD_LOOKUP_DIRECTORY = 2,  /* a rule directory (tried after FILE) */
  SCR_PRELOAD_LOOKUP_CALLER = 4,     /* an open: the rule's CALLER= must be on the stack */
  SCR_PRELOAD_LOOKUP_LISTING = 8     /* with DIRECTORY: also a directory on the way to a rule's
                                      * (scr_preload_rules_leads_to_directory), to be listed */
};

/* a target and the buffer its path lives in */
typedef struct {
  scr_preload_target t;
  char path[PATH_MAX];
} scr_preload_lookup;

/* resolve (dirfd, path) and match it: 1 when it names what `what` asks for,
 * with l->t filled; 0 otherwise. A relative path that only a file could
 * match is first ruled out by its name, before any system call. Keeps errno;
 * never allocates, except once per return address for CALLER=. */
int scr_preload_lookup_path(scr_preload_lookup* l, const scr_preload_ruleset* rules, const char* call,
                            int dirfd, const char* path, int what);

/* 1 when path names a directory by its text alone ("d/", "d/.", ".."):
 * no rule's file, whatever a rule says of the name it normalizes to */
int scr_preload_path_names_directory(const char* path);

/* what (any dirfd, path) certainly is not, decided on the text alone:
 * SCR_PRELOAD_EXCLUDE_ALL (no rule's file and no rule directory),
 * SCR_PRELOAD_EXCLUDE_FILE (no rule's file), or SCR_PRELOAD_EXCLUDE_NONE
 * (the full lookup must decide). An absolute path that is already normal
 * (no "//", no "/.", no trailing '/') is judged as it stands; a relative
 * one only by its file name (so at best EXCLUDE_FILE). No copy, no system
 * call, a cache line or two: this is what a call on a foreign path costs.
 * One implementation per scan, chosen when the rules are installed
 * (scr_preload_screen_best, in scr_preload_hot.h). */
static inline int scr_preload_lookup_screen(const scr_preload_ruleset* rules, const char* path)
{
  return scr_preload_hot.screen(rules, path);
}

/* a call on (dirfd, path) failed with ENOENT: 1 when a file the view shows
 * stands where it needs a directory (an ancestor: "ckpt.1/rank_0.dat/x";
 * with self, path itself, for calls that list it), which the kernel reports
 * as ENOTDIR. Keeps errno. */
int scr_preload_wrap_below_file(const scr_preload_ruleset* rules, const char* call, int dirfd, const char* path,
                                int self);

/* 1 when a call on path goes straight to libc though rules are loaded: a
 * path no rule's file can match, or the library's own I/O (asked second:
 * the thread-local guard is one more cache line) */
static inline int scr_preload_wrap_pass(const scr_preload_ruleset* rules, const char* path)
{
  return scr_preload_lookup_screen(rules, path) != SCR_PRELOAD_EXCLUDE_NONE || scr_preload_real_is_internal();
}

/* a call on a path no rule's file matched failed with `result` (errno as it
 * left it): 1 when the path may still be a rule directory that exists only
 * in the view (virtual directories are shown, and the name was missing) */
static inline int scr_preload_wrap_missing(int result)
{
  return result == -1 && (errno == ENOENT || errno == ENOTDIR) &&
         __atomic_load_n(&scr_preload_hot.directories, __ATOMIC_RELAXED);
}

/* after such a failure: fill l for the path as a rule directory and return
 * 1, or return 0 with errno as the failure left it (not a rule directory,
 * no rules, or a dry run, which routes nothing), except that ENOENT becomes
 * ENOTDIR below a file the view shows */
int scr_preload_lookup_virtual_directory(scr_preload_lookup* l, const scr_preload_ruleset* rules, const char* call,
                                         int dirfd, const char* path);

/* a call on (dirfd, path) failed for a missing name while the view shows
 * directories: 1 with path's symbolic links on the file system followed into
 * followed (PATH_MAX bytes), when some were and the result may be what a
 * rule names: a link such as "latest -> ckpt.5" made to a checkpoint
 * directory the cache holds, which the file system lacks (the caller then
 * makes the call again on followed, as the kernel would have); 0 otherwise.
 * follow_last 0 for calls that do not follow a final link (lstat,
 * O_NOFOLLOW). Keeps errno. */
int scr_preload_wrap_follow(const scr_preload_ruleset* rules, int dirfd, const char* path, int follow_last,
                            char* followed);
/* the call made again: SCR_PRELOAD_FOLLOWED(result, call), during which
 * scr_preload_wrap_follow follows nothing */
extern __thread int scr_preload_wrap_following;
#define SCR_PRELOAD_FOLLOWED(result, call) \
  do { scr_preload_wrap_following++; (result) = (call); scr_preload_wrap_following--; } while (0)

/* the calls the layer does not route, and creations that failed with ENOENT
 * below a rule directory that exists only in the view (made by mkdir): make
 * dir there (the engine's scr_preload_hook_materialize), or the directory
 * path would be in; 1 when it was made now, so that the caller may try
 * again. Keep errno. */
int scr_preload_wrap_materialize(const char* call, int dirfd, const char* dir);
int scr_preload_wrap_materialize_parent(const char* call, int dirfd, const char* path);

/* a name made on the file system (mkdir, symlink, link) by make(arg), which
 * returns 0 or -1 with errno; when that fails with ENOENT: EEXIST where the
 * view shows the name itself (in a directory only the view has), ENOTDIR
 * below a file it shows, and make(arg) again once a parent directory that
 * exists only in the view is made on the file system (errno then as before
 * the call: saved_errno). make_missing is the same after make failed. */
int scr_preload_wrap_make(const scr_preload_ruleset* rules, const char* call, int dirfd, const char* path,
                          int (*make)(void* arg), void* arg);
int scr_preload_wrap_make_missing(const scr_preload_ruleset* rules, const char* call, int dirfd, const char* path,
                                  int (*make)(void* arg), void* arg, int saved_errno);

/* 1 when the engine shows (dirfd, path) (a cached file, or a rule directory the file
 * system lacks), with l filled and shown (PATH_MAX bytes) set to where it
 * keeps it; 0 otherwise (no rules, a dry run, not shown). Keeps errno. */
int scr_preload_lookup_shown(scr_preload_lookup* l, const scr_preload_ruleset* rules, const char* call,
                             int dirfd, const char* path, char* shown);

/* fill l->t for a path that need not match (the other side of a rename) */
void scr_preload_lookup_resolve(scr_preload_lookup* l, const scr_preload_ruleset* rules, const char* call,
                                int dirfd, const char* path);

/* open(2) and openat(2) take a mode only with O_CREAT or O_TMPFILE */
static inline int scr_preload_needs_mode(int flags)
{
#ifdef __OPEN_NEEDS_MODE
  return __OPEN_NEEDS_MODE(flags);
#else
  return (flags & O_CREAT) != 0;
#endif
}

/* call a hook inside the library guard: HOOK_CALL(result, hook(args...)).
 * Only from the application's own calls (never while the guard is up: the
 * engine, which holds its lock, would wait for it), so this is where the
 * engine hears of files whose end was deferred, before and after the hook */
#define SCR_PRELOAD_HOOK_CALL(result, call) \
  do { \
    scr_preload_wrap_deliver(); \
    scr_preload_real_enter(); \
    (result) = (call); \
    scr_preload_real_leave(); \
    scr_preload_wrap_deliver(); \
  } while (0)

/* the engine told of every file whose last descriptor ended while it could
 * not be (scr_preload_fd_defer), unless this thread is inside the library:
 * one load when none waits. Keeps errno. */
void scr_preload_wrap_deliver_deferred(void);
static inline void scr_preload_wrap_deliver(void)
{
  if (__builtin_expect(scr_preload_fd_any_deferred(), 0)) scr_preload_wrap_deliver_deferred();
}

/* an open of a matching path gave fd: track it; warns (once) when the
 * descriptor lies beyond the table */
void scr_preload_wrap_track(int fd, int kind, const scr_preload_target* t, int hooked, void* cookie);

/* after the real close of a descriptor whose record just lost its last
 * descriptor: tell the engine (when it was told of the open) and return the
 * result the application sees; rc and errno are those of the close. From
 * inside the library (an engine file that got the number of a descriptor
 * closed behind every wrapper, a signal handler that interrupted the
 * library) the engine is not called, which could wait for the lock its own
 * thread holds: the file is deferred (scr_preload_fd_defer), and the engine
 * hears of it at the next hook the application's calls reach. */
int scr_preload_wrap_closed(int fd, const scr_preload_fd_file* last, int rc, int is_dup);

/* close a marked descriptor through the bookkeeping: unmark, the real close,
 * then scr_preload_hook_close when it was its file's last descriptor */
int scr_preload_wrap_close(int fd);

/* the errno, saved before a hook, that a successful call must leave */
#define SCR_PRELOAD_ERRNO_KEEP(saved, failed) do { if (!(failed)) errno = (saved); } while (0)

#endif
