/* scr_erasure.h - XOR and Reed-Solomon over a set of ranks: a pipelined ring
 * reduce-scatter to encode, a chain of survivors to rebuild up to k lost members. */
#ifndef SCR_ERASURE_H
#define SCR_ERASURE_H

#include <mpi.h>
#include <stdint.h>
#include "scr_stream.h"
#include "scr_erasure_code.h"

/* one member's side of the code (scr_erasure_code.h) over the ranks of its set */
struct scr_erasure {
  MPI_Comm comm;
  int n, k, me;
  uint64_t chunk;          /* bytes per chunk, multiple of 64 */
  size_t piece;            /* bytes moved per message, multiple of 64 */
  struct scr_erasure_code code;
};

int scr_erasure_init(struct scr_erasure* e, MPI_Comm comm, int k, uint64_t chunk, size_t piece);
void scr_erasure_finalize(struct scr_erasure* e);

/* collective over the set: read this member's stream once, write its k parity
 * chunks once into parity (at stream offsets 0, chunk, ..., (k-1)*chunk) */
int scr_erasure_encode(struct scr_erasure* e, struct scr_stream* data, struct scr_stream* parity);

/* collective over the set: lost[i] != 0 marks members to rebuild (at most k).
 * Survivors read, lost members write their data stream and parity. */
int scr_erasure_rebuild(struct scr_erasure* e, const int* lost, struct scr_stream* data,
                        struct scr_stream* parity);

#endif
