/* scr_flush_redundancy.c - each rank copies its XOR or RS parity file, or the PARTNER copies it
 * holds, beside the dataset on the prefix directory, with the record that decodes them. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_filemap.h"
#include "scr_summary_file.h"
#include "scr_globals.h"
#include "scr_reddesc.h"
#include "scr_flush_redundancy.h"

/* src copied to the dataset directory's name, checked against the CRC32
 * recorded with it (want, "0x..." or NULL), recorded as SIZE and CRC in rec */
static int scr_flush_redundancy_file(int id, const char* src, const char* name, const char* want, scr_kvtree* rec,
                                     uint64_t* bytes)
{
  char* dst = scr_summary_dataset_file(scr.prefix, id, name);
  uint32_t crc = 0;
  uint64_t size = 0;
  int rc = !dst ? SCR_ERR_SECURITY
           : want ? scr_io_copy_file_expecting(src, dst, 0777, (uint32_t) strtoul(want, NULL, 16), &crc, &size)
                  : scr_io_copy_file(src, dst, 0777, &crc, &size);
  if (rc == SCR_SUCCESS) {
    scr_kvtree_set_kv_uint64(rec, "SIZE", size);
    scr_kvtree_set_kvf(rec, "CRC", "0x%08x", crc);
    *bytes += size;
  } else {
    scr_warn("dataset %d: copying redundancy file %s to %s failed: %s", id, src, dst ? dst : name,
             rc == SCR_ERR_CORRUPT ? "its CRC32 is not the one recorded when it was made" : scr_error_string(rc));
  }
  free(dst);
  return rc == SCR_SUCCESS;
}

/* XOR, RS: REDFILE/<name>/{SIZE, CRC} */
static int scr_flush_redundancy_parity(int id, const scr_kvtree* mine_in_filemap, scr_kvtree* rec, uint64_t* bytes)
{
  int ok = 1;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(mine_in_filemap, "REDFILE")); ok && e;
       e = scr_kvtree_next(e)) {
    char* base = scr_path_basename(scr_kvtree_elem_key(e));
    char* name = NULL;
    if (!base || asprintf(&name, "%s/%s", SCR_SUMMARY_REDUNDANCY_DIR, base) < 0) name = NULL;
    ok = name && scr_flush_redundancy_file(id, scr_kvtree_elem_key(e), name,
                                           scr_kvtree_get_val(scr_kvtree_elem_tree(e), "CRC"),
                                           scr_kvtree_add_kv(rec, "REDFILE", name), bytes);
    free(name);
    free(base);
  }
  return ok;
}

/* PARTNER: PARTNER/<s>/FILE/<i>/{RELPATH, SIZE, CRC, LINK} for each copy held */
static int scr_flush_redundancy_partner(int id, const scr_kvtree* dset, scr_kvtree* rec, uint64_t* bytes)
{
  int ok = 1;
  for (scr_kvtree_elem* p = scr_kvtree_first(scr_kvtree_get(dset, "PARTNER")); ok && p; p = scr_kvtree_next(p)) {
    int s = (int) scr_kvtree_elem_key_int(p);
    const char* dir = scr_kvtree_get_val(scr_kvtree_elem_tree(p), "DIR");
    scr_kvtree* meta = scr_kvtree_get(scr_kvtree_elem_tree(p), "META");
    scr_kvtree* held = scr_kvtree_add_kv_int(rec, "PARTNER", s);
    for (scr_kvtree_elem* f = scr_kvtree_first(scr_kvtree_get(meta, "FILE")); ok && f; f = scr_kvtree_next(f)) {
      scr_kvtree* m = scr_kvtree_elem_tree(f);
      const char* rel = scr_kvtree_get_val(m, "RELPATH");
      char* src = dir && rel && scr_path_is_safe_relative(rel) ? scr_path_join(dir, rel) : NULL;
      char* name = scr_summary_partner_name(s, rel);
      scr_kvtree* out = scr_kvtree_add_kv(held, "FILE", scr_kvtree_elem_key(f));
      scr_kvtree_set_kv(out, "RELPATH", rel);
      const char* group = scr_kvtree_get_val(m, SCR_FILEMAP_KEY_LINK);
      if (group) scr_kvtree_set_kv(out, SCR_FILEMAP_KEY_LINK, group);
      ok = src && name && scr_flush_redundancy_file(id, src, name, scr_kvtree_get_val(m, "CRC"), out, bytes);
      free(name);
      free(src);
    }
  }
  return ok;
}

int scr_flush_redundancy_copy(int id, scr_kvtree* mine, uint64_t* bytes)
{
  return scr_flush_redundancy_copy_of(scr.filemap, scr.rank, id, mine, bytes);
}

int scr_flush_redundancy_copy_of(const scr_kvtree* map, int rank, int id, scr_kvtree* mine, uint64_t* bytes)
{
  uint64_t copied = 0;
  if (bytes) *bytes = 0;
  scr_kvtree* dset = scr_filemap_get_dataset(map, id);
  scr_kvtree* reddesc = scr_kvtree_get(dset, "REDDESC");
  enum scr_copy_type type;
  if (!reddesc || scr_reddesc_type_from_name(scr_kvtree_get_val(reddesc, "TYPE"), &type) != SCR_SUCCESS ||
      type == SCR_COPY_SINGLE)
    return 1;
  long long stale = 0;
  scr_kvtree_get_int(dset, SCR_FILEMAP_KEY_REDUNDANCY_STALE, &stale);
  if (stale) {
    scr_warn("dataset %d: a file of rank %d changed after its redundancy was encoded: its redundancy data stays "
             "in cache, and scr_index --build cannot use it", id, rank);
    return 0;
  }
  scr_kvtree* rec = scr_kvtree_new();
  int ok = type == SCR_COPY_PARTNER
               ? scr_flush_redundancy_partner(id, dset, rec, &copied)
               : scr_flush_redundancy_parity(id, scr_kvtree_get_kv_int(dset, "RANK", rank), rec, &copied);
  if (ok) {
    scr_kvtree_set(rec, "REDDESC", scr_kvtree_copy(reddesc));
    scr_kvtree_merge(mine, rec);
  } else {
    scr_warn("dataset %d: the redundancy data of rank %d is not on the prefix directory %s: scr_index --build "
             "cannot use it", id, rank, scr.prefix);
  }
  scr_kvtree_delete(&rec);
  if (bytes) *bytes = copied;
  return ok;
}
