#!/bin/sh
# SCR_Need_checkpoint answers from SCR_CHECKPOINT_INTERVAL, _SECONDS and _OVERHEAD,
# says yes when a halt condition is pending, and always says yes when unset.
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

test_expect_success 'a pending halt condition makes it say yes despite the interval' "
  wipe_cache && scr_halt '$PREFIX' >/dev/null &&
  SCR_CHECKPOINT_INTERVAL=100 SCR_FLUSH=0 scr_app 2 --steps 5 --until-exit --bytes 64 >out 2>err &&
  test \"\$(ckpt_steps out)\" = '1 ' && expect_grep 'halted after step 1' out
"

test_done
