/* scr_preload_hot.h - what every wrapped call reads before it knows whether
 * the call is ours, gathered in one cache line, and the screen it calls. */
#ifndef SCR_PRELOAD_HOT_H
#define SCR_PRELOAD_HOT_H

#include <stdint.h>
#include "scr_preload_rules.h"

/* scr_preload_lookup_screen (scr_preload_wrap.h) as built for one
 * instruction set: "baseline" (SSE2 on x86-64, a word at a time elsewhere)
 * or "avx2" (x86-64, chosen at run time) */
typedef int (*scr_preload_screen_function)(const scr_preload_ruleset* rules, const char* path);
int scr_preload_screen_baseline(const scr_preload_ruleset* rules, const char* path);

/* the implementation called name, or NULL when this build or this processor
 * lacks it */
scr_preload_screen_function scr_preload_screen_variant(const char* name);

/* the fastest implementation this processor runs */
scr_preload_screen_function scr_preload_screen_best(void);

/* for tests and benchmarks, after the rules are installed: screen with the
 * implementation called name; 0, or -1 when it is not there */
SCR_PRELOAD_API int scr_preload_screen_use(const char* name);

/* After a system call, every further cache line a wrapper touches costs it
 * a miss: what all of them read before they know whether a call is theirs
 * shares one line. Written only while no rule set is installed, or by its
 * installation (scr_preload_state_install), which publishes the rule set
 * last. */
typedef struct {
  /* the rule set in force, NULL when no rule is loaded: then every wrapper
   * passes its call straight to libc (scr_preload_state.h) */
  scr_preload_ruleset* ruleset;
  /* the screen for the rule set's paths: scr_preload_screen_baseline until
   * the installation picks scr_preload_screen_best */
  scr_preload_screen_function screen;
  /* the descriptor table (scr_preload_fd.h) */
  uint32_t* fd_marks;
  int fd_capacity;
  int fd_active;
  /* rule directories may exist only in the view (scr_preload_wrap.h) */
  int directories;
} __attribute__((aligned(64))) scr_preload_hot_state;

extern scr_preload_hot_state scr_preload_hot;

#endif
