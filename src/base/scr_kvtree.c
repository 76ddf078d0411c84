/* scr_kvtree.c - the in-memory key-value tree: children in insertion order,
 * a hash index for wide nodes, merge, sort, text output, and the packed form. */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_kvtree.h"

/* Below this many children a linear scan over the cached hashes beats the
 * index; above it, a rank2file map with 100k ranks would make lookups quadratic. */
#define SCR_KVTREE_INDEX_THRESHOLD 16

/* Deeper packed trees are rejected so that hostile input cannot exhaust the
 * stack; no SCR file nests anywhere near this far. */
#define SCR_KVTREE_MAX_DEPTH 64

struct scr_kvtree_elem {
  scr_kvtree_elem* prev;
  scr_kvtree_elem* next;
  scr_kvtree* tree;
  uint32_t hash;
  size_t key_len;
  char key[]; /* stored inline: one allocation per child matters for wide nodes */
};

struct scr_kvtree {
  scr_kvtree_elem* first;
  scr_kvtree_elem* last;
  size_t count;
  scr_kvtree_elem** index; /* open addressing, linear probing; NULL when narrow */
  size_t index_cap;        /* power of two */
};

/* Bumped by every change to any tree (a child linked, unlinked or replaced,
 * a tree cleared or sorted): a reader that keeps an index over a tree (the
 * preload's view of the filemap) knows the index still holds while this has
 * not moved, without a hook in every caller that changes the tree. */
static unsigned long scr_kvtree_change_count = 0;

static void scr_kvtree_changed(void)
{
  __atomic_add_fetch(&scr_kvtree_change_count, 1, __ATOMIC_RELAXED);
}

unsigned long scr_kvtree_changes(void)
{
  return __atomic_load_n(&scr_kvtree_change_count, __ATOMIC_RELAXED);
}

/* Allocation failure leaves nothing sensible to return from set/get_or_create,
 * and every caller would have to check; stopping loudly is the safer contract. */
static void* scr_kvtree_alloc(size_t size)
{
  void* p = malloc(size ? size : 1);
  if (p == NULL) {
    scr_err("out of memory allocating %zu bytes for a key-value tree; aborting", size);
    abort();
  }
  return p;
}

/* FNV-1a: cheap, and good enough spread for rank numbers and file names */
static uint32_t scr_kvtree_hash(const char* key, size_t len)
{
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++) {
    h ^= (unsigned char) key[i];
    h *= 16777619u;
  }
  return h;
}

scr_kvtree* scr_kvtree_new(void)
{
  scr_kvtree* tree = scr_kvtree_alloc(sizeof(*tree));
  memset(tree, 0, sizeof(*tree));
  return tree;
}

static void scr_kvtree_free_elem(scr_kvtree_elem* elem)
{
  scr_kvtree_delete(&elem->tree);
  free(elem);
}

void scr_kvtree_clear(scr_kvtree* tree)
{
  if (tree == NULL) return;
  scr_kvtree_changed();
  scr_kvtree_elem* elem = tree->first;
  while (elem) {
    scr_kvtree_elem* next = elem->next;
    scr_kvtree_free_elem(elem);
    elem = next;
  }
  free(tree->index);
  memset(tree, 0, sizeof(*tree));
}

void scr_kvtree_delete(scr_kvtree** tree)
{
  if (tree == NULL || *tree == NULL) return;
  scr_kvtree_clear(*tree);
  free(*tree);
  *tree = NULL;
}

int scr_kvtree_size(const scr_kvtree* tree)
{
  if (tree == NULL) return 0;
  return tree->count > INT32_MAX ? INT32_MAX : (int) tree->count;
}

/* ---- hash index ---- */

static void scr_kvtree_index_put(scr_kvtree* tree, scr_kvtree_elem* elem)
{
  size_t mask = tree->index_cap - 1;
  size_t slot = elem->hash & mask;
  while (tree->index[slot]) slot = (slot + 1) & mask;
  tree->index[slot] = elem;
}

static void scr_kvtree_index_rebuild(scr_kvtree* tree, size_t cap)
{
  free(tree->index);
  tree->index = scr_kvtree_alloc(cap * sizeof(*tree->index));
  memset(tree->index, 0, cap * sizeof(*tree->index));
  tree->index_cap = cap;
  for (scr_kvtree_elem* e = tree->first; e; e = e->next) scr_kvtree_index_put(tree, e);
}

/* called after elem was linked in, so count already includes it */
static void scr_kvtree_index_add(scr_kvtree* tree, scr_kvtree_elem* elem)
{
  if (tree->index == NULL) {
    if (tree->count > SCR_KVTREE_INDEX_THRESHOLD) scr_kvtree_index_rebuild(tree, 64);
    return;
  }
  /* keep load at most one half so probe sequences stay short */
  if (tree->count * 2 > tree->index_cap) {
    scr_kvtree_index_rebuild(tree, tree->index_cap * 2);
    return;
  }
  scr_kvtree_index_put(tree, elem);
}

/* backward-shift deletion keeps linear probing correct without tombstones */
static void scr_kvtree_index_remove(scr_kvtree* tree, scr_kvtree_elem* elem)
{
  if (tree->index == NULL) return;
  size_t mask = tree->index_cap - 1;
  size_t slot = elem->hash & mask;
  while (tree->index[slot] != elem) {
    if (tree->index[slot] == NULL) return;
    slot = (slot + 1) & mask;
  }
  tree->index[slot] = NULL;
  size_t hole = slot;
  for (size_t next = (slot + 1) & mask; tree->index[next]; next = (next + 1) & mask) {
    size_t home = tree->index[next]->hash & mask;
    /* move the entry back if its home slot does not lie cyclically in (hole, next] */
    int stays = (hole <= next) ? (home > hole && home <= next) : (home > hole || home <= next);
    if (!stays) {
      tree->index[hole] = tree->index[next];
      tree->index[next] = NULL;
      hole = next;
    }
  }
}

static scr_kvtree_elem* scr_kvtree_find(const scr_kvtree* tree, const char* key, size_t len,
                                        uint32_t hash)
{
  if (tree->index) {
    size_t mask = tree->index_cap - 1;
    for (size_t slot = hash & mask; tree->index[slot]; slot = (slot + 1) & mask) {
      scr_kvtree_elem* e = tree->index[slot];
      if (e->hash == hash && e->key_len == len && memcmp(e->key, key, len) == 0) return e;
    }
    return NULL;
  }
  for (scr_kvtree_elem* e = tree->first; e; e = e->next) {
    if (e->hash == hash && e->key_len == len && memcmp(e->key, key, len) == 0) return e;
  }
  return NULL;
}

static scr_kvtree_elem* scr_kvtree_lookup(const scr_kvtree* tree, const char* key)
{
  if (tree == NULL || key == NULL) return NULL;
  size_t len = strlen(key);
  return scr_kvtree_find(tree, key, len, scr_kvtree_hash(key, len));
}

/* append elem at the end of the children (merge_move relinks an existing one) */
static void scr_kvtree_link(scr_kvtree* tree, scr_kvtree_elem* elem)
{
  scr_kvtree_changed();
  elem->next = NULL;
  elem->prev = tree->last;
  if (tree->last) tree->last->next = elem;
  else tree->first = elem;
  tree->last = elem;
  tree->count++;
  scr_kvtree_index_add(tree, elem);
}

/* appends without checking for an existing key: callers have just looked */
static scr_kvtree_elem* scr_kvtree_append(scr_kvtree* tree, const char* key, size_t len,
                                          uint32_t hash, scr_kvtree* value)
{
  scr_kvtree_elem* elem = scr_kvtree_alloc(sizeof(*elem) + len + 1);
  memcpy(elem->key, key, len);
  elem->key[len] = '\0';
  elem->key_len = len;
  elem->hash = hash;
  elem->tree = value;
  scr_kvtree_link(tree, elem);
  return elem;
}

static void scr_kvtree_unlink(scr_kvtree* tree, scr_kvtree_elem* elem)
{
  scr_kvtree_changed();
  scr_kvtree_index_remove(tree, elem);
  if (elem->prev) elem->prev->next = elem->next;
  else tree->first = elem->next;
  if (elem->next) elem->next->prev = elem->prev;
  else tree->last = elem->prev;
  tree->count--;
}

/* ---- single-level access ---- */

scr_kvtree* scr_kvtree_get(const scr_kvtree* tree, const char* key)
{
  scr_kvtree_elem* elem = scr_kvtree_lookup(tree, key);
  return elem ? elem->tree : NULL;
}

scr_kvtree* scr_kvtree_set(scr_kvtree* tree, const char* key, scr_kvtree* value)
{
  if (tree == NULL || key == NULL) {
    scr_kvtree_delete(&value);
    return NULL;
  }
  if (value == NULL) value = scr_kvtree_new();
  size_t len = strlen(key);
  uint32_t hash = scr_kvtree_hash(key, len);
  scr_kvtree_elem* elem = scr_kvtree_find(tree, key, len, hash);
  if (elem) {
    /* replace in place so the key keeps its position in insertion order */
    if (elem->tree != value) {
      scr_kvtree_delete(&elem->tree);
      elem->tree = value;
      scr_kvtree_changed();
    }
    return value;
  }
  scr_kvtree_append(tree, key, len, hash, value);
  return value;
}

scr_kvtree* scr_kvtree_get_or_create(scr_kvtree* tree, const char* key)
{
  if (tree == NULL || key == NULL) return NULL;
  size_t len = strlen(key);
  uint32_t hash = scr_kvtree_hash(key, len);
  scr_kvtree_elem* elem = scr_kvtree_find(tree, key, len, hash);
  if (elem == NULL) elem = scr_kvtree_append(tree, key, len, hash, scr_kvtree_new());
  return elem->tree;
}

int scr_kvtree_unset(scr_kvtree* tree, const char* key)
{
  scr_kvtree_elem* elem = scr_kvtree_lookup(tree, key);
  if (elem) {
    scr_kvtree_unlink(tree, elem);
    scr_kvtree_free_elem(elem);
  }
  return SCR_SUCCESS;
}

/* ---- key/value pairs ---- */

scr_kvtree* scr_kvtree_set_kv(scr_kvtree* tree, const char* key, const char* value)
{
  if (tree == NULL || key == NULL || value == NULL) return NULL;
  scr_kvtree* sub = scr_kvtree_get_or_create(tree, key);
  scr_kvtree_clear(sub);
  return scr_kvtree_get_or_create(sub, value);
}

scr_kvtree* scr_kvtree_set_kv_int(scr_kvtree* tree, const char* key, long long value)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%lld", value);
  return scr_kvtree_set_kv(tree, key, buf);
}

scr_kvtree* scr_kvtree_set_kv_uint64(scr_kvtree* tree, const char* key, uint64_t value)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%" PRIu64, value);
  return scr_kvtree_set_kv(tree, key, buf);
}

scr_kvtree* scr_kvtree_set_kv_double(scr_kvtree* tree, const char* key, double value)
{
  /* 17 significant digits so that the value reads back bit-identical */
  char buf[40];
  snprintf(buf, sizeof(buf), "%.17g", value);
  return scr_kvtree_set_kv(tree, key, buf);
}

scr_kvtree* scr_kvtree_set_kvf(scr_kvtree* tree, const char* key, const char* fmt, ...)
{
  va_list ap;
  char small[256];
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof(small), fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  if ((size_t) n < sizeof(small)) return scr_kvtree_set_kv(tree, key, small);
  char* big = scr_kvtree_alloc((size_t) n + 1);
  va_start(ap, fmt);
  vsnprintf(big, (size_t) n + 1, fmt, ap);
  va_end(ap);
  scr_kvtree* result = scr_kvtree_set_kv(tree, key, big);
  free(big);
  return result;
}

const char* scr_kvtree_get_val(const scr_kvtree* tree, const char* key)
{
  scr_kvtree* sub = scr_kvtree_get(tree, key);
  return (sub && sub->first) ? sub->first->key : NULL;
}

/* strict: the whole string must be a number, so "12abc" is not silently 12 */
static int scr_kvtree_parse_int(const char* s, long long* value)
{
  if (s == NULL || *s == '\0') return 0;
  char* end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') return 0;
  *value = v;
  return 1;
}

int scr_kvtree_get_int(const scr_kvtree* tree, const char* key, long long* value)
{
  const char* s = scr_kvtree_get_val(tree, key);
  if (s == NULL) return SCR_ERR_NOENT;
  long long v;
  if (!scr_kvtree_parse_int(s, &v)) return SCR_ERR_INVALID;
  if (value) *value = v;
  return SCR_SUCCESS;
}

int scr_kvtree_get_uint64(const scr_kvtree* tree, const char* key, uint64_t* value)
{
  const char* s = scr_kvtree_get_val(tree, key);
  if (s == NULL) return SCR_ERR_NOENT;
  /* strtoull would quietly wrap "-1" to 2^64-1 */
  if (*s < '0' || *s > '9') return SCR_ERR_INVALID;
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return SCR_ERR_INVALID;
  if (value) *value = (uint64_t) v;
  return SCR_SUCCESS;
}

int scr_kvtree_get_double(const scr_kvtree* tree, const char* key, double* value)
{
  const char* s = scr_kvtree_get_val(tree, key);
  if (s == NULL) return SCR_ERR_NOENT;
  char* end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno == ERANGE || end == s || *end != '\0') return SCR_ERR_INVALID;
  if (value) *value = v;
  return SCR_SUCCESS;
}

/* ---- multi-valued keys ---- */

scr_kvtree* scr_kvtree_get_kv(const scr_kvtree* tree, const char* key, const char* value)
{
  return scr_kvtree_get(scr_kvtree_get(tree, key), value);
}

scr_kvtree* scr_kvtree_get_kv_int(const scr_kvtree* tree, const char* key, long long value)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%lld", value);
  return scr_kvtree_get_kv(tree, key, buf);
}

scr_kvtree* scr_kvtree_add_kv(scr_kvtree* tree, const char* key, const char* value)
{
  if (value == NULL) return NULL;
  return scr_kvtree_get_or_create(scr_kvtree_get_or_create(tree, key), value);
}

scr_kvtree* scr_kvtree_add_kv_int(scr_kvtree* tree, const char* key, long long value)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%lld", value);
  return scr_kvtree_add_kv(tree, key, buf);
}

int scr_kvtree_unset_kv(scr_kvtree* tree, const char* key, const char* value)
{
  scr_kvtree* sub = scr_kvtree_get(tree, key);
  if (sub == NULL) return SCR_SUCCESS;
  scr_kvtree_unset(sub, value);
  if (sub->count == 0) scr_kvtree_unset(tree, key);
  return SCR_SUCCESS;
}

int scr_kvtree_unset_kv_int(scr_kvtree* tree, const char* key, long long value)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%lld", value);
  return scr_kvtree_unset_kv(tree, key, buf);
}

/* ---- whole-tree operations ---- */

scr_kvtree* scr_kvtree_copy(const scr_kvtree* tree)
{
  scr_kvtree* copy = scr_kvtree_new();
  if (tree == NULL) return copy;
  for (scr_kvtree_elem* e = tree->first; e; e = e->next) {
    scr_kvtree_append(copy, e->key, e->key_len, e->hash, scr_kvtree_copy(e->tree));
  }
  return copy;
}

int scr_kvtree_merge(scr_kvtree* dst, const scr_kvtree* src)
{
  if (dst == NULL) return SCR_ERR_INVALID;
  if (src == NULL || src == dst) return SCR_SUCCESS;
  for (scr_kvtree_elem* e = src->first; e; e = e->next) {
    scr_kvtree_elem* d = scr_kvtree_find(dst, e->key, e->key_len, e->hash);
    if (d) scr_kvtree_merge(d->tree, e->tree);
    else scr_kvtree_append(dst, e->key, e->key_len, e->hash, scr_kvtree_copy(e->tree));
  }
  return SCR_SUCCESS;
}

static void scr_kvtree_merge_move(scr_kvtree* dst, scr_kvtree* src)
{
  /* same result as merge, but subtrees missing from dst are moved, not copied,
   * which keeps reading a large file into a non-empty tree cheap */
  scr_kvtree_elem* e = src->first;
  while (e) {
    scr_kvtree_elem* next = e->next;
    scr_kvtree_elem* d = scr_kvtree_find(dst, e->key, e->key_len, e->hash);
    if (d) {
      scr_kvtree_merge_move(d->tree, e->tree);
    } else {
      scr_kvtree_unlink(src, e);
      scr_kvtree_link(dst, e);
    }
    e = next;
  }
  scr_kvtree_clear(src);
}

struct scr_kvtree_sort_item {
  scr_kvtree_elem* elem;
  long long value;
  int is_number;
};

static int scr_kvtree_cmp_str_up(const void* a, const void* b)
{
  const struct scr_kvtree_sort_item* x = a;
  const struct scr_kvtree_sort_item* y = b;
  return strcmp(x->elem->key, y->elem->key);
}

static int scr_kvtree_cmp_str_down(const void* a, const void* b)
{
  return scr_kvtree_cmp_str_up(b, a);
}

/* numbers first in the requested order; keys that are not numbers go last in
 * string order, and "1" vs "01" ties break by string so the order is total */
static int scr_kvtree_cmp_int(const void* a, const void* b, int direction)
{
  const struct scr_kvtree_sort_item* x = a;
  const struct scr_kvtree_sort_item* y = b;
  if (x->is_number != y->is_number) return x->is_number ? -1 : 1;
  if (x->is_number && x->value != y->value) {
    int c = x->value < y->value ? -1 : 1;
    return direction == SCR_KVTREE_SORT_DESCENDING ? -c : c;
  }
  return strcmp(x->elem->key, y->elem->key);
}

static int scr_kvtree_cmp_int_up(const void* a, const void* b)
{
  return scr_kvtree_cmp_int(a, b, SCR_KVTREE_SORT_ASCENDING);
}

static int scr_kvtree_cmp_int_down(const void* a, const void* b)
{
  return scr_kvtree_cmp_int(a, b, SCR_KVTREE_SORT_DESCENDING);
}

static void scr_kvtree_sort_with(scr_kvtree* tree, int numeric, int direction)
{
  if (tree == NULL || tree->count < 2) return;
  struct scr_kvtree_sort_item* items = scr_kvtree_alloc(tree->count * sizeof(*items));
  size_t n = 0;
  for (scr_kvtree_elem* e = tree->first; e; e = e->next) {
    items[n].elem = e;
    items[n].value = 0;
    items[n].is_number = numeric ? scr_kvtree_parse_int(e->key, &items[n].value) : 0;
    n++;
  }
  int (*cmp)(const void*, const void*);
  if (numeric) cmp = direction == SCR_KVTREE_SORT_DESCENDING ? scr_kvtree_cmp_int_down : scr_kvtree_cmp_int_up;
  else cmp = direction == SCR_KVTREE_SORT_DESCENDING ? scr_kvtree_cmp_str_down : scr_kvtree_cmp_str_up;
  qsort(items, n, sizeof(*items), cmp);
  scr_kvtree_changed();
  /* relink only: the index maps keys to elements, which did not move */
  for (size_t i = 0; i < n; i++) {
    items[i].elem->prev = i > 0 ? items[i - 1].elem : NULL;
    items[i].elem->next = i + 1 < n ? items[i + 1].elem : NULL;
  }
  tree->first = items[0].elem;
  tree->last = items[n - 1].elem;
  free(items);
}

void scr_kvtree_sort(scr_kvtree* tree, int direction)
{
  scr_kvtree_sort_with(tree, 0, direction);
}

void scr_kvtree_sort_int(scr_kvtree* tree, int direction)
{
  scr_kvtree_sort_with(tree, 1, direction);
}

static int scr_kvtree_extreme_int_key(const scr_kvtree* tree, long long* key, int want_max)
{
  int found = 0;
  long long best = 0;
  for (scr_kvtree_elem* e = tree ? tree->first : NULL; e; e = e->next) {
    long long v;
    if (!scr_kvtree_parse_int(e->key, &v)) continue;
    if (!found || (want_max ? v > best : v < best)) best = v;
    found = 1;
  }
  if (!found) return SCR_ERR_NOENT;
  if (key) *key = best;
  return SCR_SUCCESS;
}

int scr_kvtree_max_int_key(const scr_kvtree* tree, long long* key)
{
  return scr_kvtree_extreme_int_key(tree, key, 1);
}

int scr_kvtree_min_int_key(const scr_kvtree* tree, long long* key)
{
  return scr_kvtree_extreme_int_key(tree, key, 0);
}

/* ---- iteration ---- */

scr_kvtree_elem* scr_kvtree_first(const scr_kvtree* tree)
{
  return tree ? tree->first : NULL;
}

scr_kvtree_elem* scr_kvtree_next(const scr_kvtree_elem* elem)
{
  return elem ? elem->next : NULL;
}

const char* scr_kvtree_elem_key(const scr_kvtree_elem* elem)
{
  return elem ? elem->key : NULL;
}

long long scr_kvtree_elem_key_int(const scr_kvtree_elem* elem)
{
  long long v = 0;
  if (elem == NULL || !scr_kvtree_parse_int(elem->key, &v)) return 0;
  return v;
}

scr_kvtree* scr_kvtree_elem_tree(const scr_kvtree_elem* elem)
{
  return elem ? elem->tree : NULL;
}

const char* scr_kvtree_elem_val(const scr_kvtree_elem* elem)
{
  if (elem == NULL || elem->tree == NULL || elem->tree->first == NULL) return NULL;
  return elem->tree->first->key;
}

/* ---- packed form: big-endian uint32 count, then per child a uint32 key
 * length, the key bytes (no terminator) and the child's packed tree ---- */

static void scr_kvtree_put_u32(unsigned char* p, uint32_t v)
{
  p[0] = (unsigned char) (v >> 24);
  p[1] = (unsigned char) (v >> 16);
  p[2] = (unsigned char) (v >> 8);
  p[3] = (unsigned char) v;
}

static uint32_t scr_kvtree_get_u32(const unsigned char* p)
{
  return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

size_t scr_kvtree_pack_size(const scr_kvtree* tree)
{
  size_t size = 4;
  for (scr_kvtree_elem* e = tree ? tree->first : NULL; e; e = e->next) {
    size += 4 + e->key_len + scr_kvtree_pack_size(e->tree);
  }
  return size;
}

size_t scr_kvtree_pack(const scr_kvtree* tree, void* buf)
{
  unsigned char* p = buf;
  size_t count = tree ? tree->count : 0;
  scr_kvtree_put_u32(p, (uint32_t) count);
  size_t pos = 4;
  for (scr_kvtree_elem* e = tree ? tree->first : NULL; e; e = e->next) {
    scr_kvtree_put_u32(p + pos, (uint32_t) e->key_len);
    pos += 4;
    memcpy(p + pos, e->key, e->key_len);
    pos += e->key_len;
    pos += scr_kvtree_pack(e->tree, p + pos);
  }
  return pos;
}

static int scr_kvtree_unpack_node(const unsigned char* buf, size_t len, size_t* pos,
                                  scr_kvtree* tree, int depth)
{
  if (depth > SCR_KVTREE_MAX_DEPTH) return SCR_ERR_CORRUPT;
  if (len - *pos < 4) return SCR_ERR_CORRUPT;
  uint32_t count = scr_kvtree_get_u32(buf + *pos);
  *pos += 4;
  /* each child needs at least 8 bytes, so a huge count in a short buffer is
   * rejected before any work is done */
  if ((uint64_t) count * 8 > len - *pos) return SCR_ERR_CORRUPT;
  for (uint32_t i = 0; i < count; i++) {
    if (len - *pos < 4) return SCR_ERR_CORRUPT;
    uint32_t key_len = scr_kvtree_get_u32(buf + *pos);
    *pos += 4;
    if (key_len > len - *pos) return SCR_ERR_CORRUPT;
    const char* key = (const char*) buf + *pos;
    /* an embedded NUL would make the key differ from what C string callers see */
    if (memchr(key, '\0', key_len) != NULL) return SCR_ERR_CORRUPT;
    *pos += key_len;
    uint32_t hash = scr_kvtree_hash(key, key_len);
    scr_kvtree_elem* elem = scr_kvtree_find(tree, key, key_len, hash);
    if (elem == NULL) elem = scr_kvtree_append(tree, key, key_len, hash, scr_kvtree_new());
    int rc = scr_kvtree_unpack_node(buf, len, pos, elem->tree, depth + 1);
    if (rc != SCR_SUCCESS) return rc;
  }
  return SCR_SUCCESS;
}

int scr_kvtree_unpack(const void* buf, size_t len, scr_kvtree* tree, size_t* used)
{
  if (tree == NULL || (buf == NULL && len > 0)) return SCR_ERR_INVALID;
  /* unpack into a fresh tree so that malformed input leaves tree untouched */
  scr_kvtree* fresh = tree->count == 0 ? tree : scr_kvtree_new();
  size_t pos = 0;
  int rc = scr_kvtree_unpack_node(buf, len, &pos, fresh, 0);
  if (rc != SCR_SUCCESS) {
    if (fresh == tree) scr_kvtree_clear(tree);
    else scr_kvtree_delete(&fresh);
    return rc;
  }
  if (fresh != tree) {
    scr_kvtree_merge_move(tree, fresh);
    scr_kvtree_delete(&fresh);
  }
  if (used) *used = pos;
  return SCR_SUCCESS;
}

/* ---- text ---- */

static void scr_kvtree_print_level(const scr_kvtree* tree, FILE* out, int indent)
{
  for (scr_kvtree_elem* e = tree->first; e; e = e->next) {
    const scr_kvtree* sub = e->tree;
    if (sub->count == 1 && sub->first->tree->count == 0) {
      fprintf(out, "%*s%s = %s\n", indent, "", e->key, sub->first->key);
    } else {
      fprintf(out, "%*s%s\n", indent, "", e->key);
      scr_kvtree_print_level(sub, out, indent + 2);
    }
  }
}

void scr_kvtree_print(const scr_kvtree* tree, FILE* out)
{
  if (tree == NULL || out == NULL) return;
  scr_kvtree_print_level(tree, out, 0);
}
