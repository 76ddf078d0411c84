/* scr_restart.h - choose the dataset a run restarts from: the cache first,
 * then the prefix directory. */
#ifndef SCR_RESTART_H
#define SCR_RESTART_H

/* collective; sets scr.restart_id/restart_name (-1/NULL when there is nothing).
 * below (-1: no bound) excludes a dataset that failed and everything newer. */
int scr_restart_select(int below);

/* collective: restart from the complete checkpoint called name, from cache or
 * else fetched; deletes what is cached after it and marks it current in the
 * index. Logs why and leaves the restart unchanged when there is none. */
int scr_restart_select_named(const char* name);

/* collective: every other dataset the cache holds is made whole on every
 * rank, rebuilt where its redundancy allows, or deleted from cache on every
 * rank; after a lost node no rank keeps its part of a dataset the others lack */
void scr_restart_settle_cached(void);

/* collective; records the dataset ids found in cache and index so new ids count up */
void scr_restart_init_counters(void);

#endif
