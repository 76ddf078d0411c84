/* scr_transfer_file.c - maintain <cntl_dir>/transfer.scr (see scr_transfer_file.h):
 * one locked read-modify-write for the ranks of a node and their scr_transfer daemon. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_transfer_file.h"

char* scr_transfer_file_path(const char* cntl_dir)
{
  return cntl_dir ? scr_path_join(cntl_dir, "transfer.scr") : NULL;
}

int scr_transfer_file_update(const char* path, int (*modify)(scr_kvtree* transfer, void* arg), void* arg)
{
  char* name = NULL;
  int fd = -1;
  if (asprintf(&name, "%s.lock", path) < 0) return SCR_ERR_NOMEM;
  int rc = scr_io_lock(name, &fd);
  free(name);
  if (rc != SCR_SUCCESS) return rc;
  scr_kvtree* transfer = scr_kvtree_new();
  rc = scr_kvtree_read_file_if_exists(path, transfer);
  if (rc == SCR_SUCCESS) rc = modify(transfer, arg);
  if (rc == SCR_SUCCESS) {
    if (scr_kvtree_size(transfer) > 0) rc = scr_kvtree_write_file(path, transfer);
    else if (unlink(path) != 0 && errno != ENOENT) rc = SCR_ERR_IO;
  }
  scr_kvtree_delete(&transfer);
  scr_io_unlock(fd);
  return rc;
}

int scr_transfer_file_read(const char* path, scr_kvtree* transfer)
{
  return scr_kvtree_read_file(path, transfer);
}
