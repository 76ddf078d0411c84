#!/bin/sh
# 4390-preload-kill-points.sh - an unmodified program under the preload, killed at the
# engine's complete and close kill points (SCR_FAULT_KILL) on one node, resumes right.
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

test_done
