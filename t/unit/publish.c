/* publish.c - unit tests of the publish of a staged flush (scr_publish.h): the
 * recovery completes a committed publish from any point, idempotently, and removes a stage not committed. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include "tap.h"
#include "scr_error.h"
#include "scr_kvtree.h"
#include "scr_dataset.h"
#include "scr_io.h"
#include "scr_index_file.h"
#include "scr_summary_file.h"
#include "scr_publish.h"

static char prefix[4096];

static char* at(const char* relpath)
{
  static char path[8192];
  snprintf(path, sizeof(path), "%s/%s", prefix, relpath);
  return path;
}

static void put(const char* relpath, const char* text)
{
  char* path = at(relpath);
  char* dir = strdup(path);
  *strrchr(dir, '/') = '\0';
  scr_io_mkdir_p(dir, 0755);
  free(dir);
  FILE* f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

/* the file's bytes, or "" when it is missing */
static const char* bytes_of(const char* relpath)
{
  static char text[256];
  FILE* f = fopen(at(relpath), "r");
  size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
  text[n] = '\0';
  if (f) fclose(f);
  return text;
}

static int exists(const char* relpath)
{
  struct stat st;
  return lstat(at(relpath), &st) == 0;
}

/* dataset 5, "ckpt.5": rank 0 a.dat (staged as tmp/a.dat, renamed since)
 * and its hard link b.dat (another name: no STAGE); rank 1 c.dat */
static scr_kvtree* record_of_5(int complete)
{
  scr_kvtree* record = scr_kvtree_new();
  scr_kvtree* desc = scr_dataset_new(5, "ckpt.5", SCR_FLAG_CHECKPOINT, 5, "user", "job", "42");
  scr_dataset_set_complete(desc, 1, 3, 30);
  scr_kvtree_set(record, "DSETDESC", desc);
  scr_kvtree_set_kv_int(record, "CURRENT", 1);
  scr_kvtree_set_kv_int(record, "COMPLETE", complete);
  scr_kvtree* map = scr_kvtree_set(record, "RANK2FILE", scr_kvtree_new());
  scr_kvtree_set_kv_int(map, "RANKS", 2);
  scr_kvtree* r0 = scr_kvtree_add_kv_int(map, "RANK", 0);
  scr_kvtree* a = scr_kvtree_add_kv(r0, "FILE", "ckpt.5/a.dat");
  scr_kvtree_set_kv(a, SCR_PUBLISH_KEY_STAGE, "tmp/a.dat");
  scr_kvtree_set_kv(a, "LINK", "g1");
  scr_kvtree_set_kv(scr_kvtree_add_kv(r0, "FILE", "ckpt.5/b.dat"), "LINK", "g1");
  scr_kvtree* r1 = scr_kvtree_add_kv_int(map, "RANK", 1);
  scr_kvtree_set_kv(scr_kvtree_add_kv(r1, "FILE", "ckpt.5/c.dat"), SCR_PUBLISH_KEY_STAGE, "ckpt.5/c.dat");
  return record;
}

/* the stage of dataset 5 as the flush left it before the commit, the prefix
 * holding an older c.dat at its name and checkpoint 4, whole and current */
static void stage_5(void)
{
  put(".scr/stage.5/tmp/a.dat", "new a\n");
  put(".scr/stage.5/ckpt.5/c.dat", "new c\n");
  put("ckpt.5/c.dat", "old c\n");
  scr_kvtree* index = scr_kvtree_new();
  scr_kvtree* desc = scr_dataset_new(4, "ckpt.4", SCR_FLAG_CHECKPOINT, 4, "user", "job", "42");
  scr_dataset_set_complete(desc, 1, 2, 20);
  scr_index_file_add(index, 4, "ckpt.4", desc, 1);
  scr_index_file_set_current(index, "ckpt.4");
  scr_index_file_write(prefix, index);
  scr_kvtree_delete(&desc);
  scr_kvtree_delete(&index);
}

/* the index still says the state before the flush: checkpoint 4 current, no 5 */
static void check_old_index(const char* when)
{
  scr_kvtree* index = scr_kvtree_new();
  const char* current = NULL;
  ok(scr_index_file_read(prefix, index) == SCR_SUCCESS && (current = scr_index_file_get_current(index)) &&
         strcmp(current, "ckpt.4") == 0 && !scr_index_file_get_name(index, 5),
     "%s: the index still says checkpoint 4, and nothing of 5", when);
  scr_kvtree_delete(&index);
}

static void check_published(const char* when)
{
  is_str(bytes_of("ckpt.5/a.dat"), "new a\n", "%s: a.dat in place, under the name it has now", when);
  is_str(bytes_of("ckpt.5/c.dat"), "new c\n", "%s: c.dat replaced whole", when);
  struct stat a, b;
  ok(stat(at("ckpt.5/a.dat"), &a) == 0 && stat(at("ckpt.5/b.dat"), &b) == 0 && a.st_ino == b.st_ino,
     "%s: b.dat is a.dat's other name there too", when);
  ok(!exists(".scr/stage.5") && !exists(".scr/publish.5.scr"), "%s: the stage and the record are gone", when);
  scr_kvtree* index = scr_kvtree_new();
  ok(scr_index_file_read(prefix, index) == SCR_SUCCESS && scr_index_file_is_complete(index, 5) &&
         scr_index_file_get_current(index) && strcmp(scr_index_file_get_current(index), "ckpt.5") == 0,
     "%s: the index has it whole and current", when);
  scr_kvtree_delete(&index);
  scr_kvtree* map = scr_kvtree_new();
  ok(scr_rank2file_read(prefix, 5, map) == SCR_SUCCESS && scr_kvtree_get_kv(scr_kvtree_get_kv_int(map, "RANK", 1),
                                                                           "FILE", "ckpt.5/c.dat") &&
         !scr_kvtree_get(scr_kvtree_get_kv(scr_kvtree_get_kv_int(map, "RANK", 0), "FILE", "ckpt.5/a.dat"),
                         SCR_PUBLISH_KEY_STAGE),
     "%s: its rank2file map lists the files, without their places in the stage", when);
  scr_kvtree_delete(&map);
}

static void fresh(void)
{
  scr_io_remove_tree(prefix);
  scr_io_mkdir_p(prefix, 0755);
}

int main(void)
{
  snprintf(prefix, sizeof(prefix), "%s/scr-unit-publish.%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int) getpid());

  /* not committed: removed, the program's names untouched */
  fresh();
  stage_5();
  scr_kvtree* done = scr_kvtree_new();
  ok(scr_publish_recover(prefix, done) == SCR_SUCCESS, "recovery of a stage without a record");
  ok(!exists(".scr/stage.5"), "the stage is removed");
  is_str(bytes_of("ckpt.5/c.dat"), "old c\n", "the old file stays at its name");
  ok(!exists("ckpt.5/a.dat"), "nothing of the new dataset appears");
  ok(scr_kvtree_get_kv_int(done, "ABANDONED", 5) && !scr_kvtree_get(done, "DSET"), "reported as abandoned");
  check_old_index("not committed");
  scr_kvtree_delete(&done);

  /* committed, killed before any move */
  fresh();
  stage_5();
  scr_kvtree* record = record_of_5(1);
  ok(scr_publish_record_write(prefix, 5, record) == SCR_SUCCESS, "the commit");
  is_str(bytes_of("ckpt.5/c.dat"), "old c\n", "committed, not moved: the old file is still there");
  check_old_index("committed, before the recovery");
  done = scr_kvtree_new();
  ok(scr_publish_recover(prefix, done) == SCR_SUCCESS, "recovery of a committed publish");
  check_published("from the commit");
  is_str(scr_kvtree_get_val(scr_kvtree_get_kv_int(done, "DSET", 5), "NAME"), "ckpt.5", "reported as published");
  scr_kvtree_delete(&done);
  ok(scr_publish_recover(prefix, NULL) == SCR_SUCCESS, "a second recovery");
  check_published("once more");

  /* committed, one rank's file moved (killed in the middle) */
  fresh();
  stage_5();
  scr_publish_record_write(prefix, 5, record);
  ok(scr_publish_move_rank(prefix, 5, scr_kvtree_get_kv_int(scr_kvtree_get(record, "RANK2FILE"), "RANK", 1), NULL) ==
         SCR_SUCCESS, "rank 1 moves its file");
  ok(scr_publish_recover(prefix, NULL) == SCR_SUCCESS, "recovery after some moves");
  check_published("from the middle");

  /* everything done but the record's removal */
  fresh();
  stage_5();
  scr_publish_record_write(prefix, 5, record);
  for (int r = 0; r < 2; r++)
    scr_publish_move_rank(prefix, 5, scr_kvtree_get_kv_int(scr_kvtree_get(record, "RANK2FILE"), "RANK", r), NULL);
  scr_io_remove_tree(at(".scr/stage.5"));
  ok(scr_publish_recover(prefix, NULL) == SCR_SUCCESS && !exists(".scr/publish.5.scr"),
     "a record without its stage: moves done, the record goes");
  check_published("from the end");
  scr_kvtree_delete(&record);

  /* a checkpoint the program took a file of: indexed, not offered */
  fresh();
  stage_5();
  record = record_of_5(0);
  scr_publish_record_write(prefix, 5, record);
  scr_publish_recover(prefix, NULL);
  scr_kvtree* index = scr_kvtree_new();
  ok(scr_index_file_read(prefix, index) == SCR_SUCCESS && scr_index_file_get_name(index, 5) &&
         !scr_index_file_is_complete(index, 5) && scr_index_file_get_current(index) &&
         strcmp(scr_index_file_get_current(index), "ckpt.4") == 0,
     "not whole: indexed incomplete, checkpoint 4 stays the current one");
  scr_kvtree_delete(&index);
  scr_kvtree_delete(&record);

  /* a stage another job holds is left alone */
  fresh();
  stage_5();
  int fd = -1;
  ok(scr_publish_stage_open(prefix, 5, &fd) == SCR_SUCCESS && fd >= 0, "a live job's stage, locked");
  scr_publish_recover(prefix, NULL);
  ok(exists(".scr/stage.5/tmp/a.dat"), "the recovery leaves a locked stage alone");
  close(fd);
  scr_publish_recover(prefix, NULL);
  ok(!exists(".scr/stage.5"), "unlocked, it is removed");

  /* a record naming a file outside the prefix is refused */
  fresh();
  scr_io_mkdir_p(at(".scr"), 0755);
  record = record_of_5(1);
  scr_kvtree_set_kv(scr_kvtree_add_kv(scr_kvtree_get_kv_int(scr_kvtree_get(record, "RANK2FILE"), "RANK", 1), "FILE",
                                      "../escape"),
                    SCR_PUBLISH_KEY_STAGE, "x");
  scr_publish_record_write(prefix, 5, record);
  scr_kvtree* back = scr_kvtree_new();
  is_int(scr_publish_record_read(prefix, 5, back), SCR_ERR_SECURITY, "a record naming ../escape is refused");
  scr_kvtree_delete(&back);
  scr_kvtree_delete(&record);

  scr_io_remove_tree(prefix);
  return tap_done();
}
