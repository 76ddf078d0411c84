#!/bin/sh
# A bad configuration stops the job at SCR_Init with one line naming file, line
# and key, a non-zero exit, and nothing written.
. "$top_srcdir/t/test-lib.sh"

test_expect_success 'an unknown key in .scrconf is named with file and line' "
  printf 'SCR_FLUSH=1\nSCR_CACHE_SIZ=2\n' >'$PREFIX/.scrconf' &&
  ! scr_app 2 --steps 1 >out 2>err &&
  expect_grep '$PREFIX/.scrconf:2: key SCR_CACHE_SIZ' err &&
  expect_grep 'did you mean SCR_CACHE_SIZE' err &&
  test \$(grep -c 'SCR_CACHE_SIZ' err) = 1
"

test_expect_success 'nothing was touched by the failed start' "
  test ! -e '$SCR_CACHE_BASE' && test ! -e '$SCR_CNTL_BASE' && test ! -e '$PREFIX/.scr' &&
  test ! -e '$PREFIX/ckpt.1'
"

test_expect_success 'a bad value is reported with its line' "
  printf '# comment\n\nSCR_FLUSH=often\n' >'$PREFIX/.scrconf' &&
  ! scr_app 1 --steps 1 >out 2>err &&
  expect_grep '.scrconf:3: key SCR_FLUSH' err
"

test_expect_success 'a bad environment value is reported' "
  rm -f '$PREFIX/.scrconf' &&
  ! SCR_CACHE_SIZE=lots scr_app 1 --steps 1 >out 2>err &&
  expect_grep 'SCR_CACHE_SIZE' err
"

test_expect_success 'SCR_CONF_FILE names the user file' "
  printf 'SCR_CACHE_SIZE=3\nSCR_FLUSH=1\n' >'$TRASH/my.conf' &&
  SCR_CONF_FILE='$TRASH/my.conf' scr_app 1 --steps 1 --bytes 64 >out 2>err &&
  check_pfs_file 1 0 64
"

test_done
