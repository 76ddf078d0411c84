/* io-probe-calls.c - the rest of the wrapped functions, each with a success and
 * its error cases, printed so that runs with and without the preload compare. */
#include "config.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <utime.h>
#include <unistd.h>
#include "io-probe.h"

/* the _FORTIFY_SOURCE entry points, declared by glibc only in fortified builds */
int __open_2(const char* path, int flags);
int __open64_2(const char* path, int flags);
int __openat_2(int dirfd, const char* path, int flags);
int __openat64_2(int dirfd, const char* path, int flags);

static void report_rc(const char* label, int rc)
{
  int error = errno;
  report(label, rc, rc < 0, error);
}

/* fd's flags that both runs share, then close it */
static void report_copy(const char* label, int fd)
{
  int error = errno;
  report(label, fd, fd < 0, error);
  if (fd < 0) return;
  printf("  cloexec=%d\n", (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
  close(fd);
}

static void make(const char* path, const char* text)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t) strlen(text)) exit(2);
  close(fd);
}

void probe_open_variants(const char* fixture)
{
  int dirfd = open("probe.d", O_RDONLY | O_DIRECTORY);
  report_fd("open64 fixture", open64(fixture, O_RDONLY));
  report_fd("open64 O_CREAT|O_EXCL existing", open64("probe.d/a.txt", O_WRONLY | O_CREAT | O_EXCL, 0600));
  report_fd("openat64 directory fd", openat64(dirfd, "a.txt", O_RDONLY));
  report_fd("openat64 bad fd", openat64(999, "a.txt", O_RDONLY));
  report_fd("creat new", creat("probe.d/creat.txt", 0640));
  report_fd("creat on a directory", creat("probe.d", 0640));
  report_fd("creat64 in a missing directory", creat64("probe.d/nodir/x.txt", 0600));
  report_fd("creat64 below a file", creat64("probe.d/a.txt/x.txt", 0600));
  report_fd("__open_2 existing", __open_2("probe.d/a.txt", O_RDONLY));
  report_fd("__open_2 missing", __open_2("probe.d/missing.txt", O_RDONLY));
  report_fd("__open64_2 on a directory for writing", __open64_2("probe.d", O_WRONLY));
  report_fd("__openat_2 directory fd", __openat_2(dirfd, "a.txt", O_RDONLY));
  report_fd("__openat64_2 bad fd", __openat64_2(-5, "a.txt", O_RDONLY));
  /* the mode reaches the file, through each variadic form */
  report_fd("open new with a mode", open("probe.d/mode-open.txt", O_WRONLY | O_CREAT | O_EXCL, 0640));
  report_fd("open64 new with a mode", open64("probe.d/mode-open64.txt", O_RDWR | O_CREAT | O_EXCL, 0604));
  report_fd("openat new with a mode", openat(dirfd, "mode-openat.txt", O_WRONLY | O_CREAT, 0660));
  report_fd("openat64 new with a mode", openat64(dirfd, "mode-openat64.txt", O_WRONLY | O_CREAT | O_TRUNC, 0600));
  close(dirfd);
  struct stat st;
  report_stat("stat creat file", stat("probe.d/creat.txt", &st), &st, 0);
  static const char* const made[] = { "probe.d/mode-open.txt", "probe.d/mode-open64.txt", "probe.d/mode-openat.txt",
                                      "probe.d/mode-openat64.txt" };
  for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) report_stat(made[i], stat(made[i], &st), &st, 0);
}

void probe_stdio_variants(const char* fixture)
{
  report_file("fopen64 fixture", fopen64(fixture, "r"));
  report_file("fopen64 missing", fopen64("probe.d/missing.txt", "r"));
  report_file("fopen64 w+ new", fopen64("probe.d/f64.txt", "w+"));
  FILE* f = fopen("probe.d/a.txt", "r");
  f = freopen("probe.d/f64.txt", "a", f);
  if (f) fputs("appended\n", f);
  report_file("freopen to another file", f);
  f = fopen("probe.d/a.txt", "r");
  errno = 0;
  report_file("freopen of a missing file", freopen("probe.d/missing.txt", "r", f));
  f = fopen("probe.d/f64.txt", "r");
  report_file("freopen NULL path, new mode", freopen(NULL, "a", f));
  f = fopen("probe.d/a.txt", "r");
  report_file("freopen64 wx of an existing file", freopen64("probe.d/f64.txt", "wx", f));
  f = fopen("probe.d/a.txt", "r");
  report_file("freopen64 to a directory for writing", freopen64("probe.d", "w", f));
  struct stat st;
  report_stat("stat freopen file", stat("probe.d/f64.txt", &st), &st, 0);
}

void probe_descriptors(void)
{
  report_rc("close -1", close(-1));
  report_rc("close unused", close(900));
  int fd = open("probe.d/a.txt", O_RDWR);
  report_copy("dup", dup(fd));
  report_rc("dup bad", dup(-1));
  report_rc("dup2 onto itself", dup2(fd, fd));
  report_copy("dup2 onto 40", dup2(fd, 40));
  report_rc("dup2 bad source", dup2(901, 41));
  report_rc("dup2 bad target", dup2(fd, -1));
  report_rc("dup3 onto itself", dup3(fd, fd, 0));
  report_copy("dup3 O_CLOEXEC onto 42", dup3(fd, 42, O_CLOEXEC));
  report_rc("dup3 bad flags", dup3(fd, 43, 12345));
  report_copy("fcntl F_DUPFD from 20", fcntl(fd, F_DUPFD, 20));
  report_copy("fcntl F_DUPFD_CLOEXEC from 30", fcntl(fd, F_DUPFD_CLOEXEC, 30));
  report_rc("fcntl F_DUPFD bad fd", fcntl(902, F_DUPFD, 0));
  report_rc("fcntl F_DUPFD negative minimum", fcntl(fd, F_DUPFD, -3));
  report_rc("fcntl F_GETFD", fcntl(fd, F_GETFD));
  report_rc("fcntl F_SETFD", fcntl(fd, F_SETFD, FD_CLOEXEC));
  report_rc("fcntl F_GETFD after", fcntl(fd, F_GETFD));
  report_rc("fcntl F_GETFL", fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND | O_NONBLOCK));
  report_rc("fcntl F_SETFL", fcntl(fd, F_SETFL, O_APPEND | O_NONBLOCK));
  report_rc("fcntl F_GETFL after", fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND | O_NONBLOCK));
  struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 4 };
  report_rc("fcntl F_SETLK", fcntl(fd, F_SETLK, &lock));
  lock.l_type = F_RDLCK;
  report_rc("fcntl F_GETLK", fcntl(fd, F_GETLK, &lock));
  printf("  l_type=%d\n", lock.l_type);
  struct flock ofd = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
  report_rc("fcntl F_OFD_GETLK", fcntl(fd, F_OFD_GETLK, &ofd));
  printf("  l_type=%d held by this process=%d\n", ofd.l_type, ofd.l_pid == getpid());
  report_rc("fcntl F_OFD_GETLK bad pointer", fcntl(fd, F_OFD_GETLK, (struct flock*) 8));
  struct f_owner_ex owner = { .type = 7, .pid = 7 };
  report_rc("fcntl F_GETOWN_EX", fcntl(fd, F_GETOWN_EX, &owner));
  printf("  type=%d pid=%d\n", owner.type, (int) owner.pid);
  report_rc("fcntl unknown command", fcntl(fd, 12345, 0));
  report_rc("fcntl bad fd", fcntl(-1, F_GETFD));
  int pipes[2];
  if (pipe(pipes) == 0) {
    report_rc("fcntl F_SETPIPE_SZ", fcntl(pipes[0], F_SETPIPE_SZ, 8192));
    report_rc("fcntl F_GETPIPE_SZ", fcntl(pipes[0], F_GETPIPE_SZ));
    report_rc("fcntl64 F_GETPIPE_SZ", fcntl64(pipes[1], F_GETPIPE_SZ));
    close(pipes[0]);
    close(pipes[1]);
  }
  report_copy("fcntl64 F_DUPFD_CLOEXEC from 50", fcntl64(fd, F_DUPFD_CLOEXEC, 50));
  lock.l_type = F_UNLCK;
  report_rc("fcntl64 F_SETLKW unlock", fcntl64(fd, F_SETLKW, &lock));
  report_rc("fcntl64 bad fd", fcntl64(903, F_GETFL));
  report_rc("close", close(fd));
  report_rc("close again", close(fd));
  FILE* f = fopen("probe.d/a.txt", "r");
  report_rc("fclose", fclose(f));
  f = fopen("probe.d/f64.txt", "w");
  close(fileno(f));
  fputs("lost", f);
  errno = 0;
  report_rc("fclose after its descriptor was closed", fclose(f));
}

void probe_names(void)
{
  make("probe.d/r1.txt", "one\n");
  make("probe.d/r2.txt", "two\n");
  mkdir("probe.d/rdir", 0755);
  mkdir("probe.d/full", 0755);
  make("probe.d/full/inside", "x");
  report_rc("rename", rename("probe.d/r1.txt", "probe.d/r3.txt"));
  report_rc("rename missing", rename("probe.d/r1.txt", "probe.d/r4.txt"));
  report_rc("rename a file onto a directory", rename("probe.d/r3.txt", "probe.d/rdir"));
  report_rc("rename a directory onto a file", rename("probe.d/rdir", "probe.d/r3.txt"));
  report_rc("rename into a missing directory", rename("probe.d/r3.txt", "probe.d/nodir/r3.txt"));
  report_rc("rename below a file", rename("probe.d/r3.txt/x", "probe.d/r5.txt"));
  report_rc("rename onto a non-empty directory", rename("probe.d/rdir", "probe.d/full"));
  int dirfd = open("probe.d", O_RDONLY | O_DIRECTORY);
  report_rc("renameat", renameat(dirfd, "r3.txt", AT_FDCWD, "probe.d/r1.txt"));
  report_rc("renameat bad fd", renameat(904, "r1.txt", dirfd, "r6.txt"));
  report_rc("renameat2 RENAME_NOREPLACE onto existing", renameat2(dirfd, "r1.txt", dirfd, "r2.txt", RENAME_NOREPLACE));
  report_rc("renameat2 RENAME_EXCHANGE", renameat2(dirfd, "r1.txt", dirfd, "r2.txt", RENAME_EXCHANGE));
  report_rc("renameat2 bad flags", renameat2(dirfd, "r1.txt", dirfd, "r7.txt", 0x7000));
  char text[8] = "";
  FILE* f = fopen("probe.d/r1.txt", "r");
  if (f && fgets(text, sizeof(text), f)) printf("  r1.txt now holds %s", text);
  if (f) fclose(f);

  report_rc("unlink", unlink("probe.d/r2.txt"));
  report_rc("unlink missing", unlink("probe.d/r2.txt"));
  report_rc("unlink a directory", unlink("probe.d/rdir"));
  report_rc("unlink below a file", unlink("probe.d/r1.txt/x"));
  report_rc("unlinkat AT_REMOVEDIR non-empty", unlinkat(dirfd, "full", AT_REMOVEDIR));
  report_rc("unlinkat AT_REMOVEDIR a file", unlinkat(dirfd, "r1.txt", AT_REMOVEDIR));
  report_rc("unlinkat AT_REMOVEDIR", unlinkat(dirfd, "rdir", AT_REMOVEDIR));
  report_rc("unlinkat a file", unlinkat(dirfd, "r1.txt", 0));
  report_rc("unlinkat bad flags", unlinkat(dirfd, "full/inside", 0x4000));

  make("probe.d/t.txt", "truncate me\n");
  struct stat st;
  report_rc("truncate", truncate("probe.d/t.txt", 3));
  report_stat("stat truncated", stat("probe.d/t.txt", &st), &st, 0);
  report_rc("truncate missing", truncate("probe.d/missing.txt", 3));
  report_rc("truncate a directory", truncate("probe.d", 3));
  report_rc("truncate negative", truncate("probe.d/t.txt", -1));
  report_rc("truncate64 longer", truncate64("probe.d/t.txt", 10000));
  report_stat("stat extended", stat("probe.d/t.txt", &st), &st, 0);
  report_rc("truncate64 below a file", truncate64("probe.d/t.txt/x", 1));

  report_rc("mkdir", mkdir("probe.d/m", 0751));
  report_stat("stat made directory", stat("probe.d/m", &st), &st, 0);
  report_rc("mkdir existing", mkdir("probe.d/m", 0751));
  report_rc("mkdir missing parent", mkdir("probe.d/nodir/m", 0751));
  report_rc("mkdir below a file", mkdir("probe.d/t.txt/m", 0751));
  report_rc("mkdirat", mkdirat(dirfd, "m2", 0700));
  report_rc("mkdirat existing", mkdirat(dirfd, "m2", 0700));
  report_rc("mkdirat bad fd", mkdirat(905, "m3", 0700));
  report_rc("mkdir ck.5 (a rule directory in some runs)", mkdir("probe.d/ck.5", 0755));
  close(dirfd);
}

/* the stat fields of the old __xstat ABI, found by name (no header has it) */
typedef int (*xstat_fn)(int, const char*, struct stat*);
typedef int (*fxstatat_fn)(int, int, const char*, struct stat*, int);

void probe_stat_variants(const char* fixture)
{
  struct stat st;
  struct stat64 st64;
  int dirfd = open("probe.d", O_RDONLY | O_DIRECTORY);
  report_stat("lstat of a file", lstat("probe.d/a.txt", &st), &st, 0);
  report_stat("lstat missing", lstat("probe.d/missing", &st), &st, 0);
  report_stat("lstat symlink loop", lstat("probe.d/loop", &st), &st, 0);
  report_stat("fstatat AT_SYMLINK_NOFOLLOW", fstatat(dirfd, "link", &st, AT_SYMLINK_NOFOLLOW), &st, 0);
  report_stat("fstatat AT_EMPTY_PATH", fstatat(dirfd, "", &st, AT_EMPTY_PATH), &st, 0);
  report_stat("fstatat empty path without flag", fstatat(dirfd, "", &st, 0), &st, 0);
  report_stat("fstatat bad fd", fstatat(906, "a.txt", &st, 0), &st, 0);
  report_stat("fstatat bad flags", fstatat(dirfd, "a.txt", &st, 0x7000000), &st, 0);
  int rc = stat64(fixture, &st64);
  report("stat64 fixture", rc, rc != 0, errno);
  if (rc == 0) printf("  size=%lld ino=%llu\n", (long long) st64.st_size, (unsigned long long) st64.st_ino);
  rc = stat64("probe.d/a.txt/x", &st64);
  report("stat64 below a file", rc, rc != 0, errno);
  rc = lstat64("probe.d/link", &st64);
  report("lstat64 symlink", rc, rc != 0, errno);
  if (rc == 0) printf("  mode=%o size=%lld\n", (unsigned) st64.st_mode, (long long) st64.st_size);
  rc = fstatat64(dirfd, "a.txt", &st64, 0);
  report("fstatat64", rc, rc != 0, errno);
  if (rc == 0) printf("  mode=%o size=%lld\n", (unsigned) st64.st_mode, (long long) st64.st_size);
  rc = fstatat64(dirfd, "missing", &st64, 0);
  report("fstatat64 missing", rc, rc != 0, errno);

  struct statx sx;
  memset(&sx, 0, sizeof(sx));
  rc = statx(AT_FDCWD, fixture, 0, STATX_BASIC_STATS, &sx);
  report("statx fixture", rc, rc != 0, errno);
  if (rc == 0)
    printf("  mask=%x mode=%o size=%llu ino=%llu mtime=%lld.%09u\n", sx.stx_mask & STATX_BASIC_STATS,
           (unsigned) sx.stx_mode, (unsigned long long) sx.stx_size, (unsigned long long) sx.stx_ino,
           (long long) sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec);
  rc = statx(dirfd, "link", AT_SYMLINK_NOFOLLOW, STATX_MODE | STATX_SIZE, &sx);
  report("statx symlink", rc, rc != 0, errno);
  if (rc == 0) printf("  mode=%o size=%llu\n", (unsigned) sx.stx_mode, (unsigned long long) sx.stx_size);
  rc = statx(dirfd, "", AT_EMPTY_PATH, STATX_MODE, &sx);
  report("statx AT_EMPTY_PATH", rc, rc != 0, errno);
  if (rc == 0) printf("  mode=%o\n", (unsigned) sx.stx_mode);
  rc = statx(AT_FDCWD, "probe.d/missing", 0, STATX_BASIC_STATS, &sx);
  report("statx missing", rc, rc != 0, errno);
  rc = statx(AT_FDCWD, "probe.d/a.txt", 0x7000000, STATX_BASIC_STATS, &sx);
  report("statx bad flags", rc, rc != 0, errno);

  /* the stat ABI version of x86_64 and most 64-bit targets */
  static const char* const names[] = { "__xstat", "__lxstat", "__xstat64", "__lxstat64" };
  for (int i = 0; i < 4; i++) {
    xstat_fn fn = (xstat_fn) dlsym(RTLD_DEFAULT, names[i]);
    if (!fn) continue;
    char label[64];
    snprintf(label, sizeof(label), "%s link", names[i]);
    report_stat(label, fn(1, "probe.d/link", &st), &st, 0);
    snprintf(label, sizeof(label), "%s missing", names[i]);
    report_stat(label, fn(1, "probe.d/missing", &st), &st, 0);
    snprintf(label, sizeof(label), "%s bad version", names[i]);
    report_stat(label, fn(77, "probe.d/a.txt", &st), &st, 0);
  }
  static const char* const at_names[] = { "__fxstatat", "__fxstatat64" };
  for (int i = 0; i < 2; i++) {
    fxstatat_fn fn = (fxstatat_fn) dlsym(RTLD_DEFAULT, at_names[i]);
    if (!fn) continue;
    char label[64];
    snprintf(label, sizeof(label), "%s nofollow", at_names[i]);
    report_stat(label, fn(1, dirfd, "link", &st, AT_SYMLINK_NOFOLLOW), &st, 0);
    snprintf(label, sizeof(label), "%s bad fd", at_names[i]);
    report_stat(label, fn(1, 907, "link", &st, 0), &st, 0);
  }

  rc = access("probe.d/a.txt", X_OK);
  report("access X_OK of a plain file", rc, rc != 0, errno);
  rc = access("probe.d/a.txt/x", F_OK);
  report("access below a file", rc, rc != 0, errno);
  rc = access("probe.d/loop", F_OK);
  report("access symlink loop", rc, rc != 0, errno);
  rc = faccessat(dirfd, "a.txt", R_OK | W_OK, AT_EACCESS);
  report("faccessat AT_EACCESS", rc, rc != 0, errno);
  rc = faccessat(dirfd, "loop", F_OK, AT_SYMLINK_NOFOLLOW);
  report("faccessat AT_SYMLINK_NOFOLLOW of a loop", rc, rc != 0, errno);
  rc = faccessat(dirfd, "missing", F_OK, 0);
  report("faccessat missing", rc, rc != 0, errno);
  rc = faccessat(dirfd, "a.txt", F_OK, 0x7000);
  report("faccessat bad flags", rc, rc != 0, errno);
  rc = faccessat(908, "a.txt", F_OK, 0);
  report("faccessat bad fd", rc, rc != 0, errno);
  close(dirfd);
}

static int by_name(const void* a, const void* b)
{
  return strcmp(*(char* const*) a, *(char* const*) b);
}

/* a directory's names, sorted (readdir's order is the file system's) */
static void report_listing(const char* label, DIR* d, int is64)
{
  int error = errno;
  if (!d) {
    printf("%s: NULL errno=%s\n", label, errno_name(error));
    return;
  }
  char* names[64];
  int n = 0;
  for (;;) {
    const char* name;
    if (is64) {
      struct dirent64* e = readdir64(d);
      name = e ? e->d_name : NULL;
    } else {
      struct dirent* e = readdir(d);
      name = e ? e->d_name : NULL;
    }
    if (!name || n == 64) break;
    names[n++] = strdup(name);
  }
  qsort(names, (size_t) n, sizeof(names[0]), by_name);
  printf("%s:", label);
  for (int i = 0; i < n; i++) {
    printf(" %s", names[i]);
    free(names[i]);
  }
  printf("\n");
  report_rc("  closedir", closedir(d));
}

static int starts_with_a(const struct dirent* e)
{
  return e->d_name[0] == 'a';
}

/* scandir's result; list is read after the call has filled it */
static void report_scan(const char* label, int n, struct dirent*** result)
{
  int error = errno;
  struct dirent** list = *result;
  report(label, n, n < 0, error);
  for (int i = 0; i < n; i++) {
    printf("  %s type=%d\n", list[i]->d_name, list[i]->d_type);
    free(list[i]);
  }
  if (n >= 0) free(list);
}

void probe_directories(void)
{
  report_listing("readdir probe.d", opendir("probe.d"), 0);
  report_listing("readdir64 probe.d", opendir("probe.d"), 1);
  report_listing("opendir missing", opendir("probe.d/missing"), 0);
  report_listing("opendir a file", opendir("probe.d/a.txt"), 0);
  report_listing("opendir empty name", opendir(""), 0);
  struct dirent** list = NULL;
  report_scan("scandir alphasort", scandir("probe.d", &list, NULL, alphasort), &list);
  report_scan("scandir filter", scandir("probe.d", &list, starts_with_a, alphasort), &list);
  report_scan("scandir missing", scandir("probe.d/missing", &list, NULL, alphasort), &list);
  report_scan("scandir a file", scandir("probe.d/a.txt", &list, NULL, alphasort), &list);
  struct dirent64** list64 = NULL;
  int n = scandir64("probe.d/m", &list64, NULL, alphasort64);
  report("scandir64", n, n < 0, errno);
  for (int i = 0; i < n; i++) {
    printf("  %s\n", list64[i]->d_name);
    free(list64[i]);
  }
  if (n >= 0) free(list64);
}

void probe_permissions_more(void)
{
  struct stat st;
  report_rc("rename in a read-only directory", rename("probe.d/readonly/x", "probe.d/readonly/y"));
  report_rc("rename out of a read-only directory", rename("probe.d/a.txt", "probe.d/readonly/a.txt"));
  report_rc("unlink in a directory of root", unlink("probe.d/a.txt"));
  report_rc("unlinkat in an unsearchable directory", unlinkat(AT_FDCWD, "probe.d/closed/x", 0));
  report_rc("truncate an unwritable file", truncate("probe.d/secret", 0));
  report_rc("truncate64 an unwritable file", truncate64("probe.d/secret", 0));
  report_rc("mkdir in a read-only directory", mkdir("probe.d/readonly/d", 0755));
  report_rc("mkdirat in a read-only directory", mkdirat(AT_FDCWD, "probe.d/readonly/d", 0755));
  report_fd("creat in a read-only directory", creat("probe.d/readonly/c", 0644));
  report_fd("open64 unreadable file", open64("probe.d/secret", O_RDONLY));
  report_file("fopen64 w in a read-only directory", fopen64("probe.d/readonly/f", "w"));
  report_stat("lstat below an unsearchable directory", lstat("probe.d/closed/x", &st), &st, 0);
  struct statx sx;
  int rc = statx(AT_FDCWD, "probe.d/closed/x", 0, STATX_BASIC_STATS, &sx);
  report("statx below an unsearchable directory", rc, rc != 0, errno);
  rc = access("probe.d/a.txt", W_OK);
  report("access W_OK of root's file", rc, rc != 0, errno);
  rc = faccessat(AT_FDCWD, "probe.d/secret", R_OK, AT_EACCESS);
  report("faccessat AT_EACCESS unreadable", rc, rc != 0, errno);
  report_listing("opendir unsearchable", opendir("probe.d/closed"), 0);
  struct dirent** list = NULL;
  report_scan("scandir unsearchable", scandir("probe.d/closed", &list, NULL, alphasort), &list);
}

/* a temporary file made from template by make: whether it exists with the
 * right name length (the name itself is random), then gone again */
static void report_temporary(const char* label, const char* pattern, int fd, const char* template)
{
  int error = errno;
  report(label, fd, fd < 0, error);
  if (fd < 0) return;
  struct stat st;
  printf("  made=%d length=%zu\n", stat(template, &st) == 0 && S_ISREG(st.st_mode), strlen(template));
  close(fd);
  unlink(template);
  (void) pattern;
}

void probe_temporaries(void)
{
  char t[64];
  strcpy(t, "probe.d/tmp.XXXXXX");
  report_temporary("mkstemp in a directory", t, mkstemp(t), t);
  strcpy(t, "probe.d/tmp.XXXXXX");
  report_temporary("mkostemp O_CLOEXEC", t, mkostemp(t, O_CLOEXEC), t);
  strcpy(t, "probe.d/tmp.XXXXXX.dat");
  report_temporary("mkstemps with a suffix", t, mkstemps(t, 4), t);
  strcpy(t, "probe.d/tmp.XXXXXX.dat");
  report_temporary("mkostemps64 with a suffix", t, mkostemps64(t, 4, 0), t);
  strcpy(t, "probe.d/missing/tmp.XXXXXX");
  report_temporary("mkstemp64 in a missing directory", t, mkstemp64(t), t);
  strcpy(t, "probe.d/tmp.XXXXX");
  report_temporary("mkstemp with too few X", t, mkstemp(t), t);
  strcpy(t, "probe.d/dir.XXXXXX");
  char* made = mkdtemp(t);
  report_rc("mkdtemp", made ? 0 : -1);
  if (made) rmdir(made);
  strcpy(t, "probe.d/a.txt/dir.XXXXXX");
  report_rc("mkdtemp below a file", mkdtemp(t) ? 0 : -1);
  char cwd[4096];
  if (!getcwd(cwd, sizeof(cwd))) exit(2);
  report_rc("chdir missing", chdir("probe.d/missing"));
  report_rc("chdir a file", chdir("probe.d/a.txt"));
  report_rc("chdir a directory", chdir("probe.d"));
  report_rc("chdir back", chdir(cwd));
}

static void report_resolved(const char* label, char* resolved, int owned)
{
  int error = errno;
  report(label, resolved ? 0 : -1, resolved == NULL, error);
  if (resolved) printf("  = %s\n", resolved);
  if (owned) free(resolved);
}

void probe_realpath(const char* fixture)
{
  char buffer[4096];
  report_resolved("realpath fixture", realpath(fixture, NULL), 1);
  report_resolved("realpath into a buffer", realpath("probe.d/./a.txt", buffer), 0);
  report_resolved("realpath missing", realpath("probe.d/missing", NULL), 1);
  report_resolved("realpath below a file", realpath("probe.d/a.txt/x", buffer), 0);
  report_resolved("realpath symlink", realpath("probe.d/link", NULL), 1);
  report_resolved("canonicalize_file_name", canonicalize_file_name("probe.d//a.txt"), 1);
  report_resolved("canonicalize_file_name missing", canonicalize_file_name("probe.d/missing/x"), 1);
}

void probe_statfs(const char* fixture)
{
  struct statvfs v;
  struct statfs f;
  report_rc("statvfs fixture", statvfs(fixture, &v));
  report_rc("statvfs missing", statvfs("probe.d/missing", &v));
  report_rc("statvfs below a file", statvfs("probe.d/a.txt/x", &v));
  report_rc("statfs directory", statfs("probe.d", &f));
  report_rc("statfs64 missing", statfs64("probe.d/missing/x", (struct statfs64*) &f));
}

void probe_attributes(void)
{
  /* the probe's own file: the fixture, shared by every run, must not change */
  const char* file = "probe.d/a.txt";
  const char* volatile nothing = NULL;
  struct timespec times[2] = { { 1000000000, 0 }, { 1000000000, 500 } };
  struct timeval tv[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
  struct utimbuf ub = { 1000000000, 1000000000 };
  struct stat st;
  report_rc("chmod", chmod(file, 0640));
  report_rc("chmod missing", chmod("probe.d/missing", 0640));
  report_rc("chmod below a file", chmod("probe.d/a.txt/x", 0640));
  report_rc("fchmodat bad flags", fchmodat(AT_FDCWD, file, 0640, 0x4000));
  report_rc("chown to itself", chown(file, getuid(), getgid()));
  report_rc("lchown missing", lchown("probe.d/missing", getuid(), getgid()));
  report_rc("fchownat missing", fchownat(AT_FDCWD, "probe.d/missing", getuid(), getgid(), 0));
  report_rc("utime", utime(file, &ub));
  report_rc("utimes missing", utimes("probe.d/missing", tv));
  report_rc("utimensat", utimensat(AT_FDCWD, file, times, 0));
  report_rc("utimensat bad flags", utimensat(AT_FDCWD, file, times, 0x4000));
  report_rc("utimensat NULL path (futimens)", utimensat(-1, nothing, times, 0));
  report_rc("stat after", stat(file, &st));
  printf("  mode %o mtime %lld.%09ld\n", (unsigned) (st.st_mode & 07777), (long long) st.st_mtim.tv_sec,
         st.st_mtim.tv_nsec);
}
