#!/bin/sh
# SCR_Config before SCR_Init: ranks under environment and user file (over the system file:
# t/unit/param.t), answers queries, a bad line fails SCR_Init; SCR_Get_version.
. "$top_srcdir/t/test-lib.sh"

test_expect_success 'SCR_Config("SCR_FLUSH=1") flushes every checkpoint (default: every 10th)' "
  scr_app 2 --steps 2 --bytes 64 --config SCR_FLUSH=1 >out 2>err &&
  check_pfs_file 1 0 64 && check_pfs_file 1 1 64
"

test_expect_success 'SCR_Config("SCR_FLUSH") returns the value set' "
  scr_app 1 --steps 0 --config SCR_FLUSH=3 --config SCR_FLUSH >out 2>err &&
  expect_grep '^config SCR_FLUSH: 3$' out
"

test_expect_success 'the environment beats SCR_Config' "
  rm -rf '$PREFIX'/ckpt.* && wipe_cache &&
  SCR_FLUSH=0 scr_app 2 --steps 2 --bytes 64 --config SCR_FLUSH=1 --config SCR_FLUSH >out 2>err &&
  expect_grep '^config SCR_FLUSH: 0$' out &&
  test ! -e '$PREFIX/ckpt.1' && test ! -e '$PREFIX/ckpt.2'
"

test_expect_success 'the user configuration file beats SCR_Config' "
  rm -rf '$PREFIX'/ckpt.* && wipe_cache &&
  echo SCR_FLUSH=0 >'$PREFIX/.scrconf' &&
  scr_app 2 --steps 2 --bytes 64 --config SCR_FLUSH=1 >out 2>err &&
  rm '$PREFIX/.scrconf' &&
  test ! -e '$PREFIX/ckpt.1' && test ! -e '$PREFIX/ckpt.2'
"

test_expect_success 'a bad value in SCR_Config fails SCR_Init with one message' "
  rm -rf '$PREFIX' && mkdir '$PREFIX' && wipe_cache &&
  ! scr_app 2 --steps 1 --config SCR_FLUSH=often >out 2>err &&
  expect_grep 'SCR_Config: key SCR_FLUSH' err && test \$(grep -c 'SCR_FLUSH' err) = 1 &&
  test ! -e '$SCR_CACHE_BASE' && test ! -e '$PREFIX/.scr' && ! grep -q checkpoint: out
"

test_expect_success 'an unknown key in SCR_Config fails SCR_Init with a suggestion' "
  ! scr_app 2 --steps 1 --config SCR_CACHE_SIZ=2 >out 2>err &&
  expect_grep 'SCR_CACHE_SIZ.*did you mean SCR_CACHE_SIZE' err &&
  test \$(grep -c 'SCR_CACHE_SIZ' err) = 1
"

test_expect_success 'a line that is neither KEY=VALUE nor a query fails SCR_Init' "
  ! scr_app 2 --steps 1 --config 'SCR_FLUSH 1' >out 2>err &&
  expect_grep 'SCR_Config(\"SCR_FLUSH 1\")' err && ! grep -q checkpoint: out
"

test_expect_success 'SCR_Get_version returns the package version' "
  version=\$(sed -n 's/^#define PACKAGE_VERSION \"\\(.*\\)\"/\\1/p' '$top_builddir/config.h') &&
  test -n \"\$version\" &&
  scr_app 1 --steps 0 --version >out 2>err &&
  expect_grep \"^version: \$version\\\$\" out
"

test_expect_success 'SCR_VERSION in scr.h names the same version' "
  version=\$(sed -n 's/^#define PACKAGE_VERSION \"\\(.*\\)\"/\\1/p' '$top_builddir/config.h') &&
  grep -q \"^#define SCR_VERSION \\\"v\$version\\\"\" '$top_srcdir/include/scr.h'
"

test_expect_success 'the default XOR on one node: rank 0 says once, without SCR_DEBUG, that checkpoints are not protected' "
  rm -rf '$PREFIX'/ckpt.* && wipe_cache &&
  scr_app 2 --steps 1 --bytes 64 >out 2>err &&
  test \"\$(grep -c 'checkpoints are not protected against the loss of a node: the default XOR' err)\" = 1
"

test_expect_success 'SCR_COPY_TYPE=SINGLE chosen: nothing said' "
  rm -rf '$PREFIX'/ckpt.* && wipe_cache &&
  SCR_COPY_TYPE=SINGLE scr_app 2 --steps 1 --bytes 64 >out 2>err &&
  ! grep -q 'not protected' err
"

test_done
