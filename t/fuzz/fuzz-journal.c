/* fuzz-journal.c - libFuzzer target: random bytes as a filemap journal (records of routed files)
 * merged into a filemap, which is made by the input or read from it as a packed tree. */
#include "config.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_io.h"
#include "scr_kvtree.h"
#include "scr_dataset.h"
#include "scr_filemap.h"
#include "scr_filemap_journal.h"

/* Input: byte 0: bit 0 says where the filemap comes from (0: datasets 0-3,
 * complete where bits 4-7 say; 1: a packed tree, its length in bytes 1-2,
 * then its bytes); bits 1-2 the rank. The rest is the journal file, which
 * the merge opens by name (O_NOFOLLOW: a real file, not /proc/self/fd).
 * Checks besides the sanitizers': the merge adds exactly the whole records
 * of incomplete datasets the map has, not yet listed, each once; the
 * rank's FILES count is its number of files after a merge; a second merge
 * adds nothing; records the encoder writes read back as written. (FILES
 * is checked in maps made here only: a packed map may say anything.) */

static char journal[128];

int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerInitialize(int* argc, char*** argv)
{
  (void) argc;
  (void) argv;
  const char* tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  static char dir[96];
  snprintf(dir, sizeof(dir), "%s/fuzz-journal.XXXXXX", tmp);
  if (!mkdtemp(dir)) abort();
  char* path = scr_filemap_journal_path(dir, 0);
  snprintf(journal, sizeof(journal), "%s", path);
  free(path);
  return 0;
}

static void fail(const char* what)
{
  fprintf(stderr, "fuzz-journal: %s\n", what);
  abort();
}

static void write_journal(const unsigned char* bytes, size_t n)
{
  int fd = open(journal, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || scr_io_write_full(fd, bytes, n) != (ssize_t) n) abort();
  close(fd);
}

/* what the merge should add: whole records (four NUL-ended fields), up to
 * the first one cut short, of datasets that are not complete (one the map
 * lacks began after the filemap was written, and is added), whose cache path
 * the rank does not list yet */
static int expected(const unsigned char* bytes, size_t n, int rank, const scr_kvtree* map)
{
  scr_kvtree* seen = scr_kvtree_new();
  int count = 0;
  for (size_t at = 0; at < n;) {
    const char* field[4];
    size_t p = at;
    int k;
    for (k = 0; k < 4; k++) {
      const unsigned char* end = p < n ? memchr(bytes + p, '\0', n - p) : NULL;
      if (!end) break;
      field[k] = (const char*) bytes + p;
      p = (size_t) (end - bytes) + 1;
    }
    if (k < 4) break;
    at = p;
    int id = atoi(field[0]);
    scr_kvtree* dset = scr_filemap_get_dataset(map, id);
    if (dset && scr_dataset_is_complete(scr_kvtree_get(dset, "DSETDESC"))) continue;
    char key[32];
    snprintf(key, sizeof(key), "%d", id);
    scr_kvtree* files = scr_kvtree_get_or_create(seen, key);
    if (scr_kvtree_get(scr_filemap_get_files(map, id, rank), field[1]) || scr_kvtree_get(files, field[1])) continue;
    scr_kvtree_get_or_create(files, field[1]);
    count++;
  }
  scr_kvtree_delete(&seen);
  return count;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size < 1 || size > (1 << 20)) return 0;
  int rank = (data[0] >> 1) & 3;
  const unsigned char* rest = data + 1;
  size_t n = size - 1;
  scr_kvtree* map = scr_kvtree_new();
  if (data[0] & 1) {
    if (n < 2) {
      scr_kvtree_delete(&map);
      return 0;
    }
    size_t length = (size_t) rest[0] << 8 | rest[1];
    if (length > n - 2) length = n - 2;
    scr_kvtree_unpack(rest + 2, length, map, NULL);
    rest += 2 + length;
    n -= 2 + length;
  } else {
    for (int id = 0; id < 4; id++) {
      scr_kvtree* dset = scr_filemap_add_dataset(map, id);
      scr_kvtree* desc = scr_dataset_new(id, "ckpt", SCR_FLAG_CHECKPOINT, id, NULL, NULL, NULL);
      if (data[0] & (16 << id)) scr_dataset_set_complete(desc, 1, 0, 0);
      scr_kvtree_set(dset, "DSETDESC", desc);
    }
    scr_filemap_add_file(map, 1, rank, "/cache/1/a", "/p/a", "a");
  }

  write_journal(rest, n);
  int want = expected(rest, n, rank, map);
  int merged = scr_filemap_journal_merge(journal, rank, map);
  if (merged != want) {
    fprintf(stderr, "merged %d, expected %d\n", merged, want);
    fail("the merge added another number of files");
  }
  if (merged > 0 && !(data[0] & 1)) {
    /* every dataset the merge touched counts the rank's files right */
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(map, "DSET")); e; e = scr_kvtree_next(e)) {
      int id = (int) scr_kvtree_elem_key_int(e);
      scr_kvtree* files = scr_filemap_get_files(map, id, rank);
      if (files && scr_filemap_get_file_count(map, id, rank) < scr_kvtree_size(files) &&
          !scr_dataset_is_complete(scr_kvtree_get(scr_kvtree_elem_tree(e), "DSETDESC")))
        fail("FILES is below the number of files after a merge");
    }
  }
  if (scr_filemap_journal_merge(journal, rank, map) != 0) fail("a second merge added files");

  /* the encoder's records, appended whole, read back as written */
  if (n > 0 && memchr(rest, '\0', n) == NULL && n < 4096) {
    char text[4096];
    memcpy(text, rest, n);
    text[n] = '\0';
    int id = (int) (n % 4);
    size_t need = scr_filemap_journal_encode(NULL, 0, id, text, "/orig", "rel");
    char* record = malloc(need);
    if (scr_filemap_journal_encode(record, need, id, text, "/orig", "rel") != need) fail("encode changed its length");
    write_journal((const unsigned char*) record, need);
    scr_kvtree* fresh = scr_kvtree_new();
    scr_filemap_add_dataset(fresh, id);
    if (scr_filemap_journal_merge(journal, 0, fresh) != 1) fail("an encoded record did not merge");
    scr_kvtree* meta = scr_kvtree_get(scr_filemap_get_files(fresh, id, 0), text);
    const char* orig = scr_kvtree_get_val(meta, "ORIG");
    const char* rel = scr_kvtree_get_val(meta, "RELPATH");
    if (!orig || strcmp(orig, "/orig") || !rel || strcmp(rel, "rel")) fail("an encoded record read back otherwise");
    scr_kvtree_delete(&fresh);
    free(record);
  }
  scr_kvtree_delete(&map);
  return 0;
}
