/* fuzz-rules.c - libFuzzer target: compiles random PRELOAD patterns and matches random paths,
 * checking the compiler, matcher, screens and path normalizer against a plain reference here. */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "scr_error.h"
#include "scr_kvtree.h"
#include "scr_preload_hot.h"
#include "scr_preload_path.h"
#include "scr_preload_rules.h"

/* Input: byte 0 chooses the number of rules (1-4, bits 0-1) and the prefix
 * (bits 2-3); then lines: the patterns, then paths. Each path line is asked
 * as written (made absolute and normalized) and, for every rule, turned into
 * a path the rule's pattern describes, its bytes choosing what each wildcard
 * takes, so that matches are common and not only misses. */

/* The reference is written from man/scr_preload.7 and scr_preload_rules.h,
 * not from the library's code: one element per pattern character, a
 * recursive matcher that tries wildcards shortest first and placeholders
 * longest first, exponential and obviously so. Any disagreement aborts. */

#define MAX_RULES 4
#define MAX_ELEMS 256
#define MAX_COMPONENTS 128
#define MAX_PATTERN 200
#define MAX_PATH 600
#define DIGITS 18

enum { E_CHAR, E_ONE, E_SET, E_STAR, E_STARS, E_ANY, E_DIRS, E_STEP, E_RANK };

typedef struct {
  int kind;
  unsigned char c;
  uint8_t set[32];          /* E_SET: bit c for each byte c it takes */
} elem;

typedef struct {
  elem e[MAX_ELEMS];
  int n;
} elems;

typedef struct {
  const char* step;
  size_t step_length;
  const char* rank;
  size_t rank_length;
} ref_captures;

/* a pattern as the reference understands it */
typedef struct {
  int valid;
  elems all;                /* the whole absolute pattern, '/' as E_CHAR */
  int name_start;           /* first element of the last component */
  int spans;                /* an E_ANY in the last component: any name */
  size_t dir_length;        /* bytes of the literal directory, with its '/' */
  char dir[MAX_PATH];
  int has_step, has_rank;
} ref_rule;

static const char* const prefixes[4] = { "/p", "/", "/x/r[1]*{s}\\t", "/a/b/c/d/e" };

/* ---- the reference's pattern reader */

static int in_set(const uint8_t* set, int c) { return (set[c / 8] >> (c % 8)) & 1; }

static int is_literal(const elems* c)
{
  for (int i = 0; i < c->n; i++)
    if (c->e[i].kind != E_CHAR) return 0;
  return 1;
}

static int push(elems* c, int kind, unsigned char ch)
{
  if (c->n >= MAX_ELEMS) return 0;
  memset(&c->e[c->n], 0, sizeof(c->e[c->n]));
  c->e[c->n].kind = kind;
  c->e[c->n].c = ch;
  c->n++;
  return 1;
}

/* one character of a set at s[*k], a backslash taking the next: -1 when
 * the component ends first */
static int set_char(const char* s, size_t n, size_t* k)
{
  if (*k >= n) return -1;
  if (s[*k] == '\\') {
    if (*k + 1 >= n) return -1;
    *k += 2;
    return (unsigned char) s[*k - 1];
  }
  return (unsigned char) s[(*k)++];
}

/* elements of one component s[0, n) of the user's pattern (no '/'); 0 when
 * it is not valid; *steps and *ranks count the placeholders, *last the kind
 * of the previous element (two placeholders may not touch) */
static int lex_component(const char* s, size_t n, elems* out, int* steps, int* ranks, int* last)
{
  for (size_t i = 0; i < n;) {
    int kind = E_CHAR;
    unsigned char ch = (unsigned char) s[i];
    if (s[i] == '\\') {
      if (i + 1 >= n) return 0;
      ch = (unsigned char) s[i + 1];
      i += 2;
    } else if (s[i] == '?') {
      kind = E_ONE;
      i++;
    } else if (s[i] == '*') {
      size_t j = i;
      while (j < n && s[j] == '*') j++;
      kind = j - i == 1 ? E_STAR : E_STARS;
      i = j;
    } else if (s[i] == '[') {
      unsigned char set[256] = { 0 };
      size_t k = i + 1;
      int negate = k < n && (s[k] == '!' || s[k] == '^');
      if (negate) k++;
      for (int first = 1;; first = 0) {
        if (k >= n) return 0;
        if (s[k] == ']' && !first) break;
        int lo = set_char(s, n, &k);
        if (lo < 0) return 0;
        int hi = lo;
        if (k + 1 < n && s[k] == '-' && s[k + 1] != ']') {
          k++;
          hi = set_char(s, n, &k);
          if (hi < 0 || hi < lo) return 0;
        }
        for (int c = lo; c <= hi; c++) set[c] = 1;
      }
      int any = 0;
      for (int c = 0; c < 256; c++) {
        if (negate) set[c] = !set[c];
        if (c == 0 || c == '/') set[c] = 0;
        any |= set[c];
      }
      if (!any) return 0;
      if (!push(out, E_SET, 0)) return 0;
      for (int c = 0; c < 256; c++)
        if (set[c]) out->e[out->n - 1].set[c / 8] |= (uint8_t) (1u << (c % 8));
      *last = E_SET;
      i = k + 1;
      continue;
    } else if (s[i] == '{') {
      const char* close = memchr(s + i, '}', n - i);
      if (!close) return 0;
      size_t len = (size_t) (close - (s + i)) + 1;
      if (len == 6 && memcmp(s + i, "{step}", 6) == 0) kind = E_STEP, ++*steps;
      else if (len == 6 && memcmp(s + i, "{rank}", 6) == 0) kind = E_RANK, ++*ranks;
      else return 0;
      if (*last == E_STEP || *last == E_RANK) return 0;
      i += len;
    } else if (s[i] == '}') {
      return 0;
    } else {
      i++;
    }
    if (!push(out, kind, ch)) return 0;
    *last = kind;
  }
  return 1;
}

/* the user's pattern against prefix: valid, and its elements, or not */
static void ref_compile(const char* prefix, const char* pattern, ref_rule* r)
{
  static elems comps[MAX_COMPONENTS];
  int count = 0, kept = 0;
  memset(r, 0, sizeof(*r));
  if (pattern[0] == '\0') return;
  /* the prefix's components are literal, whatever characters they hold */
  if (pattern[0] != '/') {
    for (const char* p = prefix; *p;) {
      size_t len = strcspn(p, "/");
      if (len > 0) {
        comps[count].n = 0;
        for (size_t i = 0; i < len; i++) push(&comps[count], E_CHAR, (unsigned char) p[i]);
        count++;
      }
      p += len;
      if (*p) p++;
    }
    kept = count;
  }
  int steps = 0, ranks = 0, last = -1;
  for (const char* p = pattern; *p;) {
    size_t len = strcspn(p, "/");
    static elems c;
    c.n = 0;
    /* every component is checked, even one a ".." later removes */
    if (!lex_component(p, len, &c, &steps, &ranks, &last)) return;
    if ((len == 0) || (len == 1 && p[0] == '.')) {
      /* "//" and "." say nothing */
    } else if (len == 2 && p[0] == '.' && p[1] == '.') {
      if (count > 0) {
        if (!is_literal(&comps[count - 1])) return;
        count--;
        if (count < kept) kept = count;
      }
    } else {
      if (count >= MAX_COMPONENTS) abort();   /* the caller keeps patterns short */
      comps[count++] = c;
    }
    p += len;
    if (*p) {
      p++;
      if (last == E_STEP || last == E_RANK) last = E_CHAR;   /* the '/' parts them */
    }
  }
  if (steps > 1 || ranks > 1 || count <= kept) return;

  /* "/c1/c2/.../cn"; a component that is only stars, with one after it,
   * takes zero or more directories and the '/' after them */
  r->all.n = 0;
  int sep_after = -1;
  for (int i = 0; i < count; i++) {
    int dirs = comps[i].n == 1 && comps[i].e[0].kind == E_STARS && i + 1 < count;
    if (!(i > 0 && sep_after == i - 1)) push(&r->all, E_CHAR, '/');
    if (dirs) {
      push(&r->all, E_DIRS, 0);
      sep_after = i;
      r->name_start = r->all.n;
      r->spans = 0;
      continue;
    }
    r->name_start = r->all.n;
    r->spans = 0;
    for (int k = 0; k < comps[i].n; k++) {
      elem e = comps[i].e[k];
      if (e.kind == E_STARS) e.kind = E_ANY;
      if (e.kind == E_ANY) r->spans = 1;
      if (e.kind == E_STEP) r->has_step = 1;
      if (e.kind == E_RANK) r->has_rank = 1;
      if (r->all.n < MAX_ELEMS) r->all.e[r->all.n++] = e;
    }
  }
  if (r->all.n >= MAX_ELEMS) return;
  /* the literal start, up to its last '/' */
  size_t lit = 0;
  while ((int) lit < r->all.n && r->all.e[lit].kind == E_CHAR && lit < sizeof(r->dir) - 1) {
    r->dir[lit] = (char) r->all.e[lit].c;
    lit++;
  }
  while (lit > 0 && r->dir[lit - 1] != '/') lit--;
  r->dir_length = lit;
  r->dir[lit] = '\0';
  r->valid = 1;
}

/* ---- the reference matcher */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* (element, text position) pairs known to fail in the current search: a
 * failure does not depend on the captures made before it, so each pair is
 * tried once and the reference stays polynomial where the patterns are not */
static uint32_t failed[MAX_ELEMS + 1][MAX_PATH + 2];
static uint32_t generation;
static const char* text_start;

static int ref_match_at(const elems* p, int i, const char* s, const char* end, int prefix, ref_captures* cap);

static int ref_match(const elems* p, int i, const char* s, const char* end, int prefix, ref_captures* cap)
{
  size_t at = (size_t) (s - text_start);
  if (at < MAX_PATH + 2 && failed[i][at] == generation) return 0;
  int ok = ref_match_at(p, i, s, end, prefix, cap);
  if (!ok && at < MAX_PATH + 2) failed[i][at] = generation;
  return ok;
}

/* a new search of the text starting at s */
static int ref_search(const elems* p, const char* s, const char* end, int prefix, ref_captures* cap)
{
  generation++;
  text_start = s;
  return ref_match(p, 0, s, end, prefix, cap);
}

/* elements [i, n) against [s, end); prefix: also when the text ends first.
 * The captures are those of the way that succeeded. */
static int ref_match_at(const elems* p, int i, const char* s, const char* end, int prefix, ref_captures* cap)
{
  if (prefix && s == end) return 1;
  if (i == p->n) return s == end;
  const elem* e = &p->e[i];
  switch (e->kind) {
  case E_CHAR:
    return s < end && (unsigned char) *s == e->c && ref_match(p, i + 1, s + 1, end, prefix, cap);
  case E_ONE:
    return s < end && *s != '/' && ref_match(p, i + 1, s + 1, end, prefix, cap);
  case E_SET:
    return s < end && in_set(e->set, (unsigned char) *s) && ref_match(p, i + 1, s + 1, end, prefix, cap);
  case E_STAR:
  case E_ANY:
    for (const char* q = s;; q++) {
      if (ref_match(p, i + 1, q, end, prefix, cap)) return 1;
      if (q == end || (e->kind == E_STAR && *q == '/')) return 0;
    }
  case E_DIRS:
    if (ref_match(p, i + 1, s, end, prefix, cap)) return 1;
    for (const char* q = s; q < end; q++)
      if (*q == '/' && ref_match(p, i + 1, q + 1, end, prefix, cap)) return 1;
    return 0;
  case E_STEP:
  case E_RANK: {
    size_t most = 0;
    while (s + most < end && most < DIGITS && is_digit(s[most])) most++;
    for (size_t k = most; k > 0; k--) {
      ref_captures try = *cap;
      if (e->kind == E_STEP) try.step = s, try.step_length = k;
      else try.rank = s, try.rank_length = k;
      if (ref_match(p, i + 1, s + k, end, prefix, &try)) {
        *cap = try;
        return 1;
      }
    }
    return 0;
  }
  }
  abort();
}

static long long digits(const char* s, size_t n)
{
  long long v = 0;
  for (size_t i = 0; i < n; i++) v = v * 10 + (s[i] - '0');
  return v;
}

/* the first rule from `first` on that matches, with its captures */
static int ref_match_rules(const ref_rule* rules, int count, int first, const char* path, size_t length,
                           scr_preload_match* m)
{
  memset(m, 0, sizeof(*m));
  m->rule = -1;
  m->step = m->rank = -1;
  for (int i = first; i < count; i++) {
    ref_captures cap = { 0 };
    if (!ref_search(&rules[i].all, path, path + length, 0, &cap)) continue;
    m->rule = i;
    if (cap.step) {
      m->step = digits(cap.step, cap.step_length);
      m->step_offset = (size_t) (cap.step - path);
      m->step_length = cap.step_length;
    }
    if (cap.rank) {
      m->rank = digits(cap.rank, cap.rank_length);
      m->rank_offset = (size_t) (cap.rank - path);
      m->rank_length = cap.rank_length;
    }
    return i;
  }
  return -1;
}

/* a directory some rule may place files in: "path/" starts with the rule's
 * literal directory and can begin a path the rule matches */
static int ref_match_directory(const ref_rule* rules, int count, const char* path, size_t length,
                               scr_preload_match* m)
{
  char buffer[MAX_PATH + 2];
  memcpy(buffer, path, length);
  if (length > 1) buffer[length++] = '/';
  memset(m, 0, sizeof(*m));
  m->rule = -1;
  m->step = m->rank = -1;
  for (int i = 0; i < count; i++) {
    if (length < rules[i].dir_length || memcmp(buffer, rules[i].dir, rules[i].dir_length) != 0) continue;
    ref_captures cap = { 0 };
    if (!ref_search(&rules[i].all, buffer, buffer + length, 1, &cap)) continue;
    m->rule = i;
    if (cap.step) {
      m->step = digits(cap.step, cap.step_length);
      m->step_offset = (size_t) (cap.step - buffer);
      m->step_length = cap.step_length;
    }
    if (cap.rank) {
      m->rank = digits(cap.rank, cap.rank_length);
      m->rank_offset = (size_t) (cap.rank - buffer);
      m->rank_length = cap.rank_length;
    }
    return i;
  }
  return -1;
}

/* some rule's last component takes the name (no '/') */
static int ref_match_name(const ref_rule* rules, int count, const char* name, size_t length)
{
  for (int i = 0; i < count; i++) {
    if (rules[i].spans) return 1;
    static elems last;
    last.n = rules[i].all.n - rules[i].name_start;
    memcpy(last.e, rules[i].all.e + rules[i].name_start, (size_t) last.n * sizeof(elem));
    ref_captures cap = { 0 };
    if (ref_search(&last, name, name + length, 0, &cap)) return 1;
  }
  return 0;
}

/* "/a/b" made absolute against base, "//" and "." dropped, ".." taking the
 * component before it (never above the root); "" when it does not fit */
static size_t ref_normalize(const char* base, const char* path, char* out, size_t size)
{
  char* joined = NULL;
  if (asprintf(&joined, "%s/%s", path[0] == '/' ? "" : base, path) < 0) abort();
  size_t starts[MAX_PATH], depth = 0, n = 0;
  for (const char* p = joined; *p;) {
    size_t len = strcspn(p, "/");
    if (len == 2 && p[0] == '.' && p[1] == '.') {
      if (depth > 0) n = starts[--depth];
    } else if (len > 0 && !(len == 1 && p[0] == '.')) {
      if (n + 1 + len + 1 > size || depth >= MAX_PATH) {
        free(joined);
        return 0;
      }
      starts[depth++] = n;
      out[n++] = '/';
      memcpy(out + n, p, len);
      n += len;
    }
    p += len;
    if (*p) p++;
  }
  free(joined);
  if (n == 0) out[n++] = '/';
  out[n] = '\0';
  return n;
}

/* ---- turning a pattern into a path it describes, from the bytes given */

typedef struct {
  const unsigned char* data;
  size_t size, at;
} entropy;

static unsigned take(entropy* x)
{
  return x->at < x->size ? x->data[x->at++] : 0;
}

static size_t instance(const ref_rule* r, entropy* x, char* out, size_t size)
{
  size_t n = 0;
  for (int i = 0; i < r->all.n && n + 24 < size; i++) {
    const elem* e = &r->all.e[i];
    unsigned v = take(x);
    switch (e->kind) {
    case E_CHAR: out[n++] = (char) e->c; break;
    case E_ONE: out[n++] = (char) (v == '/' || v == 0 ? 'q' : v); break;
    case E_SET: {
      int c = (int) v;
      while (!in_set(e->set, c)) c = (c + 1) & 255;
      out[n++] = (char) c;
      break;
    }
    case E_STAR:
    case E_ANY:
      for (unsigned k = 0; k < (v & 3); k++) {
        unsigned c = take(x);
        out[n++] = (char) (c == 0 || (c == '/' && e->kind == E_STAR) ? 'z' : c);
      }
      break;
    case E_DIRS:
      for (unsigned k = 0; k < (v & 3); k++) {
        out[n++] = (char) ('a' + (take(x) & 7));
        out[n++] = '/';
      }
      break;
    case E_STEP:
    case E_RANK:
      for (unsigned k = 0; k < 1 + v % 20; k++) out[n++] = (char) ('0' + take(x) % 10);
      break;
    }
  }
  out[n] = '\0';
  return n;
}

/* ---- the checks */

static void check(int ok, const char* what, const char* path, const ref_rule* rules, int count)
{
  if (ok) return;
  fprintf(stderr, "fuzz-rules: %s disagrees with the reference\n  path '%s'\n", what, path ? path : "");
  for (int i = 0; i < count; i++) fprintf(stderr, "  rule %d valid %d\n", i, rules[i].valid);
  abort();
}

static int same_match(const scr_preload_match* a, const scr_preload_match* b)
{
  return a->rule == b->rule && a->step == b->step && a->rank == b->rank && a->step_length == b->step_length &&
         a->rank_length == b->rank_length && (!a->step_length || a->step_offset == b->step_offset) &&
         (!a->rank_length || a->rank_offset == b->rank_offset);
}

/* two pages, the second unmapped: the screens read whole 64-byte lines
 * and must not cross into a page that is not there */
static char* screen_page;

static void check_path(const scr_preload_ruleset* set, const ref_rule* rules, int count, const char* path,
                       size_t length, unsigned choice)
{
  scr_preload_match got, want;
  int lib = scr_preload_rules_match(set, path, length, &got);
  int ref = ref_match_rules(rules, count, 0, path, length, &want);
  check(lib == ref && same_match(&got, &want), "scr_preload_rules_match", path, rules, count);

  int first = (int) (choice % (unsigned) (count + 1));
  lib = scr_preload_rules_match_from(set, first, path, length, &got);
  ref = ref_match_rules(rules, count, first, path, length, &want);
  check(lib == ref && same_match(&got, &want), "scr_preload_rules_match_from", path, rules, count);

  scr_preload_match dir_got, dir_want;
  int dir = scr_preload_rules_match_directory(set, path, length, &dir_got);
  int dir_ref = ref_match_directory(rules, count, path, length, &dir_want);
  check(dir == dir_ref && same_match(&dir_got, &dir_want), "scr_preload_rules_match_directory", path, rules,
        count);

  const char* slash = strrchr(path, '/');
  size_t name = slash ? (size_t) (slash - path) + 1 : 0;
  int name_lib = scr_preload_rules_match_name(set, path + name, length - name);
  int name_ref = ref_match_name(rules, count, path + name, length - name);
  check(name_lib == name_ref, "scr_preload_rules_match_name", path, rules, count);
  check(name_ref == 0 || scr_preload_rules_name_may_match(set, path + name, length - name),
        "scr_preload_rules_name_may_match (ruled out a name a rule takes)", path, rules, count);

  /* the screens may say "maybe" where nothing matches, never "no" where
   * something does; the scalar and the vector screen say the same */
  int excluded = scr_preload_rules_exclude(set, path, length, name);
  int any = ref_match_rules(rules, count, 0, path, length, &want);
  check(excluded == SCR_PRELOAD_EXCLUDE_NONE || any < 0, "scr_preload_rules_exclude (a rule's file)", path,
        rules, count);
  check(excluded != SCR_PRELOAD_EXCLUDE_ALL || dir_ref < 0, "scr_preload_rules_exclude (a rule directory)", path,
        rules, count);
  if (length < 4000) {
    /* the path placed anywhere in the last lines of the page */
    size_t room = 4096 - (length + 1);
    size_t offset = room - (choice * 7u) % (room < 200 ? room + 1 : 200);
    char* at = screen_page + offset;
    memcpy(at, path, length + 1);
    int screened = scr_preload_screen_baseline(set, at);
    check(screened == SCR_PRELOAD_EXCLUDE_NONE || any < 0, "scr_preload_screen_baseline (a rule's file)", path,
          rules, count);
    check(screened != SCR_PRELOAD_EXCLUDE_ALL || dir_ref < 0, "scr_preload_screen_baseline (a rule directory)",
          path, rules, count);
    scr_preload_screen_function avx2 = scr_preload_screen_variant("avx2");
    if (avx2) check(avx2(set, at) == screened, "scr_preload_screen_avx2 against baseline", path, rules, count);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size < 1 || size > 4096) return 0;
  if (!screen_page) {
    char* pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) abort();
    munmap(pages + 4096, 4096);
    screen_page = pages;
  }
  int wanted = 1 + (data[0] & 3);
  const char* prefix = prefixes[(data[0] >> 2) & 3];

  /* lines; a NUL cannot be in a path or a configured pattern */
  char* text = malloc(size);
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  for (size_t i = 0; i + 1 < size; i++)
    if (text[i] == '\0') text[i] = '\n';
  char* lines[256];
  int nlines = 0;
  for (char* p = text; p && nlines < 256;) {
    lines[nlines++] = p;
    p = strchr(p, '\n');
    if (p) *p++ = '\0';
  }
  if (nlines < wanted) wanted = nlines;
  /* the reference's tables have room for patterns of this length */
  for (int i = 0; i < wanted; i++)
    if (strlen(lines[i]) > MAX_PATTERN) {
      free(text);
      return 0;
    }

  scr_kvtree* descriptors = scr_kvtree_new();
  for (int i = 0; i < wanted; i++) {
    scr_kvtree* attributes = scr_kvtree_add_kv(descriptors, "PRELOAD", lines[i]);
    if (i & 1) scr_kvtree_set_kv(attributes, "TYPE", "OUTPUT");
  }
  const scr_kvtree* rules_tree = scr_kvtree_get(descriptors, "PRELOAD");

  static ref_rule rules[MAX_RULES];
  int count = 0, valid = 1;
  for (scr_kvtree_elem* e = scr_kvtree_first(rules_tree); e; e = scr_kvtree_next(e)) {
    ref_compile(prefix, scr_kvtree_elem_key(e), &rules[count]);
    valid &= rules[count].valid;
    count++;
  }

  scr_preload_ruleset* set = NULL;
  char errbuf[512];
  int rc = scr_preload_rules_compile(rules_tree, prefix, &set, errbuf, sizeof(errbuf));
  check((rc == SCR_SUCCESS) == valid, "scr_preload_rules_compile (accepts or rejects)", lines[0], rules, count);
  check(rc == SCR_SUCCESS || (errbuf[0] != '\0' && memchr(errbuf, '\0', sizeof(errbuf))), "compile message", NULL,
        rules, count);
  if (rc == SCR_SUCCESS) {
    check(scr_preload_rules_count(set) == count, "scr_preload_rules_count", NULL, rules, count);
    for (int i = 0; i < count; i++) {
      const scr_preload_rule* info = scr_preload_rules_at(set, i);
      char dir[MAX_PATH];
      size_t n = rules[i].dir_length > 1 ? rules[i].dir_length - 1 : rules[i].dir_length;
      memcpy(dir, rules[i].dir, n);
      dir[n] = '\0';
      check(info->has_step == rules[i].has_step && info->has_rank == rules[i].has_rank,
            "has_step/has_rank", info->pattern, rules, count);
      check(strcmp(info->directory, dir) == 0, "the rule's literal directory", info->directory, rules, count);
    }
    /* the prefix directory and every rule directory on the way */
    check_path(set, rules, count, "/", 1, 0);
    for (int i = wanted; i < nlines; i++) {
      char path[MAX_PATH], mine[MAX_PATH];
      size_t length = scr_preload_path_normalize(prefix, lines[i], path, sizeof(path));
      size_t expect = lines[i][0] ? ref_normalize(prefix, lines[i], mine, sizeof(mine)) : 0;
      check(length == expect && (length == 0 || strcmp(path, mine) == 0), "scr_preload_path_normalize", lines[i],
            rules, count);
      unsigned choice = (unsigned) strlen(lines[i]);
      if (length > 0) check_path(set, rules, count, path, length, choice);
      /* the line's bytes choose what each rule's wildcards take */
      for (int r = 0; r < count; r++) {
        entropy x = { (const unsigned char*) lines[i], strlen(lines[i]), 0 };
        char raw[MAX_PATH];
        instance(&rules[r], &x, raw, sizeof(raw) - 64);
        length = ref_normalize("/", raw, path, sizeof(path));
        if (length > 0) check_path(set, rules, count, path, length, choice + (unsigned) r);
      }
    }
  }
  scr_preload_rules_free(&set);
  scr_kvtree_delete(&descriptors);
  free(text);
  return 0;
}
