/* scr_preload_match.c - matches paths against the compiled PRELOAD rules, and
 * the screens before it; built so that a path outside the rules costs a compare. */
#include "config.h"
#include <stdint.h>
#include <string.h>
#include "scr_preload_rules_impl.h"

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
      /* a way that failed captured nothing: in prefix mode a later way may
       * succeed before it reaches this placeholder (a ** taking the rest of
       * a directory), and must not report these digits */
      if (k->kind == TOKEN_STEP) { cap->step = NULL; cap->step_length = 0; }
      else { cap->rank = NULL; cap->rank_length = 0; }
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

SCR_PRELOAD_API int scr_preload_rules_match(const scr_preload_ruleset* ruleset, const char* path, size_t length,
                                            scr_preload_match* result)
{
  return scr_preload_rules_match_from(ruleset, 0, path, length, result);
}

int scr_preload_rules_match_from(const scr_preload_ruleset* ruleset, int first, const char* path,
                                 size_t length, scr_preload_match* result)
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
  for (int i = first < 0 ? 0 : first; i < ruleset->count; i++) {
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

int scr_preload_rules_leads_to_directory(const scr_preload_ruleset* ruleset, const char* path, size_t length)
{
  char buffer[4096 + 2];
  if (!ruleset || !ruleset->prefix || length == 0 || length >= sizeof(buffer) - 1 || path[0] != '/') return 0;
  memcpy(buffer, path, length);
  if (length > 1) buffer[length++] = '/';
  if (length < ruleset->prefix_length || memcmp(buffer, ruleset->prefix, ruleset->prefix_length) != 0) return 0;
  for (int i = 0; i < ruleset->count; i++) {
    const rule* r = &ruleset->rules[i];
    if (length < r->directory_length && memcmp(buffer, r->text, length) == 0) return 1;
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
