/* scr_preload_state.c - loads the PRELOAD rules from the configuration and
 * publishes them to the wrappers, which read them without taking a lock. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_param.h"
#include "scr_path.h"
#include "scr_preload_real.h"
#include "scr_preload_state.h"

scr_preload_ruleset* scr_preload_state_ruleset = NULL;

/* SCR_PRELOAD_DRYRUN=1: report matches, route nothing */
static int state_dryrun = 0;

void scr_preload_state_install(scr_preload_ruleset* rules)
{
  if (rules && scr_preload_rules_count(rules) == 0) scr_preload_rules_free(&rules);
  __atomic_store_n(&scr_preload_state_ruleset, rules, __ATOMIC_RELEASE);
}

/* the compiled rules of the configuration just read into the param module */
static int state_compile(scr_preload_ruleset** rules, char* errbuf, size_t errlen)
{
  const char* prefix = scr_param_get("SCR_PREFIX");
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

int scr_preload_state_load(char* errbuf, size_t errlen)
{
  /* the configuration files are read through our own wrappers */
  scr_preload_real_enter();
  scr_kvtree* user = scr_kvtree_new();
  scr_kvtree* system = scr_kvtree_new();
  scr_preload_ruleset* rules = NULL;
  int rc = user && system ? SCR_SUCCESS : SCR_ERR_NOMEM;
  if (rc == SCR_SUCCESS) rc = scr_param_read_files(user, system, errbuf, errlen);
  if (rc == SCR_SUCCESS) rc = scr_param_init(user, scr_param_app_tree(), system);
  if (rc == SCR_SUCCESS) rc = scr_param_check_environment(errbuf, errlen);
  if (rc == SCR_SUCCESS) rc = state_compile(&rules, errbuf, errlen);
  if (rc == SCR_SUCCESS) {
    long long level = 0;
    int enabled = 1;
    if (scr_param_get_int("SCR_DEBUG", &level) == SCR_SUCCESS) scr_log_debug_level = (int) level;
    if (scr_param_get_bool("SCR_PRELOAD_DRYRUN", &state_dryrun) != SCR_SUCCESS) state_dryrun = 0;
    /* SCR_ENABLE=0: the files go where the application writes them */
    if (scr_param_get_bool("SCR_ENABLE", &enabled) == SCR_SUCCESS && !enabled) scr_preload_rules_free(&rules);
    scr_preload_state_install(rules);
  }
  scr_kvtree_delete(&user);
  scr_kvtree_delete(&system);
  scr_preload_real_leave();
  return rc;
}

void scr_preload_state_report(const scr_preload_ruleset* rules, const char* call, const char* path,
                              const scr_preload_match* match)
{
  if (!state_dryrun && scr_log_debug_level < 2) return;
  const scr_preload_rule* rule = scr_preload_rules_at(rules, match->rule);
  if (!rule) return;
  scr_preload_real_enter();
  char captured[64] = "";
  if (match->step >= 0 && match->rank >= 0)
    snprintf(captured, sizeof(captured), " (step %lld, rank %lld)", match->step, match->rank);
  else if (match->step >= 0)
    snprintf(captured, sizeof(captured), " (step %lld)", match->step);
  else if (match->rank >= 0)
    snprintf(captured, sizeof(captured), " (rank %lld)", match->rank);
  scr_info("%s%s %s matches PRELOAD=%s%s%s%s", state_dryrun ? "dry run: " : "", call, path,
           rule->pattern, captured, rule->origin ? " at " : "", rule->origin ? rule->origin : "");
  scr_preload_real_leave();
}
