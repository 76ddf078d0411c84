#!/bin/sh
# 4290-preload-signals.sh - a signal handler that writes a checkpoint file
# (open, write, close: async-signal-safe calls, as codes do on SIGTERM or a
# timer) while the program itself opens and closes checkpoint files: the
# handler must never wait for a lock its own thread holds. One rank.
. "$top_srcdir/t/test-lib.sh"

export SCR_JOB_ID=t4290 SCR_COPY_TYPE=SINGLE SCR_FLUSH=0
: "${SCR_TEST_TIMEOUT:=60}"

preload_prelude "signal handlers under the preload"

test_expect_success 'a SIGALRM handler writing checkpoint files while the program writes them: no deadlock' "
  mkdir -p run && echo 'PRELOAD=sig_{rank}_*.dat' >run/.scrconf &&
  (cd run && mpirun 1 env LD_PRELOAD='$preload' '$fileops' sigckpt:sig_%d) >out 2>err &&
  expect_grep '^sigckpt sig_0: 0 ok\$' out
"

test_done
