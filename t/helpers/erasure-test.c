/* erasure-test.c - exercise the XOR/RS engine directly over MPI: encode each rank's
 * files, then for every set of up to k lost members rebuild and compare every byte,
 * over MPI and in one process (scr_erasure_rebuild_local, as scr_index --build does). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "scr_stream.h"
#include "scr_erasure.h"

static int rank, ranks;

static unsigned char content(int r, int f, uint64_t i)
{
  return (unsigned char) ((i * 2654435761u) >> 7 ^ (unsigned) (r * 31 + f * 7));
}

/* file count and sizes of a rank: varied, including empty files and none at all */
static int layout(int r, uint64_t* sizes)
{
  int count = (r * 7 + 3) % 4;
  for (int f = 0; f < count; f++) sizes[f] = (uint64_t) ((r + 1) * (f + 3) * 12347) % 300001;
  if (count > 1) sizes[1] = 0;
  return count;
}

static int check_file(const char* path, int r, int f, uint64_t size)
{
  FILE* fp = fopen(path, "r");
  if (!fp) return 0;
  int ok = 1;
  for (uint64_t i = 0; ok && i < size; i++) ok = fgetc(fp) == content(r, f, i);
  ok = ok && fgetc(fp) == EOF;
  fclose(fp);
  return ok;
}

/* rank 0, every member's files at hand: rebuild the members in mask into
 * base/local, from the others' files and parity; 1 when every rebuilt byte
 * (data and parity) is right, or, with more than k lost, when it refuses */
static int local_case(const char* base, int k, uint64_t chunk, size_t piece, unsigned mask)
{
  struct scr_erasure_code c;
  scr_erasure_code_init(&c, ranks, k, chunk);
  struct scr_stream* data = calloc(ranks, sizeof(*data));
  struct scr_stream* parity = calloc(ranks, sizeof(*parity));
  int* lost = calloc(ranks, sizeof(int));
  int nlost = 0, ok = 1;
  for (int r = 0; r < ranks; r++) {
    uint64_t sizes[4], psize = (uint64_t) k * chunk;
    int count = layout(r, sizes);
    nlost += lost[r] = (mask >> r) & 1;
    const char* root = lost[r] ? "local/" : "";
    char* paths[4];
    char ppath[600];
    for (int f = 0; f < count; f++) {
      paths[f] = malloc(600);
      snprintf(paths[f], 600, "%s/%srank%d/file%d", base, root, r, f);
    }
    snprintf(ppath, sizeof(ppath), "%s/%srank%d/parity.%d", base, root, r, k);
    char* pp = ppath;
    ok = ok && scr_stream_open(&data[r], count, paths, sizes, lost[r]) == 0 &&
         scr_stream_open(&parity[r], 1, &pp, &psize, lost[r]) == 0;
    for (int f = 0; f < count; f++) free(paths[f]);
  }
  int rc = ok ? scr_erasure_rebuild_local(&c, lost, data, parity, piece) : -1;
  for (int r = 0; r < ranks; r++) {
    scr_stream_close(&data[r]);
    scr_stream_close(&parity[r]);
  }
  if (nlost > k) {
    ok = ok && rc != 0;
  } else {
    ok = ok && rc == 0;
    for (int r = 0; ok && r < ranks; r++) {
      if (!lost[r]) continue;
      uint64_t sizes[4];
      int count = layout(r, sizes);
      char path[600], cmd[1400];
      for (int f = 0; ok && f < count; f++) {
        snprintf(path, sizeof(path), "%s/local/rank%d/file%d", base, r, f);
        ok = check_file(path, r, f, sizes[f]);
      }
      snprintf(cmd, sizeof(cmd), "cmp -s '%s/local/rank%d/parity.%d' '%s/rank%d/parity.%d'", base, r, k, base, r, k);
      ok = ok && system(cmd) == 0;
    }
  }
  free(lost);
  free(parity);
  free(data);
  scr_erasure_code_finalize(&c);
  return ok;
}

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const char* base = argc > 1 ? argv[1] : "/tmp";
  size_t piece = argc > 2 ? strtoul(argv[2], NULL, 0) : 4096;
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/rank%d", base, rank);
  mkdir(dir, 0700);

  uint64_t sizes[4];
  int count = layout(rank, sizes);
  char* paths[4];
  uint64_t length = 0, longest = 0;
  for (int f = 0; f < count; f++) {
    paths[f] = malloc(600);
    snprintf(paths[f], 600, "%s/file%d", dir, f);
    FILE* fp = fopen(paths[f], "w");
    for (uint64_t i = 0; i < sizes[f]; i++) fputc(content(rank, f, i), fp);
    fclose(fp);
    length += sizes[f];
  }
  MPI_Allreduce(&length, &longest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);

  int failures = 0, cases = 0;
  for (int k = 1; k < ranks && k <= 3; k++) {
    struct scr_erasure e;
    uint64_t chunk = scr_erasure_chunk_size(longest, ranks, k);
    scr_erasure_init(&e, MPI_COMM_WORLD, k, chunk, piece);
    char ppath[600];
    snprintf(ppath, sizeof(ppath), "%s/parity.%d", dir, k);
    char* pp = ppath;
    uint64_t psize = (uint64_t) k * chunk;
    struct scr_stream data, parity;
    scr_stream_open(&data, count, paths, sizes, 0);
    scr_stream_open(&parity, 1, &pp, &psize, 1);
    if (scr_erasure_encode(&e, &data, &parity) != 0) failures++;
    scr_stream_close(&data);
    scr_stream_close(&parity);

    /* every subset of members with 1..k elements */
    for (unsigned mask = 1; mask < (1u << ranks); mask++) {
      int lost[64], nlost = 0;
      for (int i = 0; i < ranks; i++) nlost += lost[i] = (mask >> i) & 1;
      if (nlost > k) continue;
      cases++;
      int me_lost = lost[rank];
      char saved[640];
      if (me_lost) {
        /* keep the originals aside, rebuild in place */
        for (int f = 0; f < count; f++) {
          snprintf(saved, sizeof(saved), "%s.orig", paths[f]);
          rename(paths[f], saved);
        }
        snprintf(saved, sizeof(saved), "%s.orig", ppath);
        rename(ppath, saved);
      }
      scr_stream_open(&data, count, paths, sizes, me_lost);
      scr_stream_open(&parity, 1, &pp, &psize, me_lost);
      int rc = scr_erasure_rebuild(&e, lost, &data, &parity);
      scr_stream_close(&data);
      scr_stream_close(&parity);
      int ok = rc == 0;
      if (me_lost) {
        for (int f = 0; f < count; f++) {
          ok = ok && check_file(paths[f], rank, f, sizes[f]);
          snprintf(saved, sizeof(saved), "%s.orig", paths[f]);
          rename(saved, paths[f]);
        }
        /* the rebuilt parity must equal the original */
        char cmd[1400];
        snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s.orig'", ppath, ppath);
        ok = ok && system(cmd) == 0;
        snprintf(saved, sizeof(saved), "%s.orig", ppath);
        rename(saved, ppath);
      }
      int all_ok = 0;
      MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
      if (!all_ok) {
        failures++;
        if (rank == 0) printf("FAILED: n=%d k=%d lost mask 0x%x\n", ranks, k, mask);
      }
    }
    /* the same rebuilds in one process, and one loss too many refused */
    if (rank == 0) {
      for (unsigned mask = 1; mask < (1u << ranks); mask++) {
        int nlost = __builtin_popcount(mask);
        if (nlost > k + 1) continue;
        cases++;
        if (!local_case(base, k, chunk, piece, mask)) {
          failures++;
          printf("FAILED in one process: n=%d k=%d lost mask 0x%x\n", ranks, k, mask);
        }
      }
    }
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&cases, 1, MPI_INT, 0, MPI_COMM_WORLD);
    scr_erasure_finalize(&e);
  }
  if (rank == 0) printf("%d ranks: %d rebuild cases, %d failures\n", ranks, cases, failures);
  for (int f = 0; f < count; f++) free(paths[f]);
  MPI_Finalize();
  return failures ? 1 : 0;
}
