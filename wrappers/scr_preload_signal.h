/* scr_preload_signal.h - a backtrace in the log when a preloaded process dies of
 * SIGSEGV, SIGBUS, SIGFPE or SIGABRT, after which the signal takes its course. */
#ifndef SCR_PRELOAD_SIGNAL_H
#define SCR_PRELOAD_SIGNAL_H

/* Install the handlers (once; later calls do nothing): sigaction with
 * SA_SIGINFO | SA_ONSTACK, on an alternate stack for the calling thread
 * unless it has one. A signal whose disposition is SIG_IGN is left alone.
 * On a signal the handler puts back the disposition it found (SIG_DFL or the
 * application's handler), writes "SCR rank R on HOST: caught SIGSEGV (address
 * 0x0); backtrace:" and one line per frame to stderr with write(2) alone,
 * then lets the signal happen again: a fault by returning to the faulting
 * instruction, a sent signal by raising it. So the process still dumps core
 * and dies of the signal, or the application's own handler runs as if ours
 * were not there. An application handler installed after ours replaces it.
 * The prefix names the rank from scr_log_rank, read at the signal, and the
 * host, read now: the handler may not call gethostname. Called when the rule
 * set is installed. */
void scr_preload_signal_install(void);

#endif
