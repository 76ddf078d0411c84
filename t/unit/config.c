/* config.c - unit tests of the configuration file parser (scr_config.c):
 * syntax, interpolation, descriptor layout and the exact one-line errors. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "scr_error.h"
#include "scr_kvtree.h"
#include "scr_config.h"

static char dir[] = "/tmp/scr-config-test.XXXXXX";
static char path[512];
static char err[1024];

/* write text to the scratch config file and parse it into tree */
static int parse(const char* text, scr_kvtree* tree)
{
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  fputs(text, f);
  fclose(f);
  return scr_config_read_file(path, tree, err, sizeof(err));
}

/* parse text into a fresh tree and return the error message it produced */
static const char* error_of(const char* text)
{
  scr_kvtree* tree = scr_kvtree_new();
  int rc = parse(text, tree);
  scr_kvtree_delete(&tree);
  if (rc != SCR_ERR_CONFIG) return "(no SCR_ERR_CONFIG)";
  /* strip the directory so expected strings stay short */
  static char shown[1024];
  const char* msg = strncmp(err, dir, strlen(dir)) == 0 ? err + strlen(dir) + 1 : err;
  snprintf(shown, sizeof(shown), "%s", msg);
  return shown;
}

/* value stored for a simple key: tree[key] -> first child */
static const char* value_of(const scr_kvtree* tree, const char* key)
{
  return scr_kvtree_elem_key(scr_kvtree_first(scr_kvtree_get(tree, key)));
}

static const char* origin_of(const scr_kvtree* tree, const char* key)
{
  scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(tree, key));
  const char* o = e ? scr_kvtree_get_val(scr_kvtree_elem_tree(e), "@ORIGIN") : NULL;
  if (o && strncmp(o, dir, strlen(dir)) == 0) o += strlen(dir) + 1;
  return o;
}

static void test_simple_syntax(void)
{
  scr_kvtree* t = scr_kvtree_new();
  is_int(parse("SCR_FLUSH=20\n", t), SCR_SUCCESS, "KEY=VALUE parses");
  is_str(value_of(t, "SCR_FLUSH"), "20", "value stored under tree[KEY][VALUE]");
  is_str(origin_of(t, "SCR_FLUSH"), "t.conf:1", "@ORIGIN records file:line");
  scr_kvtree_delete(&t);

  t = scr_kvtree_new();
  parse("scr_cache_size=2\n", t);
  is_str(value_of(t, "SCR_CACHE_SIZE"), "2", "keys are case-insensitive and stored upper-case");
  scr_kvtree_delete(&t);

  t = scr_kvtree_new();
  parse("  SCR_FLUSH   =   30   \n\tSCR_DEBUG\t=\t1\n", t);
  is_str(value_of(t, "SCR_FLUSH"), "30", "blanks around '=' are tolerated");
  is_str(value_of(t, "SCR_DEBUG"), "1", "tabs around '=' are tolerated");
  scr_kvtree_delete(&t);

  t = scr_kvtree_new();
  parse("# a comment\n\n   \nSCR_FLUSH=5 # trailing comment\nSCR_JOB_NAME=\"run #3\"\n", t);
  is_str(value_of(t, "SCR_FLUSH"), "5", "a trailing comment ends the value");
  is_str(value_of(t, "SCR_JOB_NAME"), "run #3", "'#' inside double quotes is part of the value");
  is_int(scr_kvtree_size(t), 2, "comment and blank lines add nothing");
  scr_kvtree_delete(&t);

  t = scr_kvtree_new();
  parse("SCR_PREFIX=\"/p/my dir/run\"\nSCR_JOB_NAME=a\"b c\"d\n", t);
  is_str(value_of(t, "SCR_PREFIX"), "/p/my dir/run", "a quoted value keeps its blanks");
  is_str(value_of(t, "SCR_JOB_NAME"), "ab cd", "quoted and bare parts join into one value");
  scr_kvtree_delete(&t);

  t = scr_kvtree_new();
  parse("SCR_FLUSH=1\nSCR_DEBUG=1\nSCR_FLUSH=2\n", t);
  is_str(value_of(t, "SCR_FLUSH"), "2", "a repeated simple key: the last value wins");
  is_int(scr_kvtree_size(scr_kvtree_get(t, "SCR_FLUSH")), 1, "a repeated simple key keeps one value");
  is_str(origin_of(t, "SCR_FLUSH"), "t.conf:3", "the origin is the line that won");
  scr_kvtree_delete(&t);

  t = scr_kvtree_new();
  parse("SCR_FLUSH=3\r\nSCR_DEBUG=2\r\n", t);
  is_str(value_of(t, "SCR_FLUSH"), "3", "CRLF line endings are accepted");
  scr_kvtree_delete(&t);

  t = scr_kvtree_new();
  parse("SCR_COPY_TYPE=xor\n", t);
  is_str(value_of(t, "SCR_COPY_TYPE"), "XOR", "enum values match case-insensitively and are stored as listed");
  scr_kvtree_delete(&t);
}

static void test_interpolation(void)
{
  setenv("SCR_TEST_JOB", "4242", 1);
  setenv("SCR_TEST_EMPTY", "", 1);
  unsetenv("SCR_TEST_UNSET");
  scr_kvtree* t = scr_kvtree_new();
  is_int(parse("SCR_CACHE_BASE=/dev/shm/$SCR_TEST_JOB\n"
               "SCR_CNTL_BASE=/tmp/${SCR_TEST_JOB}x\n"
               "SCR_JOB_NAME=\"job $SCR_TEST_JOB\"\n"
               "SCR_JOB_ID=cost\\$5$1\n"
               "SCR_USER=a${SCR_TEST_EMPTY}b\n", t), SCR_SUCCESS, "interpolated file parses");
  is_str(value_of(t, "SCR_CACHE_BASE"), "/dev/shm/4242", "$VAR is replaced from the environment");
  is_str(value_of(t, "SCR_CNTL_BASE"), "/tmp/4242x", "${VAR} is replaced and may be followed by letters");
  is_str(value_of(t, "SCR_JOB_NAME"), "job 4242", "variables are replaced inside double quotes");
  is_str(value_of(t, "SCR_JOB_ID"), "cost$5$1", "\\$ and a $ without a name stay literal");
  is_str(value_of(t, "SCR_USER"), "ab", "a variable set to the empty string is replaced by nothing");
  scr_kvtree_delete(&t);

  is_str(error_of("SCR_CACHE_BASE=/dev/shm/$SCR_TEST_UNSET\n"),
         "t.conf:1: key SCR_CACHE_BASE: environment variable SCR_TEST_UNSET is not set",
         "an unset variable is an error naming it");
  is_str(error_of("SCR_CACHE_BASE=/x/${SCR_TEST_JOB\n"),
         "t.conf:1: key SCR_CACHE_BASE: unterminated ${ in value", "an unterminated ${ is an error");
  is_str(error_of("STORE=/x COUNT=$SCR_TEST_UNSET\n"),
         "t.conf:1: key STORE: attribute COUNT: environment variable SCR_TEST_UNSET is not set",
         "an unset variable in an attribute names the attribute");
}

static void test_descriptors(void)
{
  scr_kvtree* t = scr_kvtree_new();
  is_int(parse("STORE=/dev/shm GROUP=NODE COUNT=2\n"
               "store=/ssd group=NODE count=3 mkdir=0\n"
               "CKPT=0 INTERVAL=1 GROUP=NODE STORE=/dev/shm TYPE=xor SET_SIZE=8\n"
               "CKPT=1 INTERVAL=4 TYPE=RS SET_FAILURES=2 OUTPUT=1\n"
               "GROUPS=host1 RACK=r1 POWER=p2\n"
               "PRELOAD=ckpt/{step}/rank{rank}.dat TYPE=checkpoint FILES=1 BOUNDARY=barrier CALLER=write_*\n"
               "CNTLDIR=/dev/shm BYTES=1GB\n", t), SCR_SUCCESS, "a file of descriptors parses");
  scr_kvtree* shm = scr_kvtree_get_kv(t, "STORE", "/dev/shm");
  ok(shm != NULL, "descriptor stored as tree[STORE][/dev/shm]");
  is_str(scr_kvtree_get_val(shm, "GROUP"), "NODE", "attribute stored as tree[KEY][VALUE][ATTR][VAL]");
  is_str(scr_kvtree_get_val(shm, "COUNT"), "2", "second attribute stored");
  ok(strstr(scr_kvtree_get_val(shm, "@ORIGIN"), "t.conf:1") != NULL, "descriptor records its origin");
  is_int(scr_kvtree_size(scr_kvtree_get(t, "STORE")), 2, "two STORE lines give two descriptors");
  is_str(scr_kvtree_get_val(scr_kvtree_get_kv(t, "STORE", "/ssd"), "MKDIR"), "0",
         "attribute names are case-insensitive, stored upper-case");
  scr_kvtree* ckpt0 = scr_kvtree_get_kv(t, "CKPT", "0");
  is_str(scr_kvtree_get_val(ckpt0, "TYPE"), "XOR", "an enum attribute is stored as listed");
  is_str(scr_kvtree_get_val(ckpt0, "SET_SIZE"), "8", "CKPT SET_SIZE stored");
  is_str(scr_kvtree_get_val(scr_kvtree_get_kv(t, "CKPT", "1"), "OUTPUT"), "1", "CKPT 1 OUTPUT stored");
  scr_kvtree* host = scr_kvtree_get_kv(t, "GROUPS", "host1");
  is_str(scr_kvtree_get_val(host, "RACK"), "r1", "GROUPS takes free-form group names");
  is_str(scr_kvtree_get_val(host, "POWER"), "p2", "GROUPS keeps every group of the host");
  scr_kvtree* rule = scr_kvtree_get_kv(t, "PRELOAD", "ckpt/{step}/rank{rank}.dat");
  ok(rule != NULL, "PRELOAD pattern keeps its braces and case");
  is_str(scr_kvtree_get_val(rule, "BOUNDARY"), "BARRIER", "PRELOAD BOUNDARY stored as listed");
  is_str(scr_kvtree_get_val(rule, "CALLER"), "write_*", "PRELOAD CALLER glob kept as written");
  is_str(scr_kvtree_get_val(scr_kvtree_get_kv(t, "CNTLDIR", "/dev/shm"), "BYTES"), "1GB", "CNTLDIR BYTES stored");
  scr_kvtree_delete(&t);

  t = scr_kvtree_new();
  parse("CKPT=01 TYPE=XOR\nCKPT=1 SET_SIZE=4\n", t);
  scr_kvtree* c = scr_kvtree_get_kv(t, "CKPT", "1");
  is_str(scr_kvtree_get_val(c, "TYPE"), "XOR", "CKPT=01 and CKPT=1 are one descriptor");
  is_str(scr_kvtree_get_val(c, "SET_SIZE"), "4", "a later line adds attributes to the same descriptor");
  scr_kvtree_delete(&t);

  t = scr_kvtree_new();
  parse("STORE = /dev/shm   GROUP = NODE\n", t);
  is_str(scr_kvtree_get_val(scr_kvtree_get_kv(t, "STORE", "/dev/shm"), "GROUP"), "NODE",
         "blanks around '=' are tolerated in descriptors");
  scr_kvtree_delete(&t);
}

static void test_errors(void)
{
  is_str(error_of("SCR_FLUSH=1\n# comment\n\nSCR_CACHE_SZE=2\n"),
         "t.conf:4: key SCR_CACHE_SZE: unknown parameter; did you mean SCR_CACHE_SIZE?",
         "unknown key: line counts comments and blanks, suggests the nearest name");
  is_str(error_of("CACHE_SIZE=2\n"),
         "t.conf:1: key CACHE_SIZE: unknown parameter; did you mean SCR_CACHE_SIZE?",
         "a key missing its SCR_ prefix gets the prefixed name suggested");
  is_str(error_of("WIBBLE=2\n"),
         "t.conf:1: key WIBBLE: unknown parameter (scrconf(5) lists them all)",
         "an unknown key with no near name says where to look");
  is_str(error_of("SCR_FLUSH=ten\n"),
         "t.conf:1: key SCR_FLUSH: expected an integer, got 'ten'", "integer of the wrong type");
  is_str(error_of("SCR_SET_SIZE=0\n"),
         "t.conf:1: key SCR_SET_SIZE: expected an integer >= 1, got '0'", "integer out of range");
  is_str(error_of("SCR_FILE_BUF_SIZE=lots\n"),
         "t.conf:1: key SCR_FILE_BUF_SIZE: expected a byte count such as 4096, 64KB or 2GiB, got 'lots'",
         "byte count of the wrong type");
  is_str(error_of("SCR_FETCH=maybe\n"),
         "t.conf:1: key SCR_FETCH: expected 0 or 1 (or yes/no, true/false, on/off), got 'maybe'",
         "boolean of the wrong type");
  is_str(error_of("SCR_CHECKPOINT_OVERHEAD=lots\n"),
         "t.conf:1: key SCR_CHECKPOINT_OVERHEAD: expected a number, got 'lots'", "number of the wrong type");
  is_str(error_of("SCR_COPY_TYPE=RAID5\n"),
         "t.conf:1: key SCR_COPY_TYPE: 'RAID5' is not one of SINGLE, PARTNER, XOR, RS, FILE",
         "bad enum lists the allowed values");
  is_str(error_of("STORE=/dev/shm COUTN=2\n"),
         "t.conf:1: key STORE: unknown attribute COUTN; did you mean COUNT?",
         "unknown attribute gets a suggestion");
  is_str(error_of("STORE=/dev/shm ZZZZZZZ=2\n"),
         "t.conf:1: key STORE: unknown attribute ZZZZZZZ (STORE takes GROUP, COUNT, ENABLED, MKDIR, FLUSH, VIEW, TYPE)",
         "unknown attribute without a near name lists the attributes");
  is_str(error_of("CKPT=0 SET_SIZE=big\n"),
         "t.conf:1: key CKPT: attribute SET_SIZE: expected an integer, got 'big'",
         "attribute value of the wrong type");
  is_str(error_of("CKPT=0 TYPE=RAID5\n"),
         "t.conf:1: key CKPT: attribute TYPE: 'RAID5' is not one of SINGLE, PARTNER, XOR, RS",
         "attribute enum lists its values");
  is_str(error_of("CKPT=first TYPE=XOR\n"),
         "t.conf:1: key CKPT: expected an integer, got 'first'", "a CKPT descriptor is named by an integer");
  is_str(error_of("CKPT=0 TYPE=XOR TYPE=RS\n"),
         "t.conf:1: key CKPT: attribute TYPE given twice", "an attribute given twice on a line");
  is_str(error_of("SCR_FLUSH=\n"), "t.conf:1: key SCR_FLUSH: missing value after '='", "missing value");
  is_str(error_of("SCR_FLUSH=   # none\n"), "t.conf:1: key SCR_FLUSH: missing value after '='",
         "a comment right after '=' is a missing value");
  is_str(error_of("STORE= GROUP=NODE\n"), "t.conf:1: key STORE: missing value after '='",
         "a forgotten value before the next attribute");
  is_str(error_of("STORE=/x COUNT=\n"), "t.conf:1: key STORE: attribute COUNT: missing value after '='",
         "missing attribute value");
  is_str(error_of("SCR_PREFIX=\"\"\n"), "t.conf:1: key SCR_PREFIX: empty value", "an empty quoted value");
  is_str(error_of("SCR_FLUSH 10\n"), "t.conf:1: key SCR_FLUSH: no '=' after the key; lines are KEY=VALUE",
         "a line with no '='");
  is_str(error_of("STORE=/x GROUP NODE\n"),
         "t.conf:1: key STORE: attribute GROUP has no '='; attributes are NAME=VALUE", "an attribute with no '='");
  is_str(error_of("SCR_PREFIX=\"/a b\n"), "t.conf:1: key SCR_PREFIX: unterminated double quote in value",
         "unterminated quote");
  is_str(error_of("=5\n"), "t.conf:1: key (none): expected a name before '='", "a line starting with '='");
  is_str(error_of("SCR-FLUSH=5\n"),
         "t.conf:1: key SCR-FLUSH: not a valid parameter name (letters, digits and '_')", "a key with a bad character");
  is_str(error_of("SCR_FLUSH=1 SCR_DEBUG=1\n"),
         "t.conf:1: key SCR_FLUSH: takes a single value, but SCR_DEBUG=1 follows; put each parameter on its own line",
         "two simple parameters on one line");
  is_str(error_of("SCR_PREFIX=/a=b\n"),
         "t.conf:1: key SCR_PREFIX: '=' inside a value must be within double quotes", "a bare '=' in a value");

  const char* msg = error_of("SCR_FLUSH=ten\n");
  ok(strchr(msg, '\n') == NULL, "an error message is a single line");
}

static void test_atomic_and_missing(void)
{
  scr_kvtree* t = scr_kvtree_new();
  scr_kvtree_set_kv(t, "SCR_FLUSH", "5");
  is_int(parse("SCR_DEBUG=1\nSTORE=/ssd COUNT=1\nSCR_FLUSH=ten\n", t), SCR_ERR_CONFIG, "bad third line fails the file");
  is_str(value_of(t, "SCR_FLUSH"), "5", "existing value untouched after an error");
  ok(scr_kvtree_get(t, "SCR_DEBUG") == NULL, "good lines before the error are not merged");
  ok(scr_kvtree_get(t, "STORE") == NULL, "descriptors before the error are not merged");
  is_int(scr_kvtree_size(t), 1, "tree has exactly what it had");

  is_int(parse("SCR_DEBUG=1\n", t), SCR_SUCCESS, "a good file merges");
  is_str(value_of(t, "SCR_FLUSH"), "5", "merging keeps other keys");
  is_str(value_of(t, "SCR_DEBUG"), "1", "merging adds new keys");
  scr_kvtree_delete(&t);

  char missing[600];
  snprintf(missing, sizeof(missing), "%s/nope.conf", dir);
  t = scr_kvtree_new();
  err[0] = 'x';
  is_int(scr_config_read_file(missing, t, err, sizeof(err)), SCR_ERR_NOENT, "a missing file is SCR_ERR_NOENT");
  is_str(err, "", "a missing file leaves no message");
  scr_kvtree_delete(&t);
}

static void test_strings(void)
{
  scr_kvtree* t = scr_kvtree_new();
  is_int(scr_config_parse_string("SCR_FLUSH=ten", "SCR_Config", t, err, sizeof(err)), SCR_ERR_CONFIG,
         "parse_string rejects a bad value");
  is_str(err, "SCR_Config: key SCR_FLUSH: expected an integer, got 'ten'", "one-line text is named by its origin alone");
  is_int(scr_config_parse_string("SCR_FLUSH=1\nSCR_FLUSH=x\n", "app", t, err, sizeof(err)), SCR_ERR_CONFIG,
         "parse_string rejects a bad second line");
  is_str(err, "app:2: key SCR_FLUSH: expected an integer, got 'x'", "several lines are named origin:line");
  is_int(scr_kvtree_size(t), 0, "parse_string leaves the tree untouched on error");
  is_int(scr_config_parse_string("CKPT=0 TYPE=XOR", "SCR_Config", t, err, sizeof(err)), SCR_SUCCESS,
         "parse_string accepts a descriptor");
  is_str(scr_kvtree_get_val(scr_kvtree_get_kv(t, "CKPT", "0"), "@ORIGIN"), "SCR_Config", "its origin is the caller's name");
  scr_kvtree_delete(&t);
}

int main(void)
{
  if (!mkdtemp(dir)) {
    printf("Bail out! cannot create a scratch directory\n");
    return 1;
  }
  snprintf(path, sizeof(path), "%s/t.conf", dir);
  test_simple_syntax();
  test_interpolation();
  test_descriptors();
  test_errors();
  test_atomic_and_missing();
  test_strings();
  unlink(path);
  rmdir(dir);
  return tap_done();
}
