/* scr_log_recovery.c - scr_log(1)'s recovery phases: each failure of a job, from
 * when it died to when the program resumed, read from scr_run's events and the library's. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_log_recovery.h"

static int scr_is(const struct scr_log_event* e, const char* name)
{
  return strcmp(e->name, name) == 0;
}

static struct scr_recovery* scr_recovery_new(struct scr_recovery** list, size_t* n, size_t* cap)
{
  if (*n == *cap) {
    size_t more = *cap ? 2 * *cap : 8;
    struct scr_recovery* p = realloc(*list, more * sizeof(*p));
    if (!p) return NULL;
    *list = p;
    *cap = more;
  }
  struct scr_recovery* f = &(*list)[(*n)++];
  memset(f, 0, sizeof(*f));
  f->launch = f->relaunch = f->dataset = -1;
  f->died = f->detected = f->relaunched = f->restored = f->resumed = NAN;
  f->outcome = SCR_RECOVERY_ENDED;
  return f;
}

/* the node scr_run found down after the failure, added to its cause */
static void scr_recovery_node_down(struct scr_recovery* f, const struct scr_log_event* e)
{
  char node[64], cause[sizeof(f->cause)];
  if (!scr_log_get(e, "node", node, sizeof(node))) return;
  if (strncmp(f->cause, "status", 6) == 0 || !f->cause[0]) snprintf(cause, sizeof(cause), "%s lost", node);
  else snprintf(cause, sizeof(cause), "%.90s, %.30s lost", f->cause, node);
  snprintf(f->cause, sizeof(f->cause), "%s", cause);
  double at = scr_log_get_double(e, "lost_at", NAN);
  if (!isnan(at) && (!f->died_known || at < f->died)) {
    f->died = at;
    f->died_known = 1;
  }
}

size_t scr_recovery_find(const struct scr_log_event* ev, size_t n, struct scr_recovery** out)
{
  struct scr_recovery* list = NULL;
  size_t count = 0, cap = 0;
  /* indices, as the list may move: the failure waiting for its relaunch,
   * and the one whose relaunch is restoring and resuming (-1: none) */
  long pending = -1, current = -1;
  /* a run began and did not finalize; scr_run logged a failure since that
   * run began; the scavenge runs (it restores, and is no relaunch) */
  int run_open = 0, launcher_failure = 0, scavenging = 0;
  char buf[64];
  for (size_t i = 0; i < n; i++) {
    const struct scr_log_event* e = &ev[i];
    double t = e->time;
    if (scr_is(e, "LAUNCH_END")) {
      current = -1;
      int status = scr_log_get_int(e, "status", 0);
      if (status == 0) continue;
      struct scr_recovery* f = scr_recovery_new(&list, &count, &cap);
      if (!f) break;
      f->launch = scr_log_get_int(e, "launch", -1);
      f->detected = f->died = t;
      double since = scr_log_get_double(e, "hung_since", NAN);
      if (!isnan(since)) {
        /* a hang began with the last activity the watchdog saw */
        f->died = since;
        f->died_known = 1;
        snprintf(f->cause, sizeof(f->cause), "hung: no SCR activity for %d s (watchdog)",
                 scr_log_get_int(e, "watchdog", 0));
      } else {
        snprintf(f->cause, sizeof(f->cause), "status %d", status);
      }
      pending = (long) count - 1;
      launcher_failure = 1;
    } else if (scr_is(e, "NODE_DOWN")) {
      if (pending >= 0) scr_recovery_node_down(&list[pending], e);
    } else if (scr_is(e, "LAUNCH")) {
      current = -1;
      if (pending >= 0) {
        list[pending].relaunched = t;
        list[pending].relaunch = scr_log_get_int(e, "launch", -1);
        list[pending].outcome = SCR_RECOVERY_RELAUNCHED;
        current = pending;
        pending = -1;
      }
    } else if (scr_is(e, "POSTRUN")) {
      if (pending >= 0) list[pending].outcome = SCR_RECOVERY_SCAVENGED;
      pending = current = -1;
      scavenging = 1;
    } else if (scr_is(e, "INIT")) {
      if (run_open && !launcher_failure && !scavenging) {
        /* relaunched by hand or by another tool: only the run's own phases,
         * its restore counted from SCR_Init */
        struct scr_recovery* f = scr_recovery_new(&list, &count, &cap);
        if (!f) break;
        snprintf(f->cause, sizeof(f->cause), "the run ended without SCR_Finalize; relaunched without scr_run");
        f->outcome = SCR_RECOVERY_RELAUNCHED;
        f->relaunched = t;
        current = (long) count - 1;
      }
      run_open = 1;
      launcher_failure = 0;
    } else if (scr_is(e, "FINALIZE")) {
      run_open = 0;
    } else if (current >= 0 && isnan(list[current].restored)) {
      struct scr_recovery* f = &list[current];
      if (scr_is(e, "RESTORE_COMPLETE") && scr_log_get(e, "source", buf, sizeof(buf)) && !strcmp(buf, "rebuild"))
        snprintf(f->source, sizeof(f->source), "rebuilt");
      else if (scr_is(e, "FETCH_COMPLETE"))
        snprintf(f->source, sizeof(f->source), "fetched");
      else if (scr_is(e, "RESTORED")) {
        f->restored = t;
        f->dataset = scr_log_get_int(e, "dset", -1);
        if (!f->source[0]) snprintf(f->source, sizeof(f->source), "from cache");
      }
    } else if (current >= 0 && scr_is(e, "RESUMED") && isnan(list[current].resumed)) {
      list[current].resumed = t;
      if (scr_log_get(e, "after", buf, sizeof(buf)))
        snprintf(list[current].after, sizeof(list[current].after), "%.31s", buf);
    }
  }
  *out = list;
  return count;
}

/* "%9.3f" of a length, or "-" when either end is not known */
static const char* scr_recovery_span(double from, double to, char* buf, size_t len)
{
  if (isnan(from) || isnan(to)) snprintf(buf, len, "%9s", "-");
  else snprintf(buf, len, "%9.3f", to - from);
  return buf;
}

void scr_recovery_print(FILE* out, const struct scr_recovery* list, size_t n, double t0)
{
  if (n == 0) return;
  fprintf(out, "recovery from %zu failure%s (seconds: died, since the job began; then each phase's length):\n", n,
          n == 1 ? "" : "s");
  fprintf(out, "  %7s %6s %9s %9s %9s %9s %9s %9s  %s\n", "failure", "launch", "died", "detection", "relaunch",
          "restore", "resume", "total", "what");
  for (size_t i = 0; i < n; i++) {
    const struct scr_recovery* f = &list[i];
    char launch[16], died[16], a[16], b[16], c[16], d[16], total[16], what[256];
    snprintf(launch, sizeof(launch), f->launch >= 0 ? "%d" : "-", f->launch);
    if (isnan(f->died)) snprintf(died, sizeof(died), "-");
    else snprintf(died, sizeof(died), "%.3f", f->died - t0);
    int len = snprintf(what, sizeof(what), "%s", f->cause);
    if (!isnan(f->died) && !f->died_known)
      len += snprintf(what + len, sizeof(what) - (size_t) len, " (died: when the end was seen)");
    if (f->outcome == SCR_RECOVERY_SCAVENGED)
      len += snprintf(what + len, sizeof(what) - (size_t) len, "; not relaunched, scavenged");
    else if (f->outcome == SCR_RECOVERY_ENDED)
      len += snprintf(what + len, sizeof(what) - (size_t) len, "; not relaunched");
    else if (f->dataset >= 0)
      len += snprintf(what + len, sizeof(what) - (size_t) len, "; dataset %d %s", f->dataset, f->source);
    else if (!isnan(f->relaunched) || f->relaunch >= 0)
      len += snprintf(what + len, sizeof(what) - (size_t) len, "; nothing restored");
    if (!isnan(f->resumed) && f->after[0] && len > 0 && (size_t) len < sizeof(what))
      snprintf(what + len, sizeof(what) - (size_t) len, "; resumed after %s", f->after);
    double from = isnan(f->died) ? NAN : f->died;
    fprintf(out, "  %7zu %6s %9s %s %s %s %s %s  %s\n", i + 1, launch, died,
            f->died_known ? scr_recovery_span(f->died, f->detected, a, sizeof(a)) : scr_recovery_span(NAN, 0, a, sizeof(a)),
            scr_recovery_span(f->detected, f->relaunched, b, sizeof(b)),
            scr_recovery_span(f->relaunched, f->restored, c, sizeof(c)),
            scr_recovery_span(f->restored, f->resumed, d, sizeof(d)), scr_recovery_span(from, f->resumed, total, sizeof(total)),
            what);
  }
}
