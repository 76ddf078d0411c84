/* redundancy-bench.c - one MPI run of checkpoints (or of SCR_Init alone) printing
 * the time spent writing and inside SCR_Complete_checkpoint, the dataset SCR_Init
 * offers for restart, and the peak RSS of the ranks; driven by redundancy.sh:
 *   redundancy-bench [MIB_PER_RANK [CHECKPOINTS]]
 * Rank 0 prints one line of "key value" pairs:
 *   init S write S complete S restart NAME|none rss_max_kb KB rss_min_kb KB
 * "redundancy-bench ring MIB" measures MPI alone, without SCR: every rank sends
 * MIB in 1 MiB pieces to the next one around the ring (the pattern of the XOR
 * encode and of PARTNER) and rank 0 prints "ring_mib_s MIB_PER_SECOND_PER_RANK". */
#include <fcntl.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr.h"

/* peak resident set size of this process so far (VmHWM), in KiB; 0 if unknown */
static long peak_rss_kb(void)
{
  char line[256];
  long kb = 0;
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  while (fgets(line, sizeof(line), f))
    if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  fclose(f);
  return kb;
}

static int ring(size_t mib)
{
  int rank, ranks;
  size_t piece = 1 << 20;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  char* out = malloc(piece);
  char* in = malloc(piece);
  memset(out, rank, piece);
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  for (size_t i = 0; i < mib; i++) {
    /* waiting as SCR's transfers do (scr_mpi_sendrecv): MPI_Test, then yield
     * the core, which a peer on the same core may need to progress */
    MPI_Request requests[2];
    MPI_Irecv(in, (int) piece, MPI_BYTE, (rank + ranks - 1) % ranks, 0, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(out, (int) piece, MPI_BYTE, (rank + 1) % ranks, 0, MPI_COMM_WORLD, &requests[1]);
    for (int pending = 1; pending;) {
      pending = 0;
      for (int r = 0; r < 2; r++) {
        int done = 0;
        MPI_Test(&requests[r], &done, MPI_STATUS_IGNORE);
        pending |= !done;
      }
      if (pending) sched_yield();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t = MPI_Wtime() - t;
  if (rank == 0) printf("ring_mib_s %.1f\n", t > 0 ? mib / t : 0);
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}

int main(int argc, char** argv)
{
  if (argc > 1 && !strcmp(argv[1], "ring")) {
    MPI_Init(&argc, &argv);
    return ring(argc > 2 ? strtoul(argv[2], NULL, 0) : 64);
  }
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 256;
  int ckpts = argc > 2 ? atoi(argv[2]) : 2;
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  SCR_Init();
  MPI_Barrier(MPI_COMM_WORLD);
  double t_init = MPI_Wtime() - t0;
  int have = 0;
  char restart[SCR_MAX_FILENAME] = "none";
  SCR_Have_restart(&have, restart);
  if (!have) strcpy(restart, "none");

  size_t chunk = 1 << 20;
  char* buf = malloc(chunk);
  for (size_t i = 0; i < chunk; i++) buf[i] = (char) (i * 131 + rank);
  double write_total = 0, complete_total = 0;
  for (int c = 0; c < ckpts; c++) {
    char name[64], path[64], file[SCR_MAX_FILENAME];
    snprintf(name, sizeof(name), "bench.%d", c);
    snprintf(path, sizeof(path), "bench.%d/rank_%d.dat", c, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    SCR_Start_output(name, SCR_FLAG_CHECKPOINT);
    SCR_Route_file(path, file);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    for (size_t i = 0; i < mib; i++)
      if (write(fd, buf, chunk) != (ssize_t) chunk) return 1;
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    SCR_Complete_output(1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t3 = MPI_Wtime();
    write_total += t2 - t1;
    complete_total += t3 - t2;
  }
  free(buf);
  SCR_Finalize();
  long rss = peak_rss_kb(), rss_max = 0, rss_min = 0;
  MPI_Reduce(&rss, &rss_max, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&rss, &rss_min, 1, MPI_LONG, MPI_MIN, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("init %.4f write %.4f complete %.4f restart %s rss_max_kb %ld rss_min_kb %ld\n",
           t_init, ckpts ? write_total / ckpts : 0, ckpts ? complete_total / ckpts : 0, restart,
           rss_max, rss_min);
  MPI_Finalize();
  return 0;
}
