/* scr_erasure_code.c - layout and decoding of the erasure code XOR and RS share, free of
 * MPI: scr_erasure.c moves the pieces between ranks, scr_index --build decodes in one process. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>
#include "scr_error.h"
#include "scr_erasure_code.h"

static uint64_t scr_round_up(uint64_t x, uint64_t to)
{
  return (x + to - 1) / to * to;
}

static int scr_mod(int a, int n)
{
  return ((a % n) + n) % n;
}

uint64_t scr_erasure_chunk_size(uint64_t longest, int n, int k)
{
  uint64_t chunk = scr_round_up(longest, (uint64_t) (n - k)) / (uint64_t) (n - k);
  chunk = scr_round_up(chunk, 64);
  return chunk ? chunk : 64;
}

int scr_erasure_code_init(struct scr_erasure_code* c, int n, int k, uint64_t chunk)
{
  memset(c, 0, sizeof(*c));
  c->n = n;
  c->k = k;
  c->chunk = chunk;
  if (k < 1 || k >= n || n > 255) return SCR_ERR_INVALID;
  if (k > 1) {
    c->matrix = malloc((size_t) n * (n - k));
    if (!c->matrix) return SCR_ERR_NOMEM;
    gf_gen_cauchy1_matrix(c->matrix, n, n - k);
  }
  return SCR_SUCCESS;
}

void scr_erasure_code_finalize(struct scr_erasure_code* c)
{
  free(c->matrix);
  c->matrix = NULL;
}

unsigned char* scr_erasure_alloc(size_t bytes)
{
  void* p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) return NULL;
  return p;
}

int scr_erasure_code_locate(const struct scr_erasure_code* c, int member, int t, uint64_t off, uint64_t* at)
{
  int q = scr_mod(member - t, c->n);
  *at = (uint64_t) (q >= c->k ? q - c->k : q) * c->chunk + off;
  return q < c->k;
}

/* row q of the full n x (n-k) code: identity for data positions, Cauchy below */
static const unsigned char* scr_erasure_row(const struct scr_erasure_code* c, int q, unsigned char* unit)
{
  int d = c->n - c->k;
  if (q >= c->k) {
    memset(unit, 0, d);
    unit[q - c->k] = 1;
    return unit;
  }
  return c->matrix + (size_t) (d + q) * d;
}

int scr_erasure_plan(const struct scr_erasure_code* c, int t, const int* lost, struct scr_stripe_plan* plan)
{
  const int n = c->n, k = c->k, d = n - k;
  int found = 0;
  plan->lost_count = 0;
  plan->d = d;
  plan->gftbls = NULL;
  for (int i = 0; i < n; i++) {
    int q = (k + i) % n;            /* chain order: data positions first, parity last */
    int member = (t + q) % n;
    if (lost[member]) plan->lost[plan->lost_count++] = member;
    else if (found < d) plan->contributors[found++] = member;
  }
  if (found < d) return SCR_ERR_INVALID;
  plan->xor_only = (k == 1);
  if (plan->xor_only || plan->lost_count == 0) return SCR_SUCCESS;

  /* invert the rows of the survivors, then express each lost row through them */
  unsigned char* m = malloc((size_t) d * d);
  unsigned char* inv = malloc((size_t) d * d);
  unsigned char* coef = malloc((size_t) d * plan->lost_count);
  unsigned char unit[256];
  int rc = m && inv && coef ? SCR_SUCCESS : SCR_ERR_NOMEM;
  for (int i = 0; rc == SCR_SUCCESS && i < d; i++)
    memcpy(m + (size_t) i * d, scr_erasure_row(c, scr_mod(plan->contributors[i] - t, n), unit), d);
  if (rc == SCR_SUCCESS) rc = gf_invert_matrix(m, inv, d) == 0 ? SCR_SUCCESS : SCR_ERR_INVALID;
  for (int l = 0; rc == SCR_SUCCESS && l < plan->lost_count; l++) {
    const unsigned char* row = scr_erasure_row(c, scr_mod(plan->lost[l] - t, n), unit);
    for (int j = 0; j < d; j++) {
      unsigned char v = 0;
      for (int i = 0; i < d; i++) v ^= gf_mul(row[i], inv[(size_t) i * d + j]);
      coef[(size_t) l * d + j] = v;
    }
  }
  if (rc == SCR_SUCCESS) {
    plan->gftbls = malloc((size_t) 32 * d * plan->lost_count);
    if (plan->gftbls) ec_init_tables(d, plan->lost_count, coef, plan->gftbls);
    else rc = SCR_ERR_NOMEM;
  }
  free(coef);
  free(inv);
  free(m);
  return rc;
}

void scr_erasure_plan_free(struct scr_stripe_plan* plan)
{
  free(plan->gftbls);
  plan->gftbls = NULL;
}

void scr_erasure_plan_add(const struct scr_stripe_plan* p, int pos, size_t len, unsigned char* piece,
                          unsigned char* acc)
{
  int rows = p->lost_count;
  if (p->xor_only) {
    if (pos == 0) {
      memcpy(acc, piece, len);
    } else {
      void* v[3] = { acc, piece, acc };
      xor_gen(3, (int) len, v);
    }
    return;
  }
  unsigned char* out[256];
  if (pos == 0) memset(acc, 0, (size_t) rows * len);
  for (int r = 0; r < rows; r++) out[r] = acc + (size_t) r * len;
  ec_encode_data_update((int) len, p->d, rows, pos, p->gftbls, piece, out);
}

/* member's piece of stripe t: read from or written to whichever of its
 * streams holds it */
static int scr_erasure_local_access(const struct scr_erasure_code* c, int member, int t, uint64_t off,
                                    size_t len, struct scr_stream* data, struct scr_stream* parity,
                                    unsigned char* buf, int writing)
{
  uint64_t at = 0;
  struct scr_stream* s = scr_erasure_code_locate(c, member, t, off, &at) ? &parity[member] : &data[member];
  return writing ? scr_stream_write(s, at, buf, len) : scr_stream_read(s, at, buf, len);
}

int scr_erasure_rebuild_local(const struct scr_erasure_code* c, const int* lost, struct scr_stream* data,
                              struct scr_stream* parity, size_t piece)
{
  const int n = c->n;
  piece = (size_t) scr_round_up(piece < 64 ? 64 : piece, 64);
  struct scr_stripe_plan* plans = calloc(n, sizeof(*plans));
  unsigned char* acc = scr_erasure_alloc(piece * c->k);
  unsigned char* buf = scr_erasure_alloc(piece);
  int rc = plans && acc && buf ? SCR_SUCCESS : SCR_ERR_NOMEM;
  for (int t = 0; t < n && rc == SCR_SUCCESS; t++) rc = scr_erasure_plan(c, t, lost, &plans[t]);
  /* the same sums the ranks of a set form along a chain (scr_erasure.c),
   * one contributor after the other */
  for (uint64_t off = 0; rc == SCR_SUCCESS && off < c->chunk; off += piece) {
    size_t len = (size_t) (c->chunk - off < piece ? c->chunk - off : piece);
    for (int t = 0; rc == SCR_SUCCESS && t < n; t++) {
      struct scr_stripe_plan* p = &plans[t];
      if (p->lost_count == 0) continue;
      for (int pos = 0; rc == SCR_SUCCESS && pos < p->d; pos++) {
        rc = scr_erasure_local_access(c, p->contributors[pos], t, off, len, data, parity, buf, 0);
        if (rc == SCR_SUCCESS) scr_erasure_plan_add(p, pos, len, buf, acc);
      }
      for (int l = 0; rc == SCR_SUCCESS && l < p->lost_count; l++)
        rc = scr_erasure_local_access(c, p->lost[l], t, off, len, data, parity, acc + (size_t) l * len, 1);
    }
  }
  for (int t = 0; plans && t < n; t++) scr_erasure_plan_free(&plans[t]);
  free(plans);
  free(buf);
  free(acc);
  return rc;
}
