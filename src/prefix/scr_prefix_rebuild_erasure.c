/* scr_prefix_rebuild_erasure.c - scr_index --build for XOR and RS: per set with lost
 * members, the survivors' files and parity on the prefix are decoded in one process. */
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
#include "scr_stream.h"
#include "scr_erasure_code.h"
#include "scr_parity_file.h"
#include "scr_reddesc_type.h"
#include "scr_prefix_rebuild_impl.h"

#define SCR_PREFIX_REBUILD_PIECE (1 << 20)

/* one set with lost members, as a survivor recorded it */
struct scr_prefix_set {
  enum scr_copy_type type;
  int n, k, set_id;
  int members[256];            /* ranks by set index */
  int gone[256];               /* the decode writes this member: its files or its parity are lost */
  int data_gone[256];          /* and its files take their names on the prefix */
  const char* parity[256];     /* a survivor's parity file, as named in rank2file */
  uint64_t parity_size[256];
  scr_kvtree* headers[256];    /* each survivor's own parity header */
  const scr_kvtree* reddesc;   /* the record every member shares */
};

static int scr_prefix_set_load(struct scr_prefix_rebuild* b, int holder, struct scr_prefix_set* s)
{
  s->reddesc = scr_kvtree_get(scr_kvtree_get_kv_int(b->rank2file, "RANK", holder), "REDDESC");
  const scr_kvtree* set = scr_kvtree_get(s->reddesc, "SET");
  long long n = 0, k = 1, id = 0;
  scr_kvtree_get_int(set, "SIZE", &n);
  scr_kvtree_get_int(set, "FAILURES", &k);
  scr_kvtree_get_int(set, "ID", &id);
  if (scr_reddesc_type_from_name(scr_kvtree_get_val(s->reddesc, "TYPE"), &s->type) != SCR_SUCCESS ||
      n < 2 || n > 255 || k < 1 || k >= n) {
    scr_err("dataset %d: rank %d recorded a redundancy set this command cannot read", b->id, holder);
    return SCR_ERR_CORRUPT;
  }
  s->n = (int) n;
  s->k = s->type == SCR_COPY_RS ? (int) k : 1;
  s->set_id = (int) id;
  for (int i = 0; i < s->n; i++) {
    char key[16];
    snprintf(key, sizeof(key), "%d", i);
    const char* v = scr_kvtree_get_val(scr_kvtree_get(set, "MEMBER"), key);
    long long m = v ? strtoll(v, NULL, 10) : -1;
    if (m < 0 || m >= b->ranks) {
      scr_err("dataset %d: rank %d recorded member %d of its set as rank %s", b->id, holder, i, v ? v : "(none)");
      return SCR_ERR_CORRUPT;
    }
    s->members[i] = (int) m;
  }
  return SCR_SUCCESS;
}

/* a survivor's parity file, whole (size and CRC32 as flushed) and with a
 * header: 1, with its name, size and header kept in s */
static int scr_prefix_set_check_parity(struct scr_prefix_rebuild* b, struct scr_prefix_set* s, int i)
{
  int m = s->members[i];
  scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(scr_kvtree_get_kv_int(b->rank2file, "RANK", m), "REDFILE"));
  if (!e) {
    scr_err("dataset %d: rank %d left no parity file on the prefix directory", b->id, m);
    return 0;
  }
  const char* name = scr_kvtree_elem_key(e);
  char* path = scr_summary_dataset_file(b->prefix, b->id, name);
  uint64_t want = 0, size = 0;
  uint32_t crc = 0;
  scr_kvtree_get_uint64(scr_kvtree_elem_tree(e), "SIZE", &want);
  const char* want_crc = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "CRC");
  int ok = path && scr_io_crc32_file(path, &crc, &size) == SCR_SUCCESS;
  b->bytes_read += size;
  if (!ok || size != want || !want_crc || strtoul(want_crc, NULL, 16) != crc) {
    scr_err("dataset %d: parity file %s of rank %d %s: it is not used", b->id, path ? path : name, m,
            !ok ? "cannot be read" : size != want ? "has another size than when it was flushed"
                                   : "does not match the CRC32 recorded when it was flushed");
    ok = 0;
  }
  s->headers[i] = scr_kvtree_new();
  if (ok) ok = scr_parity_read_header(path, s->headers[i]) == SCR_SUCCESS;
  free(path);
  if (ok) {
    s->parity[i] = name;
    s->parity_size[i] = size;
  }
  return ok;
}

static int scr_prefix_set_count(const struct scr_prefix_set* s)
{
  int c = 0;
  for (int i = 0; i < s->n; i++) c += s->gone[i] != 0;
  return c;
}

/* too many members of the set gone: said with which and why */
static int scr_prefix_set_refuse(struct scr_prefix_rebuild* b, const struct scr_prefix_set* s)
{
  char ranks[256] = "", gone[256] = "";
  for (int i = 0; i < s->n; i++) {
    snprintf(ranks + strlen(ranks), sizeof(ranks) - strlen(ranks), "%s%d", i ? ", " : "", s->members[i]);
    if (s->gone[i])
      snprintf(gone + strlen(gone), sizeof(gone) - strlen(gone), "%srank %d: %s", gone[0] ? ", " : "",
               s->members[i], b->lost[s->members[i]] ? "files" : "parity");
  }
  scr_err("dataset %d: %s set %d (ranks %s) lost %d members (%s); it rebuilds at most %d", b->id,
          scr_reddesc_type_name(s->type), s->set_id, ranks, scr_prefix_set_count(s), gone, s->k);
  return SCR_ERR_INVALID;
}

/* the member's files from a header: paths on the prefix, or temporary ones
 * for a member the decode writes */
static int scr_prefix_set_open_data(struct scr_prefix_rebuild* b, const struct scr_prefix_set* s, int i,
                                    const scr_kvtree* member, struct scr_stream* data)
{
  int count = scr_kvtree_size(scr_kvtree_get(member, "FILE"));
  char** paths = calloc(count + 1, sizeof(char*));
  uint64_t* sizes = calloc(count + 1, sizeof(uint64_t));
  int rc = paths && sizes ? SCR_SUCCESS : SCR_ERR_NOMEM;
  for (int j = 0; rc == SCR_SUCCESS && j < count; j++) {
    scr_kvtree* f = scr_kvtree_get_kv_int(member, "FILE", j);
    char name[32];
    snprintf(name, sizeof(name), "%d", j);
    paths[j] = s->gone[i] ? scr_prefix_rebuild_temp(b, s->members[i], name)
                          : scr_prefix_rebuild_file(b, scr_kvtree_get_val(f, "RELPATH"));
    if (!paths[j] || scr_kvtree_get_uint64(f, "SIZE", &sizes[j]) != SCR_SUCCESS) rc = SCR_ERR_CORRUPT;
  }
  if (rc == SCR_SUCCESS) rc = scr_stream_open(data, count, paths, sizes, s->gone[i]);
  for (int j = 0; paths && j < count; j++) free(paths[j]);
  free(paths);
  free(sizes);
  return rc;
}

static int scr_prefix_set_open_parity(struct scr_prefix_rebuild* b, const struct scr_prefix_set* s, int i,
                                      uint64_t size, struct scr_stream* parity)
{
  char* path = s->gone[i] ? scr_prefix_rebuild_temp(b, s->members[i], "parity")
                          : scr_summary_dataset_file(b->prefix, b->id, s->parity[i]);
  uint64_t bytes = s->gone[i] ? size : s->parity_size[i];
  int rc = path ? scr_stream_open(parity, 1, &path, &bytes, s->gone[i]) : SCR_ERR_NOMEM;
  free(path);
  return rc;
}

/* the member tree of index i the decode goes by: a survivor's own header
 * (after a rename its files' names are in it), else the source's */
static const scr_kvtree* scr_prefix_set_member(const struct scr_prefix_set* s, const scr_kvtree* source, int i)
{
  const scr_kvtree* h = s->gone[i] ? source : s->headers[i];
  return scr_kvtree_get_kv_int(scr_kvtree_get(h, "SET"), "MEMBER", i);
}

/* after the decode: every written file has its recorded CRC32 (else the
 * set is refused, -1), and a survivor whose file has not is gone (counted) */
static int scr_prefix_set_verify(struct scr_prefix_rebuild* b, struct scr_prefix_set* s, const scr_kvtree* source,
                                 struct scr_stream* data)
{
  int bad = 0;
  for (int i = 0; i < s->n; i++) {
    const scr_kvtree* member = scr_prefix_set_member(s, source, i);
    for (int j = 0; j < data[i].file_count; j++) {
      const char* want = scr_kvtree_get_val(scr_kvtree_get_kv_int(member, "FILE", j), "CRC");
      uint32_t crc = 0;
      uint64_t size = 0;
      int known = scr_stream_file_crc(&data[i], j, &crc) == SCR_SUCCESS;
      if (!known && !s->gone[i]) {
        /* an RS decode reads only the survivors it needs */
        known = scr_io_crc32_file(data[i].files[j].path, &crc, &size) == SCR_SUCCESS;
        b->bytes_read += size;
      }
      if (known && want && strtoul(want, NULL, 16) == crc) continue;
      if (s->gone[i]) {
        scr_err("dataset %d: rebuilt file %d of rank %d does not match its recorded CRC32: the set is refused",
                b->id, j, s->members[i]);
        return -1;
      }
      scr_err("dataset %d: %s of rank %d does not match the CRC32 recorded in the parity: treated as lost", b->id,
              data[i].files[j].path, s->members[i]);
      s->gone[i] = s->data_gone[i] = 1;
      bad++;
      break;
    }
  }
  return bad;
}

/* the rebuilt files of member i take their names, and rank2file records them */
static int scr_prefix_set_commit(struct scr_prefix_rebuild* b, const struct scr_prefix_set* s, int i,
                                 const scr_kvtree* source, uint64_t parity_size, uint32_t parity_crc)
{
  int m = s->members[i], rc = SCR_SUCCESS;
  const scr_kvtree* member = scr_kvtree_get_kv_int(scr_kvtree_get(source, "SET"), "MEMBER", i);
  scr_kvtree* entry = scr_prefix_rebuild_entry(b, m);
  if (s->data_gone[i]) {
    int count = scr_kvtree_size(scr_kvtree_get(member, "FILE"));
    scr_kvtree_unset(entry, "FILE");
    scr_kvtree_set_kv_int(entry, "FILES", count);
    for (int j = 0; rc == SCR_SUCCESS && j < count; j++) {
      scr_kvtree* f = scr_kvtree_get_kv_int(member, "FILE", j);
      char n[32];
      snprintf(n, sizeof(n), "%d", j);
      char* tmp = scr_prefix_rebuild_temp(b, m, n);
      char* dst = scr_prefix_rebuild_file(b, scr_kvtree_get_val(f, "RELPATH"));
      rc = tmp && dst ? scr_prefix_rebuild_commit(b, tmp, dst) : SCR_ERR_SECURITY;
      scr_kvtree* out = scr_kvtree_add_kv(entry, "FILE", scr_kvtree_get_val(f, "RELPATH"));
      scr_kvtree_set_kv(out, "SIZE", scr_kvtree_get_val(f, "SIZE"));
      scr_kvtree_set_kv(out, "CRC", scr_kvtree_get_val(f, "CRC"));
      const char* group = scr_kvtree_get_val(f, SCR_FILEMAP_KEY_LINK);
      if (group) scr_kvtree_set_kv(out, SCR_FILEMAP_KEY_LINK, group);
      uint64_t size = 0;
      scr_kvtree_get_uint64(f, "SIZE", &size);
      b->bytes_written += size;
      free(dst);
      free(tmp);
    }
  }
  /* its parity too: the dataset on the prefix is as well protected as before */
  char* name = NULL;
  if (asprintf(&name, "%s/%d_of_%d_in_%d.%s", SCR_SUMMARY_REDUNDANCY_DIR, i + 1, s->n, s->set_id,
               s->type == SCR_COPY_RS ? "rs" : "xor") < 0)
    name = NULL;
  char* tmp = scr_prefix_rebuild_temp(b, m, "parity");
  char* dst = name ? scr_summary_dataset_file(b->prefix, b->id, name) : NULL;
  if (rc == SCR_SUCCESS) rc = tmp && dst ? scr_prefix_rebuild_commit(b, tmp, dst) : SCR_ERR_NOMEM;
  if (rc == SCR_SUCCESS) {
    scr_kvtree_unset(entry, "REDFILE");
    scr_kvtree* r = scr_kvtree_add_kv(entry, "REDFILE", name);
    scr_kvtree_set_kv_uint64(r, "SIZE", parity_size);
    scr_kvtree_set_kvf(r, "CRC", "0x%08x", parity_crc);
    scr_kvtree_set(entry, "REDDESC", scr_kvtree_copy(s->reddesc));
    b->bytes_written += parity_size;
  }
  free(dst);
  free(tmp);
  free(name);
  return rc;
}

/* one decode of the set with the members marked gone; 1 when a survivor
 * turned out damaged and the decode must run again without it */
static int scr_prefix_set_decode(struct scr_prefix_rebuild* b, struct scr_prefix_set* s, int* rc)
{
  int source = 0;
  while (s->gone[source]) source++;
  const scr_kvtree* header = s->headers[source];
  uint64_t chunk = 0;
  scr_kvtree_get_uint64(header, "CHUNK", &chunk);
  uint64_t parity_size = (uint64_t) s->k * chunk + scr_parity_header_size(header);
  struct scr_stream* data = calloc(s->n, sizeof(*data));
  struct scr_stream* parity = calloc(s->n, sizeof(*parity));
  int* opened = calloc(s->n, sizeof(int));
  *rc = data && parity && opened && chunk > 0 ? SCR_SUCCESS : SCR_ERR_CORRUPT;
  for (int i = 0; *rc == SCR_SUCCESS && i < s->n; i++) {
    long long rank = -1;
    const scr_kvtree* member = scr_prefix_set_member(s, header, i);
    scr_kvtree_get_int(member, "RANK", &rank);
    if (rank != s->members[i]) {
      scr_err("dataset %d: the parity header names rank %lld as member %d of the set, rank2file rank %d", b->id,
              rank, i, s->members[i]);
      *rc = SCR_ERR_CORRUPT;
      break;
    }
    *rc = scr_prefix_set_open_data(b, s, i, member, &data[i]);
    if (*rc == SCR_SUCCESS) {
      *rc = scr_prefix_set_open_parity(b, s, i, parity_size, &parity[i]);
      if (*rc != SCR_SUCCESS) scr_stream_close(&data[i]);
    }
    opened[i] = *rc == SCR_SUCCESS;
  }
  struct scr_erasure_code code;
  int again = 0;
  if (*rc == SCR_SUCCESS) *rc = scr_erasure_code_init(&code, s->n, s->k, chunk);
  if (*rc == SCR_SUCCESS) {
    *rc = scr_erasure_rebuild_local(&code, s->gone, data, parity, SCR_PREFIX_REBUILD_PIECE);
    scr_erasure_code_finalize(&code);
  }
  for (int i = 0; *rc == SCR_SUCCESS && i < s->n; i++)
    if (!s->gone[i]) b->bytes_read += data[i].length + (uint64_t) s->k * chunk;
  if (*rc == SCR_SUCCESS) {
    int bad = scr_prefix_set_verify(b, s, header, data);
    if (bad < 0) *rc = SCR_ERR_CORRUPT;
    again = bad > 0;
  }
  /* the parity of a member written: its header after it, then its CRC32 */
  uint32_t crcs[256] = { 0 };
  for (int i = 0; *rc == SCR_SUCCESS && !again && i < s->n; i++)
    if (s->gone[i] && (scr_parity_write_header(&parity[i], (uint64_t) s->k * chunk, header) != SCR_SUCCESS ||
                       scr_stream_file_crc(&parity[i], 0, &crcs[i]) != SCR_SUCCESS))
      *rc = SCR_ERR_IO;
  for (int i = 0; i < s->n; i++) {
    if (!opened[i]) continue;
    if (scr_stream_close(&data[i]) != SCR_SUCCESS && s->gone[i]) *rc = SCR_ERR_IO;
    if (scr_stream_close(&parity[i]) != SCR_SUCCESS && s->gone[i]) *rc = SCR_ERR_IO;
  }
  for (int i = 0; *rc == SCR_SUCCESS && !again && i < s->n; i++)
    if (s->gone[i]) *rc = scr_prefix_set_commit(b, s, i, header, parity_size, crcs[i]);
  free(opened);
  free(parity);
  free(data);
  return again;
}

static int scr_prefix_set_rebuild(struct scr_prefix_rebuild* b, struct scr_prefix_set* s)
{
  for (int i = 0; i < s->n; i++) {
    if (b->lost[s->members[i]]) s->gone[i] = s->data_gone[i] = 1;
    else if (!scr_prefix_set_check_parity(b, s, i)) s->gone[i] = 1;
  }
  int rc = SCR_SUCCESS;
  for (;;) {
    if (scr_prefix_set_count(s) > s->k) return scr_prefix_set_refuse(b, s);
    scr_io_remove_tree(b->work);
    if (!scr_prefix_set_decode(b, s, &rc)) break;
  }
  return rc;
}

int scr_prefix_rebuild_erasure(struct scr_prefix_rebuild* b)
{
  int* handled = calloc(b->ranks, sizeof(int));
  int failed = handled ? 0 : 1;
  for (int r = 0; handled && r < b->ranks; r++) {
    if (!b->lost[r] || handled[r]) continue;
    int index = -1, holder = scr_prefix_rebuild_set_of(b, r, &index);
    if (holder < 0) {
      scr_err("dataset %d: no surviving member of rank %d's set left redundancy data on the prefix directory", b->id,
              r);
      handled[r] = b->unrebuilt[r] = failed = 1;
      continue;
    }
    struct scr_prefix_set* s = calloc(1, sizeof(*s));
    int rc = s ? scr_prefix_set_load(b, holder, s) : SCR_ERR_NOMEM;
    if (rc == SCR_SUCCESS) rc = scr_prefix_set_rebuild(b, s);
    for (int i = 0; s && i < s->n; i++) {
      int m = s->members[i];
      if (b->lost[m]) {
        handled[m] = 1;
        if (rc != SCR_SUCCESS) b->unrebuilt[m] = 1;
      }
      scr_kvtree_delete(&s->headers[i]);
    }
    if (rc != SCR_SUCCESS) {
      handled[r] = b->unrebuilt[r] = 1;
      failed = 1;
    }
    free(s);
  }
  free(handled);
  return failed ? SCR_ERR_INVALID : SCR_SUCCESS;
}
