/* scr_preload_state.h - what the wrappers consult on every call: the rule set
 * in force (none outside an MPI job) and how to report a match. */
#ifndef SCR_PRELOAD_STATE_H
#define SCR_PRELOAD_STATE_H

#include <stddef.h>
#include <sys/types.h>
#include "scr_preload_hot.h"
#include "scr_preload_rules.h"

/* the rule set in force, NULL when no rule is loaded: then every wrapper
 * passes its call straight to libc */
static inline const scr_preload_ruleset* scr_preload_state_rules(void)
{
  return __atomic_load_n(&scr_preload_hot.ruleset, __ATOMIC_ACQUIRE);
}

/* the same for tests and tools, which look it up with dlsym (the variable
 * itself is hidden, so that the wrappers reach it without the GOT) */
SCR_PRELOAD_API const scr_preload_ruleset* scr_preload_state_current(void);

/* make rules (ownership taken; NULL or an empty set to route nothing) the set
 * in force. The previous set is kept allocated, as another thread may still
 * be matching against it. The first non-empty set activates the layer: the
 * descriptor table is sized and the fatal-signal handlers are installed. */
SCR_PRELOAD_API void scr_preload_state_install(scr_preload_ruleset* rules);

/* read the configuration as SCR_Init does (environment, $SCR_CONF_FILE or
 * $SCR_PREFIX/.scrconf, system file), compile the PRELOAD rules against
 * SCR_PREFIX (default: the current directory) and install them (none with
 * SCR_ENABLE=0); also reads SCR_PRELOAD_DRYRUN and SCR_DEBUG. On a bad
 * configuration returns its SCR_ERR_*
 * code with the one-line message in errbuf and leaves the rules unchanged. */
SCR_PRELOAD_API int scr_preload_state_load(char* errbuf, size_t errlen);

/* in a child process of a rank (scr_preload_child.c): the rules the parent
 * loaded, read again from user_file (absolute, "" for none) and the system
 * file and compiled against prefix, installed without the fatal-signal
 * handlers; otherwise as scr_preload_state_load */
int scr_preload_state_load_child(const char* user_file, const char* prefix, char* errbuf, size_t errlen);

/* the user configuration file the rules in force were read from (absolute),
 * "" when there was none */
const char* scr_preload_state_user_file(void);

/* in a child made by fork (its handler, one thread): the rule set in force
 * is this process's now, with a descriptor table of its own */
void scr_preload_state_adopt(void);

/* the process that installed the rule set (a vfork child shares it) */
extern pid_t scr_preload_state_owner;

/* SCR_PRELOAD_DRYRUN=1 was in force when the rules were loaded: report
 * matches, call no hook */
extern int scr_preload_state_dryrun_flag;
static inline int scr_preload_state_dryrun(void)
{
  return __atomic_load_n(&scr_preload_state_dryrun_flag, __ATOMIC_RELAXED);
}

#endif
