/* scr_preload_rules.h - the PRELOAD rules of the configuration compiled into a
 * matcher that tells, without allocating, which rule a file path falls under. */
#ifndef SCR_PRELOAD_RULES_H
#define SCR_PRELOAD_RULES_H

#include <stddef.h>
#include "scr_kvtree.h"

/* libscr_preload.so is built with hidden visibility, so that its internal
 * calls and data need no PLT or GOT: pages a pass-through call would
 * otherwise touch. What it exports besides the wrapped functions (the hooks,
 * and what tests and tools look up with dlsym) is marked: */
#ifndef SCR_PRELOAD_API
#define SCR_PRELOAD_API __attribute__((visibility("default")))
#endif
/* the screens every call on a foreign path runs: grouped in .text.hot, a
 * few hundred bytes side by side; code only a match reaches is cold. Each
 * starts a cache line: after a system call every line a call runs costs,
 * and unaligned starts made the cost move by up to 1% of an open+close
 * whenever code elsewhere in .text.hot changed size (t/perf) */
#ifndef SCR_PRELOAD_HOT
#define SCR_PRELOAD_HOT __attribute__((hot, aligned(64)))
#define SCR_PRELOAD_COLD __attribute__((cold, noinline))
#endif

/* Pattern syntax (one rule per PRELOAD descriptor; the pattern is its value):
 *   relative to the prefix directory, or absolute
 *   *        any characters except '/'
 *   ?        one character except '/'
 *   [abc] [a-z] [!a] [^a]   one character of (or not of) a set, never '/'
 *   **       as a whole component ("a/ ** /b" without blanks): zero or more
 *            directories; elsewhere: any characters, '/' included
 *   {step}   1 to 18 digits: the dataset key (at most once per pattern)
 *   {rank}   1 to 18 digits: the rank that writes the file (at most once)
 *   \c       the character c itself
 * "." and "//" are dropped and ".." cancels the literal component before it,
 * as paths are normalized before matching. Wildcards take as few characters
 * as they can and placeholders as many, so "ckpt*{step}" captures every digit
 * of "ckpt.12". The first rule in configuration order that matches wins. */

enum scr_preload_rule_type {
  SCR_PRELOAD_TYPE_CHECKPOINT = 0,   /* cached, protected, kept for restart */
  SCR_PRELOAD_TYPE_OUTPUT = 1        /* must reach the prefix directory; not for restart */
};

/* when a dataset that a rule feeds is complete (see DESIGN.md §6.3) */
enum scr_preload_rule_boundary {
  SCR_PRELOAD_BOUNDARY_CLOSE = 0,    /* close of the rank's last expected file */
  SCR_PRELOAD_BOUNDARY_BARRIER = 1,  /* next MPI_Barrier on MPI_COMM_WORLD */
  SCR_PRELOAD_BOUNDARY_NEXT = 2,     /* start of the next dataset */
  SCR_PRELOAD_BOUNDARY_FINALIZE = 3  /* MPI_Finalize */
};

/* one compiled rule as the rest of the preload layer sees it */
typedef struct {
  const char* pattern;     /* as written in the configuration */
  const char* path;        /* the absolute, normalized pattern it compiled to */
  const char* origin;      /* "FILE:LINE" of its descriptor, or NULL */
  const char* directory;   /* deepest literal directory of the pattern: "/p" for
                            * "/p/ckpt.{step}/x", "/" for "/x*" */
  int type;                /* enum scr_preload_rule_type */
  int boundary;            /* enum scr_preload_rule_boundary */
  long long files;         /* FILES=, 0 when not given */
  const char* caller;      /* CALLER= function glob, or NULL */
  int has_step;            /* the pattern holds {step} */
  int has_rank;            /* the pattern holds {rank} */
} scr_preload_rule;

/* what a successful match found; offsets index the path that was matched */
typedef struct {
  int rule;                /* index of the first rule that matches, -1 for none */
  long long step;          /* value of {step}, -1 when the rule has none */
  long long rank;          /* value of {rank}, -1 when the rule has none */
  size_t step_offset;      /* the {step} digits as written (leading zeros kept) */
  size_t step_length;      /* 0 when the rule has no {step} */
  size_t rank_offset;
  size_t rank_length;
} scr_preload_match;

typedef struct scr_preload_ruleset scr_preload_ruleset;

/* compile the PRELOAD descriptors, a tree pattern -> { TYPE, FILES, BOUNDARY,
 * CALLER, optionally "@ORIGIN" } as scr_param_get_descriptors("PRELOAD") or
 * a parsed file's tree["PRELOAD"] gives it; prefix is the absolute directory
 * relative patterns start from. NULL or empty descriptors give an empty rule
 * set. On a bad pattern returns SCR_ERR_CONFIG and writes one line into
 * errbuf: "FILE:LINE: key PRELOAD: pattern 'P': what is wrong"; the origin is
 * "@ORIGIN" or else scr_param_descriptor_origin. */
int scr_preload_rules_compile(const scr_kvtree* descriptors, const char* prefix,
                              scr_preload_ruleset** ruleset, char* errbuf, size_t errlen);

/* free the rule set and set *ruleset to NULL; NULL-safe */
void scr_preload_rules_free(scr_preload_ruleset** ruleset);

/* number of rules, and rule index (0 .. count-1) for messages and decisions */
SCR_PRELOAD_API int scr_preload_rules_count(const scr_preload_ruleset* ruleset);
SCR_PRELOAD_API const scr_preload_rule* scr_preload_rules_at(const scr_preload_ruleset* ruleset, int index);

/* the literal text every file any rule can match starts with */
const char* scr_preload_rules_common_prefix(const scr_preload_ruleset* ruleset);
/* the longest directory (ending in '/') every rule's literal prefix starts
 * with, NULL when there is none, in a buffer of size bytes */
const char* scr_preload_rules_common_directory(const scr_preload_ruleset* ruleset, char* buffer, size_t size);

/* index of the rule that matches the absolute, normalized path of length
 * bytes, or -1; result (may be NULL) gets the captures. A path outside the
 * rules' common literal prefix costs one memcmp. Never allocates; safe to
 * call from many threads at once. Exported for the engine (which rule wrote
 * a cached file); the wrappers' own lookups call _match_from. */
SCR_PRELOAD_API int scr_preload_rules_match(const scr_preload_ruleset* ruleset, const char* path, size_t length,
                                            scr_preload_match* result);

/* the same, trying only rules first .. count-1: the next candidate when the
 * rule that matched is ruled out for another reason (its CALLER= is not on
 * the stack) */
int scr_preload_rules_match_from(const scr_preload_ruleset* ruleset, int first, const char* path,
                                 size_t length, scr_preload_match* result);

/* 1 when some rule's last component can match the file name (no '/'), so
 * that a relative path whose name no rule has is ruled out before looking up
 * the directory it is relative to; 0 otherwise. Never allocates. */
int scr_preload_rules_match_name(const scr_preload_ruleset* ruleset, const char* name, size_t length);

/* 0 when the file name (no '/') cannot be the last component of any rule,
 * by a filter of each rule's literal first and last two bytes and shortest
 * name, evaluated without a branch per rule; 1 when it may (then
 * scr_preload_rules_match_name decides exactly). "." and ".." may. */
int scr_preload_rules_name_may_match(const scr_preload_ruleset* ruleset, const char* name, size_t length);

/* what the absolute, normalized path of length bytes, whose file name
 * starts at name_offset, cannot be: ALL when it is neither a rule's file nor
 * a rule directory (outside the rules' common directory); FILE when it is no
 * rule's file (outside the common prefix, or its name passes no rule's
 * filter) but may be a rule directory; NONE when a rule may match it
 * (scr_preload_rules_match decides). The pass-through path of the wrappers. */
enum { SCR_PRELOAD_EXCLUDE_NONE = 0, SCR_PRELOAD_EXCLUDE_FILE = 1, SCR_PRELOAD_EXCLUDE_ALL = 2 };
int scr_preload_rules_exclude(const scr_preload_ruleset* ruleset, const char* path, size_t length,
                              size_t name_offset);

/* index of a rule that could place files in the directory or below it, or
 * -1: the rule's literal directory itself and any directory the pattern's
 * leading components can match ("/p" and "/p/ckpt.7" for
 * "/p/ckpt.{step}/rank_{rank}.dat"). The path is absolute and normalized;
 * result gets {step} and {rank} when the directory holds them. */
int scr_preload_rules_match_directory(const scr_preload_ruleset* ruleset, const char* path,
                                      size_t length, scr_preload_match* result);

/* 1 when the directory (absolute, normalized) is the prefix directory or one
 * below it on the way to a rule's literal directory ("/p" and "/p/out" for
 * the rule "/p/out/data/f_{step}" under the prefix "/p"): not a rule
 * directory, but one whose listing may show a directory that exists only in
 * the view */
int scr_preload_rules_leads_to_directory(const scr_preload_ruleset* ruleset, const char* path, size_t length);

#endif
