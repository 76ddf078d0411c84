/* scr_preload_screen.c - the first step of every wrapped call on a path while
 * rules are loaded: rule the path out on its text alone, in one short pass. */
#include "config.h"
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && !defined(SCR_PRELOAD_SCREEN_PORTABLE)
#define SCREEN_SSE2 1
#include <emmintrin.h>
#endif
#include "scr_preload_path.h"
#include "scr_preload_rules_impl.h"
#include "scr_preload_wrap.h"

/* Why one function, straight through, and no loop over bytes: a wrapped call
 * sits between two system calls, and the kernel's work leaves the
 * instruction cache and the branch predictors cold. Measured on a 2-core VM
 * right after an open+close, each 64-byte line of code run costs about 2 ns
 * and each call or taken branch about 1 ns more, while the arithmetic is
 * nearly free. So the path is read 64 bytes at a time (from its start,
 * unless that would cross into the next page: then the whole lines that
 * hold it), and its length, its last '/' and any "//" or "/." come out of
 * three bit masks; the rule set's
 * prefix is compared a word at a time; the helpers are inlined. Timed
 * right after an open+close, against the scan-then-compare it replaced
 * (three calls and a loop over words), with 10 rules: 5-12 ns instead of
 * 45-57 for a path outside the prefix, 25-33 instead of 75 for one inside.
 * Through the wrappers the gain is smaller (t/perf/preload-passthrough.sh:
 * 0.2-1.1% of an open+close or a stat). */

#define SCREEN_INLINE static inline __attribute__((always_inline))

SCREEN_INLINE uint64_t load64(const char* s)
{
  uint64_t w;
  memcpy(&w, s, sizeof(w));
  return w;
}

SCREEN_INLINE uint32_t load32(const char* s)
{
  uint32_t w;
  memcpy(&w, s, sizeof(w));
  return w;
}

/* one bit per byte of a 64-byte line: bit i stands for byte i */
typedef struct {
  uint64_t zero, slash, dot;
} line_bits;

#if SCREEN_SSE2
SCREEN_INLINE uint64_t line_equal(__m128i v0, __m128i v1, __m128i v2, __m128i v3, char c)
{
  const __m128i x = _mm_set1_epi8(c);
  uint64_t b0 = (uint32_t) _mm_movemask_epi8(_mm_cmpeq_epi8(v0, x));
  uint64_t b1 = (uint32_t) _mm_movemask_epi8(_mm_cmpeq_epi8(v1, x));
  uint64_t b2 = (uint32_t) _mm_movemask_epi8(_mm_cmpeq_epi8(v2, x));
  uint64_t b3 = (uint32_t) _mm_movemask_epi8(_mm_cmpeq_epi8(v3, x));
  return b0 | b1 << 16 | b2 << 32 | b3 << 48;
}

/* line is 64-byte aligned, so it lies in one page: reading past the NUL
 * that ends a path in it cannot fault. Values, not arrays or pointers to
 * locals: GCC's sanitizer marks an addressable local dead at the end of its
 * scope even when inlined into the uninstrumented screen, and that mark
 * then stays on the stack after the screen returns. */
SCREEN_INLINE line_bits line_scan(const char* line)
{
  const __m128i* p = (const __m128i*) line;
  __m128i v0 = _mm_load_si128(p), v1 = _mm_load_si128(p + 1), v2 = _mm_load_si128(p + 2), v3 = _mm_load_si128(p + 3);
  line_bits bits = { line_equal(v0, v1, v2, v3, 0), line_equal(v0, v1, v2, v3, '/'), line_equal(v0, v1, v2, v3, '.') };
  return bits;
}

/* the same for the 64 bytes from s on, which must lie in one page */
SCREEN_INLINE line_bits line_scan_from(const char* s)
{
  const __m128i* p = (const __m128i*) s;
  __m128i v0 = _mm_loadu_si128(p), v1 = _mm_loadu_si128(p + 1), v2 = _mm_loadu_si128(p + 2),
          v3 = _mm_loadu_si128(p + 3);
  line_bits bits = { line_equal(v0, v1, v2, v3, 0), line_equal(v0, v1, v2, v3, '/'), line_equal(v0, v1, v2, v3, '.') };
  return bits;
}
#else
/* elsewhere eight bytes at a time: the high bit of each byte of w equal to
 * c (no borrow between bytes), gathered into one bit per byte by a multiply
 * that moves byte j's high bit to bit 56 + j */
SCREEN_INLINE uint64_t word_equal(uint64_t w, unsigned char c)
{
  const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
  uint64_t x = w ^ (0x0101010101010101ull * c);
  uint64_t high = ~(((x & low7) + low7) | x | low7);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  high = __builtin_bswap64(high);
#endif
  return (high * 0x0002040810204081ull) >> 56;
}

SCREEN_INLINE line_bits line_scan(const char* line)
{
  line_bits bits = { 0, 0, 0 };
  for (int i = 0; i < 8; i++) {
    uint64_t w = load64(line + 8 * i);
    bits.zero |= word_equal(w, 0) << (8 * i);
    bits.slash |= word_equal(w, '/') << (8 * i);
    bits.dot |= word_equal(w, '.') << (8 * i);
  }
  return bits;
}

SCREEN_INLINE line_bits line_scan_from(const char* s) { return line_scan(s); }
#endif

/* 1 when a[0, n) and b[0, n) differ; whole words, the last one overlapping
 * the one before, so that no byte outside the ranges is read, and no loop
 * up to 16 bytes (the common directory of most rule sets) */
SCREEN_INLINE int bytes_differ(const char* a, const char* b, size_t n)
{
  if (__builtin_expect(n > 16, 0)) {
    uint64_t diff = load64(a + n - 8) ^ load64(b + n - 8);
    for (size_t i = 0; i + 8 < n; i += 8) diff |= load64(a + i) ^ load64(b + i);
    return diff != 0;
  }
  if (n >= 8) return ((load64(a) ^ load64(b)) | (load64(a + n - 8) ^ load64(b + n - 8))) != 0;
  if (n >= 4) return ((load32(a) ^ load32(b)) | (load32(a + n - 4) ^ load32(b + n - 4))) != 0;
  if (n == 0) return 0;
  /* 1 to 3 bytes: the first, the middle and the last cover them */
  return ((a[0] ^ b[0]) | (a[n / 2] ^ b[n / 2]) | (a[n - 1] ^ b[n - 1])) != 0;
}

SCREEN_INLINE int name_may_match(const scr_preload_ruleset* ruleset, const char* name, size_t length)
{
  /* "." and "..": the name of a directory, whose own name decides */
  if (length <= 2 && (length == 0 || (name[0] == '.' && (length == 1 || name[1] == '.')))) return 1;
  if (ruleset->filters_pass || length < 4) return ruleset->count > 0;
  uint32_t first = load32(name), last = load32(name + length - 4);
  uint32_t n = length > UINT32_MAX ? UINT32_MAX : (uint32_t) length;
  filter_lanes firsts = { first, first, first, first }, lasts = { last, last, last, last }, lengths = { n, n, n, n };
  filter_hits hits = { 0, 0, 0, 0 };
  /* no branch per rule: a mispredicted branch costs more than the arithmetic;
   * groups come in pairs, so that up to eight rules take no loop */
  for (int g = 0; g < ruleset->filter_groups; g += 2) {
    const name_filters* f = &ruleset->filters[g];
    hits |= ((firsts & f[0].prefix_mask) == f[0].prefix) & ((lasts & f[0].suffix_mask) == f[0].suffix) &
            (lengths >= f[0].min_length);
    hits |= ((firsts & f[1].prefix_mask) == f[1].prefix) & ((lasts & f[1].suffix_mask) == f[1].suffix) &
            (lengths >= f[1].min_length);
  }
  return (hits[0] | hits[1] | hits[2] | hits[3]) != 0;
}

SCREEN_INLINE int exclude(const scr_preload_ruleset* ruleset, const char* path, size_t length, size_t name)
{
  const char* common = ruleset->common;
  size_t directory = ruleset->common_directory_length;
  /* a rule directory: path + "/" starts with the common directory, which
   * ends in '/' (no rule at all: SIZE_MAX, which nothing reaches) */
  if (length + 1 < directory) return SCR_PRELOAD_EXCLUDE_ALL;
  if (length < directory)
    return bytes_differ(path, common, length) || common[length] != '/' ? SCR_PRELOAD_EXCLUDE_ALL
                                                                        : SCR_PRELOAD_EXCLUDE_FILE;
  if (bytes_differ(path, common, directory)) return SCR_PRELOAD_EXCLUDE_ALL;
  /* a rule's file: the rest of the common prefix, then the name */
  if (length < ruleset->common_length ||
      bytes_differ(path + directory, common + directory, ruleset->common_length - directory) ||
      !name_may_match(ruleset, path + name, length - name))
    return SCR_PRELOAD_EXCLUDE_FILE;
  return SCR_PRELOAD_EXCLUDE_NONE;
}

/* what the scan found decides: a relative path only by its file name, an
 * absolute one that normalizing would change only by the full lookup */
SCREEN_INLINE int screen_decide(const scr_preload_ruleset* rules, const char* path, size_t length, size_t name,
                                int odd)
{
  if (length == 0) return SCR_PRELOAD_EXCLUDE_ALL;
  if (path[0] != '/')
    return name_may_match(rules, path + name, length - name) ? SCR_PRELOAD_EXCLUDE_NONE : SCR_PRELOAD_EXCLUDE_FILE;
  if (odd) return SCR_PRELOAD_EXCLUDE_NONE;
  return exclude(rules, path, length, name);
}

/* a path of 64 bytes or more: the general scan, out of the hot code */
static SCR_PRELOAD_COLD int screen_long(const scr_preload_ruleset* rules, const char* path)
{
  size_t name;
  int odd;
  size_t length = scr_preload_path_scan(path, &name, &odd);
  return screen_decide(rules, path, length, name, odd);
}

/* reads the whole lines that hold the path, which a sanitizer would call an
 * overflow of the string (the bytes past the NUL are never used) */
__attribute__((no_sanitize_address)) SCR_PRELOAD_HOT int scr_preload_lookup_screen(const scr_preload_ruleset* rules,
                                                                                  const char* path)
{
  /* libc declares the paths nonnull; applications do pass NULL */
  __asm__("" : "+r"(path));
  if (__builtin_expect(!path, 0)) return SCR_PRELOAD_EXCLUDE_ALL;
  uintptr_t address = (uintptr_t) path;
  uint64_t zero, slash, dot;
  if (__builtin_expect((address & 4095) <= 4096 - 64, 1)) {
    /* the 64 bytes from the path's start at once: one scan for any path
     * shorter than that, wherever it starts in its line */
    line_bits line = line_scan_from(path);
    zero = line.zero, slash = line.slash, dot = line.dot;
    if (__builtin_expect(!zero, 0)) return screen_long(rules, path);
  } else {
    /* near the end of a page only whole lines are sure to be readable */
    unsigned skip = (unsigned) (address & 63);
    line_bits line = line_scan(path - skip);
    zero = line.zero >> skip, slash = line.slash >> skip, dot = line.dot >> skip;
    if (!zero) {
      /* the path goes on into the next line, which is therefore readable;
       * its bytes follow the 64 - skip of this one (none when skip is 0) */
      line_bits next = line_scan(path - skip + 64);
      zero |= (next.zero << 1) << (63 - skip);
      slash |= (next.slash << 1) << (63 - skip);
      dot |= (next.dot << 1) << (63 - skip);
      if (!zero) return screen_long(rules, path);
    }
  }
  size_t length = (size_t) __builtin_ctzll(zero);
  uint64_t inside = (zero & -zero) - 1;
  slash &= inside;
  dot &= inside;
  size_t name = slash ? (size_t) (64 - __builtin_clzll(slash)) : 0;
  /* "//" or "/." anywhere, or a trailing '/' other than the root's */
  int odd = (slash & ((slash | dot) >> 1)) != 0 || (length > 1 && name == length);
  return screen_decide(rules, path, length, name, odd);
}

int scr_preload_rules_name_may_match(const scr_preload_ruleset* ruleset, const char* name, size_t length)
{
  return name_may_match(ruleset, name, length);
}

int scr_preload_rules_exclude(const scr_preload_ruleset* ruleset, const char* path, size_t length,
                              size_t name_offset)
{
  if (!ruleset || ruleset->count == 0) return SCR_PRELOAD_EXCLUDE_ALL;
  return exclude(ruleset, path, length, name_offset);
}
