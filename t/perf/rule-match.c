/* rule-match.c - nanoseconds per path for the PRELOAD matcher with 10 rules,
 * next to a strcmp of the same paths, measured alternately in one run. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "scr_config.h"
#include "scr_kvtree.h"
#include "scr_preload_path.h"
#include "scr_preload_rules.h"

/* Usage: rule-match [ITERATIONS [ROUNDS]]
 * Two rule sets: ten rules under the prefix, and the same with one absolute
 * rule elsewhere, which shortens the common literal prefix to "/". */

#define PREFIX "/lustre/proj/run42"

static const char* const rules_under_prefix =
  "# ten rules, all under the prefix\n"
  "PRELOAD=ckpt.{step}/rank_{rank}.dat\n"
  "PRELOAD=ckpt.{step}/meta.json\n"
  "PRELOAD=ckpt.latest\n"
  "PRELOAD=out/field_{step}_{rank}.h5 TYPE=OUTPUT\n"
  "PRELOAD=restart/{step}/r{rank}.bin\n"
  "PRELOAD=state.{step}.[0-9][0-9]*.ckpt\n"
  "PRELOAD=dumps/**/chk_{step}.{rank}\n"
  "PRELOAD=ckpt.{step}/rank_{rank}.idx\n"
  "PRELOAD=ckpt.{step}/rank_{rank}.?\n"
  "PRELOAD=snap_{step}/*.bin\n";

static const char* const rules_with_absolute =
  "# nine rules under the prefix, one elsewhere\n"
  "PRELOAD=ckpt.{step}/rank_{rank}.dat\n"
  "PRELOAD=ckpt.{step}/meta.json\n"
  "PRELOAD=ckpt.latest\n"
  "PRELOAD=out/field_{step}_{rank}.h5 TYPE=OUTPUT\n"
  "PRELOAD=restart/{step}/r{rank}.bin\n"
  "PRELOAD=state.{step}.[0-9][0-9]*.ckpt\n"
  "PRELOAD=dumps/**/chk_{step}.{rank}\n"
  "PRELOAD=ckpt.{step}/rank_{rank}.idx\n"
  "PRELOAD=ckpt.{step}/rank_{rank}.?\n"
  "PRELOAD=/scratch/user/run42/ckpt.{step}/part_{rank}\n";

/* what a process opens besides its checkpoints: libraries, /proc, inputs */
static const char* const outside[] = {
  "/usr/lib/x86_64-linux-gnu/libm.so.6", "/proc/self/maps", "/etc/hosts", "/home/user/.bashrc",
  "/lustre/proj/other/input.dat", "/tmp/tmpfile123", "/dev/shm/mpich_shar_tmpXYZ", "/sys/devices/system/cpu/online",
};
/* under the prefix, but no rule's */
static const char* const inside[] = {
  PREFIX "/input.nml", PREFIX "/log/run.log", PREFIX "/ckpt.12/notes.txt", PREFIX "/restart/12/readme",
  PREFIX "/out/summary.txt", PREFIX "/dumps/a/b/c/other.txt", PREFIX "/state.5.x.ckpt", PREFIX "/ckpt.lates",
};
static const char* const matching[] = {
  PREFIX "/ckpt.120/rank_0007.dat", PREFIX "/ckpt.latest", PREFIX "/out/field_3_12.h5", PREFIX "/restart/55/r3.bin",
  PREFIX "/dumps/a/b/chk_5.3", PREFIX "/state.7.42x.ckpt", PREFIX "/ckpt.9/rank_1.idx", PREFIX "/snap_4/x.bin",
};
#define PATHS 8

typedef struct {
  const char* path[PATHS];
  size_t length[PATHS];
  char* copy[PATHS];      /* same text, other buffer: strcmp must read it all */
} path_set;

static volatile long sink;

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static void set_init(path_set* set, const char* const* paths)
{
  for (int i = 0; i < PATHS; i++) {
    set->path[i] = paths[i];
    set->length[i] = strlen(paths[i]);
    set->copy[i] = strdup(paths[i]);
  }
}

/* ns per path */
static double time_strcmp(const path_set* set, long iterations)
{
  long total = 0;
  double start = now();
  for (long n = 0; n < iterations; n++)
    for (int i = 0; i < PATHS; i++) total += strcmp(set->path[i], set->copy[i]) == 0;
  double elapsed = now() - start;
  sink = total;
  return elapsed / ((double) iterations * PATHS);
}

static double time_match(const scr_preload_ruleset* rules, const path_set* set, long iterations, int* matched)
{
  long total = 0;
  scr_preload_match m;
  double start = now();
  for (long n = 0; n < iterations; n++)
    for (int i = 0; i < PATHS; i++) total += scr_preload_rules_match(rules, set->path[i], set->length[i], &m) >= 0;
  double elapsed = now() - start;
  sink = total;
  *matched = (int) (total / iterations);
  return elapsed / ((double) iterations * PATHS);
}

/* what a wrapper does before matching: the path made absolute and normal in a buffer */
static double time_normalize(const path_set* set, long iterations)
{
  long total = 0;
  char buffer[4096];
  double start = now();
  for (long n = 0; n < iterations; n++)
    for (int i = 0; i < PATHS; i++) total += (long) scr_preload_path_normalize(NULL, set->path[i], buffer, sizeof(buffer));
  double elapsed = now() - start;
  sink = total;
  return elapsed / ((double) iterations * PATHS);
}

static scr_preload_ruleset* compile(const char* text)
{
  char err[512];
  scr_kvtree* tree = scr_kvtree_new();
  scr_preload_ruleset* rules = NULL;
  if (scr_config_parse_string(text, "bench", tree, err, sizeof(err)) != 0 ||
      scr_preload_rules_compile(scr_kvtree_get(tree, "PRELOAD"), PREFIX, &rules, err, sizeof(err)) != 0) {
    fprintf(stderr, "rule-match: %s\n", err);
    exit(1);
  }
  scr_kvtree_delete(&tree);
  return rules;
}

static double minimum(double a, double b) { return a < b ? a : b; }

int main(int argc, char** argv)
{
  long iterations = argc > 1 ? atol(argv[1]) : 200000;
  int rounds = argc > 2 ? atoi(argv[2]) : 7;
  scr_preload_ruleset* sets[2] = { compile(rules_under_prefix), compile(rules_with_absolute) };
  const char* names[2] = { "10 rules under the prefix", "9 under the prefix + 1 absolute elsewhere" };
  path_set kinds[3];
  set_init(&kinds[0], outside);
  set_init(&kinds[1], inside);
  set_init(&kinds[2], matching);
  const char* kind_names[3] = { "non-matching, outside the prefix", "non-matching, under the prefix", "matching" };

  /* best of several alternating rounds: the machine is shared and noisy */
  double baseline[3] = { 1e30, 1e30, 1e30 }, normalize[3] = { 1e30, 1e30, 1e30 }, match[2][3];
  int matched[2][3];
  for (int s = 0; s < 2; s++) for (int k = 0; k < 3; k++) match[s][k] = 1e30;
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 3; k++) {
      baseline[k] = minimum(baseline[k], time_strcmp(&kinds[k], iterations));
      normalize[k] = minimum(normalize[k], time_normalize(&kinds[k], iterations));
      for (int s = 0; s < 2; s++) match[s][k] = minimum(match[s][k], time_match(sets[s], &kinds[k], iterations, &matched[s][k]));
    }
  }
  printf("rule-match: ns per path, best of %d rounds of %ld x %d paths\n", rounds, iterations, PATHS);
  for (int s = 0; s < 2; s++) {
    printf("%s (common prefix \"%s\"):\n", names[s], scr_preload_rules_common_prefix(sets[s]));
    for (int k = 0; k < 3; k++)
      printf("  %-34s match %6.1f ns   strcmp %5.1f ns   ratio %5.1f   (%d/%d matched)\n", kind_names[k],
             match[s][k], baseline[k], match[s][k] / baseline[k], matched[s][k], PATHS);
  }
  printf("normalizing the path into a buffer first (scr_preload_path_normalize):\n");
  for (int k = 0; k < 3; k++) printf("  %-34s %6.1f ns\n", kind_names[k], normalize[k]);
  for (int s = 0; s < 2; s++) scr_preload_rules_free(&sets[s]);
  for (int k = 0; k < 3; k++) for (int i = 0; i < PATHS; i++) free(kinds[k].copy[i]);
  return 0;
}
