/* scr_preload_engine_rename_dir.c - a directory the program renamed: the rank that renamed
 * it moves its files at once, every other rank at the next meeting point, with a journal for crashes. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_dataset.h"
#include "scr_index_file.h"
#include "scr_globals.h"
#include "scr_cache.h"
#include "scr_flush.h"
#include "scr_flush_async.h"
#include "scr_mpi.h"
#include "scr_fault.h"
#include "scr_preload_engine_impl.h"
#include "scr_preload_state.h"

/* ---- a directory renamed. rename(2) moves everything below it at once;
 * here each rank keeps its own files in its node's cache. So the rank that
 * renames moves its files and the view's directories at once, and every
 * other rank moves its own at the next point where all ranks meet
 * (scr_engine_rename_sync: a dataset's completion, MPI_Barrier on
 * MPI_COMM_WORLD, MPI_Finalize), which is when a program that renames a
 * directory all ranks wrote in lets the others use the new name. */

static char* renamed = NULL;    /* "from\0to\0" pairs this rank renamed since the last sync */
static size_t renamed_bytes = 0;

/* one of this rank's cached files below a renamed directory */
struct tree_file {
  char* cache;
  char* orig;
  int dataset;
};

/* this rank's cached files (and files attached to its datasets) whose
 * original paths lie below dir, into *files; their count */
static size_t tree_files(const char* dir, struct tree_file** files)
{
  size_t n = strlen(dir), count = 0, capacity = 0;
  *files = NULL;
  for (int id = scr_filemap_latest_dataset(scr.filemap); id >= 0;
       id = scr_filemap_previous_dataset(scr.filemap, id)) {
    scr_kvtree* mine = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, id), "RANK", scr.rank);
    for (int list = 0; list < 2; list++) {
      for (scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(mine, list ? "ATTACHED" : "FILE")); e;
           e = scr_kvtree_next(e)) {
        const char* orig = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "ORIG");
        if (!orig || strncmp(orig, dir, n) != 0 || orig[n] != '/') continue;
        if (count == capacity) {
          capacity = capacity ? 2 * capacity : 16;
          struct tree_file* grown = realloc(*files, capacity * sizeof(**files));
          if (!grown) return count;
          *files = grown;
        }
        (*files)[count] = (struct tree_file) { strdup(scr_kvtree_elem_key(e)), strdup(orig), id };
        count++;
      }
    }
  }
  return count;
}

/* the flushed datasets this rank has files of below dir, whose copies a
 * rename of dir on the prefix directory moved */
static void engine_flushed_moved_below(const char* dir)
{
  struct tree_file* files;
  size_t count = tree_files(dir, &files);
  for (size_t i = 0; i < count; i++) {
    if (scr_flush_is_flushed(files[i].dataset)) scr_engine_update_prefix_moving(files[i].dataset);
    free(files[i].cache);
    free(files[i].orig);
  }
  free(files);
}

/* this rank's files and the view's directories at or below from move below
 * to (lock held); each file as a rename of its own: into the dataset its
 * new name gives, or out to the file system when no rule matches it */
static void engine_move_tree(const scr_preload_ruleset* rules, const char* from, const char* to)
{
  struct tree_file* files;
  size_t count = tree_files(from, &files), n = strlen(from);
  scr_view_rename_directories(from, to);
  scr_peers_rename_directory(from, to);
  scr_mirror_forget(from);
  for (size_t i = 0; i < count; i++) {
    struct tree_file* f = &files[i];
    size_t length = f->orig ? strlen(to) + strlen(f->orig + n) + 1 : 0;
    char* moved = f->cache && length ? malloc(length) : NULL;
    char* relpath = NULL;
    int rc = SCR_FAILURE;
    if (moved) {
      snprintf(moved, length, "%s%s", to, f->orig + n);
      relpath = scr_path_relative_to(scr.prefix, moved);
      scr_preload_target old = { .call = "rename", .path = f->orig, .length = strlen(f->orig), .rules = rules };
      scr_preload_target new = { .call = "rename", .path = moved, .length = strlen(moved), .rules = rules };
      old.match.rule = -1;
      new.match.rule = rules ? scr_preload_rules_match(rules, moved, new.length, &new.match) : -1;
      if (new.match.rule >= 0 && relpath) rc = scr_engine_rename_cached(f->cache, f->dataset, &new, relpath, 1);
      else rc = scr_engine_rename_out(f->cache, f->dataset, 0, &old, &new) == 0 ? SCR_SUCCESS : SCR_FAILURE;
    }
    if (rc != SCR_SUCCESS)
      scr_err("cannot move %s to %s with its directory: it stays where it was", f->orig ? f->orig : "a file",
              moved ? moved : to);
    scr_mirror_forget(f->orig);
    free(relpath);
    free(moved);
    free(f->cache);
    free(f->orig);
  }
  free(files);
  /* the old names are gone, though a file that left the view kept its
   * directory; the new ones the file system has now (files moved out to
   * it) are real */
  scr_view_forget_directories(from, 0);
  scr_view_forget_directories(to, 1);
}

/* 1 when the file system's directory path holds nothing */
static int engine_directory_empty(const char* path)
{
  DIR* d = opendir(path);
  if (!d) return 1;
  struct dirent* e;
  int empty = 1;
  while (empty && (e = readdir(d)) != NULL) empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
  closedir(d);
  return empty;
}

/* rename's answer for a directory the view shows, as the file system would
 * give it: 0, or an errno */
static int engine_rename_directory_check(const char* from, const char* to)
{
  size_t n = strlen(from);
  if (strncmp(to, from, n) == 0 && to[n] == '/') return EINVAL;
  int dataset = -1;
  char* file = scr_view_find(to, &dataset);
  free(file);
  struct stat st;
  int on_disk = lstat(to, &st) == 0;
  if (file || (on_disk && !S_ISDIR(st.st_mode))) return ENOTDIR;
  if (scr_view_remove_directory(to, 0) == SCR_VIEW_DIRECTORY_NOT_EMPTY || (on_disk && !engine_directory_empty(to)))
    return ENOTEMPTY;
  char* parent = scr_path_dirname(to);
  int error = !parent ? ENOMEM : stat(parent, &st) == 0 ? (S_ISDIR(st.st_mode) ? 0 : ENOTDIR)
                                : scr_view_is_directory(parent) ? 0 : ENOENT;
  free(parent);
  return error;
}

/* ---- the journal of directory renames. A crash between a rank's rename
 * of a directory and the next meeting point would leave the other ranks'
 * files under the old name, while the file system shows the new one (and
 * the program, seeing the rename done, relies on it). So the renaming rank
 * writes its renames since the last meeting point to
 * <prefix>/.scr/renamed.<rank>.scr before each real rename (one small write
 * on the parallel file system per directory rename, beside the program's
 * own), removes it once every rank moved its files and the datasets they
 * hold were protected under the new names, and a restart applies what a
 * run that died left there. */

/* "from\0to\0" pairs journaled since the journal was last cleared: renames
 * every rank followed stay in it until their datasets are protected again */
static char* journaled = NULL;
static size_t journaled_bytes = 0;
/* a restart follows the journal twice (scr_engine_rename_recover): says so once */
static int journal_followed = 0;

static char* journal_path(int rank)
{
  char* path = NULL;
  if (asprintf(&path, "%s/renamed.%d.scr", scr.prefix_scr, rank) < 0) return NULL;
  return path;
}

/* the renames journaled so far, saved atomically */
static void journal_save(void)
{
  scr_kvtree* tree = scr_kvtree_new();
  int i = 0;
  for (const char* p = journaled; p && p < journaled + journaled_bytes; i++) {
    const char* next = p + strlen(p) + 1;
    scr_kvtree* pair = scr_kvtree_add_kv_int(tree, "RENAME", i);
    scr_kvtree_set_kv(pair, "FROM", p);
    scr_kvtree_set_kv(pair, "TO", next);
    p = next + strlen(next) + 1;
  }
  char* path = journal_path(scr.rank);
  if (!path || scr_kvtree_write_file(path, tree) != SCR_SUCCESS)
    scr_warn("cannot record the rename of a checkpoint directory in %s: a crash before the ranks meet again "
             "leaves the other ranks' files under the old name", path ? path : scr.prefix_scr);
  free(path);
  scr_kvtree_delete(&tree);
}

/* a rename about to be made, journaled with the ones before */
static void journal_write(const char* from, const char* to)
{
  size_t a = strlen(from) + 1, b = strlen(to) + 1;
  char* grown = realloc(journaled, journaled_bytes + a + b);
  if (!grown) return;
  memcpy(grown + journaled_bytes, from, a);
  memcpy(grown + journaled_bytes + a, to, b);
  journaled = grown;
  journaled_bytes += a + b;
  journal_save();
}

static void journal_clear(void)
{
  if (!journaled) return;
  char* path = journal_path(scr.rank);
  if (path) unlink(path);
  free(path);
  free(journaled);
  journaled = NULL;
  journaled_bytes = 0;
}

void scr_engine_rename_journal_settle(void)
{
  if (scr_mpi_all_true(scr_engine_update_pending() < 0, scr.comm_world)) journal_clear();
}

/* the journals of ranks but this one: a listing, not a look per rank */
static void journal_remove_others(void)
{
  DIR* dir = opendir(scr.prefix_scr);
  for (struct dirent* e = dir ? readdir(dir) : NULL; e; e = readdir(dir)) {
    int r = -1, end = 0;
    if (sscanf(e->d_name, "renamed.%d.scr%n", &r, &end) == 1 && e->d_name[end] == '\0' && r != scr.rank)
      unlinkat(dirfd(dir), e->d_name, 0);
  }
  if (dir) closedir(dir);
}

/* 1 when the file system shows the rename from -> to done: from is gone,
 * and to is a directory or renamed again by a later pair (the pairs from
 * `later` to end) */
static int journal_rename_done(const char* from, const char* to, const char* later, const char* end)
{
  struct stat st;
  if (lstat(from, &st) == 0) return 0;
  if (lstat(to, &st) == 0 && S_ISDIR(st.st_mode)) return 1;
  for (const char* p = later; p < end;) {
    const char* next = p + strlen(p) + 1;
    if (strcmp(p, to) == 0) return 1;
    p = next + strlen(next) + 1;
  }
  return 0;
}

void scr_engine_rename_recover(void)
{
  /* rank 0 reads what every rank left, and tells the others: one listing of
   * the prefix's .scr directory, not one look per rank */
  char* pairs = NULL;
  size_t bytes = 0;
  if (scr.rank == 0) {
    DIR* dir = opendir(scr.prefix_scr);
    struct dirent* e;
    while (dir && (e = readdir(dir)) != NULL) {
      int r = -1, end = 0;
      if (sscanf(e->d_name, "renamed.%d.scr%n", &r, &end) != 1 || e->d_name[end] != '\0') continue;
      char* path = journal_path(r);
      scr_kvtree* tree = scr_kvtree_new();
      size_t before = bytes;
      if (path && scr_kvtree_read_file(path, tree) == SCR_SUCCESS) {
        for (scr_kvtree_elem* p = scr_kvtree_first(scr_kvtree_get(tree, "RENAME")); p; p = scr_kvtree_next(p)) {
          const char* from = scr_kvtree_get_val(scr_kvtree_elem_tree(p), "FROM");
          const char* to = scr_kvtree_get_val(scr_kvtree_elem_tree(p), "TO");
          size_t a = from ? strlen(from) + 1 : 0, b = to ? strlen(to) + 1 : 0;
          char* grown = a && b ? realloc(pairs, bytes + a + b) : NULL;
          if (!grown) continue;
          memcpy(grown + bytes, from, a);
          memcpy(grown + bytes + a, to, b);
          pairs = grown;
          bytes += a + b;
        }
      }
      /* one with renames goes once rank 0's own journal holds them */
      if (path && bytes == before) unlink(path);
      free(path);
      scr_kvtree_delete(&tree);
    }
    if (dir) closedir(dir);
  }
  long long length = (long long) bytes;
  MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, scr.comm_world);
  if (length == 0) return;
  if (scr.rank != 0) pairs = malloc((size_t) length);
  if (!scr_mpi_all_true(pairs != NULL, scr.comm_world)) {
    free(pairs);
    return;
  }
  MPI_Bcast(pairs, (int) length, MPI_CHAR, 0, scr.comm_world);
  /* followed below, the moves are protected at the next meeting point:
   * until then a rebuild would name the files as before again, so rank 0
   * keeps the renames in its own journal (the others' are gone) */
  free(journaled);
  journaled = NULL;
  journaled_bytes = 0;
  if (scr.rank == 0 && (journaled = malloc((size_t) length)) != NULL) {
    memcpy(journaled, pairs, (size_t) length);
    journaled_bytes = (size_t) length;
    journal_save();
    journal_remove_others();
  }
  const scr_preload_ruleset* rules = scr_preload_state_current();
  for (const char* p = pairs; p < pairs + length;) {
    const char* from = p;
    const char* to = from + strlen(from) + 1;
    /* recorded before the real rename: only one the file system shows done
     * is carried out (again: a rank that moved its files already has none
     * left under from), in the order they were made */
    p = to + strlen(to) + 1;
    if (journal_rename_done(from, to, p, pairs + length)) {
      if (scr.rank == 0 && !journal_followed) scr_info("preload: %s was renamed to %s by a run that died before every rank followed: "
                                  "they follow now", from, to);
      engine_move_tree(rules, from, to);
    }
  }
  journal_followed = 1;
  free(pairs);
}

int scr_engine_rename_directory(const scr_preload_target* from, const scr_preload_target* to, int* handled)
{
  if (!scr_path_is_within(from->path, scr.prefix) || !scr_view_is_directory(from->path)) return -1;
  *handled = SCR_PRELOAD_HANDLED;
  if (strcmp(from->path, to->path) == 0) return 0;
  int error = engine_rename_directory_check(from->path, to->path);
  struct stat st;
  /* what the file system has of it (made real, or holding other files) moves
   * there, flushed copies with it: the index stops offering their datasets
   * until the next meeting point flushes the new names */
  if (!error && lstat(from->path, &st) == 0) {
    journal_write(from->path, to->path);
    if (rename(from->path, to->path) != 0) error = errno;
    else engine_flushed_moved_below(from->path);
    if (!error) scr_fault_point("rename"); /* renamed there, no rank followed yet */
  }
  /* a new name no rule has a directory at: the files go to the file system,
   * into a real directory, which every rank sees at once */
  if (!error && !to->directory && lstat(to->path, &st) != 0 && mkdir(to->path, 0777) != 0) error = errno;
  if (!error) {
    if (scr_view_remove_directory(to->path, 0) == SCR_VIEW_DIRECTORY_REMOVED) scr_view_remove_directory(to->path, 1);
    engine_move_tree(to->rules, from->path, to->path);
    size_t a = strlen(from->path) + 1, b = strlen(to->path) + 1;
    char* grown = realloc(renamed, renamed_bytes + a + b);
    if (grown) {
      memcpy(grown + renamed_bytes, from->path, a);
      memcpy(grown + renamed_bytes + a, to->path, b);
      renamed = grown;
      renamed_bytes += a + b;
    } else {
      scr_err("cannot record the rename of %s: the other ranks' files stay below it", from->path);
    }
    scr_engine_keep_parent(from->path);
  }
  errno = error;
  return error ? -1 : 0;
}

int scr_engine_rename_pending(void)
{
  return renamed_bytes > 0;
}

void scr_engine_rename_sync(void)
{
  int mine = (int) renamed_bytes;
  int* lengths = malloc(2 * (size_t) scr.ranks * sizeof(int));
  if (!scr_mpi_all_true(lengths != NULL, scr.comm_world)) {
    free(lengths);
    return;
  }
  int* offsets = lengths + scr.ranks;
  MPI_Allgather(&mine, 1, MPI_INT, lengths, 1, MPI_INT, scr.comm_world);
  size_t total = 0;
  for (int r = 0; r < scr.ranks; r++) {
    offsets[r] = (int) total;
    total += (size_t) lengths[r];
  }
  char* all = malloc(total);
  if (scr_mpi_all_true(all != NULL, scr.comm_world)) {
    MPI_Allgatherv(renamed, mine, MPI_CHAR, all, lengths, offsets, MPI_CHAR, scr.comm_world);
    const scr_preload_ruleset* rules = scr_preload_state_current();
    for (int r = 0; r < scr.ranks; r++) {
      const char* p = all + offsets[r];
      const char* end = p + lengths[r];
      while (r != scr.rank && p < end) {
        const char* from = p;
        const char* to = from + strlen(from) + 1;
        engine_move_tree(rules, from, to);
        scr_engine_keep_parent(from);
        p = to + strlen(to) + 1;
      }
    }
    free(renamed);
    renamed = NULL;
    renamed_bytes = 0;
  }
  free(all);
  free(lengths);
  scr_flush_async_tell_moves();
}

