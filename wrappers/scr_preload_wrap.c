/* scr_preload_wrap.c - the wrappers' shared machinery: start-up, fork handling,
 * resolving and matching a path, and telling the engine that a tracked file closed. */
#include "config.h"
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "scr_log.h"
#include "scr_preload_caller.h"
#include "scr_preload_child.h"
#include "scr_preload_path.h"
#include "scr_preload_report.h"
#include "scr_preload_wrap.h"

/* Fork. A child made by fork (not vfork or posix_spawn, which run no
 * handlers and exec at once) is a copy of this process that is not a rank
 * of the job: it must neither complete datasets nor close the parent's
 * files in the engine's books. So the child drops every descriptor mark (its
 * copies of routed descriptors are plain descriptors, whose close concerns
 * nobody) and the engine; it keeps the rule set only to show the parent's
 * files read-only, as any child of a rank sees them (scr_preload_child.c),
 * and otherwise drops it too (the layer is inert there, as outside MPI). The
 * parent keeps its records exactly, as the child's closes never reach them.
 * The locks are taken across fork, so that the child's copies are not held
 * by a thread that does not exist there. After exec the new image starts
 * inert, or as a rank's child. A vfork child runs no handler
 * and shares this memory until it execs: a path it opens that matches is
 * passed through (the process id differs from the rules' owner), and the
 * descriptor table refuses its changes the same way. */
static void wrap_prepare(void)
{
  scr_preload_report_atfork_prepare();
  scr_preload_caller_atfork_prepare();
  scr_preload_fd_atfork_prepare();
}

static void wrap_parent(void)
{
  scr_preload_fd_atfork_parent();
  scr_preload_caller_atfork_parent();
  scr_preload_report_atfork_parent();
}

static void wrap_child(void)
{
  scr_preload_fd_atfork_child();
  scr_preload_caller_atfork_child();
  scr_preload_report_atfork_child();
  /* the rules go, unless the child is to see its parent's files */
  scr_preload_child_forked();
}

/* resolve every real function before main, while one thread runs; wrappers
 * still resolve lazily for calls made by constructors that run before ours.
 * A process a rank started gets its rules now (scr_preload_child.c). */
__attribute__((constructor)) static void wrap_constructor(void)
{
  scr_preload_real_resolve_all();
  pthread_atfork(wrap_prepare, wrap_parent, wrap_child);
  scr_preload_child_start();
}


void scr_preload_hooks_virtual_directories(int enabled)
{
  __atomic_store_n(&scr_preload_hot.directories, enabled != 0, __ATOMIC_RELAXED);
}

/* 1 in the process that loaded the rules, 0 in a vfork child (asked only
 * once a path matched: it is a system call) */
static int lookup_owner(void)
{
  int saved_errno = errno;
  int owner = getpid() == scr_preload_state_owner;
  errno = saved_errno;
  return owner;
}

static void lookup_init(scr_preload_lookup* l, const scr_preload_ruleset* rules, const char* call)
{
  l->t.call = call;
  l->t.path = NULL;
  l->t.length = 0;
  l->t.rules = rules;
  l->t.directory = 0;
  memset(&l->t.match, 0, sizeof(l->t.match));
  l->t.match.rule = -1;
  l->t.match.step = -1;
  l->t.match.rank = -1;
}

/* a relative path whose file name no rule's last component can match
 * cannot name a rule's file, wherever it is relative to; unless that name
 * is "", "." or "..", which normalizing replaces by another */
static int lookup_name_excluded(const scr_preload_ruleset* rules, const char* path)
{
  const char* name = strrchr(path, '/');
  name = name ? name + 1 : path;
  size_t length = strlen(name);
  if (length <= 2 && strspn(name, ".") == length) return 0;
  return !scr_preload_rules_name_may_match(rules, name, length) || !scr_preload_rules_match_name(rules, name, length);
}

/* 1 when path names a directory by its text: it ends in '/', "/." or "/.."
 * (or is "." or ".."). The kernel resolves such a name as a directory
 * whatever is there, so it is never a rule's file, though the normalized
 * path a rule matches loses the ending: open("d/missing/", O_CREAT) is
 * EISDIR, not a checkpoint file d/missing */
int scr_preload_path_names_directory(const char* path)
{
  size_t n = strlen(path);
  if (n > 0 && path[n - 1] == '/') return 1;
  const char* name = strrchr(path, '/');
  name = name ? name + 1 : path;
  return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

int scr_preload_lookup_path(scr_preload_lookup* l, const scr_preload_ruleset* rules, const char* call,
                            int dirfd, const char* path, int what)
{
  lookup_init(l, rules, call);
  /* libc declares these paths nonnull, which would let the compiler drop the
   * check below; applications do pass NULL and must get EFAULT from libc */
  __asm__("" : "+r"(path));
  if (!path) return 0;
  /* a relative path needs its directory looked up (a system call), so
   * first rule it out by its file name */
  if (path[0] != '/' && !(what & SCR_PRELOAD_LOOKUP_DIRECTORY) && lookup_name_excluded(rules, path)) return 0;
  size_t length = scr_preload_path_resolve(dirfd, path, l->path, sizeof(l->path));
  if (length == 0) return 0;
  l->t.path = l->path;
  l->t.length = length;
  if ((what & SCR_PRELOAD_LOOKUP_FILE) && !scr_preload_path_names_directory(path)) {
    int rule = scr_preload_rules_match_from(rules, 0, l->path, length, &l->t.match);
    /* a rule whose CALLER= is not on the stack does not count: the next
     * rule that matches may */
    while (rule >= 0 && (what & SCR_PRELOAD_LOOKUP_CALLER) && !scr_preload_caller_on_stack(rules, rule))
      rule = scr_preload_rules_match_from(rules, rule + 1, l->path, length, &l->t.match);
    if (rule >= 0) return lookup_owner();
  }
  if ((what & SCR_PRELOAD_LOOKUP_DIRECTORY) &&
      scr_preload_rules_match_directory(rules, l->path, length, &l->t.match) >= 0) {
    l->t.directory = 1;
    return lookup_owner();
  }
  if ((what & SCR_PRELOAD_LOOKUP_LISTING) && scr_preload_rules_leads_to_directory(rules, l->path, length)) {
    l->t.directory = 1;
    l->t.match.rule = -1;
    return lookup_owner();
  }
  l->t.match.rule = -1;
  return 0;
}

int scr_preload_wrap_below_file(const scr_preload_ruleset* rules, const char* call, int dirfd, const char* path,
                                int self)
{
  if (!rules || scr_preload_state_dryrun() || !path) return 0;
  int saved_errno = errno, found = 0;
  char ancestor[PATH_MAX], shown[PATH_MAX];
  size_t end = scr_preload_path_resolve(dirfd, path, ancestor, sizeof(ancestor));
  /* "file/" needs file to be a directory as "file/x" does */
  if (!self && !scr_preload_path_names_directory(path))
    while (end > 1 && ancestor[end - 1] != '/') end--;
  while (!found && end > 1) {
    if (ancestor[end - 1] == '/') end--;
    ancestor[end] = '\0';
    scr_preload_lookup l;
    found = scr_preload_lookup_shown(&l, rules, call, AT_FDCWD, ancestor, shown) && !l.t.directory;
    while (end > 1 && ancestor[end - 1] != '/') end--;
  }
  errno = saved_errno;
  return found;
}

int scr_preload_lookup_virtual_directory(scr_preload_lookup* l, const scr_preload_ruleset* rules, const char* call,
                                         int dirfd, const char* path)
{
  int failure = errno;
  /* no directory of the view lies below a file it shows */
  int below_file = failure == ENOENT && scr_preload_wrap_below_file(rules, call, dirfd, path, 0);
  if (!below_file && rules && !scr_preload_state_dryrun() &&
      scr_preload_lookup_path(l, rules, call, dirfd, path, SCR_PRELOAD_LOOKUP_DIRECTORY))
    return 1;
  if (below_file) failure = ENOTDIR;
  errno = failure;
  return 0;
}

int scr_preload_lookup_shown(scr_preload_lookup* l, const scr_preload_ruleset* rules, const char* call,
                             int dirfd, const char* path, char* shown)
{
  int saved_errno = errno, handled = SCR_PRELOAD_PASS, rc = -1;
  if (rules && !scr_preload_state_dryrun() &&
      scr_preload_lookup_path(l, rules, call, dirfd, path, SCR_PRELOAD_LOOKUP_FILE | SCR_PRELOAD_LOOKUP_DIRECTORY))
    SCR_PRELOAD_HOOK_CALL(rc, scr_preload_hook_stat(&l->t, 0, shown, &handled));
  (void) rc; /* only a redirect says where */
  errno = saved_errno;
  return handled == SCR_PRELOAD_REDIRECT;
}

__thread int scr_preload_wrap_following = 0;

int scr_preload_wrap_follow(const scr_preload_ruleset* rules, int dirfd, const char* path, int follow_last,
                            char* followed)
{
  /* once per call: the call made again on what the links lead to does not
   * follow again (a link into the view's mirror names the same path again) */
  if (!rules || scr_preload_wrap_following || !__atomic_load_n(&scr_preload_hot.directories, __ATOMIC_RELAXED) ||
      scr_preload_state_dryrun())
    return 0;
  __asm__("" : "+r"(path));
  char trusted[PATH_MAX];
  return path &&
         scr_preload_path_follow(dirfd, path, follow_last,
                                 scr_preload_rules_common_directory(rules, trusted, sizeof(trusted)), followed,
                                 PATH_MAX) > 0 &&
         scr_preload_lookup_screen(rules, followed) != SCR_PRELOAD_EXCLUDE_ALL;
}

int scr_preload_wrap_materialize(const char* call, int dirfd, const char* dir)
{
  const scr_preload_ruleset* rules = scr_preload_wrap_rules();
  if (!rules || scr_preload_state_dryrun() || scr_preload_lookup_screen(rules, dir) == SCR_PRELOAD_EXCLUDE_ALL)
    return 0;
  int saved_errno = errno, handled = SCR_PRELOAD_PASS, rc = -1;
  scr_preload_lookup l;
  if (scr_preload_lookup_path(&l, rules, call, dirfd, dir, SCR_PRELOAD_LOOKUP_DIRECTORY))
    SCR_PRELOAD_HOOK_CALL(rc, scr_preload_hook_materialize(&l.t, &handled));
  errno = saved_errno;
  return handled == SCR_PRELOAD_HANDLED && rc == 0;
}

int scr_preload_wrap_materialize_parent(const char* call, int dirfd, const char* path)
{
  __asm__("" : "+r"(path));
  if (!path) return 0;
  /* the last component, trailing slashes aside ("dir/new/" is made in dir) */
  size_t end = strlen(path);
  while (end > 1 && path[end - 1] == '/') end--;
  size_t slash = end;
  while (slash > 0 && path[slash - 1] != '/') slash--;
  if (slash == 0) return 0; /* in the current directory, which exists (or dirfd's) */
  char dir[PATH_MAX];
  size_t n = slash == 1 ? 1 : slash - 1;
  if (n >= sizeof(dir)) return 0;
  memcpy(dir, path, n);
  dir[n] = '\0';
  return scr_preload_wrap_materialize(call, dirfd, dir);
}

int scr_preload_wrap_make_missing(const scr_preload_ruleset* rules, const char* call, int dirfd, const char* path,
                                  int (*make)(void* arg), void* arg, int saved_errno)
{
  if (errno != ENOENT || !rules) return -1;
  scr_preload_lookup l;
  char shown[PATH_MAX];
  if (scr_preload_lookup_shown(&l, rules, call, dirfd, path, shown)) {
    errno = EEXIST;
    return -1;
  }
  if (scr_preload_wrap_below_file(rules, call, dirfd, path, 0)) {
    errno = ENOTDIR;
    return -1;
  }
  if (!scr_preload_wrap_materialize_parent(call, dirfd, path)) return -1;
  errno = saved_errno;
  return make(arg);
}

int scr_preload_wrap_make(const scr_preload_ruleset* rules, const char* call, int dirfd, const char* path,
                          int (*make)(void* arg), void* arg)
{
  int saved_errno = errno;
  int rc = make(arg);
  return rc == 0 ? 0 : scr_preload_wrap_make_missing(rules, call, dirfd, path, make, arg, saved_errno);
}

int scr_preload_wrap_unmirror(int dirfd, const char* path, char* original)
{
  __asm__("" : "+r"(path));
  return path && scr_preload_wrap_rules() && scr_preload_path_resolve_mirrored(dirfd, path, original, PATH_MAX) > 0;
}

void scr_preload_lookup_resolve(scr_preload_lookup* l, const scr_preload_ruleset* rules, const char* call,
                                int dirfd, const char* path)
{
  lookup_init(l, rules, call);
  __asm__("" : "+r"(path));
  size_t length = path ? scr_preload_path_resolve(dirfd, path, l->path, sizeof(l->path)) : 0;
  if (length == 0) return;
  l->t.path = l->path;
  l->t.length = length;
}

void scr_preload_wrap_track(int fd, int kind, const scr_preload_target* t, int hooked, void* cookie)
{
  scr_preload_fd_file file = { kind, t->match.rule, hooked, cookie };
  if (scr_preload_fd_track(fd, &file) == 0) return;
  static int warned = 0;
  if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)) return;
  int saved_errno = errno;
  scr_preload_real_enter();
  scr_warn("%s %s: descriptor %d lies beyond the preload's table of %d (RLIMIT_NOFILE when the rules were "
           "loaded); its close is not tracked", t->call, t->path, fd, scr_preload_hot.fd_capacity);
  scr_preload_real_leave();
  errno = saved_errno;
}

int scr_preload_wrap_closed(int fd, const scr_preload_fd_file* last, int rc, int is_dup)
{
  if (last->kind != SCR_PRELOAD_FD_FILE || !last->hooked) return rc;
  int saved_errno = errno;
  if (scr_preload_real_is_internal()) {
    scr_preload_fd_defer(fd, last);
    errno = saved_errno;
    return rc;
  }
  int handled = SCR_PRELOAD_PASS, result;
  SCR_PRELOAD_HOOK_CALL(result, scr_preload_hook_close(fd, last->cookie, rc, &handled));
  if (handled != SCR_PRELOAD_HANDLED || is_dup) {
    errno = saved_errno;
    return rc;
  }
  SCR_PRELOAD_ERRNO_KEEP(saved_errno, result == -1);
  return result;
}

void scr_preload_wrap_deliver_deferred(void)
{
  if (scr_preload_real_is_internal()) return;
  int saved_errno = errno, fd;
  scr_preload_fd_file file;
  while (scr_preload_fd_next_deferred(&fd, &file)) {
    int handled = SCR_PRELOAD_PASS;
    scr_preload_real_enter();
    scr_preload_hook_close(fd, file.cookie, 0, &handled);
    scr_preload_real_leave();
  }
  errno = saved_errno;
}

int scr_preload_wrap_close(int fd)
{
  scr_preload_fd_file last;
  int is_last = scr_preload_fd_release(fd, &last);
  int (*real)(int) = SCR_REAL(close);
  int rc = real ? real(fd) : -1;
  return is_last ? scr_preload_wrap_closed(fd, &last, rc, 0) : rc;
}
