#!/bin/sh
# SCR_Current (or SCR_CURRENT) picks the checkpoint to restart from, in cache or on the
# prefix: newer cached ones go and the index marks it current, so later runs use it too.
. "$top_srcdir/t/test-lib.sh"

current() {
  scr_index --prefix "$PREFIX" --list | awk '$0 ~ /\*/ {print $2}'
}
cached() {
  ls -d "$SCR_CACHE_BASE"/*/*/scr.dataset.* 2>/dev/null | sed 's/.*scr.dataset.//' | sort -n | tr '\n' ' '
}

test_expect_success 'SCR_Current names a cached checkpoint older than the newest: restart reads it' "
  SCR_FLUSH=0 SCR_CACHE_SIZE=3 scr_app 2 --steps 3 --bytes 4096 >out 2>err &&
  test \"\$(cached)\" = '1 2 3 ' &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=3 scr_app 2 --steps 2 --bytes 4096 --current ckpt.2 >out 2>err &&
  expect_grep 'current ckpt.2: ok' out && expect_grep 'restart: ckpt.2' out
"

test_expect_success 'the cached checkpoints newer than the one named are gone' "
  test \"\$(cached)\" = '1 2 '
"

test_expect_success 'so the next run restarts from it too' "
  SCR_FLUSH=0 SCR_CACHE_SIZE=3 scr_app 2 --steps 2 --bytes 4096 >out 2>err &&
  expect_grep 'restart: ckpt.2' out
"

test_expect_success 'SCR_Current of an unknown name fails and keeps the restart' "
  SCR_FLUSH=0 SCR_CACHE_SIZE=3 scr_app 2 --steps 2 --bytes 4096 --current nosuch >out 2>err &&
  expect_grep 'current nosuch: failed' out && expect_grep 'nosuch' err &&
  expect_grep 'restart: ckpt.2' out
"

test_expect_success 'SCR_Current fetches a checkpoint only the prefix holds and marks it current' "
  rm -rf '$PREFIX' && mkdir '$PREFIX' && wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 3 --bytes 4096 >out 2>err &&
  wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 1 --bytes 4096 --current ckpt.1 >out 2>err &&
  expect_grep 'restart: ckpt.1' out && test \"\$(current)\" = ckpt.1
"

test_expect_success 'the next run restarts from the checkpoint SCR_Current named' "
  SCR_FLUSH=1 scr_app 2 --steps 1 --bytes 4096 >out 2>err &&
  expect_grep 'restart: ckpt.1' out
"

test_expect_success 'so does the next run in a new allocation' "
  wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 1 --bytes 4096 >out 2>err &&
  expect_grep 'restart: ckpt.1' out
"

test_expect_success 'SCR_CURRENT set through SCR_Config selects the restart' "
  SCR_FLUSH=1 scr_app 2 --steps 2 --bytes 4096 --config SCR_CURRENT=ckpt.2 >out 2>err &&
  expect_grep 'restart: ckpt.2' out
"

test_done
