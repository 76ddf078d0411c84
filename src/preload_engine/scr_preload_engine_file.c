/* scr_preload_engine_file.c - what is known of one routed file: its record, the rule
 * its path matched and its dataset's name, its other names (links), whether its directory is there. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "scr.h"
#include "scr_path.h"
#include "scr_filemap.h"
#include "scr_globals.h"
#include "scr_preload_engine_impl.h"

/* ---- the records of routed files, which the hooks and the operations on names share */

void scr_engine_file_free(struct scr_engine_file* f)
{
  if (!f) return;
  free(f->orig);
  free(f->relpath);
  free(f->cache);
  free(f);
}

struct scr_engine_file* scr_engine_file_new(int dataset, int attached, const char* orig, const char* relpath,
                                            const char* cache)
{
  struct scr_engine_file* f = calloc(1, sizeof(*f));
  if (!f) return NULL;
  f->dataset = dataset;
  f->attached = attached;
  f->orig = strdup(orig);
  f->relpath = strdup(relpath);
  f->cache = strdup(cache);
  if (!f->orig || !f->relpath || !f->cache) {
    scr_engine_file_free(f);
    return NULL;
  }
  return f;
}

/* the rule a target matched, or NULL */
const scr_preload_rule* scr_engine_rule(const scr_preload_target* target)
{
  return target->rules ? scr_preload_rules_at(target->rules, target->match.rule) : NULL;
}

/* ---- names */

/* The dataset name: the path up to the component that holds {step}, with
 * the rank digits, when they are in it, spelled "{rank}" so that every rank
 * proposes the same name ("ckpt.12", "restart_{rank}_000012.dat"). */
char* scr_engine_dataset_name(const scr_preload_target* t, const char* relpath)
{
  size_t rel_start = strlen(t->path) - strlen(relpath);
  size_t end = t->match.step_offset + t->match.step_length;
  while (end < t->length && t->path[end] != '/') end++;
  if (end <= rel_start) return strdup(relpath);
  size_t rank_at = t->match.rank_length ? t->match.rank_offset : (size_t) -1;
  size_t length = end - rel_start + 8;
  char* name = malloc(length + 1);
  if (!name) return NULL;
  size_t out = 0;
  for (size_t i = rel_start; i < end; i++) {
    if (i == rank_at) {
      memcpy(name + out, "{rank}", 6);
      out += 6;
      i += t->match.rank_length - 1;
    } else {
      name[out++] = t->path[i];
    }
  }
  name[out] = '\0';
  return name;
}

/* ---- links: the entries of one file share a LINK value (scr_filemap.h) */

int scr_engine_link_each(int id, const char* cache, int (*visit)(const char* cache, scr_kvtree* meta, void* arg),
                         void* arg)
{
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, id, scr.rank);
  scr_kvtree* meta = scr_kvtree_get(files, cache);
  const char* group = scr_kvtree_get_val(meta, SCR_FILEMAP_KEY_LINK);
  if (!group) return meta ? visit(cache, meta, arg) : 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
    const char* other = scr_kvtree_get_val(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_LINK);
    int rc = other && strcmp(other, group) == 0 ? visit(scr_kvtree_elem_key(e), scr_kvtree_elem_tree(e), arg) : 0;
    if (rc) return rc;
  }
  return 0;
}

struct link_search {
  const char* cache;
  const char* found;
};

static int link_find_other(const char* cache, scr_kvtree* meta, void* arg)
{
  (void) meta;
  struct link_search* s = arg;
  if (strcmp(cache, s->cache) == 0) return 0;
  s->found = cache;
  return 1;
}

const char* scr_engine_link_other(int id, const char* cache)
{
  struct link_search s = { cache, NULL };
  scr_engine_link_each(id, cache, link_find_other, &s);
  return s.found;
}

static int link_find(const char* cache, scr_kvtree* meta, void* arg)
{
  (void) meta;
  return strcmp(cache, ((struct link_search*) arg)->cache) == 0;
}

int scr_engine_link_same(int id, const char* a, const char* b)
{
  struct link_search s = { b, NULL };
  return strcmp(a, b) == 0 || scr_engine_link_each(id, a, link_find, &s);
}

/* ---- directories */

/* 1 when dir, or a directory above it in the prefix directory, is a file
 * the view shows: where the kernel's lookup of a name below it stops with
 * ENOTDIR (the file system has nothing there, and says ENOENT) */
static int engine_below_shown_file(const char* dir)
{
  char* at = strdup(dir);
  int found = 0;
  while (!found && at && scr_path_is_within(at, scr.prefix) && strcmp(at, scr.prefix) != 0) {
    int dataset = -1;
    char* shown = scr_view_find(at, &dataset);
    found = shown != NULL;
    free(shown);
    char* up = scr_path_dirname(at);
    free(at);
    at = up;
  }
  free(at);
  return found;
}

/* 1, with errno ENOENT or ENOTDIR, when the directory a new file of path
 * would go in is neither on the file system (where every rank makes its
 * directories) nor shown by the view (a restored checkpoint's directory the
 * file system no longer has); *nlink: the directory's st_nlink when the
 * file system has it, else 0 */
int scr_engine_parent_missing(const char* path, nlink_t* nlink)
{
  int saved_errno = errno;
  char* parent = scr_path_dirname(path);
  struct stat st;
  int missing = 0;
  if (nlink) *nlink = 0;
  if (parent && stat(parent, &st) == 0) {
    missing = !S_ISDIR(st.st_mode);
    if (missing) saved_errno = ENOTDIR;
    else if (nlink) *nlink = st.st_nlink;
  } else if (parent && (errno == ENOENT || errno == ENOTDIR)) {
    int stat_errno = errno; /* before the view's lookup, which may change it */
    missing = !scr_view_is_directory(parent);
    if (missing) saved_errno = stat_errno == ENOENT && engine_below_shown_file(parent) ? ENOTDIR : stat_errno;
  }
  free(parent);
  errno = saved_errno; /* the program's, unless this is the open's failure */
  return missing;
}

/* a new file at path, in a directory of the file system with st_nlink
 * nlink: 1 with errno EISDIR when path itself is a directory there, which
 * a rule that matches directories too (a pattern ending in **: out/d as
 * well as out/d/x), or any rule where the program made a directory at a
 * file's name, would otherwise put a cache file in front of. Asked of the
 * file system only when that directory has subdirectories (st_nlink other
 * than 2, which file systems that do not count them give too): in a
 * checkpoint directory of files alone it costs no look-up more per file. */
int scr_engine_name_is_directory(const char* path, nlink_t nlink)
{
  struct stat st;
  int saved_errno = errno;
  int directory = nlink != 0 && nlink != 2 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
  errno = directory ? EISDIR : saved_errno;
  return directory;
}
