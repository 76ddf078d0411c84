/* scr_preload_mirror.c - rule directories that exist only in the view, made real
 * as trees of empty placeholders in node-local storage, so that descriptors of them work. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_globals.h"
#include "scr_preload_engine_impl.h"

/* A listing of a virtual directory through opendir is answered by the view,
 * but programs also open a directory as a descriptor and work relative to
 * it: fdopendir or getdents64, then fstatat, openat, unlinkat (C++'s
 * std::filesystem::remove_all, Python's os.scandir(fd) and shutil.rmtree).
 * Those need a real directory. The mirror of a virtual directory is one,
 * under <cache>/.scr_view.<rank>/ at the same relative path, holding an
 * empty file for each file the view shows there and a directory for each
 * directory. The entries only carry names and types: every call relative to
 * the mirror is matched under the original path the preload names it by
 * (scr_preload_hooks_view_mirror), so it reaches the view like any other and
 * is answered from the cached file; holding no data, a mirror keeps nothing
 * alive that the cache drops. Its directories carry the modes mkdir gave
 * (mirror_make). stat of the virtual directory shows the mirror, so the
 * name and a descriptor agree (same device and inode, which
 * shutil.rmtree checks); a refill changes entries in place, so descriptors
 * of subdirectories stay valid. */

static char* mirror_root = NULL;

int scr_mirror_init(void)
{
  char* root = NULL;
  if (asprintf(&root, "%s/" SCR_MIRROR_DIRECTORY ".%d", scr.cache_dir, scr.rank) < 0) return SCR_ERR_NOMEM;
  scr_io_remove_tree(root); /* an earlier run's */
  /* the kernel names a descriptor's directory by its canonical path, which
   * is what the preload compares with */
  char canonical[PATH_MAX];
  if (scr_io_mkdir_p(root, 0700) != SCR_SUCCESS || !realpath(root, canonical)) {
    scr_err("cannot make the directory %s for descriptors of virtual directories: %s", root, strerror(errno));
    free(root);
    return SCR_ERR_IO;
  }
  free(root);
  mirror_root = strdup(canonical);
  if (mirror_root) scr_preload_hooks_view_mirror(mirror_root, scr.prefix);
  return mirror_root ? SCR_SUCCESS : SCR_ERR_NOMEM;
}

void scr_mirror_forget_inherited(void)
{
  mirror_root = NULL;
}

void scr_mirror_finalize(void)
{
  scr_preload_hooks_view_mirror(NULL, NULL);
  if (mirror_root) scr_io_remove_tree(mirror_root);
  free(mirror_root);
  mirror_root = NULL;
}

/* where orig (the prefix directory or below) is mirrored; NULL outside */
static char* mirror_of(const char* orig)
{
  if (!mirror_root) return NULL;
  char* relpath = scr_path_relative_to(scr.prefix, orig);
  char* path = NULL;
  if (relpath && strcmp(relpath, ".") == 0) path = strdup(mirror_root);
  else if (relpath) path = scr_path_join(mirror_root, relpath);
  free(relpath);
  return path;
}

/* the mirror directory of the virtual directory orig, made when missing,
 * with each missing directory on the way from the mirror root, with the
 * permissions of mkdir(0777), as a program that makes its directories with
 * mkdir -p would have them (a chmod of the virtual directory changes its
 * mirror, which then is what stat shows). The mirror root is 0700 in the
 * private cache directory, so no mode below it opens the cache to anyone
 * else. 1 when the mirror directory itself was made now, 0 when it was
 * there, -1 with errno. */
static int mirror_make(const char* mirror, const char* orig)
{
  size_t root = strlen(mirror_root), length = strlen(mirror);
  if (strncmp(mirror, mirror_root, root) != 0 || (mirror[root] != '/' && mirror[root] != '\0') ||
      strlen(orig) < length - root) {
    errno = EINVAL;
    return -1;
  }
  char* path = strdup(mirror);
  int rc = path ? 0 : -1, made = 0;
  for (size_t end = root + 1; rc == 0 && end <= length; end++) {
    if (path[end] != '/' && path[end] != '\0') continue;
    path[end] = '\0';
    if (mkdir(path, 0777) == 0) {
      made = end == length;
    } else if (errno != EEXIST) {
      rc = -1;
    }
    path[end] = mirror[end];
  }
  if (!path) errno = ENOMEM;
  free(path);
  return rc == 0 ? made : -1;
}

/* what the view shows below a virtual directory: relative path -> "F" or "D" */
struct mirror_want {
  const char* dir;
  scr_kvtree* entries;
};

static int mirror_want_entry(const char* orig, const char* shown, int is_directory, void* arg)
{
  (void) shown;
  struct mirror_want* w = arg;
  if (!scr_path_is_within(orig, w->dir) || strcmp(orig, w->dir) == 0) return 0;
  char* relpath = scr_path_relative_to(w->dir, orig);
  if (!relpath) return 0;
  /* the newest dataset comes first: a name already wanted keeps its kind */
  if (!scr_kvtree_get(w->entries, relpath)) scr_kvtree_set_kv(w->entries, relpath, is_directory ? "D" : "F");
  /* and every directory leading to it */
  for (char* slash = strrchr(relpath, '/'); slash; slash = strrchr(relpath, '/')) {
    *slash = '\0';
    scr_kvtree_set_kv(w->entries, relpath, "D");
  }
  free(relpath);
  return 0;
}

static const char* mirror_kind(const scr_kvtree* entries, const char* relpath)
{
  scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(entries, relpath));
  return e ? scr_kvtree_elem_key(e) : NULL;
}

/* remove what the mirror below `path` (relative: rel, "" at the top) holds
 * and the view no longer shows, or shows as the other kind */
static void mirror_prune(const char* path, const char* rel, const scr_kvtree* entries)
{
  DIR* d = opendir(path);
  struct dirent* e;
  while (d && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char* sub = scr_path_join(path, e->d_name);
    char* subrel = *rel ? scr_path_join(rel, e->d_name) : strdup(e->d_name);
    const char* kind = subrel ? mirror_kind(entries, subrel) : NULL;
    int is_directory = e->d_type == DT_DIR;
    if (sub && subrel && kind && (strcmp(kind, "D") == 0) == is_directory) {
      if (is_directory) mirror_prune(sub, subrel, entries);
    } else if (sub) {
      scr_io_remove_tree(sub);
    }
    free(subrel);
    free(sub);
  }
  if (d) closedir(d);
}

static void mirror_fill(const char* dir, const char* mirror, const scr_kvtree* entries)
{
  for (scr_kvtree_elem* e = scr_kvtree_first(entries); e; e = scr_kvtree_next(e)) {
    const char* kind = mirror_kind(entries, scr_kvtree_elem_key(e));
    int is_directory = kind && strcmp(kind, "D") == 0;
    char* path = scr_path_join(mirror, scr_kvtree_elem_key(e));
    char* orig = scr_path_join(dir, scr_kvtree_elem_key(e));
    char* parent = path && orig ? scr_path_dirname(path) : NULL;
    char* orig_parent = parent ? scr_path_dirname(orig) : NULL;
    int rc = orig_parent && mirror_make(is_directory ? path : parent, is_directory ? orig : orig_parent) >= 0
               ? SCR_SUCCESS : SCR_ERR_IO;
    if (rc == SCR_SUCCESS && kind && strcmp(kind, "F") == 0) {
      int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd >= 0) close(fd);
      else if (errno != EEXIST) rc = SCR_ERR_IO;
    }
    if (rc != SCR_SUCCESS) scr_err("cannot show %s in %s: %s", scr_kvtree_elem_key(e), mirror, strerror(errno));
    free(orig_parent);
    free(parent);
    free(orig);
    free(path);
  }
}

char* scr_mirror_directory(const char* dir, int fill)
{
  char* mirror = mirror_of(dir);
  int made = mirror ? mirror_make(mirror, dir) : -1;
  if (made < 0) {
    free(mirror);
    return NULL;
  }
  if (fill) {
    struct mirror_want want = { dir, scr_kvtree_new() };
    scr_view_each_entry(mirror_want_entry, &want);
    mirror_prune(mirror, "", want.entries);
    mirror_fill(dir, mirror, want.entries);
    scr_kvtree_delete(&want.entries);
  }
  /* made or filled just now: its time is the directory's, not now (which
   * costs a look at every file shown below it: not at every stat) */
  if (made || fill) scr_view_stamp_mirror(dir, mirror);
  return mirror;
}

void scr_mirror_forget(const char* orig)
{
  char* path = mirror_of(orig);
  if (path && unlink(path) != 0 && errno == EISDIR) rmdir(path);
  free(path);
}
