/* scr_preload_share_restart.c - at restart, the files of the restored checkpoint that
 * one rank wrote for all are broadcast to every other rank, which keeps a copy. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <mpi.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_preload_engine_impl.h"
#include "scr_preload_rules.h"
#include "scr_preload_state.h"

/* why: scr_preload_share.c, which keeps the list of copies */

/* this rank's single-writer candidates of dataset id: RANK/<r>/FILE/<orig>/{CACHE, SIZE, MODE} */
static scr_kvtree* share_candidates(int id)
{
  const scr_preload_ruleset* rules = scr_preload_state_current();
  scr_kvtree* mine = scr_kvtree_new();
  scr_kvtree* files = scr_kvtree_get_or_create(scr_kvtree_add_kv_int(mine, "RANK", scr.rank), "FILE");
  scr_kvtree* list = scr_filemap_get_files(scr.filemap, id, scr.rank);
  for (scr_kvtree_elem* e = scr_kvtree_first(list); e; e = scr_kvtree_next(e)) {
    scr_kvtree* meta = scr_kvtree_elem_tree(e);
    const char* orig = scr_kvtree_get_val(meta, "ORIG");
    struct stat st;
    scr_preload_match match;
    if (!orig || stat(scr_kvtree_elem_key(e), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    int rule = scr_preload_rules_match(rules, orig, strlen(orig), &match);
    if (rule < 0 || scr_preload_rules_at(rules, rule)->has_rank) continue;
    scr_kvtree* f = scr_kvtree_get_or_create(files, orig);
    scr_kvtree_set_kv(f, "CACHE", scr_kvtree_elem_key(e));
    scr_kvtree_set_kv_uint64(f, "SIZE", (uint64_t) st.st_size);
    scr_kvtree_set_kv_int(f, "MODE", st.st_mode & 07777);
  }
  return mine;
}

/* rank 0: ITEM/<i>/{ORIG, RANK, SIZE, MODE} for the files exactly one rank named */
static void share_choose(const scr_kvtree* all, scr_kvtree* plan)
{
  scr_kvtree* writers = scr_kvtree_new();
  for (scr_kvtree_elem* r = scr_kvtree_first(scr_kvtree_get(all, "RANK")); r; r = scr_kvtree_next(r))
    for (scr_kvtree_elem* f = scr_kvtree_first(scr_kvtree_get(scr_kvtree_elem_tree(r), "FILE")); f;
         f = scr_kvtree_next(f)) {
      scr_kvtree* w = scr_kvtree_get_or_create(writers, scr_kvtree_elem_key(f));
      long long count = 0;
      scr_kvtree_get_int(w, "COUNT", &count);
      scr_kvtree_set_kv_int(w, "COUNT", count + 1);
      scr_kvtree_set_kv(w, "RANK", scr_kvtree_elem_key(r));
      scr_kvtree_set_kv(w, "SIZE", scr_kvtree_get_val(scr_kvtree_elem_tree(f), "SIZE"));
      scr_kvtree_set_kv(w, "MODE", scr_kvtree_get_val(scr_kvtree_elem_tree(f), "MODE"));
    }
  int items = 0;
  for (scr_kvtree_elem* w = scr_kvtree_first(writers); w; w = scr_kvtree_next(w)) {
    scr_kvtree* t = scr_kvtree_elem_tree(w);
    long long count = 0;
    scr_kvtree_get_int(t, "COUNT", &count);
    if (count != 1) continue;
    scr_kvtree* item = scr_kvtree_add_kv_int(plan, "ITEM", items++);
    scr_kvtree_set_kv(item, "ORIG", scr_kvtree_elem_key(w));
    scr_kvtree_set_kv(item, "RANK", scr_kvtree_get_val(t, "RANK"));
    scr_kvtree_set_kv(item, "SIZE", scr_kvtree_get_val(t, "SIZE"));
    scr_kvtree_set_kv(item, "MODE", scr_kvtree_get_val(t, "MODE"));
  }
  scr_kvtree_delete(&writers);
}

/* one file from its writer to every other rank, which keeps it with the
 * writer's permission bits (stat shows what the writer's rank shows); 1 if
 * this rank now shows it */
static int share_one(const char* orig, int owner, uint64_t size, mode_t mode, const char* cache, int id,
                     unsigned char* buf)
{
  int fd = -1;
  long long state = 0;   /* the writer's: 1 while its file reads fully */
  char* copy = NULL;
  if (scr.rank == owner) {
    fd = cache ? open(cache, O_RDONLY | O_CLOEXEC) : -1;
    state = fd >= 0;
  } else {
    copy = scr_share_copy_path(orig);
    fd = copy ? open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
    if (fd >= 0 && fchmod(fd, mode) != 0) scr_warn("cannot give %s the mode %o of %s: %s", copy, (unsigned) mode, orig,
                                                  strerror(errno));
    if (fd < 0) scr_err("cannot keep a copy of %s in %s: %s", orig, copy ? copy : "the cache", strerror(errno));
  }
  int ok = fd >= 0;
  for (uint64_t off = 0; off < size; off += scr.file_buf_size) {
    size_t n = size - off < scr.file_buf_size ? (size_t) (size - off) : scr.file_buf_size;
    if (scr.rank == owner && (!state || scr_io_pread_full(fd, buf, n, (off_t) off) != (ssize_t) n)) {
      state = 0;
      memset(buf, 0, n);  /* the others still take part in every broadcast */
    }
    MPI_Bcast(buf, (int) n, MPI_BYTE, owner, scr.comm_world);
    if (scr.rank != owner && ok && scr_io_write_full(fd, buf, n) != (ssize_t) n) ok = 0;
  }
  MPI_Bcast(&state, 1, MPI_LONG_LONG, owner, scr.comm_world);
  if (fd >= 0 && close(fd) != 0) ok = 0;
  if (scr.rank == owner) return 0;
  if (!ok || !state) {
    if (copy) unlink(copy);
    free(copy);
    scr_err("cannot show %s, written by rank %d, to this rank: it is read from the prefix directory", orig, owner);
    return 0;
  }
  scr_share_add(orig, copy, id);
  return 1;
}

void scr_share_restored(int id)
{
  scr_kvtree* mine = share_candidates(id);
  scr_kvtree* all = scr_kvtree_new();
  scr_kvtree* plan = scr_kvtree_new();
  scr_mpi_gather_kvtree(mine, all, 0, scr.comm_world);
  if (scr.rank == 0) share_choose(all, plan);
  scr_mpi_bcast_kvtree(plan, 0, scr.comm_world);
  scr_kvtree* my_files = scr_kvtree_get(scr_kvtree_get_kv_int(mine, "RANK", scr.rank), "FILE");
  /* every rank takes part in every broadcast, or none does */
  unsigned char* buf = malloc(scr.file_buf_size);
  int files = 0;
  uint64_t bytes = 0;
  scr_kvtree* items = scr_kvtree_get(plan, "ITEM");
  if (items && !scr_mpi_all_true(buf != NULL, scr.comm_world)) {
    if (scr.rank == 0) scr_err("out of memory: the files one rank wrote for all are not shown to the others");
    items = NULL;
  }
  for (scr_kvtree_elem* i = scr_kvtree_first(items); i; i = scr_kvtree_next(i)) {
    scr_kvtree* item = scr_kvtree_elem_tree(i);
    const char* orig = scr_kvtree_get_val(item, "ORIG");
    long long owner = -1, mode = 0600;
    uint64_t size = 0;
    scr_kvtree_get_int(item, "RANK", &owner);
    scr_kvtree_get_uint64(item, "SIZE", &size);
    scr_kvtree_get_int(item, "MODE", &mode);
    const char* cache = scr_kvtree_get_val(scr_kvtree_get(my_files, orig), "CACHE");
    share_one(orig, (int) owner, size, (mode_t) (mode & 07777), cache, id, buf);
    files++;
    bytes += size;
    if (scr.rank == 0) scr_dbg(1, "preload: %s, written by rank %lld, is shown to every rank", orig, owner);
  }
  if (files && scr.rank == 0)
    scr_info("preload: %d file(s) of %llu bytes that one rank wrote (rules without {rank}) are shown to every rank",
             files, (unsigned long long) bytes);
  free(buf);
  scr_kvtree_delete(&plan);
  scr_kvtree_delete(&all);
  scr_kvtree_delete(&mine);
}

