/* scr_preload_peers.c - the names of other ranks' cached files, so that every
 * rank lists, stats and deletes one namespace of checkpoint files, as on a file system. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <mpi.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_preload_engine_impl.h"
#include "scr_preload_rules.h"
#include "scr_preload_state.h"

/* A rank's cache holds the files it wrote; on the parallel file system every
 * rank would see every rank's. When a dataset completes (a collective) the
 * ranks exchange the names of their files of it, with size, mode and time,
 * so that a listing of a checkpoint directory on any rank shows all of
 * them, stat answers for each (from a sparse placeholder of the same size,
 * mode and time in node-local storage, made on demand: its bytes are never
 * read) and a rank can delete any of them. Contents stay where they were
 * written: opening another rank's file that was not flushed still fails.
 * Changes after the completion travel at the next meeting point of the
 * ranks: each rank's deletions and renames of files of completed datasets,
 * whoever's they were, are exchanged there, and each owner then deletes
 * what others deleted of its files. Memory: one entry per file of each
 * cached dataset, on every rank. */

struct peer_file {
  char* orig;       /* absolute path shown; NULL once deleted */
  int dataset;
  int owner;
  uint64_t size;
  uint32_t mode;
  int64_t mtime_sec;
  int64_t mtime_nsec;
};

static struct peer_file* peers = NULL;
static size_t peer_count = 0, peer_capacity = 0;
/* open addressing over peers[] by path: index + 1, 0 for empty */
static size_t* peer_index = NULL;
static size_t peer_index_size = 0;

/* what this rank changed since the last exchange: records "D\0id\0owner\0orig\0"
 * (deleted), "R\0id\0owner\0from\0to\0" (renamed) and "L\0id\0owner\0from\0to\0"
 * (another name, a hard link, given to the file from) */
static char* pending = NULL;
static size_t pending_bytes = 0;

static uint64_t peer_hash(const char* s)
{
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char) *s) * 1099511628211ULL;
  return h;
}

static void peer_reindex(void)
{
  size_t size = 64;
  while (size < 2 * peer_count + 1) size *= 2;
  size_t* index = calloc(size, sizeof(size_t));
  if (!index) return;
  free(peer_index);
  peer_index = index;
  peer_index_size = size;
  for (size_t i = 0; i < peer_count; i++) {
    if (!peers[i].orig) continue;
    size_t slot = peer_hash(peers[i].orig) & (size - 1);
    while (index[slot]) slot = (slot + 1) & (size - 1);
    index[slot] = i + 1;
  }
}

/* the entry shown at orig, or NULL */
static struct peer_file* peer_lookup(const char* orig)
{
  if (!peer_index) return NULL;
  for (size_t slot = peer_hash(orig) & (peer_index_size - 1); peer_index[slot];
       slot = (slot + 1) & (peer_index_size - 1)) {
    struct peer_file* p = &peers[peer_index[slot] - 1];
    if (p->orig && strcmp(p->orig, orig) == 0) return p;
  }
  return NULL;
}

/* a peer's entry is shown while its dataset is complete in this rank's cache */
static int peer_shown(const struct peer_file* p)
{
  scr_kvtree* dset = p->orig ? scr_filemap_get_dataset(scr.filemap, p->dataset) : NULL;
  return dset && scr_dataset_is_complete(scr_kvtree_get(dset, "DSETDESC"));
}

static void peer_add(const char* orig, int dataset, int owner, uint64_t size, uint32_t mode, int64_t sec,
                     int64_t nsec)
{
  struct peer_file* old = peer_lookup(orig);
  if (old) {
    /* a newer version of the name (another dataset, or a rename onto it) */
    free(old->orig);
    old->orig = NULL;
  }
  if (peer_count == peer_capacity) {
    size_t capacity = peer_capacity ? 2 * peer_capacity : 64;
    struct peer_file* grown = realloc(peers, capacity * sizeof(*peers));
    if (!grown) return;
    peers = grown;
    peer_capacity = capacity;
  }
  char* copy = strdup(orig);
  if (!copy) return;
  peers[peer_count++] = (struct peer_file) { copy, dataset, owner, size, mode, sec, nsec };
  if (2 * peer_count + 1 > peer_index_size) {
    peer_reindex();
  } else {
    size_t slot = peer_hash(copy) & (peer_index_size - 1);
    while (peer_index[slot]) slot = (slot + 1) & (peer_index_size - 1);
    peer_index[slot] = peer_count;
  }
}

/* entries of datasets no longer in this rank's cache, and deleted ones, go */
static void peer_compact(void)
{
  size_t kept = 0;
  for (size_t i = 0; i < peer_count; i++) {
    if (peers[i].orig && !scr_filemap_get_dataset(scr.filemap, peers[i].dataset)) {
      free(peers[i].orig);
      peers[i].orig = NULL;
    }
    if (peers[i].orig) peers[kept++] = peers[i];
  }
  peer_count = kept;
  peer_reindex();
}

/* ---- the exchange at completion */

static void put_u64(char** p, uint64_t v)
{
  memcpy(*p, &v, sizeof(v));
  *p += sizeof(v);
}

static uint64_t get_u64(const char** p)
{
  uint64_t v;
  memcpy(&v, *p, sizeof(v));
  *p += sizeof(v);
  return v;
}

#define PEER_RECORD_FIXED (4 * sizeof(uint64_t))

/* this rank's files of dataset id, as records: size, mode, mtime s, ns, orig\0 */
static char* peer_pack(int id, int* bytes)
{
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, id, scr.rank);
  size_t total = 0;
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
    const char* orig = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "ORIG");
    if (orig) total += PEER_RECORD_FIXED + strlen(orig) + 1;
  }
  char* buf = malloc(total ? total : 1);
  char* p = buf;
  for (scr_kvtree_elem* e = scr_kvtree_first(files); buf && e; e = scr_kvtree_next(e)) {
    const char* orig = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "ORIG");
    struct stat st;
    if (!orig) continue;
    if (stat(scr_kvtree_elem_key(e), &st) != 0) {
      memset(&st, 0, sizeof(st));
      st.st_mode = S_IFREG | 0644;
    }
    put_u64(&p, (uint64_t) st.st_size);
    put_u64(&p, (uint64_t) st.st_mode);
    put_u64(&p, (uint64_t) st.st_mtim.tv_sec);
    put_u64(&p, (uint64_t) st.st_mtim.tv_nsec);
    size_t n = strlen(orig) + 1;
    memcpy(p, orig, n);
    p += n;
  }
  *bytes = buf ? (int) (p - buf) : 0;
  return buf;
}

/* per rank: bytes and offsets of an exchange, made once at start-up (when
 * every rank agreed it could), so that an exchange costs no agreement on it */
static int* exchange_lengths = NULL;
static int exchange_ready = 0;

/* collective on every rank: each one's byte string, all of them in the
 * result, with exchange_lengths[r] bytes from rank r at offset
 * exchange_lengths[ranks + r] (NULL on every rank when one failed) */
static char* peer_allgather(const char* mine, int bytes)
{
  if (!exchange_ready) return NULL;
  int* lengths = exchange_lengths;
  int* offsets = lengths + scr.ranks;
  MPI_Allgather(&bytes, 1, MPI_INT, lengths, 1, MPI_INT, scr.comm_world);
  size_t total = 0;
  for (int r = 0; r < scr.ranks; r++) {
    offsets[r] = (int) total;
    total += (size_t) lengths[r];
  }
  char* all = malloc(total ? total : 1);
  if (!scr_mpi_all_true(all != NULL, scr.comm_world)) {
    free(all);
    return NULL;
  }
  MPI_Allgatherv(mine, bytes, MPI_CHAR, all, lengths, offsets, MPI_CHAR, scr.comm_world);
  return all;
}

void scr_peers_init(void)
{
  scr_peers_clear();
  exchange_lengths = malloc(2 * (size_t) scr.ranks * sizeof(int));
  exchange_ready = scr_mpi_all_true(exchange_lengths != NULL, scr.comm_world);
  if (!exchange_ready && scr.rank == 0)
    scr_warn("preload: out of memory: each rank lists only its own checkpoint files");
}

void scr_peers_gather(int id)
{
  int bytes = 0;
  char* mine = peer_pack(id, &bytes);
  char* all = peer_allgather(mine, bytes);
  free(mine);
  if (!all) {
    if (scr.rank == 0 && exchange_ready)
      scr_warn("preload: out of memory exchanging the names of dataset %d: each rank lists only its own files", id);
    return;
  }
  const int* lengths = exchange_lengths;
  const int* offsets = lengths + scr.ranks;
  for (int r = 0; r < scr.ranks; r++) {
    const char* p = all + offsets[r];
    const char* end = p + lengths[r];
    while (r != scr.rank && p + PEER_RECORD_FIXED < end) {
      uint64_t size = get_u64(&p), mode = get_u64(&p), sec = get_u64(&p), nsec = get_u64(&p);
      peer_add(p, id, r, size, (uint32_t) mode, (int64_t) sec, (int64_t) nsec);
      p += strlen(p) + 1;
    }
  }
  free(all);
}

void scr_peers_gather_cached(void)
{
  peer_compact();
  for (int below = -1;;) {
    int local = scr_filemap_previous_dataset(scr.filemap, below), id = -1;
    MPI_Allreduce(&local, &id, 1, MPI_INT, MPI_MAX, scr.comm_world);
    if (id < 0) return;
    scr_peers_gather(id);
    below = id;
  }
}

/* ---- what the view asks */

int scr_peers_each(int (*visit)(const char* orig, int id, void* arg), void* arg)
{
  for (size_t i = 0; i < peer_count; i++) {
    if (!peer_shown(&peers[i])) continue;
    int rc = visit(peers[i].orig, peers[i].dataset, arg);
    if (rc) return rc;
  }
  return 0;
}

/* this rank's directory of placeholders */
static char* peer_directory(void)
{
  char* dir = NULL;
  if (asprintf(&dir, "%s/" SCR_PEER_DIRECTORY ".%d", scr.cache_dir, scr.rank) < 0) return NULL;
  return dir;
}

char* scr_peers_stat_path(const char* orig)
{
  struct peer_file* p = peer_lookup(orig);
  if (!p || !peer_shown(p)) return NULL;
  char* dir = peer_directory();
  char* relpath = scr_path_relative_to(scr.prefix, orig);
  char* placeholder = NULL;
  if (dir && relpath && scr_path_is_safe_relative(relpath)) placeholder = scr_path_join(dir, relpath);
  free(dir);
  free(relpath);
  if (!placeholder) return NULL;
  /* made again when the peer's file changed (a newer version of the name) */
  struct stat st;
  if (lstat(placeholder, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t) st.st_size == p->size &&
      (st.st_mode & 07777) == (p->mode & 07777) && st.st_mtim.tv_sec == p->mtime_sec &&
      st.st_mtim.tv_nsec == p->mtime_nsec)
    return placeholder;
  char* parent = scr_path_dirname(placeholder);
  int fd = parent && scr_io_mkdir_p(parent, 0700) == SCR_SUCCESS
               ? open(placeholder, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)
               : -1;
  free(parent);
  struct timespec times[2] = { { 0, UTIME_OMIT }, { (time_t) p->mtime_sec, (long) p->mtime_nsec } };
  int ok = fd >= 0 && ftruncate(fd, (off_t) p->size) == 0 && fchmod(fd, (mode_t) (p->mode & 07777)) == 0 &&
           futimens(fd, times) == 0;
  if (fd >= 0) close(fd);
  if (!ok) {
    scr_dbg(1, "preload: cannot make %s, which stands for rank %d's %s: %s", placeholder, p->owner, orig,
            strerror(errno));
    free(placeholder);
    return NULL;
  }
  return placeholder;
}

void scr_peers_clear(void)
{
  for (size_t i = 0; i < peer_count; i++) free(peers[i].orig);
  free(peers);
  peers = NULL;
  peer_count = peer_capacity = 0;
  free(peer_index);
  peer_index = NULL;
  peer_index_size = 0;
  free(pending);
  pending = NULL;
  pending_bytes = 0;
  free(exchange_lengths);
  exchange_lengths = NULL;
  exchange_ready = 0;
  char* dir = peer_directory();
  if (dir) scr_io_remove_tree(dir);
  free(dir);
}

/* ---- changes, recorded here and exchanged at the next meeting point */

static void pending_add(char op, int id, int owner, const char* from, const char* to)
{
  char head[64];
  int n = snprintf(head, sizeof(head), "%c%c%d%c%d%c", op, 0, id, 0, owner, 0);
  size_t a = strlen(from) + 1, b = to ? strlen(to) + 1 : 0;
  char* grown = realloc(pending, pending_bytes + (size_t) n + a + b);
  if (!grown) {
    scr_err("preload: out of memory recording the change of %s: other ranks still show it as it was", from);
    return;
  }
  memcpy(grown + pending_bytes, head, (size_t) n);
  memcpy(grown + pending_bytes + n, from, a);
  if (b) memcpy(grown + pending_bytes + n + a, to, b);
  pending = grown;
  pending_bytes += (size_t) n + a + b;
}

int scr_peers_shows(const char* orig)
{
  struct peer_file* p = peer_lookup(orig);
  return p && peer_shown(p);
}

int scr_peers_unlink(const char* orig, int* dataset)
{
  struct peer_file* p = peer_lookup(orig);
  if (!p || !peer_shown(p)) return 0;
  *dataset = p->dataset;
  pending_add('D', p->dataset, p->owner, orig, NULL);
  free(p->orig);
  p->orig = NULL;
  return 1;
}

void scr_peers_note_deleted(int id, const char* orig)
{
  pending_add('D', id, scr.rank, orig, NULL);
}

void scr_peers_note_renamed(int id, const char* from, const char* to)
{
  pending_add('R', id, scr.rank, from, to);
}

void scr_peers_note_linked(int id, const char* from, const char* to)
{
  pending_add('L', id, scr.rank, from, to);
}

void scr_peers_rename_directory(const char* from, const char* to)
{
  const scr_preload_ruleset* rules = scr_preload_state_current();
  size_t n = strlen(from);
  int moved = 0;
  for (size_t i = 0; i < peer_count; i++) {
    const char* o = peers[i].orig;
    if (!o || strncmp(o, from, n) != 0 || o[n] != '/') continue;
    char* renamed = NULL;
    if (asprintf(&renamed, "%s%s", to, o + n) < 0) continue;
    free(peers[i].orig);
    /* a name no rule matches: its owner moves the file out to the file
     * system (engine_move_tree), where every rank sees it */
    scr_preload_match match;
    if (!rules || scr_preload_rules_match(rules, renamed, strlen(renamed), &match) < 0) {
      free(renamed);
      renamed = NULL;
    }
    peers[i].orig = renamed;
    moved = 1;
  }
  if (moved) peer_reindex();
}

int scr_peers_pending(void)
{
  return pending_bytes > 0;
}

void scr_peers_sync(void)
{
  char* all = peer_allgather(pending, (int) pending_bytes);
  free(pending);
  pending = NULL;
  pending_bytes = 0;
  if (!all) {
    if (scr.rank == 0) scr_warn("preload: out of memory exchanging deletions: other ranks may still show them");
    return;
  }
  const int* lengths = exchange_lengths;
  const int* offsets = lengths + scr.ranks;
  for (int r = 0; r < scr.ranks; r++) {
    const char* p = all + offsets[r];
    const char* end = p + lengths[r];
    while (p < end) {
      char op = *p;
      p += 2;
      int id = atoi(p);
      p += strlen(p) + 1;
      int owner = atoi(p);
      p += strlen(p) + 1;
      const char* from = p;
      p += strlen(p) + 1;
      const char* to = NULL;
      if (op == 'R' || op == 'L') {
        to = p;
        p += strlen(p) + 1;
      }
      if (r == scr.rank) continue;
      if (owner == scr.rank && op == 'D') {
        /* another rank deleted this rank's file: so does this rank */
        scr_engine_delete_own(id, from);
        continue;
      }
      struct peer_file* f = peer_lookup(from);
      if (!f || f->owner != owner) continue;
      if (op == 'D') {
        free(f->orig);
        f->orig = NULL;
      } else if (op == 'L') {
        /* the entry may move in the table: its values first */
        struct peer_file copy = *f;
        peer_add(to, copy.dataset, copy.owner, copy.size, copy.mode, copy.mtime_sec, copy.mtime_nsec);
      } else {
        struct peer_file copy = *f;
        f->orig = NULL;
        peer_add(to, copy.dataset, copy.owner, copy.size, copy.mode, copy.mtime_sec, copy.mtime_nsec);
        free(copy.orig);
      }
    }
  }
  free(all);
  peer_compact();
}
