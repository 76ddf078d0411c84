/* interval.c - unit tests of the Young/Daly checkpoint interval, the duration
 * parser behind SCR_MTBF and the advice line of the end-of-run summary. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "scr_interval.h"
#include "tap.h"

/* equal to within a relative 1e-9: the formulas are closed forms */
static int near(double got, double want)
{
  return fabs(got - want) <= 1e-9 * fabs(want) + 1e-12;
}

int main(void)
{
  /* Young: sqrt(2 C M) */
  ok(near(scr_interval_young(2.0, 3600.0), 120.0), "Young: C=2 s, M=1 h gives 120 s");
  ok(near(scr_interval_young(50.0, 100.0), 100.0), "Young: C=50, M=100 gives 100");
  is_int(scr_interval_young(0, 3600) == 0, 1, "Young: no cost, no interval");
  is_int(scr_interval_young(2, 0) == 0, 1, "Young: no MTBF, no interval");

  /* Daly: sqrt(2CM) (1 + sqrt(C/2M)/3 + (C/2M)/9) - C for C < 2M */
  double c = 2.0, m = 3600.0, r = c / (2 * m);
  ok(near(scr_interval_daly(c, m), sqrt(2 * c * m) * (1 + sqrt(r) / 3 + r / 9) - c),
     "Daly: the higher-order form for C=2 s, M=1 h");
  ok(near(scr_interval_daly(8.0, 1.0), 1.0), "Daly: C >= 2M gives M");
  ok(near(scr_interval_daly(2.0, 1.0), 1.0), "Daly: C = 2M gives M");
  /* for C << M both agree to first order: Daly = Young - C + O(C) */
  double y = scr_interval_young(1.0, 86400.0), d = scr_interval_daly(1.0, 86400.0);
  ok(fabs(d - y) < 1.0, "Daly and Young agree when C << M (%.3f vs %.3f)", d, y);
  ok(d < y, "Daly subtracts the checkpoint itself: shorter than Young");
  is_int(scr_interval_daly(-1, 10) == 0, 1, "Daly: a negative cost gives 0");

  double s = 0;
  is_int(scr_interval_parse("90", &s), 0, "a bare number is seconds");
  ok(near(s, 90), "90 -> 90 s");
  is_int(scr_interval_parse("6h", &s), 0, "6h parses");
  ok(near(s, 21600), "6h -> 21600 s");
  is_int(scr_interval_parse("1.5 d", &s), 0, "1.5 d parses");
  ok(near(s, 129600), "1.5 d -> 129600 s");
  is_int(scr_interval_parse("15min", &s), 0, "15min parses");
  ok(near(s, 900), "15min -> 900 s");
  is_int(scr_interval_parse("0", &s), -1, "0 is no MTBF");
  is_int(scr_interval_parse("-5h", &s), -1, "a negative duration is refused");
  is_int(scr_interval_parse("6 weeks", &s), -1, "an unknown unit is refused");
  is_int(scr_interval_parse("h", &s), -1, "a unit alone is refused");

  char buf[160];
  scr_interval_format(2.1, buf, sizeof(buf));
  is_str(buf, "2.1 s", "2.1 s");
  scr_interval_format(540, buf, sizeof(buf));
  is_str(buf, "9 min", "540 s reads 9 min");
  scr_interval_format(90, buf, sizeof(buf));
  is_str(buf, "90 s", "90 s stays in seconds");
  scr_interval_format(21600, buf, sizeof(buf));
  is_str(buf, "6 h", "21600 s reads 6 h");
  scr_interval_format(0.25, buf, sizeof(buf));
  is_str(buf, "250 ms", "below a second: milliseconds");
  scr_interval_format(0.00029, buf, sizeof(buf));
  is_str(buf, "0.3 ms", "below 10 ms: one decimal, not 0 ms");
  scr_interval_format(0.00002, buf, sizeof(buf));
  is_str(buf, "under 0.1 ms", "below 0.1 ms: said so, not 0 ms");

  /* C = 2.1 s, M = 6 h: Daly gives 299.7 s, which reads 5 min */
  scr_interval_advice(2.1, 21600, 120, buf, sizeof(buf));
  is_str(buf, "checkpoint cost 2.1 s, MTBF 6 h: checkpoint every ~5 min; you checkpoint every 2 min",
         "the advice line");
  scr_interval_advice(2.1, 0, 120, buf, sizeof(buf));
  ok(strstr(buf, "MTBF unknown") && strstr(buf, "SCR_MTBF"), "without an MTBF the line says how to get advice");
  scr_interval_advice(2.1, 21600, 0, buf, sizeof(buf));
  ok(strstr(buf, "you checkpoint") == NULL, "with one checkpoint there is no interval of yours to show");
  return tap_done();
}
