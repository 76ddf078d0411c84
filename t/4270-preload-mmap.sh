#!/bin/sh
# 4270-preload-mmap.sh - a checkpoint file written through a shared mapping
# whose descriptor was closed right after mmap (the common idiom): the close
# completes the dataset before the program has stored its bytes, so the file
# is then watched as one changed in place, and protected again (encoded,
# flushed) at the first meeting point after its munmap (a barrier on
# MPI_COMM_WORLD, a completion, MPI_Finalize, where a mapping still there
# counts as gone); the prefix copy, a restart from cache, a fetch and a
# rebuild after a node loss all see the stored bytes. munmap before close is
# not watched. 2 fake nodes x 1 rank; mpi-fileops does the I/O, with a barrier
# after each operation.
. "$top_srcdir/t/test-lib.sh"

nodes=node0,node1
: "${SCR_TEST_TIMEOUT:=60}"

preload_prelude "checkpoint files written through mmap on the test cluster"

cluster_up 2 47
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_JOB_ID=t4270 SCR_COPY_TYPE=XOR \
  SCR_SET_SIZE=2 SCR_FLUSH=0

# fresh_start: empty nodes and prefix directory, one rule
fresh_start() {
  cluster_renew node0 node1 &&
  rm -rf "$PREFIX" && mkdir -p "$PREFIX" && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat' >"$PREFIX/.scrconf"
}

# ops OUT OP...: mpi-fileops under the preload with SCR_DEBUG=1 on the 2 nodes;
# rank 0's lines in $TRASH/OUT, stderr in OUT.err
ops() {
  out=$1
  shift
  (cd "$PREFIX" && SCR_PREFIX="$PREFIX" scr_cluster run --nodes $nodes --ppn 1 --timeout "$SCR_TEST_TIMEOUT" -- \
    env SCR_DEBUG=1 LD_PRELOAD="$preload" "$fileops" "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
}

# holds FILE RANK: FILE holds what mpi-fileops stored for RANK
holds() {
  test "$(cat "$1")" = "rank $2" || { echo "$1 holds:"; od -c "$1" | head -3; return 1; }
}

waits='is still mapped writable as dataset 1 completes'

test_expect_success 'close right after mmap, then stores: the flushed copy holds the stored bytes' "
  fresh_start &&
  SCR_FLUSH=1 ops idiom.out mkdir:ckpt.1 mmap:ckpt.1/rank_%d.dat &&
  expect_grep '^mmap ckpt.1/rank_0.dat: 0 ok\$' idiom.out &&
  expect_grep '$waits' idiom.out.err &&
  holds $PREFIX/ckpt.1/rank_0.dat 0 && holds $PREFIX/ckpt.1/rank_1.dat 1
"

test_expect_success 'a restart from cache reads the stored bytes' "
  ops idiom.cache copy:ckpt.1/rank_%d.dat=got.%d &&
  ! grep -q 'fetched from' idiom.cache.err &&
  holds $PREFIX/got.0 0 && holds $PREFIX/got.1 1
"

test_expect_success 'node1 lost: its file rebuilt from XOR holds the stored bytes' "
  cluster_renew node1 &&
  ops idiom.lost copy:ckpt.1/rank_%d.dat=got.%d &&
  expect_grep 'rebuilt the lost parts from XOR' idiom.lost.err &&
  holds $PREFIX/got.0 0 && holds $PREFIX/got.1 1
"

test_expect_success 'the cache lost: the fetched files hold the stored bytes' "
  cluster_renew node0 node1 && rm -f $PREFIX/got.* &&
  ops idiom.fetch copy:ckpt.1/rank_%d.dat=got.%d &&
  expect_grep 'fetched from' idiom.fetch.err &&
  holds $PREFIX/got.0 0 && holds $PREFIX/got.1 1
"

test_expect_success 'stores some barriers after the close: protected again at the barrier after munmap' "
  fresh_start &&
  SCR_FLUSH=1 ops spread.out mkdir:ckpt.1 map:ckpt.1/rank_%d.dat mstore:- unmap:- stat:ckpt.1/rank_%d.dat &&
  expect_grep '$waits' spread.out.err &&
  holds $PREFIX/ckpt.1/rank_0.dat 0 && holds $PREFIX/ckpt.1/rank_1.dat 1 &&
  cluster_renew node1 && ops spread.lost copy:ckpt.1/rank_%d.dat=got.%d &&
  expect_grep 'rebuilt the lost parts from XOR' spread.lost.err && holds $PREFIX/got.1 1
"

test_expect_success 'still mapped when the next checkpoint completes: ckpt.1 is protected again before' "
  fresh_start &&
  SCR_FLUSH=1 ops next.out mkdir:ckpt.1 map:ckpt.1/rank_%d.dat mstore:- mkdir:ckpt.2 write:ckpt.2/rank_%d.dat &&
  expect_grep \"is still mapped writable at the next dataset's completion\" next.out.err &&
  holds $PREFIX/ckpt.1/rank_0.dat 0 && holds $PREFIX/ckpt.1/rank_1.dat 1 &&
  holds $PREFIX/ckpt.2/rank_1.dat 1
"

test_expect_success 'still mapped at MPI_Finalize: protected there with the stored bytes' "
  fresh_start &&
  SCR_FLUSH=1 ops fin.out mkdir:ckpt.1 map:ckpt.1/rank_%d.dat mstore:- &&
  expect_grep 'is still mapped writable at MPI_Finalize' fin.out.err &&
  holds $PREFIX/ckpt.1/rank_0.dat 0 && holds $PREFIX/ckpt.1/rank_1.dat 1 &&
  cluster_renew node1 && ops fin.lost copy:ckpt.1/rank_%d.dat=got.%d &&
  expect_grep 'rebuilt the lost parts from XOR' fin.lost.err && holds $PREFIX/got.1 1
"

test_expect_success 'munmap before close: the dataset completes at the close, as before' "
  fresh_start &&
  SCR_FLUSH=1 ops unmapped.out mkdir:ckpt.1 mmapclose:ckpt.1/rank_%d.dat &&
  expect_grep '^mmapclose ckpt.1/rank_0.dat: 0 ok\$' unmapped.out &&
  ! grep -q 'is mapped writable' unmapped.out.err &&
  holds $PREFIX/ckpt.1/rank_0.dat 0 && holds $PREFIX/ckpt.1/rank_1.dat 1
"

test_expect_success 'a BARRIER rule that one rank writes, mapped at the barrier, next step before the next: no hang' "
  fresh_start && echo 'PRELOAD=out.{step}.dat BOUNDARY=BARRIER' >\"\$PREFIX/.scrconf\" &&
  SCR_FLUSH=1 ops alone.out map@0:out.1.dat mstore@0:- write@0:out.2.dat unmap@0:- &&
  expect_grep '^write@0 out.2.dat: 0 ok\$' alone.out &&
  holds $PREFIX/out.1.dat 0 && holds $PREFIX/out.2.dat 0
"

test_done
