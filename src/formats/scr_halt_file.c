/* scr_halt_file.c - read, update and evaluate the halt file (see scr_halt_file.h).
 * Updates take a lock because the library counts checkpoints down while a user
 * may be running scr_halt on the same file. */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_kvtree.h"
#include "scr_prefix_dir.h"
#include "scr_halt_file.h"

#define SCR_HALT_FILE_NAME "halt.scr"
#define SCR_HALT_LOCK_NAME "halt.scr.lock"

char* scr_halt_file_path(const char* prefix)
{
  return scr_prefix_dir_file(prefix, SCR_HALT_FILE_NAME);
}

int scr_halt_file_read(const char* prefix, scr_kvtree* halt)
{
  char* path = scr_halt_file_path(prefix);
  if (path == NULL) {
    scr_err("no prefix directory given for the halt file: set SCR_PREFIX");
    return SCR_ERR_INVALID;
  }
  int rc = scr_kvtree_read_file_if_exists(path, halt);
  free(path);
  return rc;
}

/* the write half of an update: an empty tree means no conditions, and no file */
static int scr_halt_file_store(const char* path, const scr_kvtree* halt)
{
  if (scr_kvtree_size(halt) > 0) return scr_kvtree_write_file_mode(path, halt, 1);
  if (unlink(path) != 0 && errno != ENOENT) {
    scr_err("cannot remove halt file %s: %s", path, strerror(errno));
    return SCR_ERR_IO;
  }
  return SCR_SUCCESS;
}

int scr_halt_file_update(const char* prefix, int (*modify)(scr_kvtree* halt, void* arg), void* arg)
{
  char* path = scr_halt_file_path(prefix);
  if (path == NULL) {
    scr_err("no prefix directory given for the halt file: set SCR_PREFIX");
    return SCR_ERR_INVALID;
  }

  int lock_fd = -1;
  int rc = scr_prefix_dir_lock(prefix, SCR_HALT_LOCK_NAME, &lock_fd);
  if (rc != SCR_SUCCESS) {
    free(path);
    return rc;
  }

  scr_kvtree* halt = scr_kvtree_new();
  rc = scr_kvtree_read_file_if_exists(path, halt);
  if (rc == SCR_SUCCESS) rc = modify(halt, arg);
  if (rc == SCR_SUCCESS) rc = scr_halt_file_store(path, halt);

  scr_kvtree_delete(&halt);
  scr_prefix_dir_unlock(lock_fd);
  free(path);
  return rc;
}

void scr_halt_file_format_time(time_t when, char* buf, size_t len)
{
  struct tm tm;
  if (len == 0) return;
  if (localtime_r(&when, &tm) == NULL || strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0) {
    snprintf(buf, len, "@%lld", (long long) when);
  }
}

int scr_halt_file_is_immediate(const scr_kvtree* halt)
{
  const char* reason = scr_kvtree_get_val(halt, SCR_HALT_KEY_EXIT_REASON);
  return reason != NULL && strcmp(reason, SCR_HALT_REASON_IMMEDIATE) == 0;
}

int scr_halt_file_check(const scr_kvtree* halt, time_t now, long long halt_seconds,
                        char* reason, size_t len)
{
  char when[64];
  long long value;

  /* with no room for the reason, write into a scratch buffer instead */
  char scratch[1];
  if (reason == NULL || len == 0) {
    reason = scratch;
    len = sizeof(scratch);
  }
  reason[0] = '\0';

  const char* exit_reason = scr_kvtree_get_val(halt, SCR_HALT_KEY_EXIT_REASON);
  if (exit_reason != NULL) {
    snprintf(reason, len, "halt requested: %s", exit_reason);
    return 1;
  }

  if (scr_kvtree_get_int(halt, SCR_HALT_KEY_CHECKPOINTS_LEFT, &value) == SCR_SUCCESS && value <= 0) {
    snprintf(reason, len, "no checkpoints left");
    return 1;
  }

  if (scr_kvtree_get_int(halt, SCR_HALT_KEY_EXIT_AFTER, &value) == SCR_SUCCESS &&
      (long long) now >= value) {
    scr_halt_file_format_time((time_t) value, when, sizeof(when));
    snprintf(reason, len, "time is past ExitAfter %s", when);
    return 1;
  }

  if (scr_kvtree_get_int(halt, SCR_HALT_KEY_EXIT_BEFORE, &value) == SCR_SUCCESS) {
    long long margin = halt_seconds;
    long long file_margin;
    if (scr_kvtree_get_int(halt, SCR_HALT_KEY_HALT_SECONDS, &file_margin) == SCR_SUCCESS) {
      margin = file_margin;
    }
    if (margin < 0) margin = 0;
    if ((long long) now >= value - margin) {
      scr_halt_file_format_time((time_t) value, when, sizeof(when));
      snprintf(reason, len, "less than %lld seconds before ExitBefore %s", margin, when);
      return 1;
    }
  }

  return 0;
}

static int scr_halt_file_decrement(scr_kvtree* halt, void* arg)
{
  (void) arg;
  long long left;
  int rc = scr_kvtree_get_int(halt, SCR_HALT_KEY_CHECKPOINTS_LEFT, &left);
  if (rc == SCR_ERR_NOENT) return SCR_SUCCESS;
  if (rc != SCR_SUCCESS) {
    scr_warn("ignoring %s in the halt file: not a number", SCR_HALT_KEY_CHECKPOINTS_LEFT);
    return SCR_SUCCESS;
  }
  if (left > 0) left--;
  scr_kvtree_set_kv_int(halt, SCR_HALT_KEY_CHECKPOINTS_LEFT, left);
  return SCR_SUCCESS;
}

int scr_halt_file_count_checkpoint(const char* prefix)
{
  char* path = scr_halt_file_path(prefix);
  if (path == NULL) return SCR_ERR_INVALID;

  /* most runs have no halt file: do not create .scr and a lock for nothing.
   * A file appearing right after this test only takes effect one checkpoint later. */
  struct stat st;
  int exists = (stat(path, &st) == 0);
  free(path);
  if (!exists) return SCR_SUCCESS;

  return scr_halt_file_update(prefix, scr_halt_file_decrement, NULL);
}

/* reads between min_digits and max_digits decimal digits at *text */
static int scr_halt_file_read_digits(const char** text, int min_digits, int max_digits, int* value)
{
  int count = 0;
  int result = 0;
  const char* p = *text;
  while (count < max_digits && isdigit((unsigned char) *p)) {
    result = result * 10 + (*p - '0');
    p++;
    count++;
  }
  if (count < min_digits) return SCR_ERR_INVALID;
  *text = p;
  *value = result;
  return SCR_SUCCESS;
}

/* "HH:MM[:SS]" at *text, consuming it */
static int scr_halt_file_read_clock(const char** text, struct tm* tm)
{
  int hour, minute, second = 0;
  const char* p = *text;
  if (scr_halt_file_read_digits(&p, 1, 2, &hour) != SCR_SUCCESS || *p++ != ':') return SCR_ERR_INVALID;
  if (scr_halt_file_read_digits(&p, 2, 2, &minute) != SCR_SUCCESS) return SCR_ERR_INVALID;
  if (*p == ':') {
    p++;
    if (scr_halt_file_read_digits(&p, 2, 2, &second) != SCR_SUCCESS) return SCR_ERR_INVALID;
  }
  if (hour > 23 || minute > 59 || second > 59) return SCR_ERR_INVALID;
  tm->tm_hour = hour;
  tm->tm_min = minute;
  tm->tm_sec = second;
  *text = p;
  return SCR_SUCCESS;
}

/* mktime normalises 31 February into March: refuse dates it had to change */
static int scr_halt_file_make_time(struct tm* tm, time_t* out)
{
  struct tm wanted = *tm;
  tm->tm_isdst = -1;
  time_t when = mktime(tm);
  if (when == (time_t) -1) return SCR_ERR_INVALID;
  if (tm->tm_year != wanted.tm_year || tm->tm_mon != wanted.tm_mon || tm->tm_mday != wanted.tm_mday) {
    return SCR_ERR_INVALID;
  }
  *out = when;
  return SCR_SUCCESS;
}

static int scr_halt_file_parse_relative(const char* text, time_t now, time_t* out)
{
  char* end = NULL;
  if (!isdigit((unsigned char) text[0])) return SCR_ERR_INVALID;
  errno = 0;
  long long amount = strtoll(text, &end, 10);
  if (errno != 0 || end == text) return SCR_ERR_INVALID;

  long long unit;
  switch (*end) {
  case 's': unit = 1; break;
  case 'm': unit = 60; break;
  case 'h': unit = 3600; break;
  case 'd': unit = 86400; break;
  default: return SCR_ERR_INVALID;
  }
  if (end[1] != '\0') return SCR_ERR_INVALID;
  if (amount > (LLONG_MAX - (long long) now) / unit) return SCR_ERR_INVALID;
  *out = (time_t) ((long long) now + amount * unit);
  return SCR_SUCCESS;
}

static int scr_halt_file_parse_epoch(const char* text, time_t* out)
{
  char* end = NULL;
  if (!isdigit((unsigned char) text[0])) return SCR_ERR_INVALID;
  errno = 0;
  long long epoch = strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0') return SCR_ERR_INVALID;
  *out = (time_t) epoch;
  return SCR_SUCCESS;
}

int scr_halt_file_parse_time(const char* text, time_t now, time_t* out)
{
  if (text == NULL || out == NULL) return SCR_ERR_INVALID;
  if (text[0] == '@') return scr_halt_file_parse_epoch(text + 1, out);
  if (text[0] == '+') return scr_halt_file_parse_relative(text + 1, now, out);

  struct tm tm;
  if (localtime_r(&now, &tm) == NULL) return SCR_ERR_INVALID;

  const char* p = text;
  int year, month, day;
  if (scr_halt_file_read_digits(&p, 4, 4, &year) == SCR_SUCCESS && *p == '-') {
    p++;
    if (scr_halt_file_read_digits(&p, 2, 2, &month) != SCR_SUCCESS || *p++ != '-') return SCR_ERR_INVALID;
    if (scr_halt_file_read_digits(&p, 2, 2, &day) != SCR_SUCCESS) return SCR_ERR_INVALID;
    if (*p != ' ' && *p != 'T') return SCR_ERR_INVALID;
    p++;
    if (month < 1 || month > 12 || day < 1 || day > 31) return SCR_ERR_INVALID;
    if (scr_halt_file_read_clock(&p, &tm) != SCR_SUCCESS || *p != '\0') return SCR_ERR_INVALID;
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    return scr_halt_file_make_time(&tm, out);
  }

  /* a bare clock time means its next occurrence */
  p = text;
  if (scr_halt_file_read_clock(&p, &tm) != SCR_SUCCESS || *p != '\0') return SCR_ERR_INVALID;
  struct tm today = tm;
  time_t when;
  if (scr_halt_file_make_time(&today, &when) != SCR_SUCCESS) return SCR_ERR_INVALID;
  if (when <= now) {
    struct tm tomorrow = tm;
    tomorrow.tm_mday++;
    tomorrow.tm_isdst = -1;
    when = mktime(&tomorrow);
    if (when == (time_t) -1) return SCR_ERR_INVALID;
  }
  *out = when;
  return SCR_SUCCESS;
}
