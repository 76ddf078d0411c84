/* scr_filemap.c - the per-rank record of cached files (see scr_filemap.h).
 * Kept as a key-value tree so it can be written atomically and printed with scr_print. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_filemap.h"

char* scr_filemap_path(const char* cntl_dir, int rank)
{
  char* path = NULL;
  if (asprintf(&path, "%s/filemap_%d.scr", cntl_dir, rank) < 0) return NULL;
  return path;
}

scr_kvtree* scr_filemap_get_dataset(const scr_kvtree* map, int id)
{
  return scr_kvtree_get_kv_int(map, "DSET", id);
}

scr_kvtree* scr_filemap_add_dataset(scr_kvtree* map, int id)
{
  return scr_kvtree_add_kv_int(map, "DSET", id);
}

void scr_filemap_remove_dataset(scr_kvtree* map, int id)
{
  scr_kvtree_unset_kv_int(map, "DSET", id);
}

/* 1 when path is inside base and no component below base is a symbolic
 * link (those that exist: a file yet to be written has none) */
static int scr_filemap_path_stays(const char* path, const char* base, int check_links)
{
  if (!path || path[0] != '/' || !scr_path_is_within(path, base)) return 0;
  char* rel = scr_path_relative_to(base, path);
  int ok = rel && (strcmp(rel, ".") == 0 || scr_path_is_safe_relative(rel));
  free(rel);
  if (!ok || !check_links) return ok;
  char* at = strdup(path);
  while (ok && at && strcmp(at, base) != 0 && scr_path_is_within(at, base)) {
    struct stat st;
    if (lstat(at, &st) == 0 && S_ISLNK(st.st_mode)) ok = 0;
    char* up = scr_path_dirname(at);
    if (up && strcmp(up, at) == 0) {
      free(up);
      break;
    }
    free(at);
    at = up;
  }
  free(at);
  return ok;
}

int scr_filemap_drop_unsafe(scr_kvtree* map, const char* what, const char* cache_dir, const char* prefix)
{
  int dropped = 0;
  int ids[64];
  int count = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(map, "DSET")); e && count < 64; e = scr_kvtree_next(e)) {
    int id = (int) scr_kvtree_elem_key_int(e);
    scr_kvtree* dset = scr_kvtree_elem_tree(e);
    long long bypass = 0;
    scr_kvtree_get_int(dset, "BYPASS", &bypass);
    const char* bad = NULL;
    const char* why = NULL;
    static const char* lists[] = { "FILE", "REDFILE", "ATTACHED" };
    for (scr_kvtree_elem* r = scr_kvtree_first(scr_kvtree_get(dset, "RANK")); r && !bad; r = scr_kvtree_next(r)) {
      for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]) && !bad; l++) {
        for (scr_kvtree_elem* f = scr_kvtree_first(scr_kvtree_get(scr_kvtree_elem_tree(r), lists[l])); f && !bad;
             f = scr_kvtree_next(f)) {
          const char* path = scr_kvtree_elem_key(f);
          const char* rel = scr_kvtree_get_val(scr_kvtree_elem_tree(f), "RELPATH");
          /* attached files and a bypass dataset's are the program's, on the
           * prefix directory (ATTACHED keys are cache paths all the same) */
          int in_cache = scr_filemap_path_stays(path, cache_dir, 1);
          int in_prefix = (bypass || l == 2) && prefix && scr_filemap_path_stays(path, prefix, 0);
          if (!in_cache && !in_prefix) {
            bad = path;
            why = bypass ? "outside the prefix directory" : "outside the cache directory, or through a symbolic link";
          } else if (rel && !scr_path_is_safe_relative(rel)) {
            bad = rel;
            why = "as its path relative to the prefix directory, which is not one (\"../\" or absolute)";
          }
        }
      }
    }
    for (scr_kvtree_elem* p = scr_kvtree_first(scr_kvtree_get(dset, "PARTNER")); p && !bad; p = scr_kvtree_next(p)) {
      const char* held = scr_kvtree_get_val(scr_kvtree_elem_tree(p), "DIR");
      if (held && !scr_filemap_path_stays(held, cache_dir, 1)) {
        bad = held;
        why = "outside the cache directory, or through a symbolic link";
      }
    }
    if (bad) {
      scr_err("%s names %s %s: refusing to use dataset %d from it", what, bad, why, id);
      ids[count++] = id;
    }
  }
  /* removed once the walk is over: the walk's elements go with them */
  for (int i = 0; i < count; i++, dropped++) scr_filemap_remove_dataset(map, ids[i]);
  return dropped;
}

scr_kvtree* scr_filemap_get_files(const scr_kvtree* map, int id, int rank)
{
  scr_kvtree* dset = scr_filemap_get_dataset(map, id);
  scr_kvtree* r = scr_kvtree_get_kv_int(dset, "RANK", rank);
  return scr_kvtree_get(r, "FILE");
}

scr_kvtree* scr_filemap_add_file(scr_kvtree* map, int id, int rank, const char* cache_path,
                                 const char* orig_path, const char* relpath)
{
  scr_kvtree* dset = scr_filemap_add_dataset(map, id);
  scr_kvtree* r = scr_kvtree_add_kv_int(dset, "RANK", rank);
  scr_kvtree* meta = scr_kvtree_get_kv(r, "FILE", cache_path);
  if (meta) return meta;
  meta = scr_kvtree_add_kv(r, "FILE", cache_path);
  scr_kvtree_set_kv(meta, "ORIG", orig_path);
  scr_kvtree_set_kv(meta, "RELPATH", relpath);
  scr_kvtree_set_kv_int(meta, "COMPLETE", 0);
  scr_kvtree_set_kv_int(r, "FILES", scr_kvtree_size(scr_kvtree_get(r, "FILE")));
  return meta;
}

void scr_filemap_set_file_count(scr_kvtree* map, int id, int rank, int count)
{
  scr_kvtree* dset = scr_filemap_add_dataset(map, id);
  scr_kvtree* r = scr_kvtree_add_kv_int(dset, "RANK", rank);
  scr_kvtree_set_kv_int(r, "FILES", count);
}

int scr_filemap_get_file_count(const scr_kvtree* map, int id, int rank)
{
  long long n = 0;
  scr_kvtree* r = scr_kvtree_get_kv_int(scr_filemap_get_dataset(map, id), "RANK", rank);
  if (scr_kvtree_get_int(r, "FILES", &n) != SCR_SUCCESS) return 0;
  return (int) n;
}

int scr_filemap_previous_dataset(const scr_kvtree* map, int below)
{
  int best = -1;
  scr_kvtree_elem* e;
  for (e = scr_kvtree_first(scr_kvtree_get(map, "DSET")); e; e = scr_kvtree_next(e)) {
    int id = (int) scr_kvtree_elem_key_int(e);
    if ((below < 0 || id < below) && id > best) best = id;
  }
  return best;
}

int scr_filemap_latest_dataset(const scr_kvtree* map)
{
  return scr_filemap_previous_dataset(map, -1);
}
