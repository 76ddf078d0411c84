/* tap.h - minimal TAP producer for the C unit tests in t/unit.
 * Each check prints "ok N - name" or "not ok N - name"; tap_done prints the plan. */
#ifndef SCR_TAP_H
#define SCR_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_count = 0;
static int tap_failed = 0;

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

static inline int tap_ok(int pass, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

#include <stdarg.h>
static inline int tap_ok(int pass, const char* file, int line, const char* fmt, ...)
{
  va_list ap;
  tap_count++;
  printf("%sok %d - ", pass ? "" : "not ", tap_count);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  if (!pass) {
    tap_failed++;
    printf("#   failed at %s:%d\n", file, line);
  }
  fflush(stdout);
  return pass;
}

#define is_int(got, want, ...) do { long long g_ = (got), w_ = (want); \
    if (!ok(g_ == w_, __VA_ARGS__)) printf("#   got %lld, want %lld\n", g_, w_); } while (0)

#define is_str(got, want, ...) do { const char *g_ = (got), *w_ = (want); \
    if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__)) \
      printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); } while (0)

static inline int tap_done(void)
{
  printf("1..%d\n", tap_count);
  return tap_failed ? 1 : 0;
}

#endif
