/* scr_parity_file.c - pack, write and read the header of a parity file, free of MPI:
 * the encoding and the restart's rebuild use it in cache, scr_index --build on the prefix. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_parity_file.h"

#define SCR_PARITY_MAGIC 0x53435250u /* "SCRP" */

unsigned char* scr_parity_pack_header(const scr_kvtree* h, size_t* length)
{
  size_t len = scr_kvtree_pack_size(h);
  unsigned char* buf = malloc(len + 16);
  if (!buf) return NULL;
  scr_kvtree_pack(h, buf);
  uint64_t trailer[2] = { len, SCR_PARITY_MAGIC };
  memcpy(buf + len, trailer, 16);
  *length = len + 16;
  return buf;
}

uint64_t scr_parity_header_size(const scr_kvtree* h)
{
  return (uint64_t) scr_kvtree_pack_size(h) + 16;
}

int scr_parity_write_header(struct scr_stream* parity, uint64_t at, const scr_kvtree* h)
{
  size_t length = 0;
  unsigned char* buf = scr_parity_pack_header(h, &length);
  int rc = buf ? scr_stream_write(parity, at, buf, length) : SCR_ERR_NOMEM;
  free(buf);
  return rc;
}

int scr_parity_read_header(const char* path, scr_kvtree* header)
{
  /* read the trailer and the header only: the parity before them is as large
   * as a share of the checkpoint, and reading it all would cost that much memory */
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return SCR_ERR_NOENT;
    scr_err("cannot open %s: %s", path, strerror(errno));
    return SCR_ERR_IO;
  }
  int rc = SCR_ERR_CORRUPT;
  struct stat st;
  uint64_t trailer[2] = { 0, 0 };
  uint64_t size = fstat(fd, &st) == 0 ? (uint64_t) st.st_size : 0;
  if (size >= 16 && scr_io_pread_full(fd, trailer, 16, (off_t) (size - 16)) == 16 &&
      trailer[1] == SCR_PARITY_MAGIC && trailer[0] <= size - 16) {
    size_t len = (size_t) trailer[0];
    char* buf = malloc(len ? len : 1);
    if (!buf)
      rc = SCR_ERR_NOMEM;
    else if (scr_io_pread_full(fd, buf, len, (off_t) (size - 16 - len)) == (ssize_t) len)
      rc = scr_kvtree_unpack(buf, len, header, NULL);
    free(buf);
  }
  close(fd);
  if (rc != SCR_SUCCESS) scr_err("redundancy file %s has no readable header", path);
  return rc;
}
