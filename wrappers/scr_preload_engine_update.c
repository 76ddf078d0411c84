/* scr_preload_engine_update.c - files of completed datasets changed in place (an
 * HDF5 file reopened read-write, a header rewritten, truncate): kept exact, then re-protected. */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_flush.h"
#include "scr_reddesc.h"
#include "scr_redundancy.h"
#include "scr_preload_engine_impl.h"

/* A completed dataset's files carry the size and CRC they had at completion,
 * and its redundancy (XOR, RS parity, PARTNER copies) encodes those bytes.
 * A program that changes such a file in place would leave both stale: the
 * restart's check would then reject the newest checkpoint, and a rebuild
 * after a node loss could mix old and new bytes. So, before the first byte
 * changes, the file's entry is marked incomplete and the dataset's
 * redundancy stale (REDUNDANCY_STALE), on disk: a crash in the middle makes
 * the dataset unrestorable, not half-changed. When the file is closed its
 * size and CRC are read again and it is complete once more; a dataset
 * whose bytes changed waits in `dirty` for the next point where every rank
 * takes part anyway (the next completion, a barrier of BOUNDARY=BARRIER
 * rules, MPI_Finalize), which encodes its redundancy again and flushes it
 * again if it was flushed. Until then a restart may use it only if no part
 * of it needs rebuilding (scr_redundancy_recover). */

#define STALE_KEY SCR_FILEMAP_KEY_REDUNDANCY_STALE

/* datasets this rank changed whose redundancy is not encoded again yet,
 * and how many in-place opens each has on this rank now */
static struct update_dataset {
  int id;
  int open;                 /* descriptors of its files open for update */
  int changed;              /* some byte changed since its redundancy was encoded */
} *updates = NULL;
static size_t update_count = 0, update_capacity = 0;

static struct update_dataset* update_find(int id, int make)
{
  for (size_t i = 0; i < update_count; i++)
    if (updates[i].id == id) return &updates[i];
  if (!make) return NULL;
  if (update_count == update_capacity) {
    size_t capacity = update_capacity ? 2 * update_capacity : 4;
    struct update_dataset* grown = realloc(updates, capacity * sizeof(*updates));
    if (!grown) return NULL;
    updates = grown;
    update_capacity = capacity;
  }
  updates[update_count] = (struct update_dataset) { id, 0, 0 };
  return &updates[update_count++];
}

static void update_forget(int id)
{
  for (size_t i = 0; i < update_count; i++)
    if (updates[i].id == id) {
      updates[i] = updates[--update_count];
      return;
    }
}

static void update_mark_stale(int id, int stale)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  if (stale) scr_kvtree_set_kv_int(dset, STALE_KEY, 1);
  else scr_kvtree_unset(dset, STALE_KEY);
}

static int scr_engine_update_is_stale(int id)
{
  long long stale = 0;
  scr_kvtree_get_int(scr_filemap_get_dataset(scr.filemap, id), STALE_KEY, &stale);
  return stale != 0;
}

/* the entry of this rank's file `cache` in dataset id, or NULL */
static scr_kvtree* update_entry(int id, const char* cache)
{
  return scr_kvtree_get(scr_filemap_get_files(scr.filemap, id, scr.rank), cache);
}

struct scr_engine_file* scr_engine_update_begin(int dataset, const char* orig, const char* relpath,
                                                const char* cache)
{
  scr_kvtree* meta = update_entry(dataset, cache);
  struct update_dataset* u = meta ? update_find(dataset, 1) : NULL;
  struct scr_engine_file* f = u ? scr_engine_file_new(dataset, 0, orig, relpath, cache) : NULL;
  if (!f) return NULL;
  /* what it held when it was protected, to tell whether it changed */
  const char* crc = scr_kvtree_get_val(meta, "CRC");
  uint64_t size = 0;
  if (crc) {
    f->before_crc = (uint32_t) strtoul(crc, NULL, 16);
    scr_kvtree_get_uint64(meta, "SIZE", &size);
    f->before_size = size;
  } else if (scr_io_crc32_file(cache, &f->before_crc, &f->before_size) != SCR_SUCCESS) {
    f->before_size = UINT64_MAX;
  }
  f->updating = 1;
  u->open++;
  scr_kvtree_set_kv_int(meta, "COMPLETE", 0);
  update_mark_stale(dataset, 1);
  if (scr_cache_save_filemap() != SCR_SUCCESS)
    scr_err("cannot record that %s is being changed in place: a crash now may leave dataset %d unreadable",
            orig, dataset);
  scr_dbg(2, "preload: %s of dataset %d opened for update in place", orig, dataset);
  return f;
}

void scr_engine_update_end(struct scr_engine_file* f)
{
  struct update_dataset* u = update_find(f->dataset, 0);
  scr_kvtree* meta = update_entry(f->dataset, f->cache);
  if (!u || !meta) return; /* the dataset left the cache meanwhile */
  u->open--;
  uint32_t crc = 0;
  uint64_t size = 0;
  if (scr_io_crc32_file(f->cache, &crc, &size) != SCR_SUCCESS) {
    scr_err("cannot read %s back after it was changed in place: dataset %d stays incomplete", f->orig,
            f->dataset);
    u->changed = 1;
    scr_cache_save_filemap();
    return;
  }
  if (crc != f->before_crc || size != f->before_size) u->changed = 1;
  if (scr.crc_on_copy || scr_kvtree_get_val(meta, "CRC")) scr_kvtree_set_kvf(meta, "CRC", "0x%08x", crc);
  scr_kvtree_set_kv_uint64(meta, "SIZE", size);
  scr_kvtree_set_kv_int(meta, "COMPLETE", 1);
  if (u->open == 0 && !u->changed) {
    /* opened read-write, left as it was: its redundancy still holds */
    update_mark_stale(f->dataset, 0);
    update_forget(f->dataset);
  }
  scr_cache_save_filemap();
}

int scr_engine_update_truncate(int dataset, const char* orig, const char* cache, off64_t length)
{
  struct scr_engine_file* f = scr_engine_update_begin(dataset, orig, "", cache);
  int rc = truncate(cache, (off_t) length);
  int saved_errno = errno;
  if (f) {
    scr_engine_update_end(f);
    scr_engine_file_free(f);
  }
  errno = saved_errno;
  return rc;
}

/* collective: dataset id, changed in place on some rank, gets its totals,
 * its redundancy and (when it had one) its copy on the prefix directory anew */
static void update_reprotect(int id)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  scr_kvtree* desc = scr_kvtree_get(dset, "DSETDESC");
  uint64_t counts[2] = { 0, 0 }, totals[2] = { 0, 0 };
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)); e;
       e = scr_kvtree_next(e)) {
    uint64_t size = 0;
    scr_kvtree_get_uint64(scr_kvtree_elem_tree(e), "SIZE", &size);
    counts[0]++;
    counts[1] += size;
  }
  MPI_Allreduce(counts, totals, 2, MPI_UINT64_T, MPI_SUM, scr.comm_world);
  scr_dataset_set_complete(desc, 1, totals[0], totals[1]);
  long long ckpt = 0;
  scr_kvtree_get_int(desc, "CKPT", &ckpt);
  double start = scr_log_seconds();
  scr_redundancy_apply(id, scr_reddesc_select((int) ckpt, scr_dataset_get_flags(desc)));
  update_mark_stale(id, 0);
  scr_cache_save_filemap();
  int flushed = scr_mpi_all_true(scr_flush_is_flushed(id), scr.comm_world);
  if (flushed) {
    scr_kvtree_unset(dset, "FLUSHED");
    if (scr_flush_dataset(id) != SCR_SUCCESS && scr.rank == 0)
      scr_err("dataset %d, changed in place, could not be flushed again: the prefix directory keeps it as it "
              "was", id);
  }
  if (scr.rank == 0)
    scr_info("preload: dataset %d was changed in place: its redundancy was encoded again%s in %.3f s", id,
             flushed ? " and it was flushed again" : "", scr_log_seconds() - start);
}

void scr_engine_update_reprotect(void)
{
  for (;;) {
    /* the newest changed dataset no descriptor on this rank has open for update */
    int mine = -1, id = -1;
    for (size_t i = 0; i < update_count; i++)
      if (updates[i].changed && updates[i].open == 0 && updates[i].id > mine) mine = updates[i].id;
    MPI_Allreduce(&mine, &id, 1, MPI_INT, MPI_MAX, scr.comm_world);
    if (id < 0) return;
    struct update_dataset* u = update_find(id, 0);
    /* the cache lets a dataset go on every rank alike: then nothing is left to do */
    if (!scr_mpi_all_true(scr_filemap_get_dataset(scr.filemap, id) != NULL, scr.comm_world)) {
      update_forget(id);
      continue;
    }
    /* a rank still changing it: the next collective point */
    if (!scr_mpi_all_true(!u || u->open == 0, scr.comm_world)) return;
    update_reprotect(id);
    update_forget(id);
  }
}

void scr_engine_update_adopt(int id)
{
  if (!scr_engine_update_is_stale(id)) return;
  struct update_dataset* u = update_find(id, 1);
  if (u) u->changed = 1;
}
