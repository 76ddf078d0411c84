/* walk-probe.c - nftw and ftw as the program calls them (the layer's walk, when
 * libscr_preload.so is loaded with rules) beside glibc's own, on the same tree. */
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Usage: walk-probe [--load-rules]
 * Makes tree/ in the current directory (directories, files, links to a
 * directory, to a file, dangling and looping), then walks it with every
 * flag combination and several callback answers, once through nftw/ftw as
 * linked and once through libc's own, and prints each difference in the
 * calls the callback saw (path, type, level, base, the object's type, the
 * current directory under FTW_CHDIR) or in the result and errno. Exits 1
 * when there was one. --load-rules asks the preload library, when loaded,
 * to read .scrconf and to show virtual directories, as under MPI, which is
 * when its own walk is used. */

#define LOG_SIZE (1 << 16)
static char log_text[LOG_SIZE];
static size_t log_used;
static int answer_mode;
static char start_directory[4096];

static void log_line(const char* format, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char* format, ...)
{
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf(log_text + log_used, LOG_SIZE - log_used, format, ap);
  va_end(ap);
  if (n > 0) log_used += (size_t) n < LOG_SIZE - log_used ? (size_t) n : LOG_SIZE - log_used - 1;
}

/* what the callback answers: 0 always, or under FTW_ACTIONRETVAL a skip or
 * a stop at chosen names */
static int answer(const char* path, int type)
{
  const char* name = strrchr(path, '/');
  name = name ? name + 1 : path;
  switch (answer_mode) {
  case 1: return type == FTW_D && strcmp(name, "b") == 0 ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
  case 2: return strcmp(name, "f1") == 0 ? FTW_SKIP_SIBLINGS : FTW_CONTINUE;
  case 3: return strcmp(name, "c") == 0 ? FTW_STOP : FTW_CONTINUE;
  case 4: return strcmp(name, "c") == 0 ? 42 : 0;
  default: return 0;
  }
}

static int record_nftw(const char* path, const struct stat* st, int type, struct FTW* ftw)
{
  char cwd[4096] = "";
  if (!getcwd(cwd, sizeof(cwd))) snprintf(cwd, sizeof(cwd), "?");
  const char* where = strncmp(cwd, start_directory, strlen(start_directory)) == 0 ? cwd + strlen(start_directory) : cwd;
  log_line("  %s type=%d level=%d base=%d mode=%o cwd=%s\n", path, type, ftw->level, ftw->base,
           type == FTW_NS ? 0 : (unsigned) (st->st_mode & S_IFMT) >> 12, where);
  return answer(path, type);
}

static int record_ftw(const char* path, const struct stat* st, int type)
{
  log_line("  %s type=%d mode=%o\n", path, type, type == FTW_NS ? 0 : (unsigned) (st->st_mode & S_IFMT) >> 12);
  return answer(path, type);
}

static void make_tree(void)
{
  int ok = mkdir("tree", 0755) == 0 && mkdir("tree/a", 0755) == 0 && mkdir("tree/a/b", 0755) == 0 &&
           mkdir("tree/a/b/c", 0755) == 0 && mkdir("tree/d", 0755) == 0 && symlink("../a", "tree/d/to_a") == 0 &&
           symlink("f1", "tree/a/to_f1") == 0 && symlink("missing", "tree/a/dangling") == 0 &&
           symlink("loop", "tree/a/loop") == 0 && symlink("..", "tree/a/b/up") == 0;
  const char* files[] = { "tree/f0", "tree/a/f1", "tree/a/f2", "tree/a/b/f3", "tree/a/b/c/f4", "tree/d/f5" };
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    int fd = open(files[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "x", 1) != 1 || close(fd) != 0) ok = 0;
  }
  if (!ok) {
    perror("walk-probe: making tree/");
    exit(2);
  }
}

typedef int (*nftw_type)(const char*, int (*)(const char*, const struct stat*, int, struct FTW*), int, int);
typedef int (*ftw_type)(const char*, int (*)(const char*, const struct stat*, int), int);

/* one walk through fn (nftw) or fn3 (ftw), into the log */
static void walk_once(nftw_type fn, ftw_type fn3, const char* root, int flags, int descriptors)
{
  log_used = 0;
  errno = 0;
  int rc = fn ? fn(root, record_nftw, descriptors, flags) : fn3(root, record_ftw, descriptors);
  int error = errno;
  char cwd[4096] = "";
  if (!getcwd(cwd, sizeof(cwd))) snprintf(cwd, sizeof(cwd), "?");
  log_line("= %d errno=%d cwd-kept=%d\n", rc, rc == -1 ? error : 0, strcmp(cwd, start_directory) == 0);
}

int main(int argc, char** argv)
{
  if (argc > 1 && strcmp(argv[1], "--load-rules") == 0) {
    int (*load)(char*, size_t) = (int (*)(char*, size_t)) dlsym(RTLD_DEFAULT, "scr_preload_state_load");
    void (*directories)(int) = (void (*)(int)) dlsym(RTLD_DEFAULT, "scr_preload_hooks_virtual_directories");
    char message[1024] = "";
    if (load && load(message, sizeof(message)) != 0) {
      fprintf(stderr, "walk-probe: %s\n", message);
      return 2;
    }
    if (directories) directories(1);
    fprintf(stderr, "walk-probe: %s\n", load ? "rules loaded, virtual directories shown" : "no preload library");
  }
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  nftw_type libc_nftw = libc ? (nftw_type) dlsym(libc, "nftw") : NULL;
  ftw_type libc_ftw = libc ? (ftw_type) dlsym(libc, "ftw") : NULL;
  if (!libc_nftw || !libc_ftw || !getcwd(start_directory, sizeof(start_directory))) {
    fprintf(stderr, "walk-probe: cannot find libc's nftw and ftw\n");
    return 2;
  }
  make_tree();

  const char* roots[] = { "tree", "tree/", "./tree/a", "tree/f0", "tree/a/to_f1", "tree/a/dangling", "tree/d/to_a",
                          "missing", "", "tree/a/b/c" };
  const int flag_sets[] = { 0, FTW_PHYS, FTW_DEPTH, FTW_PHYS | FTW_DEPTH, FTW_CHDIR, FTW_CHDIR | FTW_DEPTH | FTW_PHYS,
                            FTW_MOUNT, FTW_ACTIONRETVAL, FTW_ACTIONRETVAL | FTW_DEPTH, FTW_ACTIONRETVAL | FTW_CHDIR,
                            0x100 };
  int walks = 0, differences = 0;
  static char expected[LOG_SIZE];
  for (size_t r = 0; r < sizeof(roots) / sizeof(roots[0]); r++) {
    for (size_t f = 0; f < sizeof(flag_sets) / sizeof(flag_sets[0]) + 1; f++) {
      int is_ftw = f == sizeof(flag_sets) / sizeof(flag_sets[0]);
      int flags = is_ftw ? 0 : flag_sets[f];
      for (answer_mode = 0; answer_mode <= 4; answer_mode++) {
        if (answer_mode >= 1 && answer_mode <= 3 && !(flags & FTW_ACTIONRETVAL)) continue;
        for (int descriptors = 1; descriptors <= 8; descriptors += 7) {
          walk_once(is_ftw ? NULL : libc_nftw, is_ftw ? libc_ftw : NULL, roots[r], flags, descriptors);
          memcpy(expected, log_text, log_used + 1);
          walk_once(is_ftw ? NULL : nftw, is_ftw ? ftw : NULL, roots[r], flags, descriptors);
          walks++;
          if (strcmp(expected, log_text) != 0) {
            differences++;
            printf("%s('%s', flags 0x%x, answers %d, %d descriptors) differs:\n--- libc\n%s--- as linked\n%s",
                   is_ftw ? "ftw" : "nftw", roots[r], (unsigned) flags, answer_mode, descriptors, expected, log_text);
          }
        }
      }
    }
  }
  printf("%d walks, %d differences\n", walks, differences);
  return differences ? 1 : 0;
}
