/* scr_preload_view.c - every dataset the cache holds, shown at its original
 * paths: opens for reading, the stat family, access and listings of rule directories. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_globals.h"
#include "scr_prefix_dir.h"
#include "scr_preload_engine_impl.h"

/* directories that exist only in the view: one whose files left it while
 * the file system lacks it (a restored checkpoint's directory removed there)
 * stays, empty, as on a file system; and when it became one (for its time,
 * scr_view_stamp_mirror) */
struct view_directory {
  char* path;
  struct timespec made;
};
static struct view_directory* view_directories = NULL;
static int view_directory_count = 0;

/* the last directory moves to slot i (the one there is gone) */
static void view_directory_drop(int i)
{
  free(view_directories[i].path);
  view_directories[i] = view_directories[--view_directory_count];
}

/* a dataset is shown while it is in progress on this rank, or complete */
static int view_shows(int id, scr_kvtree* dset)
{
  return (scr.in_output && id == scr.output_id) || scr_dataset_is_complete(scr_kvtree_get(dset, "DSETDESC"));
}

/* call visit(orig, cache, id, arg) for every file shown, newest dataset first;
 * stops when visit returns non-zero and returns that */
static int view_each(int (*visit)(const char* orig, const char* cache, int id, void* arg), void* arg)
{
  int below = -1;
  for (;;) {
    int id = scr_filemap_previous_dataset(scr.filemap, below);
    if (id < 0) return 0;
    below = id;
    scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
    if (!view_shows(id, dset)) continue;
    scr_kvtree* mine = scr_kvtree_get_kv_int(dset, "RANK", scr.rank);
    for (int list = 0; list < 2; list++) {
      scr_kvtree* files = scr_kvtree_get(mine, list ? "ATTACHED" : "FILE");
      for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
        const char* orig = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "ORIG");
        int rc = orig ? visit(orig, scr_kvtree_elem_key(e), id, arg) : 0;
        if (rc) return rc;
      }
    }
    int rc = scr_share_each(id, visit, arg);
    if (rc) return rc;
  }
}

struct view_search {
  const char* orig;
  char* cache;
  int id;
};

static int view_match(const char* orig, const char* cache, int id, void* arg)
{
  struct view_search* s = arg;
  if (strcmp(orig, s->orig) != 0) return 0;
  s->cache = strdup(cache);
  s->id = id;
  return 1;
}

/* the newest shown dataset with a prefix-directory copy of an attached file
 * (written by another rank, or on a node that was lost); a directory there
 * only leads to such copies (and stays when the copy below it is deleted):
 * it is not shown at orig, which may be a directory of the view */
static char* view_find_attached_store(const char* orig, int* dataset)
{
  char* relpath = scr_path_relative_to(scr.prefix, orig);
  if (!relpath) return NULL;
  char* found = NULL;
  for (int below = -1, id; !found && (id = scr_filemap_previous_dataset(scr.filemap, below)) >= 0; below = id) {
    scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, id);
    if (!scr_dataset_is_complete(scr_kvtree_get(dset, "DSETDESC"))) continue;
    char* store = scr_prefix_dir_attached(scr.prefix, id, relpath);
    struct stat st;
    if (store && lstat(store, &st) == 0 && S_ISREG(st.st_mode)) {
      found = store;
      *dataset = id;
    } else {
      free(store);
    }
  }
  free(relpath);
  return found;
}

/* An index of what view_each finds first for each path, so that an open
 * looks its path up instead of passing over every file of every cached
 * dataset (with many small files per checkpoint that pass, made twice per
 * routed open, cost more than the open itself and grew with the cache). It
 * holds while no key-value tree changed (scr_kvtree_changes), the list of
 * shared copies did not change, and the same dataset is in progress; a file
 * routed into it is added in place (scr_view_routed), anything else makes
 * the next look-up build it anew. */
struct view_slot {
  char* orig;   /* NULL: free */
  char* cache;
  int id;
  uint32_t hash;
};
static struct {
  struct view_slot* slots;
  size_t cap, count;  /* cap a power of two, at most half used */
  int valid;
  unsigned long changes, share_changes;
  const scr_kvtree* filemap;
  int in_output, output_id;
} view_index;

static uint32_t view_hash(const char* s)
{
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char) *s) * 16777619u;
  return h;
}

static void view_index_clear(void)
{
  for (size_t i = 0; i < view_index.cap; i++) {
    free(view_index.slots[i].orig);
    free(view_index.slots[i].cache);
  }
  free(view_index.slots);
  view_index.slots = NULL;
  view_index.cap = view_index.count = 0;
  view_index.valid = 0;
}

static struct view_slot* view_index_slot(const char* orig, uint32_t hash)
{
  size_t mask = view_index.cap - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    struct view_slot* s = &view_index.slots[i];
    if (!s->orig || (s->hash == hash && strcmp(s->orig, orig) == 0)) return s;
  }
}

/* orig shown as cache of dataset id, unless it is there already and
 * replace is 0; 0, or -1 when out of memory (the index is then unusable) */
static int view_index_put(const char* orig, const char* cache, int id, int replace)
{
  if ((view_index.count + 1) * 2 > view_index.cap) {
    size_t cap = view_index.cap ? view_index.cap * 2 : 256;
    struct view_slot* slots = calloc(cap, sizeof(*slots));
    if (!slots) return -1;
    struct view_slot* old = view_index.slots;
    size_t old_cap = view_index.cap;
    view_index.slots = slots;
    view_index.cap = cap;
    for (size_t i = 0; i < old_cap; i++)
      if (old[i].orig) *view_index_slot(old[i].orig, old[i].hash) = old[i];
    free(old);
  }
  uint32_t hash = view_hash(orig);
  struct view_slot* s = view_index_slot(orig, hash);
  if (s->orig && !replace) return 0;
  char* c = strdup(cache);
  char* o = s->orig ? s->orig : strdup(orig);
  if (!c || !o) {
    free(c);
    if (o != s->orig) free(o);
    return -1;
  }
  if (!s->orig) view_index.count++;
  free(s->cache);
  s->orig = o;
  s->cache = c;
  s->id = id;
  s->hash = hash;
  return 0;
}

static int view_index_holds(void)
{
  return view_index.valid && view_index.changes == scr_kvtree_changes() &&
         view_index.share_changes == scr_share_changes && view_index.filemap == scr.filemap &&
         view_index.in_output == scr.in_output && view_index.output_id == scr.output_id;
}

static void view_index_stamp(void)
{
  view_index.valid = 1;
  view_index.changes = scr_kvtree_changes();
  view_index.share_changes = scr_share_changes;
  view_index.filemap = scr.filemap;
  view_index.in_output = scr.in_output;
  view_index.output_id = scr.output_id;
}

static int view_index_visit(const char* orig, const char* cache, int id, void* arg)
{
  (void) arg;
  return view_index_put(orig, cache, id, 0) != 0;  /* view_each's order: the first one wins */
}

/* 1 when the index may be used */
static int view_index_ready(void)
{
  if (view_index_holds()) return 1;
  view_index_clear();
  if (view_each(view_index_visit, NULL)) {
    view_index_clear();
    return 0;
  }
  view_index_stamp();
  return 1;
}

void scr_view_routed(unsigned long before, const char* orig, const char* cache, int id)
{
  /* the dataset in progress is the newest: its file is found first */
  int holds = view_index.valid && view_index.changes == before && view_index.share_changes == scr_share_changes &&
              view_index.filemap == scr.filemap && view_index.in_output == scr.in_output &&
              view_index.output_id == scr.output_id && scr.in_output && id == scr.output_id;
  if (holds && view_index_put(orig, cache, id, 1) == 0) view_index_stamp();
  else view_index.valid = 0;
}

char* scr_view_find(const char* orig, int* dataset)
{
  char* cache = scr_view_find_cached(orig, dataset);
  return cache ? cache : view_find_attached_store(orig, dataset);
}

char* scr_view_find_cached(const char* orig, int* dataset)
{
  if (view_index_ready()) {
    struct view_slot* s = view_index.cap ? view_index_slot(orig, view_hash(orig)) : NULL;
    if (s && s->orig) {
      char* cache = strdup(s->cache);
      if (cache) *dataset = s->id;
      return cache;
    }
  } else {
    struct view_search s = { orig, NULL, -1 };
    if (view_each(view_match, &s)) {
      *dataset = s.id;
      return s.cache;
    }
  }
  return NULL;
}

void scr_view_forget_inherited(void)
{
  view_directories = NULL;
  view_directory_count = 0;
}

void scr_view_add_directory(const char* path)
{
  struct view_directory* grown =
      realloc(view_directories, (size_t) (view_directory_count + 1) * sizeof(*view_directories));
  if (!grown) return;
  view_directories = grown;
  struct view_directory* d = &view_directories[view_directory_count];
  d->path = strdup(path);
  clock_gettime(CLOCK_REALTIME, &d->made);
  if (d->path) view_directory_count++;
}

static int view_holds(const char* orig, const char* cache, int id, void* arg)
{
  (void) cache;
  (void) id;
  const char* dir = arg;
  return scr_path_is_within(orig, dir) && strcmp(orig, dir) != 0;
}

static int view_peer_holds(const char* orig, int id, void* arg)
{
  return view_holds(orig, NULL, id, arg);
}

/* 1 when a file shown, this rank's or another's, lies below dir */
static int view_holds_any(const char* dir)
{
  return view_each(view_holds, (void*) dir) || scr_peers_each(view_peer_holds, (void*) dir);
}

int scr_view_is_directory(const char* path)
{
  for (int i = 0; i < view_directory_count; i++)
    if (scr_path_is_within(view_directories[i].path, path)) return 1;
  return view_holds_any(path);
}

struct view_entries {
  int (*visit)(const char* orig, const char* shown, int is_directory, void* arg);
  void* arg;
};

static int view_entry_file(const char* orig, const char* cache, int id, void* arg)
{
  (void) id;
  const struct view_entries* v = arg;
  return v->visit(orig, cache, 0, v->arg);
}

int scr_view_each_entry(int (*visit)(const char* orig, const char* shown, int is_directory, void* arg), void* arg)
{
  struct view_entries v = { visit, arg };
  int rc = view_each(view_entry_file, &v);
  for (int i = 0; !rc && i < view_directory_count; i++) rc = visit(view_directories[i].path, NULL, 1, arg);
  return rc;
}

void scr_view_rename_directories(const char* from, const char* to)
{
  size_t n = strlen(from);
  for (int i = 0; i < view_directory_count; i++) {
    const char* d = view_directories[i].path;
    if (strncmp(d, from, n) != 0 || (d[n] != '/' && d[n] != '\0')) continue;
    size_t length = strlen(to) + strlen(d + n) + 1;
    char* moved = malloc(length);
    if (!moved) continue;
    snprintf(moved, length, "%s%s", to, d + n);
    free(view_directories[i].path);
    view_directories[i].path = moved;
  }
}

void scr_view_forget_directories(const char* path, int only_real)
{
  struct stat st;
  for (int i = 0; i < view_directory_count;) {
    if (scr_path_is_within(view_directories[i].path, path) &&
        (!only_real || lstat(view_directories[i].path, &st) == 0)) {
      view_directory_drop(i);
    } else {
      i++;
    }
  }
}

int scr_view_remove_directory(const char* path, int remove)
{
  if (view_holds_any(path)) return SCR_VIEW_DIRECTORY_NOT_EMPTY;
  int found = -1;
  for (int i = 0; i < view_directory_count; i++) {
    if (strcmp(view_directories[i].path, path) == 0) found = i;
    else if (scr_path_is_within(view_directories[i].path, path)) return SCR_VIEW_DIRECTORY_NOT_EMPTY;
  }
  if (found < 0) return SCR_VIEW_DIRECTORY_UNKNOWN;
  if (!remove) return SCR_VIEW_DIRECTORY_REMOVED;
  view_directory_drop(found);
  return SCR_VIEW_DIRECTORY_REMOVED;
}

/* ---- the times of a virtual directory: its mirror's (which stat shows)
 *
 * A mirror is made when the directory is first looked at, and refilled
 * later, so its own times are those of the layer's work, not of the
 * application's: the checkpoints' directories would all look as old (and
 * after a restart, as new as the restart), and a program taking the newest
 * checkpoint by its directory's time (ls -td ckpt.*) would take any. Its
 * modification time is made instead the newest of the modification times
 * of the cached files shown below the directory and of the times the
 * directories at or below it were made by mkdir in this run: no earlier than
 * anything written in it, ordered as the checkpoints were written, and the
 * same after a restart, from the cached files. It is set when the mirror is
 * made or refilled (scr_mirror_directory), not at every stat, which would
 * cost a stat of every file below. Unlike a file system's it does not
 * advance between refills, nor when an entry is renamed or removed (unless
 * the last, which leaves the directory kept, made anew), it counts files in
 * subdirectories too, and a time set with utime lasts until the next refill.
 * The change time cannot be set: it is when the layer last set the
 * modification time. */

struct view_newest {
  const char* dir;
  struct timespec newest;
};

static void view_newer(struct view_newest* n, const struct timespec* t)
{
  if (t->tv_sec > n->newest.tv_sec || (t->tv_sec == n->newest.tv_sec && t->tv_nsec > n->newest.tv_nsec))
    n->newest = *t;
}

static int view_newest_file(const char* orig, const char* cache, int id, void* arg)
{
  (void) id;
  struct view_newest* n = arg;
  struct stat st;
  if (scr_path_is_within(orig, n->dir) && strcmp(orig, n->dir) != 0 && stat(cache, &st) == 0)
    view_newer(n, &st.st_mtim);
  return 0;
}

void scr_view_stamp_mirror(const char* dir, const char* mirror)
{
  struct view_newest n = { dir, { 0, 0 } };
  view_each(view_newest_file, &n);
  for (int i = 0; i < view_directory_count; i++)
    if (scr_path_is_within(view_directories[i].path, dir)) view_newer(&n, &view_directories[i].made);
  struct stat st;
  if (n.newest.tv_sec == 0 || lstat(mirror, &st) != 0) return;
  if (st.st_mtim.tv_sec == n.newest.tv_sec && st.st_mtim.tv_nsec == n.newest.tv_nsec) return;
  struct timespec times[2] = { { 0, UTIME_OMIT }, n.newest };
  if (utimensat(AT_FDCWD, mirror, times, AT_SYMLINK_NOFOLLOW) != 0)
    scr_dbg(1, "preload: cannot set the time of %s, which stands for %s: %s", mirror, dir, strerror(errno));
}

/* ---- stat and access: a shown file is the cache file; a shown directory
 * that is not on the file system is its mirror (scr_preload_mirror.c), so
 * that stat and a descriptor opened on it agree */

static int view_redirect(const scr_preload_target* t, char* redirect, int* handled)
{
  if (!scr.initialized) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int dataset = -1;
  char* cached = NULL;
  if (t->directory) {
    if (scr_view_is_directory(t->path)) {
      cached = scr_mirror_directory(t->path, 0);
      if (!cached) cached = strdup(scr.cache_dir);
    }
  } else {
    cached = scr_view_find(t->path, &dataset);
    if (!cached) cached = scr_peers_stat_path(t->path);
  }
  if (cached) {
    snprintf(redirect, PATH_MAX, "%s", cached);
    *handled = SCR_PRELOAD_REDIRECT;
  }
  free(cached);
  pthread_mutex_unlock(&scr_engine_lock);
  return -1;
}

int scr_view_stat(const scr_preload_target* t, int at_flags, char* redirect, int* handled)
{
  (void) at_flags;
  return view_redirect(t, redirect, handled);
}

int scr_view_access(const scr_preload_target* t, int amode, int at_flags, char* redirect, int* handled)
{
  (void) amode;
  (void) at_flags;
  return view_redirect(t, redirect, handled);
}

/* ---- listings: the real entries and the shown ones, each name once */

/* each entry with the inode number stat gives for it (d_ino): the real
 * one, the cache file's, or for another rank's file its placeholder's */
struct view_listing {
  char** names;
  unsigned char* types;
  ino64_t* inodes;
  int count, next;
  struct dirent64 entry;
};

/* 1 when the listing has name already (the first entry for a name wins:
 * shown files come before the file system's entries, as stat sees them) */
static int view_listing_has(const struct view_listing* l, const char* name)
{
  for (int i = 0; i < l->count; i++)
    if (strcmp(l->names[i], name) == 0) return 1;
  return 0;
}

static void view_listing_add(struct view_listing* l, const char* name, unsigned char type, ino64_t inode)
{
  if (view_listing_has(l, name)) return;
  size_t n = (size_t) (l->count + 1);
  char** names = realloc(l->names, n * sizeof(char*));
  if (names) l->names = names;
  unsigned char* types = names ? realloc(l->types, n) : NULL;
  if (types) l->types = types;
  ino64_t* inodes = types ? realloc(l->inodes, n * sizeof(ino64_t)) : NULL;
  if (!inodes) return;
  l->inodes = inodes;
  l->names[l->count] = strdup(name);
  if (!l->names[l->count]) return;
  l->types[l->count] = type;
  l->inodes[l->count++] = inode;
}

/* the inode number of path (lstat), 0 when there is none */
static ino64_t view_inode(const char* path)
{
  struct stat st;
  return path && lstat(path, &st) == 0 ? (ino64_t) st.st_ino : 0;
}

/* the inode number stat shows for the directory path: the file system's,
 * or for one only the view shows, its mirror's */
static ino64_t view_directory_inode(const char* path)
{
  ino64_t inode = view_inode(path);
  if (!inode && path && scr_path_is_within(path, scr.prefix)) {
    char* mirror = scr_mirror_directory(path, 0);
    inode = view_inode(mirror);
    free(mirror);
  }
  return inode;
}

struct view_dir_search {
  const char* dir;
  struct view_listing* listing;
};

/* the entry directly below dir that leads to path (a file shown as the
 * file `shown`, whose inode it takes; or with shown NULL a directory), if any */
static void view_add_below(struct view_listing* l, const char* dir, const char* path, const char* shown)
{
  char* rel = scr_path_relative_to(dir, path);
  if (rel && strcmp(rel, ".") != 0) {
    char* slash = strchr(rel, '/');
    if (slash) *slash = '\0';
    if (!view_listing_has(l, rel)) {
      int is_directory = slash || !shown;
      char* below = is_directory ? scr_path_join(dir, rel) : NULL;
      view_listing_add(l, rel, is_directory ? DT_DIR : DT_REG,
                       is_directory ? view_directory_inode(below) : view_inode(shown));
      free(below);
    }
  }
  free(rel);
}

static int view_collect(const char* orig, const char* cache, int id, void* arg)
{
  (void) id;
  struct view_dir_search* s = arg;
  view_add_below(s->listing, s->dir, orig, cache);
  return 0;
}

static int view_collect_peer(const char* orig, int id, void* arg)
{
  (void) id;
  struct view_dir_search* s = arg;
  /* its placeholder is what stat shows, made now if a directory is not on
   * the way (then the entry is that directory) */
  char* rel = scr_path_relative_to(s->dir, orig);
  char* placeholder = rel && !strchr(rel, '/') ? scr_peers_stat_path(orig) : NULL;
  view_add_below(s->listing, s->dir, orig, placeholder ? placeholder : orig);
  free(placeholder);
  free(rel);
  return 0;
}

static void view_listing_free(struct view_listing* l)
{
  for (int i = 0; i < l->count; i++) free(l->names[i]);
  free(l->names);
  free(l->types);
  free(l->inodes);
  free(l);
}

DIR* scr_view_opendir(const scr_preload_target* t, char* redirect, void** dir, int* handled)
{
  (void) redirect;
  if (!scr.initialized) return NULL;
  pthread_mutex_lock(&scr_engine_lock);
  struct view_listing* l = calloc(1, sizeof(*l));
  struct view_dir_search s = { t->path, l };
  DIR* stream = NULL;
  if (l) {
    view_each(view_collect, &s);
    scr_peers_each(view_collect_peer, &s);
    for (int i = 0; i < view_directory_count; i++) view_add_below(l, t->path, view_directories[i].path, NULL);
  }
  /* a virtual directory with nothing shown below it (made by mkdir and not
   * written into yet, or left empty when the cache dropped its files) is
   * answered here too: stat says it exists, so listing it must not fail.
   * With nothing below it, only being one of the directories made by mkdir
   * can make it one (scr_view_is_directory would scan the files again) */
  int made = 0;
  for (int i = 0; l && l->count == 0 && !made && i < view_directory_count; i++)
    made = strcmp(view_directories[i].path, t->path) == 0;
  if (l && (l->count > 0 || made)) {
    /* the real entries too; this stream is ours, so it is not hooked */
    DIR* real = opendir(t->path);
    int real_errno = errno;
    if (real) {
      struct dirent64* e;
      while ((e = readdir64(real)) != NULL) view_listing_add(l, e->d_name, e->d_type, e->d_ino);
      closedir(real);
    } else if (real_errno == ENOENT || real_errno == ENOTDIR) {
      char* parent = scr_path_dirname(t->path);
      view_listing_add(l, ".", DT_DIR, view_directory_inode(t->path));
      view_listing_add(l, "..", DT_DIR, view_directory_inode(parent));
      free(parent);
    }
    /* the application's stream: a real directory that exists either way;
     * for one that exists only in the view, its mirror, so that calls
     * relative to the stream's descriptor (fstatat of each entry, as Rust's
     * DirEntry::metadata makes) reach the view */
    if (real) {
      stream = opendir(t->path);
    } else if (real_errno == ENOENT || real_errno == ENOTDIR) {
      char* mirror = scr_path_is_within(t->path, scr.prefix) ? scr_mirror_directory(t->path, 1) : NULL;
      stream = opendir(mirror ? mirror : scr.cache_dir);
      free(mirror);
    }
    if (stream) {
      *dir = l;
      *handled = SCR_PRELOAD_HANDLED;
      l = NULL;
    }
  }
  if (l) view_listing_free(l);
  pthread_mutex_unlock(&scr_engine_lock);
  return stream;
}

void scr_view_rewinddir(DIR* stream, void* dir)
{
  (void) stream;
  struct view_listing* l = dir;
  if (l) l->next = 0;
}

struct dirent64* scr_view_readdir(DIR* stream, void* dir, int* handled)
{
  (void) stream;
  struct view_listing* l = dir;
  *handled = SCR_PRELOAD_HANDLED;
  if (!l || l->next >= l->count) return NULL;
  const char* name = l->names[l->next];
  memset(&l->entry, 0, offsetof(struct dirent64, d_name));
  /* a number stat gives too; glibc's own readdir skips entries whose d_ino is 0 */
  l->entry.d_ino = l->inodes[l->next] ? l->inodes[l->next] : (ino64_t) (l->next + 1);
  l->entry.d_off = (off64_t) (l->next + 1);
  l->entry.d_reclen = (unsigned short) (offsetof(struct dirent64, d_name) + strlen(name) + 1);
  l->entry.d_type = l->types[l->next];
  snprintf(l->entry.d_name, sizeof(l->entry.d_name), "%s", name);
  l->next++;
  return &l->entry;
}

int scr_view_closedir(DIR* stream, void* dir, int* handled)
{
  (void) stream;
  (void) handled;
  if (dir) view_listing_free(dir);
  return 0;
}
