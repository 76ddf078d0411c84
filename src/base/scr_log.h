/* scr_log.h - messages to stderr in one format: who (rank, host) said what.
 * MPI-free: the MPI layer sets scr_log_rank once it knows the rank. */
#ifndef SCR_LOG_H
#define SCR_LOG_H

#include <stdarg.h>

/* rank of this process in MPI_COMM_WORLD, -1 outside an MPI job */
extern int scr_log_rank;

/* SCR_DEBUG level: 0 silent, 1 decisions, 2 details */
extern int scr_log_debug_level;

/* program name used as prefix by commands (NULL in the library) */
extern const char* scr_log_program;

/* "SCR ERROR: rank R on HOST: message" */
void scr_err(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/* "SCR WARNING: ..." */
void scr_warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/* "SCR: ..." printed when level <= scr_log_debug_level */
void scr_dbg(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* informational line, always printed */
void scr_info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/* seconds since the epoch as a double, for timing */
double scr_log_seconds(void);

#endif
