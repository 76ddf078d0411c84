#!/bin/sh
# 5120-scr-run-slurm-mpiexec.sh - scr_run mpiexec (MPICH hydra) inside a Slurm
# allocation on 5 fake nodes running a real Slurm: hydra starts its proxies
# with srun, a node killed mid-run ends the launch, and the relaunch on the
# others and the spare resumes instead of waiting for ever for the CPUs of
# the step the lost launch left (Slurm keeps it once mpiexec killed its srun).
. "$top_srcdir/t/test-lib.sh"

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
: "${SCR_TEST_TIMEOUT:=180}"

slurm_up 5 82
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl
export SCR_COPY_TYPE=XOR SCR_SET_SIZE=4 SCR_FLUSH=0
ex="$top_builddir/examples/preload"

fresh() { job_fresh t5120 5; }

hydra="-iface scrbr82 -n 8 -ppn 2 -hosts node[0-3]"

test_expect_success 'mpiexec in an allocation: a job runs on the hosts given, its checkpoint scavenged' '
  fresh && in_alloc ok scr_run -v --no-preload mpiexec $hydra "$APP" --steps 3 --bytes 4096 &&
  test "$(status_of ok)" = 0 &&
  expect_grep "launch 1: mpiexec .*-hosts node0,node1,node2,node3" "$TRASH/ok" &&
  expect_grep "^done: step 3$" "$TRASH/ok" && scavenged 3
'

test_expect_success 'API: a node killed mid-run; the relaunch on the others and the spare resumes' '
  fresh && when_cached node1 3 cluster kill node1 &&
  in_alloc lost env SCR_RUNS=3 scr_run -v --no-preload mpiexec $hydra "$APP" --steps 10 --bytes 4096 --step-sleep 300 &&
  wait && test "$(status_of lost)" = 0 &&
  expect_grep "launch 1 left steps in slurm, cancelled: [0-9]*\.[0-9]*" "$TRASH/lost" &&
  expect_grep "launch 2: mpiexec .*-hosts node0,node4,node2,node3" "$TRASH/lost" &&
  ! grep -q "launch 3" "$TRASH/lost" && ! grep -q "step creation still disabled" "$TRASH/lost" &&
  expect_grep "rebuilt the lost parts from XOR" "$TRASH/lost" &&
  expect_grep "^restart: ckpt\.[3-9]$" "$TRASH/lost" && expect_grep "^done: step 10$" "$TRASH/lost" &&
  scavenged 10
'

test_expect_success 'preload: a node killed mid-run; relaunched, it resumes to the native result' '
  mkdir -p native && (cd native && mpirun 8 "$ex/posix_fpp" --steps 40 --every 2 --bytes 65536) >native.out 2>&1 &&
  fresh && echo "PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT" >"$PREFIX/.scrconf" &&
  when_cached node1 2 cluster kill node1 &&
  in_alloc fpp env SCR_RUNS=3 scr_run -v mpiexec $hydra "$ex/posix_fpp" --steps 40 --every 2 --bytes 65536 --step-ms 100 &&
  wait && test "$(status_of fpp)" = 0 &&
  expect_grep "launch 2: mpiexec .*-hosts node0,node4,node2,node3" "$TRASH/fpp" &&
  expect_grep "^resumed from step [1-9][0-9]*$" "$TRASH/fpp" &&
  test "$(grep "^result:" "$TRASH/fpp")" = "$(grep "^result:" native.out)"
'

test_expect_success 'hydra'"'"'s srun gets --overlap; another launcher (-launcher ssh) gets nothing' '
  fresh && in_alloc extra scr_run --no-preload --no-postrun mpiexec $hydra sh -c "echo \"extra=\$HYDRA_LAUNCHER_EXTRA_ARGS.\"" &&
  test "$(status_of extra)" = 0 && test "$(grep -c "^extra=--overlap\.$" "$TRASH/extra")" = 8 &&
  in_alloc ssh scr_run --no-preload --no-postrun mpiexec -launcher ssh -launcher-exec "$SCR_CLUSTER_STATE/launcher" \
    $hydra sh -c "echo \"extra=\$HYDRA_LAUNCHER_EXTRA_ARGS.\"" &&
  test "$(status_of ssh)" = 0 && test "$(grep -c "^extra=\.$" "$TRASH/ssh")" = 8
'

test_done
