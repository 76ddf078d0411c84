/* param.c - unit tests of parameter lookup (scr_param.c): precedence over the
 * five layers, typed getters, origins, the SCR_Config layer, descriptors, reports. */
#include "config.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "scr_error.h"
#include "scr_kvtree.h"
#include "scr_config.h"
#include "scr_param.h"

extern char** environ;

static char dir[] = "/tmp/scr-param-test.XXXXXX";
static char err[1024];

/* parse text into a new tree, named NAME in origins */
static scr_kvtree* layer(const char* name, const char* text)
{
  scr_kvtree* t = scr_kvtree_new();
  if (scr_config_parse_string(text, name, t, err, sizeof(err)) != SCR_SUCCESS)
    printf("# layer %s did not parse: %s\n", name, err);
  return t;
}

/* a test must not see SCR_ settings of whoever runs it */
static void clear_scr_environment(void)
{
  for (;;) {
    char** env = environ;
    while (*env && strncmp(*env, "SCR_", 4) != 0) env++;
    if (!*env) return;
    char name[256];
    size_t len = strcspn(*env, "=");
    if (len >= sizeof(name)) len = sizeof(name) - 1;
    memcpy(name, *env, len);
    name[len] = '\0';
    unsetenv(name);
  }
}

/* run fn with stderr going to a file; returns what it printed (static) */
static const char* stderr_of(void (*fn)(void))
{
  static char text[8192];
  char file[600];
  snprintf(file, sizeof(file), "%s/stderr", dir);
  fflush(stderr);
  int saved = dup(2);
  int fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  dup2(fd, 2);
  close(fd);
  fn();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  FILE* f = fopen(file, "r");
  size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
  text[n] = '\0';
  if (f) fclose(f);
  unlink(file);
  return text;
}

static void test_precedence(void)
{
  scr_kvtree* user = layer("user.conf", "SCR_FLUSH=3\nSCR_CACHE_SIZE=30\n");
  scr_kvtree* app = layer("SCR_Config", "SCR_FLUSH=2\nSCR_CACHE_SIZE=20\nSCR_HALT_SECONDS=200\n");
  scr_kvtree* sys = layer("scr.conf", "SCR_FLUSH=1\nSCR_CACHE_SIZE=10\nSCR_HALT_SECONDS=100\nSCR_SET_SIZE=4\n");

  setenv("SCR_FLUSH", "4", 1);
  scr_param_init(user, app, sys);
  is_str(scr_param_get("SCR_FLUSH"), "4", "environment beats every file layer");
  is_str(scr_param_origin("SCR_FLUSH"), "environment", "origin of an environment value");
  is_str(scr_param_get("SCR_CACHE_SIZE"), "30", "user file beats SCR_Config and system file");
  is_str(scr_param_origin("SCR_CACHE_SIZE"), "user.conf:2", "origin of a user file value is file:line");
  is_str(scr_param_get("SCR_HALT_SECONDS"), "200", "SCR_Config beats the system file");
  is_str(scr_param_origin("SCR_HALT_SECONDS"), "SCR_Config:3", "origin of an SCR_Config value");
  is_str(scr_param_get("SCR_SET_SIZE"), "4", "system file beats the default");
  is_str(scr_param_origin("SCR_SET_SIZE"), "scr.conf:4", "origin of a system file value");
  is_str(scr_param_get("SCR_SET_FAILURES"), "2", "default when no layer sets it");
  is_str(scr_param_origin("SCR_SET_FAILURES"), "default", "origin of a default");
  ok(scr_param_get("SCR_JOB_NAME") == NULL, "a parameter without default and unset is NULL");
  ok(scr_param_origin("SCR_JOB_NAME") == NULL, "and has no origin");

  setenv("SCR_FLUSH", "", 1);
  is_str(scr_param_get("SCR_FLUSH"), "3", "an empty environment variable counts as unset");
  unsetenv("SCR_FLUSH");
  is_str(scr_param_get("SCR_FLUSH"), "3", "without the environment the user file wins");
  scr_param_init(NULL, app, sys);
  is_str(scr_param_get("SCR_FLUSH"), "2", "without the user file SCR_Config wins");
  scr_param_init(NULL, NULL, sys);
  is_str(scr_param_get("SCR_FLUSH"), "1", "without SCR_Config the system file wins");
  scr_param_init(NULL, NULL, NULL);
  is_str(scr_param_get("SCR_FLUSH"), "10", "with no layer the default is used");

  scr_param_init(user, app, sys);
  scr_kvtree_set_kv(user, "SCR_FLUSH", "99");
  is_str(scr_param_get("SCR_FLUSH"), "3", "the module keeps its own copy of each layer");
  scr_param_finalize();
  scr_kvtree_delete(&user);
  scr_kvtree_delete(&app);
  scr_kvtree_delete(&sys);
}

static void test_typed(void)
{
  scr_kvtree* user = layer("u", "SCR_FILE_BUF_SIZE=64KB\nSCR_MPI_BUF_SIZE=1.5GB\nSCR_FLUSH_ASYNC_BW=2GiB\n"
                                "SCR_CONTAINER_SIZE=512mib\nSCR_FLUSH_ASYNC=yes\nSCR_FETCH=off\n"
                                "SCR_CHECKPOINT_OVERHEAD=2.5\nSCR_FLUSH=20\n");
  scr_param_init(user, NULL, NULL);
  unsigned long long bytes = 0;
  long long i = 0;
  double d = 0;
  int b = -1;
  is_int(scr_param_get_bytes("SCR_FILE_BUF_SIZE", &bytes), SCR_SUCCESS, "bytes getter succeeds");
  is_int((long long) bytes, 65536, "64KB is 65536 bytes");
  scr_param_get_bytes("SCR_MPI_BUF_SIZE", &bytes);
  is_int((long long) bytes, 1610612736LL, "1.5GB is 1.5 * 2^30 bytes");
  scr_param_get_bytes("SCR_FLUSH_ASYNC_BW", &bytes);
  is_int((long long) bytes, 2147483648LL, "2GiB is 2^31 bytes");
  scr_param_get_bytes("SCR_CONTAINER_SIZE", &bytes);
  is_int((long long) bytes, 536870912LL, "suffixes are case-insensitive: 512mib");
  setenv("SCR_FILE_BUF_SIZE", "4096", 1);
  scr_param_get_bytes("SCR_FILE_BUF_SIZE", &bytes);
  is_int((long long) bytes, 4096, "a plain number is bytes");
  unsetenv("SCR_FILE_BUF_SIZE");

  is_int(scr_param_get_int("SCR_FLUSH", &i), SCR_SUCCESS, "int getter succeeds");
  is_int(i, 20, "int value");
  is_int(scr_param_get_double("SCR_CHECKPOINT_OVERHEAD", &d), SCR_SUCCESS, "double getter succeeds");
  ok(d == 2.5, "double value 2.5");
  is_int(scr_param_get_bool("SCR_FLUSH_ASYNC", &b), SCR_SUCCESS, "bool getter succeeds");
  is_int(b, 1, "yes is true");
  scr_param_get_bool("SCR_FETCH", &b);
  is_int(b, 0, "off is false");
  scr_param_get_bool("SCR_CRC_ON_FLUSH", &b);
  is_int(b, 1, "bool default 1 from the table");
  is_int(scr_param_get_int("SCR_MIN_NODES", &i), SCR_ERR_NOENT, "an unset parameter without default is SCR_ERR_NOENT");

  setenv("SCR_FLUSH", "ten", 1);
  is_int(scr_param_get_int("SCR_FLUSH", &i), SCR_ERR_CONFIG, "a bad environment value is SCR_ERR_CONFIG");
  setenv("SCR_FLUSH", "-1", 1);
  is_int(scr_param_get_int("SCR_FLUSH", &i), SCR_ERR_CONFIG, "an out-of-range environment value is SCR_ERR_CONFIG");
  unsetenv("SCR_FLUSH");

  setenv("SCR_COPY_TYPE", "xor", 1);
  is_str(scr_param_get("SCR_COPY_TYPE"), "XOR", "enum values come back in the table's spelling");
  unsetenv("SCR_COPY_TYPE");
  scr_param_finalize();
  scr_kvtree_delete(&user);
}

static void test_alias(void)
{
  scr_kvtree* user = layer("u", "SCR_USER_NAME=alice\n");
  scr_kvtree* sys = layer("s", "SCR_USER=bob\n");
  scr_param_init(user, NULL, sys);
  is_str(scr_param_get("SCR_USER"), "alice", "LLNL's SCR_USER_NAME sets SCR_USER, with its layer's rank");
  setenv("SCR_USER", "carol", 1);
  is_str(scr_param_get("SCR_USER_NAME"), "carol", "SCR_USER_NAME is looked up as SCR_USER");
  unsetenv("SCR_USER");
  scr_param_finalize();
  scr_kvtree_delete(&user);
  scr_kvtree_delete(&sys);
}

static void test_app_layer(void)
{
  is_int(scr_param_app_set("SCR_FLUSH=7"), SCR_SUCCESS, "SCR_Config sets a simple parameter");
  char* v = scr_param_app_query("SCR_FLUSH");
  is_str(v, "7", "query returns the SCR_Config value before init");
  free(v);
  setenv("SCR_FLUSH", "8", 1);
  v = scr_param_app_query("scr_flush");
  is_str(v, "8", "query returns the effective value: the environment wins");
  free(v);
  unsetenv("SCR_FLUSH");
  is_int(scr_param_app_set("SCR_FLUSH ="), SCR_SUCCESS, "KEY= unsets");
  v = scr_param_app_query("SCR_FLUSH");
  is_str(v, "10", "after unset the default shows");
  free(v);
  ok(scr_param_app_query("SCR_JOB_NAME") == NULL, "query of an unset parameter is NULL");
  is_int(scr_param_app_set("SCR_FLUSH=ten"), SCR_ERR_CONFIG, "SCR_Config rejects a bad value");
  is_int(scr_param_app_set("SCR_FLUSHH=1"), SCR_ERR_CONFIG, "SCR_Config rejects an unknown key");
  is_int(scr_param_app_set("SCR_NOPE="), SCR_ERR_CONFIG, "SCR_Config rejects unsetting an unknown key");

  is_int(scr_param_app_set("CKPT=0 TYPE=XOR SET_SIZE=4"), SCR_SUCCESS, "SCR_Config sets a descriptor");
  v = scr_param_app_query("CKPT=0 TYPE");
  is_str(v, "XOR", "query of a descriptor attribute");
  free(v);
  is_int(scr_param_app_set("CKPT=0 SET_SIZE="), SCR_SUCCESS, "DESC=V ATTR= unsets one attribute");
  ok(scr_param_app_query("CKPT=0 SET_SIZE") == NULL, "the attribute is gone");
  v = scr_param_app_query("CKPT=0 TYPE");
  is_str(v, "XOR", "other attributes stay");
  free(v);
  is_int(scr_param_app_set("CKPT=0 COUTN="), SCR_ERR_CONFIG, "unsetting an unknown attribute is an error");
  is_int(scr_param_app_set("CKPT=1 TYPE=RS"), SCR_SUCCESS, "a second descriptor");
  is_int(scr_param_app_set("CKPT="), SCR_SUCCESS, "KEY= unsets every descriptor of that kind");
  ok(scr_param_get_descriptors("CKPT") == NULL, "no CKPT descriptor is left");

  scr_param_app_set("SCR_HALT_SECONDS=60");
  scr_param_init(NULL, scr_param_app_tree(), NULL);
  is_str(scr_param_get("SCR_HALT_SECONDS"), "60", "the app tree handed to init becomes the SCR_Config layer");
  is_str(scr_param_origin("SCR_HALT_SECONDS"), "SCR_Config", "its origin is SCR_Config");
  is_int(scr_param_app_set("SCR_FLUSH=1"), SCR_ERR_INVALID, "SCR_Config cannot set after init");
  scr_param_finalize();
  v = scr_param_app_query("SCR_HALT_SECONDS");
  is_str(v, "0", "finalize forgets the SCR_Config layer");
  free(v);
}

static void test_descriptors(void)
{
  scr_kvtree* sys = layer("scr.conf", "STORE=/dev/shm COUNT=1 GROUP=NODE\nSTORE=/ssd COUNT=3\nCKPT=0 TYPE=XOR\n");
  scr_param_app_set("CKPT=0 TYPE=PARTNER");
  scr_param_app_set("CKPT=1 TYPE=RS INTERVAL=4");
  scr_kvtree* user = layer("user.conf", "# site overrides\nSTORE=/dev/shm COUNT=2\n");
  setenv("STORE", "/evil", 1);
  setenv("SCR_STORE", "/evil", 1);
  scr_param_init(user, scr_param_app_tree(), sys);

  const scr_kvtree* stores = scr_param_get_descriptors("STORE");
  is_int(scr_kvtree_size(stores), 2, "descriptors with different values from several layers are all kept");
  scr_kvtree* shm = scr_kvtree_get(stores, "/dev/shm");
  is_str(scr_kvtree_get_val(shm, "COUNT"), "2", "a higher layer's descriptor replaces the same value below");
  ok(scr_kvtree_get(shm, "GROUP") == NULL, "replacement is whole: attributes of the lower one are gone");
  ok(scr_kvtree_get(shm, "@ORIGIN") == NULL, "merged descriptors carry no @ORIGIN entry");
  is_str(scr_param_descriptor_origin("STORE", "/dev/shm"), "user.conf:2", "origin of a merged descriptor");
  is_str(scr_param_descriptor_origin("STORE", "/ssd"), "scr.conf:2", "origin of a system descriptor");
  ok(scr_kvtree_get(stores, "/evil") == NULL, "descriptors never come from the environment");

  const scr_kvtree* ckpts = scr_param_get_descriptors("ckpt");
  is_str(scr_kvtree_get_val(scr_kvtree_get(ckpts, "0"), "TYPE"), "PARTNER", "SCR_Config descriptor beats the system file");
  is_str(scr_kvtree_get_val(scr_kvtree_get(ckpts, "1"), "INTERVAL"), "4", "SCR_Config adds a descriptor");
  ok(scr_param_get_descriptors("GROUPS") == NULL, "a kind nobody sets is NULL");
  ok(scr_param_get_descriptors("SCR_FLUSH") == NULL, "a simple parameter has no descriptors");
  ok(scr_param_get("STORE") == NULL, "a descriptor has no simple value");
  unsetenv("STORE");
  unsetenv("SCR_STORE");
  scr_param_finalize();
  scr_kvtree_delete(&user);
  scr_kvtree_delete(&sys);
}

static void report(void)
{
  scr_param_report_ineffective();
}

static void test_report_ineffective(void)
{
  scr_kvtree* user = layer("user.conf", "SCR_FLUSH=5\nSCR_FLUSH_WIDTH=64\nSTORE=/ssd MKDIR=0 COUNT=1\nCKPT=0 TYPE=XOR BYPASS=1\n");
  scr_kvtree* sys = layer("scr.conf", "CACHEDIR=/dev/shm BYTES=1GB\n");
  setenv("SCR_PREFIX_SIZE", "3", 1);
  scr_param_init(user, NULL, sys);
  const char* out = stderr_of(report);
  ok(strstr(out, "SCR_FLUSH_WIDTH is accepted for compatibility with LLNL SCR and has no effect here (set by user.conf:2)") != NULL,
     "an ineffective parameter from a file is reported with its origin");
  ok(strstr(out, "SCR_PREFIX_SIZE is accepted for compatibility with LLNL SCR and has no effect here (set by environment)") != NULL,
     "an ineffective parameter from the environment is reported");
  ok(strstr(out, "CKPT attribute BYPASS is accepted") != NULL, "an ineffective descriptor attribute is reported");
  ok(strstr(out, "CACHEDIR is accepted") != NULL, "an ineffective descriptor kind is reported");
  ok(strstr(out, "STORE is accepted") != NULL && strstr(out, "MKDIR") == NULL,
     "a store, which this implementation does not use, is reported once, not by attribute");
  ok(strstr(out, "SCR_FLUSH is") == NULL && strstr(out, "TYPE") == NULL, "effective settings are not reported");
  ok(strstr(out, "SCR_FLUSH_TYPE") == NULL, "ineffective parameters left at their default are not reported");
  int lines = 0;
  for (const char* p = out; *p; p++) lines += *p == '\n';
  is_int(lines, 5, "one line per ineffective setting");
  unsetenv("SCR_PREFIX_SIZE");
  scr_param_finalize();
  scr_kvtree_delete(&user);
  scr_kvtree_delete(&sys);
}

static void test_check_environment(void)
{
  is_int(scr_param_check_environment(err, sizeof(err)), SCR_SUCCESS, "a clean environment passes");
  setenv("SCR_FLUSH", "ten", 1);
  is_int(scr_param_check_environment(err, sizeof(err)), SCR_ERR_CONFIG, "a bad SCR_FLUSH fails the check");
  is_str(err, "environment variable SCR_FLUSH: expected an integer, got 'ten'", "the check names the variable");
  unsetenv("SCR_FLUSH");
  setenv("SCR_COPY_TYPE", "raid5", 1);
  scr_param_check_environment(err, sizeof(err));
  is_str(err, "environment variable SCR_COPY_TYPE: 'raid5' is not one of SINGLE, PARTNER, XOR, RS, FILE",
         "the check lists enum values");
  unsetenv("SCR_COPY_TYPE");
  setenv("SCR_NODELIST", "n[1-4]", 1);
  is_int(scr_param_check_environment(err, sizeof(err)), SCR_SUCCESS, "other SCR_ variables are left alone");
  unsetenv("SCR_NODELIST");
}

static void test_read_files(void)
{
  char path[600];
  snprintf(path, sizeof(path), "%s/my.conf", dir);
  FILE* f = fopen(path, "w");
  fputs("SCR_FLUSH=12\n", f);
  fclose(f);
  scr_kvtree* user = scr_kvtree_new();
  setenv("SCR_CONF_FILE", path, 1);
  is_int(scr_param_read_files(user, NULL, err, sizeof(err)), SCR_SUCCESS, "SCR_CONF_FILE is read");
  is_str(scr_kvtree_elem_key(scr_kvtree_first(scr_kvtree_get(user, "SCR_FLUSH"))), "12", "its values land in the user tree");
  scr_kvtree_delete(&user);

  snprintf(path, sizeof(path), "%s/none.conf", dir);
  setenv("SCR_CONF_FILE", path, 1);
  user = scr_kvtree_new();
  is_int(scr_param_read_files(user, NULL, err, sizeof(err)), SCR_ERR_CONFIG, "a missing SCR_CONF_FILE is an error");
  ok(strstr(err, "SCR_CONF_FILE names") && strstr(err, "which does not exist"), "the message says which file is missing");
  unsetenv("SCR_CONF_FILE");
  scr_kvtree_delete(&user);

  snprintf(path, sizeof(path), "%s/.scrconf", dir);
  f = fopen(path, "w");
  fputs("SCR_CACHE_SIZE=4\n", f);
  fclose(f);
  scr_param_app_set("SCR_PREFIX=");
  char prefix[600];
  snprintf(prefix, sizeof(prefix), "SCR_PREFIX=%s", dir);
  scr_param_app_set(prefix);
  user = scr_kvtree_new();
  is_int(scr_param_read_files(user, NULL, err, sizeof(err)), SCR_SUCCESS, "the prefix .scrconf is read");
  ok(scr_kvtree_get_kv(user, "SCR_CACHE_SIZE", "4") != NULL, "SCR_PREFIX from SCR_Config locates .scrconf");
  scr_kvtree_delete(&user);

  scr_param_app_set("SCR_PREFIX=");
  scr_kvtree* sys = scr_kvtree_new();
  scr_kvtree_set_kv(sys, "SCR_PREFIX", dir);
  user = scr_kvtree_new();
  is_int(scr_param_read_files(user, sys, err, sizeof(err)), SCR_SUCCESS, "files are read with a system SCR_PREFIX");
  ok(scr_kvtree_get_kv(user, "SCR_CACHE_SIZE", "4") != NULL, "SCR_PREFIX from the system file locates .scrconf");
  scr_kvtree_delete(&user);
  scr_kvtree_delete(&sys);
  unlink(path);
  snprintf(path, sizeof(path), "%s/my.conf", dir);
  unlink(path);
  scr_param_finalize();
}

static void test_table(void)
{
  static const char* const effective[] = {
    "SCR_ENABLE", "SCR_DEBUG", "SCR_PREFIX", "SCR_CNTL_BASE", "SCR_CACHE_BASE", "SCR_CACHE_SIZE",
    "SCR_CACHE_BYPASS", "SCR_COPY_TYPE", "SCR_SET_SIZE", "SCR_SET_FAILURES", "SCR_GROUP",
    "SCR_HOP_DISTANCE", "SCR_FLUSH", "SCR_FLUSH_ASYNC", "SCR_FLUSH_ASYNC_BW", "SCR_FLUSH_ASYNC_PERCENT",
    "SCR_FLUSH_ON_RESTART", "SCR_FLUSH_REDUNDANCY", "SCR_SCAVENGE_REDUNDANCY", "SCR_FETCH", "SCR_CRC_ON_FLUSH", "SCR_CRC_ON_COPY", "SCR_CRC_ON_DELETE",
    "SCR_CHECKPOINT_INTERVAL", "SCR_CHECKPOINT_SECONDS", "SCR_CHECKPOINT_OVERHEAD", "SCR_MTBF", "SCR_HALT_SECONDS",
    "SCR_HALT_EXIT", "SCR_HALT_ENABLED", "SCR_LOG_ENABLE", "SCR_LOG_TXT_ENABLE", "SCR_LOG_SYSLOG_ENABLE",
    "SCR_JOB_NAME", "SCR_JOB_ID", "SCR_USER", "SCR_CONF_FILE", "SCR_CURRENT", "SCR_FILE_BUF_SIZE",
    "SCR_MPI_BUF_SIZE", "SCR_PRELOAD_DRYRUN", "SCR_RUNS", "SCR_MIN_NODES", "SCR_EXCLUDE_NODES", NULL
  };
  int missing = 0;
  for (int i = 0; effective[i]; i++) {
    const scr_param_def* def = scr_param_table_find(effective[i]);
    if (!def || !def->effective) {
      printf("# %s missing or not effective\n", effective[i]);
      missing++;
    }
  }
  is_int(missing, 0, "every parameter this implementation honours is marked effective");

  int bad = 0;
  for (int i = 0; i < scr_param_count(); i++) {
    const scr_param_def* def = scr_param_at(i);
    char why[512];
    if (!def->name || !def->description || !*def->description) bad++;
    if (def->default_value && scr_param_check_value(def->type, def->choices, def->min, def->max,
                                                    def->default_value, NULL, why, sizeof(why)) != SCR_SUCCESS) {
      printf("# default of %s: %s\n", def->name, why);
      bad++;
    }
    if (def->type == SCR_PARAM_DESCRIPTOR && !def->attrs && !def->free_attrs) bad++;
    if (def->type == SCR_PARAM_ENUM && !def->choices) bad++;
  }
  is_int(bad, 0, "every table entry has a description and a default of its own type");
  ok(scr_param_at(scr_param_count()) == NULL, "the accessor stops at the end of the table");
  is_str(scr_param_table_find("SCR_CACHE_BYPASS")->default_value, "0", "cache bypass is off by default here");
  is_str(scr_param_table_find("SCR_CNTL_BASE")->default_value, "/dev/shm", "control base default");
}

static void test_man_page(void)
{
  const char* top = getenv("top_srcdir");
  char path[1024];
  snprintf(path, sizeof(path), "%s/man/scrconf.5", top ? top : ".");
  FILE* f = fopen(path, "r");
  ok(f != NULL, "scrconf(5) is found at %s", path);
  static char text[200000];
  size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
  text[n] = '\0';
  if (f) fclose(f);
  int missing = 0;
  for (int i = 0; i < scr_param_count(); i++) {
    char marker[128];
    snprintf(marker, sizeof(marker), ".B %s\n", scr_param_at(i)->name);
    if (!strstr(text, marker)) {
      printf("# %s is not described in scrconf(5)\n", scr_param_at(i)->name);
      missing++;
    }
  }
  is_int(missing, 0, "scrconf(5) describes every parameter of the table");
}

int main(void)
{
  if (!mkdtemp(dir)) {
    printf("Bail out! cannot create a scratch directory\n");
    return 1;
  }
  clear_scr_environment();
  test_precedence();
  test_typed();
  test_alias();
  test_app_layer();
  test_descriptors();
  test_report_ineffective();
  test_check_environment();
  test_read_files();
  test_table();
  test_man_page();
  rmdir(dir);
  return tap_done();
}
