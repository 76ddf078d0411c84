/* scr_flush_publish.c - the preload layer's flush (see scr_flush_publish.h and, for the
 * prefix-directory side and the crash argument, scr_publish.h): stage, commit, move, record. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_fault.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_flush_file.h"
#include "scr_publish.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_flush.h"
#include "scr_flush_async.h"
#include "scr_flush_publish.h"
#include "scr_flush_redundancy.h"

/* rank 0: the lock on the stage of the dataset being flushed, held from
 * scr_flush_prepare to the end of its publish */
static int stage_lock_fd = -1;
/* rank 0: what the recovery at start-up completed, DSET/<id>/NAME, and
 * gave up, ABANDONED/<id>; every rank once adopted */
static scr_kvtree* recovered = NULL;

int scr_flush_publish_open(int id)
{
  scr_io_unlock(stage_lock_fd);
  return scr_publish_stage_open(scr.prefix, id, &stage_lock_fd);
}

static void publish_close(void)
{
  scr_io_unlock(stage_lock_fd);
  stage_lock_fd = -1;
}

/* 1 when the background copy left meta's file whole in the stage: handed
 * over (a change of its bytes since drops STAGE), recorded copied with the
 * size and CRC32 the filemap has, and not open for a change now */
static int publish_copy_good(const scr_kvtree* done, const scr_kvtree* meta)
{
  uint64_t written = 0, size = 0;
  const char* crc = scr_kvtree_get_val(done, "CRC");
  const char* recorded = scr_kvtree_get_val(meta, "CRC");
  if (!done || scr_kvtree_get_val(done, "ERROR") || !crc || !scr_kvtree_get_val(meta, SCR_FILEMAP_KEY_STAGE) ||
      scr_kvtree_get(meta, SCR_FILEMAP_KEY_UPDATING))
    return 0;
  scr_kvtree_get_uint64(done, "WRITTEN", &written);
  scr_kvtree_get_uint64(meta, "SIZE", &size);
  return written == size && (!recorded || strtoul(recorded, NULL, 16) == strtoul(crc, NULL, 16));
}

/* the place a staged file is renamed to, checked before the commit so that
 * the renames after it do not fail: its directory made, no directory there */
static int publish_check_place(const char* dst)
{
  char* parent = scr_path_dirname(dst);
  struct stat st;
  int rc = parent && scr_io_mkdir_p(parent, 0777) == SCR_SUCCESS ? SCR_SUCCESS : SCR_ERR_IO;
  if (rc != SCR_SUCCESS) scr_err("cannot create %s: %s", parent ? parent : dst, strerror(errno));
  if (rc == SCR_SUCCESS && lstat(dst, &st) == 0 && S_ISDIR(st.st_mode)) {
    scr_err("%s is a directory: a file cannot be put in its place", dst);
    rc = SCR_ERR_IO;
  }
  free(parent);
  return rc;
}

/* this rank's files into the stage (or found at their place), described in
 * rank2file's RANK/<rank> entry with their STAGE; 1 on success */
static int publish_stage_mine(int id, const scr_kvtree* copied, scr_kvtree* rank2file, uint64_t* moved,
                              uint64_t* recopied)
{
  int ok = 1;
  scr_kvtree* mine = scr_flush_rank2file_start(id, rank2file);
  /* LINK/<group>: a file with several names whose staged name is known */
  scr_kvtree* heads = scr_kvtree_new();
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e && ok;
       e = scr_kvtree_next(e)) {
    const char* src = scr_kvtree_elem_key(e);
    scr_kvtree* meta = scr_kvtree_elem_tree(e);
    const char* relpath = scr_kvtree_get_val(meta, "RELPATH");
    const char* recorded = scr_kvtree_get_val(meta, "CRC");
    const char* group = scr_kvtree_get_val(meta, SCR_FILEMAP_KEY_LINK);
    scr_kvtree* head = group ? scr_kvtree_get_kv(heads, "LINK", group) : NULL;
    char* dst = scr_flush_destination(meta);
    char* staged = NULL;
    const char* stage = NULL;
    uint64_t size = 0;
    uint32_t crc = 0;
    int rc = SCR_SUCCESS;
    if (!dst || !relpath) {
      free(dst);
      ok = 0;
      break;
    }
    if (head) {
      /* another name of a file staged already: linked to it once in place */
      scr_kvtree_get_uint64(head, "SIZE", &size);
      crc = (uint32_t) strtoul(scr_kvtree_get_val(head, "CRC"), NULL, 16);
    } else if (strcmp(src, dst) == 0) {
      /* cache bypass: the file already is where it belongs */
      rc = scr.crc_on_flush ? scr_io_crc32_file(src, &crc, &size) : scr_io_file_size(src, &size);
    } else if (moved && (recorded || !scr.crc_on_flush) && scr_flush_copy_is_in_place(meta, dst)) {
      scr_kvtree_get_uint64(meta, "SIZE", &size);
      crc = recorded ? (uint32_t) strtoul(recorded, NULL, 16) : 0;
      (*moved)++;
    } else {
      stage = scr_kvtree_get_val(meta, SCR_FILEMAP_KEY_STAGE);
      if (!stage) stage = relpath;
      staged = scr_publish_stage_path(scr.prefix, id, stage);
      const scr_kvtree* done = copied && staged ? scr_kvtree_get_kv(copied, "DST", staged) : NULL;
      if (!staged) {
        rc = SCR_ERR_NOMEM;
      } else if (publish_copy_good(done, meta)) {
        scr_kvtree_get_uint64(done, "WRITTEN", &size);
        crc = (uint32_t) strtoul(scr_kvtree_get_val(done, "CRC"), NULL, 16);
      } else {
        if (copied) scr_dbg(2, "flush of dataset %d: %s copied now, the background copy did not leave it whole", id, src);
        /* checked before the copy is trusted, as by the synchronous flush */
        rc = recorded && scr.crc_on_flush
                 ? scr_io_copy_file_expecting(src, staged, 0777, (uint32_t) strtoul(recorded, NULL, 16), &crc, &size)
                 : scr_io_copy_file(src, staged, 0777, &crc, &size);
        if (rc == SCR_ERR_CORRUPT) rc = SCR_SUCCESS; /* scr_flush_check_copy says what it is */
        (*recopied)++;
      }
      if (rc == SCR_SUCCESS) rc = publish_check_place(dst);
    }
    ok = scr_flush_check_copy(id, src, staged ? staged : dst, meta, rc, size, crc, mine);
    scr_kvtree* entry = scr_kvtree_get_kv(mine, "FILE", relpath);
    if (ok && staged && entry) {
      scr_kvtree_set_kv(entry, SCR_PUBLISH_KEY_STAGE, stage);
      if (group) {
        scr_kvtree* made = scr_kvtree_add_kv(heads, "LINK", group);
        scr_kvtree_set_kv_uint64(made, "SIZE", size);
        scr_kvtree_set_kvf(made, "CRC", "0x%08x", crc);
      }
    }
    free(staged);
    free(dst);
    scr_fault_point("flush"); /* a file in the stage, the dataset not yet committed */
  }
  scr_kvtree_delete(&heads);
  return ok;
}

/* after the moves: each file's copy known by where it is now, the stage forgotten */
static void publish_note_copies(int id)
{
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e;
       e = scr_kvtree_next(e)) {
    scr_kvtree* meta = scr_kvtree_elem_tree(e);
    char* dst = scr_flush_destination(meta);
    if (dst && strcmp(dst, scr_kvtree_elem_key(e)) != 0) scr_flush_note_copy(meta, dst);
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_STAGE);
    free(dst);
  }
}

/* this rank's outcome, carried to rank 0 by the gather of the rank2file
 * map (no agreement of its own): keys of RANK/<rank>, taken out there */
static const char* const publish_outcome[] = { "PUBLISH_FAILED", "PUBLISH_APART", "PUBLISH_KEPT", "PUBLISH_RECOPIED" };
#define PUBLISH_OUTCOMES (sizeof(publish_outcome) / sizeof(publish_outcome[0]))

/* rank 0: the outcomes summed over the ranks, out of the map */
static void publish_outcomes(scr_kvtree* gathered, uint64_t sums[PUBLISH_OUTCOMES])
{
  for (size_t k = 0; k < PUBLISH_OUTCOMES; k++) sums[k] = 0;
  for (scr_kvtree_elem* r = scr_kvtree_first(scr_kvtree_get(gathered, "RANK")); r; r = scr_kvtree_next(r)) {
    for (size_t k = 0; k < PUBLISH_OUTCOMES; k++) {
      uint64_t value = 0;
      scr_kvtree_get_uint64(scr_kvtree_elem_tree(r), publish_outcome[k], &value);
      sums[k] += value;
      scr_kvtree_unset(scr_kvtree_elem_tree(r), publish_outcome[k]);
    }
  }
}

/* what rank 0 decided: committed, nothing left to publish, or failed */
#define PUBLISH_NOTHING SCR_ERR_NOENT

int scr_flush_publish(int id, const scr_kvtree* copied, int current, double start, const char* mode,
                      uint64_t* moved)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  const char* name = scr_dataset_get_name(scr_kvtree_get(dset, "DSETDESC"));
  scr_kvtree* rank2file = scr_kvtree_new();
  uint64_t recopied = 0;
  int ok = dset && publish_stage_mine(id, copied, rank2file, moved, &recopied);
  long long apart = 0;
  scr_kvtree_get_int(dset, SCR_FILEMAP_KEY_TAKEN_APART, &apart);
  uint64_t outcome[PUBLISH_OUTCOMES] = { !ok, apart != 0,
                                         scr_kvtree_size(scr_filemap_get_files(scr.filemap, id, scr.rank)) > 0,
                                         recopied };
  scr_kvtree* mine = scr_kvtree_get_kv_int(rank2file, "RANK", scr.rank);
  /* beside the dataset, not at the program's names: no stage needed, and
   * the record commits it with the files (a flush that never commits
   * leaves it where no summary names it) */
  if (ok && scr.flush_redundancy) scr_flush_redundancy_take(id, copied, mine);
  scr_kvtree* sent = scr_kvtree_copy(rank2file);
  for (size_t k = 0; k < PUBLISH_OUTCOMES; k++)
    scr_kvtree_set_kv_uint64(scr_kvtree_get_kv_int(sent, "RANK", scr.rank), publish_outcome[k], outcome[k]);
  scr_kvtree* gathered = scr_kvtree_new();
  scr_mpi_gather_kvtree(sent, gathered, 0, scr.comm_world);
  scr_kvtree_delete(&sent);
  scr_kvtree* record = NULL;
  int rc = SCR_SUCCESS;
  if (scr.rank == 0) {
    /* ranks that failed, took it apart (the program deleted a file of it),
     * kept a file of it; files the background copy had not left whole */
    uint64_t all[PUBLISH_OUTCOMES];
    publish_outcomes(gathered, all);
    if (copied && all[3])
      scr_dbg(1, "flush of dataset %d: %llu files copied at the publish, not by the background copy", id,
              (unsigned long long) all[3]);
    rc = all[0] ? SCR_ERR_IO : !all[2] ? PUBLISH_NOTHING : SCR_SUCCESS;
    if (rc == SCR_SUCCESS) {
      record = scr_kvtree_new();
      scr_kvtree_set(record, "DSETDESC", scr_kvtree_copy(scr_kvtree_get(dset, "DSETDESC")));
      scr_kvtree_set_kv_int(record, "CURRENT", current);
      scr_kvtree_set_kv_int(record, "COMPLETE", !all[1]);
      scr_kvtree_set_kv_int(gathered, "RANKS", scr.ranks);
      scr_kvtree_set(record, "RANK2FILE", gathered);
      gathered = NULL;
      scr_fault_point("commit"); /* every file in the stage, not committed */
      rc = scr_publish_record_write(scr.prefix, id, record);
      if (rc != SCR_SUCCESS)
        scr_err("flush of dataset %d: cannot write the record that publishes it in %s: %s", id, scr.prefix_scr,
                scr_error_string(rc));
    } else if (rc == PUBLISH_NOTHING) {
      scr_info("flush of dataset %d (%s): the program deleted every file of it: nothing to flush", id,
               name ? name : "?");
    }
    /* not committed: the prefix directory as it was, the stage gone */
    if (rc != SCR_SUCCESS) {
      scr_publish_abandon(scr.prefix, id, NULL);
      publish_close();
    }
  }
  scr_kvtree_delete(&gathered);
  MPI_Bcast(&rc, 1, MPI_INT, 0, scr.comm_world);
  if (rc == SCR_SUCCESS) {
    /* committed: the state after the flush is the one every failure from
     * here on leads to (scr_publish_recover completes it), so the other
     * ranks go on once their files are in place; rank 0 records it */
    int failed = 0;
    scr_publish_move_rank(scr.prefix, id, mine, &failed);
    int failures = 0;
    MPI_Reduce(&failed, &failures, 1, MPI_INT, MPI_SUM, 0, scr.comm_world);
    if (scr.rank == 0) {
      if (failures) {
        scr_err("flush of dataset %d: %d files could not be moved into place: it is indexed as not whole", id,
                failures);
        scr_kvtree_set_kv_int(record, "COMPLETE", 0);
      }
      /* the rank2file map, summary and index entry are written, and the
       * stage and the record removed, off the program's way: the record
       * says it all until then, and this process's next look at the index
       * or the flush file waits for them */
      scr_publish_finish_later(scr.prefix, id, record, stage_lock_fd, scr.thread_start);
      stage_lock_fd = -1;
      record = NULL;
    }
    publish_note_copies(id);
    /* the pointer files attached to it follow it to their places */
    scr_flush_copy_attached(id);
  }
  scr_kvtree_delete(&record);
  scr_kvtree_delete(&rank2file);
  /* nothing of it left: not flushed, not failed */
  if (rc == PUBLISH_NOTHING) return SCR_SUCCESS;
  return scr_flush_recorded(id, rc, start, mode);
}

void scr_flush_publish_abandon_local(int id)
{
  scr_publish_abandon(scr.prefix, id, scr_dataset_get_name(scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id),
                                                                          "DSETDESC")));
  publish_close();
}

void scr_flush_publish_abandon(int id)
{
  if (scr.rank == 0) scr_flush_publish_abandon_local(id);
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e;
       e = scr_kvtree_next(e))
    scr_kvtree_unset(scr_kvtree_elem_tree(e), SCR_FILEMAP_KEY_STAGE);
  MPI_Barrier(scr.comm_world);
}

void scr_flush_publish_recover(void)
{
  scr_kvtree_delete(&recovered);
  if (scr.rank != 0) return;
  recovered = scr_kvtree_new();
  scr_publish_recover(scr.prefix, recovered);
}

void scr_flush_publish_adopt(void)
{
  int any = scr.rank == 0 && scr_kvtree_size(recovered) > 0;
  MPI_Bcast(&any, 1, MPI_INT, 0, scr.comm_world);
  if (!any) {
    scr_kvtree_delete(&recovered);
    return;
  }
  if (!recovered) recovered = scr_kvtree_new();
  scr_mpi_bcast_kvtree(recovered, 0, scr.comm_world);
  int changed = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(recovered, "DSET")); e; e = scr_kvtree_next(e)) {
    int id = (int) scr_kvtree_elem_key_int(e);
    scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
    const char* name = scr_dataset_get_name(scr_kvtree_get(dset, "DSETDESC"));
    const char* published = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "NAME");
    /* the files committed were this rank's as they are: nothing ran since */
    if (!dset || !name || !published || strcmp(name, published) != 0) continue;
    scr_kvtree_set_kv_int(dset, "FLUSHED", 1);
    publish_note_copies(id);
    changed = 1;
  }
  if (changed) scr_cache_save_filemap();
}

void scr_flush_publish_resume(void)
{
  int id = scr.restart_id;
  int abandoned = id >= 0 && scr_kvtree_get_kv_int(recovered, "ABANDONED", id) != NULL;
  scr_kvtree_delete(&recovered);
  /* the same on every rank (adopted), and every rank holds the dataset */
  if (!abandoned || scr.flush <= 0 || scr_flush_agree_flushed(id)) return;
  if (scr.rank == 0)
    scr_info("dataset %d (%s) was being flushed when the job died: it is flushed again%s", id,
             scr.restart_name ? scr.restart_name : "?", scr.flush_async ? " in the background" : "");
  if (scr_flush_async_start(id) != SCR_SUCCESS) scr_flush_dataset(id);
}
