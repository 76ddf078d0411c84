/* scr_interval.h - the checkpoint interval that loses the least time to
 * checkpoints and failures (Young, Daly), and the one line of advice about it. */
#ifndef SCR_INTERVAL_H
#define SCR_INTERVAL_H

#include <stddef.h>

/* Young's first-order optimum: sqrt(2 * cost * mtbf) seconds of compute
 * between checkpoints; 0 when cost or mtbf is not positive */
double scr_interval_young(double cost, double mtbf);

/* Daly's higher-order optimum (FGCS 22, 2006), compute seconds between
 * checkpoints: sqrt(2CM) * (1 + sqrt(C/2M)/3 + (C/2M)/9) - C while C < 2M,
 * else M; 0 when cost or mtbf is not positive */
double scr_interval_daly(double cost, double mtbf);

/* a duration such as "90", "90s", "15m", "6h", "2d" (a number with an
 * optional unit) into *seconds; -1 when text is not one or not positive */
int scr_interval_parse(const char* text, double* seconds);

/* "2.1 s", "9 min", "6 h", "1.5 d": as a person says it */
void scr_interval_format(double seconds, char* buf, size_t len);

/* "checkpoint cost 2.1 s, MTBF 6 h: checkpoint every ~9 min; you checkpoint
 * every 2 min". mtbf <= 0: no advice, the line says how to get it; actual
 * <= 0: the last part is left out. */
void scr_interval_advice(double cost, double mtbf, double actual, char* buf, size_t len);

#endif
