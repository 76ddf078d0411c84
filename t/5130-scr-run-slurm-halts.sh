#!/bin/sh
# 5130-scr-run-slurm-halts.sh - the ends of a job under scr_run inside a real
# Slurm on 5 fake nodes, for an unmodified program under the preload: scr_halt
# from another shell, the allocation's time limit, runs exhausted after two
# lost nodes; and, for it and an API program, no launch that cannot finish a
# checkpoint before the allocation ends. Each checks what reached the prefix
# directory: a native run's bytes, or nothing.
. "$top_srcdir/t/test-lib.sh"

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
: "${SCR_TEST_TIMEOUT:=180}"

slurm_up 5 83
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl
export SCR_COPY_TYPE=XOR SCR_SET_SIZE=4
# nothing reaches the prefix directory but a halt's flush or the scavenge
export SCR_FLUSH=0
ex="$top_builddir/examples/preload"
fpp="$ex/posix_fpp"
fpp_rule="PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT"

fresh() { job_fresh t5130 5 && echo "$fpp_rule" >"$PREFIX/.scrconf"; }

# prefix_step: the one step of posix_fpp's checkpoint files on the prefix
# directory (rank 0's); fails when there are none or files of several steps
prefix_step() {
  steps=$(ls "$PREFIX/data" 2>/dev/null | sed -n 's/^step\([0-9]*\)_rank[0-7]\.chk$/\1/p' | sort -u)
  test -n "$steps" && test "$(echo "$steps" | wc -l)" = 1 || { echo "steps on the prefix: '$steps'"; return 1; }
  echo "$steps"
}

# fpp_on_prefix STEP: the prefix directory holds checkpoint STEP of posix_fpp's
# 8 ranks with the bytes a native run of STEP steps writes, and nothing else
fpp_on_prefix() {
  ref="$TRASH/ref.$1"
  rm -rf "$ref" && mkdir -p "$ref" &&
    (cd "$ref" && mpirun 8 "$fpp" --steps "$1" --every "$1" --bytes 65536) >"$ref.out" 2>&1 || return 1
  for r in 0 1 2 3 4 5 6 7; do
    test_cmp "$ref/data/step$1_rank$r.chk" "$PREFIX/data/step$1_rank$r.chk" || return 1
  done
  test "$(ls "$PREFIX/data" | wc -l)" = 8 || { ls -l "$PREFIX/data"; return 1; }
}

# lose NODE: NODE fails, and Slurm marks it down at once instead of noticing
# it some 18 s later (SlurmdTimeout): the tests here are about what follows
lose() {
  cluster kill "$1" >/dev/null && scontrol update NodeName="$1" State=DOWN Reason=lost
}

# after_resumed OUT K ACTION...: in the background, ACTION once a relaunch
# said in OUT that it resumed from step R and then wrote checkpoint R+K
after_resumed() {
  local out=$1 k=$2; shift 2
  ( for i in $(seq 1200); do
      awk -v k="$k" '/^resumed from step / { r = $4; on = 1 }
        on && /^checkpoint [0-9]+ written$/ && $2 >= r + k { found = 1 }
        END { exit !found }' "$TRASH/$out" 2>/dev/null && { "$@"; exit 0; }
      sleep 0.1
    done ) &
}

test_expect_success 'preload: scr_halt from outside; the program stops after its next checkpoint, flushed, no relaunch' '
  fresh && when_cached node0 2 scr_halt "$PREFIX" &&
  in_alloc halted env SCR_RUNS=3 SCR_FLUSH=100 scr_run -v --no-postrun srun -N 4 -n 8 "$fpp" --steps 400 --every 2 \
    --bytes 65536 --step-ms 100 &&
  wait && test "$(status_of halted)" = 0 &&
  expect_grep "halting: halt requested" "$TRASH/halted" && expect_grep "exiting after checkpoint [0-9]* " "$TRASH/halted" &&
  ! grep -q "^result:" "$TRASH/halted" && ! grep -q "launch 2" "$TRASH/halted" &&
  step=$(prefix_step) && test "$step" -ge 4 && ! grep -q "^checkpoint $step written" "$TRASH/halted" &&
  fpp_on_prefix "$step"
'

test_expect_success 'preload: a time limit; the program halts SCR_HALT_SECONDS before the end, flushed before TIMEOUT' '
  fresh &&
  in_alloc -t 1 limit env SCR_RUNS=3 SCR_HALT_SECONDS=50 SCR_FLUSH=100 scr_run -v --no-postrun srun -N 4 -n 8 "$fpp" \
    --steps 1000 --every 4 --bytes 65536 --step-ms 100 &&
  test "$(status_of limit)" = 0 &&
  expect_grep "halting: less than 50 seconds before the allocation ends" "$TRASH/limit" &&
  expect_grep "exiting after checkpoint [0-9]* " "$TRASH/limit" &&
  ! grep -q "^result:" "$TRASH/limit" && ! grep -q "launch 2" "$TRASH/limit" && ! grep -q "TIME LIMIT" "$TRASH/limit" &&
  step=$(prefix_step) && test "$step" -ge 4 && fpp_on_prefix "$step"
'

test_expect_success 'preload: runs exhausted after two lost nodes; the newest checkpoint scavenged on the 3 live nodes' '
  fresh && when_cached node1 2 lose node1 && after_resumed twice 4 lose node2 &&
  in_alloc twice env SCR_RUNS=2 scr_run -v srun -N 4 -n 8 "$fpp" --steps 400 --every 2 --bytes 65536 --step-ms 100 &&
  wait && test "$(status_of twice)" != 0 &&
  expect_grep "launch 2: srun .*--nodelist=node0,node0,node4,node4,node2,node2,node3,node3 --distribution=arbitrary " "$TRASH/twice" && ! grep -q "launch 3" "$TRASH/twice" &&
  expect_grep "SCR_RUNS=2 launches made" "$TRASH/twice" &&
  expect_grep "postrun: scr_postrun .* --nodes=3 --nodelist=node0,node4,node3 .*--overcommit" "$TRASH/twice" &&
  expect_grep "^scr_scavenge: dataset [0-9]* (.*) copied to " "$TRASH/twice" && ! grep -q "^result:" "$TRASH/twice" &&
  resumed=$(sed -n "s/^resumed from step \([0-9]*\)$/\1/p" "$TRASH/twice") &&
  step=$(prefix_step) && test "$step" -ge $((resumed + 4)) && fpp_on_prefix "$step"
'

# Under the preload a flush goes through a stage (scr_publish.h): the one the
# kill interrupted is finished by the scavenge's own SCR_Init, which then finds
# the dataset on the prefix directory; an API program's is copied by the scavenge
test_expect_success 'preload: a rank lost while the last checkpoint before the end is flushed; no relaunch, it is scavenged' '
  fresh &&
  in_alloc -t 1 flushlost env SCR_RUNS=3 SCR_HALT_SECONDS=50 SCR_FLUSH=100 scr_run -v srun -N 4 -n 8 \
    env SCR_FAULT_KILL=flush:1@3 "$fpp" --steps 1000 --every 4 --bytes 65536 --step-ms 100 &&
  test "$(status_of flushlost)" != 0 &&
  expect_grep "halting: less than 50 seconds before the allocation ends" "$TRASH/flushlost" &&
  expect_grep "SCR FAULT: rank 3: killed at point flush" "$TRASH/flushlost" &&
  expect_grep "less than SCR_HALT_SECONDS=50 seconds left before the allocation ends: not launching again" \
    "$TRASH/flushlost" &&
  ! grep -q "launch 2" "$TRASH/flushlost" && ! grep -q "TIME LIMIT" "$TRASH/flushlost" &&
  { grep -q "^scr_scavenge: dataset [0-9]* (.*) copied to " "$TRASH/flushlost" ||
    { expect_grep "was being flushed when the job died: it is flushed again" "$TRASH/flushlost" &&
      expect_grep "^scr_scavenge: dataset [0-9]* (.*) is already in " "$TRASH/flushlost"; }; } &&
  step=$(prefix_step) && test "$step" -ge 4 && fpp_on_prefix "$step"
'

test_expect_success 'API: a rank lost while the last checkpoint before the end is flushed; no relaunch, it is scavenged' '
  fresh &&
  in_alloc -t 1 apiflush env SCR_RUNS=3 SCR_HALT_SECONDS=50 SCR_FLUSH=100 scr_run -v --no-preload srun -N 4 -n 8 \
    env SCR_FAULT_KILL=flush:1@3 "$APP" --steps 1000 --bytes 4096 --step-sleep 300 --until-exit &&
  test "$(status_of apiflush)" != 0 &&
  expect_grep "halting: less than 50 seconds before the allocation ends" "$TRASH/apiflush" &&
  expect_grep "SCR FAULT: rank 3: killed at point flush" "$TRASH/apiflush" &&
  expect_grep "seconds left before the allocation ends: not launching again" "$TRASH/apiflush" &&
  ! grep -q "launch 2" "$TRASH/apiflush" && ! grep -q "TIME LIMIT" "$TRASH/apiflush" &&
  step=$(sed -n "s/^scr_scavenge: dataset [0-9]* (ckpt\.\([0-9]*\)) copied to .*/\1/p" "$TRASH/apiflush") &&
  test -n "$step" && test "$step" -ge 3 && scavenged "$step"
'

test_expect_success 'preload: no launch starts less than SCR_HALT_SECONDS before the allocation ends' '
  fresh &&
  in_alloc -t 1 late env SCR_RUNS=3 SCR_HALT_SECONDS=120 scr_run -v srun -N 4 -n 8 "$fpp" --steps 40 --every 2 --bytes 65536 &&
  test "$(status_of late)" = 1 &&
  expect_grep "less than SCR_HALT_SECONDS=120 seconds left before the allocation ends: no launch" "$TRASH/late" &&
  ! grep -q "launch 1" "$TRASH/late" && ! grep -q "^starting from step" "$TRASH/late" && ! test -e "$PREFIX/data"
'

test_done
