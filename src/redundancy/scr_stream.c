/* scr_stream.c - logical stream over several files for the erasure codes.
 * CRC32 is computed piecewise as the codes visit the stream out of order, then combined. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <isa-l/crc.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_stream.h"

int scr_stream_open(struct scr_stream* s, int count, char* const* paths, const uint64_t* sizes,
                    int writing)
{
  memset(s, 0, sizeof(*s));
  s->files = calloc(count > 0 ? count : 1, sizeof(*s->files));
  s->file_count = count;
  s->writing = writing;
  for (int i = 0; i < count; i++) {
    struct scr_stream_file* f = &s->files[i];
    f->path = strdup(paths[i]);
    f->size = sizes[i];
    f->start = s->length;
    s->length += sizes[i];
    if (writing) {
      char* parent = scr_path_dirname(f->path);
      scr_io_mkdir_p(parent, 0700);
      free(parent);
      f->fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (f->fd >= 0 && ftruncate(f->fd, (off_t) f->size) != 0) {
        close(f->fd);
        f->fd = -1;
      }
    } else {
      f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
    }
    if (f->fd < 0) {
      scr_err("cannot open %s for %s: %s", f->path, writing ? "rebuilding" : "encoding",
              strerror(errno));
      for (int j = 0; j <= i; j++) {
        if (s->files[j].fd >= 0) close(s->files[j].fd);
        s->files[j].fd = -1;
      }
      return SCR_ERR_IO;
    }
  }
  return SCR_SUCCESS;
}

static void scr_stream_add_segment(struct scr_stream_file* f, uint64_t offset, const void* buf,
                                   uint64_t length)
{
  if (f->segment_count == f->segment_capacity) {
    f->segment_capacity = f->segment_capacity ? 2 * f->segment_capacity : 64;
    f->segments = realloc(f->segments, sizeof(*f->segments) * f->segment_capacity);
  }
  struct scr_stream_segment* seg = &f->segments[f->segment_count++];
  seg->offset = offset;
  seg->length = length;
  seg->crc = crc32_gzip_refl(0, (unsigned char*) buf, length);
}

/* apply fn to each file piece the stream range [offset, offset+len) covers */
static int scr_stream_span(struct scr_stream* s, uint64_t offset, unsigned char* buf, size_t len)
{
  uint64_t end = offset + len;
  for (int i = 0; i < s->file_count; i++) {
    struct scr_stream_file* f = &s->files[i];
    uint64_t lo = offset > f->start ? offset : f->start;
    uint64_t hi = end < f->start + f->size ? end : f->start + f->size;
    if (lo >= hi) continue;
    unsigned char* p = buf + (lo - offset);
    off_t at = (off_t) (lo - f->start);
    ssize_t n = s->writing ? scr_io_pwrite_full(f->fd, p, hi - lo, at)
                           : scr_io_pread_full(f->fd, p, hi - lo, at);
    if (n != (ssize_t) (hi - lo)) {
      scr_err("%s %s at offset %lld failed: %s", s->writing ? "writing" : "reading", f->path,
              (long long) at, n < 0 ? strerror(errno) : "file is shorter than recorded");
      return SCR_ERR_IO;
    }
    scr_stream_add_segment(f, (uint64_t) at, p, hi - lo);
  }
  return SCR_SUCCESS;
}

int scr_stream_read(struct scr_stream* s, uint64_t offset, void* buf, size_t len)
{
  /* zero first: covers padding past the end of the stream */
  if (offset + len > s->length) memset(buf, 0, len);
  return scr_stream_span(s, offset, buf, len);
}

int scr_stream_write(struct scr_stream* s, uint64_t offset, const void* buf, size_t len)
{
  return scr_stream_span(s, offset, (unsigned char*) buf, len);
}

static int scr_stream_segment_compare(const void* a, const void* b)
{
  const struct scr_stream_segment* x = a;
  const struct scr_stream_segment* y = b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

int scr_stream_file_crc_upto(struct scr_stream* s, int i, uint64_t length, uint32_t* crc)
{
  struct scr_stream_file* f = &s->files[i];
  qsort(f->segments, f->segment_count, sizeof(*f->segments), scr_stream_segment_compare);
  uLong value = crc32(0L, Z_NULL, 0);
  uint64_t covered = 0;
  for (int k = 0; k < f->segment_count && covered < length; k++) {
    if (f->segments[k].offset != covered) return SCR_ERR_INVALID;
    value = crc32_combine(value, f->segments[k].crc, (z_off_t) f->segments[k].length);
    covered += f->segments[k].length;
  }
  if (covered != length) return SCR_ERR_INVALID;
  *crc = (uint32_t) value;
  return SCR_SUCCESS;
}

int scr_stream_file_crc(struct scr_stream* s, int i, uint32_t* crc)
{
  return scr_stream_file_crc_upto(s, i, s->files[i].size, crc);
}

int scr_stream_close(struct scr_stream* s)
{
  int rc = SCR_SUCCESS;
  for (int i = 0; i < s->file_count; i++) {
    struct scr_stream_file* f = &s->files[i];
    if (f->fd >= 0) {
      if (s->writing && fsync(f->fd) != 0) rc = SCR_ERR_IO;
      if (close(f->fd) != 0) rc = SCR_ERR_IO;
    }
    free(f->segments);
    free(f->path);
  }
  free(s->files);
  memset(s, 0, sizeof(*s));
  return rc;
}
