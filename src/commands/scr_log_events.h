/* scr_log_events.h - scr_log(1) reads the event log <prefix>/.scr/log: the events of
 * one job, in the order of the file, with their key=value words. */
#ifndef SCR_LOG_EVENTS_H
#define SCR_LOG_EVENTS_H

#include <stdio.h>

struct scr_log_event {
  char name[32];
  double time;
  char* words;    /* "key=value ..." after the event's name, for scr_log_get */
};

/* value of key in the event's words, copied into buf; NULL when missing */
const char* scr_log_get(const struct scr_log_event* e, const char* key, char* buf, size_t len);
double scr_log_get_double(const struct scr_log_event* e, const char* key, double fallback);
int scr_log_get_int(const struct scr_log_event* e, const char* key, int fallback);

/* the events of job (NULL: the job of the last INIT, else of the last line),
 * in the order of the file; *job_out gets the job shown (malloc'd) */
struct scr_log_event* scr_log_read(FILE* f, const char* job, size_t* count, char** job_out);

/* 1 for an event scr_run(1) logs (a launch, its end, a node found down, the
 * scavenge), 0 for the library's */
int scr_log_is_launcher_event(const struct scr_log_event* e);

#endif
