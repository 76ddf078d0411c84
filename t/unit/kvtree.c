/* kvtree.c - unit tests of the key-value tree: access, merge, sort, the packed
 * form against hostile input, and the file format's corruption detection. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_io.h"
#include "scr_kvtree.h"
#include "tap.h"

static char scratch[] = "/tmp/scr-kvtree-test.XXXXXX";

static char* scratch_path(const char* name)
{
  static char buf[4096];
  snprintf(buf, sizeof(buf), "%s/%s", scratch, name);
  return buf;
}

/* keys of tree in iteration order, comma-separated */
static const char* keys_of(const scr_kvtree* tree)
{
  static char buf[1024];
  buf[0] = '\0';
  for (scr_kvtree_elem* e = scr_kvtree_first(tree); e; e = scr_kvtree_next(e)) {
    if (buf[0]) strcat(buf, ",");
    strcat(buf, scr_kvtree_elem_key(e));
  }
  return buf;
}

static void test_set_get_unset(void)
{
  scr_kvtree* t = scr_kvtree_new();
  ok(scr_kvtree_get(t, "A") == NULL, "get of a missing key is NULL");
  scr_kvtree_set_kv(t, "A", "1");
  scr_kvtree_set_kv_int(t, "B", -42);
  scr_kvtree_set_kv_uint64(t, "C", UINT64_MAX);
  scr_kvtree_set_kv_double(t, "D", 0.1);
  scr_kvtree_set_kvf(t, "E", "%s-%d", "x", 7);
  is_str(scr_kvtree_get_val(t, "A"), "1", "set_kv then get_val");
  long long i = 0;
  is_int(scr_kvtree_get_int(t, "B", &i), SCR_SUCCESS, "get_int of a number succeeds");
  is_int(i, -42, "get_int returns the stored value");
  uint64_t u = 0;
  is_int(scr_kvtree_get_uint64(t, "C", &u), SCR_SUCCESS, "get_uint64 succeeds");
  ok(u == UINT64_MAX, "uint64 max round-trips");
  double d = 0;
  is_int(scr_kvtree_get_double(t, "D", &d), SCR_SUCCESS, "get_double succeeds");
  ok(d == 0.1, "double round-trips bit-exactly");
  is_str(scr_kvtree_get_val(t, "E"), "x-7", "set_kvf formats the value");
  is_int(scr_kvtree_get_int(t, "E", &i), SCR_ERR_INVALID, "get_int of a non-number is INVALID");
  is_int(scr_kvtree_get_int(t, "Z", &i), SCR_ERR_NOENT, "get_int of a missing key is NOENT");
  scr_kvtree_set_kv_int(t, "B", -1);
  is_int(scr_kvtree_get_uint64(t, "B", &u), SCR_ERR_INVALID, "get_uint64 refuses a negative value");
  scr_kvtree_set_kv(t, "A", "2");
  is_int(scr_kvtree_size(scr_kvtree_get(t, "A")), 1, "set_kv replaces the old value");
  is_str(keys_of(t), "A,B,C,D,E", "replacing keeps insertion order");
  scr_kvtree_unset(t, "C");
  is_str(keys_of(t), "A,B,D,E", "unset removes the key");
  is_int(scr_kvtree_unset(t, "nothere"), SCR_SUCCESS, "unset of a missing key succeeds");
  scr_kvtree_clear(t);
  is_int(scr_kvtree_size(t), 0, "clear removes every child");
  scr_kvtree_delete(&t);
  ok(t == NULL, "delete sets the pointer to NULL");
  scr_kvtree_delete(&t);
}

static void test_multi_valued(void)
{
  scr_kvtree* t = scr_kvtree_new();
  scr_kvtree_set_kv(scr_kvtree_add_kv_int(t, "RANK", 0), "FILES", "2");
  scr_kvtree_add_kv_int(t, "RANK", 1);
  scr_kvtree_add_kv(t, "RANK", "0"); /* existing: must not reset its subtree */
  is_int(scr_kvtree_size(scr_kvtree_get(t, "RANK")), 2, "add_kv keeps other values");
  is_str(scr_kvtree_get_val(scr_kvtree_get_kv_int(t, "RANK", 0), "FILES"), "2",
         "add_kv of an existing value keeps its subtree");
  scr_kvtree_unset_kv_int(t, "RANK", 0);
  ok(scr_kvtree_get_kv(t, "RANK", "0") == NULL && scr_kvtree_get_kv(t, "RANK", "1"),
     "unset_kv removes only that value");
  scr_kvtree_unset_kv(t, "RANK", "1");
  ok(scr_kvtree_get(t, "RANK") == NULL, "unset_kv of the last value removes the key");
  scr_kvtree_delete(&t);
}

static void test_merge_copy_sort(void)
{
  scr_kvtree* a = scr_kvtree_new();
  scr_kvtree* b = scr_kvtree_new();
  scr_kvtree_set_kv(scr_kvtree_add_kv(a, "FILE", "x"), "SIZE", "1");
  scr_kvtree_set_kv(scr_kvtree_add_kv(b, "FILE", "x"), "CRC", "0x1");
  scr_kvtree_add_kv(b, "FILE", "y");
  scr_kvtree_merge(a, b);
  ok(scr_kvtree_get_kv(a, "FILE", "y") != NULL, "merge adds missing keys");
  scr_kvtree* x = scr_kvtree_get_kv(a, "FILE", "x");
  ok(scr_kvtree_get_val(x, "SIZE") && scr_kvtree_get_val(x, "CRC"), "merge is deep");
  is_int(scr_kvtree_size(scr_kvtree_get(b, "FILE")), 2, "merge leaves the source unchanged");

  scr_kvtree* c = scr_kvtree_copy(a);
  scr_kvtree_unset(a, "FILE");
  ok(scr_kvtree_get_kv(c, "FILE", "y") != NULL, "copy is independent of the original");
  scr_kvtree_delete(&a);
  scr_kvtree_delete(&b);
  scr_kvtree_delete(&c);

  scr_kvtree* s = scr_kvtree_new();
  const char* keys[] = {"10", "b", "2", "-3", "a", "1"};
  for (int i = 0; i < 6; i++) scr_kvtree_get_or_create(s, keys[i]);
  is_str(keys_of(s), "10,b,2,-3,a,1", "children iterate in insertion order");
  scr_kvtree_sort(s, SCR_KVTREE_SORT_ASCENDING);
  is_str(keys_of(s), "-3,1,10,2,a,b", "string sort ascending");
  scr_kvtree_sort(s, SCR_KVTREE_SORT_DESCENDING);
  is_str(keys_of(s), "b,a,2,10,1,-3", "string sort descending");
  scr_kvtree_sort_int(s, SCR_KVTREE_SORT_ASCENDING);
  is_str(keys_of(s), "-3,1,2,10,a,b", "integer sort ascending puts non-numbers last");
  scr_kvtree_sort_int(s, SCR_KVTREE_SORT_DESCENDING);
  is_str(keys_of(s), "10,2,1,-3,a,b", "integer sort descending puts non-numbers last");
  long long k = 0;
  scr_kvtree_max_int_key(s, &k);
  is_int(k, 10, "max_int_key ignores non-numbers");
  scr_kvtree_min_int_key(s, &k);
  is_int(k, -3, "min_int_key finds the smallest");
  ok(scr_kvtree_get(s, "a") != NULL, "lookup still works after sorting");
  scr_kvtree_clear(s);
  scr_kvtree_get_or_create(s, "x");
  is_int(scr_kvtree_max_int_key(s, &k), SCR_ERR_NOENT, "max_int_key without numbers is NOENT");
  scr_kvtree_delete(&s);
}

static void test_wide_node(void)
{
  /* large enough to need the index, with removals to exercise its deletion */
  scr_kvtree* t = scr_kvtree_new();
  char key[32];
  double start = (double) clock() / CLOCKS_PER_SEC;
  for (int i = 0; i < 100000; i++) scr_kvtree_set_kv_int(scr_kvtree_add_kv_int(t, "RANK", i), "FILES", i % 7);
  scr_kvtree* ranks = scr_kvtree_get(t, "RANK");
  for (int i = 0; i < 100000; i += 3) scr_kvtree_unset_kv_int(t, "RANK", i);
  int found = 0, wrong = 0;
  for (int i = 0; i < 100000; i++) {
    snprintf(key, sizeof(key), "%d", i);
    scr_kvtree* r = scr_kvtree_get(ranks, key);
    if (i % 3 == 0) wrong += r != NULL;
    else if (r) found++;
  }
  is_int(found, 66666, "every remaining child of a 100k-wide node is found");
  is_int(wrong, 0, "no removed child is found");
  is_int(scr_kvtree_elem_key_int(scr_kvtree_first(ranks)), 1, "order survives removals");

  size_t size = scr_kvtree_pack_size(t);
  unsigned char* buf = malloc(size);
  is_int(scr_kvtree_pack(t, buf), size, "pack writes pack_size bytes");
  scr_kvtree* back = scr_kvtree_new();
  size_t used = 0;
  is_int(scr_kvtree_unpack(buf, size, back, &used), SCR_SUCCESS, "unpack of a wide tree succeeds");
  is_int(used, size, "unpack consumes the whole buffer");
  size_t size2 = scr_kvtree_pack_size(back);
  unsigned char* buf2 = malloc(size2);
  scr_kvtree_pack(back, buf2);
  ok(size == size2 && memcmp(buf, buf2, size) == 0, "pack/unpack/pack is byte-identical");
  double elapsed = (double) clock() / CLOCKS_PER_SEC - start;
  ok(elapsed < 10.0, "100k children built, searched and packed in %.2f s", elapsed);
  free(buf);
  free(buf2);
  scr_kvtree_delete(&back);
  scr_kvtree_delete(&t);
}

static void test_index_against_reference(void)
{
  /* random inserts and removals over a small key space keep the index crowded,
   * so probe chains wrap around and removals must shift entries back */
  enum { KEYS = 300, STEPS = 200000 };
  char present[KEYS] = {0};
  scr_kvtree* t = scr_kvtree_new();
  char key[16];
  int mismatches = 0;
  srand(12345);
  for (int step = 0; step < STEPS; step++) {
    int k = rand() % KEYS;
    snprintf(key, sizeof(key), "k%d", k);
    if (rand() % 2) {
      scr_kvtree_get_or_create(t, key);
      present[k] = 1;
    } else {
      scr_kvtree_unset(t, key);
      present[k] = 0;
    }
    int probe = rand() % KEYS;
    snprintf(key, sizeof(key), "k%d", probe);
    if ((scr_kvtree_get(t, key) != NULL) != present[probe]) mismatches++;
  }
  int count = 0;
  for (int k = 0; k < KEYS; k++) count += present[k];
  is_int(mismatches, 0, "lookups agree with a reference set under random inserts and removals");
  is_int(scr_kvtree_size(t), count, "size agrees with the reference set");
  scr_kvtree_delete(&t);
}

static scr_kvtree* sample_tree(void)
{
  scr_kvtree* t = scr_kvtree_new();
  scr_kvtree* f = scr_kvtree_add_kv(scr_kvtree_add_kv_int(t, "RANK", 0), "FILE", "foo_0.txt");
  scr_kvtree_set_kv_int(f, "SIZE", 1024);
  scr_kvtree_set_kv_int(f, "COMPLETE", 1);
  scr_kvtree_set_kv_int(scr_kvtree_add_kv_int(t, "RANK", 0), "FILES", 1);
  scr_kvtree_set_kv(t, "EMPTY", "");
  scr_kvtree_get_or_create(t, "");
  return t;
}

static void test_unpack_hostile(void)
{
  scr_kvtree* t = sample_tree();
  size_t size = scr_kvtree_pack_size(t);
  unsigned char* buf = malloc(size);
  scr_kvtree_pack(t, buf);
  int failures = 0;
  for (size_t len = 0; len < size; len++) {
    /* an exact-size copy lets AddressSanitizer see any read past the end */
    unsigned char* cut = malloc(len ? len : 1);
    memcpy(cut, buf, len);
    scr_kvtree* back = scr_kvtree_new();
    if (scr_kvtree_unpack(cut, len, back, NULL) == SCR_ERR_CORRUPT && scr_kvtree_size(back) == 0) failures++;
    scr_kvtree_delete(&back);
    free(cut);
  }
  is_int(failures, size, "every truncation of a packed tree is CORRUPT and leaves the tree empty");

  scr_kvtree* keep = scr_kvtree_new();
  scr_kvtree_set_kv(keep, "KEEP", "1");
  is_int(scr_kvtree_unpack(buf, size - 1, keep, NULL), SCR_ERR_CORRUPT, "truncated unpack into a non-empty tree fails");
  is_str(keys_of(keep), "KEEP", "failed unpack leaves an existing tree untouched");
  is_int(scr_kvtree_unpack(buf, size, keep, NULL), SCR_SUCCESS, "unpack merges into a non-empty tree");
  is_str(keys_of(keep), "KEEP,RANK,EMPTY,", "merged unpack appends the new keys");
  scr_kvtree_delete(&keep);

  /* a chain deeper than any real file: every level has one empty-named child */
  size_t depth = 100000;
  unsigned char* deep = calloc(depth * 8 + 4, 1);
  for (size_t i = 0; i < depth; i++) deep[i * 8 + 3] = 1;
  scr_kvtree* back = scr_kvtree_new();
  is_int(scr_kvtree_unpack(deep, depth * 8 + 4, back, NULL), SCR_ERR_CORRUPT, "very deep nesting is refused");
  free(deep);

  unsigned char huge[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
  is_int(scr_kvtree_unpack(huge, sizeof(huge), back, NULL), SCR_ERR_CORRUPT, "a huge child count is refused");
  unsigned char nul[10] = {0, 0, 0, 1, 0, 0, 0, 2, 'a', 0};
  is_int(scr_kvtree_unpack(nul, sizeof(nul), back, NULL), SCR_ERR_CORRUPT, "a key with an embedded NUL is refused");
  scr_kvtree_delete(&back);
  free(buf);
  scr_kvtree_delete(&t);
}

static int trees_equal(const scr_kvtree* a, const scr_kvtree* b)
{
  size_t sa = scr_kvtree_pack_size(a), sb = scr_kvtree_pack_size(b);
  if (sa != sb) return 0;
  unsigned char* pa = malloc(sa);
  unsigned char* pb = malloc(sb);
  scr_kvtree_pack(a, pa);
  scr_kvtree_pack(b, pb);
  int same = memcmp(pa, pb, sa) == 0;
  free(pa);
  free(pb);
  return same;
}

static void test_files(void)
{
  scr_kvtree* t = sample_tree();
  char* path = strdup(scratch_path("tree.scr"));
  is_int(scr_kvtree_write_file(path, t), SCR_SUCCESS, "write_file succeeds");
  struct stat st;
  stat(path, &st);
  is_int(st.st_mode & 0777, 0600, "written file has mode 0600");
  scr_kvtree* back = scr_kvtree_new();
  is_int(scr_kvtree_read_file(path, back), SCR_SUCCESS, "read_file succeeds");
  ok(trees_equal(t, back), "file round trip gives the same tree");
  scr_kvtree_delete(&back);

  char* data = NULL;
  size_t len = 0;
  scr_io_read_file(path, &data, &len);
  int detected = 0, truncated = 0;
  char* bad = strdup(scratch_path("bad.scr"));
  for (size_t i = 0; i < len; i++) {
    for (int pass = 0; pass < 2; pass++) {
      int fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (pass == 0) {
        data[i] ^= 0x10;
        scr_io_write_full(fd, data, len);
        data[i] ^= 0x10;
      } else {
        scr_io_write_full(fd, data, i);
      }
      close(fd);
      scr_kvtree* r = scr_kvtree_new();
      int rc = scr_kvtree_read_file(bad, r);
      if (pass == 0) detected += rc == SCR_ERR_CORRUPT;
      else truncated += rc == SCR_ERR_CORRUPT;
      scr_kvtree_delete(&r);
    }
  }
  is_int(detected, len, "a flipped bit at any offset of the file is CORRUPT");
  is_int(truncated, len, "a file truncated at any length is CORRUPT");

  back = scr_kvtree_new();
  is_int(scr_kvtree_read_file(scratch_path("missing.scr"), back), SCR_ERR_NOENT, "a missing file is NOENT");
  scr_kvtree_set_kv(back, "X", "1");
  is_int(scr_kvtree_read_file_if_exists(scratch_path("missing.scr"), back), SCR_SUCCESS,
         "read_file_if_exists of a missing file succeeds");
  is_str(keys_of(back), "X", "read_file_if_exists of a missing file leaves the tree alone");
  scr_kvtree_delete(&back);

  /* occupy the temp name with a directory so the atomic write must fail */
  char tmpname[4200];
  snprintf(tmpname, sizeof(tmpname), "%s.tmp.%ld", path, (long) getpid());
  mkdir(tmpname, 0700);
  scr_kvtree* other = scr_kvtree_new();
  scr_kvtree_set_kv(other, "NEW", "1");
  ok(scr_kvtree_write_file(path, other) != SCR_SUCCESS, "write_file fails when the temp name is blocked");
  back = scr_kvtree_new();
  is_int(scr_kvtree_read_file(path, back), SCR_SUCCESS, "old file is still readable after a failed write");
  ok(trees_equal(t, back), "old file is intact after a failed write");
  rmdir(tmpname);
  scr_kvtree_delete(&back);

  is_int(scr_kvtree_write_file(path, other), SCR_SUCCESS, "write_file replaces an existing file");
  back = scr_kvtree_new();
  scr_kvtree_read_file(path, back);
  ok(trees_equal(other, back), "replaced file holds the new tree");
  ok(access(tmpname, F_OK) != 0, "no temp file is left behind");
  scr_kvtree_delete(&back);
  scr_kvtree_delete(&other);

  free(data);
  free(bad);
  free(path);
  scr_kvtree_delete(&t);
}

static void test_print(void)
{
  scr_kvtree* t = sample_tree();
  char* out = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&out, &len);
  scr_kvtree_print(t, f);
  fclose(f);
  is_str(out,
         "RANK\n"
         "  0\n"
         "    FILE\n"
         "      foo_0.txt\n"
         "        SIZE = 1024\n"
         "        COMPLETE = 1\n"
         "    FILES = 1\n"
         "EMPTY = \n"
         "\n",
         "print indents by two and condenses single leaves to KEY = VALUE");
  free(out);
  scr_kvtree_delete(&t);
}

int main(void)
{
  if (mkdtemp(scratch) == NULL) {
    printf("Bail out! cannot create scratch directory: %s\n", strerror(errno));
    return 1;
  }
  test_set_get_unset();
  test_multi_valued();
  test_merge_copy_sort();
  test_wide_node();
  test_index_against_reference();
  test_unpack_hostile();
  test_files();
  test_print();
  scr_io_remove_tree(scratch);
  return tap_done();
}
