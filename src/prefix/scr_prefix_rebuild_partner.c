/* scr_prefix_rebuild_partner.c - scr_index --build for PARTNER: a lost rank's files come
 * back from the copy its partner flushed beside the dataset, checked by CRC32 as they are copied. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_filemap.h"
#include "scr_summary_file.h"
#include "scr_prefix_rebuild_impl.h"

/* the surviving rank that flushed a copy of rank r's files, or -1 */
static int scr_prefix_partner_holder(struct scr_prefix_rebuild* b, int r)
{
  for (int h = 0; h < b->ranks; h++)
    if (!b->lost[h] && scr_kvtree_get_kv_int(scr_kvtree_get_kv_int(b->rank2file, "RANK", h), "PARTNER", r))
      return h;
  return -1;
}

/* src copied to dst on the prefix, its CRC32 checked against want before it
 * takes dst's name; SCR_SUCCESS or said */
static int scr_prefix_partner_copy(struct scr_prefix_rebuild* b, const char* src, const char* dst, const char* want,
                                   uint64_t size_want)
{
  uint32_t crc = 0;
  uint64_t size = 0;
  int rc = !want ? SCR_ERR_CORRUPT
                 : scr_io_copy_file_expecting(src, dst, 0777, (uint32_t) strtoul(want, NULL, 16), &crc, &size);
  b->bytes_read += size;
  if (rc == SCR_SUCCESS && size != size_want) rc = SCR_ERR_CORRUPT;
  if (rc == SCR_SUCCESS) b->bytes_written += size;
  else
    scr_err("dataset %d: the partner copy %s %s: refused", b->id, src,
            rc == SCR_ERR_CORRUPT ? "does not match the size and CRC32 recorded when it was made"
                                  : "cannot be copied");
  return rc;
}

/* file rel of rank s copied between its place on the prefix directory and
 * the partner copy of it (to_copy: into the copy), checked against the SIZE
 * and CRC f records; out records them, and its LINK */
static int scr_prefix_partner_file(struct scr_prefix_rebuild* b, int s, const char* rel, const scr_kvtree* f,
                                   int to_copy, scr_kvtree* out)
{
  uint64_t size = 0;
  scr_kvtree_get_uint64(f, "SIZE", &size);
  const char* crc = scr_kvtree_get_val(f, "CRC");
  char* name = scr_summary_partner_name(s, rel);
  char* copy = name ? scr_summary_dataset_file(b->prefix, b->id, name) : NULL;
  char* place = scr_prefix_rebuild_file(b, rel);
  int rc = copy && place ? scr_prefix_partner_copy(b, to_copy ? place : copy, to_copy ? copy : place, crc, size)
                         : SCR_ERR_SECURITY;
  scr_kvtree_set_kv_uint64(out, "SIZE", size);
  scr_kvtree_set_kv(out, "CRC", crc);
  const char* group = scr_kvtree_get_val(f, SCR_FILEMAP_KEY_LINK);
  if (group) scr_kvtree_set_kv(out, SCR_FILEMAP_KEY_LINK, group);
  free(place);
  free(copy);
  free(name);
  return rc;
}

/* rank r's files from the copy holder flushed; its rank2file entry made */
static int scr_prefix_partner_restore(struct scr_prefix_rebuild* b, int r, int holder)
{
  const scr_kvtree* held =
      scr_kvtree_get_kv_int(scr_kvtree_get_kv_int(b->rank2file, "RANK", holder), "PARTNER", r);
  scr_kvtree* entry = scr_prefix_rebuild_entry(b, r);
  scr_kvtree_unset(entry, "FILE");
  int rc = SCR_SUCCESS, count = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(held, "FILE")); rc == SCR_SUCCESS && e;
       e = scr_kvtree_next(e), count++) {
    const scr_kvtree* f = scr_kvtree_elem_tree(e);
    const char* rel = scr_kvtree_get_val(f, "RELPATH");
    rc = scr_prefix_partner_file(b, r, rel, f, 0, scr_kvtree_add_kv(entry, "FILE", rel));
  }
  scr_kvtree_set_kv_int(entry, "FILES", count);
  return rc;
}

/* the copy rebuilt rank r held, of its partner on the left, made again from
 * that rank's files on the prefix; a failure only weakens the protection */
static void scr_prefix_partner_copy_again(struct scr_prefix_rebuild* b, int r)
{
  int index = -1, holder = scr_prefix_rebuild_set_of(b, r, &index);
  const scr_kvtree* reddesc = scr_kvtree_get(scr_kvtree_get_kv_int(b->rank2file, "RANK", holder), "REDDESC");
  const scr_kvtree* set = scr_kvtree_get(reddesc, "SET");
  long long n = 0, hop = 1;
  scr_kvtree_get_int(set, "SIZE", &n);
  scr_kvtree_get_int(reddesc, "HOP", &hop);
  if (holder < 0 || n < 2) return;
  char key[32];
  snprintf(key, sizeof(key), "%lld", ((index - hop) % n + n) % n);
  const char* v = scr_kvtree_get_val(scr_kvtree_get(set, "MEMBER"), key);
  int left = v ? atoi(v) : -1;
  scr_kvtree* entry = scr_prefix_rebuild_entry(b, r);
  scr_kvtree_set(entry, "REDDESC", scr_kvtree_copy(reddesc));
  const scr_kvtree* files = scr_kvtree_get(scr_kvtree_get_kv_int(b->rank2file, "RANK", left), "FILE");
  scr_kvtree* copy = scr_kvtree_new();
  int rc = left >= 0 && left < b->ranks ? SCR_SUCCESS : SCR_ERR_INVALID, i = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(files); rc == SCR_SUCCESS && e; e = scr_kvtree_next(e), i++) {
    scr_kvtree* out = scr_kvtree_add_kv_int(copy, "FILE", i);
    scr_kvtree_set_kv(out, "RELPATH", scr_kvtree_elem_key(e));
    rc = scr_prefix_partner_file(b, left, scr_kvtree_elem_key(e), scr_kvtree_elem_tree(e), 1, out);
  }
  scr_kvtree_unset(entry, "PARTNER");
  if (rc == SCR_SUCCESS) scr_kvtree_set(scr_kvtree_add_kv_int(entry, "PARTNER", left), "FILE",
                                        scr_kvtree_copy(scr_kvtree_get(copy, "FILE")));
  else scr_warn("dataset %d: the copy rank %d held of rank %d's files is not made again: rank %d is unprotected "
                "on the prefix directory", b->id, r, left, left);
  scr_kvtree_delete(&copy);
}

int scr_prefix_rebuild_partner(struct scr_prefix_rebuild* b)
{
  int failed = 0;
  int* restored = calloc(b->ranks, sizeof(int));
  for (int r = 0; restored && r < b->ranks; r++) {
    if (!b->lost[r]) continue;
    int holder = scr_prefix_partner_holder(b, r);
    if (holder < 0) {
      int index = -1, known = scr_prefix_rebuild_set_of(b, r, &index);
      scr_err("dataset %d: no surviving rank flushed a copy of rank %d's files%s", b->id, r,
              known >= 0 ? " (the rank that held it is lost too)" : "");
      b->unrebuilt[r] = failed = 1;
    } else if (scr_prefix_partner_restore(b, r, holder) != SCR_SUCCESS) {
      b->unrebuilt[r] = failed = 1;
    } else {
      restored[r] = 1;
    }
  }
  /* once every lost rank is back: the copies they held, of files now whole */
  for (int r = 0; restored && !failed && r < b->ranks; r++)
    if (restored[r]) scr_prefix_partner_copy_again(b, r);
  free(restored);
  return failed || !restored ? SCR_ERR_INVALID : SCR_SUCCESS;
}
