#!/bin/sh
# 4010-preload-dryrun.sh - SCR_PRELOAD_DRYRUN=1 names exactly the opens that
# match a rule, once per file, with rule text and file:line; CALLER= counts.
. "$top_srcdir/t/test-lib.sh"

probe="$top_builddir/t/helpers/preload-probe"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
mkdir -p "$TRASH/run"
W="$TRASH/run"

# probe MODE...: the probe in run/, stderr's SCR lines in run.err
probe() {
  (cd run && env LD_PRELOAD="$preload" "$@" >../run.out 2>../run.err)
}

# the dry-run lines of run.err, without the "SCR ..." prefix, sorted
dry_lines() {
  sed -n 's/^SCR.*dry run: //p' run.err | sort
}

test_expect_success 'dry run: exactly the matching opens, once each' '
  printf "PRELOAD=ckpt.{step}/rank_{rank}.dat\nPRELOAD=ckpt.{step}/meta.json\nPRELOAD=ckpt.latest\n" >run/.scrconf &&
  probe SCR_PRELOAD_DRYRUN=1 "$probe" dryrun && expect_grep "dry run done" run.out &&
  r="PRELOAD=ckpt.{step}/rank_{rank}.dat" && at="at $W/.scrconf" &&
  {
    echo "open $W/ckpt.1/rank_0.dat matches $r (step 1, rank 0) $at:1"
    echo "open64 $W/ckpt.1/rank_1.dat matches $r (step 1, rank 1) $at:1"
    echo "openat $W/ckpt.1/rank_2.dat matches $r (step 1, rank 2) $at:1"
    echo "creat $W/ckpt.1/rank_3.dat matches $r (step 1, rank 3) $at:1"
    echo "fopen $W/ckpt.1/meta.json matches PRELOAD=ckpt.{step}/meta.json (step 1) $at:2"
    echo "fopen $W/ckpt.latest matches PRELOAD=ckpt.latest $at:3"
    echo "freopen $W/ckpt.2/rank_0.dat matches $r (step 2, rank 0) $at:1"
    echo "__open_2 $W/ckpt.1/rank_4.dat matches $r (step 1, rank 4) $at:1"
    echo "open $W/ckpt.1/rank_5.dat matches $r (step 1, rank 5) $at:1"
    echo "open $W/ckpt.3/rank_0.dat matches $r (step 3, rank 0) $at:1"
    echo "open $W/ckpt.4/rank_6.dat matches $r (step 4, rank 6) $at:1"
  } | sort >expected && dry_lines >got && diff expected got
'

test_expect_success 'dry run: routes nothing (the files are where the application put them)' '
  test -f run/ckpt.1/rank_0.dat && test -f run/ckpt.latest && test -f run/ckpt.2/rank_0.dat &&
  expect_grep "hooks: open=0 close=0" run.out
'

test_expect_success 'dry run: every line names the rank the launcher gave' '
  probe SCR_PRELOAD_DRYRUN=1 PMI_RANK=3 "$probe" dryrun &&
  test "$(grep -c "dry run:" run.err)" = 11 &&
  test "$(grep -c "^SCR rank 3 on $(hostname): dry run: " run.err)" = 11
'

test_expect_success 'dry run with no rule matching: silent' '
  printf "PRELOAD=elsewhere/{rank}.dat\n" >run/.scrconf &&
  probe SCR_PRELOAD_DRYRUN=1 "$probe" dryrun && ! grep -q "dry run:" run.err
'

test_expect_success 'SCR_DEBUG=1: each routing decision once per file' '
  printf "PRELOAD=ckpt.{step}/rank_{rank}.dat\nPRELOAD=ckpt.{step}/meta.json\nPRELOAD=ckpt.latest\n" >run/.scrconf &&
  probe SCR_DEBUG=1 "$probe" dryrun &&
  test "$(grep -c "matches PRELOAD=.*: passed through" run.err)" = 11 &&
  test "$(grep -c "open $W/ckpt.1/rank_0.dat matches" run.err)" = 1 && ! grep -q "dry run" run.err &&
  expect_grep "hooks: open=12 close=11" run.out
'

test_expect_success 'CALLER=: an open counts only from a function the glob names' '
  printf "PRELOAD=ckpt.{step}/rank_0.dat CALLER=write_checkpoint*\n" >run/.scrconf &&
  probe SCR_PRELOAD_DRYRUN=1 "$probe" caller 6 && expect_grep "caller done" run.out &&
  {
    for step in 0 2 4; do
      echo "open $W/ckpt.$step/rank_0.dat matches PRELOAD=ckpt.{step}/rank_0.dat (step $step) at $W/.scrconf:1"
    done
  } >expected && dry_lines >got && diff expected got
'

test_expect_success 'CALLER=: the same file from two functions, only the listed one shows' '
  probe SCR_PRELOAD_DRYRUN=1 "$probe" caller 4 both &&
  dry_lines >got && test "$(wc -l <got)" = 4 && ! grep -v "^open $W/ckpt.[0-3]/rank_0.dat matches" got
'

test_expect_success 'CALLER=: an open it rules out falls to the next rule' '
  printf "PRELOAD=ckpt.{step}/rank_0.dat CALLER=write_checkpoint*\nPRELOAD=ckpt.{step}/rank_{rank}.dat\n" >run/.scrconf &&
  probe SCR_PRELOAD_DRYRUN=1 "$probe" caller 4 &&
  {
    echo "open $W/ckpt.0/rank_0.dat matches PRELOAD=ckpt.{step}/rank_0.dat (step 0) at $W/.scrconf:1"
    echo "fopen $W/ckpt.1/rank_0.dat matches PRELOAD=ckpt.{step}/rank_{rank}.dat (step 1, rank 0) at $W/.scrconf:2"
    echo "open $W/ckpt.2/rank_0.dat matches PRELOAD=ckpt.{step}/rank_0.dat (step 2) at $W/.scrconf:1"
    echo "fopen $W/ckpt.3/rank_0.dat matches PRELOAD=ckpt.{step}/rank_{rank}.dat (step 3, rank 0) at $W/.scrconf:2"
  } | sort >expected && dry_lines >got && diff expected got
'

test_expect_success 'CALLER=: a glob no function matches rules every open out' '
  printf "PRELOAD=ckpt.{step}/rank_0.dat CALLER=no_such_function\n" >run/.scrconf &&
  probe SCR_PRELOAD_DRYRUN=1 "$probe" caller 4 && ! grep -q "dry run:" run.err
'

test_done
