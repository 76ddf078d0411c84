/* scr_preload_dir.c - directory listings: opendir, readdir, closedir, scandir and scandirat,
 * so that an application scanning a rule's directory sees the datasets it holds. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "scr_preload_wrap.h"

/* the engine's entries are struct dirent64; readdir and scandir can share
 * them where struct dirent is the same (64-bit Linux), and otherwise leave
 * the engine out of the non-64 forms */
#define DIR_SAME_LAYOUT (sizeof(struct dirent) == sizeof(struct dirent64) && \
                         offsetof(struct dirent, d_name) == offsetof(struct dirent64, d_name))

/* what a listing asks the lookup for: a rule directory, or one on the way
 * to one, which may hold directories that exist only in the view */
#define DIR_LISTED (SCR_PRELOAD_LOOKUP_DIRECTORY | SCR_PRELOAD_LOOKUP_LISTING)

typedef int (*dir_filter)(const struct dirent64*);
typedef int (*dir_compare)(const struct dirent64**, const struct dirent64**);

static DIR* dir_real_open(const char* path)
{
  DIR* (*real)(const char*) = SCR_REAL(opendir);
  if (real) return real(path);
  errno = ENOSYS;
  return NULL;
}

/* dirfd without touching errno; -1 for NULL */
static int dir_fd(DIR* stream)
{
  int saved_errno = errno;
  int fd = stream ? dirfd(stream) : -1;
  errno = saved_errno;
  return fd;
}

/* ask the engine about a rule directory before opening it: returns the
 * hook's answer, with *stream set for HANDLED, errno as the contract says */
static int dir_ask(const scr_preload_target* t, char* redirect, void** cookie, DIR** stream)
{
  int saved_errno = errno, handled = SCR_PRELOAD_PASS;
  DIR* d;
  SCR_PRELOAD_HOOK_CALL(d, scr_preload_hook_opendir(t, redirect, cookie, &handled));
  if (handled == SCR_PRELOAD_HANDLED) {
    SCR_PRELOAD_ERRNO_KEEP(saved_errno, d == NULL);
    *stream = d;
  } else {
    errno = saved_errno;
  }
  return handled;
}

static void dir_track(DIR* stream, const scr_preload_target* t, void* cookie)
{
  if (stream && cookie) scr_preload_wrap_track(dir_fd(stream), SCR_PRELOAD_FD_DIR, t, 1, cookie);
}

/* a listing of (dirfd, path) through a symbolic link that leads into the
 * view (a link "latest" to a checkpoint directory, whose files the file
 * system's directory does not hold): 1 with followed set. Asked before the
 * real listing, unless the path's text rules it out; it
 * costs an lstat per name below the rules' common directory, which a
 * listing, no call a program makes in a tight loop, can afford. Keeps errno. */
static int dir_follow(const scr_preload_ruleset* rules, int dirfd, const char* path, char* followed)
{
  int saved_errno = errno;
  int found = rules && path && scr_preload_lookup_screen(rules, path) != SCR_PRELOAD_EXCLUDE_ALL &&
              scr_preload_wrap_follow(rules, dirfd, path, 1, followed);
  errno = saved_errno;
  return found;
}

/* the real listing failed with ENOENT: ENOTDIR where the name is a file the
 * view shows, as the kernel would say */
static void dir_failed(const scr_preload_ruleset* rules, int dirfd, const char* path)
{
  if (errno == ENOENT && scr_preload_wrap_below_file(rules, "opendir", dirfd, path, 1)) errno = ENOTDIR;
}

static DIR* dir_open_routed(const scr_preload_ruleset* rules, const char* path)
{
  scr_preload_lookup l;
  char followed[PATH_MAX];
  DIR* d;
  /* a link's own path may be one the rules list too (a rule for every file
   * below tmp*): what it leads to is listed, as the kernel would */
  if (dir_follow(rules, AT_FDCWD, path, followed)) {
    SCR_PRELOAD_FOLLOWED(d, dir_open_routed(rules, followed));
    return d;
  }
  if (!rules || !scr_preload_lookup_path(&l, rules, "opendir", AT_FDCWD, path, DIR_LISTED) ||
      scr_preload_state_dryrun()) {
    d = dir_real_open(path);
    if (!d && rules) dir_failed(rules, AT_FDCWD, path);
    return d;
  }
  char redirect[PATH_MAX];
  redirect[0] = '\0';
  void* cookie = NULL;
  d = NULL;
  int handled = dir_ask(&l.t, redirect, &cookie, &d);
  if (handled != SCR_PRELOAD_HANDLED) d = dir_real_open(handled == SCR_PRELOAD_REDIRECT ? redirect : path);
  dir_track(d, &l.t, cookie);
  return d;
}

SCR_PRELOAD_WRAPPER DIR* opendir(const char* path)
{
  SCR_PRELOAD_WRAP_INERT(opendir, dir_open_routed(scr_preload_wrap_rules(), path), path);
}

/* A descriptor of a rule directory, listed through fdopendir (Python's
 * os.scandir(fd), shutil.rmtree and os.fwalk; C++'s remove_all): a real
 * directory that also shows cached files (a marker or log that no rule
 * matches was written beside them) lists them too, as opendir of its path
 * does. (A directory that exists only in the view has a mirror, whose
 * descriptor lists its placeholders.) The engine's own stream for the path
 * is closed: the application keeps the one of its descriptor. */
static DIR* dir_fdopen_routed(const scr_preload_ruleset* rules, DIR* stream, int fd)
{
  int saved_errno = errno;
  scr_preload_lookup l;
  if (!stream || !rules || !scr_preload_lookup_path(&l, rules, "fdopendir", fd, ".", DIR_LISTED) ||
      scr_preload_state_dryrun()) {
    errno = saved_errno;
    return stream;
  }
  char redirect[PATH_MAX];
  void* cookie = NULL;
  DIR* own = NULL;
  if (dir_ask(&l.t, redirect, &cookie, &own) == SCR_PRELOAD_HANDLED && own) {
    int (*real_closedir)(DIR*) = SCR_REAL(closedir);
    if (real_closedir) real_closedir(own);
    dir_track(stream, &l.t, cookie);
  }
  errno = saved_errno;
  return stream;
}

SCR_PRELOAD_WRAPPER DIR* fdopendir(int fd)
{
  DIR* (*real)(int) = SCR_REAL(fdopendir);
  if (__builtin_expect(scr_preload_state_rules() == NULL && real != NULL, 1)) return real(fd);
  if (!real) {
    errno = ENOSYS;
    return NULL;
  }
  return dir_fdopen_routed(scr_preload_wrap_rules(), real(fd), fd);
}

/* the next entry of a stream: the engine's when the stream is tracked and
 * it answers, else the real readdir64 (is64) or readdir. A stream of the
 * library's own is never the engine's listing (a mark on its number is
 * stale), and the engine may hold its lock on this thread */
static struct dirent64* dir_read(DIR* stream, int is64)
{
  int fd = dir_fd(stream);
  scr_preload_fd_file file;
  if (scr_preload_fd_mark(fd) && (is64 || DIR_SAME_LAYOUT) && !scr_preload_real_is_internal() &&
      scr_preload_fd_lookup(fd, &file) &&
      file.kind == SCR_PRELOAD_FD_DIR && file.hooked) {
    int saved_errno = errno, handled = SCR_PRELOAD_PASS;
    struct dirent64* entry;
    SCR_PRELOAD_HOOK_CALL(entry, scr_preload_hook_readdir(stream, file.cookie, &handled));
    if (handled == SCR_PRELOAD_HANDLED) {
      /* NULL is the end (errno untouched by the hook) or an error (set) */
      if (entry) errno = saved_errno;
      return entry;
    }
    errno = saved_errno;
  }
  if (is64) {
    struct dirent64* (*real)(DIR*) = SCR_REAL(readdir64);
    if (real) return real(stream);
  } else {
    struct dirent* (*real)(DIR*) = SCR_REAL(readdir);
    if (real) return (struct dirent64*) (void*) real(stream);
  }
  errno = ENOSYS;
  return NULL;
}

SCR_PRELOAD_WRAPPER struct dirent* readdir(DIR* stream)
{
  struct dirent* (*real)(DIR*) = SCR_REAL(readdir);
  if (__builtin_expect(!__atomic_load_n(&scr_preload_hot.fd_active, __ATOMIC_ACQUIRE) && real != NULL, 1))
    return real(stream);
  return (struct dirent*) (void*) dir_read(stream, 0);
}

SCR_PRELOAD_WRAPPER struct dirent64* readdir64(DIR* stream)
{
  struct dirent64* (*real)(DIR*) = SCR_REAL(readdir64);
  if (__builtin_expect(!__atomic_load_n(&scr_preload_hot.fd_active, __ATOMIC_ACQUIRE) && real != NULL, 1))
    return real(stream);
  return dir_read(stream, 1);
}

/* a listing the engine answers starts over too */
SCR_PRELOAD_WRAPPER void rewinddir(DIR* stream)
{
  void (*real)(DIR*) = SCR_REAL(rewinddir);
  if (real) real(stream);
  int fd;
  if (__builtin_expect(!__atomic_load_n(&scr_preload_hot.fd_active, __ATOMIC_ACQUIRE), 1) ||
      !scr_preload_fd_mark(fd = dir_fd(stream)))
    return;
  scr_preload_fd_file file;
  if (!scr_preload_real_is_internal() && scr_preload_fd_lookup(fd, &file) && file.kind == SCR_PRELOAD_FD_DIR &&
      file.hooked) {
    int saved_errno = errno;
    scr_preload_hook_rewinddir(stream, file.cookie);
    errno = saved_errno;
  }
}

SCR_PRELOAD_WRAPPER int closedir(DIR* stream)
{
  int (*real)(DIR*) = SCR_REAL(closedir);
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  int fd = -1;
  if (__builtin_expect(!__atomic_load_n(&scr_preload_hot.fd_active, __ATOMIC_ACQUIRE), 1) ||
      !scr_preload_fd_mark(fd = dir_fd(stream)))
    return real(stream);
  scr_preload_fd_file file, last;
  int tracked = scr_preload_fd_lookup(fd, &file);
  int is_last = scr_preload_fd_release(fd, &last);
  int rc = 0, handled = SCR_PRELOAD_PASS;
  int saved_errno = errno;
  /* a stream's end for the engine, whether or not its descriptor was dup'd;
   * not the library's own (see dir_read), whose listing state is lost */
  if (tracked && file.kind == SCR_PRELOAD_FD_DIR && file.hooked && !scr_preload_real_is_internal())
    SCR_PRELOAD_HOOK_CALL(rc, scr_preload_hook_closedir(stream, file.cookie, &handled));
  if (handled == SCR_PRELOAD_HANDLED) {
    SCR_PRELOAD_ERRNO_KEEP(saved_errno, rc == -1);
  } else {
    errno = saved_errno;
    rc = real(stream);
  }
  /* fdopendir on a tracked file's descriptor: closedir closed that file */
  return is_last ? scr_preload_wrap_closed(fd, &last, rc, 0) : rc;
}

/* --- scandir, scandir64: glibc's read the directory without our readdir,
 * so a tracked directory is scanned here, through dir_read */

static int dir_sort(const void* a, const void* b, void* arg)
{
  dir_compare compare = *(const dir_compare*) arg;
  return compare((const struct dirent64**) a, (const struct dirent64**) b);
}

/* scandir on an open stream, which the caller closes */
static int dir_scan(DIR* stream, int is64, struct dirent64*** list, dir_filter filter, dir_compare compare)
{
  int saved_errno = errno, failure = 0;
  struct dirent64** entries = NULL;
  size_t count = 0, capacity = 0;
  for (;;) {
    errno = 0;
    struct dirent64* entry = dir_read(stream, is64);
    if (!entry) {
      failure = errno;
      break;
    }
    if (filter && !filter(entry)) continue;
    if (count == capacity) {
      capacity = capacity ? capacity * 2 : 16;
      struct dirent64** grown = realloc(entries, capacity * sizeof(*entries));
      if (!grown) {
        failure = ENOMEM;
        break;
      }
      entries = grown;
    }
    size_t size = offsetof(struct dirent64, d_name) + strlen(entry->d_name) + 1;
    struct dirent64* copy = malloc(size);
    if (!copy) {
      failure = ENOMEM;
      break;
    }
    memcpy(copy, entry, size);
    copy->d_reclen = (unsigned short) size;
    entries[count++] = copy;
  }
  if (failure) {
    while (count > 0) free(entries[--count]);
    free(entries);
    errno = failure;
    return -1;
  }
  if (compare && count > 1) qsort_r(entries, count, sizeof(*entries), dir_sort, &compare);
  *list = entries;
  errno = saved_errno;
  return (int) count;
}

/* libc's scandir, scandir64, scandirat or scandirat64 (dirfd not AT_FDCWD) */
static int dir_scan_real(int is64, int dirfd, const char* path, void* list, void* filter, void* compare)
{
  if (is64 && dirfd != AT_FDCWD) {
    int (*real)(int, const char*, struct dirent64***, scr_preload_scandir64_filter, scr_preload_scandir64_compare) =
        SCR_REAL(scandirat64);
    if (real)
      return real(dirfd, path, list, (scr_preload_scandir64_filter) filter, (scr_preload_scandir64_compare) compare);
  } else if (is64) {
    int (*real)(const char*, struct dirent64***, scr_preload_scandir64_filter, scr_preload_scandir64_compare) =
        SCR_REAL(scandir64);
    if (real) return real(path, list, (scr_preload_scandir64_filter) filter, (scr_preload_scandir64_compare) compare);
  } else if (dirfd != AT_FDCWD) {
    int (*real)(int, const char*, struct dirent***, scr_preload_scandir_filter, scr_preload_scandir_compare) =
        SCR_REAL(scandirat);
    if (real) return real(dirfd, path, list, (scr_preload_scandir_filter) filter, (scr_preload_scandir_compare) compare);
  } else {
    int (*real)(const char*, struct dirent***, scr_preload_scandir_filter, scr_preload_scandir_compare) =
        SCR_REAL(scandir);
    if (real) return real(path, list, (scr_preload_scandir_filter) filter, (scr_preload_scandir_compare) compare);
  }
  errno = ENOSYS;
  return -1;
}

static const char* const dir_scan_names[2][2] = { { "scandir", "scandirat" }, { "scandir64", "scandirat64" } };

static int dir_scan_routed(int is64, const scr_preload_ruleset* rules, int dirfd, const char* path, void* list,
                           void* filter, void* compare)
{
  scr_preload_lookup l;
  const char* call = dir_scan_names[is64][dirfd != AT_FDCWD];
  char followed[PATH_MAX];
  int n;
  /* as opendir: through a link, what it leads to */
  if (dir_follow(rules, dirfd, path, followed)) {
    SCR_PRELOAD_FOLLOWED(n, dir_scan_routed(is64, rules, AT_FDCWD, followed, list, filter, compare));
    return n;
  }
  if (!rules || (!is64 && !DIR_SAME_LAYOUT) || scr_preload_state_dryrun() ||
      !scr_preload_lookup_path(&l, rules, call, dirfd, path, DIR_LISTED)) {
    n = dir_scan_real(is64, dirfd, path, list, filter, compare);
    if (n < 0 && rules) dir_failed(rules, dirfd, path);
    return n;
  }
  char redirect[PATH_MAX];
  redirect[0] = '\0';
  void* cookie = NULL;
  DIR* d = NULL;
  int handled = dir_ask(&l.t, redirect, &cookie, &d);
  /* nothing to show beyond the directory itself: libc's scandir */
  if (handled != SCR_PRELOAD_HANDLED && !cookie)
    return handled == SCR_PRELOAD_REDIRECT ? dir_scan_real(is64, AT_FDCWD, redirect, list, filter, compare)
                                           : dir_scan_real(is64, dirfd, path, list, filter, compare);
  if (handled != SCR_PRELOAD_HANDLED) d = dir_real_open(handled == SCR_PRELOAD_REDIRECT ? redirect : l.path);
  if (!d) return -1;
  dir_track(d, &l.t, cookie);
  n = dir_scan(d, is64, (struct dirent64***) list, (dir_filter) filter, (dir_compare) compare);
  int error = errno;
  closedir(d);
  errno = error;
  return n;
}

SCR_PRELOAD_WRAPPER int scandir(const char* path, struct dirent*** list, int (*filter)(const struct dirent*),
            int (*compare)(const struct dirent**, const struct dirent**))
{
  scr_preload_scandir_filter f = filter;
  scr_preload_scandir_compare c = compare;
  SCR_PRELOAD_WRAP_INERT(scandir, dir_scan_routed(0, scr_preload_wrap_rules(), AT_FDCWD, path, list, (void*) f, (void*) c),
                         path, list, f, c);
}

SCR_PRELOAD_WRAPPER int scandir64(const char* path, struct dirent64*** list, int (*filter)(const struct dirent64*),
              int (*compare)(const struct dirent64**, const struct dirent64**))
{
  SCR_PRELOAD_WRAP_INERT(scandir64, dir_scan_routed(1, scr_preload_wrap_rules(), AT_FDCWD, path, list, (void*) filter,
                                                   (void*) compare), path, list, filter, compare);
}

SCR_PRELOAD_WRAPPER int scandirat(int dirfd, const char* path, struct dirent*** list,
                                  int (*filter)(const struct dirent*),
                                  int (*compare)(const struct dirent**, const struct dirent**))
{
  scr_preload_scandir_filter f = filter;
  scr_preload_scandir_compare c = compare;
  SCR_PRELOAD_WRAP_INERT(scandirat, dir_scan_routed(0, scr_preload_wrap_rules(), dirfd, path, list, (void*) f,
                                                   (void*) c), dirfd, path, list, f, c);
}

SCR_PRELOAD_WRAPPER int scandirat64(int dirfd, const char* path, struct dirent64*** list,
                                    int (*filter)(const struct dirent64*),
                                    int (*compare)(const struct dirent64**, const struct dirent64**))
{
  SCR_PRELOAD_WRAP_INERT(scandirat64, dir_scan_routed(1, scr_preload_wrap_rules(), dirfd, path, list, (void*) filter,
                                                     (void*) compare), dirfd, path, list, filter, compare);
}
