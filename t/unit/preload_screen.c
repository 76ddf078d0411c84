/* preload_screen.c - unit tests of the screen every wrapped call on a path runs
 * first: the one-pass decision against a slow reference, at every place in a line. */
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "scr_config.h"
#include "scr_kvtree.h"
#include "scr_preload_path.h"
#include "scr_preload_rules.h"
#include "scr_preload_hot.h"
#include "scr_preload_wrap.h"
#include "tap.h"

/* Built twice: as it stands, and with SCR_PRELOAD_SCREEN_PORTABLE, which
 * compiles the screen's portable scan (the one other architectures get)
 * into this program in place of the SSE2 one. Every test runs on each
 * implementation this build and this processor have. */

/* the implementation under test */
static const char* variant = "";

#define PREFIX "/p/run"

static scr_preload_ruleset* compile(const char* lines, const char* prefix)
{
  char err[512] = "";
  scr_kvtree* tree = scr_kvtree_new();
  scr_preload_ruleset* set = NULL;
  if (scr_config_parse_string(lines, "rules.conf", tree, err, sizeof(err)) != 0 ||
      scr_preload_rules_compile(scr_kvtree_get(tree, "PRELOAD"), prefix, &set, err, sizeof(err)) != 0)
    printf("# unexpected error: %s\n", err);
  scr_kvtree_delete(&tree);
  return set;
}

/* the decision spelled out: strlen, strrchr and strstr, then the prefix
 * compare and the name filter, which preload_rules.t tests on their own */
static int screen_reference(const scr_preload_ruleset* set, const char* path)
{
  size_t length = strlen(path);
  if (length == 0) return SCR_PRELOAD_EXCLUDE_ALL;
  const char* slash = strrchr(path, '/');
  size_t name = slash ? (size_t) (slash - path) + 1 : 0;
  if (path[0] != '/')
    return scr_preload_rules_name_may_match(set, path + name, length - name) ? SCR_PRELOAD_EXCLUDE_NONE
                                                                              : SCR_PRELOAD_EXCLUDE_FILE;
  if (strstr(path, "//") || strstr(path, "/.") || (length > 1 && path[length - 1] == '/'))
    return SCR_PRELOAD_EXCLUDE_NONE;
  return scr_preload_rules_exclude(set, path, length, name);
}

static const char* const rules =
  "PRELOAD=ckpt.{step}/rank_{rank}.dat\nPRELOAD=ckpt.{step}/meta.json\nPRELOAD=ckpt.latest\n"
  "PRELOAD=out/field_{step}_{rank}.h5\nPRELOAD=restart/{step}/r{rank}.bin\n"
  "PRELOAD=state.{step}.[0-9][0-9]*.ckpt\nPRELOAD=dumps/**/chk_{step}.{rank}\n"
  "PRELOAD=ckpt.{step}/rank_{rank}.?\nPRELOAD=snap_{step}/*.bin\n";

static const char* const paths[] = {
  "", "/", "a", "/etc/passwd", "/p", "/p/", "/p/run", "/p/run/", "/p/ru", "/p/runx", "/p/run/input.dat",
  "/p/run/ckpt.1/rank_2.dat", "/p/run/ckpt.1/rank_2.da", "/p/run/ckpt.latest", "/p/run//ckpt.latest",
  "/p/run/./ckpt.latest", "/p/x/../run/ckpt.latest", "/p/run/ckpt.1/", "/p/run/snap_3/x.bin", "rank_2.dat",
  "ckpt.1/rank_2.dat", "data/input.dat", "input.dat", "x", "ab", ".", "..", "./ckpt.latest", "dir/.",
  "/p/run/dumps/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/chk_1.2",
  "/p/run/dumps/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/other.txt",
  "/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so.40.30.0.and.more.to.pass.64",
  "/p/run/out/field_1_2.h5", "/p/run/restart/7/r3.bin", "/p/run/state.1.22.ckpt", "/p/run/meta.json",
};

/* the screen's decision on the path at `at` equals the reference's; the
 * place is described by `where` and `offset` when it does not */
static int screen_agrees(const scr_preload_ruleset* set, const char* at, const char* where, size_t offset)
{
  int got = scr_preload_lookup_screen(set, at), want = screen_reference(set, at);
  if (got != want) printf("# '%s' %s %zu: screen %d, reference %d\n", at, where, offset, got, want);
  return got == want;
}

/* every path at every offset in a 64-byte aligned buffer, so that it
 * starts anywhere in a line and ends in the same line or in the next two;
 * the bytes around it are '/' and '.', which must not count */
static void test_every_place(void)
{
  scr_preload_ruleset* set = compile(rules, PREFIX);
  static char buffer[320] __attribute__((aligned(64)));
  int wrong = 0, tried = 0;
  for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
    size_t n = strlen(paths[p]);
    for (size_t offset = 1; offset < 128 && offset + n + 1 < sizeof(buffer); offset++) {
      for (size_t i = 0; i < sizeof(buffer); i++) buffer[i] = (i & 1) ? '.' : '/';
      char* at = buffer + offset;
      memcpy(at, paths[p], n + 1);
      tried++;
      wrong += !screen_agrees(set, at, "at offset", offset);
    }
  }
  ok(tried > 4000, "%s screen: %d placements tried", variant, tried);
  is_int(wrong, 0, "%s screen: the one-pass decision equals the reference at every offset", variant);
  is_int(scr_preload_lookup_screen(set, NULL), SCR_PRELOAD_EXCLUDE_ALL, "%s screen: NULL is nothing of the rules", variant);
  scr_preload_rules_free(&set);
}

/* a path the screen rules out cannot match, nor be a rule directory when
 * ruled out entirely; built from pieces so that every kind of rule is met */
static void test_sound(void)
{
  scr_preload_ruleset* set = compile(rules, PREFIX);
  static const char* const dirs[] = { "", "/ckpt.7", "/ckpt.x", "/dumps", "/dumps/a/b", "/restart/12", "/snap_3",
                                      "/out", "/data" };
  static const char* const names[] = { "rank_1.dat", "rank_1.da", "rank_1.x", "meta.json", "ckpt.latest",
                                       "chk_5.3", "field_1_2.h5", "r7.bin", "x.bin", "state.1.22.ckpt",
                                       "input.dat", "z" };
  int unsound = 0;
  scr_preload_match m;
  for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
      char path[256];
      snprintf(path, sizeof(path), "%s%s/%s", PREFIX, dirs[d], names[k]);
      int screen = scr_preload_lookup_screen(set, path);
      if (scr_preload_rules_match(set, path, strlen(path), &m) >= 0 && screen != SCR_PRELOAD_EXCLUDE_NONE)
        unsound++, printf("# file %s\n", path);
      if (scr_preload_rules_match_directory(set, path, strlen(path), &m) >= 0 && screen == SCR_PRELOAD_EXCLUDE_ALL)
        unsound++, printf("# directory %s\n", path);
    }
  }
  is_int(unsound, 0, "%s screen: never rules out a file or a directory that matches", variant);
  scr_preload_rules_free(&set);
}

/* a common directory longer than 16 bytes takes the compare's loop */
static void test_prefix_lengths(void)
{
  scr_preload_ruleset* set = compile("PRELOAD=ckpt.{step}/rank_{rank}.dat\n", "/lustre/project/user/run42");
  is_int(scr_preload_lookup_screen(set, "/lustre/project/user/run42/ckpt.3/rank_1.dat"), SCR_PRELOAD_EXCLUDE_NONE,
         "%s long prefix: a rule's file", variant);
  is_int(scr_preload_lookup_screen(set, "/lustre/project/user/run43/ckpt.3/rank_1.dat"), SCR_PRELOAD_EXCLUDE_ALL,
         "%s long prefix: one byte off near its end", variant);
  is_int(scr_preload_lookup_screen(set, "/lustre/project/user/run42"), SCR_PRELOAD_EXCLUDE_FILE,
         "%s long prefix: the directory itself", variant);
  scr_preload_rules_free(&set);
  set = compile("PRELOAD=ab*\n", "/");
  is_int(scr_preload_lookup_screen(set, "/abc"), SCR_PRELOAD_EXCLUDE_NONE, "%s root prefix: a rule's file", variant);
  is_int(scr_preload_lookup_screen(set, "/etc/passwd"), SCR_PRELOAD_EXCLUDE_FILE,
         "%s root prefix: any directory may hold a rule's directory", variant);
  scr_preload_rules_free(&set);
}

/* every path ending anywhere in the last 130 bytes of a page whose next
 * page is unreadable: the screen reads only what it may, and decides alike */
static void test_page_end(void)
{
  scr_preload_ruleset* set = compile(rules, PREFIX);
  size_t page = (size_t) sysconf(_SC_PAGESIZE);
  char* pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ok(pages != MAP_FAILED && mprotect(pages + page, page, PROT_NONE) == 0, "%s screen: a page with none after it", variant);
  int wrong = 0, tried = 0;
  for (size_t p = 0; pages != MAP_FAILED && p < sizeof(paths) / sizeof(paths[0]); p++) {
    size_t n = strlen(paths[p]);
    for (size_t gap = 0; gap < 130; gap++) {
      char* at = pages + page - 1 - gap - n;
      memset(pages + page - 200 - n, '/', 200 + n);
      memcpy(at, paths[p], n + 1);
      tried++;
      wrong += !screen_agrees(set, at, "ending this many bytes before the page end:", gap);
    }
  }
  is_int(wrong, 0, "%s screen: %d placements at a page's end decide as the reference", variant, tried);
  if (pages != MAP_FAILED) munmap(pages, 2 * page);
  scr_preload_rules_free(&set);
}

/* the name tables: rules past the 31st share a bit, and a name that a **
 * lets hold '/' is not filtered by what follows the path's last '/' */
static void test_name_tables(void)
{
  char lines[4096] = "";
  for (int i = 0; i < 40; i++)
    snprintf(lines + strlen(lines), sizeof(lines) - strlen(lines), "PRELOAD=r%d_{rank}.x%c\n", i, 'a' + i % 26);
  scr_preload_ruleset* set = compile(lines, PREFIX);
  is_int(scr_preload_lookup_screen(set, PREFIX "/r39_4.xn"), SCR_PRELOAD_EXCLUDE_NONE,
         "%s tables: the 40th rule's file passes", variant);
  is_int(scr_preload_lookup_screen(set, PREFIX "/q39_4.xn"), SCR_PRELOAD_EXCLUDE_FILE,
         "%s tables: a name no rule starts with is ruled out", variant);
  scr_preload_rules_free(&set);
  set = compile("PRELOAD=out/a**b.dat\n", PREFIX);
  is_int(scr_preload_lookup_screen(set, PREFIX "/out/ax/yb.dat"), SCR_PRELOAD_EXCLUDE_NONE,
         "%s tables: a name holding '/' through ** passes", variant);
  scr_preload_rules_free(&set);
}

int main(void)
{
  static const char* const variants[] = { "baseline", "avx2" };
  for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
    variant = variants[v];
    if (scr_preload_screen_use(variant) != 0) {
      printf("# %s: not in this build or not on this processor\n", variant);
      continue;
    }
    test_every_place();
    test_page_end();
    test_sound();
    test_prefix_lengths();
    test_name_tables();
  }
  ok(scr_preload_screen_use("baseline") == 0, "the baseline screen is always there");
  return tap_done();
}
