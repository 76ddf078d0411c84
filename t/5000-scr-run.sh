#!/bin/sh
# 5000-scr-run.sh - scr_run and scr_postrun on 5 fake nodes: a job runs on 4 of
# them, loses a node, is launched again on the healthy ones (the fifth is a
# spare) and resumes from its newest checkpoint; after the last launch the
# newest checkpoint is scavenged from cache, rebuilt from XOR where a node was
# lost, into the prefix directory, with the bytes the job wrote.
. "$top_srcdir/t/test-lib.sh"

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
: "${SCR_TEST_TIMEOUT:=60}"

cluster_up 5 50
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl
export SCR_COPY_TYPE=XOR SCR_SET_SIZE=4
# nothing reaches the prefix directory but what scr_postrun scavenges
export SCR_FLUSH=0
ranks="0 1 2 3 4 5 6 7"

fresh() { job_fresh t5000; }

# lose_after_checkpoint STEP: in the background, node1 fails once its part of
# checkpoint STEP of this job is complete in its cache (its XOR file is written)
lose_after_checkpoint() {
  ( dir="$SCR_CLUSTER_STATE/nodes/node1/local/cache/$(id -un)/scr.$SCR_JOB_ID/scr.dataset.$1"
    for i in $(seq 600); do
      ls "$dir"/*.xor >/dev/null 2>&1 && { scr_cluster kill node1 >/dev/null; exit 0; }
      sleep 0.1
    done ) &
}

# pfs_checkpoint STEP: the prefix directory holds checkpoint STEP of all 8
# ranks with the bytes they wrote, and the index names it current
pfs_checkpoint() {
  for r in $ranks; do
    "$APP" --check "$PREFIX/ckpt.$1/rank_$r.dat" "$1" "$r" 4096 || { echo "bad ckpt.$1/rank_$r.dat"; return 1; }
  done
  scr_index -p "$PREFIX" >"$TRASH/index.out" && grep -q "^ *[0-9]*  ckpt\.$1 .* \* " "$TRASH/index.out" ||
    { cat "$TRASH/index.out"; return 1; }
}

test_expect_success 'scr_run --help describes the launchers and SCR_RUNS' '
  scr_run --help >help.out &&
  expect_grep "scr_cluster run" help.out && expect_grep SCR_RUNS help.out && expect_grep SCR_NODELIST help.out
'

test_expect_success 'an unknown launcher is a usage error naming it' '
  scr_run aprun -n 4 ./app 2>err; test $? = 2 &&
  expect_grep "unknown launcher .aprun." err
'

test_expect_success 'a launcher without a program is a usage error' '
  scr_run scr_cluster run --nodes node0 -- 2>err; test $? = 2 &&
  expect_grep "no program" err
'

test_expect_success 'a bad SCR_EXCLUDE_NODES is reported, nothing launched' '
  fresh && (cd "$PREFIX" && SCR_EXCLUDE_NODES="node[1-" scr_run scr_cluster run --nodes node0 -- true) 2>err;
  test $? = 1 && expect_grep "SCR_EXCLUDE_NODES (node\[1-)" err
'

test_expect_success 'an invalid SCR_RUNS in .scrconf is reported with its file and line' '
  fresh && printf "SCR_FLUSH=0\nSCR_RUNS=often\n" >"$PREFIX/.scrconf" &&
  (cd "$PREFIX" && env -u SCR_FLUSH scr_run scr_cluster run --nodes node0 -- true) 2>err;
  test $? = 1 && expect_grep "\.scrconf:2" err && expect_grep "SCR_RUNS" err
'

test_expect_success 'SCR_EXCLUDE_NODES and --nodes in host list syntax: excluded nodes replaced by spares' '
  fresh &&
  (cd "$PREFIX" && SCR_EXCLUDE_NODES="node[1,3]" SCR_MIN_NODES=3 scr_run -v --no-preload \
     scr_cluster run --nodes "node[0-2]" --ppn 1 -- hostname) >out 2>&1 &&
  expect_grep "launch 1: .* --nodes node0,node2,node4 " out &&
  test "$(grep -c "^node[024]$" out)" = 3
'

test_expect_success 'a node whose cache base is not a writable directory is left out' '
  fresh && rm -rf "$SCR_CLUSTER_STATE/nodes/node2/local/cache" && : >"$SCR_CLUSTER_STATE/nodes/node2/local/cache" &&
  (cd "$PREFIX" && scr_run -v --no-preload --no-postrun scr_cluster run --nodes "node[0-3]" -- true) >out 2>&1 &&
  expect_grep "node node2 is down, or its cache base /scr-local/cache is not writable" out &&
  expect_grep "launch 1: .* --nodes node0,node1,node3,node4 " out
'

test_expect_success 'too few healthy nodes: no launch, status 1' '
  fresh &&
  (cd "$PREFIX" && SCR_EXCLUDE_NODES="node[0-1]" scr_run scr_cluster run --nodes node0,node1,node2,node3 -- hostname) \
    >out 2>&1; test $? = 1 &&
  expect_grep "only 3 healthy nodes of 5, a launch needs 4" out && ! grep -q "^node" out
'

test_expect_success 'SCR_ENABLE=0 runs the command as given: no preload, no scavenge' '
  fresh &&
  (cd "$PREFIX" && SCR_ENABLE=0 scr_run scr_cluster run --nodes node0 -- sh -c "echo \"preload=[\$LD_PRELOAD]\"") \
    >out 2>&1 &&
  expect_grep "^preload=\[\]$" out && ! grep -q scr_scavenge out
'

test_expect_success 'the program runs with libscr_preload.so preloaded, the launcher without it' '
  fresh &&
  (cd "$PREFIX" && scr_run --no-postrun scr_cluster run --nodes node0 -- sh -c "echo \"preload=[\$LD_PRELOAD]\"") \
    >out 2>&1 &&
  expect_grep "^preload=\[.*libscr_preload.so\]$" out
'

test_expect_success 'a job that ends well: one launch; scr_postrun sees its checkpoint flushed (as scr_scavenge would)' '
  fresh && on_cluster ok SCR_FLUSH=1 -- --no-preload "$APP" --steps 3 --bytes 4096 &&
  test "$(status_of ok)" = 0 && expect_grep "^done: step 3$" "$TRASH/ok" &&
  ! grep -q "launch 2" "$TRASH/ok" &&
  expect_grep "scr_postrun: every dataset the job left in cache is in .*: nothing to scavenge" "$TRASH/ok" &&
  ! grep -q scr_scavenge "$TRASH/ok" && pfs_checkpoint 3 &&
  (cd "$PREFIX" && SCR_FETCH=0 scr_cluster run --nodes node0,node1,node2,node3 --ppn 2 -- scr_scavenge) >out 2>&1 &&
  expect_grep "scr_scavenge: dataset 3 (ckpt.3) is already in" out
'

test_expect_success 'a lost node: launched again on the spare, resumed from the checkpoint rebuilt in cache' '
  fresh && lose_after_checkpoint 3 &&
  on_cluster lost SCR_RUNS=3 -- --no-preload "$APP" --steps 10 --bytes 4096 --step-sleep 300 && wait &&
  test "$(status_of lost)" = 0 &&
  expect_grep "node node1 is down" "$TRASH/lost" &&
  expect_grep "launch 2: .* --nodes [^ ]*node4" "$TRASH/lost" && ! grep -q "launch 2: .*node1" "$TRASH/lost" &&
  ! grep -q "launch 3" "$TRASH/lost" &&
  expect_grep "rebuilt the lost parts from XOR" "$TRASH/lost" &&
  test "$(grep -c "^restart: ckpt\.[3-9]$" "$TRASH/lost")" = 1 && expect_grep "^done: step 10$" "$TRASH/lost"
'

test_expect_success 'the spare takes the lost node'"'"'s place: the other ranks stay on their nodes, no cached file moves' '
  expect_grep "launch 2: .* --nodes node0,node4,node2,node3 " "$TRASH/lost" &&
  ! grep "moved the cached files" "$TRASH/lost"
'

test_expect_success 'runs exhausted after a node loss: the checkpoint is rebuilt and scavenged to the prefix' '
  fresh && lose_after_checkpoint 3 &&
  on_cluster scavenged -- --no-preload "$APP" --steps 40 --bytes 4096 --step-sleep 300 && wait &&
  test "$(status_of scavenged)" != 0 && ! grep -q "launch 2" "$TRASH/scavenged" &&
  step=$(sed -n "s/^scr_scavenge: dataset [0-9]* (ckpt\.\([0-9]*\)) copied to .*/\1/p" "$TRASH/scavenged") &&
  test -n "$step" && test "$step" -ge 3 && ! grep -q "^done" "$TRASH/scavenged" &&
  pfs_checkpoint "$step"
'

test_expect_success 'the watchdog by default: SCR_WATCHDOG_MIN (300 s) with checkpoints every second' '
  expect_grep "watchdog: 3600 s without SCR activity end launch 1 (no checkpoint of this launch yet)" "$TRASH/lost" &&
  expect_grep "watchdog: 300 s without SCR activity end launch 1 (3 x the longest interval between checkpoints, [12] s; at least SCR_WATCHDOG_MIN=300)" "$TRASH/lost"
'

test_expect_success 'the watchdog by default ends a stopped rank 3 x the longest checkpoint interval after its last activity' '
  fresh && after_dataset 3 stop_rank node2 scr-test-app &&
  on_cluster adapt SCR_RUNS=2 SCR_WATCHDOG_MIN=2 -- --no-preload "$APP" --steps 8 --bytes 4096 --step-sleep 1500 && wait &&
  test "$(status_of adapt)" = 0 &&
  line=$(grep "watchdog: no checkpoint or SCR activity for" "$TRASH/adapt") &&
  fired=$(echo "$line" | sed -n "s/.* activity for \([0-9]*\) s (3 x the longest interval between checkpoints, \([0-9]*\) s; at least SCR_WATCHDOG_MIN=2): ending launch 1$/\1 \2/p") &&
  set -- $fired && test "$2" -ge 2 && test "$2" -le 4 && test "$1" -ge $((3 * $2)) && test "$1" -le $((3 * $2 + 2)) &&
  expect_grep "launch 2: " "$TRASH/adapt" && expect_grep "^restart: ckpt\.[3-9]$" "$TRASH/adapt" &&
  expect_grep "^done: step 8$" "$TRASH/adapt"
'

test_expect_success 'a halt condition stops the relaunches' '
  fresh && scr_halt --after @1 "$PREFIX" >/dev/null &&
  (cd "$PREFIX" && SCR_RUNS=3 scr_run -v --no-postrun scr_cluster run --nodes node0 -- false) >out 2>&1;
  test $? = 1 && expect_grep "a halt condition is set" out && ! grep -q "launch 2" out
'

test_expect_success 'SCR_RUNS bounds the launches of a job that keeps failing' '
  fresh &&
  (cd "$PREFIX" && SCR_RUNS=2 scr_run -v --no-postrun scr_cluster run --nodes node0 -- false) >out 2>&1;
  test $? = 1 && expect_grep "launch 2 ended with status 1" out && expect_grep "SCR_RUNS=2 launches made" out &&
  ! grep -q "launch 3" out
'

# an unmodified program: killed, its newest checkpoint left in cache only;
# scavenged to its original paths, it is a checkpoint the program itself
# resumes from without SCR, to the result of an uninterrupted run
ex="$top_builddir/examples/preload"
test_expect_success 'preload: the scavenged checkpoint is where the program wrote it, and it resumes from it' '
  fresh && echo "PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT" >"$PREFIX/.scrconf" &&
  (cd "$PREFIX" && scr_run scr_cluster run --nodes node0,node1,node2,node3 --ppn 2 -- \
     "$ex/posix_fpp" --steps 10 --every 2 --bytes 65536 --die-at 5) >killed.out 2>&1;
  test $? != 0 && expect_grep "^dying at step 5$" killed.out &&
  expect_grep "scr_scavenge: dataset [0-9]* (data/step4_rank{rank}.chk) copied" killed.out &&
  test "$(ls "$PREFIX"/data | wc -l)" = 8 &&
  rm "$PREFIX/.scrconf" && (cd "$PREFIX" && mpirun 8 "$ex/posix_fpp" --steps 10 --every 2 --bytes 65536) >resumed.out &&
  mkdir native && (cd native && mpirun 8 "$ex/posix_fpp" --steps 10 --every 2 --bytes 65536) >native.out &&
  expect_grep "^resumed from step 4$" resumed.out &&
  test "$(grep "^result:" resumed.out)" = "$(grep "^result:" native.out)" && grep -q "^result:" native.out
'

test_expect_success 'scr_postrun with SCR_ENABLE=0 launches nothing' '
  SCR_ENABLE=0 scr_postrun -p "$PREFIX" -- sh -c "echo launched" >out 2>&1 && ! grep -q launched out
'

test_done
