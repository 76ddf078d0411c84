/* scr_preload_share.c - the copies a rank keeps of the restored checkpoint's files
 * that another rank wrote for all (a header, a step's metadata), shown at their paths. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
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

/* A rank's cache holds only the files it wrote, but on the parallel file
 * system every rank can read every file: codes where rank 0 writes a header
 * that all ranks read at restart would find it missing on every other rank.
 * The files of a rule without {rank} that exactly one rank wrote in the
 * restored dataset are therefore broadcast at restart to every other rank,
 * which keeps a copy under <cache>/.scr_shared.<rank>/ (outside every
 * dataset and every filemap) shown at the original path by the view. The
 * copies are removed at MPI_Finalize, and at the next start after a run that
 * died: a later run, perhaps on other nodes, starts from the cache as it was.
 * The copying at restart is scr_preload_share_restart.c's (MPI); the list
 * of copies is kept here, MPI-free, for a rank's child process too. */

struct shared_file {
  char* orig;        /* the path the application reads */
  char* shown;       /* the copy */
  int dataset;
};
static struct shared_file* shared = NULL;
static int shared_count = 0;
/* bumped whenever the list changes, for the view's index (scr_view_find) */
unsigned long scr_share_changes = 0;

/* this rank's directory of copies */
static char* share_dir(void)
{
  char* dir = NULL;
  if (asprintf(&dir, "%s/" SCR_SHARE_DIRECTORY ".%d", scr.cache_dir, scr.rank) < 0) return NULL;
  return dir;
}

/* the list, freed and empty */
static void share_free_list(void)
{
  for (int i = 0; i < shared_count; i++) {
    free(shared[i].orig);
    free(shared[i].shown);
  }
  free(shared);
  shared = NULL;
  shared_count = 0;
  scr_share_changes++;
}

void scr_share_clear(void)
{
  share_free_list();
  char* dir = share_dir();
  if (dir) scr_io_remove_tree(dir);
  free(dir);
}

/* orig shown as shown (taken) in the list: 1, or 0 when memory is short */
static int share_append(const char* orig, char* shown, int id)
{
  struct shared_file* grown = realloc(shared, (size_t) (shared_count + 1) * sizeof(*shared));
  char* copy = strdup(orig);
  if (!grown || !copy) {
    if (grown) shared = grown;
    free(copy);
    return 0;
  }
  shared = grown;
  shared[shared_count].orig = copy;
  shared[shared_count].shown = shown;
  shared[shared_count].dataset = id;
  shared_count++;
  scr_share_changes++;
  return 1;
}

void scr_share_add(const char* orig, char* shown, int id)
{
  if (share_append(orig, shown, id)) return;
  unlink(shown);
  free(shown);
}

/* the copy of orig on this rank: the same relative path below its directory */
char* scr_share_copy_path(const char* orig)
{
  char* dir = share_dir();
  char* relpath = scr_path_relative_to(scr.prefix, orig);
  char* path = dir && relpath && scr_path_is_safe_relative(relpath) ? scr_path_join(dir, relpath) : NULL;
  char* parent = path ? scr_path_dirname(path) : NULL;
  if (!parent || scr_io_mkdir_p(parent, 0700) != SCR_SUCCESS) {
    free(path);
    path = NULL;
  }
  free(parent);
  free(relpath);
  free(dir);
  return path;
}

int scr_share_each(int id, int (*visit)(const char* orig, const char* shown, int id, void* arg), void* arg)
{
  for (int i = 0; i < shared_count; i++) {
    if (shared[i].dataset != id) continue;
    int rc = visit(shared[i].orig, shared[i].shown, id, arg);
    if (rc) return rc;
  }
  return 0;
}

int scr_share_holds(const char* shown)
{
  for (int i = 0; i < shared_count; i++)
    if (strcmp(shared[i].shown, shown) == 0) return 1;
  return 0;
}

int scr_share_drop(const char* shown)
{
  for (int i = 0; i < shared_count; i++) {
    if (strcmp(shared[i].shown, shown) != 0) continue;
    unlink(shared[i].shown);
    free(shared[i].shown);
    free(shared[i].orig);
    shared[i] = shared[--shared_count];
    scr_share_changes++;
    return 1;
  }
  return 0;
}

/* ---- a child process of the rank (scr_preload_child_view.c) */

void scr_share_forget_inherited(void)
{
  shared = NULL;
  shared_count = 0;
}

/* the copies below dir, whose path below the copies' directory is rel
 * ("" at the top), into the list for dataset id */
static void share_walk(const char* dir, const char* rel, int id, int depth)
{
  DIR* d = depth < 64 ? opendir(dir) : NULL;
  struct dirent* e;
  while (d && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char* path = scr_path_join(dir, e->d_name);
    char* below = rel[0] ? scr_path_join(rel, e->d_name) : strdup(e->d_name);
    char* orig = below ? scr_path_join(scr.prefix, below) : NULL;
    struct stat st;
    if (path && orig && lstat(path, &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        share_walk(path, below, id, depth + 1);
      } else if (S_ISREG(st.st_mode) && share_append(orig, path, id)) {
        path = NULL;
      }
    }
    free(orig);
    free(below);
    free(path);
  }
  if (d) closedir(d);
}

void scr_share_load(int id)
{
  share_free_list();
  char* dir = id >= 0 ? share_dir() : NULL;
  if (dir) share_walk(dir, "", id, 0);
  free(dir);
}
