/* scr_erasure.c - the erasure-code engine shared by XOR (k = 1, ISA-L xor_gen) and
 * RS (k >= 1, ISA-L ec_encode_data_update); memory per member is a few pieces. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_erasure.h"
#include "scr_mpi.h"

#define SCR_ERASURE_TAG 7301

static uint64_t scr_round_up(uint64_t x, uint64_t to)
{
  return (x + to - 1) / to * to;
}

int scr_erasure_init(struct scr_erasure* e, MPI_Comm comm, int k, uint64_t chunk, size_t piece)
{
  memset(e, 0, sizeof(*e));
  e->comm = comm;
  MPI_Comm_size(comm, &e->n);
  MPI_Comm_rank(comm, &e->me);
  e->k = k;
  e->chunk = chunk;
  e->piece = (size_t) scr_round_up(piece < 64 ? 64 : piece, 64);
  return scr_erasure_code_init(&e->code, e->n, k, chunk);
}

void scr_erasure_finalize(struct scr_erasure* e)
{
  scr_erasure_code_finalize(&e->code);
}

static int scr_mod(int a, int n)
{
  return ((a % n) + n) % n;
}

int scr_erasure_encode(struct scr_erasure* e, struct scr_stream* data, struct scr_stream* parity)
{
  const int n = e->n, k = e->k, d = n - k;
  const int left = scr_mod(e->me - 1, n), right = scr_mod(e->me + 1, n);
  unsigned char* gftbls = NULL;
  unsigned char* in = scr_erasure_alloc(e->piece * k);
  unsigned char* out = scr_erasure_alloc(e->piece * k);
  unsigned char* chunk = scr_erasure_alloc(e->piece);
  int rc = (in && out && chunk) ? SCR_SUCCESS : SCR_ERR_NOMEM;
  if (rc == SCR_SUCCESS && k > 1) {
    gftbls = malloc((size_t) 32 * d * k);
    ec_init_tables(d, k, e->code.matrix + (size_t) d * d, gftbls);
  }

  for (uint64_t off = 0; rc == SCR_SUCCESS && off < e->chunk; off += e->piece) {
    size_t len = (size_t) (e->chunk - off < e->piece ? e->chunk - off : e->piece);
    int ok = 1;
    for (int s = 0; s < n; s++) {
      int q = k + s;                 /* our position in the stripe handled at this step */
      unsigned char* send = NULL;
      int first_row = 0;
      if (q < n) {
        /* data position: add our chunk s to the partial parity */
        if (scr_stream_read(data, (uint64_t) s * e->chunk + off, chunk, len) != SCR_SUCCESS) ok = 0;
        if (k == 1) {
          /* accumulate in place: as fast as a memcpy, where a third buffer is not */
          if (s == 0) {
            send = chunk;
          } else {
            void* v[3] = { in, chunk, in };
            xor_gen(3, (int) len, v);
            send = in;
          }
        } else {
          unsigned char* rows[k];
          if (s == 0) memset(in, 0, len * k);
          for (int r = 0; r < k; r++) rows[r] = in + (size_t) r * len;
          ec_encode_data_update((int) len, d, k, s, gftbls, chunk, rows);
          send = in;
        }
      } else {
        /* parity position p: the partial for this stripe is complete in row p */
        int p = q - n;
        if (scr_stream_write(parity, (uint64_t) p * e->chunk + off, in + (size_t) p * len, len) !=
            SCR_SUCCESS)
          ok = 0;
        first_row = p + 1;
        send = in;
      }
      if (s == n - 1) break;
      int rows = k - first_row;
      unsigned char* recv = (send == in) ? out : in;
      if (scr_mpi_sendrecv(send + (size_t) first_row * len, (size_t) rows * len, right,
                           recv + (size_t) first_row * len, (size_t) rows * len, left, SCR_ERASURE_TAG,
                           e->comm) != SCR_SUCCESS)
        rc = SCR_FAILURE;
      if (recv != in) {
        unsigned char* t = in;
        in = out;
        out = t;
      }
    }
    if (!ok) rc = SCR_ERR_IO;
  }
  free(gftbls);
  free(chunk);
  free(out);
  free(in);
  return rc;
}

/* where this member's piece of stripe t lives: its data stream or its parity file */
static int scr_erasure_access(const struct scr_erasure* e, int t, uint64_t off, size_t len,
                              struct scr_stream* data, struct scr_stream* parity,
                              unsigned char* buf, int writing)
{
  uint64_t at = 0;
  struct scr_stream* s = scr_erasure_code_locate(&e->code, e->me, t, off, &at) ? parity : data;
  return writing ? scr_stream_write(s, at, buf, len) : scr_stream_read(s, at, buf, len);
}

int scr_erasure_rebuild(struct scr_erasure* e, const int* lost, struct scr_stream* data,
                        struct scr_stream* parity)
{
  const int n = e->n, d = n - e->k;
  struct scr_stripe_plan* plans = calloc(n, sizeof(*plans));
  int rc = SCR_SUCCESS;
  for (int t = 0; t < n && rc == SCR_SUCCESS; t++) rc = scr_erasure_plan(&e->code, t, lost, &plans[t]);
  unsigned char* acc = scr_erasure_alloc(e->piece * e->k);
  unsigned char* chunk = scr_erasure_alloc(e->piece);
  if (!acc || !chunk) rc = SCR_ERR_NOMEM;

  /* every member walks the items (piece, stripe) in the same order; within an
   * item the partial moves along contributors then lost members, so blocking
   * sends cannot deadlock */
  int ok = 1;
  for (uint64_t off = 0; rc == SCR_SUCCESS && off < e->chunk; off += e->piece) {
    size_t len = (size_t) (e->chunk - off < e->piece ? e->chunk - off : e->piece);
    for (int t = 0; t < n; t++) {
      struct scr_stripe_plan* p = &plans[t];
      int rows = p->lost_count;
      if (rows == 0) continue;
      int chain_len = d + rows, pos = -1;
      int chain[512];
      for (int i = 0; i < d; i++) chain[i] = p->contributors[i];
      for (int i = 0; i < rows; i++) chain[d + i] = p->lost[i];
      for (int i = 0; i < chain_len; i++)
        if (chain[i] == e->me) pos = i;
      if (pos < 0) continue;
      if (pos > 0 && scr_mpi_recv(acc, (size_t) rows * len, chain[pos - 1], SCR_ERASURE_TAG, e->comm) != SCR_SUCCESS)
        rc = SCR_FAILURE;
      if (pos < d) {
        if (scr_erasure_access(e, t, off, len, data, parity, chunk, 0) != SCR_SUCCESS) ok = 0;
        scr_erasure_plan_add(p, pos, len, chunk, acc);
      } else {
        if (scr_erasure_access(e, t, off, len, data, parity, acc + (size_t) (pos - d) * len, 1) !=
            SCR_SUCCESS)
          ok = 0;
      }
      if (pos + 1 < chain_len &&
          scr_mpi_send(acc, (size_t) rows * len, chain[pos + 1], SCR_ERASURE_TAG, e->comm) != SCR_SUCCESS)
        rc = SCR_FAILURE;
    }
  }
  if (!ok && rc == SCR_SUCCESS) rc = SCR_ERR_IO;
  for (int t = 0; t < n; t++) scr_erasure_plan_free(&plans[t]);
  free(plans);
  free(chunk);
  free(acc);
  return rc;
}
