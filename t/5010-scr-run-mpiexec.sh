#!/bin/sh
# 5010-scr-run-mpiexec.sh - scr_run with MPICH's mpiexec on this machine (no
# fake nodes): the host selection is rewritten with the slots it gave, a failed
# launch is made again, and scr_postrun copies the newest checkpoint.
. "$top_srcdir/t/test-lib.sh"

export SCR_FLUSH=0
# hydra's launches on this host and the cluster tests' bridges and
# namespaces do not mix well: not at the same time as those tests
cluster_lock
# (the output is shown too: a test shows its output when it fails)
launch() {
  (cd "$PREFIX" && scr_run -v --no-preload "$MPIEXEC" "$@") >out 2>&1
  set -- $?
  cat out
  return "$1"
}
# the same without scr_postrun: the launches of programs that are not SCR
# jobs, which must not scavenge what an earlier test left in the cache with
# another number of ranks
launch_only() {
  (cd "$PREFIX" && scr_run -v --no-preload --no-postrun "$MPIEXEC" "$@") >out 2>&1
  set -- $?
  cat out
  return "$1"
}

test_expect_success 'the slot count of a host in -hosts is kept' '
  launch_only -n 2 -hosts localhost:2 hostname; test $? = 0 &&
  expect_grep "launch 1: .* -hosts localhost:2 hostname" out &&
  test "$(grep -c "^$(hostname)$" out)" = 2
'

test_expect_success 'a host file is read and replaced by -hosts' '
  printf "# nodes\nlocalhost:2\n" >hosts && launch_only -n 2 -f "$TRASH/hosts" hostname; test $? = 0 &&
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
  launch_only -n 1 -genv SCR_T5010 yes -hosts localhost sh -c "echo \"env=\$SCR_T5010\""; test $? = 0 &&
  expect_grep "^env=yes$" out
'

test_expect_success 'hydra option forms: --np, -n=N, --hosts, -hosts=H:S, -order-nodes VALUE' '
  launch_only --np 2 -order-nodes ascending hostname; test $? = 0 &&
  test "$(grep -c "^$(hostname)$" out)" = 2 &&
  launch_only -n=2 --hosts localhost hostname; test $? = 0 && expect_grep "launch 1: .* -hosts localhost hostname" out &&
  launch_only -n 2 -hosts=localhost:2 hostname; test $? = 0 && expect_grep "launch 1: .* -hosts localhost:2 hostname" out
'

test_expect_success 'a bad host list in -hosts is a usage error naming it' '
  launch_only -n 1 -hosts "nodeX[2-1]" hostname; test $? = 2 && expect_grep "hosts (nodeX\[2-1\]): not a host list" out &&
  launch_only -n 1 -hosts "n[1-2]x[a]" hostname; test $? = 2
'

test_expect_success 'an MPMD launch is refused' '
  launch_only -n 1 hostname : -n 1 hostname; test $? = 2 && expect_grep "MPMD" out
'

test_expect_success 'the job output options apply to the job only, not to the scavenge' '
  rm -rf "$PREFIX"/* "$PREFIX/.scr" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" &&
  launch -outfile-pattern "$TRASH/job.%r" -n 2 "$APP" --steps 2 --bytes 4096; test $? = 0 &&
  expect_grep "^done: step 2$" job.0 && expect_grep "scr_scavenge: dataset 2 (ckpt.2) copied" out
'

test_expect_success 'SCR_CURRENT of the job does not make the scavenge drop its newer checkpoints' '
  rm -rf "$PREFIX"/* "$PREFIX/.scr" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" &&
  (cd "$PREFIX" && SCR_CACHE_SIZE=5 mpirun 2 "$APP" --steps 2 --bytes 4096) >/dev/null 2>&1 &&
  SCR_CACHE_SIZE=5 SCR_CURRENT=ckpt.1 launch -n 2 "$APP" --steps 3 --bytes 4096 --crash-after 3; test $? != 0 &&
  expect_grep "^restart: ckpt.1$" out && expect_grep "scr_scavenge: dataset [0-9]* (ckpt.3) copied" out &&
  scr_index -p "$PREFIX" >list && expect_grep "ckpt.3 .* \*" list
'

test_expect_success 'the scavenge does not make a checkpoint older than the newest indexed one current' '
  rm -rf "$PREFIX"/* "$PREFIX/.scr" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" &&
  (cd "$PREFIX" && SCR_CACHE_SIZE=2 SCR_FLUSH=3 mpirun 2 "$APP" --steps 3 --bytes 4096) >/dev/null 2>&1 &&
  scr_index -p "$PREFIX" >list && expect_grep "ckpt.3 .* \*" list &&
  rm -rf "$SCR_CACHE_BASE"/*/scr.*/scr.dataset.3 &&
  (cd "$PREFIX" && SCR_CACHE_SIZE=2 scr_postrun -- "$MPIEXEC" -n 2) >out 2>&1 &&
  expect_grep "dataset 2 (ckpt.2) is older than checkpoint 3 in the index" out &&
  scr_index -p "$PREFIX" >list && expect_grep "ckpt.3 .* \*" list && ! grep "ckpt.2 " list | grep -qv " CACHED "
'

test_expect_success 'TERM to scr_run ends the launch, launches nothing more, and leaves no process' '
  (cd "$PREFIX" && SCR_RUNS=3 exec scr_run -v --no-preload "$MPIEXEC" -n 2 sleep 30) >out 2>&1 &
  pid=$! && sleep 2 && kill -TERM $pid; wait $pid; rc=$? &&
  test "$rc" = 143 && expect_grep "interrupted (SIGTERM)" out && ! grep -q "launch 2" out &&
  sleep 1 && ! pgrep -f "^sleep 30$" >/dev/null
'

test_done
