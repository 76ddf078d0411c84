/* scr_preload_state.h - what the wrappers consult on every call: the rule set
 * in force (none outside an MPI job) and how to report a match. */
#ifndef SCR_PRELOAD_STATE_H
#define SCR_PRELOAD_STATE_H

#include <stddef.h>
#include "scr_preload_rules.h"

/* the rule set in force, NULL when no rule is loaded: then every wrapper
 * passes its call straight to libc */
extern scr_preload_ruleset* scr_preload_state_ruleset;
static inline const scr_preload_ruleset* scr_preload_state_rules(void)
{
  return __atomic_load_n(&scr_preload_state_ruleset, __ATOMIC_ACQUIRE);
}

/* make rules (ownership taken; NULL or an empty set to route nothing) the set
 * in force. The previous set is kept allocated, as another thread may still
 * be matching against it. */
void scr_preload_state_install(scr_preload_ruleset* rules);

/* read the configuration as SCR_Init does (environment, $SCR_CONF_FILE or
 * $SCR_PREFIX/.scrconf, system file), compile the PRELOAD rules against
 * SCR_PREFIX (default: the current directory) and install them (none with
 * SCR_ENABLE=0); also reads SCR_PRELOAD_DRYRUN and SCR_DEBUG. On a bad
 * configuration returns its SCR_ERR_*
 * code with the one-line message in errbuf and leaves the rules unchanged. */
int scr_preload_state_load(char* errbuf, size_t errlen);

/* an open of the absolute path matched a rule of rules: with
 * SCR_PRELOAD_DRYRUN=1 (or at SCR_DEBUG 2 and above) say which rule and what
 * it captured. Keeps errno. */
void scr_preload_state_report(const scr_preload_ruleset* rules, const char* call, const char* path,
                              const scr_preload_match* match);

#endif
