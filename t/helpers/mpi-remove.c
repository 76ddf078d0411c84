/* mpi-remove.c - an MPI program that deletes with remove(3) and rmdir(2), the
 * way applications drop old checkpoints, for the preload tests.
 *
 * usage: mpi-remove OP:PATH...   OP is remove or rmdir; "%d" in PATH is the
 * rank. Every rank runs the operations in order, with a barrier after each;
 * rank 0 prints "OP PATH: RC ERROR" for its own (ERROR: strerror of errno
 * when RC is -1, else "ok"). */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 1; i < argc; i++) {
    const char* colon = strchr(argv[i], ':');
    char path[4096];
    int is_rmdir = strncmp(argv[i], "rmdir:", 6) == 0;
    if (!colon || (!is_rmdir && strncmp(argv[i], "remove:", 7) != 0) ||
        (size_t) snprintf(path, sizeof(path), colon + 1, rank) >= sizeof(path)) {
      if (rank == 0) fprintf(stderr, "mpi-remove: bad operation '%s' (OP:PATH)\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rc = is_rmdir ? rmdir(path) : remove(path);
    if (rank == 0) printf("%.*s %s: %d %s\n", (int) (colon - argv[i]), argv[i], path, rc,
                          rc == 0 ? "ok" : strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
