#!/bin/sh
# scr_halt conditions stop a running job at the next completed checkpoint.
. "$top_srcdir/t/test-lib.sh"

test_expect_success 'scr_halt --checkpoints 2: the job exits after its second checkpoint' "
  scr_halt --checkpoints 2 '$PREFIX' &&
  SCR_FLUSH=10 scr_app 2 --steps 10 --until-exit --bytes 1024 >out 2>err &&
  expect_grep 'halted after step 2' out && ! grep -q 'checkpoint: ckpt.3' out
"

test_expect_success 'the halted checkpoint was flushed to the prefix' "
  check_pfs_file 2 0 1024 && check_pfs_file 2 1 1024
"

test_expect_success 'scr_halt with no condition stops the job at once' "
  scr_halt --remove '$PREFIX' && scr_halt '$PREFIX' &&
  SCR_FLUSH=0 scr_app 2 --steps 10 --until-exit --bytes 1024 >out 2>err &&
  expect_grep 'halted after step' out && ! grep -q 'checkpoint: ckpt.5' out
"

test_expect_success 'SCR_HALT_EXIT=1 ends the job inside SCR_Complete_checkpoint' "
  scr_halt --remove '$PREFIX' && scr_halt --checkpoints 1 '$PREFIX' &&
  SCR_HALT_EXIT=1 SCR_FLUSH=0 scr_app 2 --steps 10 --bytes 1024 >out 2>err &&
  ! grep -q 'done:' out && expect_grep 'SCR_HALT_EXIT' err
"

test_done
