#!/bin/sh
# 4295-preload-threads.sh - a program whose threads open, write, close, read
# back and delete its checkpoint files at the same time (t/helpers/
# threaded-ckpt: even threads with open/write/close, odd ones with stdio),
# under the preload on one node, 2 ranks: every file lands in the cache, a
# thread's last close completes the checkpoint, the threads of the next run
# read it back at once, and the bytes flushed are the native run's.
. "$top_srcdir/t/test-lib.sh"

export SCR_JOB_ID=t4295 SCR_COPY_TYPE=SINGLE
preload_prelude "programs that open files from several threads"
app="$top_builddir/t/helpers/threaded-ckpt"
args="--threads 4 --files 2 --steps 8 --every 2 --bytes 8192"
rule='PRELOAD=ckpt.{step}/rank{rank}.t*.f*.dat FILES=8'

# run DIR OUT [ARGS...]: 2 ranks under the preload in $TRASH/DIR, native with DIR native*
run() {
  dir=$1 out=$2
  shift 2
  case $dir in native*) with= ;; *) with="LD_PRELOAD=$preload" ;; esac
  mkdir -p "$TRASH/$dir" &&
    (cd "$TRASH/$dir" && mpirun 2 env $with "$app" $args "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
}
result_of() { sed -n 's/^result: \([0-9a-f]\{16\}\)$/\1/p' "$TRASH/$1"; }
same_result() {
  test -n "$(result_of "$1")" && test "$(result_of "$1")" = "$(result_of "$2")" ||
    { echo "results differ:"; cat "$TRASH/$1" "$TRASH/$1.err" "$TRASH/$2"; return 1; }
}
fresh() { rm -rf "$TRASH/$1" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$TRASH/$1" && echo "$2" >"$TRASH/$1/.scrconf"; }
cached() { find "$SCR_CACHE_BASE" -path "*/ckpt.$1/rank*.t*.f*.dat" -size +0 | wc -l; }

test_expect_success 'natively the threads write what posix_fpp writes: the same result' '
  run native ref.out &&
  (mkdir -p fpp && cd fpp && mpirun 2 "$top_builddir/examples/preload/posix_fpp" --steps 8 --every 2 --bytes 8192) \
    >fpp.out &&
  same_result ref.out fpp.out && test "$(ls native/ckpt.8 | wc -l)" = 16
'

test_expect_success 'preloaded, 4 threads per rank write at once: every file in the cache, none on the file system' "
  fresh run '$rule' &&
  ! SCR_FLUSH=0 run run die.out --die-at 5 &&
  expect_grep '^checkpoint 4 written' die.out &&
  test \$(cached 4) = 16 && no_files_below $TRASH/run
"

test_expect_success 'the next run s threads read the cached checkpoint back at once: the native result' "
  SCR_FLUSH=0 run run resume.out &&
  expect_grep '^resumed from step 4\$' resume.out && same_result resume.out ref.out &&
  expect_grep 'preload summary: 2 datasets' resume.out.err
"

test_expect_success 'flushed, the files on the prefix directory hold the native run s bytes' "
  fresh flushed '$rule' &&
  SCR_FLUSH=1 run flushed flushed.out && same_result flushed.out ref.out &&
  for f in \$(cd $TRASH/native && ls ckpt.*/*.dat); do test_cmp $TRASH/native/\$f $TRASH/flushed/\$f || exit 1; done
"

test_expect_success 'with the cache lost, the threads read the fetched checkpoint' "
  wipe_cache && SCR_FLUSH=1 run flushed fetched.out &&
  expect_grep '^resumed from step 8\$' fetched.out && same_result fetched.out ref.out
"

test_expect_success 'threads deleting their old files at once (--keep 1) drop those checkpoints; resume from the newest' "
  fresh keep '$rule' &&
  ! SCR_FLUSH=0 run keep keep.out --keep 1 --die-at 7 &&
  test \$(cached 6) = 16 && test \$(cached 4) = 0 && test \$(cached 2) = 0 &&
  SCR_FLUSH=0 run keep keep2.out --keep 1 &&
  expect_grep '^resumed from step 6\$' keep2.out && same_result keep2.out ref.out
"

test_expect_success 'BOUNDARY=BARRIER: the threads close, the main thread s barrier completes the checkpoint' "
  fresh barrier 'PRELOAD=ckpt.{step}/rank{rank}.t*.f*.dat BOUNDARY=BARRIER' &&
  ! SCR_FLUSH=0 run barrier barrier.out --die-at 5 && test \$(cached 4) = 16 &&
  SCR_FLUSH=0 run barrier barrier2.out &&
  expect_grep '^resumed from step 4\$' barrier2.out && same_result barrier2.out ref.out
"

test_expect_success '8 threads of 4 files each, 32 files per rank per checkpoint' "
  fresh many 'PRELOAD=ckpt.{step}/rank{rank}.t*.f*.dat FILES=32' &&
  ! SCR_FLUSH=0 run many many.out --threads 8 --files 4 --die-at 7 && test \$(cached 6) = 64 &&
  SCR_FLUSH=0 run many many2.out --threads 8 --files 4 &&
  expect_grep '^resumed from step 6\$' many2.out && same_result many2.out ref.out
"

test_done
