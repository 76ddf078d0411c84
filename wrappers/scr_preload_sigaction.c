/* scr_preload_sigaction.c - the program's signal handlers run inside the
 * library's guard: what a handler does goes to libc as without the layer. */
#include "config.h"
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include "scr_preload_real.h"

/* Why. Routing a file runs the engine: it allocates, takes the engine's
 * lock, rewrites the filemap and, at the last close of a checkpoint, runs
 * MPI collectives. None of that is async-signal-safe. A SIGALRM handler
 * that wrote a checkpoint file (open, write, close: safe calls natively)
 * hung the rank when the signal came while the program was in free(): the
 * handler's open went into the engine, whose calloc waited for the malloc
 * lock its own thread held (gdb, a malloc loop under a 500 Hz timer;
 * ThreadSanitizer reports every such call as signal-unsafe). A handler on
 * another thread (MPICH's progress thread takes signals too) can also find
 * the engine in the middle of a completion's collectives on the main one.
 *
 * So the program's handlers are called through handler_trampoline, which
 * raises the guard the library raises around its own I/O: the handler's
 * calls go to libc. A file it creates is made on the file system, not in
 * the cache (the program finds it there, as without the layer, but it is
 * not part of a checkpoint); the last close of a routed file it makes
 * reaches the engine at the program's next call, as any close made inside
 * the guard does. The program sees its own handlers: sigaction's old action
 * and signal's result name them, with the flags it gave. A handler that
 * leaves by longjmp lowers the guard again (the longjmp wrappers below). */

typedef void (*handler_function)(int, siginfo_t*, void*);

/* the program's handler of each signal, and whether it asked for SA_SIGINFO;
 * the entry stays when the program restores SIG_DFL, so that a signal the
 * kernel had already handed to the trampoline still finds it */
static struct {
  handler_function handler;
  int siginfo;
} handler_table[_NSIG];

/* this thread: handlers running on it, and the guard's depth when the
 * outermost of them started */
static __thread int handler_nesting __attribute__((tls_model("initial-exec")));
static __thread int handler_outer_depth __attribute__((tls_model("initial-exec")));

/* Every handler is called with three arguments, as the kernel calls any
 * handler on Linux: one that takes only the signal number ignores the other
 * two, so the table needs no second word read together with the first. */
static void handler_trampoline(int sig, siginfo_t* info, void* context)
{
  handler_function handler = __atomic_load_n(&handler_table[sig].handler, __ATOMIC_ACQUIRE);
  if (__builtin_expect(!handler, 0)) return; /* not installed through us: cannot be */
  if (handler_nesting++ == 0) handler_outer_depth = scr_preload_real_internal_depth;
  scr_preload_real_enter();
  handler(sig, info, context);
  scr_preload_real_leave();
  handler_nesting--;
}

/* a function the program installs (not SIG_DFL, SIG_IGN, SIG_HOLD or
 * SIG_ERR), on a signal the table has, and not the trampoline itself (an
 * action read with the real sigaction and put back) */
static int handler_wrappable(int sig, void* handler)
{
  return sig > 0 && sig < _NSIG && (uintptr_t) handler > 2 && handler != (void*) SIG_ERR &&
         handler != (void*) handler_trampoline;
}

static void handler_record(int sig, handler_function handler, int siginfo)
{
  __atomic_store_n(&handler_table[sig].siginfo, siginfo, __ATOMIC_RELAXED);
  __atomic_store_n(&handler_table[sig].handler, handler, __ATOMIC_RELEASE);
}

/* an action as the kernel holds it, as the program set it: the table's
 * handler (as it was before the call) in place of the trampoline */
static void handler_translate(struct sigaction* action, handler_function handler, int siginfo)
{
  if (action->sa_sigaction != handler_trampoline || !handler) return;
  action->sa_sigaction = handler;
  if (!siginfo) action->sa_flags &= ~SA_SIGINFO;
}

static int handler_sigaction(int sig, const struct sigaction* act, struct sigaction* old)
{
  int (*real)(int, const struct sigaction*, struct sigaction*) = SCR_REAL(sigaction);
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  int valid = sig > 0 && sig < _NSIG;
  handler_function before = valid ? __atomic_load_n(&handler_table[sig].handler, __ATOMIC_ACQUIRE) : NULL;
  int before_siginfo = valid ? __atomic_load_n(&handler_table[sig].siginfo, __ATOMIC_RELAXED) : 0;
  struct sigaction ours;
  int wrapped = act && handler_wrappable(sig, (void*) act->sa_sigaction);
  if (wrapped) {
    handler_record(sig, act->sa_sigaction, (act->sa_flags & SA_SIGINFO) != 0);
    ours = *act;
    ours.sa_sigaction = handler_trampoline;
    ours.sa_flags |= SA_SIGINFO;
    act = &ours;
  }
  int rc = real(sig, act, old);
  if (rc != 0 && wrapped) handler_record(sig, before, before_siginfo);
  if (rc == 0 && old) handler_translate(old, before, before_siginfo);
  return rc;
}

SCR_PRELOAD_API int sigaction(int sig, const struct sigaction* act, struct sigaction* old)
{
  return handler_sigaction(sig, act, old);
}

/* signal and its relatives set the action their own way (BSD or System V
 * flags, siginterrupt's choice, sigset's SIG_HOLD), which is kept: the real
 * call sets it, then the handler in the kernel's action is swapped for the
 * trampoline. A signal between the two runs the handler outside the guard,
 * as every handler ran before. */
static sighandler_t handler_adopt(int sig, sighandler_t handler, sighandler_t (*real)(int, sighandler_t))
{
  if (!real) {
    errno = ENOSYS;
    return SIG_ERR;
  }
  int valid = sig > 0 && sig < _NSIG;
  handler_function before = valid ? __atomic_load_n(&handler_table[sig].handler, __ATOMIC_ACQUIRE) : NULL;
  sighandler_t result = real(sig, handler);
  if (result == SIG_ERR) return result;
  int (*real_sigaction)(int, const struct sigaction*, struct sigaction*) = SCR_REAL(sigaction);
  struct sigaction current;
  if (real_sigaction && handler_wrappable(sig, (void*) handler) && real_sigaction(sig, NULL, &current) == 0 &&
      current.sa_handler == handler && !(current.sa_flags & SA_SIGINFO)) {
    int saved_errno = errno;
    handler_record(sig, (handler_function) (void*) handler, 0);
    current.sa_sigaction = handler_trampoline;
    current.sa_flags |= SA_SIGINFO;
    real_sigaction(sig, &current, NULL);
    errno = saved_errno;
  }
  if (result == (sighandler_t) (void*) handler_trampoline && before) result = (sighandler_t) (void*) before;
  return result;
}

#define HANDLER_SIGNAL_WRAPPER(name) \
  SCR_PRELOAD_API sighandler_t name(int sig, sighandler_t handler) \
  { \
    return handler_adopt(sig, handler, SCR_REAL(name)); \
  }
HANDLER_SIGNAL_WRAPPER(signal)
HANDLER_SIGNAL_WRAPPER(bsd_signal)
HANDLER_SIGNAL_WRAPPER(ssignal)
HANDLER_SIGNAL_WRAPPER(sysv_signal)
HANDLER_SIGNAL_WRAPPER(__sysv_signal)
HANDLER_SIGNAL_WRAPPER(sigset)

/* A handler may leave by longjmp (a probe for an instruction or an address
 * that catches SIGILL or SIGSEGV): the guard it raised would stay up, and
 * the thread would route nothing for the rest of its life. A longjmp made
 * while a handler runs on the thread is taken to leave every handler
 * running on it (a jump to a setjmp inside the same handler is the rare
 * case, and then the rest of that handler is routed as before). */
static void handler_leave_all(void)
{
  if (__builtin_expect(handler_nesting == 0, 1)) return;
  scr_preload_real_internal_depth = handler_outer_depth;
  handler_nesting = 0;
}

void __longjmp_chk(struct __jmp_buf_tag env[1], int value) __attribute__((noreturn));

#define HANDLER_LONGJMP_WRAPPER(name) \
  SCR_PRELOAD_API __attribute__((noreturn)) void name(struct __jmp_buf_tag env[1], int value) \
  { \
    handler_leave_all(); \
    SCR_REAL(name)(env, value); \
    __builtin_unreachable(); \
  }
HANDLER_LONGJMP_WRAPPER(longjmp)
HANDLER_LONGJMP_WRAPPER(_longjmp)
HANDLER_LONGJMP_WRAPPER(siglongjmp)
HANDLER_LONGJMP_WRAPPER(__longjmp_chk)
