/* scr_preload_tsan.c - libscr_preload_tsan.so, in a ThreadSanitizer build only:
 * starts the runtime before any library's constructor can reach a wrapper. */

/* LD_PRELOAD=libscr_preload.so:libtsan.so.2:libscr_preload_tsan.so. The
 * wrappers come first, so that the runtime calls the library's signal
 * trampoline as the program's handler (scr_preload_sigaction.c); but the
 * constructors of the program's own libraries run before the runtime's
 * (Debian's coreutils: libselinux's calls statfs), and an instrumented
 * wrapper entered before the runtime started died in it (stat, ls: SIGSEGV
 * in __tsan_func_entry). This library is marked to be initialised first
 * (-z initfirst) and starts the runtime, which later calls find started;
 * its constructor is not instrumented itself. */
void __tsan_init(void);

__attribute__((constructor, no_sanitize_thread)) static void scr_preload_tsan_start(void)
{
  __tsan_init();
}
