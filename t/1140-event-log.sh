#!/bin/sh
# The event log is on by default: one line per event in <prefix>/.scr/log,
# appended by rank 0, with the keys the timeline (scr_log) draws from;
# SCR_LOG_ENABLE=0 turns it off.
. "$top_srcdir/t/test-lib.sh"

LOG="$PREFIX/.scr/log"

test_expect_success 'no log with SCR_LOG_ENABLE=0' "
  SCR_LOG_ENABLE=0 SCR_FLUSH=1 scr_app 2 --steps 1 --bytes 64 >out 2>err &&
  test ! -e '$LOG'
"

test_expect_success 'by default each completed checkpoint is logged' "
  rm -rf '$PREFIX' && mkdir '$PREFIX' && wipe_cache &&
  SCR_FLUSH=2 scr_app 2 --steps 3 --bytes 64 >out 2>err &&
  test \$(grep -c 'event=CHECKPOINT_COMPLETE' '$LOG') = 3 &&
  expect_grep 'event=CHECKPOINT_COMPLETE time=[0-9.]* dset=3 name=ckpt.3' '$LOG'
"

test_expect_success 'and each flush: the second checkpoint, then the last one at SCR_Finalize' "
  test \$(grep -c 'event=FLUSH_COMPLETE' '$LOG') = 2 &&
  expect_grep 'event=FLUSH_COMPLETE .* dset=2 name=ckpt.2 mode=sync bytes=128 ' '$LOG' &&
  expect_grep 'event=FLUSH_COMPLETE .* dset=3 name=ckpt.3' '$LOG'
"

test_expect_success 'a run is INIT to FINALIZE; a checkpoint is START, ENCODE_START, ENCODE_COMPLETE, COMPLETE' "
  sed -n 's/.* event=\\([A-Z_]*\\) .*/\\1/p' '$LOG' | uniq >events &&
  printf '%s\n' INIT CHECKPOINT_START ENCODE_START ENCODE_COMPLETE CHECKPOINT_COMPLETE \
    CHECKPOINT_START ENCODE_START ENCODE_COMPLETE CHECKPOINT_COMPLETE FLUSH_START FLUSH_COMPLETE \
    CHECKPOINT_START ENCODE_START ENCODE_COMPLETE CHECKPOINT_COMPLETE FLUSH_START FLUSH_COMPLETE \
    FINALIZE >expected &&
  test_cmp expected events
"

test_expect_success 'every line is key=value words after its timestamp, with time= to the millisecond' "
  ! cut -d' ' -f2- '$LOG' | tr ' ' '\n' | grep -v '^[a-z_]*=' &&
  ! grep -v ' time=[0-9]*\\.[0-9][0-9][0-9] ' '$LOG'
"

test_expect_success 'the encoding says its scheme and the bytes the write produced' "
  expect_grep 'event=ENCODE_START .* dset=1 scheme=[A-Z]* files=2 bytes=128 write_seconds=' '$LOG'
"

test_expect_success 'a second run appends to the same log, with a restore from cache' "
  SCR_FLUSH=2 scr_app 2 --steps 4 --bytes 64 >out 2>err &&
  test \$(grep -c 'event=CHECKPOINT_COMPLETE' '$LOG') = 4 &&
  test \$(grep -c 'event=INIT' '$LOG') = 2 &&
  expect_grep 'event=RESTORE_COMPLETE .* dset=3 source=cache bytes=128' '$LOG' &&
  expect_grep 'event=CHECKPOINT_COMPLETE .* dset=4 name=ckpt.4' '$LOG'
"

test_expect_success 'each event is logged once, not once per rank' "
  test \$(grep -c 'event=CHECKPOINT_START .* dset=1 ' '$LOG') = 1
"

test_expect_success 'a fetch from the prefix directory is logged with its size' "
  wipe_cache &&
  SCR_FLUSH=2 scr_app 2 --steps 4 --bytes 64 >out 2>err &&
  expect_grep 'event=FETCH_START .* dset=4' '$LOG' &&
  expect_grep 'event=FETCH_COMPLETE .* dset=4 name=ckpt.4 bytes=128 seconds=' '$LOG'
"

test_done
