/* scr_cache_space.c - a full cache: predicts from the last dataset's size on each node
 * whether the next fits in the cache's free space, else it is written to the prefix directory. */
#include "config.h"
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_filemap.h"
#include "scr_globals.h"
#include "scr_cache.h"
#include "scr_mpi.h"

/* Why predict rather than catch ENOSPC: under the preload the program's
 * descriptor is the cache file and write(2) is not wrapped, and an API
 * program writes the file SCR_Route_file named itself, so a full device
 * mid-write is the program's error before SCR can see it. Reserving space
 * (fallocate) would need the size before the file is written. The previous
 * dataset's size is known, and checkpoints of one program rarely grow. */

/* the bytes a path takes on its device (blocks, not length: a file system
 * such as tmpfs allocates whole pages), a directory's with all below it */
static uint64_t scr_cache_space_used(const char* path)
{
  struct stat st;
  if (lstat(path, &st) != 0) return 0;
  uint64_t used = (uint64_t) st.st_blocks * 512;
  if (!S_ISDIR(st.st_mode)) return used;
  DIR* d = opendir(path);
  if (!d) return used;
  struct dirent* ent;
  while ((ent = readdir(d)) != NULL) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
    char* below = scr_path_join(path, ent->d_name);
    if (below) used += scr_cache_space_used(below);
    free(below);
  }
  closedir(d);
  return used;
}

/* this rank's bytes of dataset id: its files (*data, wherever they are:
 * a bypassed dataset's are on the prefix directory and say what the next
 * needs all the same) and what it holds in cache for redundancy (*red) */
static void scr_cache_dataset_bytes(int id, uint64_t* data, uint64_t* red)
{
  *data = *red = 0;
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
  scr_kvtree* mine = scr_kvtree_get_kv_int(dset, "RANK", scr.rank);
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(mine, "FILE")); e; e = scr_kvtree_next(e))
    *data += scr_cache_space_used(scr_kvtree_elem_key(e));
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(mine, "REDFILE")); e; e = scr_kvtree_next(e))
    *red += scr_cache_space_used(scr_kvtree_elem_key(e));
  for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(dset, "PARTNER")); e; e = scr_kvtree_next(e)) {
    const char* held = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "DIR");
    if (held) *red += scr_cache_space_used(held);
  }
}

/* this rank's cache bytes of the datasets the next start will evict
 * (scr_cache_make_room: down to SCR_CACHE_SIZE - 1, the newest kept) */
static uint64_t scr_cache_freed_at_next_start(void)
{
  int newest = scr_cache_newest_checkpoint();
  long long left = scr_cache_count_datasets();
  uint64_t freed = 0;
  int above = -1;
  while (left > scr.cache_size - 1) {
    int id = scr_cache_evictable_oldest(-1, newest, above);
    if (id < 0) break;
    if (!scr_cache_dataset_bypassed(id)) {
      uint64_t data = 0, red = 0;
      scr_cache_dataset_bytes(id, &data, &red);
      freed += data + red;
    }
    above = id;
    left--;
  }
  return freed;
}

/* collective over the node: the free bytes of its cache device, the least
 * any of its ranks saw */
static unsigned long long scr_cache_space_free(void)
{
  struct statvfs vfs;
  unsigned long long avail = ~0ull, node_avail = 0;
  if (statvfs(scr.cache_dir, &vfs) == 0) avail = (unsigned long long) vfs.f_bavail * vfs.f_frsize;
  scr_mpi_allreduce(&avail, &node_avail, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, scr.comm_node);
  return node_avail;
}

int scr_cache_dataset_bypassed(int id)
{
  long long bypass = 0;
  scr_kvtree_get_int(scr_filemap_get_dataset(scr.filemap, id), "BYPASS", &bypass);
  return bypass != 0;
}

int scr_cache_predict_node(int id)
{
  uint64_t data = 0, red = 0;
  if (id >= 0 && scr_filemap_get_dataset(scr.filemap, id)) {
    scr_cache_dataset_bytes(id, &data, &red);
    /* a bypassed dataset had no redundancy: the last cached one's stands in */
    if (scr_cache_dataset_bypassed(id)) red = scr.cache_red_bytes;
    else scr.cache_red_bytes = red;
  }
  /* the ranks of a node share its cache device: what they need together
   * against what it has free (the least any of them saw) */
  char* trash = scr.node_rank == 0 ? scr_cache_trash_path() : NULL;
  unsigned long long mine[3] = { data + red, scr_cache_freed_at_next_start(), trash ? scr_cache_space_used(trash) : 0 };
  unsigned long long node[3];
  free(trash);
  scr_mpi_allreduce(mine, node, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, scr.comm_node);
  /* evicted datasets wait in the trash for the reaper thread: when their
   * space makes the difference it is freed now, as the next dataset may be
   * written before the reaper gets to them */
  unsigned long long node_avail = scr_cache_space_free();
  if (node[0] > node_avail + node[1] && node[0] <= node_avail + node[1] + node[2]) {
    scr_cache_reap_now();
    node_avail = scr_cache_space_free();
  }
  int full = node[0] > 0 && node[0] > node_avail + node[1];
  if (full) {
    scr_dbg(1, "cache on %s: %llu bytes needed, %llu free", scr.hostname, node[0], node_avail + node[1]);
    scr.cache_full_need = node[0];
    scr.cache_full_free = node_avail + node[1];
    scr.cache_full_evicting = node[1] != 0;
  }
  return full;
}

void scr_cache_predict_agreed(int full, int any)
{
  if (any && !scr.cache_full && !scr.cache_bypass) {
    /* rank 0 says it once per run, with its own node's numbers (or the
     * first node's that is full, at debug level 1, per change) */
    static int warned = 0;
    if (scr.rank == 0 && !warned) {
      if (full)
        scr_warn("the cache %s cannot hold the next dataset on %s (about %llu bytes needed, %llu free%s): "
                 "datasets are written to the prefix directory %s instead while the cache is too small (said "
                 "once per run)", scr.cache_dir, scr.hostname, scr.cache_full_need, scr.cache_full_free,
                 scr.cache_full_evicting ? " once older datasets are evicted" : "", scr.prefix);
      else
        scr_warn("the cache %s cannot hold the next dataset on some node: datasets are written to the "
                 "prefix directory %s instead while the cache is too small (said once per run)",
                 scr.cache_dir, scr.prefix);
    }
    warned = 1;
  }
  scr.cache_full = any;
}

void scr_cache_predict_next(int id)
{
  /* one decision for the whole job: a dataset bypasses on every rank or on
   * none, so its flush and redundancy stay collective */
  int full = scr_cache_predict_node(id), any = 0;
  MPI_Allreduce(&full, &any, 1, MPI_INT, MPI_MAX, scr.comm_world);
  scr_cache_predict_agreed(full, any);
}
