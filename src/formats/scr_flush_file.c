/* scr_flush_file.c - maintain <prefix>/.scr/flush.scr (see scr_flush_file.h).
 * Only rank 0 of a job writes it (atomically), and only when a reader would see a change. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_kvtree.h"
#include "scr_dataset.h"
#include "scr_flush_file.h"
#include "scr_publish.h"

static char* scr_flush_file_path(const char* prefix)
{
  char* path = NULL;
  if (asprintf(&path, "%s/.scr/flush.scr", prefix) < 0) return NULL;
  return path;
}

/* What the job meant the file to say (rank 0 is its only writer while the job
 * runs), and the file it stands for. The file is rewritten (a temporary file,
 * fsync, rename and an fsync of the directory: on a parallel file system the
 * dearest writes of a checkpoint) only when what its readers depend on
 * changes (scr_flush_file_matters); otherwise the change stays here and goes
 * out with the next write. A checkpoint that completes in cache while an
 * older one still is, and the eviction of that older one, write nothing. */
static scr_kvtree* scr_flush_file_meant = NULL;
static char* scr_flush_file_meant_path = NULL;

/* the readers: scr_postrun asks whether any dataset is not on the prefix
 * directory (CACHE or FLUSHING); a flush asks whether one of its dataset began
 * and never ended (FLUSHING), scr_index whether one is being published. Which datasets are in CACHE, their names, and
 * which are on the prefix directory (PFS), nobody asks: a listed dataset that
 * left the cache since, or one in CACHE that replaced another there, changes
 * no answer. 1 when a and b answer alike. */
static int scr_flush_file_same_answers(const scr_kvtree* a, const scr_kvtree* b)
{
  const scr_kvtree* trees[2] = { a, b };
  int pending[2] = { 0, 0 };
  for (int t = 0; t < 2; t++) {
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(trees[t], "DSET")); e; e = scr_kvtree_next(e)) {
      const char* location = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "LOCATION");
      if (!location || strcmp(location, SCR_FLUSH_FILE_PFS) != 0) pending[t] = 1;
      /* a flush under way, or a publish (which scr_index shows), is said at once */
      if (!location || (strcmp(location, SCR_FLUSH_FILE_FLUSHING) != 0 &&
                        strcmp(location, SCR_FLUSH_FILE_PUBLISHING) != 0))
        continue;
      const char* other = scr_kvtree_get_val(scr_kvtree_get_kv_int(trees[1 - t], "DSET", scr_kvtree_elem_key_int(e)),
                                             "LOCATION");
      if (!other || strcmp(other, location) != 0) return 0;
    }
  }
  return pending[0] == pending[1];
}

/* the tree the job means the file to hold, read from the file the first time
 * (or when the prefix changed); NULL when out of memory */
static scr_kvtree* scr_flush_file_meant_for(const char* path)
{
  if (scr_flush_file_meant && scr_flush_file_meant_path && strcmp(scr_flush_file_meant_path, path) == 0)
    return scr_flush_file_meant;
  scr_kvtree_delete(&scr_flush_file_meant);
  free(scr_flush_file_meant_path);
  scr_flush_file_meant_path = strdup(path);
  scr_flush_file_meant = scr_kvtree_new();
  if (scr_kvtree_read_file_if_exists(path, scr_flush_file_meant) != SCR_SUCCESS)
    scr_kvtree_clear(scr_flush_file_meant); /* rebuilt from what we know now */
  return scr_flush_file_meant;
}

static int scr_flush_file_edit(const char* prefix, int id, const char* name, const char* location)
{
  /* the one writer of the file: a publish a thread of this process finishes first */
  scr_publish_settle();
  char* path = scr_flush_file_path(prefix);
  scr_kvtree* tree = path ? scr_flush_file_meant_for(path) : NULL;
  scr_kvtree* before = tree ? scr_kvtree_copy(tree) : NULL;
  if (!before) {
    free(path);
    return SCR_ERR_NOMEM;
  }
  if (location) {
    scr_kvtree* dset = scr_kvtree_add_kv_int(tree, "DSET", id);
    if (name) scr_kvtree_set_kv(dset, "NAME", name);
    scr_kvtree_set_kv(dset, "LOCATION", location);
  } else if (scr_kvtree_get_kv_int(tree, "DSET", id)) {
    scr_kvtree_unset_kv_int(tree, "DSET", id);
  }
  int rc = scr_flush_file_same_answers(before, tree) ? SCR_SUCCESS : scr_kvtree_write_file_mode(path, tree, 1);
  /* a write that failed leaves the file as it was: the next edit reads it again */
  if (rc != SCR_SUCCESS) scr_kvtree_delete(&scr_flush_file_meant);
  scr_kvtree_delete(&before);
  free(path);
  return rc;
}

int scr_flush_file_set_location(const char* prefix, int id, const char* name, const char* location)
{
  return scr_flush_file_edit(prefix, id, name, location);
}

int scr_flush_file_was_flushing(const char* prefix, int id)
{
  /* the one writer of the file: a publish a thread of this process finishes first */
  scr_publish_settle();
  char* path = scr_flush_file_path(prefix);
  scr_kvtree* tree = scr_kvtree_new();
  int was = 0;
  if (path && scr_kvtree_read_file_if_exists(path, tree) == SCR_SUCCESS) {
    const char* location = scr_kvtree_get_val(scr_kvtree_get_kv_int(tree, "DSET", id), "LOCATION");
    was = location && strcmp(location, SCR_FLUSH_FILE_FLUSHING) == 0;
  }
  scr_kvtree_delete(&tree);
  free(path);
  return was;
}

int scr_flush_file_remove(const char* prefix, int id)
{
  return scr_flush_file_edit(prefix, id, NULL, NULL);
}

int scr_flush_file_match(const char* prefix, const scr_kvtree* filemap)
{
  /* the one writer of the file: a publish a thread of this process finishes first */
  scr_publish_settle();
  char* path = scr_flush_file_path(prefix);
  if (!path) return SCR_ERR_NOMEM;
  scr_kvtree* old = scr_kvtree_new();
  if (scr_kvtree_read_file_if_exists(path, old) != SCR_SUCCESS) scr_kvtree_clear(old);
  scr_kvtree* now = scr_kvtree_new();
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(filemap, "DSET")); e; e = scr_kvtree_next(e)) {
    const scr_kvtree* cached = scr_kvtree_elem_tree(e);
    long long flushed = 0;
    scr_kvtree_get_int(cached, "FLUSHED", &flushed);
    scr_kvtree* dset = scr_kvtree_add_kv_int(now, "DSET", scr_kvtree_elem_key_int(e));
    const char* name = scr_dataset_get_name(scr_kvtree_get(cached, "DSETDESC"));
    if (name) scr_kvtree_set_kv(dset, "NAME", name);
    /* a flush that began and never ended stays said: the next one cleans up after it */
    const char* was = scr_kvtree_get_val(scr_kvtree_get_kv_int(old, "DSET", scr_kvtree_elem_key_int(e)), "LOCATION");
    int flushing = was && (strcmp(was, SCR_FLUSH_FILE_FLUSHING) == 0 || strcmp(was, SCR_FLUSH_FILE_PUBLISHING) == 0);
    scr_kvtree_set_kv(dset, "LOCATION", flushed == 1 ? SCR_FLUSH_FILE_PFS
                                        : flushing ? SCR_FLUSH_FILE_FLUSHING : SCR_FLUSH_FILE_CACHE);
  }
  /* rewritten only when it changed: on a parallel file system each write counts */
  int rc = SCR_SUCCESS;
  size_t a = scr_kvtree_pack_size(old), b = scr_kvtree_pack_size(now);
  unsigned char* pa = malloc(a ? a : 1);
  unsigned char* pb = malloc(b ? b : 1);
  int same = pa && pb && a == b && scr_kvtree_pack(old, pa) == a && scr_kvtree_pack(now, pb) == b &&
             memcmp(pa, pb, a) == 0;
  if (!pa || !pb) rc = SCR_ERR_NOMEM;
  else if (!same && scr_kvtree_size(now) > 0) rc = scr_kvtree_write_file_mode(path, now, 1);
  else if (!same && unlink(path) != 0 && errno != ENOENT) rc = SCR_ERR_IO;
  free(pa);
  free(pb);
  scr_kvtree_delete(&old);
  /* from here on the file is what the job means it to say */
  scr_kvtree_delete(&scr_flush_file_meant);
  free(scr_flush_file_meant_path);
  scr_flush_file_meant_path = path;
  scr_flush_file_meant = now;
  return rc;
}
