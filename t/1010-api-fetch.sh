#!/bin/sh
# Without a cache (a new allocation) the program restarts from the prefix
# directory; a corrupted checkpoint there is detected by CRC32 and skipped.
. "$top_srcdir/t/test-lib.sh"

bytes=65536
test_expect_success 'four ranks flush every checkpoint to the prefix' "
  SCR_FLUSH=1 scr_app 4 --steps 3 --bytes $bytes >out 2>err &&
  for s in 1 2 3; do for r in 0 1 2 3; do check_pfs_file \$s \$r $bytes || exit 1; done; done &&
  test -f '$PREFIX/.scr/index.scr' &&
  test -f '$PREFIX/.scr/scr.dataset.3/summary.scr' &&
  test -f '$PREFIX/.scr/scr.dataset.3/rank2file.scr'
"

test_expect_success 'the index lists the three checkpoints, ckpt.3 current' "
  scr_index --prefix '$PREFIX' --list >list &&
  expect_grep 'ckpt.1' list && expect_grep 'ckpt.2' list &&
  grep 'ckpt.3' list | grep -q '\\*'
"

test_expect_success 'with the cache wiped, the run fetches ckpt.3 from the prefix' "
  wipe_cache &&
  SCR_FLUSH=1 scr_app 4 --steps 3 --bytes $bytes >out 2>err &&
  expect_grep 'restart: ckpt.3' out && expect_grep 'fetched from' err
"

test_expect_success 'a flipped byte in ckpt.3 on the prefix: CRC mismatch, falls back to ckpt.2' "
  wipe_cache &&
  printf 'X' | dd of='$PREFIX/ckpt.3/rank_2.dat' bs=1 seek=1000 conv=notrunc 2>/dev/null &&
  SCR_FLUSH=1 scr_app 4 --steps 2 --bytes $bytes >out 2>err &&
  expect_grep 'CRC32 mismatch' err && expect_grep 'restart: ckpt.2' out
"

test_expect_success 'the corrupted checkpoint is marked FAILED in the index' "
  scr_index --prefix '$PREFIX' --list >list &&
  grep 'ckpt.3' list | grep -q FAILED
"

test_expect_success 'a run with another rank count skips ckpt.2 without marking it FAILED' "
  wipe_cache &&
  SCR_FLUSH=0 scr_app 2 --steps 1 --bytes $bytes >out 2>err &&
  expect_grep 'written by 4 ranks, this run has 2' err &&
  scr_index --prefix '$PREFIX' --list >list && ! grep 'ckpt.2' list | grep -q FAILED
"

test_expect_success 'SCR_FETCH=0 starts from scratch when the cache is empty' "
  wipe_cache &&
  SCR_FETCH=0 SCR_FLUSH=0 scr_app 2 --steps 1 --bytes 64 >out 2>err &&
  expect_grep 'restart: none' out
" 

test_done
