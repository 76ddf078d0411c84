/* scr_summary_file.c - read and write summary.scr and rank2file.scr of a dataset.
 * A rank2file map comes from the shared file system: names in it are checked before use. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_summary_file.h"

#define SCR_SUMMARY_VERSION 1

char* scr_summary_dataset_dir(const char* prefix, int id)
{
  char* dir = NULL;
  if (asprintf(&dir, "%s/.scr/scr.dataset.%d", prefix, id) < 0) return NULL;
  return dir;
}

char* scr_summary_dataset_file(const char* prefix, int id, const char* name)
{
  if (!name || !scr_path_is_safe_relative(name)) return NULL;
  char* dir = scr_summary_dataset_dir(prefix, id);
  char* path = dir ? scr_path_join(dir, name) : NULL;
  free(dir);
  return path;
}

char* scr_summary_partner_name(int s, const char* relpath)
{
  char* name = NULL;
  if (!relpath || asprintf(&name, "%s/partner.%d/%s", SCR_SUMMARY_REDUNDANCY_DIR, s, relpath) < 0) return NULL;
  return name;
}

int scr_summary_file_write(const char* prefix, int id, const scr_kvtree* dsetdesc, int ranks)
{
  return scr_summary_file_write_missing(prefix, id, dsetdesc, ranks, 0);
}

int scr_summary_file_write_missing(const char* prefix, int id, const scr_kvtree* dsetdesc, int ranks, int missing)
{
  char* path = scr_summary_dataset_file(prefix, id, "summary.scr");
  if (!path) return SCR_ERR_NOMEM;
  scr_kvtree* summary = scr_kvtree_new();
  scr_kvtree_set_kv_int(summary, "VERSION", SCR_SUMMARY_VERSION);
  scr_kvtree_set(summary, "DSETDESC", scr_kvtree_copy(dsetdesc));
  scr_kvtree_set_kv_int(summary, "RANKS", ranks);
  if (missing) scr_kvtree_set_kv_int(summary, "MISSING_RANKS", missing);
  int rc = scr_kvtree_write_file_mode(path, summary, 1);
  scr_kvtree_delete(&summary);
  free(path);
  return rc;
}

int scr_summary_file_read(const char* prefix, int id, scr_kvtree* summary)
{
  char* path = scr_summary_dataset_file(prefix, id, "summary.scr");
  if (!path) return SCR_ERR_NOMEM;
  int rc = scr_kvtree_read_file(path, summary);
  if (rc == SCR_SUCCESS) {
    long long version = 0;
    scr_kvtree_get_int(summary, "VERSION", &version);
    if (version != SCR_SUMMARY_VERSION) {
      scr_err("summary file %s has version %lld, this library reads version %d", path, version,
              SCR_SUMMARY_VERSION);
      rc = SCR_ERR_CORRUPT;
    }
  }
  free(path);
  return rc;
}

int scr_rank2file_write(const char* prefix, int id, const scr_kvtree* rank2file)
{
  char* path = scr_summary_dataset_file(prefix, id, "rank2file.scr");
  if (!path) return SCR_ERR_NOMEM;
  int rc = scr_kvtree_write_file_mode(path, rank2file, 1);
  free(path);
  return rc;
}

int scr_rank2file_read(const char* prefix, int id, scr_kvtree* rank2file)
{
  char* path = scr_summary_dataset_file(prefix, id, "rank2file.scr");
  if (!path) return SCR_ERR_NOMEM;
  int rc = scr_kvtree_read_file(path, rank2file);
  scr_kvtree_elem* r;
  for (r = scr_kvtree_first(scr_kvtree_get(rank2file, "RANK")); rc == SCR_SUCCESS && r;
       r = scr_kvtree_next(r)) {
    scr_kvtree_elem* f;
    for (f = scr_kvtree_first(scr_kvtree_get(scr_kvtree_elem_tree(r), "FILE")); f;
         f = scr_kvtree_next(f)) {
      if (!scr_path_is_safe_relative(scr_kvtree_elem_key(f))) {
        scr_err("%s names file '%s' outside the prefix directory: refusing to use it", path,
                scr_kvtree_elem_key(f));
        rc = SCR_ERR_SECURITY;
        break;
      }
    }
  }
  free(path);
  return rc;
}
