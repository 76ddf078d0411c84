#!/bin/sh
# 5010-scr-run-mpiexec.sh - scr_run with MPICH's mpiexec on this machine (no
# fake nodes): the host selection is rewritten with the slots it gave, a failed
# launch is made again, and scr_postrun copies the newest checkpoint.
. "$top_srcdir/t/test-lib.sh"

export SCR_FLUSH=0
launch() {
  (cd "$PREFIX" && scr_run -v --no-preload "$MPIEXEC" "$@") >out 2>&1
}

test_expect_success 'the slot count of a host in -hosts is kept' '
  launch -n 2 -hosts localhost:2 hostname; test $? = 0 &&
  expect_grep "launch 1: .* -hosts localhost:2 hostname" out &&
  test "$(grep -c "^$(hostname)$" out)" = 2
'

test_expect_success 'a host file is read and replaced by -hosts' '
  printf "# nodes\nlocalhost:2\n" >hosts && launch -n 2 -f "$TRASH/hosts" hostname; test $? = 0 &&
  expect_grep "launch 1: .* -n 2 -hosts localhost:2 hostname" out
'

test_expect_success 'a host the launcher names must be in SCR_NODELIST' '
  (cd "$PREFIX" && SCR_NODELIST=node7 scr_run "$MPIEXEC" -n 1 -hosts localhost true) 2>err; test $? = 1 &&
  expect_grep "names localhost, which is not in SCR_NODELIST (node7)" err
'

test_expect_success 'a crashed job is launched again and resumes; its checkpoint is scavenged' '
  SCR_RUNS=2 launch -n 2 -hosts localhost "$APP" --steps 3 --bytes 4096 --crash-after 2; test $? = 0 &&
  expect_grep "launch 1 ended with status" out && expect_grep "^restart: ckpt.2$" out &&
  expect_grep "^done: step 3$" out &&
  expect_grep "scr_scavenge: dataset 3 (ckpt.3) copied to" out &&
  for r in 0 1; do "$APP" --check "$PREFIX/ckpt.3/rank_$r.dat" 3 $r 4096 || exit 1; done
'

test_expect_success 'options other than the host selection reach the launch unchanged' '
  launch -n 1 -genv SCR_T5010 yes -hosts localhost sh -c "echo \"env=\$SCR_T5010\""; test $? = 0 &&
  expect_grep "^env=yes$" out
'

test_done
