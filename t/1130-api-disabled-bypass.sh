#!/bin/sh
# SCR_ENABLE=0 passes every call through and keeps nothing; SCR_CACHE_BYPASS=1 writes
# datasets straight to the prefix directory and still indexes them.
. "$top_srcdir/t/test-lib.sh"

test_expect_success 'SCR_ENABLE=0: every checkpoint is written at its own path' "
  SCR_ENABLE=0 scr_app 2 --steps 3 --bytes 4096 --mkdir >out 2>err &&
  expect_grep 'checkpoint: ckpt.3' out &&
  for s in 1 2 3; do check_pfs_file \$s 0 4096 && check_pfs_file \$s 1 4096 || exit 1; done
"

test_expect_success 'SCR_ENABLE=0: nothing in cache, control directory or .scr' "
  test ! -e '$SCR_CACHE_BASE' && test ! -e '$SCR_CNTL_BASE' && test ! -e '$PREFIX/.scr'
"

test_expect_success 'SCR_ENABLE=0: no restart is offered, the program starts over' "
  SCR_ENABLE=0 scr_app 2 --steps 1 --bytes 4096 --mkdir >out 2>err &&
  expect_grep 'restart: none' out
"

test_expect_success 'SCR_ENABLE=0 set through SCR_Config works the same' "
  rm -rf '$PREFIX'/ckpt.* &&
  scr_app 2 --steps 1 --bytes 4096 --mkdir --config SCR_ENABLE=0 >out 2>err &&
  check_pfs_file 1 0 4096 && test ! -e '$SCR_CACHE_BASE' && test ! -e '$PREFIX/.scr'
"

test_expect_success 'SCR_ENABLE=0: SCR_Route_file makes the directories, as when enabled' "
  rm -rf '$PREFIX'/ckpt.* &&
  SCR_ENABLE=0 scr_app 2 --steps 2 --bytes 4096 >out 2>err &&
  check_pfs_file 1 0 4096 && check_pfs_file 2 1 4096 && test ! -e '$PREFIX/.scr'
"

cached_files() {
  find "$SCR_CACHE_BASE" -type f 2>/dev/null | wc -l
}

test_expect_success 'SCR_CACHE_BYPASS=1: files are written to the prefix directly, none in cache' "
  rm -rf '$PREFIX' && mkdir '$PREFIX' && wipe_cache &&
  SCR_CACHE_BYPASS=1 SCR_FLUSH=0 scr_app 2 --steps 2 --bytes 4096 >out 2>err &&
  expect_grep 'checkpoint: ckpt.2' out &&
  check_pfs_file 1 0 4096 && check_pfs_file 2 1 4096 && test \$(cached_files) = 0
"

test_expect_success 'SCR_CACHE_BYPASS=1: each dataset is indexed with its summary and rank2file' "
  for id in 1 2; do
    test -f '$PREFIX/.scr/scr.dataset.'\$id/summary.scr &&
    test -f '$PREFIX/.scr/scr.dataset.'\$id/rank2file.scr || exit 1
  done &&
  scr_index --prefix '$PREFIX' --list >list &&
  expect_grep 'ckpt.1' list && grep 'ckpt.2' list | grep -q '\\*'
"

test_expect_success 'SCR_CACHE_BYPASS=1: a new allocation restarts from the prefix' "
  wipe_cache &&
  SCR_CACHE_BYPASS=1 scr_app 2 --steps 3 --bytes 4096 >out 2>err &&
  expect_grep 'restart: ckpt.2' out && check_pfs_file 3 0 4096
"

test_done
