/* scr_param.c - the scr_param command: prints configuration values as the library
 * resolves them (environment, .scrconf, system file, default), for scripts such as scr_run. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_kvtree.h"
#include "scr_env.h"
#include "scr_path.h"
#include "scr_param.h"

/* exit codes: 1 when a value is invalid (the message names where it was set), 2 on usage */
enum { SCR_PARAM_EXIT_INVALID = 1, SCR_PARAM_EXIT_USAGE = 2 };

static void scr_param_usage(FILE* out)
{
  fprintf(out,
    "Usage: scr_param [--origin] KEY...\n"
    "       scr_param --job-id\n"
    "Print the value of each configuration parameter KEY on a line of its own,\n"
    "as an SCR job started here would see it: the environment, then the user's\n"
    "configuration file ($SCR_CONF_FILE, $SCR_PREFIX/.scrconf or ./.scrconf),\n"
    "then the system file, then the default. An unset KEY prints an empty line.\n"
    "Integers and booleans are checked and printed in plain form (booleans as 0\n"
    "or 1).\n"
    "\n"
    "  -o, --origin   print \"VALUE<TAB>ORIGIN\" (such as ./.scrconf:3)\n"
    "  -j, --job-id   print the job id a job started here logs and caches under:\n"
    "                 SCR_JOB_ID, else the resource manager's job id, else one\n"
    "                 derived from the prefix directory (a second job running in\n"
    "                 the same prefix directory at the same time adds .1)\n"
    "  -h, --help     print this help\n"
    "\n"
    "Exit status: 0, 1 when a value is invalid or a file cannot be read,\n"
    "2 on a usage error or an unknown KEY.\n");
}

/* one KEY's line; SCR_ERR_CONFIG when its value is invalid (already reported) */
static int scr_param_print(const scr_param_def* def, int with_origin)
{
  const char* text = scr_param_get(def->name);
  char number[32];
  if (text && def->type == SCR_PARAM_INT) {
    long long value;
    /* parsed and range-checked as the library does, with its message */
    if (scr_param_get_int(def->name, &value) != SCR_SUCCESS) return SCR_ERR_CONFIG;
    snprintf(number, sizeof(number), "%lld", value);
    text = number;
  } else if (text && def->type == SCR_PARAM_BOOL) {
    int value;
    if (scr_param_get_bool(def->name, &value) != SCR_SUCCESS) return SCR_ERR_CONFIG;
    text = value ? "1" : "0";
  }
  if (with_origin) printf("%s\t%s\n", text ? text : "", text ? scr_param_origin(def->name) : "");
  else printf("%s\n", text ? text : "");
  return SCR_SUCCESS;
}

/* the job id as SCR_Init chooses it (scr_setup_params), before the suffix a
 * job takes when another runs in its prefix directory */
static int scr_param_print_job_id(void)
{
  const char* given = scr_param_get("SCR_JOB_ID");
  char* id = given && *given ? strdup(given) : scr_env_job_id();
  if (!id) {
    const char* prefix = scr_param_get("SCR_PREFIX");
    char* absolute = scr_path_absolute(prefix && *prefix ? prefix : ".");
    id = absolute ? scr_env_default_job_id(absolute) : NULL;
    free(absolute);
  }
  if (!id) {
    scr_err("out of memory");
    return SCR_ERR_NOMEM;
  }
  printf("%s\n", id);
  free(id);
  return SCR_SUCCESS;
}

int main(int argc, char** argv)
{
  int with_origin = 0, job_id = 0, first = 1;
  scr_log_program = "scr_param";
  for (; first < argc && argv[first][0] == '-'; first++) {
    const char* o = argv[first];
    if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
      scr_param_usage(stdout);
      return 0;
    }
    if (!strcmp(o, "-o") || !strcmp(o, "--origin")) with_origin = 1;
    else if (!strcmp(o, "-j") || !strcmp(o, "--job-id")) job_id = 1;
    else if (!strcmp(o, "--")) { first++; break; }
    else {
      scr_err("unknown option '%s': see scr_param --help", o);
      return SCR_PARAM_EXIT_USAGE;
    }
  }
  if (job_id && first != argc) {
    scr_err("--job-id takes no KEY: see scr_param --help");
    return SCR_PARAM_EXIT_USAGE;
  }
  if (first == argc && !job_id) {
    scr_err("no KEY given: see scr_param --help");
    return SCR_PARAM_EXIT_USAGE;
  }
  for (int i = first; i < argc; i++) {
    const scr_param_def* def = scr_param_table_find(argv[i]);
    if (!def || def->type == SCR_PARAM_DESCRIPTOR) {
      scr_err("%s: %s (see scrconf(5))", argv[i], def ? "a descriptor, which has no single value"
                                                      : "no such parameter");
      return SCR_PARAM_EXIT_USAGE;
    }
  }

  char error[1024] = "";
  scr_kvtree* user = scr_kvtree_new();
  scr_kvtree* system = scr_kvtree_new();
  int rc = scr_param_read_files(user, system, error, sizeof(error));
  if (rc == SCR_SUCCESS) rc = scr_param_init(user, NULL, system);
  scr_kvtree_delete(&user);
  scr_kvtree_delete(&system);
  if (rc != SCR_SUCCESS) {
    scr_err("%s", error[0] ? error : "cannot read the configuration");
    return SCR_PARAM_EXIT_INVALID;
  }
  if (job_id) rc = scr_param_print_job_id();
  for (int i = first; i < argc && rc == SCR_SUCCESS; i++)
    rc = scr_param_print(scr_param_table_find(argv[i]), with_origin);
  scr_param_finalize();
  return rc == SCR_SUCCESS ? 0 : SCR_PARAM_EXIT_INVALID;
}
