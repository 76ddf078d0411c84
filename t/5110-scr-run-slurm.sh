#!/bin/sh
# 5110-scr-run-slurm.sh - scr_run inside Slurm allocations (salloc, sbatch) on 5
# fake nodes running a real Slurm: a job on 4 of them loses a node mid-run or
# has a rank stopped; scr_run relaunches it (on the others plus the spare, or
# after its watchdog ended the hung step) and it resumes to the result of an
# uninterrupted run, both an API program and an unmodified one under the preload.
. "$top_srcdir/t/test-lib.sh"

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
: "${SCR_TEST_TIMEOUT:=180}"

slurm_up 5 81
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl
export SCR_COPY_TYPE=XOR SCR_SET_SIZE=4
# nothing reaches the prefix directory but what scr_postrun scavenges
export SCR_FLUSH=0
ex="$top_builddir/examples/preload"

fresh() { job_fresh t5110 5; }

# in_batch OUT COMMAND: the same as a batch job (sbatch --wrap), waited for
in_batch() {
  out=$1; shift
  id=$(cd "$PREFIX" && sbatch --parsable -N 5 --no-kill -o "$TRASH/$out" --wrap "$*") || return 1
  for i in $(seq $((SCR_TEST_TIMEOUT * 10))); do
    squeue -h -j "$id" 2>/dev/null | grep -q . || break
    sleep 0.1
  done
  squeue -h -j "$id" 2>/dev/null | grep -q . && { scancel "$id"; echo "batch job $id timed out"; return 1; }
  return 0
}

# the unmodified program's result without SCR, interruptions or Slurm
fpp_args="--steps 40 --every 2 --bytes 65536"
mkdir -p "$TRASH/native" && (cd "$TRASH/native" && mpirun 8 "$ex/posix_fpp" $fpp_args) >"$TRASH/native.out" 2>&1
native_result=$(grep "^result:" "$TRASH/native.out")
fpp_rule="PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT"

test_expect_success 'scr_run srun outside an allocation is an error, nothing launched' '
  (cd "$PREFIX" && scr_run srun -N 1 hostname) >out 2>&1; test $? = 1 &&
  expect_grep "srun runs inside a slurm allocation only" out && ! grep -q "^node" out
'

test_expect_success 'in an allocation: srun on the nodes it names, with --kill-on-bad-exit, one launch' '
  fresh && in_alloc ok scr_run -v --no-preload srun -N 4 -n 8 "$APP" --steps 3 --bytes 4096 &&
  test "$(status_of ok)" = 0 &&
  expect_grep "launch 1: srun -n 8 --nodes=4 --nodelist=node0,node1,node2,node3 --kill-on-bad-exit=1 " "$TRASH/ok" &&
  expect_grep "^done: step 3$" "$TRASH/ok" && ! grep -q "launch 2" "$TRASH/ok" &&
  expect_grep "scr_scavenge: dataset 3 (ckpt.3) copied" "$TRASH/ok" && scavenged 3
'

# a node an administrator drains stays in the allocation (DRAINING) but
# must take no new work: the launch uses the spare instead
test_expect_success 'a node draining in Slurm is not launched on; the spare takes its place' '
  fresh && in_alloc drain sh -c "scontrol update NodeName=node1 State=DRAIN Reason=scr-test &&
    scr_run -v --no-preload srun -N 4 -n 8 \"$APP\" --steps 3 --bytes 4096" &&
  { scontrol update NodeName=node1 State=RESUME 2>/dev/null; slurm_all_idle 5; } &&
  test "$(status_of drain)" = 0 &&
  expect_grep "node node1 is unusable (dr[a-z]* in Slurm)" "$TRASH/drain" &&
  expect_grep "launch 1: srun -n 8 --nodes=4 --nodelist=node0,node2,node3,node4 .*--kill-on-bad-exit=1 " "$TRASH/drain" &&
  expect_grep "^done: step 3$" "$TRASH/drain" && scavenged 3
'

test_expect_success 'srun options: -w and -x in host list syntax, output options for the job only' '
  fresh && in_alloc opts env SCR_RUNS=1 scr_run -v --no-preload --no-postrun srun -w "node[1-3]" -x node2 -l -n 3 hostname &&
  test "$(status_of opts)" = 0 &&
  expect_grep "launch 1: srun -n 3 -l --nodes=3 --nodelist=node1,node3,node0 --distribution=arbitrary --exclude=node2 --kill-on-bad-exit=1 hostname" "$TRASH/opts" &&
  test "$(grep -c "^[0-2]: node[013]$" "$TRASH/opts")" = 3
'

test_expect_success 'API: a node killed mid-run; relaunched on the others and the spare, resumed, scavenged' '
  fresh && when_cached node1 3 cluster kill node1 &&
  in_alloc lost env SCR_RUNS=3 scr_run -v --no-preload srun -N 4 -n 8 "$APP" --steps 10 --bytes 4096 --step-sleep 300 &&
  wait && test "$(status_of lost)" = 0 &&
  expect_grep "node node1 is unusable" "$TRASH/lost" &&
  expect_grep "launch 2: srun .*--nodelist=node0,node0,node4,node4,node2,node2,node3,node3 --distribution=arbitrary --exclude=node1 " "$TRASH/lost" &&
  ! grep "moved the cached files" "$TRASH/lost" &&
  ! grep -q "launch 3" "$TRASH/lost" &&
  expect_grep "rebuilt the lost parts from XOR" "$TRASH/lost" &&
  test "$(grep -c "^restart: ckpt\.[3-9]$" "$TRASH/lost")" = 1 && expect_grep "^done: step 10$" "$TRASH/lost" &&
  scavenged 10 || { sed "s/^/lost: /" "$TRASH/lost"; false; }
'

test_expect_success 'preload: a node killed mid-run; relaunched with the spare, it resumes to the native result' '
  fresh && echo "$fpp_rule" >"$PREFIX/.scrconf" && when_cached node1 2 cluster kill node1 &&
  in_alloc fpplost env SCR_RUNS=3 scr_run -v srun -N 4 -n 8 "$ex/posix_fpp" $fpp_args --step-ms 100 &&
  wait && test "$(status_of fpplost)" = 0 &&
  expect_grep "node node1 is unusable" "$TRASH/fpplost" &&
  expect_grep "launch 2: srun .*--nodelist=node0,node0,node4,node4,node2,node2,node3,node3 --distribution=arbitrary " "$TRASH/fpplost" &&
  ! grep "moved the cached files" "$TRASH/fpplost" &&
  ! grep -q "launch 3" "$TRASH/fpplost" &&
  expect_grep "^resumed from step [1-9][0-9]*$" "$TRASH/fpplost" &&
  test -n "$native_result" && test "$(grep "^result:" "$TRASH/fpplost")" = "$native_result"
'

test_expect_success 'API: runs exhausted after two lost nodes; the newest checkpoint scavenged on the 3 live nodes' '
  fresh && when_cached node1 3 cluster kill node1 && when_cached node2 6 cluster kill node2 &&
  in_alloc twice env SCR_RUNS=2 scr_run -v --no-preload srun -N 4 -n 8 "$APP" --steps 40 --bytes 4096 --step-sleep 300 &&
  wait && test "$(status_of twice)" != 0 &&
  expect_grep "launch 2: srun " "$TRASH/twice" && ! grep -q "launch 3" "$TRASH/twice" &&
  expect_grep "SCR_RUNS=2 launches made" "$TRASH/twice" &&
  expect_grep "postrun: scr_postrun .* --nodes=3 --nodelist=node0,node4,node3 .*--overcommit" "$TRASH/twice" &&
  step=$(sed -n "s/^scr_scavenge: dataset [0-9]* (ckpt\.\([0-9]*\)) copied to .*/\1/p" "$TRASH/twice") &&
  test -n "$step" && test "$step" -ge 6 && ! grep -q "^done" "$TRASH/twice" && scavenged "$step"
'

test_expect_success 'API under sbatch: a stopped rank; the watchdog ends the step, the job resumes' '
  fresh && when_cached node2 3 stop_rank node2 scr-test-app &&
  in_batch hung "SCR_RUNS=3 SCR_WATCHDOG_TIMEOUT=10 scr_run -v --no-preload srun -N 4 -n 8 $APP --steps 10 --bytes 4096 --step-sleep 300" &&
  wait && cat "$TRASH/hung" &&
  expect_grep "watchdog: no checkpoint or SCR activity for [0-9]* s (SCR_WATCHDOG_TIMEOUT=10): ending launch 1" "$TRASH/hung" &&
  expect_grep "launch 2: srun " "$TRASH/hung" &&
  expect_grep "^restart: ckpt\.[3-9]$" "$TRASH/hung" && expect_grep "^done: step 10$" "$TRASH/hung" &&
  scavenged 10
'

test_expect_success 'preload: a stopped rank; the watchdog ends the step, it resumes to the native result' '
  fresh && echo "$fpp_rule" >"$PREFIX/.scrconf" && when_cached node2 2 stop_rank node2 posix_fpp &&
  in_alloc fpphung env SCR_RUNS=3 SCR_WATCHDOG_TIMEOUT=10 scr_run -v srun -N 4 -n 8 "$ex/posix_fpp" $fpp_args --step-ms 100 &&
  wait && test "$(status_of fpphung)" = 0 &&
  expect_grep "watchdog: no checkpoint or SCR activity .*: ending launch 1" "$TRASH/fpphung" &&
  expect_grep "launch 2: srun " "$TRASH/fpphung" &&
  expect_grep "^resumed from step [1-9][0-9]*$" "$TRASH/fpphung" &&
  test "$(grep "^result:" "$TRASH/fpphung")" = "$native_result"
'

test_expect_success 'API: scr_halt from outside; the job stops after its next checkpoint, no relaunch follows' '
  fresh && when_cached node0 3 scr_halt "$PREFIX" &&
  in_alloc halted env SCR_RUNS=3 scr_run -v --no-preload srun -N 4 -n 8 "$APP" --steps 40 --bytes 4096 --step-sleep 300 --until-exit &&
  wait && test "$(status_of halted)" = 0 &&
  step=$(sed -n "s/^halted after step \([0-9]*\)$/\1/p" "$TRASH/halted") && test -n "$step" && test "$step" -ge 3 &&
  ! grep -q "^done: step 40$" "$TRASH/halted" && ! grep -q "launch 2" "$TRASH/halted" &&
  scr_index -p "$PREFIX" >index.out && grep -q "ckpt\.$step .* \* " index.out ||
  { cat index.out "$TRASH/halted"; exit 1; }
'

test_expect_success 'API: a time limit; the job halts SCR_HALT_SECONDS before the end, its checkpoint on the prefix' '
  fresh &&
  (cd "$PREFIX" && timeout -k 5 $((SCR_TEST_TIMEOUT + 30)) salloc -N 5 --no-kill -t 1 timeout -k 10 "$SCR_TEST_TIMEOUT" \
     env SCR_RUNS=3 SCR_HALT_SECONDS=50 scr_run -v --no-preload srun -N 4 -n 8 "$APP" --steps 1000 --bytes 4096 --step-sleep 300 --until-exit) \
    >"$TRASH/limit" 2>&1;
  expect_grep "halting: less than 50 seconds before the allocation ends" "$TRASH/limit" &&
  step=$(sed -n "s/^halted after step \([0-9]*\)$/\1/p" "$TRASH/limit") && test -n "$step" &&
  ! grep -q "launch 2" "$TRASH/limit" && ! grep -q "TIME LIMIT" "$TRASH/limit" && scavenged "$step"
'

test_done
