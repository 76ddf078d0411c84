/* scr_event_log.c - append-only text log and syslog of checkpoint events.
 * Appending with O_APPEND keeps lines whole when several jobs share a prefix;
 * scr_log(1) reads the text log back to draw the job's timeline. */
#include "config.h"
#include <fcntl.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_param.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_globals.h"
#include "scr_event_log.h"

static int scr_event_log_txt = 0;
static int scr_event_log_syslog = 0;

void scr_event_log_init(void)
{
  /* on by default: one short append per event on rank 0 is cheap next to
   * the checkpoint it describes (t/perf/event-log.sh), and the timeline
   * needs the log of every run, the failed ones most of all */
  int enable = 1, txt = 1, sys = 0;
  scr_param_get_bool("SCR_LOG_ENABLE", &enable);
  scr_param_get_bool("SCR_LOG_TXT_ENABLE", &txt);
  scr_param_get_bool("SCR_LOG_SYSLOG_ENABLE", &sys);
  scr_event_log_txt = scr.rank == 0 && enable && txt;
  scr_event_log_syslog = scr.rank == 0 && enable && sys;
}

/* the line of event at when (seconds since the epoch) */
static void scr_event_log_line(double when, const char* event, const char* fmt, va_list ap)
{
  char details[768] = "";
  vsnprintf(details, sizeof(details), fmt, ap);

  if (scr_event_log_syslog)
    syslog(LOG_INFO, "scr job=%s user=%s event=%s %s", scr.job_id, scr.user, event, details);
  if (scr_event_log_txt) {
    char stamp[32], line[1024];
    long long ms = (long long) (when * 1000.0 + 0.5);
    time_t seconds = (time_t) (ms / 1000);
    struct tm tm;
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", localtime_r(&seconds, &tm));
    /* time= in seconds since the epoch to the millisecond: spans of a
     * timeline are often shorter than the second of the readable stamp */
    int n = snprintf(line, sizeof(line), "%s job=%s event=%s time=%lld.%03lld %s\n", stamp, scr.job_id,
                     event, ms / 1000, ms % 1000, details);
    char* path = scr_path_join(scr.prefix_scr, "log");
    /* the program's mode (0666 less the umask); never through a link, nor
     * into a log another user planted */
    int fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0666) : -1;
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_uid != geteuid())) {
      close(fd);
      fd = -1;
      scr_io_check_name(path, 0);
    } else if (fd < 0 && path && errno == ELOOP) {
      scr_io_check_name(path, 0);
    }
    if (fd >= 0) {
      ssize_t w = write(fd, line, n > 0 && (size_t) n < sizeof(line) ? (size_t) n : strlen(line));
      (void) w;
      close(fd);
    }
    free(path);
  }
}

void scr_event_log(const char* event, const char* fmt, ...)
{
  if (!scr_event_log_txt && !scr_event_log_syslog) return;
  va_list ap;
  va_start(ap, fmt);
  scr_event_log_line(scr_log_seconds(), event, fmt, ap);
  va_end(ap);
}

void scr_event_log_at(double when, const char* event, const char* fmt, ...)
{
  if (!scr_event_log_txt && !scr_event_log_syslog) return;
  va_list ap;
  va_start(ap, fmt);
  scr_event_log_line(when > 0 ? when : scr_log_seconds(), event, fmt, ap);
  va_end(ap);
}
