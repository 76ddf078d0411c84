/* scr_preload_report.h - what the preload layer says about itself: dry-run and
 * debug lines once per file, and the counts behind the summary at finalize. */
#ifndef SCR_PRELOAD_REPORT_H
#define SCR_PRELOAD_REPORT_H

#include "scr_preload_hooks.h"

/* what became of an open of a matching path */
enum scr_preload_decision {
  SCR_PRELOAD_DECISION_DRYRUN = 0,      /* SCR_PRELOAD_DRYRUN=1: nothing was asked */
  SCR_PRELOAD_DECISION_PASSED = 1,      /* the engine let the real open go ahead */
  SCR_PRELOAD_DECISION_ROUTED = 2,      /* the engine opened the file itself */
  SCR_PRELOAD_DECISION_REDIRECTED = 3   /* the real open went to the engine's path */
};

/* count an open of t and, once per distinct path, say so: in dry run (to
 * stderr, with the rank when known) which rule it would have matched, with
 * its text and FILE:LINE; at SCR_DEBUG >= 1 the decision. Keeps errno. */
void scr_preload_report_open(const scr_preload_target* t, int decision);

/* what the layer itself counted since the rules were loaded */
typedef struct {
  long long opens;        /* opens that matched a rule (CALLER= included) */
  long long files;        /* distinct paths among them */
  long long routed;       /* opens the engine routed or redirected */
} scr_preload_counts;
SCR_PRELOAD_API void scr_preload_report_counts(scr_preload_counts* counts);

/* the engine's share of the summary; a negative value is unknown and left out */
typedef struct {
  long long datasets;
  long long bytes;
  double checkpoint_seconds;
  double redundancy_seconds;
  double flush_seconds;
} scr_preload_summary;

/* print the one summary line (the caller decides who prints: rank 0 at
 * MPI_Finalize), the layer's counts followed by the engine's, e.g.
 * "preload summary: 16 opens of 8 files matched, 8 routed; 2 datasets,
 *  1.0 GiB, checkpoint 2.10 s, redundancy 0.30 s, flush 4.00 s, 487.6 MiB/s" */
SCR_PRELOAD_API void scr_preload_report_summary(const scr_preload_summary* engine);

/* fork: hold the table lock across fork, fresh lock in the child */
void scr_preload_report_atfork_prepare(void);
void scr_preload_report_atfork_parent(void);
void scr_preload_report_atfork_child(void);

#endif
