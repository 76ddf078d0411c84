/* scr_log.c - one message format for the library and the commands.
 * Each message is written with a single write(2) so lines of ranks do not interleave. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <sys/time.h>
#include "scr_log.h"

int scr_log_rank = -1;
int scr_log_debug_level = 0;
const char* scr_log_program = NULL;

static void scr_log_emit(const char* tag, const char* fmt, va_list ap)
{
  int saved_errno = errno;
  char line[4096];
  size_t n = 0;

  if (scr_log_program) {
    n = (size_t) snprintf(line, sizeof(line), "%s: %s", scr_log_program, tag);
  } else if (scr_log_rank >= 0) {
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    n = (size_t) snprintf(line, sizeof(line), "SCR %srank %d on %s: ", tag, scr_log_rank, host);
  } else {
    n = (size_t) snprintf(line, sizeof(line), "SCR %s", tag);
  }
  if (n < sizeof(line)) {
    int m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
    if (m > 0) n += (size_t) m;
  }
  if (n > sizeof(line) - 2) n = sizeof(line) - 2;
  line[n++] = '\n';
  ssize_t w = write(STDERR_FILENO, line, n);
  (void) w;
  errno = saved_errno;
}

void scr_err(const char* fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  scr_log_emit("ERROR: ", fmt, ap);
  va_end(ap);
}

void scr_warn(const char* fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  scr_log_emit("WARNING: ", fmt, ap);
  va_end(ap);
}

void scr_dbg(int level, const char* fmt, ...)
{
  if (level > scr_log_debug_level) return;
  va_list ap;
  va_start(ap, fmt);
  scr_log_emit("", fmt, ap);
  va_end(ap);
}

void scr_info(const char* fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  scr_log_emit("", fmt, ap);
  va_end(ap);
}

double scr_log_seconds(void)
{
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double) tv.tv_sec + (double) tv.tv_usec / 1e6;
}
