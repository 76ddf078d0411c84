/* scr_event_log.h - the job's event log (SCR_LOG_ENABLE): one line per event in
 * <prefix>/.scr/log (SCR_LOG_TXT_ENABLE) and/or syslog (SCR_LOG_SYSLOG_ENABLE). */
#ifndef SCR_EVENT_LOG_H
#define SCR_EVENT_LOG_H

/* read the switches; rank 0 only logs */
void scr_event_log_init(void);

/* "EVENT key=value ..." with the job id and a timestamp added; no-op when disabled */
void scr_event_log(const char* event, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* the same for an event that happened at when (seconds since the epoch, as
 * scr_log_seconds gives them), logged later: its line carries that time */
void scr_event_log_at(double when, const char* event, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
