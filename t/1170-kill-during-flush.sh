#!/bin/sh
# 1170-kill-during-flush.sh - a job killed at the flush kill point (SCR_FAULT_KILL:
# a file copied to the prefix directory, its dataset not yet indexed) loses no checkpoint.
. "$top_srcdir/t/test-lib.sh"

bytes=4096
fresh() { rm -rf "$PREFIX" && mkdir -p "$PREFIX" && wipe_cache; }

# each rank flushes one file per checkpoint, so flush:3 is ckpt.3's file;
# SCR_Complete_checkpoint does not return, so the program never says ckpt.3
test_expect_success 'killed at the flush of ckpt.3: the index keeps ckpt.2 current and does not index ckpt.3' "
  fresh &&
  ! SCR_FLUSH=1 SCR_FAULT_KILL=flush:3 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  expect_grep 'killed at point flush (time 3)' err && expect_grep 'checkpoint: ckpt.2' out &&
  scr_index --prefix '$PREFIX' --list >list &&
  grep 'ckpt.2' list | grep -q '\\*' && ! grep 'ckpt.3' list | grep -qv ' CACHED '
"

# ckpt.3 completed in cache before its flush began: it is the newest checkpoint
test_expect_success 'the next run in the same allocation restarts from ckpt.3 in cache, bytes exact' "
  SCR_FLUSH=1 scr_app 2 --steps 4 --bytes $bytes >out 2>err &&
  expect_grep '^restart: ckpt.3\$' out && expect_grep 'in cache' err && ! grep -q 'restart rejected' out &&
  check_pfs_file 4 0 $bytes && check_pfs_file 4 1 $bytes
"

test_expect_success 'killed at the flush of ckpt.3, then a new allocation: restarts from ckpt.2 on the prefix' "
  fresh &&
  ! SCR_FLUSH=1 SCR_FAULT_KILL=flush:3 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  expect_grep '^restart: ckpt.2\$' out && expect_grep 'fetched from' err && ! grep -q 'restart rejected' out
"

# rank 0's file of ckpt.3 is on the prefix, rank 1 died after copying its
# own: flush.scr says FLUSHING, and scr_scavenge (scr_run's postrun) copies
# the dataset again and indexes it
test_expect_success 'only rank 1 killed at the flush of ckpt.3: scr_scavenge then flushes it whole and makes it current' "
  fresh &&
  ! SCR_FLUSH=1 SCR_FAULT_KILL=flush:3@1 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  expect_grep 'rank 1: killed at point flush' err &&
  scr_print '$PREFIX/.scr/flush.scr' >flush.txt && expect_grep 'LOCATION = FLUSHING' flush.txt &&
  (cd '$PREFIX' && SCR_PREFIX='$PREFIX' mpirun 2 '$top_builddir/scr_scavenge') >sc.out 2>&1 &&
  expect_grep 'dataset 3 (ckpt.3) copied' sc.out &&
  check_pfs_file 3 0 $bytes && check_pfs_file 3 1 $bytes &&
  scr_index --prefix '$PREFIX' --list >list && grep 'ckpt.3' list | grep -q '\\*'
"

test_done
