/* scr_preload_signal.c - the fatal-signal handler: a backtrace written with
 * write(2) from an alternate stack, then the signal is handed back untouched. */
#include "config.h"
#define UNW_LOCAL_ONLY
#include <errno.h>
#include <libunwind.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "scr_log.h"
#include "scr_preload_real.h"
#include "scr_preload_signal.h"

#define SIGNAL_COUNT 4
#define SIGNAL_MAX_FRAMES 64
/* libunwind's symbol lookup keeps a path buffer and DWARF state on the stack */
#define SIGNAL_STACK_SIZE (128 * 1024)

static const int signal_numbers[SIGNAL_COUNT] = { SIGSEGV, SIGBUS, SIGFPE, SIGABRT };
static const char* const signal_names[SIGNAL_COUNT] = { "SIGSEGV", "SIGBUS", "SIGFPE", "SIGABRT" };
static struct sigaction signal_previous[SIGNAL_COUNT];
static int signal_installed = 0;
/* 0 until a thread starts the report, 1 while it writes, 2 after */
static int signal_reporting = 0;
static char signal_host[256] = "";

/* --- a line built without stdio or malloc */

typedef struct {
  char text[768];
  size_t n;
} signal_line;

static void line_add(signal_line* l, const char* s)
{
  while (*s && l->n < sizeof(l->text) - 1) l->text[l->n++] = *s++;
}

static void line_number(signal_line* l, uintptr_t value, unsigned base, int width)
{
  char digits[24];
  int n = 0;
  do {
    unsigned d = (unsigned) (value % base);
    digits[n++] = (char) (d < 10 ? '0' + d : 'a' + d - 10);
    value /= base;
  } while (value && n < (int) sizeof(digits));
  while (n < width && n < (int) sizeof(digits)) digits[n++] = '0';
  while (n > 0 && l->n < sizeof(l->text) - 1) l->text[l->n++] = digits[--n];
}

/* "SCR rank 3 on node7: ", or with the process id before MPI has a rank */
static void line_start(signal_line* l)
{
  l->n = 0;
  int rank = scr_log_rank;
  line_add(l, rank >= 0 ? "SCR rank " : "SCR pid ");
  line_number(l, (uintptr_t) (rank >= 0 ? rank : getpid()), 10, 0);
  line_add(l, " on ");
  line_add(l, signal_host[0] ? signal_host : "unknown host");
  line_add(l, ": ");
}

static void line_write(signal_line* l)
{
  l->text[l->n++] = '\n';
  for (size_t done = 0; done < l->n;) {
    ssize_t w = write(STDERR_FILENO, l->text + done, l->n - done);
    if (w <= 0 && errno != EINTR) return;
    if (w > 0) done += (size_t) w;
  }
}

/* --- the report */

static void signal_frame(signal_line* l, int depth, unw_cursor_t* cursor)
{
  unw_word_t ip = 0, offset = 0;
  unw_get_reg(cursor, UNW_REG_IP, &ip);
  char name[256];
  int rc = unw_get_proc_name(cursor, name, sizeof(name), &offset);
  line_start(l);
  line_add(l, "  #");
  line_number(l, (uintptr_t) depth, 10, 0);
  line_add(l, " 0x");
  line_number(l, (uintptr_t) ip, 16, 12);
  line_add(l, " ");
  if (rc == 0 || rc == -UNW_ENOMEM) {
    name[sizeof(name) - 1] = '\0';
    line_add(l, name);
    line_add(l, "+0x");
    line_number(l, (uintptr_t) offset, 16, 0);
  } else {
    line_add(l, "??");
  }
  line_write(l);
}

static void signal_backtrace(int sig, int index, const siginfo_t* info, void* context)
{
  signal_line l;
  line_start(&l);
  line_add(&l, "caught ");
  line_add(&l, signal_names[index]);
  if (info && info->si_code > 0 && sig != SIGABRT) {
    line_add(&l, " (address 0x");
    line_number(&l, (uintptr_t) info->si_addr, 16, 0);
    line_add(&l, ")");
  }
  line_add(&l, "; backtrace:");
  line_write(&l);

  /* libunwind reads /proc/self/maps and ELF files through open: our own I/O */
  scr_preload_real_enter();
  unw_cursor_t cursor;
  unw_context_t here;
  /* from the interrupted context, so that frame 0 is the faulting function;
   * from here (frames of this handler first) if that cannot be had */
  int ready = context && unw_init_local2(&cursor, (unw_context_t*) context, UNW_INIT_SIGNAL_FRAME) == 0;
  if (!ready) ready = unw_getcontext(&here) == 0 && unw_init_local(&cursor, &here) == 0;
  for (int depth = 0; ready && depth < SIGNAL_MAX_FRAMES; depth++) {
    signal_frame(&l, depth, &cursor);
    if (unw_step(&cursor) <= 0) break;
  }
  scr_preload_real_leave();
}

/* the kernel's actions as they are (the program's handlers behind the
 * trampoline of scr_preload_sigaction.c): this handler is the library's
 * own, and what it puts back is what it found */
static int signal_action(int sig, const struct sigaction* act, struct sigaction* old)
{
  int (*real)(int, const struct sigaction*, struct sigaction*) = SCR_REAL(sigaction);
  return real ? real(sig, act, old) : -1;
}

static void signal_handler(int sig, siginfo_t* info, void* context)
{
  int saved_errno = errno;
  int index = 0;
  while (index < SIGNAL_COUNT - 1 && signal_numbers[index] != sig) index++;
  /* put the disposition we found back first: should unwinding fault, the
   * process then dies of the signal as it would have without us */
  signal_action(sig, &signal_previous[index], NULL);
  int idle = 0;
  if (__atomic_compare_exchange_n(&signal_reporting, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    signal_backtrace(sig, index, info, context);
    __atomic_store_n(&signal_reporting, 2, __ATOMIC_RELEASE);
  } else {
    /* another thread is writing its report: let it finish (a few seconds at
     * most) before this signal ends the process */
    struct timespec pause = { 0, 10 * 1000 * 1000 };
    for (int i = 0; i < 300 && __atomic_load_n(&signal_reporting, __ATOMIC_ACQUIRE) == 1; i++)
      nanosleep(&pause, NULL);
  }
  /* a fault recurs when the instruction runs again, with its own siginfo
   * (address, code) for the core dump or the application's handler; a
   * signal that was sent (si_code <= 0: kill, tgkill, abort) must be sent
   * again, and stays pending until this handler returns */
  if (!info || info->si_code <= 0) raise(sig);
  errno = saved_errno;
}

/* an alternate stack for the calling thread, so that a stack overflow can
 * be reported; an application's own alternate stack is kept */
static void signal_alternate_stack(void)
{
  stack_t current;
  if (sigaltstack(NULL, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;
  long page = sysconf(_SC_PAGESIZE);
  size_t guard = page > 0 ? (size_t) page : 4096;
  char* base = mmap(NULL, SIGNAL_STACK_SIZE + guard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return;
  /* the lowest page stays inaccessible: an overflow of this stack faults
   * instead of writing over whatever lies below */
  mprotect(base, guard, PROT_NONE);
  stack_t stack = { .ss_sp = base + guard, .ss_flags = 0, .ss_size = SIGNAL_STACK_SIZE };
  if (sigaltstack(&stack, NULL) != 0) munmap(base, SIGNAL_STACK_SIZE + guard);
}

void scr_preload_signal_install(void)
{
  int expected = 0;
  if (!__atomic_compare_exchange_n(&signal_installed, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
  int saved_errno = errno;
  if (gethostname(signal_host, sizeof(signal_host) - 1) != 0) signal_host[0] = '\0';
  signal_alternate_stack();
  /* the handler runs with every other signal blocked, so that nothing else
   * interleaves with the report */
  struct sigaction ours;
  memset(&ours, 0, sizeof(ours));
  ours.sa_sigaction = signal_handler;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigfillset(&ours.sa_mask);
  for (int i = 0; i < SIGNAL_COUNT; i++) {
    struct sigaction found;
    if (signal_action(signal_numbers[i], NULL, &found) != 0) continue;
    /* an ignored signal stays ignored (a fault kills anyway, without us) */
    if (!(found.sa_flags & SA_SIGINFO) && found.sa_handler == SIG_IGN) continue;
    signal_previous[i] = found;
    signal_action(signal_numbers[i], &ours, NULL);
  }
  errno = saved_errno;
}
