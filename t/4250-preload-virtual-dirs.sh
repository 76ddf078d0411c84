#!/bin/sh
# 4250-preload-virtual-dirs.sh - rule directories that exist only in the view
# (made by mkdir, or left empty when the cache dropped their files) behave as
# the same directories on a file system: listed, globbed and walked as
# natively, and removable by the nftw(FTW_DEPTH) idiom.
. "$top_srcdir/t/test-lib.sh"

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
preload="$top_builddir/.libs/libscr_preload.so"
fileops="$top_builddir/t/helpers/mpi-fileops"
export SCR_JOB_ID=t4250 SCR_FLUSH=0

# ops MODE DIR OUT RULE OP...: mpi-fileops on 1 rank in $TRASH/DIR (made
# afresh, with RULE in its .scrconf), under the preload (MODE pre) or not (nat)
ops() {
  mode=$1 dir=$2 out=$3 rule=$4
  shift 4
  rm -rf "$TRASH/$dir" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$TRASH/$dir" &&
    echo "$rule" >"$TRASH/$dir/.scrconf" || return 1
  if [ "$mode" = pre ]; then
    (cd "$TRASH/$dir" && mpirun 1 env LD_PRELOAD="$preload" "$fileops" "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
  else
    (cd "$TRASH/$dir" && mpirun 1 "$fileops" "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
  fi
}
# same OUT PATTERN: the lines of OUT that start with PATTERN (and the detail
# lines after them) are those of its native twin nat.OUT
same() {
  awk -v p="$2" 'index($0, p) == 1 { on = 1; print; next } /^  = / { if (on) print; next } { on = 0 }' \
    "$TRASH/nat.$1" >"$TRASH/$1.expect" &&
    awk -v p="$2" 'index($0, p) == 1 { on = 1; print; next } /^  = / { if (on) print; next } { on = 0 }' \
      "$TRASH/$1" >"$TRASH/$1.got" &&
    test -s "$TRASH/$1.expect" && test_cmp "$TRASH/$1.expect" "$TRASH/$1.got"
}

empty_rule='PRELOAD=ckpt.{step}/rank_{rank}.dat'
empty_ops='mkdir:ckpt.7 ls:ckpt.7 scanat:ckpt.7 globerr:ckpt.7/* walk:ckpt.7 rmwalk:ckpt.7 stat:ckpt.7 glob:ckpt.*'

test_expect_success 'an empty directory made by mkdir, natively and under the preload' "
  ops nat empty.nat nat.empty \"\$empty_rule\" $empty_ops && ops pre empty.pre empty \"\$empty_rule\" $empty_ops &&
  expect_grep '^mkdir ckpt.7: 0 ok\$' empty && ! test -e $TRASH/empty.pre/ckpt.7
"

test_expect_success 'opendir lists it as natively (nothing but . and ..)' "same empty 'ls ckpt.7:'"
test_expect_success 'scandirat lists it as natively' "same empty 'scanat ckpt.7:'"
test_expect_success 'glob with GLOB_ERR finds nothing in it and does not fail' "same empty 'globerr ckpt.7/*:'"
test_expect_success 'nftw meets it as natively' "same empty 'walk ckpt.7:'"
test_expect_success 'nftw(FTW_DEPTH) removes it, and then it is gone' "
  same empty 'rmwalk ckpt.7:' && same empty 'stat ckpt.7:' && same empty 'glob ckpt.*:'
"

# with SCR_CACHE_SIZE=1 the second checkpoint drops the first from the cache:
# its directories stay, empty, as they would after the files were deleted
evict_rule='PRELOAD=ckpt.{step}/rank_{rank}/part_*.bin FILES=3'
evict_ops=$(for s in 1 2; do
  printf 'mkdir:ckpt.%s mkdir:ckpt.%s/rank_0 ' $s $s && printf 'write:ckpt.%s/rank_0/part_%s.bin ' $s 0 $s 1 $s 2
done)

test_expect_success 'directories left empty by the cache: listed empty, as a file system shows them' "
  SCR_CACHE_SIZE=1 ops pre evict.pre evict \"\$evict_rule\" $evict_ops ls:ckpt.1/rank_0 walk:ckpt.1 &&
  printf '%s\\n' 'ls ckpt.1/rank_0: 0 ok' 'walk ckpt.1: 2 ok' '  = D 0 ckpt.1' '  = D 1 ckpt.1/rank_0' >evict.expect &&
  sed -n '/^ls ckpt.1\\/rank_0:/,\$p' evict >evict.got && test_cmp evict.expect evict.got
"

test_expect_success 'directories left empty by the cache: nftw(FTW_DEPTH) removes them as natively' "
  rmops='rmwalk:ckpt.1 stat:ckpt.1/rank_0 stat:ckpt.1 glob:ckpt.*' &&
  ops nat evict.nat nat.evictrm \"\$evict_rule\" $evict_ops \$rmops &&
  SCR_CACHE_SIZE=1 ops pre evict.pre evictrm \"\$evict_rule\" $evict_ops \$rmops &&
  same evictrm 'rmwalk ckpt.1:' && same evictrm 'stat ckpt.1' && same evictrm 'glob ckpt.*:' &&
  ! test -e $TRASH/evict.pre/ckpt.1
"

test_done
