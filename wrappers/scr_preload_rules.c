/* scr_preload_rules.c - compiles PRELOAD patterns into token lists and matches
 * paths against them; the match path is built so that a miss costs a memcmp. */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "scr_error.h"
#include "scr_param.h"
#include "scr_preload_rules.h"

/* at most this many digits in a placeholder, so that the value fits a long long */
#define RULES_PLACEHOLDER_DIGITS 18

/* --- lexing: one pattern element at a time, shared by validation and compilation */

enum lexeme_kind { LEX_CHAR, LEX_SLASH, LEX_ONE, LEX_STARS, LEX_SET, LEX_STEP, LEX_RANK };

enum lex_error {
  LEX_OK = 0, LEX_UNCLOSED_SET, LEX_EMPTY_SET, LEX_REVERSED_RANGE, LEX_UNCLOSED_BRACE,
  LEX_UNKNOWN_PLACEHOLDER, LEX_STRAY_BRACE, LEX_BAD_BACKSLASH
};

typedef struct {
  unsigned char bits[32];        /* one bit per byte value */
} char_set;

typedef struct {
  int kind;                      /* enum lexeme_kind */
  unsigned char c;               /* LEX_CHAR: the character */
  size_t stars;                  /* LEX_STARS: length of the run of '*' */
  char_set set;                  /* LEX_SET: the characters it accepts */
  size_t length;                 /* bytes of pattern text consumed */
} lexeme;

static void set_add(char_set* set, unsigned char c) { set->bits[c >> 3] |= (unsigned char) (1u << (c & 7)); }
static int set_has(const char_set* set, unsigned char c) { return (set->bits[c >> 3] >> (c & 7)) & 1; }

/* "[...]" starting at s[0] == '['; the set never accepts '/' */
static int lex_set(const char* s, lexeme* out)
{
  size_t i = 1;
  int negate = s[i] == '!' || s[i] == '^';
  if (negate) i++;
  memset(&out->set, 0, sizeof(out->set));
  int first = 1;
  for (;; first = 0) {
    if (s[i] == '\0' || s[i] == '/') return LEX_UNCLOSED_SET;
    if (s[i] == ']' && !first) break;
    unsigned char low = (unsigned char) s[i];
    if (low == '\\') {
      if (s[i + 1] == '\0' || s[i + 1] == '/') return LEX_BAD_BACKSLASH;
      low = (unsigned char) s[++i];
    }
    i++;
    unsigned char high = low;
    if (s[i] == '-' && s[i + 1] != ']' && s[i + 1] != '\0' && s[i + 1] != '/') {
      high = (unsigned char) s[i + 1];
      i += 2;
      if (high == '\\') {
        if (s[i] == '\0' || s[i] == '/') return LEX_BAD_BACKSLASH;
        high = (unsigned char) s[i++];
      }
      if (high < low) return LEX_REVERSED_RANGE;
    }
    for (unsigned c = low; c <= high; c++) set_add(&out->set, (unsigned char) c);
  }
  if (negate) {
    for (size_t b = 0; b < sizeof(out->set.bits); b++) out->set.bits[b] = (unsigned char) ~out->set.bits[b];
    out->set.bits[0] &= (unsigned char) ~1u;   /* NUL never occurs in a path */
  }
  out->set.bits['/' >> 3] &= (unsigned char) ~(1u << ('/' & 7));
  int empty = 1;
  for (size_t b = 0; b < sizeof(out->set.bits); b++) empty &= out->set.bits[b] == 0;
  if (empty) return LEX_EMPTY_SET;
  out->kind = LEX_SET;
  out->length = i + 1;
  return LEX_OK;
}

/* the element starting at s[0] (not NUL) */
static int lex(const char* s, lexeme* out)
{
  out->length = 1;
  switch (s[0]) {
  case '/': out->kind = LEX_SLASH; return LEX_OK;
  case '?': out->kind = LEX_ONE; return LEX_OK;
  case '*':
    out->kind = LEX_STARS;
    out->stars = strspn(s, "*");
    out->length = out->stars;
    return LEX_OK;
  case '[': return lex_set(s, out);
  case '{': {
    size_t close = strcspn(s, "}/");
    if (s[close] != '}') return LEX_UNCLOSED_BRACE;
    if (close == 5 && memcmp(s, "{step", 5) == 0) out->kind = LEX_STEP;
    else if (close == 5 && memcmp(s, "{rank", 5) == 0) out->kind = LEX_RANK;
    else return LEX_UNKNOWN_PLACEHOLDER;
    out->length = close + 1;
    return LEX_OK;
  }
  case '}': return LEX_STRAY_BRACE;
  case '\\':
    if (s[1] == '\0' || s[1] == '/') return LEX_BAD_BACKSLASH;
    out->kind = LEX_CHAR;
    out->c = (unsigned char) s[1];
    out->length = 2;
    return LEX_OK;
  default:
    out->kind = LEX_CHAR;
    out->c = (unsigned char) s[0];
    return LEX_OK;
  }
}

/* --- compiled rules */

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

struct scr_preload_ruleset {
  rule* rules;
  int count;
  char* common;                /* longest common prefix of the rules' literal prefixes */
  size_t common_length;
  size_t common_directory_length; /* the same over their literal directories (<= common_length) */
  char_set next;               /* bytes that follow the common prefix in some rule's literal prefix */
  int next_any;                /* some rule's literal prefix is the common prefix: any byte may follow */
};

typedef struct {
  const char* step;
  size_t step_length;
  const char* rank;
  size_t rank_length;
} captures;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* memcmp(a, b, n) == 0, deciding most mismatches on the first byte without a call */
static inline int bytes_equal(const char* a, const char* b, size_t n)
{
  return n == 0 || (a[0] == b[0] && memcmp(a + 1, b + 1, n - 1) == 0);
}

/* match tokens [t, last) against [s, end). In prefix mode, also succeed when
 * the text runs out first: used to ask whether a directory can lead to a match.
 * Wildcards try short first, placeholders long first. */
static int match_tokens(const rule* r, int t, int last, const char* s, const char* end,
                        captures* cap, int prefix_mode)
{
  for (;; t++) {
    if (prefix_mode && s == end) return 1;
    if (t == last) return s == end;
    const rule_token* k = &r->tokens[t];
    switch (k->kind) {
    case TOKEN_LITERAL: {
      size_t available = (size_t) (end - s);
      if (available < k->length)
        return prefix_mode && bytes_equal(s, r->text + k->offset, available);
      if (!bytes_equal(s, r->text + k->offset, k->length)) return 0;
      s += k->length;
      break;
    }
    case TOKEN_ONE:
      if (s == end || *s == '/') return 0;
      s++;
      break;
    case TOKEN_SET:
      if (s == end || !set_has(&r->sets[k->offset], (unsigned char) *s)) return 0;
      s++;
      break;
    case TOKEN_STAR:
    case TOKEN_ANY: {
      /* when a literal follows, only the places holding its first byte can work */
      int first = t + 1 < last && r->tokens[t + 1].kind == TOKEN_LITERAL ?
                  (unsigned char) r->text[r->tokens[t + 1].offset] : -1;
      for (const char* p = s;; p++) {
        if ((first < 0 || (p < end && (unsigned char) *p == first) || (prefix_mode && p == end)) &&
            match_tokens(r, t + 1, last, p, end, cap, prefix_mode)) return 1;
        if (p == end || (k->kind == TOKEN_STAR && *p == '/')) return 0;
      }
    }
    case TOKEN_DIRECTORIES:
      if (match_tokens(r, t + 1, last, s, end, cap, prefix_mode)) return 1;
      for (const char* p = s; p < end; p++)
        if (*p == '/' && match_tokens(r, t + 1, last, p + 1, end, cap, prefix_mode)) return 1;
      return 0;
    case TOKEN_STEP:
    case TOKEN_RANK: {
      const char* q = s;
      while (q < end && q - s < RULES_PLACEHOLDER_DIGITS && is_digit(*q)) q++;
      for (; q > s; q--) {
        if (k->kind == TOKEN_STEP) { cap->step = s; cap->step_length = (size_t) (q - s); }
        else { cap->rank = s; cap->rank_length = (size_t) (q - s); }
        if (match_tokens(r, t + 1, last, q, end, cap, prefix_mode)) return 1;
      }
      return 0;
    }
    }
  }
}

static long long digits_value(const char* s, size_t length)
{
  long long value = 0;
  for (size_t i = 0; i < length; i++) value = value * 10 + (s[i] - '0');
  return value;
}

static void result_fill(scr_preload_match* result, int index, const char* path, const captures* cap)
{
  if (!result) return;
  result->rule = index;
  result->step = cap->step_length ? digits_value(cap->step, cap->step_length) : -1;
  result->step_offset = cap->step_length ? (size_t) (cap->step - path) : 0;
  result->step_length = cap->step_length;
  result->rank = cap->rank_length ? digits_value(cap->rank, cap->rank_length) : -1;
  result->rank_offset = cap->rank_length ? (size_t) (cap->rank - path) : 0;
  result->rank_length = cap->rank_length;
}

static void result_none(scr_preload_match* result)
{
  static const captures nothing = { NULL, 0, NULL, 0 };
  result_fill(result, -1, NULL, &nothing);
}

int scr_preload_rules_match(const scr_preload_ruleset* ruleset, const char* path, size_t length,
                            scr_preload_match* result)
{
  /* the common case: a path outside every rule's literal prefix */
  if (!ruleset || length < ruleset->common_length ||
      memcmp(path, ruleset->common, ruleset->common_length) != 0) {
    result_none(result);
    return -1;
  }
  /* then the byte after it, which tells apart rules whose prefixes differ
   * (an absolute rule beside relative ones leaves a common prefix of "/") */
  size_t skip = ruleset->common_length;
  if (!ruleset->next_any && (length == skip || !set_has(&ruleset->next, (unsigned char) path[skip]))) {
    result_none(result);
    return -1;
  }
  for (int i = 0; i < ruleset->count; i++) {
    const rule* r = &ruleset->rules[i];
    if (length < r->min_length) continue;
    if (r->prefix_length > skip && (path[skip] != r->text[skip] ||
        memcmp(path + skip + 1, r->text + skip + 1, r->prefix_length - skip - 1) != 0)) continue;
    captures cap = { NULL, 0, NULL, 0 };
    if (r->token_count == 1) {
      if (length != r->prefix_length) continue;
    } else {
      const char* end = path + length;
      int last = r->token_count;
      if (r->suffix_length) {
        const rule_token* suffix = &r->tokens[last - 1];
        if (!bytes_equal(end - suffix->length, r->text + suffix->offset, suffix->length)) continue;
        end -= suffix->length;
        last--;
      }
      if (!match_tokens(r, 1, last, path + r->prefix_length, end, &cap, 0)) continue;
    }
    result_fill(result, i, path, &cap);
    return i;
  }
  result_none(result);
  return -1;
}

int scr_preload_rules_match_name(const scr_preload_ruleset* ruleset, const char* name, size_t length)
{
  for (int i = 0; ruleset && i < ruleset->count; i++) {
    const rule* r = &ruleset->rules[i];
    if (r->name_spans) return 1;
    /* the literal end of the pattern, when it lies within the last component */
    if (r->suffix_length && r->token_count - 1 > r->name_token) {
      const rule_token* suffix = &r->tokens[r->token_count - 1];
      if (length < suffix->length ||
          !bytes_equal(name + length - suffix->length, r->text + suffix->offset, suffix->length)) continue;
    }
    const char* s = name;
    int t = r->name_token;
    if (t < r->token_count && r->tokens[t].kind == TOKEN_LITERAL) {
      size_t n = r->tokens[t].length - r->name_offset;
      if (length < n || !bytes_equal(s, r->text + r->tokens[t].offset + r->name_offset, n)) continue;
      s += n;
      t++;
    }
    captures cap = { NULL, 0, NULL, 0 };
    if (match_tokens(r, t, r->token_count, s, name + length, &cap, 0)) return 1;
  }
  return 0;
}

int scr_preload_rules_match_directory(const scr_preload_ruleset* ruleset, const char* path,
                                      size_t length, scr_preload_match* result)
{
  /* ask whether "path/" can begin a match; the root is "/" already */
  char buffer[4096 + 2];
  if (!ruleset || length == 0 || length >= sizeof(buffer) - 1 || path[0] != '/') {
    result_none(result);
    return -1;
  }
  memcpy(buffer, path, length);
  if (length > 1) buffer[length++] = '/';
  if (length < ruleset->common_directory_length ||
      memcmp(buffer, ruleset->common, ruleset->common_directory_length) != 0) {
    result_none(result);
    return -1;
  }
  for (int i = 0; i < ruleset->count; i++) {
    const rule* r = &ruleset->rules[i];
    if (length < r->directory_length || memcmp(buffer, r->text, r->directory_length) != 0) continue;
    captures cap = { NULL, 0, NULL, 0 };
    if (!match_tokens(r, 0, r->token_count, buffer, buffer + length, &cap, 1)) continue;
    result_fill(result, i, buffer, &cap);
    return i;
  }
  result_none(result);
  return -1;
}

/* --- compilation */

/* errors name the descriptor's origin and the pattern as written */
typedef struct {
  const char* origin;
  const char* pattern;
  char* errbuf;
  size_t errlen;
} compile_context;

static int compile_error(const compile_context* ctx, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int compile_error(const compile_context* ctx, const char* fmt, ...)
{
  if (!ctx->errbuf || ctx->errlen == 0) return SCR_ERR_CONFIG;
  int n = snprintf(ctx->errbuf, ctx->errlen, "%s%skey PRELOAD: pattern '%s': ",
                   ctx->origin ? ctx->origin : "", ctx->origin ? ": " : "", ctx->pattern);
  if (n >= 0 && (size_t) n < ctx->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->errbuf + n, ctx->errlen - (size_t) n, fmt, ap);
    va_end(ap);
  }
  return SCR_ERR_CONFIG;
}

/* check the pattern as the user wrote it, so that positions in messages are theirs */
static int pattern_validate(const compile_context* ctx, const char* pattern)
{
  if (pattern[0] == '\0') return compile_error(ctx, "the pattern is empty");
  int step = 0, rank = 0, previous = -1;
  for (size_t i = 0; pattern[i];) {
    lexeme x;
    size_t at = i + 1;   /* characters counted from 1, as an editor does */
    switch (lex(pattern + i, &x)) {
    case LEX_OK: break;
    case LEX_UNCLOSED_SET:
      return compile_error(ctx, "'[' at character %zu has no closing ']' in its path component", at);
    case LEX_EMPTY_SET: return compile_error(ctx, "the set at character %zu matches no character", at);
    case LEX_REVERSED_RANGE: return compile_error(ctx, "the set at character %zu has a reversed range", at);
    case LEX_UNCLOSED_BRACE:
      return compile_error(ctx, "'{' at character %zu has no closing '}' in its path component", at);
    case LEX_UNKNOWN_PLACEHOLDER:
      return compile_error(ctx, "unknown placeholder %.*s at character %zu (known: {step}, {rank})",
                           (int) (strcspn(pattern + i, "}") + 1), pattern + i, at);
    case LEX_STRAY_BRACE:
      return compile_error(ctx, "'}' at character %zu has no opening '{' (write \\} for the character)", at);
    case LEX_BAD_BACKSLASH:
      return compile_error(ctx, "'\\' at character %zu escapes nothing (it ends the pattern or a component)", at);
    }
    if (x.kind == LEX_STEP && step++)
      return compile_error(ctx, "{step} appears twice (character %zu)", at);
    if (x.kind == LEX_RANK && rank++)
      return compile_error(ctx, "{rank} appears twice (character %zu)", at);
    if ((x.kind == LEX_STEP || x.kind == LEX_RANK) && (previous == LEX_STEP || previous == LEX_RANK))
      return compile_error(ctx, "two placeholders meet at character %zu; put a separator between them", at);
    previous = x.kind;
    i += x.length;
  }
  return SCR_SUCCESS;
}

/* 1 when the component [s, s+length) holds no wildcard or placeholder */
static int component_is_literal(const char* s, size_t length)
{
  for (size_t i = 0; i < length;) {
    lexeme x;
    if (lex(s + i, &x) != LEX_OK || x.kind != LEX_CHAR) return 0;
    i += x.length;
  }
  return 1;
}

/* the absolute pattern: prefix (escaped, so its characters are literal) and
 * pattern joined, "." and empty components dropped, ".." applied. Returns a
 * malloc'd string or NULL with errbuf set. */
static char* pattern_absolute(const compile_context* ctx, const char* prefix, const char* pattern)
{
  size_t plen = pattern[0] == '/' ? 0 : strlen(prefix);
  size_t size = 2 * plen + strlen(pattern) + 3;
  char* escaped = malloc(size);
  char* out = malloc(size);
  if (!escaped || !out) {
    free(escaped);
    free(out);
    compile_error(ctx, "out of memory");
    return NULL;
  }
  size_t n = 0;
  for (size_t i = 0; i < plen; i++) {
    if (strchr("*?[]{}\\", prefix[i])) escaped[n++] = '\\';
    escaped[n++] = prefix[i];
  }
  escaped[n] = '\0';

  /* components of the prefix, then of the pattern; "kept" counts the
   * prefix's components that no ".." of the pattern has removed */
  size_t used = 1, depth = 0, kept = 0;   /* out always starts with '/' */
  out[0] = '/';
  const char* parts[2] = { escaped, pattern };
  for (int part = 0; part < 2; part++) {
    for (const char* p = parts[part]; *p;) {
      while (*p == '/') p++;
      size_t length = strcspn(p, "/");
      if (length == 2 && p[0] == '.' && p[1] == '.') {
        if (depth > 0) {
          size_t start = used - 1;
          while (out[start - 1] != '/') start--;
          if (!component_is_literal(out + start, used - start - 1)) {
            free(escaped);
            free(out);
            compile_error(ctx, "'..' follows a component with wildcards");
            return NULL;
          }
          used = start;
          if (--depth < kept) kept = depth;
        }
      } else if (length > 0 && !(length == 1 && p[0] == '.')) {
        memcpy(out + used, p, length);
        used += length;
        out[used++] = '/';
        depth++;
      }
      p += length;
    }
    if (part == 0) kept = depth;
  }
  free(escaped);
  if (depth <= kept) {
    /* ".", "a/.." or ".." name the prefix or a directory above it */
    free(out);
    compile_error(ctx, "the pattern names a directory, not files in it");
    return NULL;
  }
  out[used - 1] = '\0';   /* the last component's '/' */
  return out;
}

/* tokens of an absolute pattern already validated */
static int rule_tokenize(rule* r, const char* path)
{
  size_t length = strlen(path);
  r->text = malloc(length + 1);
  r->tokens = calloc(length + 1, sizeof(*r->tokens));
  r->sets = calloc(length + 1, sizeof(*r->sets));
  if (!r->text || !r->tokens || !r->sets) return SCR_ERR_NOMEM;
  size_t text_used = 0;
  int sets = 0;
  for (size_t i = 0; i < length;) {
    lexeme x;
    lex(path + i, &x);
    rule_token* last = r->token_count ? &r->tokens[r->token_count - 1] : NULL;
    if (x.kind == LEX_CHAR || x.kind == LEX_SLASH) {
      char c = x.kind == LEX_SLASH ? '/' : (char) x.c;
      if (!last || last->kind != TOKEN_LITERAL) {
        last = &r->tokens[r->token_count++];
        last->kind = TOKEN_LITERAL;
        last->offset = text_used;
        last->length = 0;
      }
      r->text[text_used++] = c;
      last->length++;
      r->min_length++;
      i += x.length;
      continue;
    }
    rule_token* k = &r->tokens[r->token_count++];
    switch (x.kind) {
    case LEX_ONE: k->kind = TOKEN_ONE; r->min_length++; break;
    case LEX_SET:
      k->kind = TOKEN_SET;
      k->offset = (size_t) sets;
      r->sets[sets++] = x.set;
      r->min_length++;
      break;
    case LEX_STARS:
      if (x.stars == 1) {
        k->kind = TOKEN_STAR;
      } else if (path[i - 1] == '/' && path[i + x.stars] == '/') {
        k->kind = TOKEN_DIRECTORIES;
        x.length++;   /* the '/' after it belongs to it: zero directories need none */
      } else {
        k->kind = TOKEN_ANY;
      }
      break;
    case LEX_STEP: k->kind = TOKEN_STEP; r->info.has_step = 1; r->min_length++; break;
    case LEX_RANK: k->kind = TOKEN_RANK; r->info.has_rank = 1; r->min_length++; break;
    }
    i += x.length;
  }
  /* tokens[0] is the literal prefix: an absolute pattern starts with '/' */
  r->prefix_length = r->tokens[0].length;
  r->directory_length = r->prefix_length;
  if (r->token_count > 1)
    while (r->text[r->directory_length - 1] != '/') r->directory_length--;
  else
    while (r->directory_length > 1 && r->text[r->directory_length - 1] != '/') r->directory_length--;
  if (r->token_count > 1 && r->tokens[r->token_count - 1].kind == TOKEN_LITERAL)
    r->suffix_length = r->tokens[r->token_count - 1].length;

  /* the last component, so that a relative path can be ruled out by its
   * file name before the directory it is relative to is looked up */
  for (int t = r->token_count - 1; t >= 0; t--) {
    const rule_token* k = &r->tokens[t];
    if (k->kind == TOKEN_ANY) {
      r->name_spans = 1;
      break;
    }
    if (k->kind == TOKEN_DIRECTORIES) {
      r->name_token = t + 1;
      break;
    }
    const char* slash = k->kind == TOKEN_LITERAL ? memrchr(r->text + k->offset, '/', k->length) : NULL;
    if (slash) {
      r->name_token = t;
      r->name_offset = (size_t) (slash - (r->text + k->offset)) + 1;
      break;
    }
  }
  return SCR_SUCCESS;
}

static int attribute_choice(const compile_context* ctx, const scr_kvtree* attributes,
                            const char* key, const char* const* names, int* value)
{
  const char* text = scr_kvtree_get_val(attributes, key);
  if (!text) return SCR_SUCCESS;
  for (int i = 0; names[i]; i++)
    if (strcasecmp(text, names[i]) == 0) { *value = i; return SCR_SUCCESS; }
  return compile_error(ctx, "%s=%s is not one of the allowed values", key, text);
}

static int rule_attributes(const compile_context* ctx, rule* r, const scr_kvtree* attributes)
{
  static const char* const types[] = { "CHECKPOINT", "OUTPUT", NULL };
  static const char* const boundaries[] = { "CLOSE", "BARRIER", "NEXT", "FINALIZE", NULL };
  for (scr_kvtree_elem* e = scr_kvtree_first(attributes); e; e = scr_kvtree_next(e)) {
    const char* key = scr_kvtree_elem_key(e);
    if (strcmp(key, "@ORIGIN") && strcmp(key, "TYPE") && strcmp(key, "BOUNDARY") &&
        strcmp(key, "FILES") && strcmp(key, "CALLER"))
      return compile_error(ctx, "unknown attribute %s (known: TYPE, FILES, BOUNDARY, CALLER)", key);
  }
  int rc = attribute_choice(ctx, attributes, "TYPE", types, &r->info.type);
  if (rc == SCR_SUCCESS) rc = attribute_choice(ctx, attributes, "BOUNDARY", boundaries, &r->info.boundary);
  if (rc != SCR_SUCCESS) return rc;
  const char* files = scr_kvtree_get_val(attributes, "FILES");
  if (files) {
    char* end = NULL;
    long long n = strtoll(files, &end, 10);
    if (end == files || *end != '\0' || n < 1)
      return compile_error(ctx, "FILES=%s is not a number of files (1 or more)", files);
    r->info.files = n;
  }
  const char* caller = scr_kvtree_get_val(attributes, "CALLER");
  if (caller && !(r->info.caller = strdup(caller))) return compile_error(ctx, "out of memory");
  return SCR_SUCCESS;
}

static void rule_release(rule* r)
{
  free((char*) r->info.pattern);
  free((char*) r->info.path);
  free((char*) r->info.origin);
  free((char*) r->info.directory);
  free((char*) r->info.caller);
  free(r->text);
  free(r->tokens);
  free(r->sets);
}

static int rule_compile(rule* r, const char* pattern, const scr_kvtree* attributes,
                        const char* prefix, char* errbuf, size_t errlen)
{
  const char* origin = scr_kvtree_get_val(attributes, "@ORIGIN");
  if (!origin) origin = scr_param_descriptor_origin("PRELOAD", pattern);
  compile_context ctx = { origin, pattern, errbuf, errlen };
  r->info.pattern = strdup(pattern);
  r->info.origin = origin ? strdup(origin) : NULL;
  if (!r->info.pattern || (origin && !r->info.origin)) return compile_error(&ctx, "out of memory");

  int rc = pattern_validate(&ctx, pattern);
  if (rc == SCR_SUCCESS) rc = rule_attributes(&ctx, r, attributes);
  if (rc != SCR_SUCCESS) return rc;
  char* path = pattern_absolute(&ctx, prefix, pattern);
  if (!path) return SCR_ERR_CONFIG;
  r->info.path = path;
  if (rule_tokenize(r, path) != SCR_SUCCESS) return compile_error(&ctx, "out of memory");
  size_t dir = r->directory_length > 1 ? r->directory_length - 1 : r->directory_length;
  r->info.directory = strndup(r->text, dir);
  if (!r->info.directory) return compile_error(&ctx, "out of memory");
  return SCR_SUCCESS;
}

static size_t common_length(const char* a, size_t alen, const char* b, size_t blen)
{
  size_t n = 0;
  while (n < alen && n < blen && a[n] == b[n]) n++;
  return n;
}

int scr_preload_rules_compile(const scr_kvtree* descriptors, const char* prefix,
                              scr_preload_ruleset** ruleset, char* errbuf, size_t errlen)
{
  if (errbuf && errlen) errbuf[0] = '\0';
  *ruleset = NULL;
  if (!prefix || prefix[0] != '/') {
    if (errbuf) snprintf(errbuf, errlen, "key PRELOAD: the prefix directory '%s' is not absolute",
                         prefix ? prefix : "(none)");
    return SCR_ERR_INVALID;
  }
  scr_preload_ruleset* set = calloc(1, sizeof(*set));
  int total = scr_kvtree_size(descriptors);
  if (!set || (total && !(set->rules = calloc((size_t) total, sizeof(*set->rules))))) {
    free(set);
    return SCR_ERR_NOMEM;
  }
  int rc = SCR_SUCCESS;
  for (scr_kvtree_elem* e = scr_kvtree_first(descriptors); e && rc == SCR_SUCCESS; e = scr_kvtree_next(e)) {
    rule* r = &set->rules[set->count++];
    rc = rule_compile(r, scr_kvtree_elem_key(e), scr_kvtree_elem_tree(e), prefix, errbuf, errlen);
  }
  if (rc == SCR_SUCCESS && set->count > 0) {
    const rule* first = &set->rules[0];
    size_t common = first->prefix_length, directory = first->directory_length;
    for (int i = 1; i < set->count; i++) {
      const rule* r = &set->rules[i];
      common = common_length(first->text, common, r->text, r->prefix_length);
      directory = common_length(first->text, directory, r->text, r->directory_length);
    }
    set->common = strndup(first->text, common);
    set->common_length = common;
    set->common_directory_length = directory;
    for (int i = 0; i < set->count; i++) {
      const rule* r = &set->rules[i];
      if (r->prefix_length > common) set_add(&set->next, (unsigned char) r->text[common]);
      else set->next_any = 1;
    }
    if (!set->common) rc = SCR_ERR_NOMEM;
  } else if (rc == SCR_SUCCESS) {
    /* no rule: nothing may match, not even "/" */
    set->common = strdup("");
    set->common_length = (size_t) -1;
    set->common_directory_length = (size_t) -1;
    if (!set->common) rc = SCR_ERR_NOMEM;
  }
  if (rc != SCR_SUCCESS) {
    scr_preload_rules_free(&set);
    return rc;
  }
  *ruleset = set;
  return SCR_SUCCESS;
}

void scr_preload_rules_free(scr_preload_ruleset** ruleset)
{
  if (!ruleset || !*ruleset) return;
  scr_preload_ruleset* set = *ruleset;
  for (int i = 0; i < set->count; i++) rule_release(&set->rules[i]);
  free(set->rules);
  free(set->common);
  free(set);
  *ruleset = NULL;
}

int scr_preload_rules_count(const scr_preload_ruleset* ruleset)
{
  return ruleset ? ruleset->count : 0;
}

const scr_preload_rule* scr_preload_rules_at(const scr_preload_ruleset* ruleset, int index)
{
  if (!ruleset || index < 0 || index >= ruleset->count) return NULL;
  return &ruleset->rules[index].info;
}

const char* scr_preload_rules_common_prefix(const scr_preload_ruleset* ruleset)
{
  return ruleset ? ruleset->common : NULL;
}
