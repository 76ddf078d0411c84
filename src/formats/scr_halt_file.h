/* scr_halt_file.h - <prefix>/.scr/halt.scr: conditions under which a run must stop,
 * set by the scr_halt command and read (and counted down) by the library. MPI-free. */
#ifndef SCR_HALT_FILE_H
#define SCR_HALT_FILE_H

#include <stddef.h>
#include <time.h>
#include "scr_kvtree.h"

/* Layout (key names as LLNL SCR, so halt files are interchangeable):
 *   ExitReason      = <text>   any value means: halt
 *   CheckpointsLeft = <n>      halt once n more checkpoints have completed
 *   ExitAfter       = <epoch>  halt once the clock reaches this time
 *   ExitBefore      = <epoch>  halt HaltSeconds before this time
 *   HaltSeconds     = <n>      overrides SCR_HALT_SECONDS for ExitBefore
 */
#define SCR_HALT_KEY_EXIT_REASON      "ExitReason"
#define SCR_HALT_KEY_CHECKPOINTS_LEFT "CheckpointsLeft"
#define SCR_HALT_KEY_EXIT_AFTER       "ExitAfter"
#define SCR_HALT_KEY_EXIT_BEFORE      "ExitBefore"
#define SCR_HALT_KEY_HALT_SECONDS     "HaltSeconds"

/* ExitReason written by "scr_halt" without conditions: the run stops after
 * its next checkpoint */
#define SCR_HALT_REASON_HALT      "SCR_HALT"
/* ExitReason written by "scr_halt --immediate": the run stops at its next SCR
 * call without waiting for a checkpoint */
#define SCR_HALT_REASON_IMMEDIATE "SCR_HALT_IMMEDIATE"

/* "<prefix>/.scr/halt.scr", malloc'd (NULL on an empty prefix) */
char* scr_halt_file_path(const char* prefix);

/* read-modify-write under an exclusive lock on <prefix>/.scr/halt.scr.lock
 * (.scr created if missing). modify edits the tree read from the file (empty
 * if there is none); if it returns anything but SCR_SUCCESS nothing is written
 * and that code is returned. An empty tree removes the file. */
int scr_halt_file_update(const char* prefix, int (*modify)(scr_kvtree* halt, void* arg), void* arg);

/* merges the file into halt; a missing file leaves halt untouched (SCR_SUCCESS) */
int scr_halt_file_read(const char* prefix, scr_kvtree* halt);

/* 1 if a condition in halt says to stop at time now, with a sentence for the
 * user in reason (may be NULL), else 0. halt_seconds (SCR_HALT_SECONDS) is the
 * margin before ExitBefore unless the file sets HaltSeconds. */
int scr_halt_file_check(const scr_kvtree* halt, time_t now, long long halt_seconds,
                        char* reason, size_t len);

/* 1 if halt asks to stop at the next SCR call rather than after a checkpoint */
int scr_halt_file_is_immediate(const scr_kvtree* halt);

/* after a completed checkpoint: decrements CheckpointsLeft if the file sets
 * it (under the lock); nothing to do without a halt file */
int scr_halt_file_count_checkpoint(const char* prefix);

/* parses a TIME argument into seconds since the epoch:
 *   "YYYY-MM-DD HH:MM[:SS]" (or with 'T' between), local time
 *   "HH:MM[:SS]"            today, or tomorrow if that is not after now
 *   "@EPOCH"                seconds since the epoch
 *   "+N<unit>"              now plus N s(econds), m(inutes), h(ours) or d(ays)
 * SCR_ERR_INVALID (nothing logged) when text is none of these */
int scr_halt_file_parse_time(const char* text, time_t now, time_t* out);

/* "YYYY-MM-DD HH:MM:SS" in local time, into buf */
void scr_halt_file_format_time(time_t when, char* buf, size_t len);

#endif
