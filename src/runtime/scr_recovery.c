/* scr_recovery.c - the recovery phases the library logs (scr_log(1) reads them beside
 * scr_run's): when SCR_Init had restored a checkpoint and when the program had resumed after it. */
#include "config.h"
#include "scr_log.h"
#include "scr_globals.h"
#include "scr_event_log.h"
#include "scr_recovery.h"

/* the dataset restored, while the program has not resumed yet (-1: none),
 * and when the program last closed a rule's file since (preload; 0: never).
 * Atomic: a program's thread may close a file while another begins its
 * next checkpoint */
static int scr_recovery_dataset = -1;
static double scr_recovery_read_end = 0;

void scr_recovery_restored(int id, const char* name)
{
  double none = 0;
  __atomic_store(&scr_recovery_read_end, &none, __ATOMIC_RELAXED);
  __atomic_store_n(&scr_recovery_dataset, id, __ATOMIC_RELEASE);
  if (id < 0) return;
  /* from the start of SCR_Init: the fetch or rebuild is inside */
  scr_event_log("RESTORED", "dset=%d name=%s seconds=%.3f", id, name && *name ? name : "?",
                scr_log_seconds() - scr.time_init);
}

void scr_recovery_read_closed(void)
{
  if (__atomic_load_n(&scr_recovery_dataset, __ATOMIC_ACQUIRE) < 0) return;
  double now = scr_log_seconds();
  __atomic_store(&scr_recovery_read_end, &now, __ATOMIC_RELAXED);
}

void scr_recovery_resumed(const char* where)
{
  int id = __atomic_exchange_n(&scr_recovery_dataset, -1, __ATOMIC_ACQ_REL);
  if (id < 0) return;
  double read_end;
  __atomic_load(&scr_recovery_read_end, &read_end, __ATOMIC_RELAXED);
  /* An unmodified program's restart is its reads of the restored files
   * (through the preload): it has resumed when the last of them is closed,
   * which is known only once it does something else, such as its next
   * checkpoint. A program of the API resumes at its first call after its
   * restart (a step is done). */
  if (read_end > 0)
    scr_event_log_at(read_end, "RESUMED", "dset=%d after=restart-read seen_at=%s", id, where);
  else
    scr_event_log("RESUMED", "dset=%d after=%s", id, where);
}
