#!/bin/sh
# Control and cache directories are created 0700; existing ones owned by another user
# or symbolic links are refused before anything is written; a missing USER is not fatal.
# Links and other users' files planted at names SCR writes are refused, never followed;
# SCR's files on the prefix directory get the program's modes.
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

# ---- names SCR writes, with something planted there (issue 18, item 4a)
if [ "$(id -u)" = 0 ]; then
  test_expect_success 'a symbolic link planted at <prefix>/.scr/index.scr is refused, never followed' "
    wipe_cache && rm -rf '$PREFIX/.scr' '$PREFIX'/ckpt.* && mkdir -p '$PREFIX/.scr' &&
    echo victim >'$TRASH/victim' && ln -s '$TRASH/victim' '$PREFIX/.scr/index.scr' &&
    SCR_FLUSH=1 scr_app 1 --steps 1 --bytes 64 >out 2>err;
    expect_grep \"refusing to \(read\|write\) $PREFIX/.scr/index.scr: a symbolic link\" err &&
    ! grep -q 'corrupt key-value tree file' err &&
    test \"\$(cat '$TRASH/victim')\" = victim && test -L '$PREFIX/.scr/index.scr' && rm '$PREFIX/.scr/index.scr'
  "

  test_expect_success 'another user s file at <prefix>/.scr/flush.scr is refused, and left as it is' "
    wipe_cache && rm -rf '$PREFIX/.scr' && mkdir -p '$PREFIX/.scr' &&
    echo theirs >'$PREFIX/.scr/flush.scr' && chown 65534 '$PREFIX/.scr/flush.scr' &&
    SCR_FLUSH=1 scr_app 1 --steps 1 --bytes 64 >out 2>err;
    expect_grep \"refusing to write $PREFIX/.scr/flush.scr: it is owned by\" err &&
    test \"\$(cat '$PREFIX/.scr/flush.scr')\" = theirs && rm '$PREFIX/.scr/flush.scr'
  "

  test_expect_success 'a <prefix>/.scr that is a symbolic link is refused' "
    wipe_cache && rm -rf '$PREFIX/.scr' '$TRASH/elsewhere' && mkdir '$TRASH/elsewhere' &&
    ln -s '$TRASH/elsewhere' '$PREFIX/.scr' &&
    ! scr_app 1 --steps 1 --bytes 64 >out 2>err &&
    expect_grep \"refusing directory $PREFIX/.scr: it is a symbolic link\" err &&
    test -z \"\$(ls -A '$TRASH/elsewhere')\" && rm '$PREFIX/.scr'
  "

  test_expect_success 'a symbolic link planted at a filemap in the control directory is refused, never followed' "
    wipe_cache && scr_app 1 --steps 1 --bytes 64 >out 2>err && cntl=\$(jobdir '$SCR_CNTL_BASE') &&
    rm -f \"\$cntl/filemap_0.scr\" && ln -s '$TRASH/victim' \"\$cntl/filemap_0.scr\" &&
    scr_app 1 --steps 1 --bytes 64 >out 2>err;
    expect_grep \"refusing to \(read\|write\) \$cntl/filemap_0.scr: a symbolic link\" err &&
    test \"\$(cat '$TRASH/victim')\" = victim && test -L \"\$cntl/filemap_0.scr\" && rm \"\$cntl/filemap_0.scr\"
  "

  test_expect_success 'a file another user planted at a name in the cache is refused, never written' "
    wipe_cache && scr_app 1 --steps 1 --bytes 64 >out 2>err && cache=\$(jobdir '$SCR_CACHE_BASE') &&
    next=\$(( \$(ls \"\$cache\" | sed -n 's/^scr.dataset.//p' | sort -n | tail -n 1) + 1 )) &&
    planted=\"\$cache/scr.dataset.\$next/ckpt.2/rank_0.dat\" &&
    mkdir -p \"\${planted%/*}\" && echo theirs >\"\$planted\" && chown 65534 \"\$planted\" &&
    scr_app 1 --steps 2 --bytes 64 >out 2>err;
    expect_grep \"refusing to write \$planted: it is owned by\" err &&
    test \"\$(cat \"\$planted\")\" = theirs
  "
else
  test_skip 'names SCR writes with something planted there' 'needs root to plant another user s files'
fi

# ---- modes (issue 18, item 4c): SCR's files on the prefix directory get the
# modes the program's own get from its umask
for u in 022 027 077; do
  test_expect_success "umask $u: SCR's files and directories in the prefix have the program's modes" "
    wipe_cache && rm -rf '$PREFIX/.scr' '$PREFIX'/ckpt.* &&
    (umask $u && SCR_FLUSH=1 scr_app 1 --steps 1 --bytes 64 >out 2>err) &&
    own=\$(mode '$PREFIX/ckpt.1/rank_0.dat') && owndir=\$(mode '$PREFIX/ckpt.1') &&
    test \$(mode '$PREFIX/.scr/index.scr') = \$own && test \$(mode '$PREFIX/.scr/flush.scr') = \$own &&
    test \$(mode '$PREFIX/.scr/scr.dataset.1/summary.scr') = \$own &&
    test \$(mode '$PREFIX/.scr') = \$owndir && test \$(mode '$PREFIX/.scr/scr.dataset.1') = \$owndir
  "
done

# ---- metadata naming paths outside their directory (issue 18, item 4b)
test_expect_success 'a filemap whose cached files are reached through a symbolic link is not used' "
  wipe_cache && rm -rf '$PREFIX/.scr' '$PREFIX'/ckpt.* '$TRASH/evil' &&
  SCR_FLUSH=0 scr_app 1 --steps 1 --bytes 64 >out 2>err && cache=\$(jobdir '$SCR_CACHE_BASE') &&
  dir=\$(ls -d \"\$cache\"/scr.dataset.*/ckpt.1) && mkdir '$TRASH/evil' && mv \"\$dir\" '$TRASH/evil/' &&
  ln -s '$TRASH/evil/ckpt.1' \"\$dir\" &&
  SCR_FLUSH=0 scr_app 1 --steps 1 --bytes 64 >out 2>err &&
  expect_grep 'filemap_0.scr names .* through a symbolic link: refusing to use dataset' err &&
  expect_grep 'restart: none' out && test -f '$TRASH/evil/ckpt.1/rank_0.dat'
"

test_done
