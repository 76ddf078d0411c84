/* scr_fault.h - test hooks that kill the process at named points of the library
 * (SCR_FAULT_KILL), so crash consistency can be tested at the worst moments. */
#ifndef SCR_FAULT_H
#define SCR_FAULT_H

/* the most kill points SCR_FAULT_KILL may list, and the longest point name */
#define SCR_FAULT_MAX 16
#define SCR_FAULT_NAME 32

/* one entry of SCR_FAULT_KILL: "WHERE:N" or "WHERE:N@RANK" */
struct scr_fault_spec {
  char where[SCR_FAULT_NAME];
  long count; /* the N-th time the point is reached kills, 1-based */
  int rank;   /* only on this rank; -1: on every rank */
};

/* parse a comma-separated list of entries into specs (at most max); returns
 * how many, or -1 when the text is malformed (specs then undefined) */
int scr_fault_parse(const char* text, struct scr_fault_spec* specs, int max);

/* the MPI layer says which rank this process is, once it knows; before
 * that, PMI_RANK from the launcher stands for it */
void scr_fault_set_rank(int rank);

/* 0 once SCR_FAULT_KILL is known to be unset (or names nothing), so that a
 * point costs one predictable branch in a normal run; 1 until first read */
extern int scr_fault_armed;

/* reached point `where`: raise(SIGKILL) when SCR_FAULT_KILL says so */
void scr_fault_reached(const char* where);

static inline void scr_fault_point(const char* where)
{
  if (__builtin_expect(scr_fault_armed, 0)) scr_fault_reached(where);
}

#endif
