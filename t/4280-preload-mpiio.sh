#!/bin/sh
# 4280-preload-mpiio.sh - per-rank checkpoint files written with MPI-IO on
# MPI_COMM_SELF under the preload. ROMIO's MPI_File_open creates the file,
# closes it and opens it again: that first close must not complete the
# checkpoint empty (which let the cache drop the one before it), the close
# in MPI_File_close does. One node; mpi-fileops does the I/O.
. "$top_srcdir/t/test-lib.sh"

export SCR_JOB_ID=t4280 SCR_COPY_TYPE=SINGLE

preload_prelude "MPI-IO checkpoints under the preload"

# ops DIR OUT OP...: mpi-fileops on 2 ranks under the preload with SCR_DEBUG=1
ops() {
  dir=$1 out=$2
  shift 2
  (cd "$TRASH/$dir" && mpirun 2 env SCR_DEBUG=1 LD_PRELOAD="$preload" "$fileops" "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
}
fresh() {
  rm -rf "$TRASH/$1" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$TRASH/$1" &&
    echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat' >"$TRASH/$1/.scrconf"
}

test_expect_success 'an MPI-IO checkpoint completes at MPI_File_close, with its bytes, as one dataset' "
  mkdir -p native && (cd native && mpirun 2 '$fileops' mkdir@0:ckpt.1 mpiio:ckpt.1/rank_%d.dat) >native.out &&
  fresh a && SCR_FLUSH=1 ops a a.out mkdir@0:ckpt.1 mpiio:ckpt.1/rank_%d.dat &&
  test_cmp native.out a.out && expect_grep '^mpiio ckpt.1/rank_0.dat: 0 ok\$' a.out &&
  ! grep -q 'changed in place' a.out.err && expect_grep 'preload summary: 1 datasets' a.out.err &&
  test \"\$(cat a/ckpt.1/rank_0.dat)\" = 'rank 0' && test \"\$(cat a/ckpt.1/rank_1.dat)\" = 'rank 1'
"

test_expect_success 'killed inside the next MPI-IO checkpoint: the one before is restored from cache' "
  fresh b &&
  { SCR_FLUSH=0 ops b b.out mkdir@0:ckpt.1 mpiio:ckpt.1/rank_%d.dat mkdir@0:ckpt.2 mpiiocrash:ckpt.2/rank_%d.dat;
    true; } &&
  SCR_FLUSH=0 ops b b.restart.out copy:ckpt.1/rank_%d.dat=got.%d &&
  expect_grep \"sees checkpoint 'ckpt.1'\" b.restart.out.err &&
  test \"\$(cat b/got.0)\" = 'rank 0' && test \"\$(cat b/got.1)\" = 'rank 1'
"

test_done
