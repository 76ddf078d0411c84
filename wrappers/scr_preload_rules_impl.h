/* scr_preload_rules_impl.h - the compiled form of the PRELOAD rules, shared by
 * the compiler (scr_preload_rules.c) and the matcher (scr_preload_match.c) only. */
#ifndef SCR_PRELOAD_RULES_IMPL_H
#define SCR_PRELOAD_RULES_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "scr_preload_rules.h"

/* at most this many digits in a placeholder, so that the value fits a long long */
#define RULES_PLACEHOLDER_DIGITS 18

typedef struct {
  unsigned char bits[32];        /* one bit per byte value */
} char_set;

static inline void set_add(char_set* set, unsigned char c) { set->bits[c >> 3] |= (unsigned char) (1u << (c & 7)); }
static inline int set_has(const char_set* set, unsigned char c) { return (set->bits[c >> 3] >> (c & 7)) & 1; }

enum token_kind {
  TOKEN_LITERAL,      /* bytes text[offset .. offset+length) */
  TOKEN_ONE,          /* ? */
  TOKEN_SET,          /* [..]: sets[offset] */
  TOKEN_STAR,         /* * */
  TOKEN_ANY,          /* ** inside a component: anything, '/' included */
  TOKEN_DIRECTORIES,  /* ** / as a whole component: "" or "a/", "a/b/", ... */
  TOKEN_STEP,         /* {step} */
  TOKEN_RANK          /* {rank} */
};

typedef struct {
  int kind;
  size_t offset;
  size_t length;
} rule_token;

typedef struct {
  scr_preload_rule info;       /* what callers see; its strings are owned here */
  char* text;                  /* literal bytes; text[0 .. prefix_length) is the literal prefix */
  size_t prefix_length;        /* bytes before the first wildcard or placeholder */
  size_t directory_length;     /* literal prefix up to and including its last '/' */
  size_t suffix_length;        /* trailing literal checked before matching, 0 if none */
  size_t min_length;           /* no shorter path can match */
  rule_token* tokens;          /* tokens[0] is the literal prefix */
  int token_count;
  char_set* sets;
  int name_token;              /* where the last component starts: this token, */
  size_t name_offset;          /* from this byte of it when it is a literal */
  int name_spans;              /* 1 when ** lets the last component hold '/' */
} rule;

/* Which rules a file name may fit, read off four of its bytes and its
 * length: bit i of first[c] is set when rule i's names may start with byte
 * c (rules past the 31st share bit 31); second, penultimate and last do the
 * same for the name's second byte and its last two, where the pattern has
 * literal text, and length[n] for names of n bytes (the last entry: that
 * many or more), from the pattern's shortest. A name whose five entries
 * share no bit matches no rule: five loads and no branch, whatever the
 * number of rules, where a loop over them cost the screen three more lines
 * of code. Names shorter than two bytes are not filtered. */
#define RULES_NAME_LENGTHS 64
typedef struct {
  uint32_t first[256], second[256], penultimate[256], last[256];
  uint32_t length[RULES_NAME_LENGTHS];
} name_tables;

/* what a foreign path is compared with comes first, in one cache line:
 * after a system call that line may be all the rule set a call touches.
 * The screen compares a path's first 64 bytes with the whole line at once
 * (bytes past the common prefix are zero, and decide nothing) */
#define RULES_COMMON_INLINE 62
#define RULES_SCREEN_SCALAR 0xff  /* no rule, or a common prefix too long for the line */

struct scr_preload_ruleset {
  /* first cache line */
  char common_inline[RULES_COMMON_INLINE]; /* where common points when it fits */
  uint8_t screen_common_length;  /* common_length, or RULES_SCREEN_SCALAR */
  uint8_t screen_directory_length; /* common_directory_length when common fits */
  /* second */
  size_t common_length;
  size_t common_directory_length; /* the same over their literal directories (<= common_length) */
  char* common;                /* longest common prefix of the rules' literal prefixes */
  int count;
  int next_any;                /* some rule's literal prefix is the common prefix: any byte may follow */
  rule* rules;
  char* prefix;                /* the prefix directory, normalized, ending in '/' */
  size_t prefix_length;
  char_set next;               /* bytes that follow the common prefix in some rule's literal prefix */
  name_tables names;           /* what a file name is screened with */
};

#endif
