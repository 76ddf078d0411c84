/* scr_preload_engine_mapped.c - files still mapped writable when their dataset
 * completes (mmap, close, then stores): watched as changed in place until unmapped. */
#include "config.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "scr_globals.h"
#include "scr_filemap.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_preload_engine_impl.h"

/* a writable MAP_SHARED mapping of a file, as /proc/self/maps shows it */
struct engine_mapping {
  dev_t dev;
  ino_t ino;
  char* path;  /* as the kernel spells it, NULL when it did not fit */
};

/* the writable shared mappings of files in this process (malloc'd, *count
 * of them); NULL with *count 0 when there are none or maps cannot be read */
static struct engine_mapping* engine_mappings(size_t* count)
{
  *count = 0;
  /* inside the library's guard: the real fopen, no rule applies */
  FILE* maps = fopen("/proc/self/maps", "re");
  if (!maps) return NULL;
  struct engine_mapping* found = NULL;
  size_t capacity = 0;
  char* line = NULL;
  size_t size = 0;
  ssize_t n;
  while ((n = getline(&line, &size, maps)) > 0) {
    /* start-end perms offset major:minor inode [path] */
    char perms[5];
    unsigned int major_id = 0, minor_id = 0;
    unsigned long long ino = 0;
    int at = 0;
    if (line[n - 1] == '\n') line[n - 1] = '\0';
    if (sscanf(line, "%*x-%*x %4s %*x %x:%x %llu %n", perms, &major_id, &minor_id, &ino, &at) < 4) continue;
    /* only a writable shared mapping of a file carries stores into it */
    if (perms[1] != 'w' || perms[3] != 's' || ino == 0) continue;
    if (*count == capacity) {
      size_t more = capacity ? 2 * capacity : 16;
      struct engine_mapping* bigger = realloc(found, more * sizeof(*found));
      if (!bigger) break;
      found = bigger;
      capacity = more;
    }
    struct engine_mapping* m = &found[(*count)++];
    m->dev = makedev(major_id, minor_id);
    m->ino = (ino_t) ino;
    m->path = at > 0 && line[at] == '/' ? strdup(line + at) : NULL;
  }
  free(line);
  fclose(maps);
  return found;
}

/* 1 when path is the file of one of the mappings, by device and inode
 * (whatever path it was mapped by, or renamed to since) or, where a file
 * system (btrfs subvolumes) reports another device to stat than in maps,
 * by the path as well */
static int engine_is_mapped(const struct engine_mapping* maps, size_t count, const char* path)
{
  struct stat st;
  if (count == 0 || stat(path, &st) != 0) return 0;
  for (size_t i = 0; i < count; i++)
    if (maps[i].ino == st.st_ino && (maps[i].dev == st.st_dev || (maps[i].path && !strcmp(maps[i].path, path))))
      return 1;
  return 0;
}

static void engine_mappings_free(struct engine_mapping* maps, size_t count)
{
  for (size_t i = 0; i < count; i++) free(maps[i].path);
  free(maps);
}

/* A program may map a checkpoint file, close the descriptor at once and
 * store through the mapping afterwards: the close completes the dataset
 * with the bytes the file had then (zeros for a new one). Holding the
 * completion back until the mapping goes would need a meeting point that
 * every rank reaches, which a close is not. So the dataset completes as
 * usual, and each file still mapped is watched as a file opened for update
 * in place (scr_preload_engine_update.c): at the first meeting point after
 * its munmap (an MPI_Barrier on MPI_COMM_WORLD, a completion, MPI_Finalize,
 * which every rank reaches anyway) its size and CRC are taken anew and its
 * dataset is encoded and, if it is the newest checkpoint and was flushed,
 * flushed again. A mapping still there when the next dataset completes (the
 * cache may let the old one go then) or at MPI_Finalize counts as gone: the
 * dataset keeps what the mapping holds then, as it would have kept the
 * bytes written before a close. */
static struct scr_engine_file** watched = NULL;
static size_t watched_count = 0, watched_capacity = 0;

static void engine_watch(struct scr_engine_file* f)
{
  if (watched_count == watched_capacity) {
    size_t capacity = watched_capacity ? 2 * watched_capacity : 8;
    struct scr_engine_file** grown = realloc(watched, capacity * sizeof(*watched));
    if (!grown) {
      /* protected now, with what it holds: better than a record lost */
      scr_engine_update_end(f);
      scr_engine_file_free(f);
      return;
    }
    watched = grown;
    watched_capacity = capacity;
  }
  watched[watched_count++] = f;
}

/* 1 when mapping m is of a file that has no name any more: the kernel
 * appends " (deleted)" to its path, and no file of that name (with the
 * suffix) is the one mapped. A dataset's files have names. */
static int engine_mapping_unnamed(const struct engine_mapping* m)
{
  static const char suffix[] = " (deleted)";
  size_t n = m->path ? strlen(m->path) : 0, k = sizeof(suffix) - 1;
  struct stat st;
  if (n <= k || strcmp(m->path + n - k, suffix) != 0) return 0;
  return stat(m->path, &st) != 0 || st.st_ino != m->ino;
}

/* A shared writable mapping needs a descriptor open for reading and writing
 * (mmap fails with EACCES on one open O_WRONLY, as checkpoint files mostly
 * are: open(O_WRONLY|O_CREAT|O_TRUNC), fopen "w"). So /proc/self/maps, whose
 * text the kernel makes anew at every read (40% of an empty checkpoint's
 * time for one rank), is read only when a routed file was opened O_RDWR
 * since the last look: every file of the dataset completing now was opened
 * after it. (Wrapping mmap to note the mappings themselves does not work
 * under UCX, whose memory hooks patch mmap in place.) */
static int rdwr_since_look = 0;

void scr_engine_mapped_may(int flags)
{
  if ((flags & O_ACCMODE) == O_RDWR) rdwr_since_look = 1;
}

void scr_engine_mapped_watch(int id)
{
  if (!rdwr_since_look) return;
  rdwr_since_look = 0;
  size_t count = 0;
  struct engine_mapping* maps = engine_mappings(&count);
  /* An MPI library's shared memory segments are such mappings too, but
   * files it unlinked once mapped: with only those, no file of the dataset
   * is mapped, and each is not looked at (a stat per file, which with
   * hundreds of files per rank was a tenth of a checkpoint's time) */
  size_t named = 0;
  for (size_t i = 0; i < count; i++) {
    if (engine_mapping_unnamed(&maps[i])) {
      free(maps[i].path);
      continue;
    }
    maps[named++] = maps[i];
  }
  count = named;
  scr_kvtree* files = count ? scr_filemap_get_files(scr.filemap, id, scr.rank) : NULL;
  for (scr_kvtree_elem* e = scr_kvtree_first(files); e; e = scr_kvtree_next(e)) {
    const char* cache = scr_kvtree_elem_key(e);
    const char* orig = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "ORIG");
    if (!orig || !engine_is_mapped(maps, count, cache)) continue;
    char* relpath = scr_path_relative_to(scr.prefix, orig);
    struct scr_engine_file* f = relpath ? scr_engine_update_begin(id, orig, relpath, cache) : NULL;
    free(relpath);
    if (!f) {
      scr_err("%s is still mapped writable as dataset %d completes, and cannot be watched: what is stored "
              "through the mapping from now on is not protected", orig, id);
      continue;
    }
    f->mapped = 1;
    scr_dbg(1, "preload: %s is still mapped writable as dataset %d completes: it is protected again at the "
            "first meeting point after its munmap", orig, id);
    engine_watch(f);
  }
  engine_mappings_free(maps, count);
}

void scr_engine_mapped_release(const char* last_point)
{
  if (watched_count == 0) return;
  size_t count = 0;
  struct engine_mapping* maps = engine_mappings(&count);
  for (size_t i = 0; i < watched_count;) {
    struct scr_engine_file* f = watched[i];
    int still = engine_is_mapped(maps, count, f->cache);
    if (still && !last_point) {
      i++;
      continue;
    }
    if (still)
      scr_dbg(1, "preload: %s is still mapped writable at %s: dataset %d keeps what it holds now", f->orig,
              last_point, f->dataset);
    else
      scr_dbg(2, "preload: %s of dataset %d is no longer mapped", f->orig, f->dataset);
    scr_engine_update_end(f);
    scr_engine_file_free(f);
    watched[i] = watched[--watched_count];
  }
  engine_mappings_free(maps, count);
}
