/* scr_preload_rules.c - compiles PRELOAD patterns into token lists (matched in
 * scr_preload_match.c), with the prefixes and filters that let a miss be cheap. */
#include "config.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "scr_error.h"
#include "scr_param.h"
#include "scr_preload_path.h"
#include "scr_preload_rules_impl.h"

/* --- lexing: one pattern element at a time, shared by validation and compilation */

enum lexeme_kind { LEX_CHAR, LEX_SLASH, LEX_ONE, LEX_STARS, LEX_SET, LEX_STEP, LEX_RANK };

enum lex_error {
  LEX_OK = 0, LEX_UNCLOSED_SET, LEX_EMPTY_SET, LEX_REVERSED_RANGE, LEX_UNCLOSED_BRACE,
  LEX_UNKNOWN_PLACEHOLDER, LEX_STRAY_BRACE, LEX_BAD_BACKSLASH
};

typedef struct {
  int kind;                      /* enum lexeme_kind */
  unsigned char c;               /* LEX_CHAR: the character */
  size_t stars;                  /* LEX_STARS: length of the run of '*' */
  char_set set;                  /* LEX_SET: the characters it accepts */
  size_t length;                 /* bytes of pattern text consumed */
} lexeme;

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

/* every entry of table[256] allows the rule of bit, or only the entry of
 * the literal byte at position `at` of text[0, length) when there is one */
static void name_table_allow(uint32_t* table, uint32_t bit, const char* text, size_t length, size_t at)
{
  if (at < length) {
    table[(unsigned char) text[at]] |= bit;
    return;
  }
  for (int c = 0; c < 256; c++) table[c] |= bit;
}

/* enter the names of rule r, bit `bit`, in the tables (see name_tables) */
static void rule_name_tables(const rule* r, uint32_t bit, name_tables* t)
{
  int t0 = r->name_token;
  if (t0 >= r->token_count) return;
  /* literal text at the start of the name, and at its end */
  const char* head = NULL;
  size_t head_length = 0;
  if (r->tokens[t0].kind == TOKEN_LITERAL) {
    head = r->text + r->tokens[t0].offset + r->name_offset;
    head_length = r->tokens[t0].length - r->name_offset;
  }
  const char* tail = NULL;
  size_t tail_length = 0;
  const rule_token* last = &r->tokens[r->token_count - 1];
  if (last->kind == TOKEN_LITERAL) {
    if (r->token_count - 1 > t0) {
      tail = r->text + last->offset;
      tail_length = last->length;
    } else {
      tail = head;
      tail_length = head_length;
    }
  }
  /* a ** inside the name lets it hold '/': what follows the path's last
   * '/' tells nothing */
  if (r->name_spans) head_length = tail_length = 0;
  name_table_allow(t->first, bit, head, head_length, 0);
  name_table_allow(t->second, bit, head, head_length, 1);
  name_table_allow(t->penultimate, bit, tail, tail_length, tail_length - 2);
  name_table_allow(t->last, bit, tail, tail_length, tail_length - 1);
  size_t min_length = 0;
  for (int t = t0; t < r->token_count; t++) {
    const rule_token* k = &r->tokens[t];
    if (k->kind == TOKEN_LITERAL) min_length += k->length - (t == t0 ? r->name_offset : 0);
    else if (k->kind != TOKEN_STAR && k->kind != TOKEN_ANY && k->kind != TOKEN_DIRECTORIES) min_length++;
  }
  if (r->name_spans) min_length = 0;
  for (size_t n = min_length < RULES_NAME_LENGTHS ? min_length : RULES_NAME_LENGTHS - 1; n < RULES_NAME_LENGTHS; n++)
    t->length[n] |= bit;
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
  /* a cache line of its own for the start of the set */
  int total = scr_kvtree_size(descriptors);
  size_t bytes = sizeof(scr_preload_ruleset);
  scr_preload_ruleset* set = NULL;
  if (posix_memalign((void**) &set, 64, bytes) != 0) set = NULL;
  if (set) {
    memset(set, 0, bytes);
    set->screen_common_length = RULES_SCREEN_SCALAR;
  }
  if (!set || (total && !(set->rules = calloc((size_t) total, sizeof(*set->rules))))) {
    free(set);
    return SCR_ERR_NOMEM;
  }
  int rc = SCR_SUCCESS;
  char normal[4096];
  size_t length = scr_preload_path_normalize("/", prefix, normal, sizeof(normal) - 1);
  if (length > 1) normal[length++] = '/';
  normal[length] = '\0';
  if (length == 0 || !(set->prefix = strdup(normal))) rc = length == 0 ? SCR_ERR_INVALID : SCR_ERR_NOMEM;
  if (length == 0 && errbuf) snprintf(errbuf, errlen, "key PRELOAD: the prefix directory '%s' is too long", prefix);
  set->prefix_length = length;
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
    set->common = common < sizeof(set->common_inline) ? set->common_inline : malloc(common + 1);
    if (set->common) {
      memcpy(set->common, first->text, common);
      set->common[common] = '\0';
    }
    set->common_length = common;
    set->common_directory_length = directory;
    if (set->common == set->common_inline) {
      set->screen_common_length = (uint8_t) common;
      set->screen_directory_length = (uint8_t) directory;
    }
    for (int i = 0; i < set->count; i++) {
      const rule* r = &set->rules[i];
      if (r->prefix_length > common) set_add(&set->next, (unsigned char) r->text[common]);
      else set->next_any = 1;
    }
    for (int i = 0; i < set->count; i++) rule_name_tables(&set->rules[i], 1u << (i < 31 ? i : 31), &set->names);
    if (!set->common) rc = SCR_ERR_NOMEM;
  } else if (rc == SCR_SUCCESS) {
    /* no rule: nothing may match, not even "/" */
    set->common = set->common_inline;
    set->common_length = (size_t) -1;
    set->common_directory_length = (size_t) -1;
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
  free(set->prefix);
  if (set->common != set->common_inline) free(set->common);
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

const char* scr_preload_rules_common_directory(const scr_preload_ruleset* ruleset, char* buffer, size_t size)
{
  size_t n = ruleset ? ruleset->common_directory_length : (size_t) -1;
  if (n == (size_t) -1 || n == 0 || n >= size) return NULL;
  memcpy(buffer, ruleset->common, n);
  buffer[n] = '\0';
  return buffer;
}
