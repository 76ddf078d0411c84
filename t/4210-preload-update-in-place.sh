#!/bin/sh
# 4210-preload-update-in-place.sh - a file of a completed checkpoint changed in
# place through the preload (open O_RDWR without O_CREAT, truncate), as an HDF5
# file reopened read-write is: the checkpoint stays restorable with the new
# bytes, and after a node loss its redundancy, encoded again, rebuilds them.
# 4 fake nodes x 2 ranks; mpi-fileops does the I/O.
. "$top_srcdir/t/test-lib.sh"

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS

fileops="$top_builddir/t/helpers/mpi-fileops"
nodes=node0,node1,node2,node3
: "${SCR_TEST_TIMEOUT:=60}"

if ! test -f "$preload_lib"; then
  test_skip "files changed in place on the test cluster" "no $preload_lib"
  test_done; exit 0
fi

cluster_up 4 43
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_JOB_ID=t4210 SCR_SET_SIZE=4 SCR_FLUSH=0

# fresh_start: empty nodes and prefix directory, one rule
fresh_start() {
  cluster_renew node0 node1 node2 node3 &&
  rm -rf "$PREFIX" && mkdir -p "$PREFIX" && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat' >"$PREFIX/.scrconf"
}

# ops OUT OP...: mpi-fileops under the preload on the 4 nodes x 2 ranks;
# rank 0's lines in $TRASH/OUT, stderr in OUT.err
# (OPS_DEBUG=1: with SCR_DEBUG=1, for a failing test)
ops() {
  out=$1
  shift
  (cd "$PREFIX" && SCR_PREFIX="$PREFIX" scr_cluster run --nodes $nodes --ppn 2 --timeout "$SCR_TEST_TIMEOUT" -- \
    env ${OPS_DEBUG:+SCR_DEBUG=1} LD_PRELOAD="$preload" "$fileops" "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
}

# lose NODE: its processes killed, its node-local storage wiped
lose() { cluster_renew "$1"; }

for scheme in XOR PARTNER; do
  export SCR_COPY_TYPE=$scheme

  test_expect_success "$scheme: every rank changes its file of a completed checkpoint in place" "
    fresh_start &&
    ops $scheme.write mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat inplace:ckpt.1/rank_%d.dat read:ckpt.1/rank_%d.dat &&
    printf '%s\\n' 'mkdir@0 ckpt.1: 0 ok' 'write ckpt.1/rank_0.dat: 0 ok' 'inplace ckpt.1/rank_0.dat: 0 ok' \
      'read ckpt.1/rank_0.dat: 7 ok' >$scheme.write.expect && test_cmp $scheme.write.expect $scheme.write &&
    expect_grep 'dataset 1 was changed in place: its redundancy was encoded again' $scheme.write.err &&
    ! test -e $PREFIX/ckpt.1/rank_2.dat
  "

  test_expect_success "$scheme: node1 lost; the rebuilt files hold the changed bytes" "
    lose node1 &&
    ops $scheme.lost copy@2:ckpt.1/rank_2.dat=got.2 copy@3:ckpt.1/rank_3.dat=got.3 copy@0:ckpt.1/rank_0.dat=got.0 &&
    expect_grep 'rebuilt the lost parts from $scheme' $scheme.lost.err &&
    test \"\$(cat $PREFIX/got.2)\" = 'Xank 2' && test \"\$(cat $PREFIX/got.3)\" = 'Xank 3' &&
    test \"\$(cat $PREFIX/got.0)\" = 'Xank 0'
  "
done

for scheme in XOR RS PARTNER; do
  export SCR_COPY_TYPE=$scheme
  case $scheme in
    PARTNER) renamed='was renamed: its redundancy was encoded again' ;;
    *) renamed='was renamed: its redundancy took the new names' ;;
  esac

  test_expect_success "$scheme: a temporary directory renamed by rank 0 after a checkpoint: the rebuilt files are at the new names" "
    fresh_start && printf '%s\\n' 'PRELOAD=ckpt.tmp/rank_{rank}.dat' 'PRELOAD=ckpt.{step}/rank_{rank}.dat' \
      >$PREFIX/.scrconf &&
    ops dirmv.out mkdir@0:ckpt.tmp write:ckpt.tmp/rank_%d.dat rename@0:ckpt.tmp=ckpt.5 read:ckpt.5/rank_%d.dat &&
    expect_grep '^read ckpt.5/rank_0.dat: 7 ok\$' dirmv.out && expect_grep '$renamed' dirmv.out.err &&
    lose node1 && ops dirmv.lost copy@2:ckpt.5/rank_2.dat=got.2 copy@3:ckpt.5/rank_3.dat=got.3 &&
    expect_grep 'rebuilt the lost parts' dirmv.lost.err &&
    test \"\$(cat $PREFIX/got.2)\" = 'rank 2' && test \"\$(cat $PREFIX/got.3)\" = 'rank 3'
  "
done
export SCR_COPY_TYPE=XOR

test_expect_success 'files renamed out of the order their parity was computed in: a lost node still rebuilds each one' "
  fresh_start && echo 'PRELOAD=ckpt.{step}/* FILES=2' >$PREFIX/.scrconf &&
  ops order.out mkdir@0:ckpt.1 write:ckpt.1/b_%d.dat copy:.scrconf=ckpt.1/c_%d.dat rename:ckpt.1/c_%d.dat=ckpt.1/a_%d.dat &&
  expect_grep 'was renamed: its redundancy took the new names' order.out.err &&
  lose node1 && ops order.lost copy@2:ckpt.1/a_2.dat=got.a copy@2:ckpt.1/b_2.dat=got.b &&
  expect_grep 'rebuilt the lost parts' order.lost.err &&
  test_cmp $PREFIX/.scrconf $PREFIX/got.a && test \"\$(cat $PREFIX/got.b)\" = 'rank 2'
"

test_expect_success 'a flushed temporary directory renamed: its copy on the prefix directory moves, no byte is copied again' "
  fresh_start && printf '%s\\n' 'PRELOAD=ckpt.tmp/rank_{rank}.dat' 'PRELOAD=ckpt.{step}/rank_{rank}.dat' \
    >$PREFIX/.scrconf &&
  SCR_FLUSH=1 ops dirflush.out mkdir@0:ckpt.tmp write:ckpt.tmp/rank_%d.dat rename@0:ckpt.tmp=ckpt.5 &&
  expect_grep 'its flushed copy was moved with it' dirflush.out.err &&
  ! grep -q 'flushed again' dirflush.out.err &&
  test \"\$(cat $PREFIX/ckpt.5/rank_3.dat)\" = 'rank 3' && ! test -e $PREFIX/ckpt.tmp &&
  scr_index --prefix $PREFIX --list >index.out && expect_grep 'ckpt.5' index.out && ! grep -q 'ckpt.tmp' index.out
"

test_expect_success 'all nodes lost: the moved checkpoint is fetched from the prefix directory under its new name' "
  cluster_renew node0 node1 node2 node3 &&
  ops dirflush.fetch read:ckpt.5/rank_%d.dat &&
  expect_grep '^read ckpt.5/rank_0.dat: 7 ok\$' dirflush.fetch && expect_grep 'fetched from' dirflush.fetch.err
"

test_expect_success 'a file of a flushed checkpoint renamed: the old name is gone, on the prefix directory too' "
  fresh_start && echo 'PRELOAD=ckpt.{step}/*' >$PREFIX/.scrconf &&
  SCR_FLUSH=1 ops filemv.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat rename:ckpt.1/rank_%d.dat=ckpt.1/final_%d.dat \
    stat:ckpt.1/rank_%d.dat stat:ckpt.1/final_%d.dat &&
  expect_grep '^stat ckpt.1/rank_0.dat: -1 No such file or directory\$' filemv.out &&
  expect_grep '^stat ckpt.1/final_0.dat: 7 ok\$' filemv.out &&
  ! test -e $PREFIX/ckpt.1/rank_1.dat && test \"\$(cat $PREFIX/ckpt.1/final_1.dat)\" = 'rank 1' &&
  expect_grep 'its flushed copy was moved with it' filemv.out.err
"

test_expect_success 'a file of an older flushed checkpoint renamed: its names there follow, the newest stays current' "
  fresh_start && echo 'PRELOAD=ckpt.{step}/*' >$PREFIX/.scrconf &&
  SCR_FLUSH=1 SCR_CACHE_SIZE=2 ops oldmv.out mkdir@0:ckpt.1 mkdir@0:ckpt.2 write:ckpt.1/rank_%d.dat write:ckpt.2/rank_%d.dat \
    rename:ckpt.1/rank_%d.dat=ckpt.1/final_%d.dat &&
  expect_grep 'dataset 1 was renamed: its redundancy took the new names and its flushed copy was moved with it' \
    oldmv.out.err &&
  ! test -e $PREFIX/ckpt.1/rank_1.dat && test \"\$(cat $PREFIX/ckpt.1/final_1.dat)\" = 'rank 1' &&
  scr_index --prefix $PREFIX --list >oldmv.index &&
  expect_grep 'ckpt.2 .*[*]' oldmv.index && ! grep -q 'ckpt.1 .*[*]' oldmv.index &&
  ! grep -q INCOMPLETE oldmv.index
"

test_expect_success 'all nodes lost: the older checkpoint, asked for, is fetched under its new names' "
  cluster_renew node0 node1 node2 node3 &&
  SCR_CURRENT=ckpt.1 ops oldmv.fetch read:ckpt.1/final_%d.dat &&
  expect_grep '^read ckpt.1/final_0.dat: 7 ok\$' oldmv.fetch && expect_grep 'fetched from' oldmv.fetch.err
"

test_expect_success 'a file of a flushed checkpoint the cache let go, renamed: moved where it is, no new checkpoint' "
  fresh_start && echo 'PRELOAD=ckpt.{step}/*' >$PREFIX/.scrconf &&
  SCR_FLUSH=1 SCR_CACHE_SIZE=1 ops gone.out mkdir@0:ckpt.1 mkdir@0:ckpt.2 write:ckpt.1/rank_%d.dat write:ckpt.2/rank_%d.dat \
    rename:ckpt.1/rank_%d.dat=ckpt.1/old_%d.dat stat:ckpt.1/rank_%d.dat &&
  expect_grep '^stat ckpt.1/rank_0.dat: -1 No such file or directory\$' gone.out &&
  expect_grep 'preload summary: 2 datasets' gone.out.err &&
  test \"\$(cat $PREFIX/ckpt.1/old_1.dat)\" = 'rank 1' &&
  scr_index --prefix $PREFIX --list >gone.index &&
  expect_grep 'ckpt.2 .*[*]' gone.index && expect_grep 'ckpt.1 .*INCOMPLETE' gone.index
"

test_expect_success 'the cache let go of it: a rename that fails (no such directory) leaves the index as it was' "
  fresh_start && echo 'PRELOAD=ckpt.{step}/*' >$PREFIX/.scrconf &&
  SCR_FLUSH=1 SCR_CACHE_SIZE=1 ops nodir.out mkdir@0:ckpt.1 mkdir@0:ckpt.2 write:ckpt.1/rank_%d.dat write:ckpt.2/rank_%d.dat \
    rename:ckpt.1/rank_%d.dat=ckpt.1/none/old_%d.dat &&
  expect_grep '^rename ckpt.1/rank_0.dat=ckpt.1/none/old_0.dat: -1 No such file or directory\$' nodir.out &&
  test \"\$(cat $PREFIX/ckpt.1/rank_1.dat)\" = 'rank 1' &&
  scr_index --prefix $PREFIX --list >nodir.index && ! grep -q INCOMPLETE nodir.index
"

test_expect_success 'one rank renames its file of a flushed checkpoint: the others keep theirs, nothing is copied or encoded again' "
  fresh_start && echo 'PRELOAD=ckpt.{step}/*' >$PREFIX/.scrconf &&
  SCR_FLUSH=1 ops one.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat rename@0:ckpt.1/rank_0.dat=ckpt.1/final_0.dat &&
  expect_grep 'dataset 1 was renamed: its redundancy took the new names and its flushed copy was moved with it' \
    one.out.err &&
  test \"\$(cat $PREFIX/ckpt.1/final_0.dat)\" = 'rank 0' && ! test -e $PREFIX/ckpt.1/rank_0.dat &&
  test \"\$(cat $PREFIX/ckpt.1/rank_1.dat)\" = 'rank 1'
"

test_expect_success 'flushed files renamed into a directory only the view has: their copies move there too' "
  fresh_start && printf '%s\\n' 'PRELOAD=ckpt.tmp/rank_{rank}.dat' 'PRELOAD=ckpt.{step}/rank_{rank}.dat' \
    >$PREFIX/.scrconf &&
  SCR_FLUSH=1 ops vdir.out mkdir@0:ckpt.tmp write:ckpt.tmp/rank_%d.dat mkdir@0:ckpt.5 \
    rename:ckpt.tmp/rank_%d.dat=ckpt.5/rank_%d.dat stat:ckpt.tmp/rank_%d.dat &&
  expect_grep '^stat ckpt.tmp/rank_0.dat: -1 No such file or directory\$' vdir.out &&
  expect_grep 'its flushed copy was moved with it' vdir.out.err &&
  test \"\$(cat $PREFIX/ckpt.5/rank_3.dat)\" = 'rank 3' && ! test -e $PREFIX/ckpt.tmp/rank_3.dat
"

test_expect_success 'an older flushed checkpoint changed, then renamed: the prefix directory gets the new bytes' "
  fresh_start && echo 'PRELOAD=ckpt.{step}/*' >$PREFIX/.scrconf &&
  SCR_FLUSH=1 SCR_CACHE_SIZE=2 ops chmv.out mkdir@0:ckpt.1 mkdir@0:ckpt.2 write:ckpt.1/rank_%d.dat write:ckpt.2/rank_%d.dat \
    inplace:ckpt.1/rank_%d.dat rename:ckpt.1/rank_%d.dat=ckpt.1/final_%d.dat &&
  test \"\$(cat $PREFIX/ckpt.1/final_1.dat)\" = 'Xank 1' &&
  scr_index --prefix $PREFIX --list >chmv.index && expect_grep 'ckpt.2 .*[*]' chmv.index &&
  cluster_renew node0 node1 node2 node3 &&
  SCR_CURRENT=ckpt.1 ops chmv.fetch copy@1:ckpt.1/final_1.dat=got.1 &&
  test \"\$(cat $PREFIX/got.1)\" = 'Xank 1'
"

test_expect_success 'a change not yet encoded (another rank holds a file open) is never rebuilt from the old redundancy' "
  fresh_start &&
  ! ops held.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat hold@4:ckpt.1/rank_4.dat inplace@2:ckpt.1/rank_2.dat \
    read@2:ckpt.1/rank_2.dat crashrw@0:ckpt.1/rank_0.dat &&
  lose node1 && ops held.lost copy@2:ckpt.1/rank_2.dat=got.2 &&
  expect_grep 'changed in place after its redundancy was encoded: it cannot be rebuilt' held.lost.err &&
  ! grep -q 'rank 2' $PREFIX/got.2 2>/dev/null
"

test_expect_success 'a file opened read-write and left as it was costs no new encoding' "
  fresh_start &&
  ops rw.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat rw:ckpt.1/rank_%d.dat &&
  ! grep -q 'changed in place' rw.out.err &&
  lose node2 && ops rw.lost copy@4:ckpt.1/rank_4.dat=got.4 &&
  expect_grep 'rebuilt the lost parts' rw.lost.err && test \"\$(cat $PREFIX/got.4)\" = 'rank 4'
"

test_expect_success 'truncate of a completed file: the next run sees it short, after a node loss too' "
  fresh_start &&
  ops trunc.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat truncate:ckpt.1/rank_%d.dat stat:ckpt.1/rank_%d.dat &&
  expect_grep '^stat ckpt.1/rank_0.dat: 3 ok\$' trunc.out &&
  lose node3 && ops trunc.lost stat@6:ckpt.1/rank_6.dat copy@6:ckpt.1/rank_6.dat=got.6 &&
  expect_grep '^stat@6 ckpt.1/rank_6.dat: 3 ok\$' trunc.lost && test \"\$(cat $PREFIX/got.6)\" = 'ran'
"

test_done
