/* mpi-fileops.c - an MPI program that does to checkpoint files what applications
 * do besides writing them, for the preload tests: delete, rename, read back.
 *
 * usage: mpi-fileops OP[@RANK]:PATH...   each "%d" in PATH is the rank; OP is
 *   remove   remove(PATH)
 *   unlink   unlink(PATH)
 *   rmdir    rmdir(PATH)
 *   rmtree   lstat(PATH), open(PATH, O_RDONLY) and fstat must name the same
 *            directory (else -1 ELOOP), then below it, relative to that
 *            descriptor: fdopendir(dup), readdir, fstatat(AT_SYMLINK_NOFOLLOW),
 *            openat(O_DIRECTORY) into subdirectories, unlinkat of files and
 *            directories; finally rmdir(PATH)
 *   rename   PATH is FROM=TO: rename(FROM, TO)
 *   read     open(PATH) and read it whole: RC is the number of bytes
 *   mkdir    mkdir(PATH, 0755)
 *   chdir    chdir(PATH)
 *   mkstemp  PATH is TEMPLATE=FINAL: mkstemp(TEMPLATE), write "rank R\n",
 *            close, rename to FINAL (the careful way to replace a file)
 *   realpath realpath(PATH, NULL): RC is its length; the path follows on a
 *            line "  = PATH"
 *   excl     open(PATH, O_WRONLY | O_CREAT | O_EXCL, 0644), then close
 *   update   open(PATH, O_RDWR | O_CREAT, 0644) without O_TRUNC, write "X"
 *            over its first byte, close
 *   inplace  the same with open(PATH, O_RDWR): an existing file changed in place
 *   rw       open(PATH, O_RDWR), close: opened for writing, left as it was
 *   rewrite  open(PATH, O_WRONLY | O_TRUNC) without O_CREAT (only an existing
 *            file), write "new R\n", close
 *   rewriterw the same with O_RDWR | O_TRUNC, as HDF5's family driver first
 *            opens each member file
 *   truncate truncate(PATH, 3)
 *   copy     PATH is FROM=TO: FROM read whole, written to TO (O_TRUNC)
 *   hold     open(PATH, O_RDWR | O_APPEND), kept open across the operations
 *            that follow (one at a time); append writes "more\n" through it
 *            (PATH ignored), release closes it
 *   holdnew  the same with open(PATH, O_RDWR | O_CREAT | O_TRUNC, 0644) and
 *            "rank R\n" written: a new version, open (gfortran's
 *            status='replace' before close(status='delete'))
 *   chmod    chmod(PATH, 0444)
 *   mode     stat(PATH): RC is st_mode & 07777, in octal digits (644 for rw-r--r--)
 *   crash    open(PATH, O_RDWR), write "X" over its first byte, and die of
 *            SIGKILL with the file open (a node failing mid-update)
 *   crashrw  the same without the write: opened read-write, left as it was
 *   mpiio    MPI_File_open(MPI_COMM_SELF, PATH, MPI_MODE_CREATE |
 *            MPI_MODE_WRONLY), "rank R\n" written at 0, MPI_File_close: RC
 *            is the MPI error class (0 ok)
 *   mpiiocrash the same, but the process dies of SIGKILL before the close
 *   sigckpt  a SIGALRM every 2 ms whose handler writes PATH_hK.dat (K
 *            counting) with open, write and close, while the program writes
 *            PATH_m.dat 100 times: RC 0 when all is written (a handler that
 *            writes a checkpoint, as codes do on SIGTERM or a timer)
 *   sigalloc the same handler while the program allocates and frees memory
 *            until it wrote 200 files: RC 0 then, -1 ETIMEDOUT after 30 s
 *            (a handler that interrupts malloc must not need its lock)
 *   write    open(PATH, O_WRONLY | O_CREAT | O_TRUNC, 0644), write "rank R\n",
 *            close
 *   fwrite   the same through fopen(PATH, "w")
 *   fappend  fopen(PATH, "a"), write "line R\n", fclose (a log kept beside a
 *            checkpoint)
 *   freopen  fopen(PATH, "w"), write "rank R\n", freopen(PATH, "a") on the
 *            same stream, write "more\n", fclose
 *   glob     glob(PATH): RC is the number of matches, each on a line "  = M"
 *   globerr  the same with GLOB_ERR: a directory that cannot be read is an
 *            error (-1 EIO), not skipped
 *   statvfs  statvfs(PATH)
 *   symlink  PATH is TARGET=LINK: symlink(TARGET, LINK)
 *   link     PATH is FROM=TO: link(FROM, TO)
 *   linkf    the same with linkat(AT_FDCWD, FROM, AT_FDCWD, TO,
 *            AT_SYMLINK_FOLLOW): a symbolic link FROM is followed
 *   readlink readlink(PATH): RC is the length of what it holds, which
 *            follows on a line "  = TARGET"
 *   nlink    stat(PATH): RC is st_nlink
 *   same     PATH is A=B: stat(A) and stat(B) name the same object (device
 *            and inode): RC 1, else 0
 *   kind     lstat(PATH): RC is 1 for a regular file, 2 a directory, 3 a
 *            symbolic link, 4 a FIFO, 0 anything else
 *   mkfifo   mkfifo(PATH, 0640)
 *   mknod    mknod(PATH, S_IFIFO | 0640, 0)
 *   stat     stat(PATH): RC is st_size
 *   mtime    stat(PATH): RC is st_mtime (seconds)
 *   atime    open(PATH, O_RDONLY), futimens sets its access time a day
 *            back (the modification time kept), close, with no read in
 *            between: RC is 1 when stat's st_atime moved, else 0
 *   atimew   the same with open(PATH, O_WRONLY | O_CREAT | O_TRUNC, 0644),
 *            as Python's os.utime(fd) test does
 *   sleep    sleep PATH seconds
 *   await    PATH is FILE=TEXT: when FILE exists, wait (at most 60 s) until
 *            its bytes hold TEXT; RC 0 either way, so that a native run
 *            prints the same (a test's meeting point with SCR's daemon)
 *   die      raise(SIGKILL) (PATH ignored): the rank dies where it stands
 *   inodes   opendir(PATH), then for each entry (. and .. too) d_ino against
 *            the st_ino of lstat(PATH/NAME): RC is the number of entries
 *            whose numbers differ (-1 on the first failure), each such entry
 *            on a line "  = NAME"
 *   xattrs   listxattr(PATH), then getxattr of each name: RC is the list's
 *            length (0: none)
 *   setxattr setxattr(PATH, "user.scr", "1", 1, 0)
 *   relist   opendir(PATH), read it all, rewinddir, read it all again: RC
 *            is the number of entries (-1 EIO when the two differ)
 *   ls       opendir(PATH), readdir: RC is the number of entries besides "." and
 *            "..", each on a line "  = NAME TYPE" (d_type: f, d, l, ?), sorted
 *   scanat   scandirat(descriptor of ".", PATH, alphasort): RC is the number of
 *            entries, each on a line "  = NAME"
 *   dirstat  opendir(PATH), then fstatat(dirfd, NAME, AT_SYMLINK_NOFOLLOW) of
 *            each entry, as Rust's DirEntry::metadata does: RC is the sum
 *            of the files' sizes (-1 on the first failure)
 *   walk     nftw(PATH, FTW_PHYS): RC is the number of objects met, each on
 *            a line "  = TYPE LEVEL PATH" (TYPE F, D, SL, NS...), sorted
 *   walkcd   the same with FTW_CHDIR added
 *   rmwalk   nftw(PATH, FTW_DEPTH | FTW_PHYS) removing each object, as
 *            codes remove an old checkpoint directory: RC as nftw returns
 *   mkdirm   PATH is MODE=DIR (MODE in octal): mkdir(DIR, MODE)
 *   chmodm   PATH is MODE=FILE: chmod(FILE, MODE)
 *   modes    the permissions of PATH as stat, lstat, fstatat(AT_FDCWD),
 *            statx, fstat of open(PATH, O_RDONLY) and fstatat in a listing
 *            of its parent (as ls -l) show them: RC is stat's, in octal
 *            digits as for mode, and a line "  = S L A X D P" follows
 *   tell     PATH is HOW=FILE: FILE opened for appending (HOW a, a+ or
 *            any fopen mode; freopen: fopen(FILE, "r"), then freopen(FILE,
 *            "a") of that stream; open: open(FILE, O_WRONLY | O_CREAT |
 *            O_APPEND, 0644)), "abc\n" written, closed: RC is the position
 *            (ftell, lseek SEEK_CUR) before the write, and a line
 *            "  = BEFORE AFTER" follows
 *   dirfd    open(PATH, O_RDONLY | O_DIRECTORY), kept (the previous one
 *            closed) as the descriptor the *at operations below work from
 *   writeat  openat(dirfd, PATH, O_WRONLY | O_CREAT | O_TRUNC, 0644), write
 *            "rank R\n", close
 *   readat   openat(dirfd, PATH, O_RDONLY), read it whole: RC the bytes
 *   mkdirat  mkdirat(dirfd, PATH, 0755)
 *   renameat PATH is FROM=TO: renameat(dirfd, FROM, dirfd, TO)
 *   unlinkat unlinkat(dirfd, PATH, 0)
 *   sameat   PATH is NAME=OTHER: fstatat(dirfd, NAME) and stat(OTHER) name
 *            the same object: RC 1, else 0
 *   fchdir   fchdir(dirfd) (PATH ignored)
 *   cwd      getcwd: RC 0, and a line "  = DIR", DIR relative to where
 *            the program started (PATH ignored)
 *   mmap     open(PATH, O_RDWR | O_CREAT | O_TRUNC, 0644), ftruncate to the
 *            length of "rank R\n", mmap(MAP_SHARED, PROT_WRITE), close the
 *            descriptor at once (the common idiom), then store "rank R\n"
 *            through the mapping, msync, munmap
 *   mmapclose the same with munmap before close: the file is complete when
 *            it is closed
 *   map      the first half of mmap: the mapping stays, its descriptor is
 *            closed; mstore stores "rank R\n" through it and msyncs, unmap
 *            munmaps it (PATH ignored by both)
 *   closerange open(PATH, O_WRONLY | O_CREAT | O_TRUNC, 0644), write "rank R\n",
 *            a second descriptor of it just above (fcntl F_DUPFD), then both
 *            closed by one close_range(first, second, 0), as Python's
 *            os.closerange does (two calls when the copy is not next to it)
 *   closefrom the same file, written the same, closed by closefrom(fd) with
 *            its descriptor first moved above every other (F_DUPFD 900 and
 *            close): every descriptor from there up goes
 *   cloexec  the same file, written the same, then close_range(fd, fd,
 *            CLOSE_RANGE_CLOEXEC), which closes nothing; "more\n" written
 *            through it, close
 *   unshare  the same file, written the same, closed by close_range(fd, fd,
 *            CLOSE_RANGE_UNSHARE) (the program has one thread: it closes)
 *   dup2over the same file, written the same, then dup2 of a descriptor of
 *            /dev/null onto it (which closes the file), and both closed
 *   rawclose the same file, written the same, closed by syscall(SYS_close):
 *            around every wrapper, so that the next descriptor anyone
 *            opens, the preload's own included, gets its number
 *   rawhigh  the same, but on rank 0 its descriptor first moved to 900
 *            (F_DUPFD and close): a number nobody opens next there, while
 *            the other ranks' numbers come back at their next open
 * Child processes (PATH is a shell command CMD, for /bin/sh -c; RC is its
 * exit status, -1 when it did not exit): a program that runs a helper on
 * the checkpoint it just wrote
 *   system   system(CMD), the program's output flushed first: the child
 *            writes to the same standard output
 *   popen    popen(CMD, "r"): each line it prints follows as "  = LINE"
 *   spawn    posix_spawn of /bin/sh -c CMD, its standard output a pipe read
 *            as for popen
 *   forkexec fork, then in the child execl of /bin/sh -c CMD (the parent's
 *            pthread_atfork handlers ran), read as for popen
 *   spawnenv, execenv  as spawn, and as forkexec with execve, with an
 *            environment of the program's own (PATH and LC_ALL only, as
 *            Python's subprocess with env= passes)
 *   forkread fork without exec, as Python's multiprocessing does: the child
 *            stats and reads PATH (a file, not a command) and reports to
 *            the parent through a pipe; RC is the bytes read (-1 with the
 *            child's errno), and a line "  = SIZE FNV" follows: st_size and
 *            the FNV-1a hash of the bytes in hex
 * Every rank runs the operations in order, with a barrier after each, and
 * rank 0 prints "OP PATH: RC ERROR" for its own (ERROR: strerror of errno
 * when RC is -1, else "ok"); OP@RANK runs on that rank alone, which prints
 * "OP@RANK PATH: RC ERROR". OP@all runs on every rank, and rank 0 prints one
 * line "OP@R PATH: RC ERROR" for each rank R in order (PATH as R expands it):
 * what a rank on another node saw is part of the output. */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <mpi.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

/* the contents of the directory open as fd, then nothing else */
static int remove_below(int fd)
{
  int listfd = dup(fd);
  DIR* dir = listfd >= 0 ? fdopendir(listfd) : NULL;
  if (!dir) return -1;
  int rc = 0;
  struct dirent* e;
  while (rc == 0 && (e = readdir(dir)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      rc = -1;
    } else if (S_ISDIR(st.st_mode)) {
      int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      rc = sub >= 0 ? remove_below(sub) : -1;
      if (sub >= 0) close(sub);
      if (rc == 0) rc = unlinkat(fd, e->d_name, AT_REMOVEDIR);
    } else {
      rc = unlinkat(fd, e->d_name, 0);
    }
  }
  int saved = errno;
  closedir(dir);
  errno = saved;
  return rc;
}

/* the bytes of path, or -1 */
static int read_whole(const char* path)
{
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  char buffer[4096];
  ssize_t n;
  int total = 0;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) total += (int) n;
  int saved = errno;
  close(fd);
  errno = saved;
  return n < 0 ? -1 : total;
}

/* realpath: RC is the length of PATH's real path, which goes on a line of
 * its own ("  = PATH") in detail */
static int resolve(const char* path, char* detail, size_t size)
{
  char* real = realpath(path, NULL);
  if (!real) return -1;
  int n = (int) strlen(real);
  snprintf(detail, size, "  = %s\n", real);
  free(real);
  return n;
}

/* glob: RC is the number of matches, each on a line of its own in detail */
static int expand(const char* pattern, int flags, char* detail, size_t size)
{
  glob_t g;
  int rc = glob(pattern, flags, NULL, &g);
  if (rc == GLOB_NOMATCH) return 0;
  if (rc != 0) {
    errno = EIO;
    return -1;
  }
  size_t used = 0;
  for (size_t m = 0; m < g.gl_pathc && used < size; m++)
    used += (size_t) snprintf(detail + used, size - used, "  = %s\n", g.gl_pathv[m]);
  int n = (int) g.gl_pathc;
  globfree(&g);
  return n;
}

/* a new file holding "rank R\n": 0 or -1 */
static int write_new(const char* path, int rank)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  char text[32];
  int n = snprintf(text, sizeof(text), "rank %d\n", rank);
  int rc = write(fd, text, (size_t) n) == n ? 0 : -1;
  return close(fd) != 0 ? -1 : rc;
}

/* the same through stdio */
static int fwrite_new(const char* path, int rank)
{
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  int rc = fprintf(f, "rank %d\n", rank) > 0 ? 0 : -1;
  return fclose(f) != 0 ? -1 : rc;
}

static int fappend(const char* path, int rank)
{
  FILE* f = fopen(path, "a");
  if (!f) return -1;
  int rc = fprintf(f, "line %d\n", rank) > 0 ? 0 : -1;
  return fclose(f) != 0 ? -1 : rc;
}

static int freopen_append(const char* path, int rank)
{
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  int rc = fprintf(f, "rank %d\n", rank) > 0 ? 0 : -1;
  FILE* again = freopen(path, "a", f);
  if (!again) return -1;
  if (fprintf(again, "more\n") <= 0) rc = -1;
  return fclose(again) != 0 ? -1 : rc;
}

/* an existing file opened with flags (O_TRUNC, no O_CREAT), "new R\n" written: 0 or -1 */
static int write_again(const char* path, int flags, int rank)
{
  int fd = open(path, flags);
  if (fd < 0) return -1;
  char text[32];
  int n = snprintf(text, sizeof(text), "new %d\n", rank);
  int rc = write(fd, text, (size_t) n) == n ? 0 : -1;
  return close(fd) != 0 ? -1 : rc;
}

/* the mapping of map, for mstore and unmap */
static char* mapped;
static size_t mapped_length;

/* a new file of the length of "rank R\n" mapped shared and writable into
 * mapped; its descriptor closed right away unless asked to stay open (then
 * returned, else 0 or -1) */
static int map_new(const char* path, int rank, int keep_open)
{
  char text[32];
  mapped_length = (size_t) snprintf(text, sizeof(text), "rank %d\n", rank);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  void* m = ftruncate(fd, (off_t) mapped_length) == 0
                ? mmap(NULL, mapped_length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                : MAP_FAILED;
  if (m == MAP_FAILED) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  mapped = m;
  if (keep_open) return fd;
  return close(fd);
}

/* "rank R\n" stored through the mapping and synced: 0 or -1 */
static int map_store(int rank)
{
  char text[32];
  snprintf(text, sizeof(text), "rank %d\n", rank);
  if (!mapped) {
    errno = EBADF;
    return -1;
  }
  memcpy(mapped, text, mapped_length);
  return msync(mapped, mapped_length, MS_SYNC);
}

static int map_release(void)
{
  int rc = mapped ? munmap(mapped, mapped_length) : 0;
  mapped = NULL;
  return rc;
}

/* mmap and mmapclose: close right after mmap, or after munmap */
static int map_whole(const char* path, int rank, int close_last)
{
  int fd = map_new(path, rank, close_last);
  if (fd < 0) return -1;
  int rc = map_store(rank) == 0 && map_release() == 0 ? 0 : -1;
  if (close_last && close(fd) != 0) rc = -1;
  return rc;
}

/* open with flags, write "X" at the start when asked, close: 0 or -1 */
static int open_close(const char* path, int flags, int overwrite)
{
  int fd = open(path, flags, 0644);
  if (fd < 0) return -1;
  int rc = overwrite && pwrite(fd, "X", 1, 0) != 1 ? -1 : 0;
  return close(fd) != 0 ? -1 : rc;
}

/* "FROM=TO": pair becomes FROM, and TO is returned; NULL (EINVAL) without '=' */
static char* split_pair(char* pair)
{
  char* to = strchr(pair, '=');
  if (!to) {
    errno = EINVAL;
    return NULL;
  }
  *to++ = '\0';
  return to;
}

static int rename_pair(char* pair)
{
  char* to = split_pair(pair);
  return to ? rename(pair, to) : -1;
}

static int symlink_pair(char* pair)
{
  char* link = split_pair(pair);
  return link ? symlink(pair, link) : -1;
}

static int link_pair(char* pair, int flags)
{
  char* to = split_pair(pair);
  return !to ? -1 : flags ? linkat(AT_FDCWD, pair, AT_FDCWD, to, flags) : link(pair, to);
}

static int read_link(const char* path, char* detail, size_t size)
{
  char target[4096];
  ssize_t n = readlink(path, target, sizeof(target) - 1);
  if (n < 0) return -1;
  target[n] = '\0';
  snprintf(detail, size, "  = %s\n", target);
  return (int) n;
}

static int same_pair(char* pair)
{
  char* other = split_pair(pair);
  struct stat a, b;
  if (!other || stat(pair, &a) != 0 || stat(other, &b) != 0) return -1;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int kind_of(const char* path)
{
  struct stat st;
  if (lstat(path, &st) != 0) return -1;
  return S_ISREG(st.st_mode) ? 1 : S_ISDIR(st.st_mode) ? 2 : S_ISLNK(st.st_mode) ? 3 : S_ISFIFO(st.st_mode) ? 4 : 0;
}

/* FROM=TO: the bytes of FROM (up to 64 KiB) into a new TO; RC their count */
static int copy_pair(char* pair)
{
  char* to = split_pair(pair);
  int in = to ? open(pair, O_RDONLY) : -1;
  if (in < 0) return -1;
  static char buffer[65536];
  ssize_t n = read(in, buffer, sizeof(buffer));
  close(in);
  int out = n >= 0 ? open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
  if (out < 0) return -1;
  int rc = write(out, buffer, (size_t) n) == n ? (int) n : -1;
  return close(out) != 0 ? -1 : rc;
}

static int stat_size(const char* path)
{
  struct stat st;
  return stat(path, &st) == 0 ? (int) st.st_size : -1;
}

static int remove_tree(const char* path)
{
  struct stat named, opened;
  if (lstat(path, &named) != 0) return -1;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  if (fstat(fd, &opened) != 0 || named.st_dev != opened.st_dev || named.st_ino != opened.st_ino) {
    close(fd);
    errno = ELOOP; /* shutil.rmtree's "Cannot call rmtree on a symbolic link" */
    return -1;
  }
  int rc = remove_below(fd);
  close(fd);
  return rc == 0 ? rmdir(path) : rc;
}

/* ---- child processes */

extern char** environ;

/* each line of in as "  = LINE" at the end of detail */
static void read_lines(FILE* in, char* detail, size_t size)
{
  char line[4096];
  size_t used = strlen(detail);
  while (fgets(line, sizeof(line), in)) {
    line[strcspn(line, "\n")] = '\0';
    int n = snprintf(detail + used, size - used, "  = %s\n", line);
    if (n > 0 && (size_t) n < size - used) used += (size_t) n;
  }
}

/* a wait status as RC: the exit status, or -1 (ECHILD) when it did not exit */
static int exit_status(int status)
{
  if (status == -1) return -1;
  if (!WIFEXITED(status)) {
    errno = ECHILD;
    return -1;
  }
  return WEXITSTATUS(status);
}

/* what the child pid writes on fd, read as for read_lines; its exit status */
static int child_output(pid_t pid, int fd, char* detail, size_t size)
{
  FILE* in = fdopen(fd, "r");
  if (in) {
    read_lines(in, detail, size);
    fclose(in);
  } else {
    close(fd);
  }
  int status = 0;
  return waitpid(pid, &status, 0) == pid ? exit_status(status) : -1;
}

/* await: FILE's bytes, read whole, hold TEXT */
static int file_holds(const char* file, const char* text)
{
  FILE* f = fopen(file, "rb");
  if (!f) return 0;
  char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof(buf), f);
  fclose(f);
  return memmem(buf, n, text, strlen(text)) != NULL;
}

static int run_await(const char* spec)
{
  char file[4096];
  const char* eq = strchr(spec, '=');
  if (!eq || (size_t) (eq - spec) >= sizeof(file)) return -1;
  snprintf(file, sizeof(file), "%.*s", (int) (eq - spec), spec);
  for (int tries = 0; tries < 600 && access(file, F_OK) == 0 && !file_holds(file, eq + 1); tries++)
    usleep(100000);
  return 0;
}

static int run_system(const char* cmd)
{
  fflush(NULL);
  return exit_status(system(cmd));
}

static int run_popen(const char* cmd, char* detail, size_t size)
{
  fflush(NULL);
  FILE* p = popen(cmd, "r");
  if (!p) return -1;
  read_lines(p, detail, size);
  return exit_status(pclose(p));
}

/* the environment of spawnenv and execenv: the program's own choice, as
 * Python's subprocess with env= gives (no LD_PRELOAD, no SCR_ variable) */
static char* const bare_environment[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };

static int run_spawn_with(const char* cmd, char* detail, size_t size, char* const envp[])
{
  int out[2];
  if (pipe(out) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addclose(&actions, out[1]);
  char* argv[] = { "sh", "-c", (char*) cmd, NULL };
  pid_t pid;
  fflush(NULL);
  int rc = posix_spawn(&pid, "/bin/sh", &actions, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    errno = rc;
    return -1;
  }
  return child_output(pid, out[0], detail, size);
}

static int run_spawn(const char* cmd, char* detail, size_t size)
{
  return run_spawn_with(cmd, detail, size, environ);
}

/* fork with a pipe: the child gets out[1] to write to, the parent out[0]
 * to read (the other end closed on each side); fork's result */
static pid_t fork_piped(int out[2])
{
  if (pipe(out) != 0) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(out[0]);
    close(out[1]);
  } else {
    close(out[pid == 0 ? 0 : 1]);
  }
  return pid;
}

/* forkexec and execenv: fork, then the child runs /bin/sh -c CMD with execl
 * (the program's own environment), or with execve and envp */
static int run_forkexec_with(const char* cmd, char* detail, size_t size, char* const envp[])
{
  int out[2];
  pid_t pid = fork_piped(out);
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[1]);
    char* argv[] = { "sh", "-c", (char*) cmd, NULL };
    if (envp) execve("/bin/sh", argv, envp);
    else execl("/bin/sh", "sh", "-c", cmd, (char*) NULL);
    _exit(127);
  }
  return child_output(pid, out[0], detail, size);
}

/* forkread: the child's report, "BYTES ERRNO SIZE FNV" */
static int run_forkread(const char* path, char* detail, size_t size)
{
  int out[2];
  pid_t pid = fork_piped(out);
  if (pid < 0) return -1;
  if (pid == 0) {
    struct stat st;
    uint32_t hash = 2166136261u;
    long long bytes = -1, file_size = -1;
    int fd = stat(path, &st) == 0 ? open(path, O_RDONLY) : -1;
    if (fd >= 0) {
      unsigned char buffer[4096];
      ssize_t n;
      file_size = (long long) st.st_size;
      bytes = 0;
      while ((n = read(fd, buffer, sizeof(buffer))) > 0)
        for (ssize_t i = 0; i < n; i++, bytes++) hash = (hash ^ buffer[i]) * 16777619u;
      if (n < 0) bytes = -1;
      close(fd);
    }
    char report[128];
    int n = snprintf(report, sizeof(report), "%lld %d %lld %08x\n", bytes, bytes < 0 ? errno : 0, file_size,
                     (unsigned) hash);
    _exit(write(out[1], report, (size_t) n) == n ? 0 : 1);
  }
  char report[128] = "";
  FILE* in = fdopen(out[0], "r");
  int got = in && fgets(report, sizeof(report), in) != NULL;
  if (in) fclose(in);
  int status = 0;
  waitpid(pid, &status, 0);
  long long bytes = -1, file_size = -1;
  int error = EIO;
  unsigned hash = 0;
  if (!got || sscanf(report, "%lld %d %lld %x", &bytes, &error, &file_size, &hash) != 4) {
    errno = EIO;
    return -1;
  }
  if (bytes < 0) {
    errno = error;
    return -1;
  }
  snprintf(detail, size, "  = %lld %08x\n", file_size, hash);
  return (int) bytes;
}

/* the temporary-file-then-rename idiom through mkstemp */
static int write_by_mkstemp(char* pair, int rank)
{
  char* final = split_pair(pair);
  if (!final) return -1;
  int fd = mkstemp(pair);
  if (fd < 0) return -1;
  char text[32];
  int n = snprintf(text, sizeof(text), "rank %d\n", rank);
  if (write(fd, text, (size_t) n) != n || close(fd) != 0) return -1;
  return rename(pair, final);
}

/* the descriptor of dirfd, and the directory the program started in */
static int at_dir = -1;
static char start_dir[4096];

static int write_at(const char* path, int rank)
{
  int fd = openat(at_dir, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  char text[32];
  int n = snprintf(text, sizeof(text), "rank %d\n", rank);
  int rc = write(fd, text, (size_t) n) == n ? 0 : -1;
  return close(fd) != 0 ? -1 : rc;
}

static int read_at(const char* path)
{
  int fd = openat(at_dir, path, O_RDONLY);
  if (fd < 0) return -1;
  char buffer[4096];
  ssize_t n, total = 0;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) total += n;
  close(fd);
  return n < 0 ? -1 : (int) total;
}

static int same_at(char* pair)
{
  char* other = split_pair(pair);
  struct stat a, b;
  if (!other || fstatat(at_dir, pair, &a, 0) != 0 || stat(other, &b) != 0) return -1;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int rename_at(char* pair)
{
  char* to = split_pair(pair);
  return to ? renameat(at_dir, pair, at_dir, to) : -1;
}

static int current_dir(char* detail, size_t size)
{
  char cwd[4096];
  if (!getcwd(cwd, sizeof(cwd))) return -1;
  size_t n = strlen(start_dir);
  const char* shown = strncmp(cwd, start_dir, n) == 0 && (cwd[n] == '/' || cwd[n] == '\0')
                        ? (cwd[n] ? cwd + n + 1 : ".") : cwd;
  snprintf(detail, size, "  = %s\n", shown);
  return 0;
}

enum op { REMOVE, RMDIR, RMTREE, UNLINK, RENAME, READ, MKDIR, CHDIR, MKSTEMP, REALPATH, EXCL, UPDATE, WRITE, FWRITE,
           GLOB, STATVFS, SYMLINK, STAT, INPLACE, RW, TRUNCATE, COPY, CRASH, CRASHRW, HOLD, APPEND, RELEASE, CHMOD, MODE,
           XATTRS, SETXATTR, RELIST, WALK, RMWALK, FILE_APPEND, FILE_REOPEN, DIRSTAT, LIST, SCANAT,
           WALKCD, MKDIRM, CHMODM, MODES, TELL, REWRITE, REWRITERW, DIRFD, WRITEAT, READAT, MKDIRAT, RENAMEAT,
           UNLINKAT, SAMEAT, FCHDIR, CWD, HOLDNEW, GLOBERR, MTIME, SLEEP, MMAP, MMAPCLOSE, MAP, MSTORE, UNMAP,
           MPIIO, MPIIOCRASH, SIGCKPT, SIGALLOC, DIE, INODES, CLOSERANGE, CLOSEFROM, CLOEXEC, UNSHARE, DUP2OVER,
           RAWCLOSE, RAWHIGH, LINK, LINKF, READLINK, NLINK, SAME, KIND, ATIME, ATIMEW,
           SYSTEM, POPEN, SPAWN, FORKEXEC, FORKREAD, SPAWNENV, EXECENV, MKFIFO,
           MKNOD, AWAIT, OPS };
static const char* const op_names[OPS] = { "remove", "rmdir", "rmtree", "unlink", "rename", "read", "mkdir", "chdir",
                                           "mkstemp", "realpath", "excl", "update", "write", "fwrite", "glob",
                                           "statvfs", "symlink", "stat", "inplace", "rw", "truncate", "copy",
                                           "crash", "crashrw", "hold", "append", "release", "chmod", "mode",
                                           "xattrs", "setxattr", "relist", "walk", "rmwalk", "fappend", "freopen",
                                           "dirstat", "ls", "scanat", "walkcd", "mkdirm", "chmodm", "modes", "tell",
                                           "rewrite", "rewriterw", "dirfd", "writeat", "readat", "mkdirat",
                                           "renameat", "unlinkat", "sameat", "fchdir", "cwd", "holdnew", "globerr",
                                           "mtime", "sleep", "mmap", "mmapclose", "map", "mstore", "unmap",
                                           "mpiio", "mpiiocrash", "sigckpt", "sigalloc", "die", "inodes", "closerange",
                                           "closefrom", "cloexec", "unshare", "dup2over", "rawclose", "rawhigh", "link",
                                           "linkf", "readlink", "nlink", "same", "kind", "atime", "atimew", "system",
                                           "popen", "spawn", "forkexec", "forkread", "spawnenv", "execenv", "mkfifo",
                                           "mknod", "await" };

/* sigckpt: the handler's files, named from sig_base. SIGALRM goes to any
 * thread that does not block it (MPICH's progress threads too), so two
 * handlers may run at once: the counter and the failure are atomic. */
static char sig_base[256];
static int sig_written, sig_failed;

static void sig_write(int signo)
{
  (void) signo;
  int saved_errno = errno;
  char name[300];
  snprintf(name, sizeof(name), "%s_h%d.dat", sig_base, __atomic_fetch_add(&sig_written, 1, __ATOMIC_RELAXED));
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, "h\n", 2) != 2) __atomic_store_n(&sig_failed, 1, __ATOMIC_RELAXED);
  if (fd >= 0 && close(fd) != 0) __atomic_store_n(&sig_failed, 1, __ATOMIC_RELAXED);
  errno = saved_errno;
}

/* sigalloc: malloc and free of varied sizes (a pseudo-random sequence)
 * until the handler wrote `files` files, or `seconds` passed */
static int sig_allocate(int files, int seconds)
{
  void* kept[64] = { NULL };
  unsigned long x = 1;
  time_t end = time(NULL) + seconds;
  while (__atomic_load_n(&sig_written, __ATOMIC_RELAXED) < files) {
    for (int i = 0; i < 1000; i++) {
      x = x * 6364136223846793005ul + 1442695040888963407ul;
      int k = (int) ((x >> 33) % 64);
      free(kept[k]);
      kept[k] = malloc((x >> 40) % 4096 + 1);
    }
    if (time(NULL) > end) break;
  }
  for (int k = 0; k < 64; k++) free(kept[k]);
  if (__atomic_load_n(&sig_written, __ATOMIC_RELAXED) < files) {
    errno = ETIMEDOUT;
    return -1;
  }
  return 0;
}

/* what walk met, one line each */
static char walk_lines[64][512];
static int walk_count;

static int walk_record(const char* path, const struct stat* st, int type, struct FTW* ftw)
{
  (void) st;
  static const char* const types[] = { [FTW_F] = "F", [FTW_D] = "D", [FTW_DNR] = "DNR", [FTW_NS] = "NS",
                                       [FTW_SL] = "SL", [FTW_DP] = "DP", [FTW_SLN] = "SLN" };
  if (walk_count < 64) snprintf(walk_lines[walk_count++], sizeof(walk_lines[0]), "  = %s %d %s\n", types[type],
                                ftw->level, path);
  return 0;
}

static int compare_lines(const void* a, const void* b) { return strcmp(a, b); }

/* the lines collected, sorted (the order of a listing is the file system's), onto detail */
static void append_lines(char* detail, size_t size)
{
  qsort(walk_lines, (size_t) walk_count, sizeof(walk_lines[0]), compare_lines);
  for (int i = 0; i < walk_count; i++) strncat(detail, walk_lines[i], size - strlen(detail) - 1);
}

static int list_entries(const char* path, char* detail, size_t size)
{
  DIR* d = opendir(path);
  if (!d) return -1;
  walk_count = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL && walk_count < 64) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char type = e->d_type == DT_REG ? 'f' : e->d_type == DT_DIR ? 'd' : e->d_type == DT_LNK ? 'l' : '?';
    snprintf(walk_lines[walk_count++], sizeof(walk_lines[0]), "  = %s %c\n", e->d_name, type);
  }
  closedir(d);
  append_lines(detail, size);
  return walk_count;
}

static int scan_at(const char* path, char* detail, size_t size)
{
  int dirfd = open(".", O_RDONLY | O_DIRECTORY);
  if (dirfd < 0) return -1;
  struct dirent** list = NULL;
  int n = scandirat(dirfd, path, &list, NULL, alphasort);
  int saved_errno = errno;
  close(dirfd);
  for (int i = 0; i < n; i++) {
    char line[512];
    snprintf(line, sizeof(line), "  = %s\n", list[i]->d_name);
    strncat(detail, line, size - strlen(detail) - 1);
    free(list[i]);
  }
  if (n >= 0) free(list);
  errno = saved_errno;
  return n;
}

static int stat_entries(const char* path)
{
  DIR* d = opendir(path);
  if (!d) return -1;
  long total = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    struct stat st;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      int saved_errno = errno;
      closedir(d);
      errno = saved_errno;
      return -1;
    }
    if (S_ISREG(st.st_mode)) total += st.st_size;
  }
  closedir(d);
  return (int) total;
}

static int compare_inodes(const char* path, char* detail, size_t size)
{
  DIR* d = opendir(path);
  if (!d) return -1;
  int differ = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    char full[4096];
    struct stat st;
    snprintf(full, sizeof(full), "%s/%s", path, e->d_name);
    if (lstat(full, &st) != 0) {
      int saved_errno = errno;
      closedir(d);
      errno = saved_errno;
      return -1;
    }
    if (st.st_ino != e->d_ino) {
      differ++;
      size_t used = strlen(detail);
      snprintf(detail + used, size - used, "  = %s\n", e->d_name);
    }
  }
  closedir(d);
  return differ;
}

static int walk_tree(const char* path, char* detail, size_t size, int flags)
{
  walk_count = 0;
  int rc = nftw(path, walk_record, 4, FTW_PHYS | flags);
  append_lines(detail, size);
  return rc == 0 ? walk_count : rc;
}

static int walk_remove(const char* path, const struct stat* st, int type, struct FTW* ftw)
{
  (void) st, (void) type, (void) ftw;
  return remove(path);
}

/* st_mode's permissions as octal digits (644 for rw-r--r--) */
static int mode_digits(mode_t mode)
{
  unsigned m = mode & 07777;
  return (int) ((m >> 9 & 7) * 1000 + (m >> 6 & 7) * 100 + (m >> 3 & 7) * 10 + (m & 7));
}

/* spec MODE=PATH: the mode, and *path after the '=' (-1 EINVAL without one) */
static int mode_spec(const char* spec, const char** path)
{
  const char* eq = strchr(spec, '=');
  if (!eq) {
    errno = EINVAL;
    return -1;
  }
  *path = eq + 1;
  return (int) strtol(spec, NULL, 8);
}

static int all_modes(const char* path, char* detail, size_t size)
{
  struct stat st;
  struct statx stx;
  int m[6];
  if (stat(path, &st) != 0) return -1;
  m[0] = mode_digits(st.st_mode);
  m[1] = lstat(path, &st) == 0 ? mode_digits(st.st_mode) : -1;
  m[2] = fstatat(AT_FDCWD, path, &st, 0) == 0 ? mode_digits(st.st_mode) : -1;
  m[3] = statx(AT_FDCWD, path, 0, STATX_MODE, &stx) == 0 ? mode_digits(stx.stx_mode) : -1;
  int fd = open(path, O_RDONLY);
  m[4] = fd >= 0 && fstat(fd, &st) == 0 ? mode_digits(st.st_mode) : -1;
  if (fd >= 0) close(fd);
  /* the parent listed, the entry stat'ed through the listing's descriptor */
  char parent[4096];
  const char* slash = strrchr(path, '/');
  snprintf(parent, sizeof(parent), "%.*s", slash ? (int) (slash - path) : 1, slash ? path : ".");
  const char* name = slash ? slash + 1 : path;
  DIR* d = opendir(parent);
  struct dirent* e;
  m[5] = -1;
  while (d && (e = readdir(d)) != NULL)
    if (strcmp(e->d_name, name) == 0 && fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0)
      m[5] = mode_digits(st.st_mode);
  if (d) closedir(d);
  snprintf(detail, size, "  = %d %d %d %d %d %d\n", m[0], m[1], m[2], m[3], m[4], m[5]);
  return m[0];
}

static int tell_append(const char* spec, char* detail, size_t size)
{
  const char* eq = strchr(spec, '=');
  if (!eq || eq - spec > 7) {
    errno = EINVAL;
    return -1;
  }
  const char* path = eq + 1;
  char how[8];
  snprintf(how, sizeof(how), "%.*s", (int) (eq - spec), spec);
  long before, after;
  int ok;
  if (strcmp(how, "open") == 0) {
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) return -1;
    before = (long) lseek(fd, 0, SEEK_CUR);
    ok = write(fd, "abc\n", 4) == 4;
    after = (long) lseek(fd, 0, SEEK_CUR);
    ok = close(fd) == 0 && ok;
  } else {
    FILE* f = strcmp(how, "freopen") == 0 ? fopen(path, "r") : fopen(path, how);
    if (f && strcmp(how, "freopen") == 0) f = freopen(path, "a", f);
    if (!f) return -1;
    before = ftell(f);
    ok = fputs("abc\n", f) >= 0;
    after = ftell(f);
    ok = fclose(f) == 0 && ok;
  }
  if (!ok) return -1;
  snprintf(detail, size, "  = %ld %ld\n", before, after);
  return (int) before;
}

/* ThreadSanitizer's hook for a system call made without libc, present when
 * its runtime is loaded: it keeps a state per descriptor, and a number it
 * saw no close of, given to another thread's file (the preload's publish
 * finisher), is a race on that state to it. The raw close stays behind
 * every wrapper of the preload; only the sanitizer's bookkeeping hears. */
void __sanitizer_syscall_pre_impl_close(long fd) __attribute__((weak));
static void raw_close_told(int fd)
{
  if (__sanitizer_syscall_pre_impl_close) __sanitizer_syscall_pre_impl_close(fd);
}

/* PATH created and "rank R\n" written, then its descriptor ended by `how`
 * (CLOSERANGE...RAWHIGH) instead of close */
static int write_then_end(const char* path, int rank, int how)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  char text[32];
  int n = snprintf(text, sizeof(text), "rank %d\n", rank);
  int rc = write(fd, text, (size_t) n) == n ? 0 : -1, saved;
  switch (how) {
  case CLOSERANGE: {
    int copy = fcntl(fd, F_DUPFD, fd + 1);
    if (copy < 0) return -1;
    /* never a descriptor of someone else's in the range (MPI's) */
    if (copy == fd + 1) return close_range((unsigned) fd, (unsigned) copy, 0) != 0 ? -1 : rc;
    return close_range((unsigned) fd, (unsigned) fd, 0) != 0 || close_range((unsigned) copy, (unsigned) copy, 0) != 0
               ? -1 : rc;
  }
  case CLOSEFROM: {
    int high = fcntl(fd, F_DUPFD, 900);
    if (high < 0 || close(fd) != 0) return -1;
    closefrom(high);
    /* closefrom returns nothing: the descriptor must be gone */
    return fcntl(high, F_GETFD) == -1 && errno == EBADF ? rc : -1;
  }
  case CLOEXEC:
    if (close_range((unsigned) fd, (unsigned) fd, CLOSE_RANGE_CLOEXEC) != 0) return -1;
    if (fcntl(fd, F_GETFD) != FD_CLOEXEC || write(fd, "more\n", 5) != 5) rc = -1;
    return close(fd) != 0 ? -1 : rc;
  case UNSHARE: return close_range((unsigned) fd, (unsigned) fd, CLOSE_RANGE_UNSHARE) != 0 ? -1 : rc;
  case DUP2OVER: {
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, fd) != fd) return -1;
    saved = close(null);
    return close(fd) != 0 || saved != 0 ? -1 : rc;
  }
  case RAWHIGH: {
    if (rank != 0) goto raw;
    int high = fcntl(fd, F_DUPFD, 900);
    if (high < 0 || close(fd) != 0) return -1;
    fd = high;
  }
    /* fall through */
  case RAWCLOSE:
  raw:
    raw_close_told(fd);
    return syscall(SYS_close, fd) != 0 ? -1 : rc;
  }
  errno = EINVAL;
  return -1;
}

/* the descriptor of hold, for append and release */
static int held = -1;

/* one operation: its result, and in detail any lines that follow it */
static int run(int kind, char* path, int rank, char* detail, size_t size)
{
  switch (kind) {
  case REMOVE: return remove(path);
  case RMDIR: return rmdir(path);
  case RMTREE: return remove_tree(path);
  case UNLINK: return unlink(path);
  case RENAME: return rename_pair(path);
  case READ: return read_whole(path);
  case MKDIR: return mkdir(path, 0755);
  case CHDIR: return chdir(path);
  case MKSTEMP: return write_by_mkstemp(path, rank);
  case REALPATH: return resolve(path, detail, size);
  case EXCL: return open_close(path, O_WRONLY | O_CREAT | O_EXCL, 0);
  case UPDATE: return open_close(path, O_RDWR | O_CREAT, 1);
  case WRITE: return write_new(path, rank);
  case REWRITE: return write_again(path, O_WRONLY | O_TRUNC, rank);
  case REWRITERW: return write_again(path, O_RDWR | O_TRUNC, rank);
  case FWRITE: return fwrite_new(path, rank);
  case GLOB: return expand(path, 0, detail, size);
  case GLOBERR: return expand(path, GLOB_ERR, detail, size);
  case STATVFS: {
    struct statvfs st;
    return statvfs(path, &st);
  }
  case SYMLINK: return symlink_pair(path);
  case LINK: return link_pair(path, 0);
  case LINKF: return link_pair(path, AT_SYMLINK_FOLLOW);
  case READLINK: return read_link(path, detail, size);
  case NLINK: {
    struct stat st;
    return stat(path, &st) == 0 ? (int) st.st_nlink : -1;
  }
  case SAME: return same_pair(path);
  case KIND: return kind_of(path);
  case MKFIFO: return mkfifo(path, 0640);
  case MKNOD: return mknod(path, S_IFIFO | 0640, 0);
  case STAT: return stat_size(path);
  case MTIME: {
    struct stat st;
    return stat(path, &st) == 0 ? (int) st.st_mtime : -1;
  }
  case ATIME:
  case ATIMEW: {
    struct stat before, after;
    int fd = kind == ATIME ? open(path, O_RDONLY) : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || fstat(fd, &before) != 0) return -1;
    struct timespec times[2] = { { before.st_atime - 86400, 0 }, { 0, UTIME_OMIT } };
    if (futimens(fd, times) != 0 || fstat(fd, &before) != 0 || close(fd) != 0 || stat(path, &after) != 0)
      return -1;
    return after.st_atime != before.st_atime;
  }
  case SLEEP: return (int) sleep((unsigned) atoi(path));
  case AWAIT: return run_await(path);
  case DIE: return raise(SIGKILL);
  case INPLACE: return open_close(path, O_RDWR, 1);
  case RW: return open_close(path, O_RDWR, 0);
  case TRUNCATE: return truncate(path, 3);
  case COPY: return copy_pair(path);
  case HOLD: return held = open(path, O_RDWR | O_APPEND), held < 0 ? -1 : 0;
  case HOLDNEW: {
    char text[32];
    int n = snprintf(text, sizeof(text), "rank %d\n", rank);
    held = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    return held < 0 ? -1 : write(held, text, (size_t) n) == n ? 0 : -1;
  }
  case APPEND: return write(held, "more\n", 5) == 5 ? 0 : -1;
  case RELEASE: {
    int rc = close(held);
    held = -1;
    return rc;
  }
  case MMAP: return map_whole(path, rank, 0);
  case MMAPCLOSE: return map_whole(path, rank, 1);
  case MAP: return map_new(path, rank, 0);
  case MSTORE: return map_store(rank);
  case UNMAP: return map_release();
  case CHMOD: return chmod(path, 0444);
  case MODE: {
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    unsigned m = st.st_mode & 07777;
    return (int) ((m >> 6 & 7) * 100 + (m >> 3 & 7) * 10 + (m & 7));
  }
  case MKDIRM: {
    const char* dir;
    int mode = mode_spec(path, &dir);
    return mode < 0 ? -1 : mkdir(dir, (mode_t) mode);
  }
  case CHMODM: {
    const char* file;
    int mode = mode_spec(path, &file);
    return mode < 0 ? -1 : chmod(file, (mode_t) mode);
  }
  case MODES: return all_modes(path, detail, size);
  case TELL: return tell_append(path, detail, size);
  case XATTRS: {
    /* as Python's shutil.copy2 does: list, then read each attribute */
    char names[4096];
    ssize_t n = listxattr(path, names, sizeof(names));
    for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t) strlen(names + i) + 1) {
      char value[256];
      if (getxattr(path, names + i, value, sizeof(value)) < 0 && errno != ENODATA) return -1;
    }
    return (int) n;
  }
  case SETXATTR: return setxattr(path, "user.scr", "1", 1, 0);
  case WALK: return walk_tree(path, detail, size, 0);
  case WALKCD: return walk_tree(path, detail, size, FTW_CHDIR);
  case FILE_APPEND: return fappend(path, rank);
  case DIRSTAT: return stat_entries(path);
  case INODES: return compare_inodes(path, detail, size);
  case LIST: return list_entries(path, detail, size);
  case SCANAT: return scan_at(path, detail, size);
  case FILE_REOPEN: return freopen_append(path, rank);
  case RMWALK: return nftw(path, walk_remove, 4, FTW_DEPTH | FTW_PHYS);
  case DIRFD:
    if (at_dir >= 0) close(at_dir);
    return at_dir = open(path, O_RDONLY | O_DIRECTORY), at_dir < 0 ? -1 : 0;
  case WRITEAT: return write_at(path, rank);
  case READAT: return read_at(path);
  case MKDIRAT: return mkdirat(at_dir, path, 0755);
  case RENAMEAT: return rename_at(path);
  case UNLINKAT: return unlinkat(at_dir, path, 0);
  case SAMEAT: return same_at(path);
  case FCHDIR: return fchdir(at_dir);
  case CWD: return current_dir(detail, size);
  case RELIST: {
    /* the same entries again after rewinddir */
    DIR* d = opendir(path);
    if (!d) return -1;
    int first = 0, second = 0;
    while (readdir(d)) first++;
    rewinddir(d);
    while (readdir(d)) second++;
    closedir(d);
    if (first != second) {
      errno = EIO;
      return -1;
    }
    return second;
  }
  case SIGCKPT:
  case SIGALLOC: {
    snprintf(sig_base, sizeof(sig_base), "%s", path);
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = sig_write;
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, NULL);
    struct itimerval every = { { 0, 2000 }, { 0, 2000 } }, off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &every, NULL);
    int rc = 0;
    if (kind == SIGCKPT) {
      char name[300];
      snprintf(name, sizeof(name), "%s_m.dat", path);
      for (int i = 0; i < 100 && rc == 0; i++) rc = write_new(name, rank);
    } else {
      rc = sig_allocate(200, 30);
    }
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_DFL);
    return rc == 0 && !__atomic_load_n(&sig_failed, __ATOMIC_RELAXED) ? 0 : -1;
  }
  case MPIIO:
  case MPIIOCRASH: {
    MPI_File fh;
    char text[32];
    int n = snprintf(text, sizeof(text), "rank %d\n", rank), error = 0;
    int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) rc = MPI_File_write_at(fh, 0, text, n, MPI_CHAR, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && kind == MPIIOCRASH) {
      fflush(NULL);
      raise(SIGKILL);
    }
    if (rc == MPI_SUCCESS) rc = MPI_File_close(&fh);
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error);
    return rc == MPI_SUCCESS ? 0 : error;
  }
  case CLOSERANGE:
  case CLOSEFROM:
  case CLOEXEC:
  case UNSHARE:
  case DUP2OVER:
  case RAWCLOSE:
  case RAWHIGH: return write_then_end(path, rank, kind);
  case SYSTEM: return run_system(path);
  case POPEN: return run_popen(path, detail, size);
  case SPAWN: return run_spawn(path, detail, size);
  case SPAWNENV: return run_spawn_with(path, detail, size, bare_environment);
  case EXECENV: return run_forkexec_with(path, detail, size, bare_environment);
  case FORKEXEC: return run_forkexec_with(path, detail, size, NULL);
  case FORKREAD: return run_forkread(path, detail, size);
  case CRASH:
  case CRASHRW: {
    int fd = open(path, O_RDWR);
    if (fd < 0 || (kind == CRASH && pwrite(fd, "X", 1, 0) != 1)) return -1;
    fflush(NULL);
    raise(SIGKILL);
    return -1;
  }
  }
  errno = EINVAL;
  return -1;
}

/* template with every "%d" replaced by the rank; 0 when it does not fit */
static int expand_rank(char* out, size_t size, const char* template, int rank)
{
  size_t used = 0;
  for (const char* p = template; *p; p++) {
    int n = p[0] == '%' && p[1] == 'd' ? snprintf(out + used, size - used, "%d", rank)
                                       : snprintf(out + used, size - used, "%c", *p);
    if (n < 0 || (size_t) n >= size - used) return 0;
    used += (size_t) n;
    if (p[0] == '%' && p[1] == 'd') p++;
  }
  if (used == 0 && size > 0) out[0] = '\0';
  return 1;
}

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!getcwd(start_dir, sizeof(start_dir))) start_dir[0] = '\0';
  for (int i = 1; i < argc; i++) {
    const char* colon = strchr(argv[i], ':');
    size_t op = colon ? (size_t) (colon - argv[i]) : 0;
    const char* at = colon ? memchr(argv[i], '@', op) : NULL;
    size_t name = at ? (size_t) (at - argv[i]) : op;
    int every = at && op - name == 4 && strncmp(at + 1, "all", 3) == 0;
    int only = at && !every ? atoi(at + 1) : -1;
    int kind = -1;
    for (int k = 0; colon && k < OPS; k++)
      if (name == strlen(op_names[k]) && strncmp(argv[i], op_names[k], name) == 0) kind = k;
    char path[4096];
    if (kind < 0 || !expand_rank(path, sizeof(path), colon + 1, rank)) {
      if (rank == 0) fprintf(stderr, "mpi-fileops: bad operation '%s' (OP[@RANK]:PATH)\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (every) {
      char detail[8192] = "";
      int mine[2], ranks = 1;
      mine[0] = run(kind, path, rank, detail, sizeof(detail));
      mine[1] = errno;
      MPI_Comm_size(MPI_COMM_WORLD, &ranks);
      int* all = rank == 0 ? malloc(sizeof(int) * 2 * (size_t) ranks) : NULL;
      MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
      for (int r = 0; rank == 0 && r < ranks; r++) {
        char shown[4096];
        expand_rank(shown, sizeof(shown), colon + 1, r);
        printf("%.*s@%d %s: %d %s\n", (int) name, argv[i], r, shown, all[2 * r],
               all[2 * r] >= 0 ? "ok" : strerror(all[2 * r + 1]));
      }
      fflush(stdout);
      free(all);
    } else if (only < 0 || only == rank) {
      char shown[4096], detail[8192] = "";
      snprintf(shown, sizeof(shown), "%s", path);
      int rc = run(kind, path, rank, detail, sizeof(detail));
      if (rank == 0 || only == rank) {
        printf("%.*s %s: %d %s\n%s", (int) op, argv[i], shown, rc, rc >= 0 ? "ok" : strerror(errno), detail);
        fflush(stdout);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
