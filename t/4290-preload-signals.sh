#!/bin/sh
# 4290-preload-signals.sh - signal handlers under the preload: a handler that
# writes a checkpoint file (open, write, close: async-signal-safe calls, as
# codes do on SIGTERM or a timer) while the program opens and closes
# checkpoint files, or allocates memory, must never wait for a lock its own
# thread holds. The layer's work is not async-signal-safe, so a handler's
# calls go to libc (inside the library's guard), and the program still sees
# its own handlers. One rank. (ThreadSanitizer does not intercept sigset,
# whose glibc version then sets what its own sigaction does not know: under
# it the probe's sigset line is not checked.)
. "$top_srcdir/t/test-lib.sh"

export SCR_JOB_ID=t4290 SCR_COPY_TYPE=SINGLE SCR_FLUSH=0
: "${SCR_TEST_TIMEOUT:=60}"

preload_prelude "signal handlers under the preload"
probe="$top_builddir/t/helpers/preload-probe"

test_expect_success 'a SIGALRM handler writing checkpoint files while the program writes them: no deadlock' "
  mkdir -p run && echo 'PRELOAD=sig_{rank}_*.dat' >run/.scrconf &&
  (cd run && mpirun 1 env LD_PRELOAD='$preload' '$fileops' sigckpt:sig_%d) >out 2>err &&
  expect_grep '^sigckpt sig_0: 0 ok\$' out
"

test_expect_success 'the program s files are routed, the handler s are made on the file system' "
  test -n \"\$(find '$SCR_CACHE_BASE' -name sig_0_m.dat -size +0)\" && ! test -e run/sig_0_m.dat &&
  test -f run/sig_0_h0.dat && test -z \"\$(find '$SCR_CACHE_BASE' -name 'sig_0_h*')\"
"

test_expect_success 'a SIGALRM handler writing checkpoint files while the program allocates: no deadlock' "
  rm -rf run2 && mkdir -p run2 && echo 'PRELOAD=sig_{rank}_*.dat' >run2/.scrconf &&
  (cd run2 && mpirun 1 env LD_PRELOAD='$preload' '$fileops' sigalloc:sig_%d) >out2 2>err2 &&
  expect_grep '^sigalloc sig_0: 0 ok\$' out2 && test -f run2/sig_0_h199.dat
"

test_expect_success 'handlers set with sigaction and the signal family are the program s own when asked back' '
  rm -rf probe && mkdir probe && echo "PRELOAD=signals.d/*.dat" >probe/.scrconf &&
  (cd probe && LD_PRELOAD="$preload" "$probe" signals) >probe.out 2>probe.err && cat probe.out &&
  expect_grep "^sigaction: on_plain restart=1 siginfo=0 mask=1$" probe.out &&
  expect_grep "^plain handler: signal=10$" probe.out &&
  expect_grep "^replaced: on_plain siginfo=0$" probe.out &&
  expect_grep "^siginfo handler: mine signal=10 queued=1 value=42 context=1$" probe.out &&
  expect_grep "^signal: SIG_DFL on_plain SIG_IGN$" probe.out &&
  expect_grep "^sysv_signal: signal=12 then SIG_DFL$" probe.out &&
  { test "${SANITIZERS:-}" = thread || expect_grep "^sigset: SIG_DFL on_plain$" probe.out; }
'

test_expect_success 'a handler s open of a matching file reaches libc, not the engine; a siglongjmp out ends that' '
  expect_grep "^routing: program=1 handler=0 on the file system=1$" probe.out &&
  expect_grep "^after siglongjmp: program=1$" probe.out
'

test_done
