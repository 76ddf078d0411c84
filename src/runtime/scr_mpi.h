/* scr_mpi.h - moving key-value trees and bytes between ranks, and grouping
 * ranks by node. The tree and node functions are collective over their comm. */
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
/* MPI_Allreduce, waited for as scr_mpi_all_true waits */
int scr_mpi_allreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

/* communicator of the ranks whose host name equals ours */
int scr_mpi_split_by_host(MPI_Comm comm, const char* hostname, MPI_Comm* node_comm);

/* Point-to-point byte transfers that wait politely (scr_mpi_transfer.c): they
 * yield the processor between polls, so a rank waiting for a peer on the same
 * core lets it run. A zero length leaves that side out.
 * Return SCR_SUCCESS, or an error when a length exceeds INT_MAX or MPI fails. */
int scr_mpi_sendrecv(const void* send, size_t send_bytes, int to, void* recv, size_t recv_bytes, int from,
                     int tag, MPI_Comm comm);
int scr_mpi_send(const void* buf, size_t bytes, int to, int tag, MPI_Comm comm);
int scr_mpi_recv(void* buf, size_t bytes, int from, int tag, MPI_Comm comm);

/* wait for requests by MPI_Test and sched_yield */
int scr_mpi_wait_all(int count, MPI_Request* requests);
/* the same, saying message once (a warning) when the wait lasts seconds */
int scr_mpi_wait_all_or_say(int count, MPI_Request* requests, double seconds, const char* message);

#endif
