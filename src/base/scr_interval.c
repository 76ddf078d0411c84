/* scr_interval.c - Young/Daly optimal checkpoint interval and its advice line,
 * shared by SCR_Need_checkpoint, the end-of-run summary and scr_log(1). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_interval.h"

double scr_interval_young(double cost, double mtbf)
{
  if (!(cost > 0) || !(mtbf > 0)) return 0;
  return sqrt(2.0 * cost * mtbf);
}

double scr_interval_daly(double cost, double mtbf)
{
  if (!(cost > 0) || !(mtbf > 0)) return 0;
  /* beyond C = 2M the expansion no longer holds: Daly's answer is M */
  if (cost >= 2.0 * mtbf) return mtbf;
  double ratio = cost / (2.0 * mtbf);
  return sqrt(2.0 * cost * mtbf) * (1.0 + sqrt(ratio) / 3.0 + ratio / 9.0) - cost;
}

int scr_interval_parse(const char* text, double* seconds)
{
  if (!text) return -1;
  char* end = NULL;
  double value = strtod(text, &end);
  if (end == text || !(value > 0) || isinf(value)) return -1;
  while (*end == ' ') end++;
  static const struct { const char* unit; double scale; } units[] = {
    { "", 1 }, { "s", 1 }, { "sec", 1 }, { "m", 60 }, { "min", 60 },
    { "h", 3600 }, { "hour", 3600 }, { "hours", 3600 }, { "d", 86400 }, { "day", 86400 }, { "days", 86400 },
  };
  for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
    if (strcmp(end, units[i].unit) == 0) {
      *seconds = value * units[i].scale;
      return 0;
    }
  }
  return -1;
}

void scr_interval_format(double seconds, char* buf, size_t len)
{
  /* one decimal below ten of a unit, none above or when it is 0: "2.1 s",
   * "9 min", "14 min", "0.3 ms" (a checkpoint of empty files costs that) */
  static const struct { double size; const char* name; } units[] = {
    { 86400, "d" }, { 3600, "h" }, { 60, "min" }, { 1, "s" },
  };
  if (!(seconds > 0)) {
    snprintf(buf, len, "0 s");
    return;
  }
  if (seconds < 1) {
    double ms = round(seconds * 10000.0) / 10.0;
    if (ms < 0.1) snprintf(buf, len, "under 0.1 ms");
    else snprintf(buf, len, ms < 10 && ms != floor(ms) ? "%.1f ms" : "%.0f ms", ms);
    return;
  }
  for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
    /* a unit is used from 2 of it on: 90 s, not 1.5 min */
    if (seconds >= 2 * units[i].size || units[i].size == 1) {
      double v = round(seconds / units[i].size * 10.0) / 10.0;
      snprintf(buf, len, v < 10 && v != floor(v) ? "%.1f %s" : "%.0f %s", v, units[i].name);
      return;
    }
  }
}

void scr_interval_advice(double cost, double mtbf, double actual, char* buf, size_t len)
{
  char c[32], m[32], best[32], now[32];
  scr_interval_format(cost, c, sizeof(c));
  scr_interval_format(actual, now, sizeof(now));
  if (!(mtbf > 0)) {
    snprintf(buf, len, "checkpoint cost %s, MTBF unknown (set SCR_MTBF for advice on the interval)%s%s", c,
             actual > 0 ? "; you checkpoint every " : "", actual > 0 ? now : "");
    return;
  }
  scr_interval_format(mtbf, m, sizeof(m));
  scr_interval_format(scr_interval_daly(cost, mtbf), best, sizeof(best));
  snprintf(buf, len, "checkpoint cost %s, MTBF %s: checkpoint every ~%s%s%s", c, m, best,
           actual > 0 ? "; you checkpoint every " : "", actual > 0 ? now : "");
}
