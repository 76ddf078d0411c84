#!/bin/sh
# A full cache: with node-local storage too small for the next checkpoint (a 4 MiB
# tmpfs), it goes to the prefix directory with one warning; the program never sees ENOSPC.
. "$top_srcdir/t/test-lib.sh"

if [ "$(id -u)" != 0 ]; then
  test_skip 'a cache too small for the next checkpoint' 'needs root to mount a tmpfs'
  test_done; exit 0
fi
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
ex="$top_builddir/examples/preload"
export SCR_CACHE_BASE="$TRASH/cache" SCR_COPY_TYPE=SINGLE SCR_FLUSH=0
# the cache device: 4 MiB, room for one checkpoint of 2 ranks x 1.2 MB and not two
mkdir -p "$SCR_CACHE_BASE" && mount -t tmpfs -o size=4m tmpfs "$SCR_CACHE_BASE" ||
  { echo "Bail out! cannot mount a tmpfs at $SCR_CACHE_BASE"; exit 1; }
test_cleanup_hook="umount '$SCR_CACHE_BASE' 2>/dev/null || umount -l '$SCR_CACHE_BASE'; ${test_cleanup_hook:-}"
# empty the cache (not the mount point) and the control directory
fresh_cache() { rm -rf "$SCR_CACHE_BASE"/* "$SCR_CNTL_BASE"; }
warnings() { grep -c 'cannot hold the next dataset' "$1"; }

# ---- an unmodified program under the preload
args="--steps 8 --every 2 --bytes 1200000"
result_of() { sed -n 's/^result: \([0-9a-f]\{16\}\)$/\1/p' "$TRASH/$1"; }
run_posix() {
  dir=$1 out=$2
  shift 2
  mkdir -p "$TRASH/$dir" &&
    (cd "$TRASH/$dir" && mpirun 2 env ${PRE:+LD_PRELOAD="$preload"} "$ex/posix_fpp" $args "$@") \
      >"$TRASH/$out" 2>"$TRASH/$out.err"
}
rule='PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT'

test_expect_success 'the native reference run' '
  PRE= run_posix native native.out && test -n "$(result_of native.out)"
'

test_expect_success 'preload: checkpoints alternate between the full cache and the prefix, with the native result and one warning' "
  fresh_cache && mkdir -p $TRASH/pre && echo '$rule' >$TRASH/pre/.scrconf &&
  PRE=1 run_posix pre pre.out &&
  test \"\$(result_of pre.out)\" = \"\$(result_of native.out)\" &&
  test \$(warnings pre.out.err) = 1 && ! grep -q 'No space left' pre.out.err &&
  for s in 4 8; do cmp $TRASH/pre/data/step\${s}_rank1.chk $TRASH/native/data/step\${s}_rank1.chk || exit 1; done &&
  ! test -e $TRASH/pre/data/step2_rank0.chk && ! test -e $TRASH/pre/data/step6_rank0.chk
"

test_expect_success 'preload: the older checkpoint stays intact in cache while the newer goes to the prefix' "
  fresh_cache && rm -rf $TRASH/keep && mkdir -p $TRASH/keep && echo '$rule' >$TRASH/keep/.scrconf &&
  ! SCR_CACHE_SIZE=2 PRE=1 run_posix keep die.out --die-at 5 &&
  expect_grep '^checkpoint 4 written' die.out && test \$(warnings die.out.err) = 1 &&
  cached=\$(find $SCR_CACHE_BASE -name step2_rank1.chk) && test -n \"\$cached\" &&
  cmp \"\$cached\" $TRASH/native/data/step2_rank1.chk &&
  cmp $TRASH/keep/data/step4_rank1.chk $TRASH/native/data/step4_rank1.chk &&
  SCR_CACHE_SIZE=2 PRE=1 run_posix keep resume.out &&
  expect_grep '^resumed from step 4\$' resume.out &&
  test \"\$(result_of resume.out)\" = \"\$(result_of native.out)\"
"

# ---- a program of the SCR API
test_expect_success 'API: the second checkpoint goes to the prefix, the run completes, one warning' "
  fresh_cache &&
  scr_app 2 --steps 4 --bytes 1200000 >out 2>err &&
  expect_grep 'checkpoint: ckpt.4' out && test \$(warnings err) = 1 &&
  check_pfs_file 2 0 1200000 && check_pfs_file 2 1 1200000 &&
  check_pfs_file 4 1 1200000 && ! test -e '$PREFIX/ckpt.1' && ! test -e '$PREFIX/ckpt.3'
"

test_expect_success 'API: a restart takes the newest, from the cache' "
  scr_app 2 --steps 5 --bytes 1200000 >out 2>err &&
  expect_grep 'restart: ckpt.4' out && expect_grep 'checkpoint: ckpt.5' out
"

test_expect_success 'API: with SCR_CACHE_SIZE=2 the older checkpoint stays intact in cache' "
  fresh_cache && rm -rf '$PREFIX'/ckpt.* '$PREFIX/.scr' &&
  SCR_CACHE_SIZE=2 scr_app 2 --steps 2 --bytes 1200000 >out 2>err &&
  test \$(warnings err) = 1 && check_pfs_file 2 0 1200000 &&
  cached=\$(find $SCR_CACHE_BASE -path '*ckpt.1/rank_0.dat') && test -n \"\$cached\" &&
  '$APP' --check \"\$cached\" 1 0 1200000
"

test_done
