/* scr_preload_report.c - a set of the paths already reported, so that a dry run
 * or SCR_DEBUG names each file once however often it is opened, and the counts. */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_log.h"
#include "scr_preload_real.h"
#include "scr_preload_report.h"
#include "scr_preload_state.h"

/* open addressing, doubled at half full; only matching opens come here */
typedef struct {
  char* path;
  uint64_t hash;
} report_entry;

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static report_entry* report_table = NULL;
static size_t report_size = 0;      /* slots, a power of two */
static size_t report_used = 0;
static long long report_opens = 0, report_routed = 0;

static uint64_t report_hash(const char* s, size_t n)
{
  uint64_t h = 1469598103934665603ull;   /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char) s[i]) * 1099511628211ull;
  return h;
}

static int report_grow_locked(void)
{
  size_t size = report_size ? report_size * 2 : 256;
  report_entry* table = calloc(size, sizeof(*table));
  if (!table) return 0;
  for (size_t i = 0; i < report_size; i++) {
    if (!report_table[i].path) continue;
    size_t j = (size_t) report_table[i].hash & (size - 1);
    while (table[j].path) j = (j + 1) & (size - 1);
    table[j] = report_table[i];
  }
  free(report_table);
  report_table = table;
  report_size = size;
  return 1;
}

/* 1 when path was not in the set (and is now), 0 when it was; 1 also when
 * memory runs out, so that a report is repeated rather than lost */
static int report_first_time_locked(const char* path, size_t length)
{
  if ((report_used + 1) * 2 > report_size && !report_grow_locked() && report_used >= report_size) return 1;
  uint64_t h = report_hash(path, length);
  size_t j = (size_t) h & (report_size - 1);
  for (; report_table[j].path; j = (j + 1) & (report_size - 1))
    if (report_table[j].hash == h && strcmp(report_table[j].path, path) == 0) return 0;
  char* copy = strndup(path, length);
  if (!copy) return 1;
  report_table[j].path = copy;
  report_table[j].hash = h;
  report_used++;
  return 1;
}

/* " (step 7, rank 3)" or "" */
static void report_captures(const scr_preload_match* m, char* out, size_t size)
{
  out[0] = '\0';
  if (m->step >= 0 && m->rank >= 0) snprintf(out, size, " (step %lld, rank %lld)", m->step, m->rank);
  else if (m->step >= 0) snprintf(out, size, " (step %lld)", m->step);
  else if (m->rank >= 0) snprintf(out, size, " (rank %lld)", m->rank);
}

void scr_preload_report_open(const scr_preload_target* t, int decision)
{
  int saved_errno = errno;
  /* the set allocates and the log writes: our own I/O */
  scr_preload_real_enter();
  pthread_mutex_lock(&report_lock);
  report_opens++;
  if (decision == SCR_PRELOAD_DECISION_ROUTED || decision == SCR_PRELOAD_DECISION_REDIRECTED) report_routed++;
  int first = report_first_time_locked(t->path, t->length);
  pthread_mutex_unlock(&report_lock);

  int dryrun = decision == SCR_PRELOAD_DECISION_DRYRUN;
  const scr_preload_rule* rule = scr_preload_rules_at(t->rules, t->match.rule);
  if (first && rule && (dryrun || scr_log_debug_level >= 1)) {
    static const char* const what[] = { "", "passed through", "routed", "redirected" };
    char captured[64];
    report_captures(&t->match, captured, sizeof(captured));
    const char* origin = rule->origin ? rule->origin : "";
    const char* at = rule->origin ? " at " : "";
    if (dryrun)
      scr_info("dry run: %s %s matches PRELOAD=%s%s%s%s", t->call, t->path, rule->pattern, captured, at, origin);
    else
      scr_info("%s %s matches PRELOAD=%s%s%s%s: %s", t->call, t->path, rule->pattern, captured, at, origin,
               what[decision]);
  }
  scr_preload_real_leave();
  errno = saved_errno;
}

void scr_preload_report_counts(scr_preload_counts* counts)
{
  pthread_mutex_lock(&report_lock);
  counts->opens = report_opens;
  counts->files = (long long) report_used;
  counts->routed = report_routed;
  pthread_mutex_unlock(&report_lock);
}

/* "1.5 GiB" */
static void report_bytes(long long bytes, char* out, size_t size)
{
  static const char* const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
  double value = (double) bytes;
  int u = 0;
  while (value >= 1024.0 && u < 5) {
    value /= 1024.0;
    u++;
  }
  if (u == 0) snprintf(out, size, "%lld B", bytes);
  else snprintf(out, size, "%.1f %s", value, units[u]);
}

void scr_preload_report_summary(const scr_preload_summary* engine)
{
  int saved_errno = errno;
  scr_preload_real_enter();
  scr_preload_counts c;
  scr_preload_report_counts(&c);
  char line[512];
  size_t n = (size_t) snprintf(line, sizeof(line), "preload summary: %lld opens of %lld files matched, %lld routed",
                               c.opens, c.files, c.routed);
  char part[96] = "", bytes[32] = "";
  const char* sep = "; ";
  if (engine && engine->datasets >= 0 && n < sizeof(line)) {
    n += (size_t) snprintf(line + n, sizeof(line) - n, "%s%lld dataset%s", sep, engine->datasets,
                           engine->datasets == 1 ? "" : "s");
    sep = ", ";
  }
  if (engine && engine->bytes >= 0 && n < sizeof(line)) {
    report_bytes(engine->bytes, bytes, sizeof(bytes));
    n += (size_t) snprintf(line + n, sizeof(line) - n, "%s%s", sep, bytes);
    sep = ", ";
  }
  const double seconds[3] = { engine ? engine->checkpoint_seconds : -1, engine ? engine->redundancy_seconds : -1,
                              engine ? engine->flush_seconds : -1 };
  static const char* const names[3] = { "checkpoint", "redundancy", "flush" };
  for (int i = 0; i < 3 && n < sizeof(line); i++) {
    if (seconds[i] < 0) continue;
    n += (size_t) snprintf(line + n, sizeof(line) - n, "%s%s %.2f s", sep, names[i], seconds[i]);
    sep = ", ";
  }
  /* effective bandwidth: what the application waited for per byte */
  if (engine && engine->bytes >= 0 && engine->checkpoint_seconds > 0 && n < sizeof(line)) {
    report_bytes((long long) ((double) engine->bytes / engine->checkpoint_seconds), part, sizeof(part));
    n += (size_t) snprintf(line + n, sizeof(line) - n, "%s%s/s", sep, part);
  }
  scr_info("%s", line);
  scr_preload_real_leave();
  errno = saved_errno;
}

void scr_preload_report_atfork_prepare(void)
{
  pthread_mutex_lock(&report_lock);
}

void scr_preload_report_atfork_parent(void)
{
  pthread_mutex_unlock(&report_lock);
}

void scr_preload_report_atfork_child(void)
{
  pthread_mutex_init(&report_lock, NULL);
}
