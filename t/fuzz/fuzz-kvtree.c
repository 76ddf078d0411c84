/* fuzz-kvtree.c - libFuzzer target: random bytes as SCR's key-value files (filemap, index,
 * summary, rank2file, flush, halt, transfer), read through the readers the library uses. */
#include "config.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_io.h"
#include "scr_kvtree.h"
#include "scr_dataset.h"
#include "scr_filemap.h"
#include "scr_filemap_journal.h"
#include "scr_flush_file.h"
#include "scr_halt_file.h"
#include "scr_index_file.h"
#include "scr_summary_file.h"
#include "scr_transfer_file.h"

/* Input: byte 0 says how the rest becomes a file. Even: the bytes are the
 * file as they are (a damaged file: the header and CRC checks). Odd: they
 * are the payload, given a correct header and CRC, so that the tree
 * decoder and what each reader does with the tree are reached too.
 * Every file name a reader opens is a hard link of one file, so a single
 * write serves all of them. Checks besides the sanitizers': a tree that
 * was read packs and unpacks to the same bytes, and a failed read leaves
 * the caller's tree as it was. */

static char dir[64], blob[128];
static FILE* devnull;

int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static void link_as(const char* name)
{
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if (link(blob, path) != 0) abort();
}

int LLVMFuzzerInitialize(int* argc, char*** argv)
{
  (void) argc;
  (void) argv;
  devnull = fopen("/dev/null", "w");
  if (!devnull) abort();
  const char* tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(dir, sizeof(dir), "%s/fuzz-kvtree.XXXXXX", tmp);
  if (!mkdtemp(dir)) abort();
  char path[256];
  snprintf(path, sizeof(path), "%s/.scr", dir);
  mkdir(path, 0700);
  snprintf(path, sizeof(path), "%s/.scr/scr.dataset.7", dir);
  mkdir(path, 0700);
  snprintf(blob, sizeof(blob), "%s/blob", dir);
  int fd = open(blob, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) abort();
  close(fd);
  link_as(".scr/index.scr");
  link_as(".scr/halt.scr");
  link_as(".scr/flush.scr");
  link_as(".scr/scr.dataset.7/summary.scr");
  link_as(".scr/scr.dataset.7/rank2file.scr");
  link_as("filemap_3.scr");
  link_as("transfer.scr");
  return 0;
}

static void fail(const char* what)
{
  fprintf(stderr, "fuzz-kvtree: %s\n", what);
  abort();
}

/* the file's bytes in place: the hard links share them */
static void write_blob(const unsigned char* bytes, size_t n)
{
  int fd = open(blob, O_WRONLY | O_TRUNC);
  if (fd < 0 || scr_io_write_full(fd, bytes, n) != (ssize_t) n) abort();
  close(fd);
}

static void put_be(unsigned char* p, uint64_t v, int bytes)
{
  for (int i = bytes - 1; i >= 0; i--, v >>= 8) p[i] = (unsigned char) v;
}

static int same_packing(const scr_kvtree* a, const scr_kvtree* b)
{
  size_t na = scr_kvtree_pack_size(a), nb = scr_kvtree_pack_size(b);
  unsigned char* pa = malloc(na ? na : 1);
  unsigned char* pb = malloc(nb ? nb : 1);
  int same = na == nb && scr_kvtree_pack(a, pa) == na && scr_kvtree_pack(b, pb) == nb && memcmp(pa, pb, na) == 0;
  free(pa);
  free(pb);
  return same;
}

/* a tree that was read goes through pack and unpack unchanged */
static void round_trip(const scr_kvtree* tree)
{
  size_t n = scr_kvtree_pack_size(tree);
  unsigned char* buf = malloc(n ? n : 1);
  if (scr_kvtree_pack(tree, buf) != n) fail("pack wrote another size than pack_size");
  scr_kvtree* back = scr_kvtree_new();
  size_t used = 0;
  if (scr_kvtree_unpack(buf, n, back, &used) != SCR_SUCCESS || used != n) fail("a packed tree does not unpack");
  if (!same_packing(tree, back)) fail("a tree changed through pack and unpack");
  scr_kvtree_delete(&back);
  free(buf);
}

/* what the library asks a dataset descriptor */
static void dataset(const scr_kvtree* desc)
{
  scr_dataset_get_id(desc);
  scr_dataset_get_name(desc);
  scr_dataset_get_flags(desc);
  scr_dataset_is_checkpoint(desc);
  scr_dataset_is_output(desc);
  scr_dataset_is_complete(desc);
}

static void filemap(const char* path)
{
  scr_kvtree* map = scr_kvtree_new();
  if (scr_kvtree_read_file(path, map) == SCR_SUCCESS) {
    round_trip(map);
    for (int id = scr_filemap_latest_dataset(map), n = 0; id >= 0 && n < 64;
         id = scr_filemap_previous_dataset(map, id), n++) {
      scr_kvtree* dset = scr_filemap_get_dataset(map, id);
      dataset(scr_kvtree_get(dset, "DSETDESC"));
      for (scr_kvtree_elem* r = scr_kvtree_first(scr_kvtree_get(dset, "RANK")); r; r = scr_kvtree_next(r)) {
        int rank = (int) scr_kvtree_elem_key_int(r);
        scr_filemap_get_file_count(map, id, rank);
        for (scr_kvtree_elem* f = scr_kvtree_first(scr_filemap_get_files(map, id, rank)); f; f = scr_kvtree_next(f)) {
          uint64_t size;
          scr_kvtree_get_uint64(scr_kvtree_elem_tree(f), "SIZE", &size);
          scr_kvtree_get_val(scr_kvtree_elem_tree(f), "ORIG");
        }
      }
    }
    /* the files of a journal that is not there: none */
    char* journal = scr_filemap_journal_path(dir, 3);
    if (scr_filemap_journal_merge(journal, 3, map) != 0) fail("a missing journal added files");
    free(journal);
    scr_kvtree_print(map, devnull);
  }
  scr_kvtree_delete(&map);
}

static void index_file(void)
{
  scr_kvtree* index = scr_kvtree_new();
  scr_kvtree_set_kv(index, "SENTINEL", "1");
  scr_kvtree* before = scr_kvtree_copy(index);
  int rc = scr_index_file_read(dir, index);
  if (rc != SCR_SUCCESS && !same_packing(index, before)) fail("a failed index read changed the tree");
  if (rc == SCR_SUCCESS) {
    int id;
    scr_index_file_most_recent_checkpoint(index, -1, &id);
    const char* current = scr_index_file_get_current(index);
    if (current) scr_index_file_get_id_by_name(index, current, &id);
    int n = 0;
    for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(index, "DSET")); e && n < 64;
         e = scr_kvtree_next(e), n++) {
      int key = (int) scr_kvtree_elem_key_int(e);
      const char* name = scr_index_file_get_name(index, key);
      dataset(scr_index_file_get_dsetdesc(index, key));
      scr_index_file_is_complete(index, key);
      scr_index_file_is_failed(index, key);
      scr_index_file_is_fetched(index, key);
      if (name) scr_index_file_get_id_by_name(index, name, &id);
      scr_index_file_most_recent_checkpoint(index, key, &id);
    }
    /* what scr_index --remove and the restart do to it, in memory */
    if (current) {
      /* a name of the caller's own, as scr_index passes from its command
       * line: the tree's copy goes when CURRENT is set again */
      char* name = strdup(current);
      scr_index_file_set_current(index, name);
      scr_index_file_remove(index, name);
      free(name);
    }
    round_trip(index);
  }
  scr_kvtree_delete(&before);
  scr_kvtree_delete(&index);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size < 1 || size > (1 << 20)) return 0;
  const unsigned char* body = data + 1;
  size_t n = size - 1;
  unsigned char* file = NULL;
  if (data[0] & 1) {
    /* the header scr_kvtree_file.c writes: magic "SCRk", type 1, version
     * 1, total size, CRC32 of the payload, all big-endian */
    file = malloc(20 + n);
    put_be(file, 0x5343526bu, 4);
    put_be(file + 4, 1, 2);
    put_be(file + 6, 1, 2);
    put_be(file + 8, 20 + n, 8);
    put_be(file + 16, scr_io_crc32(0, body, n), 4);
    memcpy(file + 20, body, n);
    write_blob(file, 20 + n);
  } else {
    write_blob(body, n);
  }

  /* the decoder in memory, on the same bytes */
  scr_kvtree* tree = scr_kvtree_new();
  size_t used = 0;
  if (scr_kvtree_unpack(body, n, tree, &used) == SCR_SUCCESS) {
    if (used > n) fail("unpack used more bytes than it was given");
    round_trip(tree);
  } else if (scr_kvtree_size(tree) != 0) {
    fail("a failed unpack left part of a tree");
  }
  scr_kvtree_delete(&tree);

  char path[256];
  snprintf(path, sizeof(path), "%s/filemap_3.scr", dir);
  filemap(path);
  index_file();

  scr_kvtree* halt = scr_kvtree_new();
  if (scr_halt_file_read(dir, halt) == SCR_SUCCESS) {
    char reason[128];
    scr_halt_file_check(halt, time(NULL), 60, reason, sizeof(reason));
    scr_halt_file_check(halt, 0, -5, NULL, 0);
    scr_halt_file_is_immediate(halt);
    if (!memchr(reason, '\0', sizeof(reason))) fail("halt reason not terminated");
  }
  scr_kvtree_delete(&halt);

  scr_kvtree* summary = scr_kvtree_new();
  if (scr_summary_file_read(dir, 7, summary) == SCR_SUCCESS) dataset(scr_kvtree_get(summary, "DSETDESC"));
  scr_kvtree_delete(&summary);
  scr_kvtree* rank2file = scr_kvtree_new();
  scr_rank2file_read(dir, 7, rank2file);
  scr_kvtree_delete(&rank2file);

  scr_flush_file_was_flushing(dir, 7);
  scr_kvtree* transfer = scr_kvtree_new();
  snprintf(path, sizeof(path), "%s/transfer.scr", dir);
  scr_transfer_file_read(path, transfer);
  scr_kvtree_delete(&transfer);
  free(file);
  return 0;
}
