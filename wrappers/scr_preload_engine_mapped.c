/* scr_preload_engine_mapped.c - whether a file of a dataset is still mapped
 * writable and shared in this process, read from /proc/self/maps when the
 * dataset is about to complete (mmap, munmap and write are not wrapped). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "scr_globals.h"
#include "scr_filemap.h"
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

int scr_engine_mapped(int id, char* file, size_t length)
{
  size_t count = 0;
  struct engine_mapping* maps = engine_mappings(&count);
  int mapped = 0;
  scr_kvtree_elem* e;
  /* an MPI library's shared memory segments are such mappings too: the
   * dataset's files are looked at only when there is one at all */
  for (e = count ? scr_kvtree_first(scr_filemap_get_files(scr.filemap, id, scr.rank)) : NULL; e && !mapped;
       e = scr_kvtree_next(e)) {
    const char* path = scr_kvtree_elem_key(e);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    /* device and inode name the file whatever path it was mapped by (or
     * renamed to since); the path as well, where a file system (btrfs
     * subvolumes) reports another device to stat than in maps */
    for (size_t i = 0; i < count && !mapped; i++)
      mapped = maps[i].ino == st.st_ino && (maps[i].dev == st.st_dev || (maps[i].path && !strcmp(maps[i].path, path)));
    if (mapped) snprintf(file, length, "%s", path);
  }
  for (size_t i = 0; i < count; i++) free(maps[i].path);
  free(maps);
  return mapped;
}
