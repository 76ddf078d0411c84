/* scr_restart.h - choose the dataset a run restarts from: the cache first,
 * then the prefix directory. */
#ifndef SCR_RESTART_H
#define SCR_RESTART_H

/* collective; sets scr.restart_id/restart_name (-1/NULL when there is nothing).
 * below (-1: no bound) excludes a dataset that failed and everything newer. */
int scr_restart_select(int below);

/* collective; records the dataset ids found in cache and index so new ids count up */
void scr_restart_init_counters(void);

#endif
