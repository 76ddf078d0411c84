#!/bin/sh
# SCR_LOG_ENABLE=1 appends one line per event to <prefix>/.scr/log: checkpoints
# and flushes with their dataset; nothing is logged by default.
. "$top_srcdir/t/test-lib.sh"

LOG="$PREFIX/.scr/log"

test_expect_success 'no log without SCR_LOG_ENABLE' "
  SCR_FLUSH=1 scr_app 2 --steps 1 --bytes 64 >out 2>err &&
  test ! -e '$LOG'
"

test_expect_success 'SCR_LOG_ENABLE=1 logs each completed checkpoint' "
  rm -rf '$PREFIX' && mkdir '$PREFIX' && wipe_cache &&
  SCR_LOG_ENABLE=1 SCR_FLUSH=2 scr_app 2 --steps 3 --bytes 64 >out 2>err &&
  test \$(grep -c 'event=CHECKPOINT_COMPLETE' '$LOG') = 3 &&
  expect_grep 'event=CHECKPOINT_COMPLETE dset=3 name=ckpt.3' '$LOG'
"

test_expect_success 'and each flush: the second checkpoint, then the last one at SCR_Finalize' "
  test \$(grep -c 'event=FLUSH_COMPLETE' '$LOG') = 2 &&
  expect_grep 'event=FLUSH_COMPLETE dset=2 name=ckpt.2' '$LOG' &&
  expect_grep 'event=FLUSH_COMPLETE dset=3 name=ckpt.3' '$LOG'
"

test_expect_success 'a second run appends to the same log' "
  SCR_LOG_ENABLE=1 SCR_FLUSH=2 scr_app 2 --steps 4 --bytes 64 >out 2>err &&
  test \$(grep -c 'event=CHECKPOINT_COMPLETE' '$LOG') = 4 &&
  expect_grep 'event=CHECKPOINT_COMPLETE dset=4 name=ckpt.4' '$LOG'
"

test_expect_success 'each event is logged once, not once per rank' "
  test \$(grep -c 'dset=1 ' '$LOG') = 1
"

test_done
