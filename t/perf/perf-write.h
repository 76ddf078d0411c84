/* perf-write.h - shared by the unmodified checkpointing programs of t/perf:
 * a checkpoint file created and written in pieces, as such codes write one. */
#ifndef PERF_WRITE_H
#define PERF_WRITE_H

#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

/* path created (O_TRUNC) and filled with bytes, written from buf piece
 * bytes at a time with write(2); the descriptor, left open for the caller
 * to close (under the preload the close may complete the checkpoint). A
 * failure ends the job. */
static inline int perf_write_file(const char* path, const char* buf, size_t piece, size_t bytes)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (size_t done = 0; done < bytes;) {
    size_t n = bytes - done < piece ? bytes - done : piece;
    ssize_t w = write(fd, buf, n);
    if (w <= 0) {
      perror("write");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    done += (size_t) w;
  }
  return fd;
}

#endif
