/* scr_preload_walk.c - nftw(3) and ftw(3) through the wrapped directory and stat
 * functions, so that a walk of the run directory meets the datasets the view shows. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_wrap.h"

/* glibc's walkers read directories and stat names through internal calls no
 * wrapper sees, so a walk would meet only what the file system holds: a
 * program that looks for its newest checkpoint with nftw, or removes old
 * ones with it, would miss the cached ones. While virtual directories are
 * shown, the walk is made here instead, with glibc's observable behaviour:
 * entries in readdir order, the same type flags, struct FTW, FTW_PHYS,
 * FTW_MOUNT, FTW_CHDIR, FTW_DEPTH and FTW_ACTIONRETVAL, directories met
 * twice (through links) walked once, EACCES reported as FTW_DNR or FTW_NS.
 * Unlike glibc it reads a directory whole before it descends, so it holds
 * one descriptor at a time (with FTW_CHDIR one more per level, to come back
 * up), and it names entries by their whole paths, not relative to the
 * directory's descriptor (a path longer than PATH_MAX fails). */

typedef int (*walk_function)(const char*, const struct stat64*, int, struct FTW*);
typedef int (*walk_ftw_function)(const char*, const struct stat64*, int);

/* the type flags as ftw reports them: no FTW_SL, FTW_DP or FTW_SLN there */
static int walk_type(int is_nftw, int flag)
{
  if (is_nftw) return flag;
  switch (flag) {
  case FTW_SL: return FTW_F;
  case FTW_DP: return FTW_D;
  case FTW_SLN: return FTW_NS;
  default: return flag;
  }
}

typedef struct {
  walk_function function;          /* nftw's, or NULL for ftw's: */
  walk_ftw_function ftw_function;
  int is_nftw;
  int flags;
  dev_t device;        /* of the start directory, for FTW_MOUNT */
  void* visited;       /* tsearch tree of the directories walked (not with FTW_PHYS) */
  char* path;          /* the name handed to the function */
  size_t size;
  struct FTW ftw;
} walk_state;

typedef struct {
  dev_t device;
  ino_t inode;
} walk_object;

static int walk_object_compare(const void* a, const void* b)
{
  const walk_object *x = a, *y = b;
  if (x->inode != y->inode) return x->inode < y->inode ? -1 : 1;
  if (x->device != y->device) return x->device < y->device ? -1 : 1;
  return 0;
}

/* 1 when st is a directory not walked yet (and now recorded), 0 when it was,
 * -1 when it could not be recorded */
static int walk_first_visit(walk_state* w, const struct stat64* st)
{
  if (w->flags & FTW_PHYS) return 1;
  walk_object key = { st->st_dev, st->st_ino };
  if (tfind(&key, &w->visited, walk_object_compare)) return 0;
  walk_object* object = malloc(sizeof(*object));
  if (!object) return -1;
  *object = key;
  if (!tsearch(object, &w->visited, walk_object_compare)) {
    free(object);
    return -1;
  }
  return 1;
}

static int walk_call(walk_state* w, const struct stat64* st, int flag)
{
  int type = walk_type(w->is_nftw, flag);
  return w->function ? w->function(w->path, st, type, &w->ftw) : w->ftw_function(w->path, st, type);
}

/* the name to give a call on the current object: with FTW_CHDIR the current
 * directory is its parent */
static const char* walk_name(const walk_state* w)
{
  if (!(w->flags & FTW_CHDIR)) return w->path;
  const char* name = w->path + w->ftw.base;
  return name[0] ? name : ".";
}

static int walk_stat(const walk_state* w, const char* name, struct stat64* st)
{
  return (w->flags & FTW_PHYS) ? lstat64(name, st) : stat64(name, st);
}

/* a directory's entries as one block of NUL-terminated names, ending with an
 * empty one; NULL when out of memory. A read error ends the list, as in
 * glibc's walk. */
static char* walk_read(DIR* stream)
{
  size_t size = 1024, used = 0;
  char* names = malloc(size);
  if (!names) return NULL;
  struct dirent64* entry;
  int saved_errno = errno;
  while ((entry = readdir64(stream)) != NULL) {
    size_t length = strlen(entry->d_name);
    if (used + length + 2 > size) {
      size = 2 * (used + length + 2);
      char* bigger = realloc(names, size);
      if (!bigger) {
        free(names);
        return NULL;
      }
      names = bigger;
    }
    memcpy(names + used, entry->d_name, length + 1);
    used += length + 1;
  }
  errno = saved_errno;
  names[used] = '\0';
  return names;
}

static int walk_directory(walk_state* w, const struct stat64* st, int top);

/* one entry of the directory whose name ends w->path at w->ftw.base */
static int walk_entry(walk_state* w, const char* name)
{
  if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) return 0;
  size_t length = strlen(name), needed = (size_t) w->ftw.base + length + 2;
  if (needed > w->size) {
    char* bigger = realloc(w->path, 2 * needed);
    if (!bigger) return -1;
    w->path = bigger;
    w->size = 2 * needed;
  }
  memcpy(w->path + w->ftw.base, name, length + 1);

  struct stat64 st;
  memset(&st, 0, sizeof(st));
  int flag;
  const char* target = walk_name(w);
  if (walk_stat(w, target, &st) < 0) {
    if (errno != EACCES && errno != ENOENT) return -1;
    flag = FTW_NS;
    /* a dangling link is reported as the link (what lstat says) */
    if (!(w->flags & FTW_PHYS) && lstat64(target, &st) == 0 && S_ISLNK(st.st_mode)) flag = FTW_SLN;
  } else {
    flag = S_ISDIR(st.st_mode) ? FTW_D : S_ISLNK(st.st_mode) ? FTW_SL : FTW_F;
  }

  int result = 0;
  if (flag == FTW_NS || !(w->flags & FTW_MOUNT) || st.st_dev == w->device) {
    if (flag == FTW_D) {
      int first = walk_first_visit(w, &st);
      result = first < 0 ? -1 : first ? walk_directory(w, &st, 0) : 0;
    } else {
      result = walk_call(w, &st, flag);
    }
  }
  if ((w->flags & FTW_ACTIONRETVAL) && result == FTW_SKIP_SUBTREE) result = 0;
  return result;
}

/* the real fchdir: the walk enters a virtual directory's mirror, which
 * the wrapper would make on the file system instead */
static int walk_fchdir(int fd)
{
  int (*real)(int) = SCR_REAL(fchdir);
  return real ? real(fd) : (int) syscall(SYS_fchdir, fd);
}

/* back to the directory that was current before a descent: fd when it
 * could be opened, else ".." (or "/" from the top of the tree) */
static int walk_return(int fd, int at_root)
{
  int rc;
  if (fd >= 0) {
    rc = walk_fchdir(fd);
    close(fd);
    if (rc == 0) return 0;
  }
  return chdir(at_root ? "/" : "..");
}

/* the directory named by w->path (stat st): reported, then its entries */
static int walk_directory(walk_state* w, const struct stat64* st, int top)
{
  DIR* stream = opendir(walk_name(w));
  if (!stream) return errno == EACCES ? walk_call(w, st, FTW_DNR) : -1;
  int result = 0;
  if (!(w->flags & FTW_DEPTH) && (result = walk_call(w, st, FTW_D)) != 0) {
    int saved_errno = errno;
    closedir(stream);
    errno = saved_errno;
    return result;
  }
  /* with FTW_CHDIR, into the directory through its stream, as glibc does (a
   * directory that exists only in the view is its mirror, where names are
   * looked up in the view; chdir by name would make it on the file system);
   * "." of the parent is kept to come back */
  int parent = -1;
  if (w->flags & FTW_CHDIR) {
    if (!top) parent = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (walk_fchdir(dirfd(stream)) < 0) {
      int saved_errno = errno;
      if (parent >= 0) close(parent);
      closedir(stream);
      errno = saved_errno;
      return -1;
    }
  }
  char* names = walk_read(stream);
  int saved_errno = errno;
  closedir(stream);
  errno = saved_errno;

  int previous_base = w->ftw.base;
  size_t end = strlen(w->path);
  if (end == 0 || w->path[end - 1] != '/') w->path[end++] = '/';
  w->path[end] = '\0';
  w->ftw.base = (int) end;
  w->ftw.level++;
  if (!names) {
    result = -1;
  } else {
    for (const char* name = names; result == 0 && *name; name += strlen(name) + 1) result = walk_entry(w, name);
    saved_errno = errno;
    free(names);
    errno = saved_errno;
  }
  if ((w->flags & FTW_ACTIONRETVAL) && result == FTW_SKIP_SIBLINGS) result = 0;
  w->path[w->ftw.base - 1] = '\0';
  w->ftw.level--;
  w->ftw.base = previous_base;

  if (result == 0 && (w->flags & FTW_DEPTH)) result = walk_call(w, st, FTW_DP);
  /* the start directory's caller returns to where the walk started */
  if ((w->flags & FTW_CHDIR) && !top) {
    int back = result == 0 || ((w->flags & FTW_ACTIONRETVAL) && result != -1 && result != FTW_STOP);
    if (back) {
      saved_errno = errno;
      if (walk_return(parent, w->ftw.base == 1) < 0) result = -1;
      else errno = saved_errno;
    } else if (parent >= 0) {
      saved_errno = errno;
      close(parent);
      errno = saved_errno;
    }
  }
  return result;
}

/* nftw (function) and ftw (ftw_function, flags 0) as glibc makes them */
static int walk_start(const char* root, walk_function function, walk_ftw_function ftw_function, int flags)
{
  if (root[0] == '\0') {
    errno = ENOENT;
    return -1;
  }
  walk_state w;
  memset(&w, 0, sizeof(w));
  w.function = function;
  w.ftw_function = ftw_function;
  w.is_nftw = function != NULL;
  w.flags = flags;
  size_t length = strlen(root);
  w.size = 2 * length > PATH_MAX ? 2 * length : PATH_MAX;
  if (!(w.path = malloc(w.size))) return -1;
  memcpy(w.path, root, length + 1);
  /* trailing slashes go, all but the first character */
  while (length > 1 && w.path[length - 1] == '/') w.path[--length] = '\0';
  size_t base = length;
  while (base > 0 && w.path[base - 1] != '/') base--;
  w.ftw.base = (int) base;

  int result = 0, start = -1;
  char* start_name = NULL;
  if (flags & FTW_CHDIR) {
    /* from the directory holding the start object; back here at the end */
    start = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (start < 0 && (errno != EACCES || !(start_name = getcwd(NULL, 0)))) {
      free(w.path);
      return -1;
    }
    if (base == 1) {
      result = chdir("/");
    } else if (base > 0) {
      char kept = w.path[base - 1];
      w.path[base - 1] = '\0';
      result = chdir(w.path);
      w.path[base - 1] = kept;
    }
  }
  if (result == 0) {
    struct stat64 st;
    memset(&st, 0, sizeof(st));
    const char* name = walk_name(&w);
    if (walk_stat(&w, name, &st) < 0) {
      if (!(flags & FTW_PHYS) && errno == ENOENT && lstat64(name, &st) == 0 && S_ISLNK(st.st_mode))
        result = walk_call(&w, &st, FTW_SLN);
      else
        result = -1;
    } else if (S_ISDIR(st.st_mode)) {
      w.device = st.st_dev;
      int first = walk_first_visit(&w, &st);
      result = first < 0 ? -1 : walk_directory(&w, &st, 1);
    } else {
      result = walk_call(&w, &st, S_ISLNK(st.st_mode) ? FTW_SL : FTW_F);
    }
    if ((flags & FTW_ACTIONRETVAL) && (result == FTW_SKIP_SUBTREE || result == FTW_SKIP_SIBLINGS)) result = 0;
  }
  int saved_errno = errno;
  if (start >= 0) {
    if (walk_fchdir(start) < 0) { /* the walk's result stands */ }
    close(start);
  } else if (start_name) {
    if (chdir(start_name) < 0) { /* likewise */ }
    free(start_name);
  }
  tdestroy(w.visited, free);
  free(w.path);
  errno = saved_errno;
  return result;
}

/* the walk is made here only while the view shows directories: otherwise
 * glibc's sees all there is */
static int walk_routed(void)
{
  return scr_preload_wrap_rules() && !scr_preload_state_dryrun() &&
         __atomic_load_n(&scr_preload_hot.directories, __ATOMIC_RELAXED);
}

#define WALK_FLAGS (FTW_PHYS | FTW_MOUNT | FTW_CHDIR | FTW_DEPTH | FTW_ACTIONRETVAL)

/* struct stat is struct stat64 on 64-bit Linux; elsewhere the non-64 forms
 * are left to glibc */
#define WALK_SAME_STAT (sizeof(struct stat) == sizeof(struct stat64))

/* the wrappers' slow path: the walk here, or glibc's (ENOSYS when it cannot
 * be found) */
#define WALK_ROUTED(name, nftw_function, ftw_function, same_stat, flags, ...) \
  __extension__({ \
    int walk_result_; \
    if (!real) { \
      errno = ENOSYS; \
      walk_result_ = -1; \
    } else if (!(same_stat) || !walk_routed()) { \
      walk_result_ = real(__VA_ARGS__); \
    } else if ((flags) & ~WALK_FLAGS) { \
      errno = EINVAL; \
      walk_result_ = -1; \
    } else { \
      walk_result_ = walk_start(root, (nftw_function), (ftw_function), (flags)); \
    } \
    walk_result_; \
  })

SCR_PRELOAD_WRAPPER int nftw64(const char* root, walk_function function, int nopenfd, int flags)
{
  SCR_PRELOAD_WRAP_INERT(nftw64, WALK_ROUTED(nftw64, function, NULL, 1, flags, root, function, nopenfd, flags), root, function,
                         nopenfd, flags);
}

SCR_PRELOAD_WRAPPER int nftw(const char* root, int (*function)(const char*, const struct stat*, int, struct FTW*),
                             int nopenfd, int flags)
{
  SCR_PRELOAD_WRAP_INERT(nftw, WALK_ROUTED(nftw, (walk_function) function, NULL, WALK_SAME_STAT, flags, root, function, nopenfd, flags), root,
                         function, nopenfd, flags);
}

SCR_PRELOAD_WRAPPER int ftw64(const char* root, int (*function)(const char*, const struct stat64*, int), int nopenfd)
{
  SCR_PRELOAD_WRAP_INERT(ftw64, WALK_ROUTED(ftw64, NULL, function, 1, 0, root, function, nopenfd), root, function, nopenfd);
}

SCR_PRELOAD_WRAPPER int ftw(const char* root, int (*function)(const char*, const struct stat*, int), int nopenfd)
{
  SCR_PRELOAD_WRAP_INERT(ftw, WALK_ROUTED(ftw, NULL, (walk_ftw_function) function, WALK_SAME_STAT, 0, root, function, nopenfd), root, function,
                         nopenfd);
}
