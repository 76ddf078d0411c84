/* scr_flush.c - synchronous flush: every rank copies its own files (CRC32 computed
 * on the way), rank 0 writes the dataset's summary, rank2file map and index entry. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_summary_file.h"
#include "scr_index_file.h"
#include "scr_flush_file.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_event_log.h"
#include "scr_flush.h"
#include "scr_flush_async.h"
#include "scr_flush_redundancy.h"
#include "scr_flush_publish.h"
#include "scr_publish.h"
#include "scr_fault.h"

int scr_flush_is_flushed(int id)
{
  long long flushed = 0;
  scr_kvtree_get_int(scr_filemap_get_dataset(scr.filemap, id), "FLUSHED", &flushed);
  return flushed == 1;
}

int scr_flush_agree_flushed(int id)
{
  int flushed = !scr_mpi_all_true(!scr_flush_is_flushed(id), scr.comm_world);
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  if (flushed && dset && !scr_flush_is_flushed(id)) {
    scr_kvtree_set_kv_int(dset, "FLUSHED", 1);
    scr_cache_save_filemap();
  }
  return flushed;
}

int scr_flush_is_due(int id)
{
  scr_kvtree* desc = scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC");
  if (!desc || scr_flush_is_flushed(id)) return 0;
  if (scr_dataset_is_output(desc)) return 1;
  /* a bypass dataset already is on the prefix directory: indexing it costs
   * only metadata, and an unindexed one could not be fetched by a new run */
  long long bypass = 0;
  scr_kvtree_get_int(scr_filemap_get_dataset(scr.filemap, id), "BYPASS", &bypass);
  if (bypass) return 1;
  long long ckpt = 0;
  scr_kvtree_get_int(desc, "CKPT", &ckpt);
  return scr.flush > 0 && ckpt % scr.flush == 0;
}

char* scr_flush_destination(const scr_kvtree* meta)
{
  const char* relpath = scr_kvtree_get_val(meta, "RELPATH");
  return relpath ? scr_path_join(scr.prefix, relpath) : NULL;
}

scr_kvtree* scr_flush_rank2file_start(int id, scr_kvtree* rank2file)
{
  scr_kvtree* mine = scr_kvtree_add_kv_int(rank2file, "RANK", scr.rank);
  scr_kvtree_set_kv_int(mine, "FILES", scr_kvtree_size(scr_filemap_get_files(scr.filemap, id, scr.rank)));
  return mine;
}

/* A copy on the prefix directory is known by its device, inode and change
 * of contents: a rename there (the program's own, of the dataset's
 * directory or of a file) keeps all three, while a file written anew at
 * that path, or rewritten, has another inode or time. A change of the
 * cached file's bytes drops the record (scr_preload_engine_update.c). */
static int scr_flush_copy_identity(const char* path, char* text, size_t size)
{
  struct stat st;
  if (stat(path, &st) != 0) return 0;
  snprintf(text, size, "%llu:%llu:%lld.%09ld", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino,
           (long long) st.st_mtim.tv_sec, (long) st.st_mtim.tv_nsec);
  return 1;
}

/* 1 when dst is the copy this file's last flush made, moved there since */
int scr_flush_copy_is_in_place(const scr_kvtree* meta, const char* dst)
{
  const char* recorded = scr_kvtree_get_val(meta, SCR_FILEMAP_KEY_FLUSHED_COPY);
  char now[96];
  return recorded && scr_flush_copy_identity(dst, now, sizeof(now)) && strcmp(recorded, now) == 0;
}

int scr_flush_check_copy(int id, const char* src, const char* dst, scr_kvtree* meta, int rc, uint64_t size,
                         uint32_t crc, scr_kvtree* mine)
{
  uint64_t want = 0;
  scr_kvtree_get_uint64(meta, "SIZE", &want);
  int ok = 1;
  if (rc != SCR_SUCCESS) {
    scr_err("flush of dataset %d: copying %s to %s failed: %s", id, src, dst, scr_error_string(rc));
    ok = 0;
  } else if (size != want) {
    scr_err("flush of dataset %d: %s has %llu bytes, %llu were recorded when the dataset "
            "completed: the cached copy changed after SCR_Complete_output", id, src,
            (unsigned long long) size, (unsigned long long) want);
    ok = 0;
  }
  const char* recorded = scr_kvtree_get_val(meta, "CRC");
  if (ok && recorded && scr.crc_on_flush && strtoul(recorded, NULL, 16) != crc) {
    scr_err("flush of dataset %d: CRC32 of cached file %s is 0x%08x, 0x%s was recorded: "
            "the cached copy is corrupt", id, src, crc, recorded + 2);
    ok = 0;
  }
  if (ok) {
    scr_kvtree* f = scr_kvtree_add_kv(mine, "FILE", scr_kvtree_get_val(meta, "RELPATH"));
    scr_kvtree_set_kv_uint64(f, "SIZE", size);
    /* a fetch makes the names one file again */
    const char* group = scr_kvtree_get_val(meta, SCR_FILEMAP_KEY_LINK);
    if (group) scr_kvtree_set_kv(f, SCR_FILEMAP_KEY_LINK, group);
    if (scr.crc_on_flush) {
      scr_kvtree_set_kvf(f, "CRC", "0x%08x", crc);
      scr_kvtree_set_kvf(meta, "CRC", "0x%08x", crc);
    }
    if (strcmp(src, dst) != 0) scr_flush_note_copy(meta, dst);
    else scr_kvtree_unset(meta, SCR_FILEMAP_KEY_FLUSHED_COPY);
  }
  return ok;
}

void scr_flush_note_copy(scr_kvtree* meta, const char* dst)
{
  char identity[96];
  if (scr_flush_copy_identity(dst, identity, sizeof(identity)))
    scr_kvtree_set_kv(meta, SCR_FILEMAP_KEY_FLUSHED_COPY, identity);
  else
    scr_kvtree_unset(meta, SCR_FILEMAP_KEY_FLUSHED_COPY);
}

void scr_flush_copy_attached(int id)
{
  /* files the preload layer attached to the complete dataset (the pointer to
   * it) go along to their places, but are not part of it */
  scr_kvtree* attached = scr_kvtree_get(scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, id), "RANK",
                                                              scr.rank), "ATTACHED");
  for (scr_kvtree_elem* e = scr_kvtree_first(attached); e; e = scr_kvtree_next(e)) {
    char* dst = scr_flush_destination(scr_kvtree_elem_tree(e));
    if (dst && scr_io_copy_file(scr_kvtree_elem_key(e), dst, 0777, NULL, NULL) != SCR_SUCCESS)
      scr_err("flush of dataset %d: copying %s to %s failed: %s", id, scr_kvtree_elem_key(e), dst,
              strerror(errno));
    free(dst);
  }
}

/* copy this rank's files; fills rank2file RANK/<rank>/... ; returns 1 on
 * success. retry: an earlier flush of the dataset was interrupted, and may
 * have left temporary copies beside the files. *moved (when not NULL): a
 * file whose earlier copy now lies at its destination, moved there with it,
 * is taken as it is, and counted there; its bytes are those of the cache. */
static int scr_flush_copy_files(int id, scr_kvtree* rank2file, int retry, uint64_t* moved)
{
  int ok = 1;
  scr_kvtree* mine = scr_flush_rank2file_start(id, rank2file);
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, id, scr.rank);
  /* LINK/<group>/{DST, SIZE, CRC}: the copy made of each file with several
   * names (hard links of one another), which its other names link to */
  scr_kvtree* linked = scr_kvtree_new();
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e && ok; e = scr_kvtree_next(e)) {
    const char* src = scr_kvtree_elem_key(e);
    scr_kvtree* meta = scr_kvtree_elem_tree(e);
    char* dst = scr_flush_destination(meta);
    uint32_t crc = 0;
    uint64_t size = 0;
    int rc;
    if (!dst) { ok = 0; break; }
    const char* recorded = scr_kvtree_get_val(meta, "CRC");
    const char* group = scr_kvtree_get_val(meta, SCR_FILEMAP_KEY_LINK);
    scr_kvtree* first = group ? scr_kvtree_get_kv(linked, "LINK", group) : NULL;
    if (first) {
      /* another name of a file copied already: the same file there too */
      const char* to = scr_kvtree_get_val(first, "DST");
      struct stat a, b;
      rc = stat(to, &a) == 0 && stat(dst, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino
               ? SCR_SUCCESS : scr_io_link_file(to, dst, 0777);
      scr_kvtree_get_uint64(first, "SIZE", &size);
      crc = (uint32_t) strtoul(scr_kvtree_get_val(first, "CRC"), NULL, 16);
      if (rc == SCR_SUCCESS && moved) (*moved)++;
    } else if (moved && (recorded || !scr.crc_on_flush) && scr_flush_copy_is_in_place(meta, dst)) {
      /* what check_copy then compares with the filemap is the filemap's */
      scr_kvtree_get_uint64(meta, "SIZE", &size);
      crc = recorded ? (uint32_t) strtoul(recorded, NULL, 16) : 0;
      rc = SCR_SUCCESS;
      (*moved)++;
    } else {
      if (retry) scr_io_remove_stale_copies(dst);
      if (strcmp(src, dst) == 0) {
        /* cache bypass: the file already is where it belongs */
        rc = scr.crc_on_flush ? scr_io_crc32_file(src, &crc, &size) : scr_io_file_size(src, &size);
      } else if (recorded && scr.crc_on_flush) {
        /* checked before the copy is trusted: a byte flipped in cache never
         * replaces what the prefix directory holds at that name */
        rc = scr_io_copy_file_expecting(src, dst, 0755, (uint32_t) strtoul(recorded, NULL, 16), &crc, &size);
        if (rc == SCR_ERR_CORRUPT) rc = SCR_SUCCESS; /* scr_flush_check_copy says what it is */
      } else {
        rc = scr_io_copy_file(src, dst, 0777, &crc, &size);
      }
    }
    ok = scr_flush_check_copy(id, src, dst, meta, rc, size, crc, mine);
    if (ok && group && !first) {
      scr_kvtree* made = scr_kvtree_add_kv(linked, "LINK", group);
      scr_kvtree_set_kv(made, "DST", dst);
      scr_kvtree_set_kv_uint64(made, "SIZE", size);
      scr_kvtree_set_kvf(made, "CRC", "0x%08x", crc);
    }
    free(dst);
    scr_fault_point("flush"); /* a file on the prefix directory, the dataset not yet */
  }
  scr_kvtree_delete(&linked);
  if (ok) scr_flush_copy_attached(id);
  /* the files are on the prefix directory whatever becomes of this copy */
  if (ok && scr.flush_redundancy) scr_flush_redundancy_copy(id, mine, NULL);
  return ok;
}

static int scr_flush_write_metadata(int id, const scr_kvtree* desc, const scr_kvtree* rank2file, int current)
{
  int rc = scr_publish_metadata(scr.prefix, id, desc, rank2file, current, 1);
  if (rc != SCR_SUCCESS)
    scr_err("flush of dataset %d: cannot write its metadata under %s: %s", id, scr.prefix_scr,
            scr_error_string(rc));
  return rc;
}

int scr_flush_prepare(int id)
{
  int rc = scr.rank == 0 ? scr_flush_prepare_local(id) : SCR_SUCCESS;
  MPI_Bcast(&rc, 1, MPI_INT, 0, scr.comm_world);
  return rc;
}

int scr_flush_prepare_local(int id)
{
  /* rank 0 prepares the dataset directory; the flush file says FLUSHING so a
   * crash in the middle is recognisable */
  int rc = SCR_SUCCESS;
  {
    const char* name = scr_dataset_get_name(scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC"));
    char* dir = scr_summary_dataset_dir(scr.prefix, id);
    /* a planted symbolic link there would take the summary elsewhere */
    rc = !dir ? SCR_ERR_NOMEM : scr_io_check_own_dir(dir) != SCR_SUCCESS ? SCR_ERR_SECURITY : scr_io_mkdir_p(dir, 0777);
    if (rc != SCR_SUCCESS && rc != SCR_ERR_SECURITY) scr_err("cannot create %s: %s", dir ? dir : "", strerror(errno));
    /* the preload layer's flush copies into a stage it then publishes: the
     * stage says the flush is under way (scr_publish_list), and a crash
     * leaves nothing at the program's paths for the next flush to clean */
    if (rc == SCR_SUCCESS && scr.flush_publish) rc = scr_flush_publish_open(id);
    else if (rc == SCR_SUCCESS) scr_flush_file_set_location(scr.prefix, id, name, SCR_FLUSH_FILE_FLUSHING);
    free(dir);
  }
  return rc;
}

/* the dataset's total size as its descriptor records it (0 when unknown) */
static unsigned long long scr_flush_dataset_bytes(int id)
{
  uint64_t bytes = 0;
  scr_kvtree_get_uint64(scr_kvtree_get(scr_filemap_get_dataset(scr.filemap, id), "DSETDESC"), "SIZE", &bytes);
  return (unsigned long long) bytes;
}

void scr_flush_log_start(int id, const char* mode)
{
  scr_event_log("FLUSH_START", "dset=%d mode=%s bytes=%llu", id, mode, scr_flush_dataset_bytes(id));
}

int scr_flush_finish(int id, int ok, const scr_kvtree* rank2file, double start, int current, const char* mode)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  scr_kvtree* desc = scr_kvtree_get(dset, "DSETDESC");
  const char* name = scr_dataset_get_name(desc);
  int rc = SCR_SUCCESS;
  /* a dataset that left the cache meanwhile is neither indexed nor listed */
  ok = scr_mpi_all_true(ok && dset, scr.comm_world);
  scr_kvtree* all = scr_kvtree_new();
  if (ok) scr_mpi_gather_kvtree(rank2file, all, 0, scr.comm_world);
  if (ok && scr.rank == 0) {
    scr_kvtree_set_kv_int(all, "RANKS", scr.ranks);
    rc = scr_flush_write_metadata(id, desc, all, current);
  }
  if (!ok && scr.rank == 0 && dset) scr_flush_file_set_location(scr.prefix, id, name, SCR_FLUSH_FILE_CACHE);
  if (!ok) rc = SCR_ERR_IO;
  MPI_Bcast(&rc, 1, MPI_INT, 0, scr.comm_world);
  scr_kvtree_delete(&all);
  return scr_flush_recorded(id, rc, start, mode);
}

int scr_flush_recorded(int id, int rc, double start, const char* mode)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  const char* name = scr_dataset_get_name(scr_kvtree_get(dset, "DSETDESC"));
  if (rc == SCR_SUCCESS) {
    scr_kvtree_set_kv_int(dset, "FLUSHED", 1);
    scr_cache_save_filemap();
    double seconds = scr_log_seconds() - start;
    if (scr.rank == 0) scr_dbg(1, "flushed dataset %d (%s) to %s in %.3f s", id, name, scr.prefix, seconds);
    scr_event_log("FLUSH_COMPLETE", "dset=%d name=%s mode=%s bytes=%llu seconds=%.3f", id, name, mode,
                  scr_flush_dataset_bytes(id), seconds);
  } else {
    scr_event_log("FLUSH_FAILED", "dset=%d name=%s mode=%s seconds=%.3f", id, name ? name : "?", mode,
                  scr_log_seconds() - start);
  }
  if (rc != SCR_SUCCESS && scr.rank == 0) {
    scr_err("dataset %d (%s) was not flushed to %s%s", id, name ? name : "?", scr.prefix,
            dset ? "; it stays in cache" : ": it left the cache meanwhile");
    /* a flush that publishes began without listing it (its stage did) */
    if (dset) scr_flush_file_set_location(scr.prefix, id, name, SCR_FLUSH_FILE_CACHE);
  }
  return rc;
}

/* the synchronous flush; moved as scr_flush_copy_files', current as scr_flush_finish's */
static int scr_flush_dataset_copying(int id, uint64_t* moved, int current)
{
  /* one flush at a time: a background one is finished first (even of this
   * dataset: it may have copied bytes that changed since) */
  scr_flush_async_wait();
  double start = scr_log_seconds();
  int retry = scr.rank == 0 && scr_flush_file_was_flushing(scr.prefix, id);
  MPI_Bcast(&retry, 1, MPI_INT, 0, scr.comm_world);
  scr_flush_log_start(id, "sync");
  int rc = scr_flush_prepare(id);
  if (rc != SCR_SUCCESS) return scr_flush_recorded(id, rc, start, "sync");
  if (scr.flush_publish) return scr_flush_publish(id, NULL, current, start, "sync", moved);
  scr_kvtree* rank2file = scr_kvtree_new();
  int ok = scr_flush_copy_files(id, rank2file, retry, moved);
  rc = scr_flush_finish(id, ok, rank2file, start, current, "sync");
  scr_kvtree_delete(&rank2file);
  return rc;
}

int scr_flush_dataset(int id)
{
  return scr_flush_dataset_copying(id, NULL, 1);
}

int scr_flush_dataset_again(int id, int current, uint64_t* copied)
{
  uint64_t files = (uint64_t) scr_kvtree_size(scr_filemap_get_files(scr.filemap, id, scr.rank)), moved = 0;
  int rc = scr_flush_dataset_copying(id, &moved, current);
  uint64_t mine = files - moved;
  MPI_Allreduce(&mine, copied, 1, MPI_UINT64_T, MPI_SUM, scr.comm_world);
  return rc;
}
