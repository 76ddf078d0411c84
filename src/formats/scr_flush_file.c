/* scr_flush_file.c - maintain <prefix>/.scr/flush.scr (see scr_flush_file.h).
 * Only rank 0 of a job writes it, so a plain atomic rewrite is enough. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include "scr_error.h"
#include "scr_kvtree.h"
#include "scr_flush_file.h"

static char* scr_flush_file_path(const char* prefix)
{
  char* path = NULL;
  if (asprintf(&path, "%s/.scr/flush.scr", prefix) < 0) return NULL;
  return path;
}

static int scr_flush_file_edit(const char* prefix, int id, const char* name, const char* location)
{
  char* path = scr_flush_file_path(prefix);
  if (!path) return SCR_ERR_NOMEM;
  scr_kvtree* tree = scr_kvtree_new();
  int rc = scr_kvtree_read_file_if_exists(path, tree);
  if (rc != SCR_SUCCESS) scr_kvtree_clear(tree); /* rebuilt from what we know now */
  if (location) {
    scr_kvtree* dset = scr_kvtree_add_kv_int(tree, "DSET", id);
    if (name) scr_kvtree_set_kv(dset, "NAME", name);
    scr_kvtree_set_kv(dset, "LOCATION", location);
  } else {
    scr_kvtree_unset_kv_int(tree, "DSET", id);
  }
  rc = scr_kvtree_write_file(path, tree);
  scr_kvtree_delete(&tree);
  free(path);
  return rc;
}

int scr_flush_file_set_location(const char* prefix, int id, const char* name, const char* location)
{
  return scr_flush_file_edit(prefix, id, name, location);
}

int scr_flush_file_remove(const char* prefix, int id)
{
  return scr_flush_file_edit(prefix, id, NULL, NULL);
}
