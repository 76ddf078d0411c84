/* scr_kvtree_file.c - key-value tree files: a fixed big-endian header (magic,
 * type, version, size, CRC32 of the payload) then the packed tree; atomic writes. */
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
#include "scr_path.h"
#include "scr_kvtree.h"

#define SCR_KVTREE_FILE_MAGIC   0x5343526bu /* "SCRk" */
#define SCR_KVTREE_FILE_TYPE    1
#define SCR_KVTREE_FILE_VERSION 1
/* magic 4 + type 2 + version 2 + total size 8 + payload CRC32 4 */
#define SCR_KVTREE_FILE_HEADER  20

static void scr_kvtree_file_put(unsigned char* p, uint64_t v, int bytes)
{
  for (int i = bytes - 1; i >= 0; i--) {
    p[i] = (unsigned char) v;
    v >>= 8;
  }
}

static uint64_t scr_kvtree_file_get(const unsigned char* p, int bytes)
{
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v = (v << 8) | p[i];
  return v;
}

/* header and payload in one buffer so the file is written with one call */
static unsigned char* scr_kvtree_file_encode(const scr_kvtree* tree, size_t* total)
{
  size_t payload = scr_kvtree_pack_size(tree);
  unsigned char* buf = malloc(SCR_KVTREE_FILE_HEADER + payload);
  if (buf == NULL) return NULL;
  scr_kvtree_pack(tree, buf + SCR_KVTREE_FILE_HEADER);
  *total = SCR_KVTREE_FILE_HEADER + payload;
  scr_kvtree_file_put(buf, SCR_KVTREE_FILE_MAGIC, 4);
  scr_kvtree_file_put(buf + 4, SCR_KVTREE_FILE_TYPE, 2);
  scr_kvtree_file_put(buf + 6, SCR_KVTREE_FILE_VERSION, 2);
  scr_kvtree_file_put(buf + 8, *total, 8);
  scr_kvtree_file_put(buf + 16, scr_io_crc32(0, buf + SCR_KVTREE_FILE_HEADER, payload), 4);
  return buf;
}

int scr_kvtree_write_file(const char* path, const scr_kvtree* tree)
{
  return scr_kvtree_write_file_mode(path, tree, 0);
}

int scr_kvtree_write_file_mode(const char* path, const scr_kvtree* tree, int shared)
{
  if (path == NULL || *path == '\0') return SCR_ERR_INVALID;
  size_t total = 0;
  unsigned char* buf = scr_kvtree_file_encode(tree, &total);
  char* dir = scr_path_dirname(path);
  char* tmp = NULL;
  if (buf == NULL || dir == NULL || asprintf(&tmp, "%s.tmp.%ld", path, (long) getpid()) < 0) {
    scr_err("out of memory writing %s", path);
    free(buf);
    free(dir);
    return SCR_ERR_NOMEM;
  }

  int rc = SCR_ERR_IO;
  const char* what = "create";
  /* a symlink or another user's file planted at the final name is refused
   * (the rename would not follow it, but it is a sign of someone else in a
   * directory SCR writes), and the temporary is a new file of ours, never
   * one planted there (scr_io_create_temp). A file kept on the prefix
   * directory gets the mode the program's own files get (0666 less the
   * umask); one in the control directory is private. */
  if (scr_io_check_name(path, 0) != SCR_SUCCESS) {
    rc = SCR_ERR_SECURITY;
    free(tmp);
    free(buf);
    free(dir);
    return rc;
  }
  int fd = scr_io_create_temp(tmp, shared ? 0666 : 0600);
  if (fd < 0) {
    if (errno == ELOOP || errno == EPERM || errno == EEXIST) {
      /* scr_io_create_temp said what is there */
      free(tmp);
      free(buf);
      free(dir);
      return SCR_ERR_SECURITY;
    }
    goto fail_open;
  }
  what = "set mode of";
  if (!shared && fchmod(fd, 0600) != 0) goto fail;
  what = "write";
  if (scr_io_write_full(fd, buf, total) < 0) goto fail;
  what = "sync";
  if (fsync(fd) != 0) goto fail;
  what = "close";
  int closed = close(fd);
  fd = -1;
  if (closed != 0) goto fail;
  what = "rename into place";
  if (rename(tmp, path) != 0) goto fail;
  free(tmp);
  tmp = NULL;
  rc = scr_io_fsync_dir(dir);
  free(buf);
  free(dir);
  return rc;

fail:;
  int saved_errno = errno;
  if (fd >= 0) close(fd);
  unlink(tmp);
  errno = saved_errno;
fail_open:
  saved_errno = errno;
  scr_err("cannot %s temporary file %s for %s: %s; %s is unchanged",
          what, tmp, path, strerror(saved_errno), path);
  free(tmp);
  free(buf);
  free(dir);
  errno = saved_errno;
  return rc;
}

/* checks the header against the real file size; returns NULL when fine,
 * else the reason the file is unusable */
static const char* scr_kvtree_file_check_header(const unsigned char* h, uint64_t actual,
                                                char* why, size_t why_len)
{
  uint64_t magic = scr_kvtree_file_get(h, 4);
  uint64_t type = scr_kvtree_file_get(h + 4, 2);
  uint64_t version = scr_kvtree_file_get(h + 6, 2);
  uint64_t size = scr_kvtree_file_get(h + 8, 8);
  if (magic != SCR_KVTREE_FILE_MAGIC) {
    snprintf(why, why_len, "not an SCR file (bad magic number 0x%08lx)", (unsigned long) magic);
  } else if (type != SCR_KVTREE_FILE_TYPE) {
    snprintf(why, why_len, "not a key-value tree file (file type %lu)", (unsigned long) type);
  } else if (version != SCR_KVTREE_FILE_VERSION) {
    snprintf(why, why_len, "format version %lu is not supported (this build reads version %d)",
             (unsigned long) version, SCR_KVTREE_FILE_VERSION);
  } else if (size > actual) {
    snprintf(why, why_len, "truncated: %llu bytes, header says %llu",
             (unsigned long long) actual, (unsigned long long) size);
  } else if (size < actual) {
    snprintf(why, why_len, "%llu bytes, header says %llu (trailing garbage)",
             (unsigned long long) actual, (unsigned long long) size);
  } else {
    return NULL;
  }
  return why;
}

static int scr_kvtree_file_corrupt(const char* path, const char* why)
{
  scr_err("corrupt key-value tree file %s: %s; remove it or restore it from a copy", path, why);
  return SCR_ERR_CORRUPT;
}

static int scr_kvtree_read(const char* path, scr_kvtree* tree, int missing_ok)
{
  if (path == NULL || tree == NULL) return SCR_ERR_INVALID;
  /* O_NOFOLLOW: SCR's own files are never symbolic links; one planted at
   * their name must not make SCR read (and act on) a file of its choosing */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    int saved_errno = errno;
    if (saved_errno == ELOOP) {
      scr_err("refusing to read %s: a symbolic link is there, which SCR never follows; remove it", path);
      errno = saved_errno;
      return SCR_ERR_SECURITY;
    }
    if (saved_errno == ENOENT) {
      if (missing_ok) return SCR_SUCCESS;
      scr_err("cannot read %s: no such file", path);
      errno = saved_errno;
      return SCR_ERR_NOENT;
    }
    scr_err("cannot open %s: %s", path, strerror(saved_errno));
    errno = saved_errno;
    return SCR_ERR_IO;
  }

  int rc = SCR_SUCCESS;
  unsigned char* buf = NULL;
  unsigned char header[SCR_KVTREE_FILE_HEADER];
  char why[160];
  struct stat st;
  if (fstat(fd, &st) != 0) {
    scr_err("cannot stat %s: %s", path, strerror(errno));
    rc = SCR_ERR_IO;
    goto done;
  }
  if (!S_ISREG(st.st_mode)) {
    scr_err("cannot read %s: not a regular file", path);
    rc = SCR_ERR_INVALID;
    goto done;
  }
  ssize_t n = scr_io_read_full(fd, header, sizeof(header));
  if (n < 0) {
    scr_err("cannot read %s: %s", path, strerror(errno));
    rc = SCR_ERR_IO;
    goto done;
  }
  if ((size_t) n < sizeof(header)) {
    snprintf(why, sizeof(why), "truncated: %zd bytes, shorter than the %d-byte header",
             n, SCR_KVTREE_FILE_HEADER);
    rc = scr_kvtree_file_corrupt(path, why);
    goto done;
  }
  if (scr_kvtree_file_check_header(header, (uint64_t) st.st_size, why, sizeof(why))) {
    rc = scr_kvtree_file_corrupt(path, why);
    goto done;
  }

  size_t payload = (size_t) st.st_size - SCR_KVTREE_FILE_HEADER;
  buf = malloc(payload ? payload : 1);
  if (buf == NULL) {
    scr_err("out of memory reading %s (%zu bytes)", path, payload);
    rc = SCR_ERR_NOMEM;
    goto done;
  }
  n = scr_io_read_full(fd, buf, payload);
  if (n < 0) {
    scr_err("cannot read %s: %s", path, strerror(errno));
    rc = SCR_ERR_IO;
    goto done;
  }
  if ((size_t) n != payload) {
    /* shrunk between fstat and read */
    rc = scr_kvtree_file_corrupt(path, "truncated while being read");
    goto done;
  }
  uint32_t stored = (uint32_t) scr_kvtree_file_get(header + 16, 4);
  uint32_t computed = scr_io_crc32(0, buf, payload);
  if (stored != computed) {
    snprintf(why, sizeof(why), "CRC32 mismatch (stored 0x%08x, computed 0x%08x)",
             (unsigned) stored, (unsigned) computed);
    rc = scr_kvtree_file_corrupt(path, why);
    goto done;
  }
  size_t used = 0;
  if (scr_kvtree_unpack(buf, payload, tree, &used) != SCR_SUCCESS || used != payload) {
    /* only reachable if the writer was broken: the CRC matched */
    rc = scr_kvtree_file_corrupt(path, "malformed tree data");
    goto done;
  }

done:
  free(buf);
  close(fd);
  return rc;
}

int scr_kvtree_read_file(const char* path, scr_kvtree* tree)
{
  return scr_kvtree_read(path, tree, 0);
}

int scr_kvtree_read_file_if_exists(const char* path, scr_kvtree* tree)
{
  return scr_kvtree_read(path, tree, 1);
}
