/* scr_preload_screen.c - the first step of every wrapped call on a path while
 * rules are loaded: rule the path out on its text alone, in one short pass. */
#include "config.h"
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && !defined(SCR_PRELOAD_SCREEN_PORTABLE)
#define SCREEN_SSE2 1
#include <immintrin.h>
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
 * unless that would cross into the next page: then, out of the hot code,
 * the whole lines that hold it), and its length, its last '/', any "//" or
 * "/." and how far it agrees with the rules' common prefix come out of four
 * bit masks; the file name is filtered by five table loads (name_tables);
 * the blocks
 * are laid out so that a path outside the prefix, or under it, runs
 * straight through. Against the word-at-a-time prefix compare and the
 * four-rule filter before it, averaged over eight placements of the code in
 * its pages (t/perf/preload-layouts.sh, 10 rules): an open/stat/fopen loop
 * on a path under the prefix went from 1.036 to 1.026 of libc's time, a
 * relative one from 1.034 to 1.026, one outside from 1.021 to 1.020. The
 * AVX2 scan, in the same runs as this SSE2 one: 1.022 against 1.028 under
 * the prefix, 1.025 against 1.028 relative, 1.019 against 1.022 outside;
 * with the name tables in place of the loop over groups of eight rules'
 * filters: 1.019, 1.020 and 1.018 (SSE2 in the same runs: 1.021, 1.023,
 * 1.023). */

#define SCREEN_INLINE static inline __attribute__((always_inline))
/* the scans read whole lines past the NUL of a path, which AddressSanitizer
 * calls an overflow and ThreadSanitizer a race with whatever else the heap
 * holds in those bytes: neither looks at the functions that do it */
#define SCREEN_UNCHECKED __attribute__((no_sanitize_address, no_sanitize_thread))

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

/* the same for the 64 bytes from s on, which must lie in one page, and
 * where they differ from the 64-byte aligned line `common` */
SCREEN_INLINE line_bits line_scan_from(const char* s, const char* common, uint64_t* differ)
{
  const __m128i* p = (const __m128i*) s;
  const __m128i* c = (const __m128i*) common;
  __m128i v0 = _mm_loadu_si128(p), v1 = _mm_loadu_si128(p + 1), v2 = _mm_loadu_si128(p + 2),
          v3 = _mm_loadu_si128(p + 3);
  line_bits bits = { line_equal(v0, v1, v2, v3, 0), line_equal(v0, v1, v2, v3, '/'), line_equal(v0, v1, v2, v3, '.') };
  uint64_t e0 = (uint32_t) _mm_movemask_epi8(_mm_cmpeq_epi8(v0, _mm_load_si128(c)));
  uint64_t e1 = (uint32_t) _mm_movemask_epi8(_mm_cmpeq_epi8(v1, _mm_load_si128(c + 1)));
  uint64_t e2 = (uint32_t) _mm_movemask_epi8(_mm_cmpeq_epi8(v2, _mm_load_si128(c + 2)));
  uint64_t e3 = (uint32_t) _mm_movemask_epi8(_mm_cmpeq_epi8(v3, _mm_load_si128(c + 3)));
  *differ = ~(e0 | e1 << 16 | e2 << 32 | e3 << 48);
  return bits;
}

/* The same in two 32-byte halves, for processors with AVX2 (chosen at run
 * time): half the instructions, and two fewer lines of hot code. */
#define SCREEN_AVX2 1
#define SCREEN_AVX2_TARGET __attribute__((target("avx2")))
SCREEN_INLINE SCREEN_AVX2_TARGET uint64_t halves_equal(__m256i low, __m256i high, __m256i x)
{
  return (uint32_t) _mm256_movemask_epi8(_mm256_cmpeq_epi8(low, x)) |
         (uint64_t) (uint32_t) _mm256_movemask_epi8(_mm256_cmpeq_epi8(high, x)) << 32;
}

SCREEN_INLINE SCREEN_AVX2_TARGET line_bits line_scan_from_avx2(const char* s, const char* common, uint64_t* differ)
{
  __m256i low = _mm256_loadu_si256((const __m256i*) s), high = _mm256_loadu_si256((const __m256i*) (s + 32));
  line_bits bits = { halves_equal(low, high, _mm256_setzero_si256()), halves_equal(low, high, _mm256_set1_epi8('/')),
                     halves_equal(low, high, _mm256_set1_epi8('.')) };
  uint64_t equal = (uint32_t) _mm256_movemask_epi8(_mm256_cmpeq_epi8(low, _mm256_load_si256((const __m256i*) common))) |
                   (uint64_t) (uint32_t) _mm256_movemask_epi8(
                     _mm256_cmpeq_epi8(high, _mm256_load_si256((const __m256i*) (common + 32)))) << 32;
  *differ = ~equal;
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

SCREEN_INLINE line_bits line_scan_from(const char* s, const char* common, uint64_t* differ)
{
  uint64_t equal = 0;
  for (int i = 0; i < 8; i++) equal |= word_equal(load64(s + 8 * i) ^ load64(common + 8 * i), 0) << (8 * i);
  *differ = ~equal;
  return line_scan(s);
}
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
  if (__builtin_expect(length <= 2, 0)) {
    if (length == 0 || (name[0] == '.' && (length == 1 || name[1] == '.'))) return 1;
    if (length < 2) return ruleset->count > 0;
  }
  const name_tables* t = &ruleset->names;
  const unsigned char* bytes = (const unsigned char*) name;
  return (t->first[bytes[0]] & t->second[bytes[1]] & t->penultimate[bytes[length - 2]] & t->last[bytes[length - 1]] &
          t->length[length < RULES_NAME_LENGTHS ? length : RULES_NAME_LENGTHS - 1]) != 0;
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

/* exclude() out of the hot code: for a path near a page's end, and for a
 * rule set whose common prefix does not fit its first line */
static SCR_PRELOAD_COLD int exclude_cold(const scr_preload_ruleset* ruleset, const char* path, size_t length,
                                         size_t name)
{
  return exclude(ruleset, path, length, name);
}

/* where an absolute path read from its start stands to the rules' common
 * prefix: SCR_PRELOAD_EXCLUDE_NONE when it has all of it (its file name
 * decides), else as exclude(). differ has bit i set where byte i of the
 * path differs from byte i of the rule set's first line, whose common
 * prefix holds no NUL, so a path that has all of it is no shorter. */
SCREEN_INLINE int prefix_differing(const scr_preload_ruleset* ruleset, size_t length, uint64_t differ)
{
  size_t same = (size_t) __builtin_ctzll(differ | 1ull << 63);   /* bytes equal from the start */
  size_t common = ruleset->screen_common_length, directory = ruleset->screen_directory_length;
  if (same >= common) return SCR_PRELOAD_EXCLUDE_NONE;
  /* in the common directory, or that directory itself */
  return same >= directory || (same == length && length + 1 == directory) ? SCR_PRELOAD_EXCLUDE_FILE
                                                                          : SCR_PRELOAD_EXCLUDE_ALL;
}

/* what the scan found decides: a relative path only by its file name, an
 * absolute one by the common prefix first (or, when normalizing would
 * change it, by the full lookup). differ as above, 0 when not known. One
 * name filter for both, so that its code is in the hot lines once. */
SCREEN_INLINE int screen_decide(const scr_preload_ruleset* rules, const char* path, size_t length, size_t name,
                                int odd, uint64_t differ)
{
  if (length == 0) return SCR_PRELOAD_EXCLUDE_ALL;
  if (__builtin_expect(path[0] == '/', 1)) {
    if (__builtin_expect(odd, 0)) return SCR_PRELOAD_EXCLUDE_NONE;
    if (__builtin_expect(!differ, 0)) return exclude_cold(rules, path, length, name);
    int where = prefix_differing(rules, length, differ);
    if (where != SCR_PRELOAD_EXCLUDE_NONE) return where;
  }
  return name_may_match(rules, path + name, length - name) ? SCR_PRELOAD_EXCLUDE_NONE : SCR_PRELOAD_EXCLUDE_FILE;
}

/* a path of 64 bytes or more: the general scan, out of the hot code */
static SCR_PRELOAD_COLD int screen_long(const scr_preload_ruleset* rules, const char* path)
{
  size_t name;
  int odd;
  size_t length = scr_preload_path_scan(path, &name, &odd);
  return screen_decide(rules, path, length, name, odd, 0);
}

/* the scan of a path shorter than 64 bytes decides: bit i of each mask
 * stands for its byte i, up to its NUL (the lowest bit of zero) */
SCREEN_INLINE int screen_bits(const scr_preload_ruleset* rules, const char* path, uint64_t zero, uint64_t slash,
                              uint64_t dot, uint64_t differ)
{
  size_t length = (size_t) __builtin_ctzll(zero);
  uint64_t inside = (zero & -zero) - 1;
  slash &= inside;
  dot &= inside;
  /* just past the last '/', 0 without one (no branch: both are common) */
  size_t name = (size_t) (63 - __builtin_clzll(slash | 1)) + (slash != 0);
  /* "//" or "/." anywhere, or a trailing '/' other than the root's */
  int odd = ((slash & ((slash | dot) >> 1)) != 0) | ((length > 1) & (name == length));
  return screen_decide(rules, path, length, name, odd, differ);
}

/* a path that starts in the last 63 bytes of a page, where only whole lines
 * are sure to be readable: out of the hot code, as 1 in 64 are */
static SCR_PRELOAD_COLD SCREEN_UNCHECKED int screen_near_page_end(const scr_preload_ruleset* rules, const char* path)
{
  unsigned skip = (unsigned) ((uintptr_t) path & 63);
  line_bits line = line_scan(path - skip);
  uint64_t zero = line.zero >> skip, slash = line.slash >> skip, dot = line.dot >> skip;
  if (!zero) {
    /* the path goes on into the next line, which is therefore readable;
     * its bytes follow the 64 - skip of this one (none when skip is 0) */
    line_bits next = line_scan(path - skip + 64);
    zero |= (next.zero << 1) << (63 - skip);
    slash |= (next.slash << 1) << (63 - skip);
    dot |= (next.dot << 1) << (63 - skip);
    if (!zero) return screen_long(rules, path);
  }
  return screen_bits(rules, path, zero, slash, dot, 0);
}

/* One entry per scan: reads 64 bytes from the path's start, which a
 * sanitizer would call an overflow of the string (the bytes past the NUL
 * are never used). `scan` fills `line` and `differ` from 64 bytes at path. */
#define SCREEN_ENTRY(name, target, scan) \
  SCREEN_UNCHECKED SCR_PRELOAD_HOT target int name(const scr_preload_ruleset* rules, const char* path) \
  { \
    /* libc declares the paths nonnull; applications do pass NULL */ \
    __asm__("" : "+r"(path)); \
    if (__builtin_expect(!path, 0)) return SCR_PRELOAD_EXCLUDE_ALL; \
    if (__builtin_expect(((uintptr_t) path & 4095) > 4096 - 64, 0)) return screen_near_page_end(rules, path); \
    /* one scan for any path shorter than 64 bytes, wherever it starts in \
     * its line, and its compare with the rules' common prefix */ \
    uint64_t differ; \
    line_bits line = scan(path, rules->common_inline, &differ); \
    if (__builtin_expect(!line.zero, 0)) return screen_long(rules, path); \
    /* a rule set whose common prefix does not fit its first line */ \
    if (__builtin_expect(rules->screen_common_length == RULES_SCREEN_SCALAR, 0)) differ = 0; \
    return screen_bits(rules, path, line.zero, line.slash, line.dot, differ); \
  }

SCREEN_ENTRY(scr_preload_screen_baseline, , line_scan_from)
#if SCREEN_AVX2
SCREEN_ENTRY(scr_preload_screen_avx2, SCREEN_AVX2_TARGET, line_scan_from_avx2)
#endif

scr_preload_screen_function scr_preload_screen_variant(const char* name)
{
  if (strcmp(name, "baseline") == 0) return scr_preload_screen_baseline;
#if SCREEN_AVX2
  __builtin_cpu_init();
  if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2")) return scr_preload_screen_avx2;
#endif
  return NULL;
}

scr_preload_screen_function scr_preload_screen_best(void)
{
  scr_preload_screen_function avx2 = scr_preload_screen_variant("avx2");
  return avx2 ? avx2 : scr_preload_screen_baseline;
}

int scr_preload_screen_use(const char* name)
{
  scr_preload_screen_function screen = scr_preload_screen_variant(name);
  if (!screen) return -1;
  __atomic_store_n(&scr_preload_hot.screen, screen, __ATOMIC_RELAXED);
  return 0;
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
