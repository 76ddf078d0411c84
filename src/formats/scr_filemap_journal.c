/* scr_filemap_journal.c - the journal of routed files beside a rank's filemap: its path, its
 * records (four NUL-terminated fields: id, cache path, original path, relative path), its merge. */
#include "config.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_filemap_journal.h"
#include "scr_filemap.h"
#include "scr_dataset.h"

char* scr_filemap_journal_path(const char* cntl_dir, int rank)
{
  char* path = NULL;
  if (asprintf(&path, "%s/filemap_%d.journal", cntl_dir, rank) < 0) return NULL;
  return path;
}

size_t scr_filemap_journal_encode(char* buf, size_t size, int id, const char* cache, const char* orig,
                                  const char* relpath)
{
  char idtext[24];
  size_t lengths[4] = { (size_t) snprintf(idtext, sizeof(idtext), "%d", id) + 1, strlen(cache) + 1,
                        strlen(orig) + 1, strlen(relpath) + 1 };
  const char* fields[4] = { idtext, cache, orig, relpath };
  size_t total = lengths[0] + lengths[1] + lengths[2] + lengths[3];
  if (total > size) return total;
  for (int k = 0; k < 4; k++) {
    memcpy(buf, fields[k], lengths[k]);
    buf += lengths[k];
  }
  return total;
}

/* the whole file at fd (malloc'd, *length), NULL when out of memory */
static char* journal_read_all(int fd, size_t* length)
{
  size_t capacity = 1 << 16, used = 0;
  char* buf = malloc(capacity);
  ssize_t n;
  while (buf && (n = read(fd, buf + used, capacity - used)) > 0) {
    used += (size_t) n;
    if (used == capacity) {
      char* grown = realloc(buf, capacity * 2);
      if (!grown) break;
      buf = grown;
      capacity *= 2;
    }
  }
  *length = used;
  return buf;
}

int scr_filemap_journal_merge(const char* path, int rank, scr_kvtree* map)
{
  int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
  if (fd < 0) return 0;
  size_t length = 0;
  char* buf = journal_read_all(fd, &length);
  close(fd);
  int merged = 0;
  for (size_t at = 0; buf && at < length;) {
    const char* field[4];
    size_t p = at;
    int k = 0;
    for (; k < 4 && p < length; k++) {
      field[k] = buf + p;
      const char* end = memchr(buf + p, '\0', length - p);
      if (!end) break;
      p = (size_t) (end - buf) + 1;
    }
    if (k < 4) break;
    at = p;
    int id = atoi(field[0]);
    scr_kvtree* dset = scr_filemap_get_dataset(map, id);
    if (dset && scr_dataset_is_complete(scr_kvtree_get(dset, "DSETDESC"))) continue;
    /* A dataset the filemap does not know began after it was last written:
     * the preload layer's start of a dataset writes only here. Named without a
     * descriptor, it is incomplete, and goes with its files. (Every write of
     * the filemap empties the journal, so a record never outlives that write
     * by more than a crash between the two: then the dataset was complete
     * and is named above, or was evicted, and its files are gone already.) */
    if (!dset) scr_filemap_add_dataset(map, id);
    if (scr_kvtree_get(scr_filemap_get_files(map, id, rank), field[1])) continue;
    scr_filemap_add_file(map, id, rank, field[1], field[2], field[3]);
    merged++;
  }
  free(buf);
  return merged;
}
