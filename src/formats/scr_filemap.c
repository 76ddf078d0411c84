/* scr_filemap.c - the per-rank record of cached files (see scr_filemap.h).
 * Kept as a key-value tree so it can be written atomically and printed with scr_print. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include "scr_error.h"
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
