/* index_file.c - unit tests of the index file: entries, names and ids, the
 * current dataset, choosing a restart checkpoint, the file round trip, and a
 * damaged index rebuilt from the summaries. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <glob.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tap.h"
#include "scr_error.h"
#include "scr_kvtree.h"
#include "scr_dataset.h"
#include "scr_index_file.h"
#include "scr_summary_file.h"
#include "scr_flush_file.h"
#include "scr_io.h"

/* adds dataset id named "ckpt.<id>" with the given flags and completeness */
static void add_dataset(scr_kvtree* index, int id, int flags, int complete)
{
  char name[32];
  snprintf(name, sizeof(name), "ckpt.%d", id);
  scr_kvtree* desc = scr_dataset_new(id, name, flags, id, "user", "job", "42");
  scr_dataset_set_complete(desc, complete, 4, 4096);
  scr_index_file_add(index, id, name, desc, complete);
  scr_kvtree_delete(&desc);
}

static void test_entries(void)
{
  scr_kvtree* index = scr_kvtree_new();
  int id = -1;

  add_dataset(index, 3, SCR_FLAG_CHECKPOINT, 1);
  ok(scr_index_file_get_id_by_name(index, "ckpt.3", &id) == SCR_SUCCESS && id == 3, "name finds the id");
  is_str(scr_index_file_get_name(index, 3), "ckpt.3", "id finds the name");
  is_int(scr_index_file_get_id_by_name(index, "nope", &id), SCR_ERR_NOENT, "unknown name is NOENT");
  ok(scr_index_file_get_name(index, 9) == NULL, "unknown id has no name");
  is_str(scr_kvtree_get_val(scr_index_file_get_dsetdesc(index, 3), "JOBID"), "42",
         "the descriptor is stored with the entry");
  is_str(scr_kvtree_get_val(index, "VERSION"), "1", "adding sets VERSION");
  is_int(scr_index_file_is_checkpoint(index, 3), 1, "a CHECKPOINT dataset is a checkpoint");
  is_int(scr_index_file_is_complete(index, 3), 1, "complete flag is recorded");
  scr_kvtree* copy = scr_kvtree_copy(index);
  is_int(scr_index_file_mark_incomplete(copy, 3), SCR_SUCCESS, "mark_incomplete of a listed dataset");
  is_int(scr_index_file_is_complete(copy, 3), 0, "mark_incomplete: the copy is no longer whole");
  is_int(scr_index_file_mark_incomplete(copy, 77), SCR_ERR_NOENT, "mark_incomplete of an unlisted dataset");
  scr_kvtree_delete(&copy);

  is_int(scr_index_file_add(index, -1, "x", NULL, 1), SCR_ERR_INVALID, "a negative id is refused");
  is_int(scr_index_file_add(index, 1, "", NULL, 1), SCR_ERR_INVALID, "an empty name is refused");

  is_int(scr_index_file_mark_failed(index, 3, 1000, "bad crc"), SCR_SUCCESS, "marking a failure succeeds");
  is_int(scr_index_file_is_failed(index, 3), 1, "the failure is recorded");
  is_int(scr_index_file_mark_fetched(index, 3, 1001), SCR_SUCCESS, "marking a fetch succeeds");
  is_int(scr_index_file_is_fetched(index, 3), 1, "the fetch is recorded");
  is_int(scr_index_file_set_flushed(index, 9, 1000), SCR_ERR_NOENT, "flushing an unknown id is NOENT");

  /* re-adding the same id under a new name supersedes the old entry */
  scr_index_file_add(index, 3, "renamed", NULL, 1);
  is_int(scr_index_file_get_id_by_name(index, "ckpt.3", &id), SCR_ERR_NOENT,
         "re-adding an id under a new name drops the old name");
  is_int(scr_index_file_is_failed(index, 3), 0, "re-adding an id forgets its fetch history");

  /* a name may be passed straight from the tree itself */
  scr_index_file_add(index, 4, scr_index_file_get_name(index, 3), NULL, 1);
  ok(scr_index_file_get_id_by_name(index, "renamed", &id) == SCR_SUCCESS && id == 4,
     "re-adding a name under a new id moves the name");
  ok(scr_index_file_get_name(index, 3) == NULL, "the old id of a moved name is dropped");
  scr_kvtree_delete(&index);
}

static void test_most_recent(void)
{
  scr_kvtree* index = scr_kvtree_new();
  int id = -1;

  is_int(scr_index_file_most_recent_checkpoint(index, -1, &id), SCR_ERR_NOENT, "empty index has none");

  add_dataset(index, 1, SCR_FLAG_CHECKPOINT, 1);
  add_dataset(index, 2, SCR_FLAG_CHECKPOINT, 1);
  add_dataset(index, 3, SCR_FLAG_CHECKPOINT, 1);
  add_dataset(index, 4, SCR_FLAG_CHECKPOINT, 0);
  add_dataset(index, 5, SCR_FLAG_OUTPUT, 1);
  add_dataset(index, 6, SCR_FLAG_CHECKPOINT | SCR_FLAG_OUTPUT, 1);
  add_dataset(index, 10, SCR_FLAG_CHECKPOINT, 1);
  scr_index_file_mark_failed(index, 6, 1000, "missing file");

  ok(scr_index_file_most_recent_checkpoint(index, -1, &id) == SCR_SUCCESS && id == 10,
     "no bound: the newest complete checkpoint (ids compare as numbers)");
  ok(scr_index_file_most_recent_checkpoint(index, 10, &id) == SCR_SUCCESS && id == 3,
     "skips FAILED, output-only and incomplete datasets");
  ok(scr_index_file_most_recent_checkpoint(index, 3, &id) == SCR_SUCCESS && id == 2,
     "before_id is exclusive");
  is_int(scr_index_file_most_recent_checkpoint(index, 1, &id), SCR_ERR_NOENT,
         "nothing older than the oldest");
  scr_kvtree_delete(&index);
}

static void test_current(void)
{
  scr_kvtree* index = scr_kvtree_new();
  add_dataset(index, 1, SCR_FLAG_CHECKPOINT, 1);
  add_dataset(index, 2, SCR_FLAG_CHECKPOINT, 0);
  add_dataset(index, 3, SCR_FLAG_OUTPUT, 1);

  ok(scr_index_file_get_current(index) == NULL, "no current dataset at first");
  is_int(scr_index_file_set_current(index, "ckpt.1"), SCR_SUCCESS, "a complete checkpoint can be current");
  is_str(scr_index_file_get_current(index), "ckpt.1", "current is recorded");
  is_int(scr_index_file_set_current(index, "ckpt.2"), SCR_ERR_INVALID, "an incomplete checkpoint cannot");
  is_int(scr_index_file_set_current(index, "ckpt.3"), SCR_ERR_INVALID, "an output dataset cannot");
  is_int(scr_index_file_set_current(index, "nope"), SCR_ERR_NOENT, "an unknown name cannot");
  is_str(scr_index_file_get_current(index), "ckpt.1", "refused changes keep the current dataset");

  is_int(scr_index_file_remove(index, "ckpt.3"), SCR_SUCCESS, "removing another dataset succeeds");
  is_str(scr_index_file_get_current(index), "ckpt.1", "removing another dataset keeps current");
  is_int(scr_index_file_remove(index, "ckpt.1"), SCR_SUCCESS, "removing the current dataset succeeds");
  ok(scr_index_file_get_current(index) == NULL, "removing the current dataset clears CURRENT");
  ok(scr_index_file_get_name(index, 1) == NULL, "the removed dataset's entry is gone");
  is_int(scr_index_file_remove(index, "ckpt.1"), SCR_ERR_NOENT, "removing it twice is NOENT");

  scr_index_file_set_current(index, "ckpt.2");
  scr_index_file_unset_current(index);
  ok(scr_index_file_get_current(index) == NULL, "unset_current clears CURRENT");
  scr_kvtree_delete(&index);
}

static int drop_one(scr_kvtree* index, void* arg)
{
  return scr_index_file_remove(index, arg);
}

static void test_file(const char* prefix)
{
  struct stat st;
  int id = -1;
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s/.scr", prefix);

  scr_kvtree* index = scr_kvtree_new();
  is_int(scr_index_file_read(prefix, index), SCR_SUCCESS, "reading a missing index succeeds");
  is_int(scr_kvtree_size(index), 0, "a missing index reads as empty");

  add_dataset(index, 7, SCR_FLAG_CHECKPOINT, 1);
  add_dataset(index, 8, SCR_FLAG_OUTPUT, 1);
  scr_index_file_set_flushed(index, 7, 1718452800);
  scr_index_file_set_current(index, "ckpt.7");
  is_int(scr_index_file_write(prefix, index), SCR_SUCCESS, "writing the index succeeds");
  ok(stat(dir, &st) == 0 && S_ISDIR(st.st_mode), "writing creates <prefix>/.scr");

  scr_kvtree* again = scr_kvtree_new();
  is_int(scr_index_file_read(prefix, again), SCR_SUCCESS, "the written index reads back");
  is_str(scr_index_file_get_current(again), "ckpt.7", "CURRENT survives the round trip");
  ok(scr_index_file_get_id_by_name(again, "ckpt.8", &id) == SCR_SUCCESS && id == 8,
     "names survive the round trip");
  long long flushed = 0;
  scr_kvtree_get_int(scr_kvtree_get_kv_int(again, "DSET", 7), "FLUSHED", &flushed);
  is_int(flushed, 1718452800, "FLUSHED survives the round trip");

  is_int(scr_index_file_update(prefix, drop_one, "ckpt.8"), SCR_SUCCESS, "a locked update succeeds");
  is_int(scr_index_file_update(prefix, drop_one, "ckpt.8"), SCR_ERR_NOENT,
         "a refused update returns the callback's error");
  scr_kvtree_clear(again);
  scr_index_file_read(prefix, again);
  ok(scr_index_file_get_name(again, 8) == NULL && scr_index_file_get_name(again, 7) != NULL,
     "the update is in the file");

  /* an index from a future SCR must not be misread */
  scr_kvtree_set_kv_int(again, "VERSION", 99);
  char* path = scr_index_file_path(prefix);
  scr_kvtree_write_file(path, again);
  scr_kvtree_clear(again);
  is_int(scr_index_file_read(prefix, again), SCR_ERR_CORRUPT, "a newer VERSION is refused");

  char lock[4096];
  snprintf(lock, sizeof(lock), "%s/.scr/index.scr.lock", prefix);
  unlink(path);
  unlink(lock);
  rmdir(dir);
  free(path);
  scr_kvtree_delete(&again);
  scr_kvtree_delete(&index);
}

/* what a flush leaves on the prefix directory for dataset id: its summary
 * and rank2file map */
static void flushed(const char* prefix, int id, int flags, int complete)
{
  char name[32];
  snprintf(name, sizeof(name), "ckpt.%d", id);
  scr_kvtree* desc = scr_dataset_new(id, name, flags, id, "user", "job", "42");
  scr_dataset_set_complete(desc, complete, 1, 10);
  char* dir = scr_summary_dataset_dir(prefix, id);
  scr_io_mkdir_p(dir, 0700);
  free(dir);
  scr_kvtree* rank2file = scr_kvtree_new();
  scr_kvtree_set_kv_int(rank2file, "RANKS", 1);
  scr_rank2file_write(prefix, id, rank2file);
  scr_summary_file_write(prefix, id, desc, 1);
  scr_kvtree_delete(&rank2file);
  scr_kvtree_delete(&desc);
}

static void test_rebuild(const char* prefix)
{
  flushed(prefix, 3, SCR_FLAG_CHECKPOINT, 1);
  flushed(prefix, 5, SCR_FLAG_CHECKPOINT, 1);
  flushed(prefix, 6, SCR_FLAG_OUTPUT, 1);
  flushed(prefix, 7, SCR_FLAG_CHECKPOINT, 0);   /* never complete */
  flushed(prefix, 9, SCR_FLAG_CHECKPOINT, 1);   /* flushed again, cut short */
  scr_flush_file_set_location(prefix, 9, "ckpt.9", SCR_FLUSH_FILE_FLUSHING);
  char* path = scr_index_file_path(prefix);
  FILE* f = fopen(path, "w");
  if (f) {
    fputs("garbage", f);
    fclose(f);
  }
  scr_kvtree* index = scr_kvtree_new();
  is_int(scr_index_file_read(prefix, index), SCR_SUCCESS, "a damaged index is read as rebuilt");
  ok(scr_index_file_get_name(index, 3) && scr_index_file_get_name(index, 5) && scr_index_file_get_name(index, 6),
     "rebuilt: the datasets whose flush ended");
  ok(!scr_index_file_get_name(index, 7), "rebuilt: not one that never completed");
  ok(!scr_index_file_get_name(index, 9), "rebuilt: not one whose flush was cut short");
  is_str(scr_index_file_get_current(index), "ckpt.5", "rebuilt: the newest checkpoint is current");
  scr_kvtree* again = scr_kvtree_new();
  is_int(scr_index_file_read(prefix, again), SCR_SUCCESS, "the rebuilt index is on disk");
  is_str(scr_index_file_get_current(again), "ckpt.5", "and reads back");
  char pattern[4200];
  snprintf(pattern, sizeof(pattern), "%s.damaged.*", path);
  glob_t g;
  int found = glob(pattern, 0, NULL, &g) == 0 ? (int) g.gl_pathc : 0;
  if (found) globfree(&g);
  is_int(found, 1, "the damaged index is kept aside");
  scr_kvtree_delete(&again);
  scr_kvtree_delete(&index);
  free(path);
}

int main(void)
{
  test_entries();
  test_most_recent();
  test_current();

  char prefix[] = "/tmp/scr-index-file.XXXXXX";
  if (mkdtemp(prefix) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  test_file(prefix);
  rmdir(prefix);

  char rebuilt[] = "/tmp/scr-index-rebuild.XXXXXX";
  if (mkdtemp(rebuilt) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  test_rebuild(rebuilt);
  scr_io_remove_tree(rebuilt);
  return tap_done();
}
