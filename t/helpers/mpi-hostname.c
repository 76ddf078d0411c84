/* mpi-hostname.c - MPI test program for the simulated cluster (scr_cluster):
 * checks that collectives work, prints "rank R of N on HOST" (in rank order,
 * gathered to rank 0), and optionally leaves a file in a node-local directory
 * or keeps running in collectives for a while (to be killed).
 *
 * usage: mpi-hostname [--touch DIR] [--sleep SECONDS]
 *   --touch DIR    each rank creates DIR/rank_R (e.g. the node's cache base)
 *   --sleep SEC    afterwards, alternate 100 ms naps and MPI_Barrier for SEC s
 * Exit status 0 when the allreduce and barriers gave the expected results. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HOSTLEN 64

int main(int argc, char **argv)
{
    const char *touch = NULL;
    double sleep_s = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--touch") == 0 && i + 1 < argc) {
            touch = argv[++i];
        } else if (strcmp(argv[i], "--sleep") == 0 && i + 1 < argc) {
            sleep_s = atof(argv[++i]);
        } else {
            fprintf(stderr, "usage: mpi-hostname [--touch DIR] [--sleep SECONDS]\n");
            return 2;
        }
    }

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    char host[HOSTLEN] = "";
    gethostname(host, sizeof host - 1);

    /* sum of ranks: checks that data moves between all ranks */
    long mine = rank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int ok = (sum == (long) size * (size - 1) / 2);

    if (touch) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rank_%d", touch, rank);
        FILE *f = fopen(path, "w");
        if (!f || fprintf(f, "%d %s\n", rank, host) < 0 || fclose(f) != 0) {
            perror(path);
            ok = 0;
        }
    }

    /* rank 0 prints every rank's line in rank order */
    char *all = NULL;
    if (rank == 0)
        all = malloc((size_t) size * HOSTLEN);
    MPI_Gather(host, HOSTLEN, MPI_CHAR, all, HOSTLEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            printf("rank %d of %d on %s\n", r, size, all + (size_t) r * HOSTLEN);
        printf("allreduce %s\n", ok ? "ok" : "WRONG");
        fflush(stdout);
        free(all);
    }

    int steps = (int) (sleep_s * 10);
    for (int s = 0; s < steps; s++) {
        struct timespec nap = {0, 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
