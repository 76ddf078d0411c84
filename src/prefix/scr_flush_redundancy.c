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
#include "scr_transfer_file.h"
#include "scr_globals.h"
#include "scr_reddesc.h"
#include "scr_flush_redundancy.h"

/* One walk over a rank's redundancy files serves the three ways they reach
 * the prefix directory: copied at once (a synchronous flush, a scavenge),
 * listed for the node's scr_transfer (a background flush), and taken from
 * what scr_transfer copied when that flush ends. */
struct redundancy_file {
  const char* src;  /* in cache */
  char* dst;        /* under the dataset's directory in <prefix>/.scr */
  const char* want; /* CRC32 recorded when it was made, "0x..." (or NULL) */
  uint64_t size;    /* as recorded (0 when not) */
  scr_kvtree* rec;  /* its entry in the rank2file record: SIZE and CRC go there */
};

typedef int (*redundancy_visit)(int id, struct redundancy_file* f, void* arg);

/* what a visit that copies or checks the file records of it */
static void redundancy_recorded(struct redundancy_file* f, uint64_t size, uint32_t crc, uint64_t* bytes)
{
  scr_kvtree_set_kv_uint64(f->rec, "SIZE", size);
  scr_kvtree_set_kvf(f->rec, "CRC", "0x%08x", crc);
  if (bytes) *bytes += size;
}

static int redundancy_copy(int id, struct redundancy_file* f, void* arg)
{
  uint32_t crc = 0;
  uint64_t size = 0;
  int rc = f->want ? scr_io_copy_file_expecting(f->src, f->dst, 0777, (uint32_t) strtoul(f->want, NULL, 16), &crc,
                                                &size)
                   : scr_io_copy_file(f->src, f->dst, 0777, &crc, &size);
  if (rc == SCR_SUCCESS) {
    redundancy_recorded(f, size, crc, arg);
  } else {
    scr_warn("dataset %d: copying redundancy file %s to %s failed: %s", id, f->src, f->dst,
             rc == SCR_ERR_CORRUPT ? "its CRC32 is not the one recorded when it was made" : scr_error_string(rc));
  }
  return rc == SCR_SUCCESS;
}

/* visit with f's name under the dataset's directory (dst made from it) */
static int redundancy_visit_named(int id, struct redundancy_file* f, const char* name, redundancy_visit visit,
                                  void* arg)
{
  f->dst = name ? scr_summary_dataset_file(scr.prefix, id, name) : NULL;
  if (!f->size && f->src) scr_io_file_size(f->src, &f->size); /* not recorded: as it is */
  int ok = f->dst && visit(id, f, arg);
  if (!f->dst) scr_warn("dataset %d: no place on the prefix directory for redundancy file %s", id, f->src);
  free(f->dst);
  f->dst = NULL;
  return ok;
}

/* XOR, RS: REDFILE/<name>/{SIZE, CRC} */
static int redundancy_parity(int id, const scr_kvtree* mine_in_filemap, scr_kvtree* rec, redundancy_visit visit,
                             void* arg)
{
  int ok = 1;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(mine_in_filemap, "REDFILE")); ok && e;
       e = scr_kvtree_next(e)) {
    char* base = scr_path_basename(scr_kvtree_elem_key(e));
    char* name = NULL;
    if (!base || asprintf(&name, "%s/%s", SCR_SUMMARY_REDUNDANCY_DIR, base) < 0) name = NULL;
    struct redundancy_file f = { scr_kvtree_elem_key(e), NULL, scr_kvtree_get_val(scr_kvtree_elem_tree(e), "CRC"),
                                 0, name ? scr_kvtree_add_kv(rec, "REDFILE", name) : NULL };
    scr_kvtree_get_uint64(scr_kvtree_elem_tree(e), "SIZE", &f.size);
    ok = name && redundancy_visit_named(id, &f, name, visit, arg);
    free(name);
    free(base);
  }
  return ok;
}

/* PARTNER: PARTNER/<s>/FILE/<i>/{RELPATH, SIZE, CRC, LINK} for each copy held */
static int redundancy_partner(int id, const scr_kvtree* dset, scr_kvtree* rec, redundancy_visit visit, void* arg)
{
  int ok = 1;
  for (scr_kvtree_elem* p = scr_kvtree_first(scr_kvtree_get(dset, "PARTNER")); ok && p; p = scr_kvtree_next(p)) {
    int s = (int) scr_kvtree_elem_key_int(p);
    const char* dir = scr_kvtree_get_val(scr_kvtree_elem_tree(p), "DIR");
    scr_kvtree* meta = scr_kvtree_get(scr_kvtree_elem_tree(p), "META");
    scr_kvtree* held = scr_kvtree_add_kv_int(rec, "PARTNER", s);
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(meta, "FILE")); ok && e; e = scr_kvtree_next(e)) {
      scr_kvtree* m = scr_kvtree_elem_tree(e);
      const char* rel = scr_kvtree_get_val(m, "RELPATH");
      char* src = dir && rel && scr_path_is_safe_relative(rel) ? scr_path_join(dir, rel) : NULL;
      char* name = scr_summary_partner_name(s, rel);
      scr_kvtree* out = scr_kvtree_add_kv(held, "FILE", scr_kvtree_elem_key(e));
      scr_kvtree_set_kv(out, "RELPATH", rel);
      const char* group = scr_kvtree_get_val(m, SCR_FILEMAP_KEY_LINK);
      if (group) scr_kvtree_set_kv(out, SCR_FILEMAP_KEY_LINK, group);
      struct redundancy_file f = { src, NULL, scr_kvtree_get_val(m, "CRC"), 0, out };
      scr_kvtree_get_uint64(m, "SIZE", &f.size);
      ok = src && name && redundancy_visit_named(id, &f, name, visit, arg);
      free(name);
      free(src);
    }
  }
  return ok;
}

/* visit each redundancy file of rank's part of dataset id as map records
 * it, building its record; the record goes into mine (when not NULL) once
 * every visit succeeded. -1 when there is none to visit (SINGLE, no
 * redundancy), 0 after a warning (stale, or a visit failed), 1 when done. */
static int redundancy_each(const scr_kvtree* map, int rank, int id, redundancy_visit visit, void* arg,
                           scr_kvtree* mine)
{
  scr_kvtree* dset = scr_filemap_get_dataset(map, id);
  scr_kvtree* reddesc = scr_kvtree_get(dset, "REDDESC");
  enum scr_copy_type type;
  if (!reddesc || scr_reddesc_type_from_name(scr_kvtree_get_val(reddesc, "TYPE"), &type) != SCR_SUCCESS ||
      type == SCR_COPY_SINGLE)
    return -1;
  long long stale = 0;
  scr_kvtree_get_int(dset, SCR_FILEMAP_KEY_REDUNDANCY_STALE, &stale);
  if (stale) {
    scr_warn("dataset %d: a file of rank %d changed after its redundancy was encoded: its redundancy data stays "
             "in cache, and scr_index --build cannot use it", id, rank);
    return 0;
  }
  scr_kvtree* rec = scr_kvtree_new();
  int ok = type == SCR_COPY_PARTNER ? redundancy_partner(id, dset, rec, visit, arg)
                                    : redundancy_parity(id, scr_kvtree_get_kv_int(dset, "RANK", rank), rec, visit, arg);
  if (ok && mine) {
    scr_kvtree_set(rec, "REDDESC", scr_kvtree_copy(reddesc));
    scr_kvtree_merge(mine, rec);
  } else if (!ok) {
    scr_warn("dataset %d: the redundancy data of rank %d is not on the prefix directory %s: scr_index --build "
             "cannot use it", id, rank, scr.prefix);
  }
  scr_kvtree_delete(&rec);
  return ok;
}

int scr_flush_redundancy_copy(int id, scr_kvtree* mine, uint64_t* bytes)
{
  return scr_flush_redundancy_copy_of(scr.filemap, scr.rank, id, mine, bytes);
}

int scr_flush_redundancy_copy_of(const scr_kvtree* map, int rank, int id, scr_kvtree* mine, uint64_t* bytes)
{
  uint64_t copied = 0;
  int ok = redundancy_each(map, rank, id, redundancy_copy, &copied, mine);
  if (bytes) *bytes = copied;
  return ok != 0;
}

/* ---- in the background: listed for scr_transfer, taken when it is done */

static int redundancy_list(int id, struct redundancy_file* f, void* arg)
{
  (void) id;
  scr_kvtree* entry = scr_kvtree_add_kv(arg, SCR_TRANSFER_KEY_FILES, f->src);
  scr_kvtree_set_kv(entry, SCR_TRANSFER_KEY_DESTINATION, f->dst);
  scr_kvtree_set_kv_uint64(entry, SCR_TRANSFER_KEY_SIZE, f->size);
  /* the daemon checks the bytes before its copy takes the name */
  if (f->want) scr_kvtree_set_kv(entry, SCR_TRANSFER_KEY_EXPECT, f->want);
  return 1;
}

void scr_flush_redundancy_list(int id, scr_kvtree* list)
{
  redundancy_each(scr.filemap, scr.rank, id, redundancy_list, list, NULL);
}

/* the daemon's copy when it left it whole and as made, else one now */
static int redundancy_take(int id, struct redundancy_file* f, void* arg)
{
  const scr_kvtree* done = scr_kvtree_get_kv(arg, "DST", f->dst);
  const char* crc = scr_kvtree_get_val(done, SCR_TRANSFER_KEY_CRC);
  uint64_t written = 0;
  scr_kvtree_get_uint64(done, SCR_TRANSFER_KEY_WRITTEN, &written);
  if (crc && !scr_kvtree_get_val(done, SCR_TRANSFER_KEY_ERROR) && written == f->size &&
      (!f->want || strtoul(crc, NULL, 16) == strtoul(f->want, NULL, 16))) {
    redundancy_recorded(f, written, (uint32_t) strtoul(crc, NULL, 16), NULL);
    return 1;
  }
  if (arg) scr_dbg(2, "flush of dataset %d: %s copied now, the background copy did not leave it whole", id, f->src);
  return redundancy_copy(id, f, NULL);
}

int scr_flush_redundancy_take(int id, const scr_kvtree* copied, scr_kvtree* mine)
{
  return redundancy_each(scr.filemap, scr.rank, id, redundancy_take, (void*) copied, mine) != 0;
}
