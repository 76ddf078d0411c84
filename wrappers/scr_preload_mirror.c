/* scr_preload_mirror.c - rule directories that exist only in the view, made real
 * as trees of hard links in node-local storage, so that descriptors of them work. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
 * under <cache>/.scr_view.<rank>/ at the same relative path, holding a hard
 * link to each file the view shows there (the cached file itself; a symbolic
 * link where no hard link can be made) and a directory for each directory.
 * stat of the virtual directory shows the mirror, so the name and the
 * descriptor agree (same device and inode, which shutil.rmtree checks); the
 * preload names paths resolved inside the mirror back to their original
 * paths (scr_preload_hooks_view_mirror), so the calls relative to the
 * descriptor reach the engine like any other. */

static char* mirror_root = NULL;

int scr_mirror_init(void)
{
  if (asprintf(&mirror_root, "%s/.scr_view.%d", scr.cache_dir, scr.rank) < 0) {
    mirror_root = NULL;
    return SCR_ERR_NOMEM;
  }
  scr_io_remove_tree(mirror_root); /* an earlier run's */
  scr_preload_hooks_view_mirror(mirror_root, scr.prefix);
  return SCR_SUCCESS;
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

struct mirror_fill {
  const char* dir;      /* the virtual directory */
  const char* mirror;   /* its mirror */
};

/* one shown file or directory below the virtual directory into the mirror;
 * the newest dataset comes first, so an older file of the same name stays out */
static int mirror_add(const char* orig, const char* shown, int is_directory, void* arg)
{
  const struct mirror_fill* f = arg;
  if (!scr_path_is_within(orig, f->dir) || strcmp(orig, f->dir) == 0) return 0;
  char* relpath = scr_path_relative_to(f->dir, orig);
  char* path = relpath ? scr_path_join(f->mirror, relpath) : NULL;
  char* parent = path ? scr_path_dirname(path) : NULL;
  if (parent && scr_io_mkdir_p(is_directory ? path : parent, 0700) == SCR_SUCCESS && !is_directory &&
      link(shown, path) != 0 && errno != EEXIST && symlink(shown, path) != 0 && errno != EEXIST)
    scr_err("cannot show %s in the mirror %s: %s", orig, path, strerror(errno));
  free(parent);
  free(path);
  free(relpath);
  return 0;
}

/* empty the mirror directory, keeping the directory itself (its inode is
 * what stat showed) */
static void mirror_empty(const char* mirror)
{
  DIR* d = opendir(mirror);
  struct dirent* e;
  while (d && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char* path = scr_path_join(mirror, e->d_name);
    if (path) scr_io_remove_tree(path);
    free(path);
  }
  if (d) closedir(d);
}

char* scr_mirror_directory(const char* dir, int fill)
{
  char* mirror = mirror_of(dir);
  if (!mirror || scr_io_mkdir_p(mirror, 0700) != SCR_SUCCESS) {
    free(mirror);
    return NULL;
  }
  if (fill) {
    struct mirror_fill f = { dir, mirror };
    mirror_empty(mirror);
    scr_view_each_entry(mirror_add, &f);
  }
  return mirror;
}

void scr_mirror_forget(const char* orig)
{
  char* path = mirror_of(orig);
  if (path && unlink(path) != 0 && errno == EISDIR) rmdir(path);
  free(path);
}
