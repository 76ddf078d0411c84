/* scr_index_file.c - read, write and query the index of the prefix directory
 * (see scr_index_file.h for the layout). */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_publish.h"
#include "scr_kvtree.h"
#include "scr_dataset.h"
#include "scr_prefix_dir.h"
#include "scr_summary_file.h"
#include "scr_flush_file.h"
#include "scr_index_file.h"

#define SCR_INDEX_FILE_NAME "index.scr"
#define SCR_INDEX_LOCK_NAME "index.scr.lock"

char* scr_index_file_path(const char* prefix)
{
  return scr_prefix_dir_file(prefix, SCR_INDEX_FILE_NAME);
}

/* reads the file at path into tree, refusing layouts this code does not know;
 * *damaged (when not NULL) says the file is there but unreadable as a
 * key-value tree (garbage, truncated, a CRC mismatch), which the summaries
 * can stand in for; a VERSION newer than this code's is not damage */
static int scr_index_file_load(const char* path, scr_kvtree* tree, int* damaged)
{
  scr_kvtree* loaded = scr_kvtree_new();
  int rc = scr_kvtree_read_file_if_exists(path, loaded);
  if (damaged) *damaged = rc == SCR_ERR_CORRUPT;
  if (rc == SCR_SUCCESS) {
    long long version = SCR_INDEX_FILE_VERSION;
    int vrc = scr_kvtree_get_int(loaded, SCR_INDEX_KEY_VERSION, &version);
    if (vrc == SCR_ERR_INVALID || version > SCR_INDEX_FILE_VERSION) {
      scr_err("index file %s has format version %s, this SCR reads version %d: use a newer SCR",
              path, scr_kvtree_get_val(loaded, SCR_INDEX_KEY_VERSION), SCR_INDEX_FILE_VERSION);
      rc = SCR_ERR_CORRUPT;
    } else {
      rc = scr_kvtree_merge(tree, loaded);
    }
  }
  scr_kvtree_delete(&loaded);
  return rc;
}

/* writes tree to path, adding VERSION on a copy when the caller left it out */
static int scr_index_file_store(const char* path, const scr_kvtree* tree)
{
  if (scr_kvtree_get_val(tree, SCR_INDEX_KEY_VERSION) != NULL) {
    return scr_kvtree_write_file_mode(path, tree, 1);
  }
  scr_kvtree* versioned = scr_kvtree_copy(tree);
  if (versioned == NULL) return SCR_ERR_NOMEM;
  scr_kvtree_set_kv_int(versioned, SCR_INDEX_KEY_VERSION, SCR_INDEX_FILE_VERSION);
  int rc = scr_kvtree_write_file_mode(path, versioned, 1);
  scr_kvtree_delete(&versioned);
  return rc;
}

/* the dataset directories of <prefix>/.scr whose flush ended: a summary
 * and a rank2file map that read well, and no flush of that id in progress
 * (flush.scr), as the flush writes them before it indexes the dataset */
static int scr_index_file_from_summaries(const char* prefix, scr_kvtree* tree)
{
  char* top = scr_prefix_dir_file(prefix, NULL);
  DIR* d = top ? opendir(top) : NULL;
  int count = 0, newest = -1;
  struct dirent* ent;
  while (d && (ent = readdir(d)) != NULL) {
    int id = -1, used = 0;
    if (sscanf(ent->d_name, "scr.dataset.%d%n", &id, &used) != 1 || ent->d_name[used] != '\0' || id < 0) continue;
    if (scr_flush_file_was_flushing(prefix, id)) continue;
    scr_kvtree* summary = scr_kvtree_new();
    scr_kvtree* rank2file = scr_kvtree_new();
    const scr_kvtree* desc = NULL;
    const char* name = NULL;
    if (scr_summary_file_read(prefix, id, summary) == SCR_SUCCESS &&
        scr_rank2file_read(prefix, id, rank2file) == SCR_SUCCESS) {
      desc = scr_kvtree_get(summary, "DSETDESC");
      name = scr_dataset_get_name(desc);
    }
    if (name && scr_dataset_is_complete(desc) && scr_index_file_add(tree, id, name, desc, 1) == SCR_SUCCESS) {
      /* when the flush ended, as near as the prefix directory tells */
      char* file = scr_summary_dataset_dir(prefix, id);
      struct stat st;
      scr_index_file_set_flushed(tree, id, file && stat(file, &st) == 0 ? st.st_mtime : time(NULL));
      free(file);
      if (scr_dataset_is_checkpoint(desc) && id > newest) newest = id;
      count++;
    }
    scr_kvtree_delete(&rank2file);
    scr_kvtree_delete(&summary);
  }
  if (d) closedir(d);
  free(top);
  if (newest >= 0) scr_index_file_set_current(tree, scr_index_file_get_name(tree, newest));
  return count;
}

/* under the index lock: the damaged index at path goes aside, as
 * index.scr.damaged.<time>, for whoever wants to look at it, and a new one
 * is made from the summaries; SCR_SUCCESS with the new index in tree */
static int scr_index_file_rebuild(const char* prefix, const char* path, scr_kvtree* tree)
{
  char* aside = NULL;
  if (asprintf(&aside, "%s.damaged.%lld", path, (long long) time(NULL)) < 0) return SCR_ERR_NOMEM;
  int rc = SCR_SUCCESS;
  if (rename(path, aside) != 0) {
    scr_err("index file %s is damaged and cannot be moved aside to %s: %s", path, aside, strerror(errno));
    rc = SCR_ERR_IO;
  }
  scr_kvtree* rebuilt = scr_kvtree_new();
  int count = rc == SCR_SUCCESS ? scr_index_file_from_summaries(prefix, rebuilt) : 0;
  if (rc == SCR_SUCCESS) rc = scr_index_file_store(path, rebuilt);
  if (rc == SCR_SUCCESS) {
    const char* current = scr_index_file_get_current(rebuilt);
    scr_warn("index file %s was damaged: rebuilt from the summaries of %d dataset(s) in %s/.scr%s%s; the "
             "damaged file is kept as %s (fetch history and failure marks are lost)", path, count, prefix,
             current ? ", current: " : "", current ? current : "", aside);
    scr_kvtree_clear(tree);
    rc = scr_kvtree_merge(tree, rebuilt);
  }
  scr_kvtree_delete(&rebuilt);
  free(aside);
  return rc;
}

/* under the index lock: the index into tree, rebuilt first when damaged */
static int scr_index_file_load_locked(const char* prefix, const char* path, scr_kvtree* tree)
{
  int damaged = 0;
  int rc = scr_index_file_load(path, tree, &damaged);
  if (rc != SCR_SUCCESS && damaged) rc = scr_index_file_rebuild(prefix, path, tree);
  return rc;
}

/* 1 when a and b are the same version of one file */
static int scr_index_file_same(const struct stat* a, const struct stat* b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int scr_index_file_read(const char* prefix, scr_kvtree* tree)
{
  /* after a publish whose record a thread of this process still writes */
  scr_publish_settle();
  char* path = scr_index_file_path(prefix);
  if (path == NULL) {
    scr_err("no prefix directory given for the index file: set SCR_PREFIX");
    return SCR_ERR_INVALID;
  }
  int damaged = 0;
  struct stat before, now;
  int known = stat(path, &before) == 0;
  scr_kvtree* loaded = scr_kvtree_new();
  int rc = scr_index_file_load(path, loaded, &damaged);
  int lock_fd = -1;
  if (rc != SCR_SUCCESS && damaged && known && scr_prefix_dir_lock(prefix, SCR_INDEX_LOCK_NAME, &lock_fd) == SCR_SUCCESS) {
    /* made again under the lock; another process may have done it meanwhile,
     * and the file read above is then gone (its error was said once) */
    scr_kvtree_clear(loaded);
    if (stat(path, &now) == 0 && scr_index_file_same(&before, &now))
      rc = scr_index_file_rebuild(prefix, path, loaded);
    else
      rc = scr_index_file_load(path, loaded, NULL);
    scr_prefix_dir_unlock(lock_fd);
  }
  if (rc == SCR_SUCCESS) rc = scr_kvtree_merge(tree, loaded);
  scr_kvtree_delete(&loaded);
  free(path);
  return rc;
}

int scr_index_file_write(const char* prefix, const scr_kvtree* tree)
{
  /* after a publish whose record a thread of this process still writes */
  scr_publish_settle();
  char* path = scr_index_file_path(prefix);
  if (path == NULL) {
    scr_err("no prefix directory given for the index file: set SCR_PREFIX");
    return SCR_ERR_INVALID;
  }
  int rc = scr_prefix_dir_create(prefix);
  if (rc == SCR_SUCCESS) rc = scr_index_file_store(path, tree);
  free(path);
  return rc;
}

int scr_index_file_update(const char* prefix, int (*modify)(scr_kvtree* tree, void* arg), void* arg)
{
  /* after a publish whose record a thread of this process still writes */
  scr_publish_settle();
  char* path = scr_index_file_path(prefix);
  if (path == NULL) {
    scr_err("no prefix directory given for the index file: set SCR_PREFIX");
    return SCR_ERR_INVALID;
  }

  int lock_fd = -1;
  int rc = scr_prefix_dir_lock(prefix, SCR_INDEX_LOCK_NAME, &lock_fd);
  if (rc != SCR_SUCCESS) {
    free(path);
    return rc;
  }

  scr_kvtree* tree = scr_kvtree_new();
  rc = scr_index_file_load_locked(prefix, path, tree);
  if (rc == SCR_SUCCESS) rc = modify(tree, arg);
  if (rc == SCR_SUCCESS) rc = scr_index_file_store(path, tree);

  scr_kvtree_delete(&tree);
  scr_prefix_dir_unlock(lock_fd);
  free(path);
  return rc;
}

/* DSET/<id>, or NULL */
static scr_kvtree* scr_index_file_entry(const scr_kvtree* tree, int id)
{
  return scr_kvtree_get_kv_int(tree, SCR_INDEX_KEY_DSET, id);
}

int scr_index_file_get_id_by_name(const scr_kvtree* tree, const char* name, int* id)
{
  if (name == NULL) return SCR_ERR_INVALID;
  const scr_kvtree* by_name = scr_kvtree_get_kv(tree, SCR_INDEX_KEY_NAME, name);
  long long value;
  if (by_name == NULL || scr_kvtree_get_int(by_name, SCR_INDEX_KEY_DSET, &value) != SCR_SUCCESS) {
    return SCR_ERR_NOENT;
  }
  *id = (int) value;
  return SCR_SUCCESS;
}

const char* scr_index_file_get_name(const scr_kvtree* tree, int id)
{
  const scr_kvtree* entry = scr_index_file_entry(tree, id);
  return entry ? scr_kvtree_get_val(entry, SCR_INDEX_KEY_NAME) : NULL;
}

const scr_kvtree* scr_index_file_get_dsetdesc(const scr_kvtree* tree, int id)
{
  const scr_kvtree* entry = scr_index_file_entry(tree, id);
  return entry ? scr_kvtree_get(entry, SCR_INDEX_KEY_DSETDESC) : NULL;
}

/* forgets dataset id and the name that points to it */
static void scr_index_file_forget_id(scr_kvtree* tree, int id)
{
  const char* name = scr_index_file_get_name(tree, id);
  if (name != NULL) {
    const char* current = scr_index_file_get_current(tree);
    if (current != NULL && strcmp(current, name) == 0) scr_index_file_unset_current(tree);

    /* name points into the entry that is about to go: unset the lookup first */
    scr_kvtree_unset_kv(tree, SCR_INDEX_KEY_NAME, name);
  }
  scr_kvtree_unset_kv_int(tree, SCR_INDEX_KEY_DSET, id);
}

int scr_index_file_add(scr_kvtree* tree, int id, const char* name,
                       const scr_kvtree* dsetdesc, int complete)
{
  if (tree == NULL || id < 0 || name == NULL || name[0] == '\0') return SCR_ERR_INVALID;

  /* the caller may pass a name or descriptor that lives inside an entry
   * about to be replaced: copy both before touching the tree */
  char* own_name = strdup(name);
  if (own_name == NULL) return SCR_ERR_NOMEM;
  name = own_name;
  scr_kvtree* entry = scr_kvtree_new();
  scr_kvtree_set_kv(entry, SCR_INDEX_KEY_NAME, name);
  scr_kvtree_set(entry, SCR_INDEX_KEY_DSETDESC, dsetdesc ? scr_kvtree_copy(dsetdesc) : scr_kvtree_new());
  scr_kvtree_set_kv_int(entry, SCR_INDEX_KEY_COMPLETE, complete ? 1 : 0);

  /* a dataset directory re-flushed under an old name or id supersedes the old
   * entry; its fetch history described other files */
  int other_id;
  if (scr_index_file_get_id_by_name(tree, name, &other_id) == SCR_SUCCESS && other_id != id) {
    scr_index_file_forget_id(tree, other_id);
  }
  const char* old_name = scr_index_file_get_name(tree, id);
  if (old_name != NULL && strcmp(old_name, name) != 0) scr_index_file_forget_id(tree, id);

  char key[32];
  snprintf(key, sizeof(key), "%d", id);
  scr_kvtree_set(scr_kvtree_get_or_create(tree, SCR_INDEX_KEY_DSET), key, entry);

  scr_kvtree* by_name = scr_kvtree_add_kv(tree, SCR_INDEX_KEY_NAME, name);
  scr_kvtree_set_kv_int(by_name, SCR_INDEX_KEY_DSET, id);

  if (scr_kvtree_get_val(tree, SCR_INDEX_KEY_VERSION) == NULL) {
    scr_kvtree_set_kv_int(tree, SCR_INDEX_KEY_VERSION, SCR_INDEX_FILE_VERSION);
  }
  free(own_name);
  return SCR_SUCCESS;
}

int scr_index_file_set_flushed(scr_kvtree* tree, int id, time_t when)
{
  scr_kvtree* entry = scr_index_file_entry(tree, id);
  if (entry == NULL) return SCR_ERR_NOENT;
  scr_kvtree_set_kv_int(entry, SCR_INDEX_KEY_FLUSHED, (long long) when);
  return SCR_SUCCESS;
}

int scr_index_file_mark_incomplete(scr_kvtree* tree, int id)
{
  scr_kvtree* entry = scr_index_file_entry(tree, id);
  if (entry == NULL) return SCR_ERR_NOENT;
  scr_kvtree_set_kv_int(entry, SCR_INDEX_KEY_COMPLETE, 0);
  return SCR_SUCCESS;
}

int scr_index_file_mark_fetched(scr_kvtree* tree, int id, time_t when)
{
  scr_kvtree* entry = scr_index_file_entry(tree, id);
  if (entry == NULL) return SCR_ERR_NOENT;
  scr_kvtree_add_kv_int(entry, SCR_INDEX_KEY_FETCHED, (long long) when);
  return SCR_SUCCESS;
}

int scr_index_file_mark_failed(scr_kvtree* tree, int id, time_t when, const char* reason)
{
  scr_kvtree* entry = scr_index_file_entry(tree, id);
  if (entry == NULL) return SCR_ERR_NOENT;
  scr_kvtree* failure = scr_kvtree_add_kv_int(entry, SCR_INDEX_KEY_FAILED, (long long) when);
  if (reason != NULL) scr_kvtree_set_kv(failure, SCR_INDEX_KEY_REASON, reason);
  return SCR_SUCCESS;
}

int scr_index_file_is_checkpoint(const scr_kvtree* tree, int id)
{
  const scr_kvtree* desc = scr_index_file_get_dsetdesc(tree, id);
  return desc != NULL && scr_dataset_is_checkpoint(desc);
}

int scr_index_file_is_complete(const scr_kvtree* tree, int id)
{
  const scr_kvtree* entry = scr_index_file_entry(tree, id);
  long long complete = 0;
  if (entry == NULL) return 0;
  scr_kvtree_get_int(entry, SCR_INDEX_KEY_COMPLETE, &complete);
  return complete == 1;
}

int scr_index_file_is_failed(const scr_kvtree* tree, int id)
{
  const scr_kvtree* entry = scr_index_file_entry(tree, id);
  return entry != NULL && scr_kvtree_size(scr_kvtree_get(entry, SCR_INDEX_KEY_FAILED)) > 0;
}

int scr_index_file_is_fetched(const scr_kvtree* tree, int id)
{
  const scr_kvtree* entry = scr_index_file_entry(tree, id);
  return entry != NULL && scr_kvtree_size(scr_kvtree_get(entry, SCR_INDEX_KEY_FETCHED)) > 0;
}

int scr_index_file_set_current(scr_kvtree* tree, const char* name)
{
  int id;
  if (scr_index_file_get_id_by_name(tree, name, &id) != SCR_SUCCESS) return SCR_ERR_NOENT;
  if (!scr_index_file_is_checkpoint(tree, id) || !scr_index_file_is_complete(tree, id)) {
    return SCR_ERR_INVALID;
  }
  scr_kvtree_set_kv(tree, SCR_INDEX_KEY_CURRENT, name);
  return SCR_SUCCESS;
}

const char* scr_index_file_get_current(const scr_kvtree* tree)
{
  return scr_kvtree_get_val(tree, SCR_INDEX_KEY_CURRENT);
}

void scr_index_file_unset_current(scr_kvtree* tree)
{
  scr_kvtree_unset(tree, SCR_INDEX_KEY_CURRENT);
}

int scr_index_file_remove(scr_kvtree* tree, const char* name)
{
  int id;
  if (scr_index_file_get_id_by_name(tree, name, &id) != SCR_SUCCESS) return SCR_ERR_NOENT;
  scr_index_file_forget_id(tree, id);
  return SCR_SUCCESS;
}

/* parses a DSET key; a hand-edited file may hold anything */
static int scr_index_file_parse_id(const char* key, int* id)
{
  char* end = NULL;
  errno = 0;
  long value = strtol(key, &end, 10);
  if (errno != 0 || end == key || *end != '\0' || value < 0 || value > 0x7fffffffL) {
    return SCR_ERR_INVALID;
  }
  *id = (int) value;
  return SCR_SUCCESS;
}

int scr_index_file_most_recent_checkpoint(const scr_kvtree* tree, int before_id, int* id)
{
  const scr_kvtree* datasets = scr_kvtree_get(tree, SCR_INDEX_KEY_DSET);
  int found = 0;
  int best = -1;

  for (scr_kvtree_elem* elem = scr_kvtree_first(datasets); elem; elem = scr_kvtree_next(elem)) {
    int candidate;
    if (scr_index_file_parse_id(scr_kvtree_elem_key(elem), &candidate) != SCR_SUCCESS) continue;
    if (before_id >= 0 && candidate >= before_id) continue;
    if (found && candidate <= best) continue;
    if (!scr_index_file_is_checkpoint(tree, candidate)) continue;
    if (!scr_index_file_is_complete(tree, candidate)) continue;
    if (scr_index_file_is_failed(tree, candidate)) continue;
    best = candidate;
    found = 1;
  }

  if (!found) return SCR_ERR_NOENT;
  *id = best;
  return SCR_SUCCESS;
}
