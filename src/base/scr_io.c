/* scr_io.c - file and directory helpers: full reads/writes, private directories,
 * crash-safe copies with CRC32, and an rm -rf that never follows symlinks. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <isa-l/crc.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"

/* large enough to stream at device speed, small enough for a 1-core helper */
#define SCR_IO_COPY_BUFFER (1024 * 1024)

ssize_t scr_io_read_full(int fd, void* buf, size_t len)
{
  size_t done = 0;
  while (done < len) {
    ssize_t n = read(fd, (char*) buf + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) break;
    done += (size_t) n;
  }
  return (ssize_t) done;
}

ssize_t scr_io_write_full(int fd, const void* buf, size_t len)
{
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, (const char*) buf + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    /* a zero-byte write on a regular file means no progress is possible */
    if (n == 0) {
      errno = ENOSPC;
      return -1;
    }
    done += (size_t) n;
  }
  return (ssize_t) done;
}

ssize_t scr_io_pread_full(int fd, void* buf, size_t len, off_t offset)
{
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd, (char*) buf + done, len - done, offset + (off_t) done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) break;
    done += (size_t) n;
  }
  return (ssize_t) done;
}

ssize_t scr_io_pwrite_full(int fd, const void* buf, size_t len, off_t offset)
{
  size_t done = 0;
  while (done < len) {
    ssize_t n = pwrite(fd, (const char*) buf + done, len - done, offset + (off_t) done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) {
      errno = ENOSPC;
      return -1;
    }
    done += (size_t) n;
  }
  return (ssize_t) done;
}

/* ---- directories ---- */

/* creates path's components in turn; *created tells whether the last one is new */
static int scr_io_mkdir_components(const char* path, mode_t mode, int* created)
{
  if (path == NULL || *path == '\0') {
    scr_err("cannot create a directory with an empty name");
    return SCR_ERR_INVALID;
  }
  /* the usual case, a directory that exists (every routed file of a
   * dataset goes to one): one stat, not a mkdir and a stat per component */
  struct stat whole;
  *created = 0;
  if (stat(path, &whole) == 0 && S_ISDIR(whole.st_mode)) return SCR_SUCCESS;
  /* the next most usual, a new directory in one that exists (a dataset's
   * stage, a checkpoint directory): one mkdir. Walking down from the root
   * costs a mkdir and a stat per component, each a round trip to the
   * metadata server of a parallel file system */
  if (mkdir(path, mode) == 0) {
    *created = 1;
    return SCR_SUCCESS;
  }
  /* otherwise the walk: it makes missing parents, and its messages name the
   * component that is in the way */
  char* copy = strdup(path);
  if (copy == NULL) return SCR_ERR_NOMEM;
  size_t len = strlen(copy);
  while (len > 1 && copy[len - 1] == '/') copy[--len] = '\0';

  int rc = SCR_SUCCESS;
  for (char* p = copy + 1; ; p++) {
    int last = (*p == '\0');
    if (*p != '/' && !last) continue;
    if (p[-1] == '/') { /* doubled slash: nothing new to create */
      if (last) break;
      continue;
    }
    char saved = *p;
    *p = '\0';
    if (mkdir(copy, mode) == 0) {
      *created = last;
    } else if (errno == EEXIST) {
      struct stat st;
      if (stat(copy, &st) != 0 || !S_ISDIR(st.st_mode)) {
        scr_err("cannot create directory %s: %s exists and is not a directory; remove or rename it",
                path, copy);
        rc = SCR_ERR_IO;
        errno = ENOTDIR;
        break;
      }
      *created = 0;
    } else {
      int saved_errno = errno;
      scr_err("cannot create directory %s (at %s): %s", path, copy, strerror(saved_errno));
      errno = saved_errno;
      rc = SCR_ERR_IO;
      break;
    }
    *p = saved;
    if (last) break;
  }
  free(copy);
  return rc;
}

int scr_io_mkdir_p(const char* path, mode_t mode)
{
  int created;
  return scr_io_mkdir_components(path, mode, &created);
}

int scr_io_mkdir_private(const char* path)
{
  if (path == NULL || *path == '\0') {
    scr_err("cannot create a private directory with an empty name");
    return SCR_ERR_INVALID;
  }
  /* parents first, so that an existing final component that is a file or a
   * symlink is reported as a security problem rather than a mkdir failure */
  char* parent = scr_path_dirname(path);
  if (parent == NULL) return SCR_ERR_NOMEM;
  int created = 0;
  int rc = strcmp(parent, path) == 0 ? SCR_SUCCESS : scr_io_mkdir_components(parent, 0700, &created);
  free(parent);
  if (rc != SCR_SUCCESS) return rc;
  created = 0;
  if (mkdir(path, 0700) == 0) {
    created = 1;
  } else if (errno != EEXIST) {
    int saved_errno = errno;
    scr_err("cannot create directory %s: %s", path, strerror(saved_errno));
    errno = saved_errno;
    return SCR_ERR_IO;
  }

  /* O_NOFOLLOW|O_DIRECTORY checks the final component itself, and fstat on the
   * descriptor cannot be raced by someone swapping the name afterwards */
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int saved_errno = errno;
    struct stat lst;
    if (lstat(path, &lst) == 0 && !S_ISDIR(lst.st_mode)) {
      scr_err("refusing %s as a private directory: %s; remove it and try again", path,
              S_ISLNK(lst.st_mode) ? "it is a symbolic link" : "it exists and is not a directory");
      errno = saved_errno;
      return SCR_ERR_SECURITY;
    }
    scr_err("cannot open directory %s: %s", path, strerror(saved_errno));
    errno = saved_errno;
    return SCR_ERR_IO;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int saved_errno = errno;
    scr_err("cannot stat directory %s: %s", path, strerror(saved_errno));
    close(fd);
    errno = saved_errno;
    return SCR_ERR_IO;
  }
  if (st.st_uid != geteuid()) {
    char name[256] = "unknown user";
    struct passwd pw, *found = NULL;
    char pwbuf[1024];
    if (getpwuid_r(st.st_uid, &pw, pwbuf, sizeof(pwbuf), &found) == 0 && found) {
      snprintf(name, sizeof(name), "%s", found->pw_name);
    }
    scr_err("refusing directory %s: owned by %s (uid %ld), not by uid %ld; "
            "remove it or choose another base directory",
            path, name, (long) st.st_uid, (long) geteuid());
    close(fd);
    errno = EPERM;
    return SCR_ERR_SECURITY;
  }
  if (created && (st.st_mode & 07777) != 0700) {
    /* a restrictive umask may have removed owner bits from what we just made */
    if (fchmod(fd, 0700) != 0) scr_warn("cannot set mode 0700 on %s: %s", path, strerror(errno));
  } else if (!created && (st.st_mode & 0077) != 0) {
    scr_warn("directory %s has mode %04o: other users can access it; chmod 700 it",
             path, (unsigned) (st.st_mode & 07777));
  }
  close(fd);
  return SCR_SUCCESS;
}

/* the name of a uid for a message */
static void scr_io_owner_name(uid_t uid, char* name, size_t size)
{
  struct passwd pw, *found = NULL;
  char pwbuf[1024];
  if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &found) == 0 && found) snprintf(name, size, "%s", found->pw_name);
  else snprintf(name, size, "uid %ld", (long) uid);
}

int scr_io_check_name(const char* path, int allow_own_link)
{
  struct stat st;
  if (lstat(path, &st) != 0) return SCR_SUCCESS; /* nothing there: ours to make */
  char owner[256];
  if (S_ISLNK(st.st_mode) && (!allow_own_link || st.st_uid != geteuid())) {
    scr_err("refusing to write %s: a symbolic link is there, which SCR never follows; remove it", path);
    errno = ELOOP;
    return SCR_ERR_SECURITY;
  }
  if (st.st_uid != geteuid()) {
    scr_io_owner_name(st.st_uid, owner, sizeof(owner));
    scr_err("refusing to write %s: it is owned by %s, not by uid %ld; remove it", path, owner, (long) geteuid());
    errno = EPERM;
    return SCR_ERR_SECURITY;
  }
  return SCR_SUCCESS;
}

int scr_io_check_own_dir(const char* path)
{
  struct stat st;
  if (lstat(path, &st) != 0) return SCR_SUCCESS;
  char owner[256];
  if (S_ISLNK(st.st_mode)) {
    scr_err("refusing directory %s: it is a symbolic link, which SCR never follows; remove it", path);
    errno = ELOOP;
    return SCR_ERR_SECURITY;
  }
  if (st.st_uid != geteuid()) {
    scr_io_owner_name(st.st_uid, owner, sizeof(owner));
    scr_err("refusing directory %s: owned by %s, not by uid %ld; remove it", path, owner, (long) geteuid());
    errno = EPERM;
    return SCR_ERR_SECURITY;
  }
  return SCR_SUCCESS;
}

int scr_io_create_temp(const char* tmp, mode_t mode)
{
  /* O_EXCL|O_NOFOLLOW: whatever is at the name is not ours to write into */
  int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = open(tmp, flags, mode);
  if (fd >= 0 || errno != EEXIST) return fd;
  struct stat st;
  if (lstat(tmp, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1) {
    /* one a crashed process of ours with the same pid left (common in
     * containers): a plain file of ours, no other name, so removing it
     * touches nobody else's */
    if (unlink(tmp) == 0 || errno == ENOENT) fd = open(tmp, flags, mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  if (scr_io_check_name(tmp, 0) == SCR_SUCCESS) {
    scr_err("refusing to write %s: a file SCR did not make is there; remove it", tmp);
    errno = EEXIST;
  }
  return -1;
}

int scr_io_fsync_dir(const char* dir)
{
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    int saved_errno = errno;
    scr_err("cannot open directory %s to sync it: %s", dir, strerror(saved_errno));
    errno = saved_errno;
    return saved_errno == ENOENT ? SCR_ERR_NOENT : SCR_ERR_IO;
  }
  int rc = SCR_SUCCESS;
  /* some file systems cannot sync directories; that is not a data loss risk */
  if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    int saved_errno = errno;
    scr_err("cannot sync directory %s: %s", dir, strerror(saved_errno));
    errno = saved_errno;
    rc = SCR_ERR_IO;
  }
  close(fd);
  return rc;
}

/* ---- CRC and copies ---- */

uint32_t scr_io_crc32(uint32_t crc, const void* buf, size_t len)
{
  /* ISA-L computes the same CRC32 as zlib (gzip polynomial, reflected), several
   * times faster with carry-less multiplication; it takes a 64-bit length */
  return crc32_gzip_refl(crc, (unsigned char*) buf, len);
}

static int scr_io_open_source(const char* path, struct stat* st)
{
  /* the library's own reads (a checksum, a copy to the prefix directory or
   * to a partner) are not the program's: the file's access time stays what
   * the program left (it may have just set it with futimens, as Python's
   * os.utime(fd) does). O_NOATIME is refused (EPERM) for a file the process
   * does not own, which is then read as any reader would. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int saved_errno = errno;
    if (saved_errno != ENOENT) scr_err("cannot open %s for reading: %s", path, strerror(saved_errno));
    errno = saved_errno;
    return -1;
  }
  if (fstat(fd, st) != 0) {
    int saved_errno = errno;
    scr_err("cannot stat %s: %s", path, strerror(saved_errno));
    close(fd);
    errno = saved_errno;
    return -1;
  }
  if (!S_ISREG(st->st_mode)) {
    scr_err("cannot copy or checksum %s: not a regular file", path);
    close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

int scr_io_crc32_file(const char* path, uint32_t* crc, uint64_t* size)
{
  struct stat st;
  int fd = scr_io_open_source(path, &st);
  if (fd < 0) return errno == ENOENT ? SCR_ERR_NOENT : SCR_ERR_IO;
  unsigned char* buf = malloc(SCR_IO_COPY_BUFFER);
  if (buf == NULL) {
    close(fd);
    return SCR_ERR_NOMEM;
  }
  uint32_t value = 0;
  uint64_t total = 0;
  int rc = SCR_SUCCESS;
  for (;;) {
    ssize_t n = scr_io_read_full(fd, buf, SCR_IO_COPY_BUFFER);
    if (n < 0) {
      scr_err("cannot read %s: %s", path, strerror(errno));
      rc = SCR_ERR_IO;
      break;
    }
    if (n == 0) break;
    value = scr_io_crc32(value, buf, (size_t) n);
    total += (uint64_t) n;
  }
  int saved_errno = errno;
  free(buf);
  close(fd);
  errno = saved_errno;
  if (rc == SCR_SUCCESS) {
    if (crc) *crc = value;
    if (size) *size = total;
  }
  return rc;
}

/* read from in, write to out, checksumming on the way */
static int scr_io_copy_data(int in, const char* src, int out, const char* tmp, uint32_t* crc, uint64_t* size,
                            int (*pace)(uint64_t copied, void* arg), void* arg)
{
  unsigned char* buf = malloc(SCR_IO_COPY_BUFFER);
  if (buf == NULL) return SCR_ERR_NOMEM;
  uint32_t value = 0;
  uint64_t total = 0;
  int rc = SCR_SUCCESS;
  for (;;) {
    ssize_t n = scr_io_read_full(in, buf, SCR_IO_COPY_BUFFER);
    if (n < 0) {
      scr_err("cannot read %s: %s", src, strerror(errno));
      rc = SCR_ERR_IO;
      break;
    }
    if (n == 0) break;
    value = scr_io_crc32(value, buf, (size_t) n);
    if (scr_io_write_full(out, buf, (size_t) n) < 0) {
      scr_err("cannot write %s: %s", tmp, strerror(errno));
      rc = SCR_ERR_IO;
      break;
    }
    total += (uint64_t) n;
    if (pace && pace(total, arg) != 0) {
      rc = SCR_ERR_FAILURE;
      break;
    }
  }
  free(buf);
  *crc = value;
  *size = total;
  return rc;
}

int scr_io_copy_file(const char* src, const char* dst, mode_t parent_mode,
                     uint32_t* crc, uint64_t* size)
{
  return scr_io_copy_file_paced(src, dst, parent_mode, crc, size, NULL, NULL);
}

static int scr_io_copy_file_checked(const char* src, const char* dst, mode_t parent_mode, const uint32_t* expect,
                                    uint32_t* crc, uint64_t* size, int (*pace)(uint64_t copied, void* arg),
                                    void* arg);

int scr_io_copy_file_paced(const char* src, const char* dst, mode_t parent_mode, uint32_t* crc, uint64_t* size,
                           int (*pace)(uint64_t copied, void* arg), void* arg)
{
  return scr_io_copy_file_checked(src, dst, parent_mode, NULL, crc, size, pace, arg);
}

int scr_io_copy_file_expecting(const char* src, const char* dst, mode_t parent_mode, uint32_t expect,
                               uint32_t* crc, uint64_t* size)
{
  return scr_io_copy_file_checked(src, dst, parent_mode, &expect, crc, size, NULL, NULL);
}

int scr_io_copy_file_paced_expecting(const char* src, const char* dst, mode_t parent_mode, const uint32_t* expect,
                                     uint32_t* crc, uint64_t* size, int (*pace)(uint64_t copied, void* arg),
                                     void* arg)
{
  return scr_io_copy_file_checked(src, dst, parent_mode, expect, crc, size, pace, arg);
}

static int scr_io_copy_file_checked(const char* src, const char* dst, mode_t parent_mode, const uint32_t* expect,
                                    uint32_t* crc, uint64_t* size, int (*pace)(uint64_t copied, void* arg),
                                    void* arg)
{
  struct stat st;
  int in = scr_io_open_source(src, &st);
  if (in < 0) return errno == ENOENT ? SCR_ERR_NOENT : SCR_ERR_IO;

  char* dir = scr_path_dirname(dst);
  char* tmp = NULL;
  int out = -1;
  int rc = SCR_ERR_NOMEM;
  if (dir == NULL || asprintf(&tmp, "%s.tmp.%ld", dst, (long) getpid()) < 0) {
    tmp = NULL;
    goto done;
  }
  rc = scr_io_mkdir_p(dir, parent_mode);
  if (rc != SCR_SUCCESS) goto done;

  /* a symlink or another user's file planted at the temporary name or at
   * the destination must neither redirect the copy nor be replaced by it */
  rc = scr_io_check_name(dst, 1);
  if (rc != SCR_SUCCESS) {
    free(tmp);
    tmp = NULL; /* nothing of ours to remove */
    goto done;
  }
  out = scr_io_create_temp(tmp, st.st_mode & 0777);
  if (out < 0) {
    if (errno != ELOOP && errno != EPERM && errno != EEXIST)
      scr_err("cannot create %s to copy %s: %s", tmp, src, strerror(errno));
    free(tmp);
    tmp = NULL; /* not ours: do not remove it */
    rc = SCR_ERR_IO;
    goto done;
  }
  uint32_t value;
  uint64_t total;
  rc = scr_io_copy_data(in, src, out, tmp, &value, &total, pace, arg);
  if (rc != SCR_SUCCESS) goto done;
  if (expect && value != *expect) {
    /* the source is not what was recorded: the copy never takes dst's name,
     * so whatever dst held (an older checkpoint's file) stays */
    if (crc) *crc = value;
    if (size) *size = total;
    rc = SCR_ERR_CORRUPT;
    goto done;
  }
  if (fsync(out) != 0) {
    scr_err("cannot sync %s: %s", tmp, strerror(errno));
    rc = SCR_ERR_IO;
    goto done;
  }
  if (close(out) != 0) {
    out = -1;
    scr_err("cannot close %s: %s", tmp, strerror(errno));
    rc = SCR_ERR_IO;
    goto done;
  }
  out = -1;
  if (rename(tmp, dst) != 0) {
    scr_err("cannot rename %s to %s: %s", tmp, dst, strerror(errno));
    rc = SCR_ERR_IO;
    goto done;
  }
  free(tmp);
  tmp = NULL;
  rc = scr_io_fsync_dir(dir);
  if (rc == SCR_SUCCESS) {
    if (crc) *crc = value;
    if (size) *size = total;
  }

done:;
  int saved_errno = errno;
  if (out >= 0) close(out);
  if (tmp) unlink(tmp);
  close(in);
  free(tmp);
  free(dir);
  errno = saved_errno;
  return rc;
}

int scr_io_link_file(const char* existing, const char* dst, mode_t parent_mode)
{
  char* dir = scr_path_dirname(dst);
  char* tmp = NULL;
  if (!dir || asprintf(&tmp, "%s.tmp.%ld", dst, (long) getpid()) < 0) {
    free(dir);
    errno = ENOMEM;
    return SCR_ERR_NOMEM;
  }
  int rc = scr_io_mkdir_p(dir, parent_mode);
  /* a temporary name a crash left behind is ours to replace */
  if (rc == SCR_SUCCESS && unlink(tmp) != 0 && errno != ENOENT) rc = SCR_ERR_IO;
  if (rc == SCR_SUCCESS && link(existing, tmp) != 0) rc = SCR_ERR_IO;
  else if (rc == SCR_SUCCESS && rename(tmp, dst) != 0) rc = SCR_ERR_IO;
  if (rc == SCR_SUCCESS) rc = scr_io_fsync_dir(dir);
  int saved_errno = errno;
  if (rc != SCR_SUCCESS) unlink(tmp);
  free(tmp);
  free(dir);
  errno = saved_errno;
  return rc;
}

int scr_io_lock(const char* path, int* fd)
{
  *fd = -1;
  int lock_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock_fd < 0) {
    if (errno == ELOOP) return scr_io_check_name(path, 0);
    scr_err("cannot open lock file %s: %s", path, strerror(errno));
    return SCR_ERR_IO;
  }
  /* a lock file another user planted could be held by them for ever */
  struct stat st;
  if (fstat(lock_fd, &st) != 0 || st.st_uid != geteuid()) {
    close(lock_fd);
    return scr_io_check_name(path, 0) == SCR_SUCCESS ? SCR_ERR_IO : SCR_ERR_SECURITY;
  }
  /* a signal may interrupt the wait; only give up on real errors */
  int status;
  do {
    status = flock(lock_fd, LOCK_EX);
  } while (status != 0 && errno == EINTR);
  if (status != 0) {
    scr_err("cannot lock %s: %s", path, strerror(errno));
    close(lock_fd);
    return SCR_ERR_IO;
  }
  *fd = lock_fd;
  return SCR_SUCCESS;
}

void scr_io_unlock(int fd)
{
  if (fd < 0) return;
  /* closing drops the flock; the explicit unlock keeps the intent visible */
  flock(fd, LOCK_UN);
  close(fd);
}

void scr_io_remove_stale_copies(const char* dst)
{
  char* dir = scr_path_dirname(dst);
  const char* slash = strrchr(dst, '/');
  const char* base = slash ? slash + 1 : dst;
  size_t length = strlen(base);
  DIR* d = dir ? opendir(dir) : NULL;
  for (struct dirent* e = d ? readdir(d) : NULL; e; e = readdir(d)) {
    const char* rest = e->d_name + length;
    if (strncmp(e->d_name, base, length) != 0 || strncmp(rest, ".tmp.", 5) != 0 || !rest[5] ||
        strspn(rest + 5, "0123456789") != strlen(rest + 5))
      continue;
    if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT)
      scr_warn("cannot remove %s/%s, left by an interrupted copy: %s", dir, e->d_name, strerror(errno));
  }
  if (d) closedir(d);
  free(dir);
}

/* ---- removal ---- */

static int scr_io_remove_contents(int dirfd, const char* path, dev_t dev);

/* remove entry name of dirfd (displayed as path/name); directories recursively */
static int scr_io_remove_entry(int dirfd, const char* path, const char* name, dev_t dev)
{
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return SCR_SUCCESS;
    scr_err("cannot stat %s/%s: %s", path, name, strerror(errno));
    return SCR_ERR_IO;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (unlinkat(dirfd, name, 0) != 0 && errno != ENOENT) {
      scr_err("cannot remove %s/%s: %s", path, name, strerror(errno));
      return SCR_ERR_IO;
    }
    return SCR_SUCCESS;
  }
  char* sub = NULL;
  if (asprintf(&sub, "%s/%s", path, name) < 0) return SCR_ERR_NOMEM;
  int rc;
  if (st.st_dev != dev) {
    /* like rm --one-file-system: a mount inside a cache directory is someone
     * else's data (for example the node-local store itself) */
    scr_err("not removing %s: it is on another file system (a mount point?); unmount it first", sub);
    rc = SCR_ERR_SECURITY;
  } else {
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      scr_err("cannot open directory %s: %s", sub, strerror(errno));
      rc = SCR_ERR_IO;
    } else {
      rc = scr_io_remove_contents(fd, sub, dev);
      close(fd);
      if (rc == SCR_SUCCESS && unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
        scr_err("cannot remove directory %s: %s", sub, strerror(errno));
        rc = SCR_ERR_IO;
      }
    }
  }
  free(sub);
  return rc;
}

static int scr_io_remove_contents(int dirfd, const char* path, dev_t dev)
{
  /* fdopendir takes ownership of its descriptor; keep dirfd for the *at calls */
  int listfd = dup(dirfd);
  if (listfd < 0) {
    scr_err("cannot list %s: %s", path, strerror(errno));
    return SCR_ERR_IO;
  }
  DIR* dir = fdopendir(listfd);
  if (dir == NULL) {
    scr_err("cannot list %s: %s", path, strerror(errno));
    close(listfd);
    return SCR_ERR_IO;
  }
  int rc = SCR_SUCCESS;
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) {
    const char* name = entry->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
    int entry_rc = scr_io_remove_entry(dirfd, path, name, dev);
    /* keep going: remove as much as possible, report the first failure */
    if (rc == SCR_SUCCESS) rc = entry_rc;
  }
  closedir(dir);
  return rc;
}

int scr_io_remove_tree(const char* path)
{
  struct stat st;
  if (path == NULL || *path == '\0') return SCR_ERR_INVALID;
  if (lstat(path, &st) != 0) {
    if (errno == ENOENT) return SCR_SUCCESS;
    scr_err("cannot stat %s: %s", path, strerror(errno));
    return SCR_ERR_IO;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (unlink(path) != 0 && errno != ENOENT) {
      scr_err("cannot remove %s: %s", path, strerror(errno));
      return SCR_ERR_IO;
    }
    return SCR_SUCCESS;
  }
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    scr_err("cannot open directory %s: %s", path, strerror(errno));
    return SCR_ERR_IO;
  }
  int rc = scr_io_remove_contents(fd, path, st.st_dev);
  close(fd);
  if (rc == SCR_SUCCESS && rmdir(path) != 0 && errno != ENOENT) {
    scr_err("cannot remove directory %s: %s", path, strerror(errno));
    rc = SCR_ERR_IO;
  }
  return rc;
}

/* ---- small files ---- */

int scr_io_file_size(const char* path, uint64_t* size)
{
  struct stat st;
  if (stat(path, &st) != 0) {
    int saved_errno = errno;
    if (saved_errno == ENOENT) return SCR_ERR_NOENT;
    scr_err("cannot stat %s: %s", path, strerror(saved_errno));
    errno = saved_errno;
    return SCR_ERR_IO;
  }
  if (size) *size = (uint64_t) st.st_size;
  return SCR_SUCCESS;
}

int scr_io_read_file(const char* path, char** buf, size_t* len)
{
  *buf = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int saved_errno = errno;
    if (saved_errno == ENOENT) return SCR_ERR_NOENT;
    scr_err("cannot open %s: %s", path, strerror(saved_errno));
    errno = saved_errno;
    return SCR_ERR_IO;
  }
  /* grow as we go: st_size is 0 for /proc files and may change under us */
  size_t cap = 4096, used = 0;
  char* data = malloc(cap);
  int rc = data ? SCR_SUCCESS : SCR_ERR_NOMEM;
  while (rc == SCR_SUCCESS) {
    if (cap - used < 2) {
      char* bigger = realloc(data, cap * 2);
      if (bigger == NULL) {
        rc = SCR_ERR_NOMEM;
        break;
      }
      data = bigger;
      cap *= 2;
    }
    size_t room = cap - used - 1;
    ssize_t n = scr_io_read_full(fd, data + used, room);
    if (n < 0) {
      scr_err("cannot read %s: %s", path, strerror(errno));
      rc = SCR_ERR_IO;
      break;
    }
    used += (size_t) n;
    if ((size_t) n < room) break; /* read_full stops short only at end of file */
  }
  int saved_errno = errno;
  close(fd);
  if (rc != SCR_SUCCESS) {
    free(data);
    errno = saved_errno;
    return rc;
  }
  data[used] = '\0';
  *buf = data;
  if (len) *len = used;
  return SCR_SUCCESS;
}
