/* scr_cache_restart.h - what a new run finds in cache: agree across ranks on the
 * newest dataset every rank holds intact, and drop the ones that are not. */
#ifndef SCR_CACHE_RESTART_H
#define SCR_CACHE_RESTART_H

/* collective: newest checkpoint dataset with id < below (-1: no bound) complete on
 * every rank; incomplete datasets met on the way are deleted (one line each).
 * *id = -1 when none. */
int scr_cache_select_restart(int below, int* id);

#endif
