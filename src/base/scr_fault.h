/* scr_fault.h - test hooks that kill the process (SCR_FAULT_KILL) or damage files
 * (SCR_FAULT_CORRUPT) at named points of the library, so crash consistency and
 * the detection of silent corruption can be tested at the worst moments. */
#ifndef SCR_FAULT_H
#define SCR_FAULT_H

/* the most kill points SCR_FAULT_KILL may list, and the longest point name */
#define SCR_FAULT_MAX 16
#define SCR_FAULT_NAME 32

/* the longest file pattern of an SCR_FAULT_CORRUPT entry */
#define SCR_FAULT_PATTERN 256

/* one entry of SCR_FAULT_KILL: "WHERE:N" or "WHERE:N@RANK"; or of
 * SCR_FAULT_CORRUPT: the same followed by ":PATTERN" */
struct scr_fault_spec {
  char where[SCR_FAULT_NAME];
  long count; /* the N-th time the point is reached kills, 1-based */
  int rank;   /* only on this rank; -1: on every rank */
  char pattern[SCR_FAULT_PATTERN]; /* SCR_FAULT_CORRUPT: fnmatch(3) glob of full paths */
};

/* parse a comma-separated list of entries into specs (at most max); returns
 * how many, or -1 when the text is malformed (specs then undefined) */
int scr_fault_parse(const char* text, struct scr_fault_spec* specs, int max);
/* the same for SCR_FAULT_CORRUPT entries, "WHERE:N[@RANK]:PATTERN" (the
 * pattern ends at a comma or the end) */
int scr_fault_parse_corrupt(const char* text, struct scr_fault_spec* specs, int max);

/* the directories SCR_FAULT_CORRUPT looks for files in (the cache, the
 * prefix directory's .scr): up to 4, copied; NULL entries are skipped */
void scr_fault_set_roots(const char* const* roots, int count);

/* the MPI layer says which rank this process is, once it knows; before
 * that, PMI_RANK from the launcher stands for it */
void scr_fault_set_rank(int rank);

/* 0 once SCR_FAULT_KILL and SCR_FAULT_CORRUPT are known to be unset (or names nothing), so that a
 * point costs one predictable branch in a normal run; 1 until first read */
extern int scr_fault_armed;

/* reached point `where`: first flip one byte in each file SCR_FAULT_CORRUPT
 * names for it, then raise(SIGKILL) when SCR_FAULT_KILL says so */
void scr_fault_reached(const char* where);

static inline void scr_fault_point(const char* where)
{
  if (__builtin_expect(scr_fault_armed, 0)) scr_fault_reached(where);
}

#endif
