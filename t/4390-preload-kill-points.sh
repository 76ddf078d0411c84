#!/bin/sh
# 4390-preload-kill-points.sh - an unmodified program under the preload, killed at the
# engine's complete and close kill points (SCR_FAULT_KILL) on one node, resumes right;
# also one that renames each checkpoint's directory into place once it completed.
. "$top_srcdir/t/test-lib.sh"

preload_prelude "the preload's kill points"
ex="$top_builddir/examples/preload"
args="--steps 8 --every 2 --bytes 1000"
export SCR_JOB_ID=t4390 SCR_COPY_TYPE=SINGLE SCR_FLUSH=0

# run DIR OUT [ENV=VALUE...]: 2 ranks of posix_fpp under the preload, in $TRASH/DIR
run() {
  dir=$1 out=$2
  shift 2
  (cd "$TRASH/$dir" && mpirun 2 env LD_PRELOAD="$preload" "$@" "$ex/posix_fpp" $args) >"$TRASH/$out" 2>"$TRASH/$out.err"
}
result_of() { sed -n 's/^result: \([0-9a-f]\{16\}\)$/\1/p' "$TRASH/$1"; }
same_result() {
  test -n "$(result_of "$1")" && test "$(result_of "$1")" = "$(result_of "$2")" ||
    { echo "results differ:"; cat "$TRASH/$1" "$TRASH/$1.err" "$TRASH/$2"; return 1; }
}
fresh() {
  rm -rf "$TRASH/$1" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$TRASH/$1" &&
    echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >"$TRASH/$1/.scrconf"
}

test_expect_success 'reference result of an uninterrupted native run' '
  mkdir ref && (cd ref && mpirun 2 "$ex/posix_fpp" $args) >ref.out && test -n "$(result_of ref.out)"
'

# "complete" is reached once a dataset completed, before the program goes on
# (to write a pointer, say): the second is the checkpoint of step 4
test_expect_success 'killed right after checkpoint 4 completed on every rank: resumes from step 4, native result' "
  fresh done &&
  ! run done done.die SCR_FAULT_KILL=complete:2 && expect_grep 'killed at point complete (time 2)' done.die.err &&
  ! grep -q '^checkpoint 4 written' $TRASH/done.die &&
  run done done.again && expect_grep '^resumed from step 4\$' done.again && same_result done.again ref.out
"

test_expect_success 'killed there on rank 1 only: resumes from step 4, native result' "
  fresh one &&
  ! run one one.die SCR_FAULT_KILL=complete:2@1 && expect_grep 'rank 1: killed at point complete' one.die.err &&
  run one one.again && expect_grep '^resumed from step 4\$' one.again && same_result one.again ref.out
"

# "close" is reached after a routed file was closed, before its dataset is
# decided complete: the checkpoint of step 4 is not one yet
test_expect_success 'killed after closing the step 4 file, its completion undecided: dropped, resumes from step 2' "
  fresh open &&
  ! run open open.die SCR_FAULT_KILL=close:2 && expect_grep 'killed at point close (time 2)' open.die.err &&
  run open open.again && expect_grep 'dataset 2 in cache is incomplete' open.again.err &&
  expect_grep '^resumed from step 2\$' open.again && same_result open.again ref.out
"

# tmpdir-rename (t/helpers/chaos-app): each checkpoint goes to tmp.<step>/,
# which rank 0 renames to step.<step> once the checkpoint completed (at the
# barrier after the writes); a restart looks for step.* only. Killed at
# "complete" of the step 4 checkpoint, tmp.4 is whole but no checkpoint to
# the program: step.2 is still the one it resumes from, and must stay so
# until the program renames a newer one into place
rename_app="$top_builddir/t/helpers/chaos-app --idiom tmpdir-rename"
rename_run() {
  dir=$1 out=$2
  shift 2
  (cd "$TRASH/$dir" && mpirun 2 env LD_PRELOAD="$preload" "$@" $rename_app $args) >"$TRASH/$out" 2>"$TRASH/$out.err"
}
rename_fresh() {
  rm -rf "$TRASH/$1" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$TRASH/$1" &&
    printf '%s\n' 'PRELOAD=tmp.{step}/rank{rank}.dat TYPE=CHECKPOINT BOUNDARY=BARRIER' \
      'PRELOAD=step.{step}/rank{rank}.dat TYPE=CHECKPOINT BOUNDARY=BARRIER' >"$TRASH/$1/.scrconf"
}
# rename_dies DIR OUT SPEC [ENV=VALUE...]: the run is killed at SPEC (SCR_FAULT_KILL)
rename_dies() {
  rd_dir=$1 rd_out=$2 rd_spec=$3
  shift 3
  ! rename_run "$rd_dir" "$rd_out" SCR_FAULT_KILL="$rd_spec" "$@" &&
    expect_grep "killed at point ${rd_spec%%:*}" "$rd_out.err"
}

test_expect_success 'reference result of an uninterrupted native tmpdir-rename run' '
  mkdir rref && (cd rref && mpirun 2 $rename_app $args) >rref.out && test -n "$(result_of rref.out)"
'

test_expect_success 'killed between checkpoint 4 s completion and its rename into place: resumes from step.2' "
  rename_fresh rn && rename_dies rn rn.die complete:2 &&
  ! grep -q '^checkpoint 4 written' $TRASH/rn.die &&
  rename_run rn rn.again && expect_grep '^resumed from step 2\$' rn.again && same_result rn.again rref.out
"

test_expect_success 'resumed from step.2 past a whole tmp.4, killed writing step 4 again: step.2 is still there' "
  rename_fresh rw && rename_dies rw rw.die complete:2 SCR_CACHE_SIZE=2 &&
  rename_dies rw rw.die2 close:1 SCR_CACHE_SIZE=2 && expect_grep '^resumed from step 2\$' rw.die2 &&
  rename_run rw rw.again SCR_CACHE_SIZE=2 && expect_grep '^resumed from step 2\$' rw.again &&
  same_result rw.again rref.out
"

test_expect_success 'the same, killed once step 4 completed again, before its rename: step.2 is still there' "
  rename_fresh rc && rename_dies rc rc.die complete:2 SCR_CACHE_SIZE=2 &&
  rename_dies rc rc.die2 complete:1 SCR_CACHE_SIZE=2 && expect_grep '^resumed from step 2\$' rc.die2 &&
  rename_run rc rc.again SCR_CACHE_SIZE=2 && expect_grep '^resumed from step 2\$' rc.again &&
  same_result rc.again rref.out
"

# the pin moves on at the barrier after each rename: no more in cache than
# SCR_CACHE_SIZE says once the program renamed its newest checkpoint
test_expect_success 'renaming every checkpoint into place: SCR_CACHE_SIZE=1 leaves one checkpoint in cache' "
  rename_fresh one1 && rename_run one1 one1.out && same_result one1.out rref.out &&
  ls -d \$SCR_CACHE_BASE/*/*/scr.dataset.* >one1.ls &&
  { test \$(wc -l <one1.ls) = 1 || { cat one1.ls; false; }; }
"

test_done
