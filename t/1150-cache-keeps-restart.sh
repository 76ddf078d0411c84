#!/bin/sh
# Eviction never costs the restart point: the newest complete checkpoint stays in cache
# until a newer one completes, whatever an invalid checkpoint or an output dataset does.
. "$top_srcdir/t/test-lib.sh"

cached() {
  ls -d "$SCR_CACHE_BASE"/*/*/scr.dataset.* 2>/dev/null | sed 's/.*scr.dataset.//' | sort -n | tr '\n' ' '
}

test_expect_success 'an invalid checkpoint leaves the previous one as the restart point' "
  SCR_FLUSH=0 scr_app 2 --steps 3 --bytes 4096 --invalid-step 3 >out 2>err &&
  expect_grep 'checkpoint: ckpt.2' out && ! grep -q 'checkpoint: ckpt.3' out &&
  test \"\$(cached)\" = '2 ' &&
  SCR_FLUSH=0 scr_app 2 --steps 3 --bytes 4096 >out 2>err &&
  expect_grep 'restart: ckpt.2' out
"

test_expect_success 'the same after a restart: the restarted checkpoint survives an invalid one' "
  wipe_cache &&
  SCR_FLUSH=0 scr_app 2 --steps 1 --bytes 4096 >out 2>err &&
  SCR_FLUSH=0 scr_app 2 --steps 2 --bytes 4096 --invalid-step 2 >out 2>err &&
  expect_grep 'restart: ckpt.1' out && ! grep -q 'checkpoint: ckpt.2' out &&
  SCR_FLUSH=0 scr_app 2 --steps 2 --bytes 4096 >out 2>err &&
  expect_grep 'restart: ckpt.1' out && expect_grep 'checkpoint: ckpt.2' out
"

test_expect_success 'a valid checkpoint then replaces it: one dataset in cache' "
  test \"\$(cached)\" = '2 '
"

test_expect_success 'an output dataset does not push the newest checkpoint out of cache' "
  wipe_cache &&
  SCR_FLUSH=0 scr_app 2 --steps 2 --output-every 2 --bytes 4096 >out 2>err &&
  expect_grep 'output: out.2' out &&
  SCR_FLUSH=0 scr_app 2 --steps 2 --bytes 4096 >out 2>err &&
  expect_grep 'restart: ckpt.2' out
"

test_expect_success 'a flushed output dataset leaves the cache' "
  test \"\$(cached)\" = '2 '
"

test_expect_success 'SCR_CACHE_SIZE=2: room is made when a checkpoint starts, never beyond two' "
  rm -rf '$PREFIX' && mkdir '$PREFIX' && wipe_cache &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=2 scr_app 2 --steps 3 --bytes 4096 --invalid-step 3 >out 2>err &&
  test \"\$(cached)\" = '2 ' &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=2 scr_app 2 --steps 2 --bytes 4096 >out 2>err &&
  expect_grep 'restart: ckpt.2' out
"

test_done
