/* scr_transfer_file.c - maintain <cntl_dir>/transfer.scr (see scr_transfer_file.h):
 * one locked read-modify-write for the ranks of a node and their scr_transfer daemon. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_transfer_file.h"

char* scr_transfer_file_path(const char* cntl_dir)
{
  return cntl_dir ? scr_path_join(cntl_dir, "transfer.scr") : NULL;
}

static int scr_transfer_file_lock(const char* path)
{
  char* name = NULL;
  if (asprintf(&name, "%s.lock", path) < 0) return -1;
  int fd = open(name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) scr_err("cannot open lock file %s: %s", name, strerror(errno));
  int status = -1;
  while (fd >= 0 && (status = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {}
  if (fd >= 0 && status != 0) {
    scr_err("cannot lock %s: %s", name, strerror(errno));
    close(fd);
    fd = -1;
  }
  free(name);
  return fd;
}

int scr_transfer_file_update(const char* path, int (*modify)(scr_kvtree* transfer, void* arg), void* arg)
{
  int fd = scr_transfer_file_lock(path);
  if (fd < 0) return SCR_ERR_IO;
  scr_kvtree* transfer = scr_kvtree_new();
  int rc = scr_kvtree_read_file_if_exists(path, transfer);
  if (rc == SCR_SUCCESS) rc = modify(transfer, arg);
  if (rc == SCR_SUCCESS) {
    if (scr_kvtree_size(transfer) > 0) rc = scr_kvtree_write_file(path, transfer);
    else if (unlink(path) != 0 && errno != ENOENT) rc = SCR_ERR_IO;
  }
  scr_kvtree_delete(&transfer);
  close(fd);
  return rc;
}

int scr_transfer_file_read(const char* path, scr_kvtree* transfer)
{
  return scr_kvtree_read_file(path, transfer);
}
