#!/bin/sh
# Control and cache directories are created 0700; existing ones owned by another user
# or symbolic links are refused before anything is written; a missing USER is not fatal.
. "$top_srcdir/t/test-lib.sh"

me=$(id -un)
# the per-job directory under a base: <base>/<user>/scr.<jobid>
jobdir() { ls -d "$1/$me"/scr.* 2>/dev/null | head -n 1; }
mode() { stat -c %a "$1"; }

test_expect_success 'control and cache directories are created 0700' "
  scr_app 2 --steps 1 --bytes 64 >out 2>err &&
  cntl=\$(jobdir '$SCR_CNTL_BASE') && cache=\$(jobdir '$SCR_CACHE_BASE') &&
  test -n \"\$cntl\" && test -n \"\$cache\" &&
  test \$(mode \"\$cntl\") = 700 && test \$(mode \"\$cache\") = 700 &&
  test \$(mode '$SCR_CNTL_BASE/$me') = 700 && test \$(mode '$SCR_CACHE_BASE/$me') = 700
"

test_expect_success 'they are 0700 whatever the umask' "
  wipe_cache &&
  (umask 0 && scr_app 1 --steps 1 --bytes 64 >out 2>err) &&
  test \$(mode \"\$(jobdir '$SCR_CNTL_BASE')\") = 700 &&
  test \$(mode \"\$(jobdir '$SCR_CACHE_BASE')\") = 700
"

if [ "$(id -u)" = 0 ]; then
  test_expect_success 'a control directory owned by another user is refused' "
    cntl=\$(jobdir '$SCR_CNTL_BASE') && chown 65534 \"\$cntl\" &&
    ! scr_app 1 --steps 1 --bytes 64 >out 2>err &&
    expect_grep \"refusing directory \$cntl: owned by\" err && ! grep -q checkpoint: out &&
    test \"\$(stat -c %u \"\$cntl\")\" = 65534 && chown 0 \"\$cntl\"
  "

  test_expect_success 'a cache directory owned by another user is refused' "
    cache=\$(jobdir '$SCR_CACHE_BASE') && chown 65534 \"\$cache\" &&
    ! scr_app 1 --steps 1 --bytes 64 >out 2>err &&
    expect_grep \"refusing directory \$cache: owned by\" err && ! grep -q checkpoint: out &&
    chown 0 \"\$cache\"
  "
else
  test_skip 'a control directory owned by another user is refused' 'needs root to chown'
  test_skip 'a cache directory owned by another user is refused' 'needs root to chown'
fi

test_expect_success 'a cache directory that is a symbolic link is refused' "
  cache=\$(jobdir '$SCR_CACHE_BASE') && mkdir '$TRASH/elsewhere' &&
  rm -rf \"\$cache\" && ln -s '$TRASH/elsewhere' \"\$cache\" &&
  ! scr_app 1 --steps 1 --bytes 64 >out 2>err &&
  expect_grep 'symbolic link' err && ! grep -q checkpoint: out &&
  test -z \"\$(ls -A '$TRASH/elsewhere')\" && rm \"\$cache\"
"

test_expect_success 'a control directory that is a symbolic link is refused' "
  cntl=\$(jobdir '$SCR_CNTL_BASE') &&
  rm -rf \"\$cntl\" && ln -s '$TRASH/elsewhere' \"\$cntl\" &&
  ! scr_app 1 --steps 1 --bytes 64 >out 2>err &&
  expect_grep 'symbolic link' err && ! grep -q checkpoint: out &&
  test -z \"\$(ls -A '$TRASH/elsewhere')\" && rm \"\$cntl\"
"

test_expect_success 'a user directory under the cache base that is a symbolic link is refused' "
  wipe_cache && mkdir -p '$TRASH/elsewhere' '$SCR_CACHE_BASE' &&
  ln -s '$TRASH/elsewhere' '$SCR_CACHE_BASE/$me' &&
  ! scr_app 1 --steps 1 --bytes 64 >out 2>err &&
  expect_grep 'symbolic link' err && test -z \"\$(ls '$TRASH/elsewhere')\" &&
  rm '$SCR_CACHE_BASE/$me'
"

test_expect_success 'with USER unset the user name comes from the password database' "
  wipe_cache &&
  (unset USER LOGNAME; scr_app 2 --steps 1 --bytes 64 >out 2>err) &&
  expect_grep 'checkpoint: ckpt.1' out &&
  test -n \"\$(jobdir '$SCR_CNTL_BASE')\" && test -n \"\$(jobdir '$SCR_CACHE_BASE')\"
"

test_done
