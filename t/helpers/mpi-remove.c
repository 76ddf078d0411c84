/* mpi-remove.c - an MPI program that deletes the ways applications drop old
 * checkpoints, for the preload tests: remove(3), rmdir(2), and a whole tree
 * through descriptors as Python's shutil.rmtree does it.
 *
 * usage: mpi-remove OP:PATH...   "%d" in PATH is the rank; OP is
 *   remove   remove(PATH)
 *   unlink   unlink(PATH)
 *   rmdir    rmdir(PATH)
 *   rmtree   lstat(PATH), open(PATH, O_RDONLY) and fstat must name the same
 *            directory (else -1 ELOOP), then below it, relative to that
 *            descriptor: fdopendir(dup), readdir, fstatat(AT_SYMLINK_NOFOLLOW),
 *            openat(O_DIRECTORY) into subdirectories, unlinkat of files and
 *            directories; finally rmdir(PATH)
 * Every rank runs the operations in order, with a barrier after each; rank 0
 * prints "OP PATH: RC ERROR" for its own (ERROR: strerror of errno when RC
 * is -1, else "ok"). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 1; i < argc; i++) {
    const char* colon = strchr(argv[i], ':');
    size_t op = colon ? (size_t) (colon - argv[i]) : 0;
    static const char* const ops[] = { "remove", "rmdir", "rmtree", "unlink" };
    int kind = -1;
    for (int k = 0; colon && k < 4; k++)
      if (op == strlen(ops[k]) && strncmp(argv[i], ops[k], op) == 0) kind = k;
    char path[4096];
    if (kind < 0 || (size_t) snprintf(path, sizeof(path), colon + 1, rank) >= sizeof(path)) {
      if (rank == 0) fprintf(stderr, "mpi-remove: bad operation '%s' (OP:PATH)\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rc = kind == 0 ? remove(path) : kind == 1 ? rmdir(path) : kind == 2 ? remove_tree(path) : unlink(path);
    if (rank == 0) printf("%.*s %s: %d %s\n", (int) op, argv[i], path, rc, rc == 0 ? "ok" : strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
