/* scr_recovery.h - the library's part of a recovery's phases in the event log:
 * RESTORED once SCR_Init has restored a checkpoint, RESUMED once the program is past its restart. */
#ifndef SCR_RECOVERY_H
#define SCR_RECOVERY_H

/* SCR_Init (or the preload engine, which settles the other cached datasets
 * after it) has restored dataset id called name; nothing when id < 0. Logs
 * RESTORED and waits for the program to resume */
void scr_recovery_restored(int id, const char* name);

/* the preload engine: a file of a rule was closed. While a restore waits for
 * the program to resume, this is its restart read, the end of which is when
 * it resumed */
void scr_recovery_read_closed(void);

/* the program is past its restart: it asked for a checkpoint (where, as
 * "SCR_Need_checkpoint"), began a dataset, or finalizes. Logs RESUMED once
 * after RESTORED, at the end of the restart read the preload saw if any,
 * else now */
void scr_recovery_resumed(const char* where);

#endif
