/* scr_log_events.c - the event log's reader for scr_log(1): one line per event,
 * "STAMP job=ID event=NAME time=SECONDS key=value ...", of the library and of scr_run. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_log_events.h"

/* value of key in the event's words, copied into buf; NULL when missing */
const char* scr_log_get(const struct scr_log_event* e, const char* key, char* buf, size_t len)
{
  size_t klen = strlen(key);
  const char* p = e->words;
  while (p && *p) {
    while (*p == ' ') p++;
    if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
      const char* v = p + klen + 1;
      size_t n = strcspn(v, " \n");
      if (n >= len) n = len - 1;
      memcpy(buf, v, n);
      buf[n] = '\0';
      return buf;
    }
    p = strchr(p, ' ');
  }
  return NULL;
}

double scr_log_get_double(const struct scr_log_event* e, const char* key, double fallback)
{
  char buf[64];
  return scr_log_get(e, key, buf, sizeof(buf)) ? strtod(buf, NULL) : fallback;
}

int scr_log_get_int(const struct scr_log_event* e, const char* key, int fallback)
{
  char buf[32];
  return scr_log_get(e, key, buf, sizeof(buf)) ? atoi(buf) : fallback;
}

/* the events of job (NULL: the job of the last INIT, else of the last line),
 * in the order of the file; *job_out gets the job shown (malloc'd) */
struct scr_log_event* scr_log_read(FILE* f, const char* job, size_t* count, char** job_out)
{
  char line[2048];
  char* chosen = job ? strdup(job) : NULL;
  if (!chosen) {
    /* a first pass finds the newest run's job: a prefix may hold several */
    char last_any[256] = "", last_init[256] = "";
    while (fgets(line, sizeof(line), f)) {
      char* j = strstr(line, " job=");
      if (!j) continue;
      size_t n = strcspn(j + 5, " \n");
      if (n >= sizeof(last_any)) continue;
      memcpy(last_any, j + 5, n);
      last_any[n] = '\0';
      if (strstr(line, " event=INIT ")) snprintf(last_init, sizeof(last_init), "%s", last_any);
    }
    chosen = strdup(last_init[0] ? last_init : last_any);
    rewind(f);
  }
  size_t cap = 64, n = 0;
  struct scr_log_event* events = malloc(cap * sizeof(*events));
  size_t jlen = strlen(chosen);
  while (events && fgets(line, sizeof(line), f)) {
    char* j = strstr(line, " job=");
    char* ev = strstr(line, " event=");
    char* t = strstr(line, " time=");
    if (!j || !ev || strncmp(j + 5, chosen, jlen) != 0 || (j[5 + jlen] != ' ' && j[5 + jlen] != '\n')) continue;
    if (n == cap) {
      struct scr_log_event* more = realloc(events, 2 * cap * sizeof(*events));
      if (!more) break;
      events = more;
      cap *= 2;
    }
    struct scr_log_event* e = &events[n];
    size_t len = strcspn(ev + 7, " \n");
    if (len >= sizeof(e->name)) continue;
    memcpy(e->name, ev + 7, len);
    e->name[len] = '\0';
    /* a log written before time= existed has only the stamp to the second:
     * such lines are skipped rather than drawn a second off */
    if (!t) continue;
    e->time = strtod(t + 6, NULL);
    e->words = strdup(ev + 7 + len);
    n++;
  }
  *count = n;
  *job_out = chosen;
  return events;
}

int scr_log_is_launcher_event(const struct scr_log_event* e)
{
  static const char* const names[] = { "LAUNCH", "LAUNCH_END", "NODE_DOWN", "POSTRUN", NULL };
  for (int i = 0; names[i]; i++)
    if (strcmp(e->name, names[i]) == 0) return 1;
  return 0;
}
