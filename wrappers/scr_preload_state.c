/* scr_preload_state.c - loads the PRELOAD rules from the configuration and
 * publishes them to the wrappers, which read them without taking a lock. */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_config.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_param.h"
#include "scr_path.h"
#include "scr_preload_fd.h"
#include "scr_preload_real.h"
#include "scr_preload_signal.h"
#include "scr_preload_state.h"

int scr_preload_state_dryrun_flag = 0;
pid_t scr_preload_state_owner = 0;

const scr_preload_ruleset* scr_preload_state_current(void)
{
  return scr_preload_state_rules();
}

/* Rule sets that were replaced. The wrappers read the rule set without a
 * lock, so another thread may still be inside a lookup on the old one: it
 * is never freed. It stays reachable here (a process loads rules once, at
 * MPI_Init), where a leak checker sees it is kept on purpose. */
static scr_preload_ruleset* state_retired[4];

/* the first non-empty set activates the layer; a rank's process also gets
 * the fatal-signal handlers (`signals`), a child process of one does not:
 * a tool the program runs (gzip, a shell) dies as it would without us */
static void state_install(scr_preload_ruleset* rules, int signals)
{
  if (rules && scr_preload_rules_count(rules) == 0) scr_preload_rules_free(&rules);
  if (rules) {
    /* before the rules are visible: a matching open may follow at once */
    scr_preload_state_owner = getpid();
    scr_preload_fd_init();
    if (signals) scr_preload_signal_install();
    scr_preload_hot.screen = scr_preload_screen_best();
  }
  scr_preload_ruleset* old = __atomic_exchange_n(&scr_preload_hot.ruleset, rules, __ATOMIC_ACQ_REL);
  for (size_t i = 0; old && i < sizeof(state_retired) / sizeof(state_retired[0]); i++)
    if (!state_retired[i]) {
      state_retired[i] = old;
      break;
    }
}

void scr_preload_state_install(scr_preload_ruleset* rules)
{
  state_install(rules, 1);
}

void scr_preload_state_adopt(void)
{
  scr_preload_state_owner = getpid();
  scr_preload_fd_init();
}

/* the rank the launcher gave this process, for messages before MPI_Init
 * says (a dry run of an MPI job prints it on every line) */
static void state_rank_from_environment(void)
{
  static const char* const names[] = { "PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK",
                                       "SLURM_PROCID", "FLUX_TASK_RANK", "PALS_RANKID", NULL };
  if (scr_log_rank >= 0) return;
  for (int i = 0; names[i]; i++) {
    const char* value = getenv(names[i]);
    char* end = NULL;
    long rank = value && *value ? strtol(value, &end, 10) : -1;
    if (rank >= 0 && rank <= 0x7fffffff && end && *end == '\0') {
      scr_log_rank = (int) rank;
      return;
    }
  }
}

/* the compiled rules of the configuration just read into the param module,
 * against prefix, or when that is NULL against SCR_PREFIX (default: the
 * current directory) */
static int state_compile(const char* prefix, scr_preload_ruleset** rules, char* errbuf, size_t errlen)
{
  if (!prefix) prefix = scr_param_get("SCR_PREFIX");
  char* absolute = prefix ? scr_path_absolute(prefix) : getcwd(NULL, 0);
  if (!absolute) {
    snprintf(errbuf, errlen, "cannot find the prefix directory%s%s: %s",
             prefix ? " " : "", prefix ? prefix : "", strerror(errno));
    return SCR_ERR_IO;
  }
  int rc = scr_preload_rules_compile(scr_param_get_descriptors("PRELOAD"), absolute, rules, errbuf, errlen);
  free(absolute);
  return rc;
}

/* the user configuration file the rules in force came from (absolute; ""
 * for none), which a child process reads again (scr_preload_child.c) */
static char state_user_file[PATH_MAX] = "";

const char* scr_preload_state_user_file(void)
{
  return state_user_file;
}

/* the parameters and rules of user and system (parsed files), against
 * prefix (NULL: SCR_PREFIX), installed; `signals` as for state_install */
static int state_apply(scr_kvtree* user, scr_kvtree* system, const char* prefix, int signals, char* errbuf,
                       size_t errlen)
{
  scr_preload_ruleset* rules = NULL;
  int rc = scr_param_init(user, scr_param_app_tree(), system);
  if (rc == SCR_SUCCESS) rc = scr_param_check_environment(errbuf, errlen);
  if (rc == SCR_SUCCESS) rc = state_compile(prefix, &rules, errbuf, errlen);
  if (rc == SCR_SUCCESS) {
    long long level = 0;
    int enabled = 1;
    if (scr_param_get_int("SCR_DEBUG", &level) == SCR_SUCCESS) scr_log_debug_level = (int) level;
    int dryrun = 0;
    if (scr_param_get_bool("SCR_PRELOAD_DRYRUN", &dryrun) != SCR_SUCCESS) dryrun = 0;
    __atomic_store_n(&scr_preload_state_dryrun_flag, dryrun, __ATOMIC_RELAXED);
    state_rank_from_environment();
    /* SCR_ENABLE=0: the files go where the application writes them */
    if (scr_param_get_bool("SCR_ENABLE", &enabled) == SCR_SUCCESS && !enabled) scr_preload_rules_free(&rules);
    state_install(rules, signals);
  }
  return rc;
}

int scr_preload_state_load(char* errbuf, size_t errlen)
{
  /* the configuration files are read through our own wrappers */
  scr_preload_real_enter();
  scr_kvtree* user = scr_kvtree_new();
  scr_kvtree* system = scr_kvtree_new();
  int rc = user && system ? SCR_SUCCESS : SCR_ERR_NOMEM;
  if (rc == SCR_SUCCESS) rc = scr_param_read_files(user, system, errbuf, errlen);
  if (rc == SCR_SUCCESS) {
    const char* file = scr_param_user_file();
    char* absolute = file ? scr_path_absolute(file) : NULL;
    snprintf(state_user_file, sizeof(state_user_file), "%s", absolute ? absolute : "");
    free(absolute);
    rc = state_apply(user, system, NULL, 1, errbuf, errlen);
  }
  scr_kvtree_delete(&user);
  scr_kvtree_delete(&system);
  scr_preload_real_leave();
  return rc;
}

int scr_preload_state_load_child(const char* user_file, const char* prefix, char* errbuf, size_t errlen)
{
  scr_preload_real_enter();
  scr_kvtree* user = scr_kvtree_new();
  scr_kvtree* system = scr_kvtree_new();
  int rc = user && system ? SCR_SUCCESS : SCR_ERR_NOMEM;
  /* the files the parent read, wherever this process runs now (a shell's
   * child after a cd): the system file, and the very user file, if any */
  if (rc == SCR_SUCCESS) rc = scr_config_read_file(SCR_CONFIG_FILE, system, errbuf, errlen);
  if (rc == SCR_ERR_NOENT) rc = SCR_SUCCESS;
  if (rc == SCR_SUCCESS && user_file[0]) rc = scr_config_read_file(user_file, user, errbuf, errlen);
  if (rc == SCR_ERR_NOENT) rc = SCR_SUCCESS;
  if (rc == SCR_SUCCESS) {
    snprintf(state_user_file, sizeof(state_user_file), "%s", user_file);
    rc = state_apply(user, system, prefix, 0, errbuf, errlen);
  }
  scr_kvtree_delete(&user);
  scr_kvtree_delete(&system);
  scr_preload_real_leave();
  return rc;
}
