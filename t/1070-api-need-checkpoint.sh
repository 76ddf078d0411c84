#!/bin/sh
# SCR_Need_checkpoint answers from SCR_CHECKPOINT_INTERVAL, _SECONDS and _OVERHEAD,
# or from SCR_MTBF (the Young/Daly interval) when the first two are unset, says
# yes when a halt condition is pending, and always says yes when unset; rank 0
# ends the run with one line of advice on the interval.
. "$top_srcdir/t/test-lib.sh"

# the steps at which the test app checkpointed, as "1 2 3 "
ckpt_steps() {
  sed -n 's/^checkpoint: ckpt\.//p' "$1" | tr '\n' ' '
}

test_expect_success 'with no setting every call says yes' "
  SCR_FLUSH=0 scr_app 2 --steps 4 --bytes 64 >out 2>err &&
  test \"\$(ckpt_steps out)\" = '1 2 3 4 '
"

test_expect_success 'SCR_CHECKPOINT_INTERVAL=2: every second call says yes' "
  wipe_cache &&
  SCR_CHECKPOINT_INTERVAL=2 SCR_FLUSH=0 scr_app 2 --steps 6 --bytes 64 >out 2>err &&
  test \"\$(ckpt_steps out)\" = '2 4 6 '
"

test_expect_success 'SCR_CHECKPOINT_SECONDS=1: no checkpoint before a second has passed' "
  wipe_cache &&
  SCR_CHECKPOINT_SECONDS=1 SCR_FLUSH=0 scr_app 1 --steps 14 --step-sleep 100 --bytes 64 >out 2>err &&
  steps=\$(ckpt_steps out) && echo \"checkpoints at: \$steps\" &&
  test -n \"\$steps\" && first=\${steps%% *} && test \"\$first\" -ge 5 &&
  test \$(echo \$steps | wc -w) -le 3
"

test_expect_success 'SCR_CHECKPOINT_OVERHEAD=20: slow checkpoints are taken rarely' "
  wipe_cache &&
  SCR_CHECKPOINT_OVERHEAD=20 SCR_FLUSH=0 \
    scr_app 1 --steps 20 --step-sleep 20 --ckpt-sleep 200 --bytes 64 >out 2>err &&
  steps=\$(ckpt_steps out) && echo \"checkpoints at: \$steps\" &&
  test -n \"\$steps\" && test \$(echo \$steps | wc -w) -le 5
"

test_expect_success 'SCR_CHECKPOINT_OVERHEAD=50: cheap checkpoints are not held back' "
  wipe_cache &&
  SCR_CHECKPOINT_OVERHEAD=50 SCR_FLUSH=0 \
    scr_app 1 --steps 6 --step-sleep 100 --bytes 64 >out 2>err &&
  steps=\$(ckpt_steps out) && echo \"checkpoints at: \$steps\" &&
  test \$(echo \$steps | wc -w) -ge 5
"

test_expect_success 'SCR_MTBF=1h: after the first checkpoint, which measures the cost, the interval is far away' "
  wipe_cache &&
  SCR_MTBF=1h SCR_FLUSH=0 scr_app 2 --steps 8 --step-sleep 20 --ckpt-sleep 100 --bytes 64 >out 2>err &&
  test \"\$(ckpt_steps out)\" = '1 '
"

test_expect_success 'and the run ends with the advice: cost, MTBF, the interval to take and the one taken' "
  expect_grep 'SCR rank 0 .*checkpoint cost [0-9.]* m*s, MTBF 60 min: checkpoint every ~[0-9.]* [a-z]*\$' err &&
  test \$(grep -c 'checkpoint cost' err) = 1
"

test_expect_success 'SCR_MTBF=1 (a second): the interval is at most the MTBF, so checkpoints recur' "
  wipe_cache &&
  SCR_MTBF=1 SCR_FLUSH=0 scr_app 1 --steps 20 --step-sleep 100 --ckpt-sleep 100 --bytes 64 >out 2>err &&
  steps=\$(ckpt_steps out) && echo \"checkpoints at: \$steps\" &&
  test \$(echo \$steps | wc -w) -ge 2 && expect_grep 'MTBF 1.0 s\\|MTBF 1 s' err
"

test_expect_success 'an interval that is set wins over SCR_MTBF' "
  wipe_cache &&
  SCR_MTBF=1h SCR_CHECKPOINT_INTERVAL=2 SCR_FLUSH=0 scr_app 2 --steps 6 --bytes 64 >out 2>err &&
  test \"\$(ckpt_steps out)\" = '2 4 6 ' &&
  expect_grep 'you checkpoint every' err
"

test_expect_success 'without SCR_MTBF the line gives the cost and says how to get advice' "
  wipe_cache &&
  SCR_FLUSH=0 scr_app 2 --steps 3 --bytes 64 >out 2>err &&
  expect_grep 'checkpoint cost .*, MTBF unknown (set SCR_MTBF for advice on the interval); you checkpoint every' err
"

test_expect_success 'SCR_MTBF that is not a duration stops SCR_Init with one message' "
  wipe_cache &&
  ! SCR_MTBF=soon scr_app 2 --steps 1 --bytes 64 >out 2>err &&
  test \$(grep -c 'SCR_MTBF=soon .* is not a duration' err) = 1
"

test_expect_success 'a pending halt condition makes it say yes despite the interval' "
  wipe_cache && scr_halt '$PREFIX' >/dev/null &&
  SCR_CHECKPOINT_INTERVAL=100 SCR_FLUSH=0 scr_app 2 --steps 5 --until-exit --bytes 64 >out 2>err &&
  test \"\$(ckpt_steps out)\" = '1 ' && expect_grep 'halted after step 1' out
"

test_done
