/* xor-kernel.c - the XOR kernel (ISA-L xor_gen, two sources into one) against
 * memcpy of the same buffers on one core, alternating, best of several rounds.
 * The XOR accumulates in place (c ^= b), which is what the encoder does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <isa-l/raid.h>

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv)
{
  size_t len = (argc > 1 ? strtoul(argv[1], NULL, 0) : 1) << 20; /* MiB per buffer */
  int rounds = argc > 2 ? atoi(argv[2]) : 20;
  void *a, *b, *c;
  if (posix_memalign(&a, 64, len) || posix_memalign(&b, 64, len) || posix_memalign(&c, 64, len))
    return 1;
  memset(a, 1, len);
  memset(b, 2, len);
  memset(c, 3, len);
  double best_xor = 1e9, best_copy = 1e9;
  for (int r = 0; r < rounds; r++) {
    double t = now();
    /* in place, as the encoder accumulates: dest is the first source */
    void* v[3] = { c, b, c };
    xor_gen(3, (int) len, v);
    double x = now() - t;
    t = now();
    memcpy(c, a, len);
    double m = now() - t;
    if (x < best_xor) best_xor = x;
    if (m < best_copy) best_copy = m;
  }
  /* bandwidth counted as bytes of output produced, as for memcpy */
  double xor_bw = len / best_xor / (1 << 30), copy_bw = len / best_copy / (1 << 30);
  printf("buffer %zu MiB, best of %d: xor_gen %.2f GiB/s, memcpy %.2f GiB/s, ratio %.3f\n",
         len >> 20, rounds, xor_bw, copy_bw, xor_bw / copy_bw);
  return 0;
}
