/* scr_preload_versions.c - a dataset that writes a step the cache already holds
 * is its new version: it takes over the files of the old one it does not rewrite. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "scr.h"
#include "scr_cache.h"
#include "scr_dataset.h"
#include "scr_error.h"
#include "scr_filemap.h"
#include "scr_globals.h"
#include "scr_io.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_preload_engine_impl.h"

/* A program that restarts from step 40 and rewrites one file of it (a note of
 * the restart in its metadata) makes a dataset named like the one restored,
 * holding that file alone. Complete, it is the newest checkpoint: a restart
 * would be handed that one file, and the cache evicts the old version with
 * the step's other files. So, before it completes, it takes this rank's
 * files of the newest other cached dataset of the same name that it does
 * not have, as hard links (the same file system; a complete dataset's files
 * never change, since writing one makes a new version), copies otherwise.
 * Only from a version that still checks whole: one the program took files
 * out of stays as it was left. */

/* 1 when the dataset's files on this rank include one shown at orig */
static int version_has(int id, const char* orig)
{
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, id, scr.rank);
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
    const char* o = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "ORIG");
    if (o && strcmp(o, orig) == 0) return 1;
  }
  return 0;
}

/* the newest dataset below id named name, or -1 */
static int version_previous(int id, const char* name)
{
  for (int old = scr_filemap_previous_dataset(scr.filemap, id); old >= 0;
       old = scr_filemap_previous_dataset(scr.filemap, old)) {
    const char* old_name = scr_dataset_get_name(scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, old), "DSETDESC"));
    if (old_name && strcmp(old_name, name) == 0) return old;
  }
  return -1;
}

int scr_version_inherit(int id, const char* name)
{
  int old = name ? version_previous(id, name) : -1;
  if (old < 0 || !scr_cache_check_dataset(old)) return 0;
  int taken = 0;
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, old, scr.rank);
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
    scr_kvtree* meta = scr_kvtree_elem_tree(e);
    const char* orig = scr_kvtree_get_val(meta, "ORIG");
    const char* relpath = scr_kvtree_get_val(meta, "RELPATH");
    if (!orig || !relpath || version_has(id, orig)) continue;
    char cache[SCR_MAX_FILENAME];
    if (scr_cache_route_file(id, orig, relpath, cache, sizeof(cache)) != SCR_SUCCESS ||
        (link(scr_kvtree_elem_key(e), cache) != 0 &&
         scr_io_copy_file(scr_kvtree_elem_key(e), cache, 0700, NULL, NULL) != SCR_SUCCESS)) {
      scr_err("cannot carry %s of dataset %d into its new version %d: the new version lacks it", orig, old, id);
      continue;
    }
    taken++;
  }
  if (taken) scr_dbg(1, "preload: dataset %d (%s) keeps %d file(s) of dataset %d that it does not rewrite", id, name,
                     taken, old);
  return taken;
}
