#!/bin/sh
# 1025-api-flush-async.sh - SCR_FLUSH_ASYNC=1: checkpoints reach the prefix
# directory through the node's scr_transfer daemon while the program goes on,
# within SCR_FLUSH_ASYNC_BW, and are indexed only once every file is there and
# checked; a failed or interrupted background flush leaves the checkpoint in
# cache and the index as it was.
. "$top_srcdir/t/test-lib.sh"

export SCR_FLUSH_ASYNC=1 SCR_DEBUG=1
fresh() { rm -rf "$PREFIX" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$PREFIX"; }
# this test's daemons (their transfer file lies in its scratch directory)
daemons() { pgrep -f "scr_transfer --parent [0-9]+ $TRASH/" | wc -l; }

test_expect_success 'every second checkpoint is flushed in the background, with the bytes written' '
  fresh && SCR_FLUSH=2 scr_app 2 --steps 5 --bytes 100000 >out 2>err &&
  expect_grep "flushing dataset 2 to .* in the background" err &&
  expect_grep "flushing dataset 4 to .* in the background" err &&
  for s in 2 4 5; do check_pfs_file $s 0 100000 && check_pfs_file $s 1 100000 || exit 1; done &&
  test ! -e "$PREFIX/ckpt.3" &&
  scr_index -p "$PREFIX" >list && expect_grep "^ *5  ckpt.5 .* \*" list && expect_grep "^ *2  ckpt.2 " list
'

test_expect_success 'the daemon stops with the job' '
  for i in $(seq 20); do test "$(daemons)" = 0 && break; sleep 0.1; done && test "$(daemons)" = 0
'

test_expect_success 'the program goes on while its checkpoint is copied (SCR_FLUSH_ASYNC_BW)' '
  fresh && SCR_FLUSH=2 SCR_FLUSH_ASYNC_BW=2MB scr_app 2 --steps 3 --bytes 2000000 >out 2>err &&
  line_flushing=$(grep -n "flushing dataset 2 " err | cut -d: -f1) &&
  line_next=$(grep -n "completed dataset 3 " err | cut -d: -f1) &&
  line_flushed=$(grep -n "flushed dataset 2 " err | cut -d: -f1) &&
  test -n "$line_flushing" && test -n "$line_next" && test -n "$line_flushed" &&
  test "$line_flushing" -lt "$line_next" && test "$line_next" -lt "$line_flushed" &&
  check_pfs_file 2 0 2000000 && check_pfs_file 2 1 2000000
'

test_expect_success 'SCR_FLUSH_ASYNC_BW bounds the copy: 4 MB at 2 MB/s take over 1.5 s' '
  seconds=$(sed -n "s/.*flushed dataset 2 (ckpt.2) to .* in \([0-9.]*\) s$/\1/p" err) &&
  test -n "$seconds" && awk -v s="$seconds" "BEGIN { exit !(s >= 1.5) }"
'

test_expect_success 'a copy that fails: an error naming the file, the checkpoint stays in cache, the next one is flushed' '
  fresh && : >"$PREFIX/ckpt.2" &&
  SCR_FLUSH=2 scr_app 2 --steps 4 --bytes 8192 >out 2>err &&
  expect_grep "asynchronous flush of dataset 2: .*rank_[01].dat: copy to .*ckpt.2/rank_[01].dat failed" err &&
  expect_grep "dataset 2 (ckpt.2) was not flushed" err &&
  scr_index -p "$PREFIX" >list && ! grep -q "ckpt.2 " list &&
  check_pfs_file 4 0 8192 && check_pfs_file 4 1 8192
'

test_expect_success 'killed during a background flush: not indexed, no daemon left, the restart comes from cache' '
  fresh && SCR_FLUSH=2 SCR_FLUSH_ASYNC_BW=1MB scr_app 2 --steps 4 --bytes 3000000 --crash-after 2 >out 2>err;
  expect_grep "flushing dataset 2 " err && ! grep -q "flushed dataset 2 " err &&
  { scr_index -p "$PREFIX" >list 2>&1; ! grep "ckpt.2 " list | grep -qv " CACHED "; } &&
  for i in $(seq 50); do test "$(daemons)" = 0 && break; sleep 0.1; done && test "$(daemons)" = 0 &&
  SCR_FLUSH=2 scr_app 2 --steps 4 --bytes 3000000 >out 2>err &&
  expect_grep "^restart: ckpt.2$" out && expect_grep "^done: step 4$" out &&
  check_pfs_file 4 0 3000000 && check_pfs_file 4 1 3000000
'

test_expect_success 'a halt flushes the last checkpoint before the job stops, after the one in flight' '
  fresh && scr_halt -c 3 "$PREFIX" >/dev/null &&
  SCR_FLUSH=2 SCR_FLUSH_ASYNC_BW=20MB scr_app 2 --steps 8 --bytes 2000000 --until-exit >out 2>err &&
  expect_grep "^halted after step 3$" out &&
  check_pfs_file 2 0 2000000 && check_pfs_file 3 1 2000000 &&
  scr_index -p "$PREFIX" >list && expect_grep "^ *3  ckpt.3 .* \*" list
'

test_expect_success 'a daemon killed during a copy is started again, and the flush completes' '
  fresh && { (sleep 1.5; pkill -9 -f "scr_transfer --parent [0-9]+ $TRASH/") & } &&
  SCR_FLUSH=1 SCR_FLUSH_ASYNC_BW=1MB scr_app 2 --steps 1 --bytes 3000000 >out 2>err;
  test $? = 0 && wait && expect_grep "exited: starting it again" err &&
  check_pfs_file 1 0 3000000 && check_pfs_file 1 1 3000000 && test -z "$(find "$PREFIX" -name "*.tmp.*")"
'

test_expect_success 'names a flushed checkpoint holds are flushed synchronously, never replaced in the background' '
  fresh && SCR_FLUSH=1 scr_app 2 --steps 2 --bytes 8192 --path "same/rank_{rank}.dat" >out 2>err &&
  expect_grep "flushing dataset 1 to .* in the background" err &&
  ! grep -q "flushing dataset 2 to .* in the background" err && expect_grep "flushed dataset 2 " err
'

test_expect_success 'SCR_FLUSH_ASYNC_PERCENT above 100 is a configuration error naming its origin' '
  fresh && SCR_FLUSH_ASYNC_PERCENT=150 scr_app 2 --steps 1 >out 2>err; test $? != 0 &&
  expect_grep "SCR_FLUSH_ASYNC_PERCENT=150 (environment)" err
'

test_done
