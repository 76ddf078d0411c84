#!/bin/sh
# 4250-preload-virtual-dirs.sh - rule directories that exist only in the view
# (made by mkdir, or left empty when the cache dropped their files) behave as
# the same directories on a file system: listed, globbed and walked as
# natively, and removable by the nftw(FTW_DEPTH) idiom.
. "$top_srcdir/t/test-lib.sh"

preload_prelude "virtual directories under the preload"
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

# three checkpoints a second apart, all kept in the cache
mtime_rule='PRELOAD=ckpt.{step}/rank_{rank}.dat'
mtime_write=$(for s in 1 2 3; do printf 'mkdir:ckpt.%s write:ckpt.%s/rank_0.dat sleep:1 ' $s $s; done)
mtime_look='mtime:ckpt.1 mtime:ckpt.2 mtime:ckpt.3 mtime:ckpt.1/rank_0.dat'
# mtime OUT PATH: the time OUT reports for PATH
mtime() { sed -n "s|^mtime $2: \([0-9]*\) ok\$|\1|p" "$TRASH/$1"; }

test_expect_success 'three checkpoint directories written a second apart, natively and under the preload' "
  ops nat mtime.nat nat.mtime \"\$mtime_rule\" $mtime_write $mtime_look &&
  SCR_CACHE_SIZE=3 ops pre mtime.pre mtime \"\$mtime_rule\" $mtime_write $mtime_look &&
  no_files_below $TRASH/mtime.pre/ckpt.1 && test -n \"\$(mtime mtime ckpt.1/rank_0.dat)\"
"

# natively the time of the file's creation, at most a second before its last write
test_expect_success 'a virtual directory has the time its checkpoint was written, not a later one, as natively' "
  for out in nat.mtime mtime; do
    file=\$(mtime \$out ckpt.1/rank_0.dat) && dir=\$(mtime \$out ckpt.1) &&
      test \$dir -le \$file && test \$dir -ge \$((file - 1)) || { echo \"\$out: \$dir, file \$file\"; exit 1; }
  done
"

test_expect_success 'virtual directories are ordered as their checkpoints were written, as natively' "
  for out in nat.mtime mtime; do
    test \$(mtime \$out ckpt.1) -lt \$(mtime \$out ckpt.2) && test \$(mtime \$out ckpt.2) -lt \$(mtime \$out ckpt.3) ||
      exit 1
  done
"

test_expect_success 'after a restart they have the same times, in the same order' "
  (cd $TRASH/mtime.pre && SCR_CACHE_SIZE=3 mpirun 1 env LD_PRELOAD=\"$preload\" \"$fileops\" $mtime_look) \
    >$TRASH/mtime.again 2>$TRASH/mtime.again.err &&
  expect_grep \"sees checkpoint 'ckpt.3'\" mtime.again.err &&
  for d in ckpt.1 ckpt.2 ckpt.3; do test \"\$(mtime mtime \$d)\" = \"\$(mtime mtime.again \$d)\" || exit 1; done &&
  test \$(mtime mtime.again ckpt.1) -lt \$(mtime mtime.again ckpt.2) &&
  test \$(mtime mtime.again ckpt.2) -lt \$(mtime mtime.again ckpt.3)
"

# special files in a restored checkpoint's directory that the file system
# lost (removed between the runs): made there as natively, where it exists
special_rule='PRELOAD=ckpt.{step}/rank_{rank}.dat'
special_ops='mkfifo:ckpt.1/fifo kind:ckpt.1/fifo mknod:ckpt.1/node kind:ckpt.1/node symlink:rank_0.dat=ckpt.1/lnk
  kind:ckpt.1/lnk read:ckpt.1/lnk mkfifo:ckpt.1/rank_0.dat ls:ckpt.1'
# special_part OUT: OUT from its first special file on
special_part() { sed -n '/^mkfifo ckpt.1\/fifo:/,$p' "$TRASH/$1"; }

test_expect_success 'in a restored checkpoint directory the file system lost: mkfifo, mknod, symlink as natively' "
  ops nat special.nat nat.special \"\$special_rule\" mkdir:ckpt.1 write:ckpt.1/rank_0.dat \$special_ops &&
  ops pre special.pre special.first \"\$special_rule\" mkdir:ckpt.1 write:ckpt.1/rank_0.dat &&
  rm -rf $TRASH/special.pre/ckpt.1 &&
  (cd $TRASH/special.pre && mpirun 1 env LD_PRELOAD=\"$preload\" \"$fileops\" \$special_ops) \
    >$TRASH/special 2>$TRASH/special.err &&
  expect_grep \"sees checkpoint 'ckpt.1'\" special.err &&
  special_part nat.special >special.expect && special_part special >special.got && test_cmp special.expect special.got
"

test_done
