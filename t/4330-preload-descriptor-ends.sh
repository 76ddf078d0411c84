#!/bin/sh
# 4330-preload-descriptor-ends.sh - a routed file's descriptor can end without
# close: close_range (Python's os.closerange; also CLOSE_RANGE_UNSHARE),
# closefrom, dup2 onto it, or a raw system call the layer cannot see. The
# file counts as closed (its dataset completes, bytes exact),
# CLOSE_RANGE_CLOEXEC closes nothing, and when the engine later gets the same
# descriptor number for its own files (a filemap rewritten for an unlink)
# nothing hangs. Issue 20, item 1. Two ranks.
. "$top_srcdir/t/test-lib.sh"

export SCR_JOB_ID=t4330 SCR_COPY_TYPE=SINGLE
# a hang must fail the test, not block the suite
: "${SCR_TEST_TIMEOUT:=60}"
export SCR_TEST_TIMEOUT

preload_prelude "descriptors that end without close"

# pre DIR OUT OP...: mpi-fileops on 2 ranks under the preload, in $TRASH/DIR;
# rank 0's lines in $TRASH/OUT, stderr in OUT.err; a hang says so
pre() {
  dir=$1 out=$2
  shift 2
  (cd "$TRASH/$dir" && mpirun 2 env LD_PRELOAD="$preload" "$fileops" "$@") >"$TRASH/$out" 2>"$TRASH/$out.err" || {
    rc=$?
    test $rc -eq 124 && echo "hung: killed after $SCR_TEST_TIMEOUT s, after these lines:" && cat "$TRASH/$out"
    return $rc
  }
}
# native DIR OUT OP...: the same without the preload, in a new DIR
native() {
  dir=$1 out=$2
  shift 2
  rm -rf "$TRASH/$dir" && mkdir -p "$TRASH/$dir" &&
    (cd "$TRASH/$dir" && mpirun 2 "$fileops" "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
}
# fresh DIR: an empty DIR with the rule, and empty caches
fresh() {
  rm -rf "$TRASH/$1" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$TRASH/$1" &&
    echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat' >"$TRASH/$1/.scrconf"
}
# flushed DIR STEP TEXT0 TEXT1: both ranks' files of STEP on the prefix
# directory, with these contents (printf escapes), and indexed complete
flushed() {
  printf "$3" >"$TRASH/$1.expect0" && test_cmp "$TRASH/$1.expect0" "$TRASH/$1/ckpt.$2/rank_0.dat" &&
    printf "$4" >"$TRASH/$1.expect1" && test_cmp "$TRASH/$1.expect1" "$TRASH/$1/ckpt.$2/rank_1.dat" &&
    scr_index -p "$TRASH/$1" >"$TRASH/$1.index" && expect_grep "^ *[0-9]*  ckpt\.$2 .* ok  *[a-z-]*\$" "$TRASH/$1.index"
}

# ckpt.1 written and closed as usual; ckpt.2's file ended by HOW, after
# which every rank sees rank 0's file (a dataset in progress is seen by its
# writer only: it completed there), unless NOW is "later"; then the unlink
# of ckpt.1's file rewrites the filemap (the engine opens and closes its own
# files while it holds its lock), and ckpt.2 is read back and seen
ops_for() {
  seen=stat@all:ckpt.2/rank_0.dat
  now=$seen
  test "${2:-}" = later && now=
  echo "mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat mkdir@0:ckpt.2 $1:ckpt.2/rank_%d.dat $now" \
    "unlink:ckpt.1/rank_%d.dat read@all:ckpt.2/rank_%d.dat stat:ckpt.1/rank_%d.dat $seen"
}

# ended DIR HOW [later]: the operations of ops_for run natively and under
# the preload in DIR print the same, and ckpt.2 is complete on the prefix
ended() {
  fresh "$1" && ops=$(ops_for "$2" "${3:-}") &&
    native "$1.native" "$1.native.out" $ops && SCR_FLUSH=1 pre "$1" "$1.out" $ops &&
    test_cmp "$1.native.out" "$1.out" &&
    expect_grep 'preload summary: 2 datasets' "$1.out.err" &&
    flushed "$1" 2 'rank 0\n' 'rank 1\n'
}

for how in closerange closefrom unshare dup2over; do
  test_expect_success "$how: the file counts as closed there; the unlink after it does not hang" "ended $how $how"
done

test_expect_success 'close_range with CLOSE_RANGE_CLOEXEC closes nothing: what is written after it is in the checkpoint' "
  fresh cloexec && ops=\$(ops_for cloexec) &&
  native cloexec.native cloexec.native.out \$ops && SCR_FLUSH=1 pre cloexec cloexec.out \$ops &&
  test_cmp cloexec.native.out cloexec.out &&
  expect_grep 'preload summary: 2 datasets' cloexec.out.err &&
  flushed cloexec 2 'rank 0\\nmore\\n' 'rank 1\\nmore\\n'
"

# nothing sees a raw system call: the file counts as closed once its number
# comes back (here to the engine, for the filemap the unlink rewrites)
test_expect_success 'a close behind every wrapper: the engine reuses its number for its own files and does not hang' "ended raw rawclose later"

# the number need not come back on every rank at the same call (under
# ThreadSanitizer rank 0's file got a number above those the publish
# finisher held, and its engine's next file a lower one): rank 1 then
# completes the dataset inside the unlink, and rank 0, whose number nobody
# takes, went on to MPI_Barrier and waited there for ever; the barrier must
# notice a descriptor that is no longer the file
test_expect_success 'a close behind every wrapper whose number one rank never reuses: MPI_Barrier notices, no hang' "ended rawhigh rawhigh later"

# the same number, free at MPI_Finalize, goes to the engine's files or to
# the cache's reaper thread, which SCR_Finalize waits for under the engine's
# lock: neither may wait for that lock
test_expect_success 'a close behind every wrapper just before MPI_Finalize: no hang, the checkpoint completes there' "
  fresh rawend && ops='mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat mkdir@0:ckpt.2 rawclose:ckpt.2/rank_%d.dat' &&
  native rawend.native rawend.native.out \$ops && SCR_FLUSH=1 pre rawend rawend.out \$ops &&
  test_cmp rawend.native.out rawend.out &&
  expect_grep 'preload summary: 2 datasets' rawend.out.err &&
  flushed rawend 2 'rank 0\\n' 'rank 1\\n'
"

test_expect_success 'the checkpoints restart: ckpt.2 is seen at its path in the next run' "
  for how in closerange closefrom unshare dup2over raw rawhigh; do
    SCR_FLUSH=1 pre \$how \$how.again.out read@all:ckpt.2/rank_%d.dat &&
    expect_grep \"sees checkpoint 'ckpt.2'\" \$how.again.out.err &&
    printf '%s\\n' 'read@0 ckpt.2/rank_0.dat: 7 ok' 'read@1 ckpt.2/rank_1.dat: 7 ok' >\$how.again.expect &&
    test_cmp \$how.again.expect \$how.again.out || exit 1
  done
"

test_done
