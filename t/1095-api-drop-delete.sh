#!/bin/sh
# SCR_Drop forgets a dataset in the index and keeps its files; SCR_Delete removes it
# from cache, prefix files and directories, .scr/scr.dataset.<id> and the index.
. "$top_srcdir/t/test-lib.sh"

# listed NAME: in the index (a dataset only the cache holds is listed as CACHED)
listed() {
  scr_index --prefix "$PREFIX" --list | grep -v ' CACHED ' | awk '{print $2}' | grep -qx "$1"
}
cached() {
  ls -d "$SCR_CACHE_BASE"/*/*/scr.dataset.* 2>/dev/null | sed 's/.*scr.dataset.//' | sort -n | tr '\n' ' '
}

test_expect_success 'SCR_Drop removes a checkpoint from the index; its files stay' "
  rm -rf '$PREFIX' && mkdir '$PREFIX' && wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 3 --bytes 4096 >out 2>err &&
  listed ckpt.3 &&
  SCR_FLUSH=1 scr_app 2 --steps 3 --bytes 4096 --drop ckpt.3 >out 2>err &&
  expect_grep 'drop ckpt.3: ok' out && ! listed ckpt.3 && listed ckpt.2 &&
  check_pfs_file 3 0 4096 && check_pfs_file 3 1 4096
"

test_expect_success 'a new allocation then restarts from the newest indexed checkpoint' "
  wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 2 --bytes 4096 >out 2>err &&
  expect_grep 'restart: ckpt.2' out
"

test_expect_success 'SCR_Delete removes a checkpoint from cache, prefix, .scr and index' "
  rm -rf '$PREFIX' && mkdir '$PREFIX' && wipe_cache &&
  SCR_FLUSH=1 SCR_CACHE_SIZE=3 scr_app 2 --steps 3 --bytes 4096 >out 2>err &&
  test \"\$(cached)\" = '1 2 3 ' && test -d '$PREFIX/.scr/scr.dataset.2' &&
  SCR_FLUSH=1 SCR_CACHE_SIZE=3 scr_app 2 --steps 3 --bytes 4096 --delete ckpt.2 >out 2>err &&
  expect_grep 'delete ckpt.2: ok' out &&
  test \"\$(cached)\" = '1 3 ' &&
  test ! -e '$PREFIX/ckpt.2' && test ! -e '$PREFIX/.scr/scr.dataset.2' && ! listed ckpt.2 &&
  check_pfs_file 1 0 4096 && check_pfs_file 3 1 4096 && listed ckpt.3
"

test_expect_success 'SCR_Delete of the newest checkpoint: the next run restarts from the one before' "
  SCR_FLUSH=1 SCR_CACHE_SIZE=3 scr_app 2 --steps 0 --bytes 4096 --delete ckpt.3 >out 2>err &&
  test ! -e '$PREFIX/ckpt.3' && ! listed ckpt.3 && test \"\$(cached)\" = '1 ' &&
  SCR_FLUSH=1 SCR_CACHE_SIZE=3 scr_app 2 --steps 1 --bytes 4096 >out 2>err &&
  expect_grep 'restart: ckpt.1' out
"

test_expect_success 'SCR_Delete from a run with fewer ranks removes every rank'"'"'s files' "
  rm -rf '$PREFIX' && mkdir '$PREFIX' && wipe_cache &&
  SCR_FLUSH=1 scr_app 4 --steps 1 --bytes 64 >out 2>err && check_pfs_file 1 3 64 &&
  wipe_cache &&
  SCR_FETCH=0 scr_app 2 --steps 0 --delete ckpt.1 >out 2>err &&
  expect_grep 'delete ckpt.1: ok' out && test ! -e '$PREFIX/ckpt.1' && ! listed ckpt.1
"

test_done
