/* scr_preload_engine_links.c - the engine's answer to link(2): a second name of a
 * cached file, in its checkpoint, kept one file in cache, on the prefix directory and after a restart. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_cache.h"
#include "scr_flush.h"
#include "scr_preload_engine_impl.h"

/* A hard link names a file twice. In cache that is what it is: the new name
 * is a hard link of the cache file in the same dataset directory, and a
 * filemap entry of its own (ORIG, RELPATH, SIZE, CRC), so that everything
 * that follows a name (the view, listings, other ranks, rename, unlink,
 * flush, redundancy) follows this one as any other; the entries of one file
 * share a LINK value (scr_filemap.h), by which a flush links its copies on
 * the prefix directory, a fetch its cache files, and a restart the files a
 * rebuild or a move to another node made separate (the redundancy encodes
 * each name's bytes, which costs them twice). A file lives in one dataset:
 * its names can only be in that one, whose eviction they go with, so a link
 * that would put the new name in another checkpoint, or in the cache for a
 * file of the file system, or on the file system for a cached file, fails as
 * between two file systems (EXDEV). */

/* ---- the names of one file */

/* a LINK value no entry of files has yet */
static void link_new_group(const scr_kvtree* files, char* group, size_t size)
{
  long long highest = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
    const char* value = scr_kvtree_get_val(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_LINK);
    long long n = value ? strtoll(value, NULL, 10) : 0;
    if (n > highest) highest = n;
  }
  snprintf(group, size, "%lld", highest + 1);
}

/* ---- link(2) */

/* what a file system answers for the new name path before it makes it: 0,
 * or ENOENT, ENOTDIR (its directory is missing, or a file), EEXIST (the
 * name is taken: in the view, by another rank's file, on the file system),
 * EACCES (its directory is not writable) */
static int link_target_error(const char* path)
{
  int saved_errno = errno, error = 0, id = -1;
  struct stat st;
  char* shown = scr_view_find(path, &id);
  if (scr_engine_parent_missing(path, NULL)) error = errno;
  else if (shown || scr_peers_shows(path) || scr_view_is_directory(path) || lstat(path, &st) == 0) error = EEXIST;
  free(shown);
  errno = saved_errno;
  return error;
}

/* 0 when the name path may be made in its directory (checked after EXDEV,
 * as the kernel does), else EACCES; a directory only the view has is the
 * program's */
static int link_permission_error(const char* path)
{
  int saved_errno = errno, error = 0;
  char* parent = scr_path_dirname(path);
  struct stat st;
  if (parent && stat(parent, &st) == 0 && faccessat(AT_FDCWD, parent, W_OK | X_OK, AT_EACCESS) != 0) error = errno;
  free(parent);
  errno = saved_errno;
  return error;
}

/* 1 when a new name `to` (matched by rule, relpath to the prefix) of this
 * rank's file of completed dataset id, named `from`, would name another
 * checkpoint: another {step} than from's, or, when from has none, another
 * dataset name than id's */
static int link_other_checkpoint(int id, const scr_preload_target* from, const scr_preload_target* to,
                                 const char* relpath)
{
  const scr_preload_rule* rule = scr_engine_rule(to);
  const scr_preload_rule* source = scr_engine_rule(from);
  if (!rule || !rule->has_step) return 0;
  if (source && source->has_step) return from->match.step != to->match.step;
  char* name = scr_engine_dataset_name(to, relpath);
  const char* own = scr_dataset_get_name(scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC"));
  int other = !name || !own || strcmp(name, own) != 0;
  free(name);
  return other;
}

/* the cache path of the new name of dataset id's file, with its entry in the
 * filemap when the dataset is being written (its name may get the
 * dataset's {step}); SCR_SUCCESS or an error */
static int link_cache_path(int id, const scr_preload_target* to, const char* relpath, char* cache, size_t size)
{
  if (scr_engine_writing(id)) {
    int attached = 0;
    int rc = scr_engine_route_new(to, scr_engine_rule(to), relpath, cache, size, &attached);
    return rc == SCR_SUCCESS && attached ? SCR_FAILURE : rc;
  }
  char* dir = scr_cache_dataset_dir(id);
  char* path = dir ? scr_path_join(dir, relpath) : NULL;
  char* parent = path ? scr_path_dirname(path) : NULL;
  int rc = parent && strlen(path) < size ? scr_io_mkdir_p(parent, 0700) : SCR_FAILURE;
  if (rc == SCR_SUCCESS) snprintf(cache, size, "%s", path);
  free(parent);
  free(path);
  free(dir);
  return rc;
}

/* a completed dataset's new name: its entry, like the file's, and the
 * copy on the prefix directory linked too when the file was flushed */
static void link_completed_entry(int id, scr_kvtree* files, scr_kvtree* source, const char* cached,
                                 const scr_preload_target* to, const char* relpath, const char* cache)
{
  scr_kvtree* meta = scr_kvtree_new();
  static const char* const kept[] = { "SIZE", "CRC", "COMPLETE" };
  for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
    const char* value = scr_kvtree_get_val(source, kept[i]);
    if (value) scr_kvtree_set_kv(meta, kept[i], value);
  }
  scr_kvtree_set_kv(meta, "ORIG", to->path);
  scr_kvtree_set_kv(meta, "RELPATH", relpath);
  /* its bytes are in the redundancy under the name the file was encoded by */
  const char* encoded = scr_kvtree_get_val(source, SCR_FILEMAP_KEY_REDUNDANCY_PATH);
  scr_kvtree_set_kv(meta, SCR_FILEMAP_KEY_REDUNDANCY_PATH, encoded ? encoded : cached);
  char* copy = scr_flush_is_flushed(id) ? scr_flush_destination(source) : NULL;
  char* linked = copy ? scr_path_join(scr.prefix, relpath) : NULL;
  struct stat st;
  const char* identity = scr_kvtree_get_val(source, SCR_FILEMAP_KEY_FLUSHED_COPY);
  if (linked && lstat(copy, &st) == 0 && scr_io_link_file(copy, linked, 0755) == SCR_SUCCESS && identity)
    scr_kvtree_set_kv(meta, SCR_FILEMAP_KEY_FLUSHED_COPY, identity);
  free(linked);
  free(copy);
  scr_kvtree_set(files, cache, meta);
  scr_filemap_set_file_count(scr.filemap, id, scr.rank, scr_filemap_get_file_count(scr.filemap, id, scr.rank) + 1);
}

/* the new name to of this rank's cached file `cached` of dataset id: 0, or -1 with errno */
static int link_cached(const char* cached, int id, const scr_preload_target* from, const scr_preload_target* to,
                       const char* relpath)
{
  char cache[SCR_MAX_FILENAME];
  int writing = scr_engine_writing(id);
  if (link_cache_path(id, to, relpath, cache, sizeof(cache)) != SCR_SUCCESS) {
    errno = EIO;
    return -1;
  }
  /* a file a crash left there is no name of anything */
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, id, scr.rank);
  if ((unlink(cache) != 0 && errno != ENOENT) || link(cached, cache) != 0) {
    int error = errno;
    scr_err("cannot link %s to %s for %s: %s", cached, cache, to->path, strerror(error));
    if (writing) scr_kvtree_unset(files, cache);
    scr_cache_save_filemap();
    errno = error == EMLINK || error == ENOSPC || error == EDQUOT ? error : EIO;
    return -1;
  }
  scr_kvtree* source = scr_kvtree_get(files, cached);
  char group[32];
  const char* value = scr_kvtree_get_val(source, SCR_FILEMAP_KEY_LINK);
  if (value) snprintf(group, sizeof(group), "%s", value);
  else link_new_group(files, group, sizeof(group));
  scr_kvtree_set_kv(source, SCR_FILEMAP_KEY_LINK, group);
  if (!writing) link_completed_entry(id, files, source, cached, to, relpath, cache);
  scr_kvtree_set_kv(scr_kvtree_get(files, cache), SCR_FILEMAP_KEY_LINK, group);
  if (!writing) {
    /* its redundancy knows one name less: at the next meeting point it
     * takes this one, and the other ranks list it from then on */
    scr_engine_update_names(id, 1);
    scr_peers_note_linked(id, from->path, to->path);
  }
  scr_dbg(2, "preload: %s is another name of %s (dataset %d)", to->path, from->path, id);
  return scr_cache_save_filemap() == SCR_SUCCESS ? 0 : (errno = EIO, -1);
}

/* why this rank cannot make to a name of the cached file shown at from->path
 * (in `cached`, of dataset id): EXDEV, or 0 */
static int link_cached_refusal(const char* cached, int id, const scr_preload_target* from,
                               const scr_preload_target* to, const char* relpath)
{
  scr_kvtree* mine = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, id), "RANK", scr.rank);
  /* another rank's file (this rank's copy of it), an attached pointer file,
   * a name no rule routes to the cache */
  if (!scr_kvtree_get(scr_kvtree_get(mine, "FILE"), cached) || !relpath) return EXDEV;
  if (scr_engine_writing(id)) return scr_engine_would_complete(to) ? EXDEV : 0;
  return link_other_checkpoint(id, from, to, relpath) ? EXDEV : 0;
}

int scr_engine_link(const scr_preload_target* from, const scr_preload_target* to, int flags, int* handled)
{
  (void) flags;  /* followed by the wrapper */
  if (!scr.initialized || !from->path || !to->path) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int rc = -1, id = -1, error = 0;
  struct stat st;
  char* cached = scr_view_find(from->path, &id);
  /* the new name goes to the cache when a rule routes files of it there */
  char* relpath = scr_engine_rule(to) ? scr_path_relative_to(scr.prefix, to->path) : NULL;
  if (relpath && strcmp(relpath, ".") == 0) {
    free(relpath);
    relpath = NULL;
  }
  if (cached) {
    error = link_target_error(to->path);
    if (!error) error = link_cached_refusal(cached, id, from, to, relpath);
  } else if (relpath && (scr_peers_shows(from->path) || (lstat(from->path, &st) == 0 && S_ISREG(st.st_mode)))) {
    /* another rank's file, or a file of the file system, under a name whose
     * files live in cache; other things (a symbolic link, a directory, a
     * name missing) the file system links or refuses as it would */
    error = link_target_error(to->path);
    if (!error) error = EXDEV;
  } else {
    free(cached);
    free(relpath);
    pthread_mutex_unlock(&scr_engine_lock);
    return -1;
  }
  *handled = SCR_PRELOAD_HANDLED;
  if (!error) error = link_permission_error(to->path);
  if (!error) {
    rc = link_cached(cached, id, from, to, relpath);
    error = rc == 0 ? 0 : errno;
  }
  if (error == EXDEV)
    scr_dbg(1, "preload: link %s to %s: EXDEV (%s)", from->path, to->path,
            cached ? "a cached file has its names in its own checkpoint" : "the new name's files live in cache");
  free(cached);
  free(relpath);
  pthread_mutex_unlock(&scr_engine_lock);
  errno = error;
  return error ? -1 : 0;
}

/* ---- at start-up */

/* the files of a group that a rebuild or a move made separate: each made a
 * hard link of the first again */
static int link_restore_name(const char* cache, scr_kvtree* meta, void* arg)
{
  (void) meta;
  const char** first = arg;
  struct stat a, b;
  if (!*first) {
    *first = cache;
    return 0;
  }
  if (stat(*first, &a) == 0 && stat(cache, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) return 0;
  if (scr_io_link_file(*first, cache, 0700) != SCR_SUCCESS)
    scr_warn("cannot make %s a hard link of %s again: the two names are two files now (%s)", cache, *first,
             strerror(errno));
  return 0;
}

void scr_engine_links_restore(void)
{
  for (int id = scr_filemap_latest_dataset(scr.filemap); id >= 0; id = scr_filemap_previous_dataset(scr.filemap, id)) {
    scr_kvtree* files = scr_filemap_get_files(scr.filemap, id, scr.rank);
    scr_kvtree* done = NULL;
    for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
      const char* group = scr_kvtree_get_val(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_LINK);
      if (!group || (done && scr_kvtree_get(done, group))) continue;
      if (!done) done = scr_kvtree_new();
      scr_kvtree_get_or_create(done, group);
      const char* first = NULL;
      scr_engine_link_each(id, scr_kvtree_elem_key(e), link_restore_name, &first);
    }
    scr_kvtree_delete(&done);
  }
}
