/* scr_erasure_code.h - the code XOR and RS share, without MPI: where a member's
 * chunks and parity lie in the stripes of its set, how a stripe is decoded, and a rebuild in one process. */
#ifndef SCR_ERASURE_CODE_H
#define SCR_ERASURE_CODE_H

#include <stddef.h>
#include <stdint.h>
#include "scr_stream.h"

/* Each member's stream is cut into n-k chunks. Stripe t (one per member) holds
 * member t+q's chunk q-k for q = k..n-1 and its k parity rows on members
 * t..t+k-1; so every member stores k parity chunks, one per stripe it guards.
 * XOR is k = 1 (every coefficient 1); RS uses a Cauchy matrix (ISA-L). */
struct scr_erasure_code {
  int n, k;
  uint64_t chunk;          /* bytes per chunk, multiple of 64 */
  unsigned char* matrix;   /* n x (n-k) Cauchy encode matrix (k > 1 only) */
};

/* chunk size for the longest stream of the set */
uint64_t scr_erasure_chunk_size(uint64_t longest_stream, int n, int k);

/* SCR_ERR_INVALID unless 1 <= k < n <= 255 */
int scr_erasure_code_init(struct scr_erasure_code* c, int n, int k, uint64_t chunk);
void scr_erasure_code_finalize(struct scr_erasure_code* c);

/* where member's piece of stripe t at offset off within its chunk lies: in
 * its parity stream (returns 1) or its data stream (0), at *at */
int scr_erasure_code_locate(const struct scr_erasure_code* c, int member, int t, uint64_t off, uint64_t* at);

/* Decode plan of one stripe: which members contribute (in chain order), with
 * which coefficient per lost row, and which members receive which row. */
struct scr_stripe_plan {
  int contributors[256];   /* set indexes, n-k of them */
  int lost[256];           /* set indexes of lost members, in order */
  int lost_count;
  unsigned char* gftbls;   /* 32 * (n-k) * lost_count (RS only) */
  int xor_only;
  int d;                   /* n-k */
};

/* SCR_ERR_INVALID when fewer than n-k members of the stripe survive */
int scr_erasure_plan(const struct scr_erasure_code* c, int t, const int* lost, struct scr_stripe_plan* plan);
void scr_erasure_plan_free(struct scr_stripe_plan* plan);

/* adds the piece (len bytes) of the contributor at chain position pos to the
 * lost rows in acc (lost_count rows of len bytes); pos 0 starts them */
void scr_erasure_plan_add(const struct scr_stripe_plan* plan, int pos, size_t len, unsigned char* piece,
                          unsigned char* acc);

/* With every member's streams at hand in one process (the prefix directory):
 * lost[i] != 0 marks members to rebuild (at most k); their data and parity
 * streams are written, the others' read. piece: bytes per step. */
int scr_erasure_rebuild_local(const struct scr_erasure_code* c, const int* lost, struct scr_stream* data,
                              struct scr_stream* parity, size_t piece);

/* 64-byte aligned buffer of at least bytes (free() it) */
unsigned char* scr_erasure_alloc(size_t bytes);

#endif
