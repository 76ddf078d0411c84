/* io-probe.c - ordinary file I/O with its results printed (return values, errno
 * names, stat fields), so that runs with and without the preload can be compared. */
#include "config.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "io-probe.h"

/* Usage: io-probe [--load-rules] FIXTURE
 * Runs in the current directory, which it fills with probe.d/; FIXTURE is a
 * file made by the caller, the same for every run, whose stat fields (inode,
 * times) are printed in full. --load-rules asks libscr_preload.so, when it is
 * loaded, to read the PRELOAD rules now (as MPI_Init will), and says on
 * stderr how many it found; stdout does not depend on it. */

const char* errno_name(int e)
{
  const char* name = strerrorname_np(e);
  static char number[32];
  if (name) return name;
  snprintf(number, sizeof(number), "errno %d", e);
  return number;
}

/* "label: ret=R errno=NAME"; errno only when the call failed */
void report(const char* label, long ret, int failed, int error)
{
  if (failed) printf("%s: ret=%ld errno=%s\n", label, ret, errno_name(error));
  else printf("%s: ret=%ld\n", label, ret);
}

void report_fd(const char* label, int fd)
{
  int error = errno;
  report(label, fd, fd < 0, error);
  if (fd >= 0) close(fd);
}

/* stat fields that two runs share; full adds those of a file both runs read */
void report_stat(const char* label, int rc, const struct stat* st, int full)
{
  int error = errno;
  report(label, rc, rc != 0, error);
  if (rc != 0) return;
  printf("  mode=%o nlink=%lu uid=%u gid=%u size=%lld\n", (unsigned) st->st_mode, (unsigned long) st->st_nlink,
         (unsigned) st->st_uid, (unsigned) st->st_gid, (long long) st->st_size);
  if (full)
    printf("  dev=%llu ino=%llu mtime=%lld.%09ld blksize=%ld blocks=%lld\n", (unsigned long long) st->st_dev,
           (unsigned long long) st->st_ino, (long long) st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
           (long) st->st_blksize, (long long) st->st_blocks);
}

void report_file(const char* label, FILE* f)
{
  int error = errno;
  printf("%s: %s", label, f ? "FILE" : "NULL");
  if (f) {
    printf(" fd=%d\n", fileno(f));
    fclose(f);
  } else {
    printf(" errno=%s\n", errno_name(error));
  }
}

/* errno must survive a successful call untouched */
static void check_errno_kept(const char* fixture)
{
  struct stat st;
  errno = 4242;
  int fixture_fd = open(fixture, O_RDONLY);
  printf("errno after a successful open of an absolute path: %d\n", errno);
  close(fixture_fd);
  errno = 4242;
  stat(fixture, &st);
  printf("errno after a successful stat of an absolute path: %d\n", errno);
  errno = 4242;
  int fd = open("probe.d/a.txt", O_RDONLY);
  printf("errno after a successful open: %d\n", errno);
  close(fd);
  errno = 4242;
  stat("probe.d/a.txt", &st);
  printf("errno after a successful stat: %d\n", errno);
  errno = 4242;
  FILE* f = fopen("probe.d/a.txt", "r");
  printf("errno after a successful fopen: %d\n", errno);
  fclose(f);
  errno = 4242;
  fd = openat(AT_FDCWD, "probe.d/a.txt", O_RDONLY);
  printf("errno after a successful openat: %d\n", errno);
  close(fd);
}

static void probe_open(const char* fixture)
{
  char buffer[64] = "";
  int fd = open(fixture, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, buffer, sizeof(buffer) - 1) : -1;
  printf("open fixture: ret=%d read=%zd text=%.*s", fd, n, (int) (n > 0 ? n : 0), buffer);
  if (fd >= 0) close(fd);
  report_fd("open missing", open("missing.txt", O_RDONLY));
  report_fd("open O_CREAT|O_EXCL new", open("probe.d/new.txt", O_WRONLY | O_CREAT | O_EXCL, 0640));
  report_fd("open O_CREAT|O_EXCL existing", open("probe.d/new.txt", O_WRONLY | O_CREAT | O_EXCL, 0640));
  report_fd("open directory for writing", open("probe.d", O_WRONLY));
  report_fd("open below a file", open("probe.d/a.txt/x", O_RDONLY));
  report_fd("open O_DIRECTORY on a file", open("probe.d/a.txt", O_RDONLY | O_DIRECTORY));
  report_fd("open symlink loop", open("probe.d/loop", O_RDONLY));
  report_fd("open O_NOFOLLOW on a symlink", open("probe.d/link", O_RDONLY | O_NOFOLLOW));
  report_fd("open through a symlink", open("probe.d/link", O_RDONLY));
  report_fd("open O_TMPFILE", open("probe.d", O_TMPFILE | O_RDWR, 0600));
  report_fd("open O_CREAT|O_TRUNC with mode 0751", open("probe.d/mode.txt", O_WRONLY | O_CREAT | O_TRUNC, 0751));
  report_fd("open empty name", open("", O_RDONLY));
  const char* volatile null_path = NULL;   /* volatile: libc declares the argument nonnull */
  report_fd("open NULL", open(null_path, O_RDONLY));

  char* long_path = malloc(6000);
  memset(long_path, 'a', 5999);
  long_path[5999] = '\0';
  for (int i = 100; i < 5999; i += 100) long_path[i] = '/';
  report_fd("open path longer than PATH_MAX", open(long_path, O_RDONLY));
  memset(long_path, 'b', 300);
  long_path[300] = '\0';
  report_fd("open component longer than NAME_MAX", open(long_path, O_RDONLY));
  free(long_path);

  int dirfd = open("probe.d", O_RDONLY | O_DIRECTORY);
  int filefd = open("probe.d/a.txt", O_RDONLY);
  report_fd("openat directory fd", openat(dirfd, "a.txt", O_RDONLY));
  report_fd("openat directory fd missing", openat(dirfd, "nothing", O_RDONLY));
  report_fd("openat directory fd O_CREAT", openat(dirfd, "at.txt", O_RDWR | O_CREAT, 0604));
  report_fd("openat bad fd", openat(999, "a.txt", O_RDONLY));
  report_fd("openat file fd", openat(filefd, "a.txt", O_RDONLY));
  report_fd("openat absolute ignores fd", openat(999, fixture, O_RDONLY));
  report_fd("openat AT_FDCWD", openat(AT_FDCWD, "probe.d/../probe.d/a.txt", O_RDONLY));
  close(filefd);
  close(dirfd);
}

static void probe_fopen(const char* fixture)
{
  char line[64] = "";
  FILE* f = fopen(fixture, "r");
  if (f && !fgets(line, sizeof(line), f)) line[0] = '\0';
  printf("fopen fixture: %s line=%s", f ? "FILE" : "NULL", line);
  if (f) fclose(f);
  report_file("fopen missing", fopen("missing.txt", "r"));
  report_file("fopen w in a missing directory", fopen("nodir/x.txt", "w"));
  report_file("fopen w on a directory", fopen("probe.d", "w"));
  report_file("fopen r on a directory", fopen("probe.d", "r"));
  report_file("fopen bad mode", fopen("probe.d/a.txt", "z"));
  report_file("fopen wx on an existing file", fopen("probe.d/a.txt", "wx"));
  report_file("fopen a+", fopen("probe.d/append.txt", "a+"));
  report_file("fopen re (close-on-exec)", fopen("probe.d/a.txt", "re"));
}

static void probe_stat(const char* fixture)
{
  struct stat st;
  memset(&st, 0, sizeof(st));
  report_stat("stat fixture", stat(fixture, &st), &st, 1);
  report_stat("stat missing", stat("missing.txt", &st), &st, 0);
  report_stat("stat directory", stat("probe.d", &st), &st, 0);
  report_stat("stat created file", stat("probe.d/mode.txt", &st), &st, 0);
  report_stat("stat openat O_CREAT file", stat("probe.d/at.txt", &st), &st, 0);
  report_stat("stat through a symlink", stat("probe.d/link", &st), &st, 0);
  report_stat("lstat symlink", lstat("probe.d/link", &st), &st, 0);
  report_stat("stat symlink loop", stat("probe.d/loop", &st), &st, 0);
  report_stat("stat empty name", stat("", &st), &st, 0);
  const char* volatile null_path = NULL;
  report_stat("stat NULL", stat(null_path, &st), &st, 0);
  report_stat("fstatat", fstatat(AT_FDCWD, "probe.d/a.txt", &st, 0), &st, 0);
  int rc = access(fixture, R_OK);
  report("access fixture R_OK", rc, rc != 0, errno);
  rc = access("missing.txt", F_OK);
  report("access missing", rc, rc != 0, errno);
}

/* permission errors: root bypasses them, so a child becomes nobody first */
static void probe_permissions(void)
{
  int as_root = geteuid() == 0;
  fflush(stdout);
  pid_t child = as_root ? fork() : 0;
  if (child < 0) {
    printf("fork failed: %s\n", errno_name(errno));
    return;
  }
  if (child > 0) {
    int status = 0;
    waitpid(child, &status, 0);
    printf("unprivileged child: status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return;
  }
  if (as_root && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
    printf("cannot become nobody: %s\n", errno_name(errno));
    fflush(stdout);
    _exit(1);
  }
  struct stat st;
  report_fd("open unreadable file", open("probe.d/secret", O_RDONLY));
  report_fd("open O_CREAT in a read-only directory", open("probe.d/readonly/x", O_WRONLY | O_CREAT, 0600));
  report_stat("stat below an unsearchable directory", stat("probe.d/closed/x", &st), &st, 0);
  report_file("fopen unreadable file", fopen("probe.d/secret", "r"));
  int rc = access("probe.d/secret", R_OK);
  report("access unreadable file", rc, rc != 0, errno);
  probe_permissions_more();
  fflush(stdout);
  if (as_root) _exit(0);
}

static void* thread_open_close(void* arg)
{
  long failures = 0;
  for (int i = 0; i < 2000; i++) {
    int fd = open((const char*) arg, O_RDONLY);
    if (fd < 0 || close(fd) != 0) failures++;
  }
  return (void*) failures;
}

static void probe_threads(void)
{
  pthread_t threads[4];
  long failures = 0;
  for (int i = 0; i < 4; i++) pthread_create(&threads[i], NULL, thread_open_close, "probe.d/a.txt");
  for (int i = 0; i < 4; i++) {
    void* result;
    pthread_join(threads[i], &result);
    failures += (long) result;
  }
  printf("threads: open/close failures=%ld\n", failures);
}

static void setup(void)
{
  /* leftovers of an earlier run go first, so each run starts alike */
  if (system("chmod -R u+rwx probe.d 2>/dev/null; rm -rf probe.d") != 0) exit(2);
  umask(022);
  if (mkdir("probe.d", 0755) != 0 || mkdir("probe.d/readonly", 0555) != 0 || mkdir("probe.d/closed", 0700) != 0)
    exit(2);
  int fd = open("probe.d/a.txt", O_WRONLY | O_CREAT, 0644);
  if (fd < 0 || write(fd, "alpha\n", 6) != 6) exit(2);
  close(fd);
  fd = open("probe.d/secret", O_WRONLY | O_CREAT, 0600);
  if (fd < 0) exit(2);
  close(fd);
  if (symlink("a.txt", "probe.d/link") != 0 || symlink("loop", "probe.d/loop") != 0) exit(2);
}

static void load_rules(void)
{
  int (*load)(char*, size_t) = (int (*)(char*, size_t)) dlsym(RTLD_DEFAULT, "scr_preload_state_load");
  int (*count)(const void*) = (int (*)(const void*)) dlsym(RTLD_DEFAULT, "scr_preload_rules_count");
  const void* (*current)(void) = (const void* (*)(void)) dlsym(RTLD_DEFAULT, "scr_preload_state_current");
  if (!load || !count || !current) {
    fprintf(stderr, "io-probe: no preload library\n");
    return;
  }
  char message[1024] = "";
  int rc = load(message, sizeof(message));
  fprintf(stderr, "io-probe: preload rules loaded: rc=%d rules=%d %s\n", rc, count(current()), message);
}

int main(int argc, char** argv)
{
  int rules = argc > 1 && strcmp(argv[1], "--load-rules") == 0;
  if (argc != 2 + rules) {
    fprintf(stderr, "usage: io-probe [--load-rules] FIXTURE\n");
    return 2;
  }
  const char* fixture = argv[1 + rules];
  if (rules) load_rules();
  setup();
  probe_open(fixture);
  probe_fopen(fixture);
  probe_stat(fixture);
  probe_open_variants(fixture);
  probe_stdio_variants(fixture);
  probe_descriptors();
  probe_names();
  probe_stat_variants(fixture);
  probe_directories();
  probe_temporaries();
  probe_realpath(fixture);
  probe_statfs(fixture);
  probe_attributes();
  check_errno_kept(fixture);
  probe_permissions();
  probe_threads();
  return 0;
}
