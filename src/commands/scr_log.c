/* scr_log.c - the scr_log command: reads the event log <prefix>/.scr/log and
 * draws the job's timeline (one row per run) as SVG, with a text summary. */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_interval.h"
#include "scr_log_events.h"
#include "scr_log_recovery.h"

/* exit codes: 1 when the work failed, 2 when the command line was wrong */
enum { SCR_LOG_EXIT_FAILED = 1, SCR_LOG_EXIT_USAGE = 2 };

static void scr_log_usage(FILE* out)
{
  fprintf(out,
    "Usage: scr_log [--prefix DIR] [--job ID] [--svg FILE] [--mtbf DURATION]\n"
    "Summarise the event log DIR/.scr/log of a job (default: the job of the\n"
    "newest run) and draw its timeline.\n"
    "\n"
    "  -p, --prefix DIR      prefix directory (default: $SCR_PREFIX, else .)\n"
    "  -j, --job ID          the job to show (job= in the log)\n"
    "  -s, --svg FILE        write the timeline as a self-contained SVG to FILE\n"
    "  -m, --mtbf DURATION   mean time between failures for the interval advice\n"
    "                        (90, 15m, 6h, 2d; default $SCR_MTBF, else what the\n"
    "                        failures in the log imply)\n"
    "  -h, --help            print this help\n");
}

/* ---- runs and spans ---- */

enum scr_span_kind {
  SPAN_COMPUTE, SPAN_WRITE, SPAN_ENCODE, SPAN_FLUSH, SPAN_FLUSH_ASYNC, SPAN_RESTORE, SPAN_LOST, SPAN_KINDS
};
static const char* const scr_span_class[SPAN_KINDS] = {
  "compute", "write", "encode", "flush", "flush-async", "restore", "lost"
};
static const char* const scr_span_label[SPAN_KINDS] = {
  "compute", "checkpoint write", "redundancy encoding", "flush (synchronous)", "flush (background)",
  "restore (rebuild or fetch)", "failure to relaunch"
};
/* colours picked to tell apart on screen and in print */
static const char* const scr_span_fill[SPAN_KINDS] = {
  "#9ecae1", "#f28e2b", "#b07aa1", "#59a14f", "#8cd17d", "#edc948", "#bab0ac"
};

struct scr_span {
  int run;
  enum scr_span_kind kind;
  double t0, t1;
  int dset;
  double bytes;      /* < 0: unknown */
  char what[160];    /* the rest of the hover text */
};

struct scr_run {
  double t0, t1;
  int finalized, halted, failed;
  int scavenge; /* scr_postrun's (its POSTRUN event came before it) */
  int ranks, nodes;
  int checkpoints;
  double last_ckpt_start, interval_sum;
  int intervals;
  char host[64];
};

struct scr_marker {
  int run;
  double t;
  int failure;        /* else a halt */
  char what[200];
};

struct scr_timeline {
  struct scr_run* runs;
  size_t nruns, capruns;
  struct scr_span* spans;
  size_t nspans, capspans;
  struct scr_marker* markers;
  size_t nmarkers, capmarkers;
  double bytes_checkpointed;
  int checkpoints, outputs, invalid;
};

/* grow *array of *cap elements of size to hold one more; 0 when out of memory */
static int scr_grow(void** array, size_t* cap, size_t used, size_t size)
{
  if (used < *cap) return 1;
  size_t more = *cap ? 2 * *cap : 16;
  void* p = realloc(*array, more * size);
  if (!p) return 0;
  *array = p;
  *cap = more;
  return 1;
}

static struct scr_span* scr_span_add(struct scr_timeline* tl, int run, enum scr_span_kind kind, double t0,
                                     double t1, int dset, double bytes)
{
  if (!scr_grow((void**) &tl->spans, &tl->capspans, tl->nspans, sizeof(struct scr_span))) return NULL;
  struct scr_span* s = &tl->spans[tl->nspans++];
  memset(s, 0, sizeof(*s));
  s->run = run;
  s->kind = kind;
  s->t0 = t0;
  s->t1 = t1 > t0 ? t1 : t0;
  s->dset = dset;
  s->bytes = bytes;
  return s;
}

static void scr_marker_add(struct scr_timeline* tl, int run, double t, int failure, const char* what)
{
  if (!scr_grow((void**) &tl->markers, &tl->capmarkers, tl->nmarkers, sizeof(struct scr_marker))) return;
  struct scr_marker* m = &tl->markers[tl->nmarkers++];
  m->run = run;
  m->t = t;
  m->failure = failure;
  snprintf(m->what, sizeof(m->what), "%s", what);
}

/* the spans a run has open: one of each kind at a time, as the library does one
 * thing of each kind at a time (-1: none) */
struct scr_open {
  long span[SPAN_KINDS];
};

static void scr_open_reset(struct scr_open* o)
{
  for (int k = 0; k < SPAN_KINDS; k++) o->span[k] = -1;
}

static void scr_span_open(struct scr_timeline* tl, struct scr_open* o, int run, enum scr_span_kind kind,
                          double t, int dset, double bytes)
{
  if (scr_span_add(tl, run, kind, t, t, dset, bytes)) o->span[kind] = (long) tl->nspans - 1;
}

/* ends the open span of kind at t, or, when none is open (its start was not
 * logged), draws one of the given length up to t; returns it */
static struct scr_span* scr_span_close(struct scr_timeline* tl, struct scr_open* o, int run, enum scr_span_kind kind,
                                       double t, double seconds, int dset, double bytes)
{
  struct scr_span* s;
  if (o->span[kind] >= 0) {
    s = &tl->spans[o->span[kind]];
    s->t1 = t > s->t0 ? t : s->t0;
    if (bytes >= 0) s->bytes = bytes;
    if (dset >= 0) s->dset = dset;
  } else {
    s = scr_span_add(tl, run, kind, t - (seconds > 0 ? seconds : 0), t, dset, bytes);
  }
  o->span[kind] = -1;
  return s;
}

static void scr_run_end(struct scr_timeline* tl, struct scr_open* o, int run, double t)
{
  struct scr_run* r = &tl->runs[run];
  r->t1 = t;
  /* what was under way when a run died is drawn up to its last sign of life */
  for (int k = 0; k < SPAN_KINDS; k++) {
    if (o->span[k] < 0) continue;
    struct scr_span* s = &tl->spans[o->span[k]];
    s->t1 = t > s->t0 ? t : s->t0;
    snprintf(s->what, sizeof(s->what), "cut short: the run ended during it");
  }
  scr_open_reset(o);
}

static int scr_run_begin(struct scr_timeline* tl, double t)
{
  if (!scr_grow((void**) &tl->runs, &tl->capruns, tl->nruns, sizeof(struct scr_run))) return -1;
  struct scr_run* r = &tl->runs[tl->nruns++];
  memset(r, 0, sizeof(*r));
  r->t0 = r->t1 = t;
  r->last_ckpt_start = -1;
  return (int) tl->nruns - 1;
}

static int scr_is(const struct scr_log_event* e, const char* name)
{
  return strcmp(e->name, name) == 0;
}

static void scr_timeline_build(struct scr_timeline* tl, const struct scr_log_event* ev, size_t n)
{
  struct scr_open open;
  scr_open_reset(&open);
  int run = -1;
  int postrun = 0; /* scr_run began a scavenge: the next run is it */
  double last = 0;
  char buf[256];
  for (size_t i = 0; i < n; i++) {
    const struct scr_log_event* e = &ev[i];
    /* scr_run's events are between runs: the recovery phases read them */
    if (scr_log_is_launcher_event(e)) {
      if (scr_is(e, "POSTRUN")) postrun = 1;
      continue;
    }
    double t = e->time;
    int dset = scr_log_get_int(e, "dset", -1);
    double bytes = scr_log_get_double(e, "bytes", -1);
    double seconds = scr_log_get_double(e, "seconds", 0);
    if (scr_is(e, "INIT") || run < 0) {
      if (run >= 0 && !tl->runs[run].finalized) {
        /* a run without FINALIZE ended by a failure: it was noticed and the
         * job launched again when the next run began */
        scr_run_end(tl, &open, run, last);
        tl->runs[run].failed = 1;
        scr_marker_add(tl, run, last, 1, "failure: the run ended without SCR_Finalize; this was its last event");
        struct scr_span* lost = scr_span_add(tl, run, SPAN_LOST, last, t, -1, -1);
        if (lost) snprintf(lost->what, sizeof(lost->what), "from the failed run's last event to the next run's start");
      }
      run = scr_run_begin(tl, t);
      if (run < 0) return;
      tl->runs[run].ranks = scr_log_get_int(e, "ranks", 0);
      tl->runs[run].nodes = scr_log_get_int(e, "nodes", 0);
      tl->runs[run].scavenge = postrun;
      postrun = 0;
      if (scr_log_get(e, "host", buf, sizeof(buf))) snprintf(tl->runs[run].host, sizeof(tl->runs[run].host), "%.63s", buf);
    }
    struct scr_run* r = &tl->runs[run];
    last = t;
    r->t1 = t;
    if (scr_is(e, "CHECKPOINT_START") || scr_is(e, "OUTPUT_START")) {
      scr_span_open(tl, &open, run, SPAN_WRITE, t, dset, -1);
      if (scr_is(e, "CHECKPOINT_START")) {
        if (r->last_ckpt_start >= 0) {
          r->interval_sum += t - r->last_ckpt_start;
          r->intervals++;
        }
        r->last_ckpt_start = t;
      }
    } else if (scr_is(e, "ENCODE_START")) {
      struct scr_span* w = scr_span_close(tl, &open, run, SPAN_WRITE, t, scr_log_get_double(e, "write_seconds", 0),
                                          dset, bytes);
      if (w && scr_log_get(e, "files", buf, sizeof(buf)))
        snprintf(w->what, sizeof(w->what), "%.32s files", buf);
      scr_span_open(tl, &open, run, SPAN_ENCODE, t, dset, bytes);
      struct scr_span* s = open.span[SPAN_ENCODE] >= 0 ? &tl->spans[open.span[SPAN_ENCODE]] : NULL;
      if (s && scr_log_get(e, "scheme", buf, sizeof(buf))) snprintf(s->what, sizeof(s->what), "scheme %.32s", buf);
    } else if (scr_is(e, "ENCODE_COMPLETE")) {
      struct scr_span* s = scr_span_close(tl, &open, run, SPAN_ENCODE, t, seconds, dset, bytes);
      if (s && scr_log_get(e, "scheme", buf, sizeof(buf))) snprintf(s->what, sizeof(s->what), "scheme %.32s", buf);
    } else if (scr_is(e, "CHECKPOINT_COMPLETE") || scr_is(e, "OUTPUT_COMPLETE")) {
      /* a log without ENCODE_START: the write is the whole checkpoint */
      if (open.span[SPAN_WRITE] >= 0) scr_span_close(tl, &open, run, SPAN_WRITE, t, seconds, dset, bytes);
      if (scr_is(e, "CHECKPOINT_COMPLETE")) {
        tl->checkpoints++;
        r->checkpoints++;
        if (bytes > 0) tl->bytes_checkpointed += bytes;
      } else {
        tl->outputs++;
      }
    } else if (scr_is(e, "DATASET_INVALID")) {
      struct scr_span* s = scr_span_close(tl, &open, run, SPAN_WRITE, t, seconds, dset, -1);
      if (s) snprintf(s->what, sizeof(s->what), "invalid: discarded");
      tl->invalid++;
    } else if (scr_is(e, "FLUSH_START")) {
      int async = scr_log_get(e, "mode", buf, sizeof(buf)) && strcmp(buf, "async") == 0;
      scr_span_open(tl, &open, run, async ? SPAN_FLUSH_ASYNC : SPAN_FLUSH, t, dset, bytes);
    } else if (scr_is(e, "FLUSH_COMPLETE") || scr_is(e, "FLUSH_FAILED")) {
      int async = scr_log_get(e, "mode", buf, sizeof(buf)) && strcmp(buf, "async") == 0;
      struct scr_span* s = scr_span_close(tl, &open, run, async ? SPAN_FLUSH_ASYNC : SPAN_FLUSH, t, seconds, dset, bytes);
      if (s && scr_is(e, "FLUSH_FAILED")) snprintf(s->what, sizeof(s->what), "FAILED: the dataset stays in cache");
    } else if (scr_is(e, "RESTORE_START") || scr_is(e, "FETCH_START")) {
      scr_span_open(tl, &open, run, SPAN_RESTORE, t, dset, -1);
    } else if (scr_is(e, "RESTORE_COMPLETE") || scr_is(e, "RESTORE_FAILED") || scr_is(e, "FETCH_COMPLETE") ||
               scr_is(e, "FETCH_FAILED")) {
      struct scr_span* s = scr_span_close(tl, &open, run, SPAN_RESTORE, t, seconds, dset, bytes);
      int fetch = strncmp(e->name, "FETCH", 5) == 0, failed = strstr(e->name, "FAILED") != NULL;
      const char* source = fetch ? "fetch from the prefix directory"
                         : scr_log_get(e, "source", buf, sizeof(buf)) && strcmp(buf, "rebuild") == 0
                           ? "rebuilt from redundancy" : "from cache";
      if (s) snprintf(s->what, sizeof(s->what), "%s%s", source, failed ? ": FAILED" : "");
    } else if (scr_is(e, "HALT")) {
      /* the reason is the rest of the line: it has blanks */
      char what[200];
      const char* reason = strstr(e->words, " reason=");
      snprintf(what, sizeof(what), "halt: %.190s", reason ? reason + 8 : "");
      what[strcspn(what, "\n")] = '\0';
      scr_marker_add(tl, run, t, 0, what);
    } else if (scr_is(e, "HALT_EXIT")) {
      r->halted = 1;
    } else if (scr_is(e, "FINALIZE")) {
      r->finalized = 1;
      scr_run_end(tl, &open, run, t);
      if (r->halted) scr_marker_add(tl, run, t, 0, "halt: the job exited after its checkpoint (SCR_HALT_EXIT)");
    }
  }
  if (run >= 0 && !tl->runs[run].finalized) {
    /* the newest run may still be running, or died and was not relaunched */
    scr_run_end(tl, &open, run, last);
    tl->runs[run].failed = 1;
    scr_marker_add(tl, run, last, 1, "no SCR_Finalize (yet): a failure, or the run is still going; this was its last event");
  }
}

static int scr_span_by_start(const void* a, const void* b)
{
  const struct scr_span* x = a;
  const struct scr_span* y = b;
  if (x->run != y->run) return x->run - y->run;
  return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* the run's time not taken by writes, encodings, synchronous flushes and
 * restores is compute: the program's own work */
static void scr_timeline_compute(struct scr_timeline* tl)
{
  qsort(tl->spans, tl->nspans, sizeof(struct scr_span), scr_span_by_start);
  size_t n = tl->nspans;
  for (size_t r = 0; r < tl->nruns; r++) {
    double at = tl->runs[r].t0;
    for (size_t i = 0; i < n; i++) {
      struct scr_span* s = &tl->spans[i];
      if (s->run != (int) r || s->kind == SPAN_FLUSH_ASYNC || s->kind == SPAN_LOST) continue;
      double t0 = s->t0, t1 = s->t1;
      if (t0 > at) {
        if (!scr_span_add(tl, (int) r, SPAN_COMPUTE, at, t0, -1, -1)) return;
        s = &tl->spans[i]; /* the array may have moved */
      }
      if (t1 > at) at = t1;
    }
    if (tl->runs[r].t1 > at) scr_span_add(tl, (int) r, SPAN_COMPUTE, at, tl->runs[r].t1, -1, -1);
  }
  qsort(tl->spans, tl->nspans, sizeof(struct scr_span), scr_span_by_start);
}

/* ---- the text summary ---- */

/* where the summary goes: stdout, or stderr when the SVG takes stdout */
static FILE* scr_text;

static void scr_format_bytes(double bytes, char* buf, size_t len)
{
  static const char* const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
  size_t u = 0;
  while (bytes >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
    bytes /= 1024.0;
    u++;
  }
  snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

struct scr_totals {
  double seconds[SPAN_KINDS];
  double run_seconds;     /* all runs, first event to last */
  int failures, halts;
  double cost;            /* mean blocking time of a checkpoint */
  double interval;        /* mean time between checkpoint starts */
  double mtbf;            /* given, or from failures; 0 unknown */
  const char* mtbf_from;
};

static void scr_timeline_totals(const struct scr_timeline* tl, double mtbf_given, const char* mtbf_from,
                                struct scr_totals* t)
{
  memset(t, 0, sizeof(*t));
  for (size_t i = 0; i < tl->nspans; i++) t->seconds[tl->spans[i].kind] += tl->spans[i].t1 - tl->spans[i].t0;
  double interval_sum = 0;
  int intervals = 0;
  for (size_t r = 0; r < tl->nruns; r++) {
    t->run_seconds += tl->runs[r].t1 - tl->runs[r].t0;
    t->failures += tl->runs[r].failed;
    interval_sum += tl->runs[r].interval_sum;
    intervals += tl->runs[r].intervals;
  }
  for (size_t m = 0; m < tl->nmarkers; m++) t->halts += !tl->markers[m].failure;
  /* what a checkpoint stops the program for: writing, encoding, and the
   * synchronous flushes spread over the checkpoints */
  if (tl->checkpoints > 0)
    t->cost = (t->seconds[SPAN_WRITE] + t->seconds[SPAN_ENCODE] + t->seconds[SPAN_FLUSH]) / tl->checkpoints;
  t->interval = intervals > 0 ? interval_sum / intervals : 0;
  t->mtbf = mtbf_given;
  t->mtbf_from = mtbf_from;
  if (!(t->mtbf > 0) && t->failures > 0) {
    /* the job's own record: time it ran (and lost) per failure */
    t->mtbf = (t->run_seconds + t->seconds[SPAN_LOST]) / t->failures;
    t->mtbf_from = "the failures in this log";
  }
}

static void scr_timeline_print(const struct scr_timeline* tl, const char* job, const struct scr_totals* t)
{
  char b[64], c[64];
  scr_format_bytes(tl->bytes_checkpointed, b, sizeof(b));
  fprintf(scr_text, "job %s: %zu run%s (%d failed), %d checkpoints (%s), %d output datasets%s\n", job, tl->nruns,
         tl->nruns == 1 ? "" : "s", t->failures, tl->checkpoints, b, tl->outputs,
         tl->invalid ? ", some invalid" : "");
  for (size_t r = 0; r < tl->nruns; r++) {
    const struct scr_run* run = &tl->runs[r];
    scr_interval_format(run->t1 - run->t0, c, sizeof(c));
    fprintf(scr_text, "  run %zu: %s, %d ranks on %d node%s, %d checkpoints, %s%s\n", r + 1, c, run->ranks,
            run->nodes, run->nodes == 1 ? "" : "s", run->checkpoints,
            run->failed ? "FAILED (no SCR_Finalize)" : run->halted ? "halted" : "finished",
            run->scavenge ? " (scr_postrun's scavenge)" : "");
  }
  fprintf(scr_text, "%-28s %10s %8s\n", "phase", "seconds", "% of run");
  static const enum scr_span_kind order[] = {
    SPAN_COMPUTE, SPAN_WRITE, SPAN_ENCODE, SPAN_FLUSH, SPAN_FLUSH_ASYNC, SPAN_RESTORE, SPAN_LOST
  };
  for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
    enum scr_span_kind k = order[i];
    fprintf(scr_text, "%-28s %10.3f %7.1f%%%s\n", scr_span_label[k], t->seconds[k],
           t->run_seconds > 0 ? 100.0 * t->seconds[k] / t->run_seconds : 0.0,
           k == SPAN_FLUSH_ASYNC ? "  (alongside compute)" : k == SPAN_LOST ? "  (between runs)" : "");
  }
  double overhead = t->seconds[SPAN_WRITE] + t->seconds[SPAN_ENCODE] + t->seconds[SPAN_FLUSH] + t->seconds[SPAN_RESTORE];
  fprintf(scr_text, "overhead: %.1f%% of run time (write, encoding, synchronous flush, restore: %.3f s of %.3f s)\n",
         t->run_seconds > 0 ? 100.0 * overhead / t->run_seconds : 0.0, overhead, t->run_seconds);
  if (tl->checkpoints > 0) {
    char advice[256];
    scr_interval_advice(t->cost, t->mtbf, t->interval, advice, sizeof(advice));
    fprintf(scr_text, "%s%s%s%s\n", advice, t->mtbf > 0 ? " (MTBF from " : "", t->mtbf > 0 ? t->mtbf_from : "",
           t->mtbf > 0 ? ")" : "");
  }
}

/* ---- the picture ---- */

enum { SVG_WIDTH = 960, SVG_LEFT = 110, SVG_RIGHT = 30, SVG_TOP = 56, SVG_ROW = 48, SVG_BAR = 24,
       SVG_ASYNC = 8 };

static void svg_text(FILE* out, const char* s)
{
  for (; *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    default: fputc(*s, out);
    }
  }
}

/* a tick step of 1, 2 or 5 times a power of ten giving at most about 8 ticks */
static double svg_tick_step(double span)
{
  double raw = span / 8.0, p = pow(10.0, floor(log10(raw > 0 ? raw : 1)));
  if (raw <= p) return p;
  if (raw <= 2 * p) return 2 * p;
  if (raw <= 5 * p) return 5 * p;
  return 10 * p;
}

static void svg_span_title(FILE* out, const struct scr_span* s)
{
  char d[32], b[32], bw[32];
  double seconds = s->t1 - s->t0;
  scr_interval_format(seconds, d, sizeof(d));
  fprintf(out, "<title>%s", scr_span_label[s->kind]);
  if (s->dset >= 0) fprintf(out, ", dataset %d", s->dset);
  fprintf(out, ": %s (%.3f s)", d, seconds);
  if (s->bytes >= 0 && s->kind != SPAN_COMPUTE && s->kind != SPAN_LOST) {
    scr_format_bytes(s->bytes, b, sizeof(b));
    fprintf(out, ", %s", b);
    if (seconds > 0) {
      scr_format_bytes(s->bytes / seconds, bw, sizeof(bw));
      fprintf(out, " at %s/s", bw);
    }
  }
  if (s->what[0]) {
    fputs("; ", out);
    svg_text(out, s->what);
  }
  fputs("</title>", out);
}

static int scr_timeline_svg(const struct scr_timeline* tl, const char* job, const struct scr_totals* t, FILE* out)
{
  double start = tl->nruns ? tl->runs[0].t0 : 0, end = start;
  for (size_t r = 0; r < tl->nruns; r++) if (tl->runs[r].t1 > end) end = tl->runs[r].t1;
  for (size_t i = 0; i < tl->nspans; i++) if (tl->spans[i].t1 > end) end = tl->spans[i].t1;
  double span = end > start ? end - start : 1.0;
  double plot = SVG_WIDTH - SVG_LEFT - SVG_RIGHT;
  int height = SVG_TOP + (int) tl->nruns * SVG_ROW + 70;
#define X(t) (SVG_LEFT + ((t) - start) / span * plot)

  fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", SVG_WIDTH, height, SVG_WIDTH, height);
  fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", SVG_WIDTH, height);
  fprintf(out, "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">job ");
  svg_text(out, job);
  char b[32];
  scr_format_bytes(tl->bytes_checkpointed, b, sizeof(b));
  double overhead = t->seconds[SPAN_WRITE] + t->seconds[SPAN_ENCODE] + t->seconds[SPAN_FLUSH] + t->seconds[SPAN_RESTORE];
  fprintf(out, ": %zu runs, %d failed, %d checkpoints (%s), overhead %.1f%%</text>\n", tl->nruns, t->failures,
          tl->checkpoints, b, t->run_seconds > 0 ? 100.0 * overhead / t->run_seconds : 0.0);

  /* the time axis, in seconds since the first run began */
  double step = svg_tick_step(span);
  int axis_y = SVG_TOP - 10, bottom = SVG_TOP + (int) tl->nruns * SVG_ROW;
  fprintf(out, "<g class=\"axis\" stroke=\"#888888\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", SVG_LEFT,
          axis_y, SVG_WIDTH - SVG_RIGHT, axis_y);
  for (double tick = 0; tick <= span + step * 1e-9; tick += step) {
    double x = X(start + tick);
    fprintf(out, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke-dasharray=\"2,3\" stroke=\"#dddddd\"/>\n",
            x, axis_y, x, bottom);
    fprintf(out, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\" stroke=\"none\" fill=\"#444444\">%g s</text>\n", x,
            axis_y - 4, tick);
  }
  fputs("</g>\n", out);

  for (size_t r = 0; r < tl->nruns; r++) {
    const struct scr_run* run = &tl->runs[r];
    int y = SVG_TOP + (int) r * SVG_ROW;
    fprintf(out, "<g class=\"run\" id=\"run%zu\">\n<text x=\"10\" y=\"%d\">%s %zu</text>\n", r + 1, y + 16,
            run->scavenge ? "scavenge" : "run", r + 1);
    fprintf(out, "<text x=\"10\" y=\"%d\" font-size=\"10\" fill=\"#666666\">%d ranks, %d node%s</text>\n", y + 30,
            run->ranks, run->nodes, run->nodes == 1 ? "" : "s");
    /* compute first, so that a short span widened to a pixel lies on top */
    for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < tl->nspans; i++) {
      const struct scr_span* s = &tl->spans[i];
      if (s->run != (int) r || (s->kind == SPAN_COMPUTE) != (pass == 0)) continue;
      double x0 = X(s->t0), w = X(s->t1) - x0;
      /* everything that happened stays visible, however short */
      if (w < 1.0) w = 1.0;
      int top = s->kind == SPAN_FLUSH_ASYNC ? y + SVG_BAR + 2 : y;
      int h = s->kind == SPAN_FLUSH_ASYNC ? SVG_ASYNC : SVG_BAR;
      fprintf(out, "<rect class=\"span %s\" data-dset=\"%d\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"%s>",
              scr_span_class[s->kind], s->dset, x0, top, w, h, scr_span_fill[s->kind],
              s->kind == SPAN_LOST ? " fill-opacity=\"0.6\"" : "");
      svg_span_title(out, s);
      fputs("</rect>\n", out);
    }
    }
    for (size_t m = 0; m < tl->nmarkers; m++) {
      const struct scr_marker* mk = &tl->markers[m];
      if (mk->run != (int) r) continue;
      double x = X(mk->t);
      if (mk->failure) {
        /* a red cross where the run's record stops */
        fprintf(out, "<path class=\"marker failure\" d=\"M %.2f %d L %.2f %d M %.2f %d L %.2f %d\" stroke=\"#d62728\" "
                     "stroke-width=\"4\">", x - 7, y - 2, x + 7, y + SVG_BAR + 2, x + 7, y - 2, x - 7, y + SVG_BAR + 2);
      } else {
        /* a black diamond above the bar */
        fprintf(out, "<path class=\"marker halt\" d=\"M %.2f %d L %.2f %d L %.2f %d L %.2f %d Z\" fill=\"#222222\">",
                x, y - 6, x + 6, y + 2, x, y + 10, x - 6, y + 2);
      }
      fputs("<title>", out);
      svg_text(out, mk->what);
      fputs("</title></path>\n", out);
    }
    fputs("</g>\n", out);
  }

  /* the legend */
  int ly = bottom + 24, lx = SVG_LEFT;
  fputs("<g class=\"legend\">\n", out);
  static const enum scr_span_kind shown[] = {
    SPAN_COMPUTE, SPAN_WRITE, SPAN_ENCODE, SPAN_FLUSH, SPAN_FLUSH_ASYNC, SPAN_RESTORE, SPAN_LOST
  };
  for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
    int col = (int) (i % 4), row = (int) (i / 4);
    int x = lx + col * 200, yy = ly + row * 18;
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
            x, yy - 10, scr_span_fill[shown[i]], x + 16, yy, scr_span_label[shown[i]]);
  }
  /* the markers' keys, in the fourth column of the swatches' second line */
  int mx = lx + 600, my = ly + 18 - 10;
  ly += 18;
  fprintf(out, "<path d=\"M %d %d L %d %d M %d %d L %d %d\" stroke=\"#d62728\" stroke-width=\"3\"/>"
               "<text x=\"%d\" y=\"%d\">failure</text>\n", mx, my, mx + 12, my + 12, mx + 12, my, mx, my + 12,
          mx + 16, ly);
  mx += 100;
  fprintf(out, "<path d=\"M %d %d L %d %d L %d %d L %d %d Z\" fill=\"#222222\"/><text x=\"%d\" y=\"%d\">halt</text>\n",
          mx + 6, my, mx + 12, my + 6, mx + 6, my + 12, mx, my + 6, mx + 16, ly);
  fputs("</g>\n</svg>\n", out);
#undef X
  return ferror(out) ? -1 : 0;
}

/* ---- command line ---- */

int main(int argc, char** argv)
{
  static const struct option options[] = {
    {"prefix", required_argument, NULL, 'p'},
    {"job", required_argument, NULL, 'j'},
    {"svg", required_argument, NULL, 's'},
    {"mtbf", required_argument, NULL, 'm'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
  };
  const char* prefix = NULL;
  const char* job = NULL;
  const char* svg = NULL;
  const char* mtbf_text = NULL;
  const char* mtbf_from = "--mtbf";
  int opt;
  scr_log_program = "scr_log";
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":p:j:s:m:h", options, NULL)) != -1) {
    switch (opt) {
    case 'p': prefix = optarg; break;
    case 'j': job = optarg; break;
    case 's': svg = optarg; break;
    case 'm': mtbf_text = optarg; break;
    case 'h':
      scr_log_usage(stdout);
      return 0;
    case ':':
      scr_err("option '%s' needs a value: see scr_log --help", argv[optind - 1]);
      return SCR_LOG_EXIT_USAGE;
    default:
      scr_err("unknown option '%s': see scr_log --help", argv[optind - 1]);
      return SCR_LOG_EXIT_USAGE;
    }
  }
  if (optind < argc) {
    scr_err("unexpected argument '%s': name the prefix with --prefix DIR", argv[optind]);
    return SCR_LOG_EXIT_USAGE;
  }
  if (!mtbf_text && getenv("SCR_MTBF") && *getenv("SCR_MTBF")) {
    mtbf_text = getenv("SCR_MTBF");
    mtbf_from = "SCR_MTBF";
  }
  double mtbf = 0;
  if (mtbf_text && scr_interval_parse(mtbf_text, &mtbf) != 0) {
    scr_err("%s=%s is not a duration: give seconds or a number with s, m, h or d (6h)", mtbf_from, mtbf_text);
    return SCR_LOG_EXIT_USAGE;
  }
  if (!prefix) prefix = getenv("SCR_PREFIX") && *getenv("SCR_PREFIX") ? getenv("SCR_PREFIX") : ".";

  char path[4096];
  snprintf(path, sizeof(path), "%s/.scr/log", prefix);
  FILE* f = fopen(path, "r");
  if (!f) {
    scr_err("cannot read the event log %s: %s (SCR_LOG_ENABLE=0, or no run used this prefix)", path,
            strerror(errno));
    return SCR_LOG_EXIT_FAILED;
  }
  size_t count = 0;
  char* shown = NULL;
  struct scr_log_event* events = scr_log_read(f, job, &count, &shown);
  fclose(f);
  if (!events || count == 0) {
    scr_err("no events of job %s in %s", shown && *shown ? shown : "?", path);
    free(events);
    free(shown);
    return SCR_LOG_EXIT_FAILED;
  }

  struct scr_timeline tl;
  memset(&tl, 0, sizeof(tl));
  scr_timeline_build(&tl, events, count);
  scr_timeline_compute(&tl);
  struct scr_totals totals;
  scr_timeline_totals(&tl, mtbf, mtbf_from, &totals);
  scr_text = svg && strcmp(svg, "-") == 0 ? stderr : stdout;
  scr_timeline_print(&tl, shown, &totals);
  struct scr_recovery* failures = NULL;
  size_t nfailures = scr_recovery_find(events, count, &failures);
  double first = events[0].time;
  for (size_t i = 1; i < count; i++) if (events[i].time < first) first = events[i].time;
  scr_recovery_print(scr_text, failures, nfailures, first);
  free(failures);

  int rc = 0;
  if (svg) {
    FILE* out = strcmp(svg, "-") == 0 ? stdout : fopen(svg, "w");
    if (!out || scr_timeline_svg(&tl, shown, &totals, out) != 0 || (out != stdout && fclose(out) != 0)) {
      scr_err("cannot write %s: %s", svg, strerror(errno));
      rc = SCR_LOG_EXIT_FAILED;
    } else if (out != stdout) {
      printf("timeline: %s\n", svg);
    }
  }
  for (size_t i = 0; i < count; i++) free(events[i].words);
  free(events);
  free(shown);
  free(tl.runs);
  free(tl.spans);
  free(tl.markers);
  return rc;
}
