#!/bin/sh
# 4350-preload-many-files.sh - many routed files per rank per checkpoint: each
# is in the filemap on disk once its dataset completes, and the files of a
# dataset a rank died writing (named only in its journal) go at restart.
. "$top_srcdir/t/test-lib.sh"

preload_prelude 'many files per checkpoint'
app="$top_builddir/t/perf/preload-smallfiles"
export SCR_JOB_ID=t4350 SCR_COPY_TYPE=SINGLE SCR_FLUSH=0 SCR_CACHE_SIZE=4
mkdir -p "$TRASH/run" && echo 'PRELOAD=ckpt.{step}/r{rank}_v*.dat FILES=16' >"$TRASH/run/.scrconf"

# run CHECKPOINTS [ENV=VALUE...]: 2 ranks, 16 files of 4 KiB per rank per checkpoint
run() {
  n=$1
  shift
  (cd "$TRASH/run" && mpirun 2 env LD_PRELOAD="$preload" "$@" "$app" . 16 4 "$n") >"$TRASH/out" 2>"$TRASH/err"
}
filemap() { scr_print "$(find "$SCR_CNTL_BASE" -name "filemap_$1.scr")"; }
journals() { find "$SCR_CNTL_BASE" -name 'filemap_*.journal' -size +0; }
# cached files of checkpoint STEP
cached() { find "$SCR_CACHE_BASE" -path "*/ckpt.$1/r*_v*.dat" -not -path '*trash*' | sort; }

test_expect_success 'three checkpoints of 16 files per rank: all in the filemap, no journal left' '
  run 3 && expect_grep "^checkpoint seconds" "$TRASH/out" &&
  filemap 0 >fm0 && filemap 1 >fm1 &&
  test "$(grep -c "ckpt\.[123]/r0_v[0-9]*\.dat$" fm0)" -ge 48 &&
  test "$(grep -c "ckpt\.[123]/r1_v[0-9]*\.dat$" fm1)" -ge 48 &&
  test "$(cached 3 | wc -l)" = 32 && test -z "$(journals)"
'

test_expect_success 'killed at the 20th routed open (checkpoint 2): the journal names what the filemap does not' '
  rm -rf "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" "$TRASH"/run/ckpt.* &&
  ! run 3 SCR_FAULT_KILL=open:20 && cached 2 >in-cache && test "$(wc -l <in-cache)" -ge 4 &&
  filemap 0 >fm0 && ! grep -q "ckpt\.2/" fm0 && test -n "$(journals)"
'

test_expect_success 'the next run removes those files with the dataset in progress; checkpoint 1 stays' '
  run 0 && test -z "$(cached 2)" && test -z "$(journals)" &&
  test "$(cached 1 | wc -l)" = 32 && filemap 0 >fm0 && ! grep -q "ckpt\.2/" fm0
'

test_done
