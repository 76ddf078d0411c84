#!/bin/sh
# Two jobs of one user in one prefix at once, outside a batch system (no SCR_JOB_ID):
# each has its own control and cache directories; neither restarts from nor deletes the other's.
. "$top_srcdir/t/test-lib.sh"

me=$(id -un)
export SCR_FLUSH=0
# wait_for PATTERN FILE: until a running job printed it (the test's timeout bounds it)
wait_for() {
  while ! grep -q "$1" "$2" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { echo "the first job ended early:"; cat "$2"; return 1; }
    sleep 0.1
  done
}

test_expect_success 'a second job while the first runs gets its own cache and starts afresh' "
  scr_app 2 --steps 2 --bytes 4096 --hold '$TRASH/release' >a.out 2>a.err & pid=\$! &&
  wait_for 'done: step 2' a.out &&
  scr_app 2 --steps 1 --bytes 4096 >b.out 2>b.err; b=\$?; touch '$TRASH/release'; wait \$pid; a=\$? &&
  test \$a = 0 && test \$b = 0 &&
  expect_grep 'restart: none' b.out && expect_grep 'checkpoint: ckpt.1' b.out &&
  expect_grep 'another job of .* runs in the prefix directory' b.err &&
  test \$(find '$SCR_CACHE_BASE/$me' -mindepth 1 -maxdepth 1 -type d | wc -l) = 2 &&
  test \$(find '$SCR_CNTL_BASE/$me' -mindepth 1 -maxdepth 1 -type d | wc -l) = 2
"

test_expect_success 'the first job keeps its checkpoint: the next run resumes from it' "
  scr_app 2 --steps 3 --bytes 4096 >c.out 2>c.err &&
  expect_grep 'restart: ckpt.2' c.out && ! grep -q 'another job' c.err
"

test_expect_success 'a job that ended (however) leaves its id free: no lock is left behind' "
  scr_app 2 --steps 1 --bytes 4096 --crash-after 1 >d.out 2>d.err; \
  scr_app 2 --steps 1 --bytes 4096 >e.out 2>e.err && ! grep -q 'another job' e.err
"

test_done
