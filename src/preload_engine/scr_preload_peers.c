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
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_globals.h"
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
 * cached dataset, on every rank.
 * The list is kept here, MPI-free, so that a rank's child process shows it
 * too (scr_preload_child_view.c); its exchanges between ranks are in
 * scr_preload_peers_exchange.c. */

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
void scr_peers_compact(void)
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

/* ---- the records an exchange carries */

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
char* scr_peers_pack(int id, int* bytes)
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

void scr_peers_add_packed(const char* records, size_t bytes, int id, int owner)
{
  const char* p = records;
  const char* end = records + bytes;
  while (p + PEER_RECORD_FIXED < end) {
    uint64_t size = get_u64(&p), mode = get_u64(&p), sec = get_u64(&p), nsec = get_u64(&p);
    peer_add(p, id, owner, size, (uint32_t) mode, (int64_t) sec, (int64_t) nsec);
    p += strlen(p) + 1;
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

void scr_peers_forget_inherited(void)
{
  peers = NULL;
  peer_count = peer_capacity = 0;
  peer_index = NULL;
  peer_index_size = 0;
  pending = NULL;
  pending_bytes = 0;
}

void scr_peers_forget(void)
{
  for (size_t i = 0; i < peer_count; i++) free(peers[i].orig);
  free(peers);
  free(peer_index);
  free(pending);
  scr_peers_forget_inherited();
}

void scr_peers_remove_placeholders(void)
{
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

char* scr_peers_take_pending(size_t* bytes)
{
  char* taken = pending;
  *bytes = pending_bytes;
  pending = NULL;
  pending_bytes = 0;
  return taken;
}

void scr_peers_drop(const char* orig, int owner)
{
  struct peer_file* f = peer_lookup(orig);
  if (!f || f->owner != owner) return;
  free(f->orig);
  f->orig = NULL;
}

void scr_peers_move(const char* from, const char* to, int owner)
{
  struct peer_file* f = peer_lookup(from);
  if (!f || f->owner != owner) return;
  struct peer_file copy = *f;
  f->orig = NULL;
  peer_add(to, copy.dataset, copy.owner, copy.size, copy.mode, copy.mtime_sec, copy.mtime_nsec);
  free(copy.orig);
}

void scr_peers_link(const char* from, const char* to, int owner)
{
  struct peer_file* f = peer_lookup(from);
  if (!f || f->owner != owner) return;
  /* the entry may move in the table: its values first */
  struct peer_file copy = *f;
  peer_add(to, copy.dataset, copy.owner, copy.size, copy.mode, copy.mtime_sec, copy.mtime_nsec);
}

/* ---- the node's list, for the processes the ranks start
 *
 * A rank's child process (scr_preload_child_view.c) has its parent's
 * filemap on disk, but the other ranks' names live in the parent's memory.
 * The first rank of each node therefore writes what it knows, its own
 * files included, to one file in the node's control directory whenever the
 * names change at a collective (a completion, a meeting point that
 * exchanged deletions or renames, start-up): one file per node, not per
 * rank, as it is the same list on every rank of the node but for each
 * one's own files, which its children take from its filemap. Entries of
 * every dataset the writer caches are written, complete or not: a child
 * shows one when its parent's filemap says its dataset is complete, as
 * the parent does, so a completion writes the file before its own
 * collectives (which the node's other ranks cannot leave before the writer
 * has written it), without waiting for another. */

static const char peer_magic[8] = { 'S', 'C', 'R', 'P', 'E', 'E', 'R', '1' };

struct peer_buffer {
  char* data;
  size_t used, capacity;
  int failed;
};

/* room for n more bytes: where they go, or NULL */
static char* peer_reserve(struct peer_buffer* b, size_t n)
{
  if (b->failed) return NULL;
  if (b->used + n > b->capacity) {
    size_t capacity = b->capacity ? 2 * b->capacity : 65536;
    while (capacity < b->used + n) capacity *= 2;
    char* grown = realloc(b->data, capacity);
    if (!grown) {
      b->failed = 1;
      return NULL;
    }
    b->data = grown;
    b->capacity = capacity;
  }
  return b->data + b->used;
}

/* one record: dataset, owner, size, mode, mtime s, ns (8 bytes each), orig\0 */
static void peer_put(struct peer_buffer* b, int dataset, int owner, uint64_t size, uint64_t mode, uint64_t sec,
                     uint64_t nsec, const char* orig)
{
  size_t n = 6 * sizeof(uint64_t) + strlen(orig) + 1;
  char* p = peer_reserve(b, n);
  if (!p) return;
  put_u64(&p, (uint64_t) dataset);
  put_u64(&p, (uint64_t) owner);
  put_u64(&p, size);
  put_u64(&p, mode);
  put_u64(&p, sec);
  put_u64(&p, nsec);
  memcpy(p, orig, strlen(orig) + 1);
  b->used += n;
}

static char* peer_published_path(void)
{
  return scr.cntl_dir ? scr_path_join(scr.cntl_dir, SCR_PEERS_PUBLISHED) : NULL;
}

/* the first rank of the node: every name it shows, into the node's file */
void scr_peers_write_published(void)
{
  struct peer_buffer b = { NULL, 0, 0, 0 };
  char* head = peer_reserve(&b, sizeof(peer_magic));
  if (head) {
    memcpy(head, peer_magic, sizeof(peer_magic));
    b.used = sizeof(peer_magic);
  }
  for (size_t i = 0; i < peer_count; i++)
    if (peers[i].orig && scr_filemap_get_dataset(scr.filemap, peers[i].dataset))
      peer_put(&b, peers[i].dataset, peers[i].owner, peers[i].size, peers[i].mode, (uint64_t) peers[i].mtime_sec,
               (uint64_t) peers[i].mtime_nsec, peers[i].orig);
  for (int below = -1, id; (id = scr_filemap_previous_dataset(scr.filemap, below)) >= 0; below = id) {
    int bytes = 0;
    char* mine = scr_peers_pack(id, &bytes);
    for (const char* p = mine; mine && p + PEER_RECORD_FIXED < mine + bytes; p += strlen(p) + 1) {
      uint64_t size = get_u64(&p), mode = get_u64(&p), sec = get_u64(&p), nsec = get_u64(&p);
      peer_put(&b, id, scr.rank, size, mode, sec, nsec, p);
    }
    free(mine);
  }
  char* path = peer_published_path();
  char* tmp = NULL;
  int fd = -1;
  if (!b.failed && path && asprintf(&tmp, "%s.tmp.%ld", path, (long) getpid()) >= 0)
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  int ok = fd >= 0 && scr_io_write_full(fd, b.data, b.used) == (ssize_t) b.used;
  if (fd >= 0 && close(fd) != 0) ok = 0;
  if (ok && rename(tmp, path) != 0) ok = 0;
  if (!ok) {
    if (tmp) unlink(tmp);
    scr_dbg(1, "preload: cannot write %s: the programs this node's ranks start list their own files only",
            path ? path : SCR_PEERS_PUBLISHED);
  }
  free(tmp);
  free(path);
  free(b.data);
}

void scr_peers_unpublish(void)
{
  char* path = scr.node_rank == 0 ? peer_published_path() : NULL;
  if (path) unlink(path);
  free(path);
}

void scr_peers_load(void)
{
  scr_peers_forget();
  char* path = peer_published_path();
  char* data = NULL;
  size_t length = 0;
  if (path && scr_io_read_file(path, &data, &length) == SCR_SUCCESS && length >= sizeof(peer_magic) &&
      memcmp(data, peer_magic, sizeof(peer_magic)) == 0) {
    const char* p = data + sizeof(peer_magic);
    const char* end = data + length;
    while (p + 6 * sizeof(uint64_t) < end) {
      int dataset = (int) get_u64(&p), owner = (int) get_u64(&p);
      uint64_t size = get_u64(&p), mode = get_u64(&p), sec = get_u64(&p), nsec = get_u64(&p);
      size_t n = strnlen(p, (size_t) (end - p));
      if (n == (size_t) (end - p)) break;
      /* the parent's own files are its filemap's */
      if (owner != scr.rank) peer_add(p, dataset, owner, size, (uint32_t) mode, (int64_t) sec, (int64_t) nsec);
      p += n + 1;
    }
  }
  free(data);
  free(path);
}

int scr_peers_shows(const char* orig)
{
  struct peer_file* p = orig ? peer_lookup(orig) : NULL;
  return p && peer_shown(p);
}
