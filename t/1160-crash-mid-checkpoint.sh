#!/bin/sh
# A job killed (SIGKILL) halfway through writing a checkpoint restarts from the previous
# complete one, bytes exact, from cache or from the prefix directory.
. "$top_srcdir/t/test-lib.sh"

bytes=65536

test_expect_success 'four ranks are killed halfway through writing checkpoint 3' "
  ! SCR_FLUSH=0 scr_app 4 --steps 5 --bytes $bytes --crash-during 3 >out 2>err &&
  expect_grep 'checkpoint: ckpt.2' out && ! grep -q 'checkpoint: ckpt.3' out
"

test_expect_success 'the next run restarts from checkpoint 2 in cache, bytes exact' "
  SCR_FLUSH=0 scr_app 4 --steps 5 --bytes $bytes >out 2>err &&
  expect_grep '^restart: ckpt.2\$' out && ! grep -q 'restart rejected' out &&
  expect_grep 'checkpoint: ckpt.3' out && expect_grep 'checkpoint: ckpt.5' out
"

test_expect_success 'killed while writing with every checkpoint flushed: ckpt.3 never reaches the index' "
  rm -rf '$PREFIX' && mkdir '$PREFIX' && wipe_cache &&
  ! SCR_FLUSH=1 scr_app 2 --steps 5 --bytes $bytes --crash-during 3 >out 2>err &&
  scr_index --prefix '$PREFIX' --list >list &&
  grep 'ckpt.2' list | grep -q '\\*' && ! grep -q 'ckpt.3' list
"

test_expect_success 'in a new allocation the run restarts from checkpoint 2 on the prefix, bytes exact' "
  wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  expect_grep '^restart: ckpt.2\$' out && ! grep -q 'restart rejected' out &&
  check_pfs_file 3 0 $bytes && check_pfs_file 3 1 $bytes
"

test_done
