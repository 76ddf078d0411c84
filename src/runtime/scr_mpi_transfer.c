/* scr_mpi_transfer.c - the point-to-point transfers of redundancy and restart,
 * which wait by testing and yielding the processor instead of MPI's busy poll. */
#include "config.h"
#include <limits.h>
#include <sched.h>
#include <time.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_mpi.h"

/* MPI_Wait spins in the library's progress loop. Where a rank shares its core
 * with a peer it waits for (more ranks than cores, SMT siblings, helper
 * threads), the spinning rank holds the core its peer needs to make the very
 * progress it waits for, for a whole scheduler slice each time: a ring of 1 MiB
 * transfers between 4 ranks on 2 cores ran at 48 MiB/s per rank that way and
 * at 3.5 GiB/s when each wait yields. Alone on a core, sched_yield returns at
 * once and the loop is a plain poll.
 * A rank that only waits for others (a rebuild that involves two members of
 * a set) must not even stay runnable: yielding, it still counts as load, so
 * the scheduler kept the two busy members on one core and left the other to
 * the waiters (a 256 MiB partner copy took 0.2 s or 1.3 s by chance). Once
 * a wait has lasted a millisecond it sleeps between polls, 10 us at first
 * and at most 100 us, which a pipeline's hops (a 1 MiB piece each) hardly
 * notice (a 1 ms cap made the XOR rebuild chain twice as slow). */
#define SCR_MPI_WAIT_SPIN_NS 1000000L
#define SCR_MPI_WAIT_NAP_MIN_NS 10000L
#define SCR_MPI_WAIT_NAP_MAX_NS 100000L

static long long scr_mpi_now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

int scr_mpi_wait_all(int count, MPI_Request* requests)
{
  return scr_mpi_wait_all_or_say(count, requests, 0, NULL);
}

int scr_mpi_wait_all_or_say(int count, MPI_Request* requests, double seconds, const char* message)
{
  long long start = 0;
  long nap = 0;
  int said = !message;
  for (;;) {
    int pending = 0;
    for (int i = 0; i < count; i++) {
      int done = 0;  /* a completed request becomes MPI_REQUEST_NULL, which tests done */
      if (MPI_Test(&requests[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return SCR_FAILURE;
      pending |= !done;
    }
    if (!pending) return SCR_SUCCESS;
    long long now = scr_mpi_now_ns();
    if (!start) start = now;
    if (!said && (double) (now - start) >= seconds * 1e9) {
      scr_warn("%s", message);
      said = 1;
    }
    if (now - start < SCR_MPI_WAIT_SPIN_NS) {
      sched_yield();
      continue;
    }
    nap = nap ? (nap * 2 < SCR_MPI_WAIT_NAP_MAX_NS ? nap * 2 : SCR_MPI_WAIT_NAP_MAX_NS) : SCR_MPI_WAIT_NAP_MIN_NS;
    struct timespec pause = { 0, nap };
    nanosleep(&pause, NULL);
  }
}

static int scr_mpi_count(size_t bytes)
{
  return bytes > INT_MAX ? -1 : (int) bytes;
}

int scr_mpi_sendrecv(const void* send, size_t send_bytes, int to, void* recv, size_t recv_bytes, int from,
                     int tag, MPI_Comm comm)
{
  int send_count = scr_mpi_count(send_bytes), recv_count = scr_mpi_count(recv_bytes);
  if (send_count < 0 || recv_count < 0) return SCR_ERR_INVALID;
  MPI_Request requests[2];
  /* a side of zero bytes is a transfer with MPI_PROC_NULL, which completes
   * at once; a NULL buffer of a non-zero count stays MPI's error */
  if (recv_count == 0) from = MPI_PROC_NULL;
  if (send_count == 0) to = MPI_PROC_NULL;
  MPI_Irecv(recv, recv_count, MPI_BYTE, from, tag, comm, &requests[0]);
  MPI_Isend(send, send_count, MPI_BYTE, to, tag, comm, &requests[1]);
  return scr_mpi_wait_all(2, requests);
}

int scr_mpi_send(const void* buf, size_t bytes, int to, int tag, MPI_Comm comm)
{
  return scr_mpi_sendrecv(buf, bytes, to, NULL, 0, MPI_PROC_NULL, tag, comm);
}

int scr_mpi_recv(void* buf, size_t bytes, int from, int tag, MPI_Comm comm)
{
  return scr_mpi_sendrecv(NULL, 0, MPI_PROC_NULL, buf, bytes, from, tag, comm);
}
