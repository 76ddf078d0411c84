/* fuzz-config.c - libFuzzer target: random configuration text through the file reader and the
 * string parser (.scrconf, scr.conf, SCR_Config), then its PRELOAD rules and parameter lookups. */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "scr_config.h"
#include "scr_error.h"
#include "scr_kvtree.h"
#include "scr_param.h"
#include "scr_preload_rules.h"

/* Checks besides the sanitizers': a failed parse leaves the settings as
 * they were and says why in one terminated line; the file reader and the
 * string parser agree on text both can hold (no NUL, no byte order mark),
 * apart from the "@ORIGIN" they record; a parsed tree survives packing. */

static int config_fd = -1;
static char config_path[64];

int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerInitialize(int* argc, char*** argv)
{
  (void) argc;
  (void) argv;
  /* values may name environment variables: a few that exist */
  setenv("FUZZ_HOME", "/home/fuzz", 1);
  setenv("FUZZ_EMPTY", "", 1);
  setenv("FUZZ_BLANK", "a b#c", 1);
  /* the file reader takes a path: a memory file stands behind one */
  config_fd = memfd_create("scrconf", 0);
  if (config_fd < 0) abort();
  snprintf(config_path, sizeof(config_path), "/proc/self/fd/%d", config_fd);
  return 0;
}

/* the tree packed, so that two trees compare as bytes (malloc'd) */
static unsigned char* packed(const scr_kvtree* tree, size_t* size)
{
  *size = scr_kvtree_pack_size(tree);
  unsigned char* buf = malloc(*size ? *size : 1);
  if (scr_kvtree_pack(tree, buf) != *size) abort();
  return buf;
}

static int same_tree(const scr_kvtree* a, const scr_kvtree* b)
{
  size_t na, nb;
  unsigned char* pa = packed(a, &na);
  unsigned char* pb = packed(b, &nb);
  int same = na == nb && memcmp(pa, pb, na) == 0;
  free(pa);
  free(pb);
  return same;
}

/* every "@ORIGIN" removed, at any depth: the two readers name lines apart */
static void strip_origins(scr_kvtree* tree)
{
  scr_kvtree_unset(tree, "@ORIGIN");
  for (scr_kvtree_elem* e = scr_kvtree_first(tree); e; e = scr_kvtree_next(e))
    strip_origins(scr_kvtree_elem_tree(e));
}

static void fail(const char* what, const char* detail)
{
  fprintf(stderr, "fuzz-config: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  abort();
}

/* a parse into a tree that holds settings already: on failure they stay */
static int parse(int from_file, const char* text, scr_kvtree** out, char* errbuf, size_t errlen)
{
  scr_kvtree* tree = scr_kvtree_new();
  scr_kvtree_set_kv(scr_kvtree_set_kv(tree, "SCR_DEBUG", "1"), "@ORIGIN", "earlier:1");
  scr_kvtree* before = scr_kvtree_copy(tree);
  memset(errbuf, 'x', errlen);
  int rc = from_file ? scr_config_read_file(config_path, tree, errbuf, errlen)
                     : scr_config_parse_string(text, "fuzz", tree, errbuf, errlen);
  if (!memchr(errbuf, '\0', errlen)) fail("the message is not terminated", NULL);
  if (rc != SCR_SUCCESS) {
    if (rc != SCR_ERR_CONFIG && rc != SCR_ERR_NOMEM) fail("unexpected return code", errbuf);
    if (errbuf[0] == '\0') fail("an error without a message", NULL);
    if (!same_tree(tree, before)) fail("a failed parse changed the settings", errbuf);
  }
  scr_kvtree_delete(&before);
  *out = tree;
  return rc;
}

/* the PRELOAD rules of a good configuration compile or say why, and match */
static void rules(const scr_kvtree* tree)
{
  const scr_kvtree* preload = scr_kvtree_get(tree, "PRELOAD");
  if (!preload) return;
  scr_preload_ruleset* set = NULL;
  char errbuf[256];
  int rc = scr_preload_rules_compile(preload, "/fuzz/prefix", &set, errbuf, sizeof(errbuf));
  if (rc != SCR_SUCCESS) {
    if (rc != SCR_ERR_CONFIG || errbuf[0] == '\0') fail("PRELOAD compile failed without a message", errbuf);
    return;
  }
  static const char* const paths[] = { "/fuzz/prefix/ckpt.12/rank_3.dat", "/fuzz/prefix/x", "/etc/passwd", "/" };
  scr_preload_match m;
  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
    scr_preload_rules_match(set, paths[i], strlen(paths[i]), &m);
    scr_preload_rules_match_directory(set, paths[i], strlen(paths[i]), &m);
  }
  scr_preload_rules_free(&set);
}

/* the parameters the text sets looked up as the library does: a value the
 * parser accepted must parse as its type (SCR_ERR_CONFIG would be a value
 * that stops the job after the configuration was declared good) */
static void lookups(const scr_kvtree* tree)
{
  if (scr_param_init(tree, NULL, NULL) != SCR_SUCCESS) return;
  for (int i = 0; i < scr_param_count(); i++) {
    const scr_param_def* def = scr_param_at(i);
    long long n;
    unsigned long long bytes;
    double d;
    int b;
    /* only the parameters a layer sets: a lookup of any other is the
     * table's default, the same for every input */
    if (!scr_kvtree_get(tree, def->name)) continue;
    scr_param_get(def->name);
    scr_param_origin(def->name);
    /* the getter of its own type, which the parser checked the value for */
    if (def->type == SCR_PARAM_INT && scr_param_get_int(def->name, &n) == SCR_ERR_CONFIG) fail("int", def->name);
    if (def->type == SCR_PARAM_BYTES && scr_param_get_bytes(def->name, &bytes) == SCR_ERR_CONFIG)
      fail("bytes", def->name);
    if (def->type == SCR_PARAM_DOUBLE && scr_param_get_double(def->name, &d) == SCR_ERR_CONFIG)
      fail("double", def->name);
    if (def->type == SCR_PARAM_BOOL && scr_param_get_bool(def->name, &b) == SCR_ERR_CONFIG) fail("bool", def->name);
    const scr_kvtree* descriptors = scr_param_get_descriptors(def->name);
    for (scr_kvtree_elem* e = scr_kvtree_first(descriptors); e; e = scr_kvtree_next(e))
      scr_param_descriptor_origin(def->name, scr_kvtree_elem_key(e));
  }
  scr_param_finalize();
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size > 65536) return 0;
  char* text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';

  /* the same bytes as a file */
  if (ftruncate(config_fd, 0) != 0 || pwrite(config_fd, data, size, 0) != (ssize_t) size) abort();

  char errbuf[300], errfile[300];
  scr_kvtree *from_string, *from_file;
  int rc_string = parse(0, text, &from_string, errbuf, sizeof(errbuf));
  int rc_file = parse(1, NULL, &from_file, errfile, sizeof(errfile));

  int comparable = memchr(data, '\0', size) == NULL && !(size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0);
  if (comparable) {
    if ((rc_string == SCR_SUCCESS) != (rc_file == SCR_SUCCESS)) fail("file and string parsers disagree", errbuf);
    if (rc_string == SCR_SUCCESS) {
      scr_kvtree* a = scr_kvtree_copy(from_string);
      scr_kvtree* b = scr_kvtree_copy(from_file);
      strip_origins(a);
      strip_origins(b);
      if (!same_tree(a, b)) fail("file and string parsers give different settings", NULL);
      scr_kvtree_delete(&a);
      scr_kvtree_delete(&b);
    }
  }

  if (rc_file == SCR_SUCCESS) {
    /* a parsed tree packs and unpacks to itself */
    size_t n;
    unsigned char* buf = packed(from_file, &n);
    scr_kvtree* back = scr_kvtree_new();
    size_t used = 0;
    if (scr_kvtree_unpack(buf, n, back, &used) != SCR_SUCCESS || used != n || !same_tree(back, from_file))
      fail("a parsed tree does not survive pack and unpack", NULL);
    scr_kvtree_delete(&back);
    free(buf);
    rules(from_file);
    lookups(from_file);
  }
  if (rc_string == SCR_SUCCESS) rules(from_string);

  scr_kvtree_delete(&from_string);
  scr_kvtree_delete(&from_file);
  free(text);
  return 0;
}
