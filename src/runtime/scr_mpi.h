/* scr_mpi.h - moving key-value trees between ranks and grouping ranks by node.
 * Every function here is collective over the communicator it takes. */
#ifndef SCR_MPI_H
#define SCR_MPI_H

#include <mpi.h>
#include "scr_kvtree.h"

/* root's tree replaces the contents of tree on every other rank */
int scr_mpi_bcast_kvtree(scr_kvtree* tree, int root, MPI_Comm comm);

/* every rank's tree merged into all on root (all untouched elsewhere) */
int scr_mpi_gather_kvtree(const scr_kvtree* mine, scr_kvtree* all, int root, MPI_Comm comm);

/* root holds per_rank[RANK][r] subtrees; each rank r receives its subtree into mine */
int scr_mpi_scatter_kvtree(const scr_kvtree* per_rank, scr_kvtree* mine, int root, MPI_Comm comm);

/* 1 on every rank if flag is non-zero on every rank */
int scr_mpi_all_true(int flag, MPI_Comm comm);

/* communicator of the ranks whose host name equals ours */
int scr_mpi_split_by_host(MPI_Comm comm, const char* hostname, MPI_Comm* node_comm);

#endif
