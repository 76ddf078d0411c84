/* scr_preload_caller.h - CALLER= rules: whether a function whose name matches a
 * glob is on the calling thread's stack, found with libunwind and cached per address. */
#ifndef SCR_PRELOAD_CALLER_H
#define SCR_PRELOAD_CALLER_H

#include "scr_preload_rules.h"

/* 1 when some frame of the calling thread's stack, outside this library,
 * belongs to a function whose symbol name matches the CALLER= glob of rule
 * (fnmatch, no flags; names as in the symbol table, so C++ names are
 * mangled and Fortran ones carry their trailing underscore); 1 too when the
 * rule has no CALLER=. 0 when no frame matches or the stack cannot be
 * walked, so that an unsure case leaves the file where the application put
 * it. Keeps errno. */
int scr_preload_caller_on_stack(const scr_preload_ruleset* rules, int rule);

/* fork: hold the cache lock across fork, fresh lock in the child */
void scr_preload_caller_atfork_prepare(void);
void scr_preload_caller_atfork_parent(void);
void scr_preload_caller_atfork_child(void);

#endif
