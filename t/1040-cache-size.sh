#!/bin/sh
# SCR_CACHE_SIZE bounds the datasets kept in cache, evicting the oldest.
. "$top_srcdir/t/test-lib.sh"

cached_datasets() {
  ls "$SCR_CACHE_BASE"/*/*/ | grep '^scr.dataset' | sort | tr '\n' ' '
}

test_expect_success 'SCR_CACHE_SIZE=2 keeps the two newest of five checkpoints' "
  SCR_CACHE_SIZE=2 SCR_FLUSH=0 scr_app 2 --steps 5 --bytes 4096 >out 2>err &&
  test \"\$(cached_datasets)\" = 'scr.dataset.4 scr.dataset.5 '
"

test_expect_success 'the evicted datasets are gone from the filemap too' "
  scr_print '$SCR_CNTL_BASE'/*/*/filemap_0.scr >map &&
  ! grep -q 'scr.dataset.3' map && expect_grep 'scr.dataset.5' map
"

test_expect_success 'the default cache size of 1 keeps only the newest' "
  rm -rf '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' &&
  SCR_FLUSH=0 scr_app 2 --steps 3 --bytes 4096 >out 2>err &&
  test \"\$(cached_datasets)\" = 'scr.dataset.3 '
"

test_done
