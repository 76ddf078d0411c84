/* scr_log_recovery.h - the phases of each recovery of a job, from its event log
 * (scr_run's lines and the library's): died, detected, relaunched, restored, resumed. */
#ifndef SCR_LOG_RECOVERY_H
#define SCR_LOG_RECOVERY_H

#include <stdio.h>
#include "scr_log_events.h"

enum scr_recovery_outcome { SCR_RECOVERY_RELAUNCHED, SCR_RECOVERY_SCAVENGED, SCR_RECOVERY_ENDED };

/* one failure; a time is NAN when the log does not tell it */
struct scr_recovery {
  int launch;             /* the launch that failed (scr_run's count), -1: not known */
  int relaunch;           /* the launch after it, -1: none or not known */
  double died;            /* the node's loss, the start of a hang, else the end seen */
  int died_known;         /* 0: died is only when the end was seen */
  double detected;        /* scr_run saw the launch end */
  double relaunched;      /* the next launch began */
  double restored;        /* SCR_Init had restored a checkpoint (RESTORED) */
  double resumed;         /* the program was past its restart (RESUMED) */
  int dataset;            /* the checkpoint restored, -1: none */
  enum scr_recovery_outcome outcome;
  char cause[128];        /* node1 lost, hung (watchdog), status 9 ... */
  char source[32];        /* rebuilt, fetched, from cache */
  char after[32];         /* what showed that the program resumed */
};

/* the failures the events tell, in order, into *out (malloc'd; NULL when
 * none); their number */
size_t scr_recovery_find(const struct scr_log_event* events, size_t n, struct scr_recovery** out);

/* one line per failure with the length of each phase, on out; t0 is the
 * job's first time, "died" counts from it */
void scr_recovery_print(FILE* out, const struct scr_recovery* failures, size_t n, double t0);

#endif
