/* scr_prefix_dir.c - paths, creation and locking of <prefix>/.scr (see scr_prefix_dir.h);
 * the locks are scr_io_lock's. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_io.h"
#include "scr_path.h"
#include "scr_prefix_dir.h"

char* scr_prefix_dir_file(const char* prefix, const char* name)
{
  if (prefix == NULL || prefix[0] == '\0') return NULL;
  char* dir = scr_path_join(prefix, SCR_PREFIX_DIR_NAME);
  if (dir == NULL || name == NULL) return dir;
  char* path = scr_path_join(dir, name);
  free(dir);
  return path;
}

char* scr_prefix_dir_attached(const char* prefix, int id, const char* relpath)
{
  char* dir = scr_prefix_dir_file(prefix, NULL);
  char* path = NULL;
  int n = !dir ? -1 : relpath ? asprintf(&path, "%s/attached.%d/%s", dir, id, relpath)
                             : asprintf(&path, "%s/attached.%d", dir, id);
  if (n < 0) path = NULL;
  free(dir);
  return path;
}

int scr_prefix_dir_create(const char* prefix)
{
  char* dir = scr_prefix_dir_file(prefix, NULL);
  if (dir == NULL) {
    scr_err("no prefix directory given: set SCR_PREFIX or pass the directory");
    return SCR_ERR_INVALID;
  }

  int rc = SCR_SUCCESS;
  if (scr_io_check_own_dir(dir) != SCR_SUCCESS) {
    rc = SCR_ERR_SECURITY;
  } else if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    scr_err("cannot create directory %s: %s (check that the prefix directory exists and is writable)",
            dir, strerror(errno));
    rc = SCR_ERR_IO;
  } else {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      scr_err("%s exists but is not a directory: move it out of the way", dir);
      rc = SCR_ERR_IO;
    }
  }
  free(dir);
  return rc;
}

int scr_prefix_dir_lock(const char* prefix, const char* lock_name, int* fd)
{
  *fd = -1;
  int rc = scr_prefix_dir_create(prefix);
  if (rc != SCR_SUCCESS) return rc;

  char* path = scr_prefix_dir_file(prefix, lock_name);
  if (path == NULL) return SCR_ERR_NOMEM;
  rc = scr_io_lock(path, fd);
  free(path);
  return rc;
}

void scr_prefix_dir_unlock(int fd)
{
  scr_io_unlock(fd);
}
