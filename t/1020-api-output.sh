#!/bin/sh
# Output datasets always reach the prefix directory, whatever SCR_FLUSH says,
# and keep their paths relative to the prefix.
. "$top_srcdir/t/test-lib.sh"

test_expect_success 'output datasets are flushed with SCR_FLUSH=0' "
  SCR_FLUSH=0 scr_app 2 --steps 4 --output-every 2 --bytes 8192 >out 2>err &&
  expect_grep 'output: out.2' out && expect_grep 'output: out.4' out &&
  for s in 2 4; do for r in 0 1; do
    '$APP' --check '$PREFIX/out.'\$s/rank_\$r.dat \$s \$r 8192 || exit 1
  done; done
"

test_expect_success 'checkpoints were not flushed (SCR_FLUSH=0), outputs are indexed' "
  test ! -e '$PREFIX/ckpt.4' &&
  scr_index --prefix '$PREFIX' --list >list && expect_grep 'out.4' list
"

test_expect_success 'SCR_Finalize flushes the newest checkpoint when flushing is on' "
  rm -rf '$PREFIX'/* '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' &&
  SCR_FLUSH=10 scr_app 2 --steps 3 --bytes 8192 >out 2>err &&
  check_pfs_file 3 0 8192 && check_pfs_file 3 1 8192 && test ! -e '$PREFIX/ckpt.2'
"

test_expect_success 'flush.scr lists what the cache holds: CACHE until flushed, gone once evicted' "
  rm -rf '$PREFIX'/* '$PREFIX/.scr' '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' &&
  SCR_FLUSH=0 scr_app 2 --steps 3 --bytes 8192 >out 2>err &&
  scr_print '$PREFIX/.scr/flush.scr' >flush.txt &&
  test \$(grep -c 'LOCATION = CACHE' flush.txt) = 1 && expect_grep 'NAME = ckpt.3' flush.txt &&
  ! grep -q 'ckpt\.[12]' flush.txt
"

test_expect_success 'a run that finds the cache empty forgets what flush.scr listed' "
  rm -rf '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' &&
  SCR_FLUSH=0 SCR_FETCH=0 scr_app 2 --steps 0 >out 2>err && test ! -e '$PREFIX/.scr/flush.scr'
"

test_expect_success 'a flush begun and killed is done again, and the temporary copies it left are removed' "
  rm -rf '$PREFIX'/* '$PREFIX/.scr' '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' &&
  SCR_FLUSH=0 scr_app 2 --steps 3 --bytes 8192 >out 2>err &&
  '$top_builddir/t/helpers/kvtree-write' '$PREFIX/.scr/flush.scr' DSET.3.NAME=ckpt.3 DSET.3.LOCATION=FLUSHING &&
  mkdir -p '$PREFIX/ckpt.3' && echo partial >'$PREFIX/ckpt.3/rank_1.dat.tmp.4242' &&
  echo mine >'$PREFIX/ckpt.3/rank_1.dat.tmp.mine' &&
  (cd '$PREFIX' && SCR_PREFIX='$PREFIX' mpirun 2 '$top_builddir/scr_scavenge') >out 2>&1 &&
  expect_grep 'dataset 3 (ckpt.3) copied' out && check_pfs_file 3 1 8192 &&
  test ! -e '$PREFIX/ckpt.3/rank_1.dat.tmp.4242' && test -e '$PREFIX/ckpt.3/rank_1.dat.tmp.mine'
"

test_done
