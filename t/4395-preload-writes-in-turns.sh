#!/bin/sh
# 4395-preload-writes-in-turns.sh - a checkpoint written in turns (rank 0's
# file, an MPI_Barrier, then rank 1's): with BOUNDARY=CLOSE rank 0's last
# close waits in the completion for rank 1's, which comes only after the
# barrier rank 0 does not reach. The design cannot complete it (scr_preload(7),
# LIMITATIONS); the job must not hang mute: after 30 s the waiting rank says
# why, naming the dataset and the man page. Two ranks on one node.
. "$top_srcdir/t/test-lib.sh"

export SCR_JOB_ID=t4395 SCR_COPY_TYPE=SINGLE
preload_prelude "a checkpoint written in turns"

test_expect_success 'a checkpoint written in turns across a barrier: the waiting rank says why after 30 s' "
  mkdir -p turns && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat' >turns/.scrconf &&
  ! (cd turns && SCR_TEST_TIMEOUT=45 mpirun 2 env LD_PRELOAD='$preload' '$fileops' \
       mkdir@0:ckpt.1 write@0:ckpt.1/rank_0.dat write@1:ckpt.1/rank_1.dat) >turns.out 2>turns.err &&
  grep 'rank 0 has waited 30 s for the other ranks to complete dataset 1 (ckpt.1) .*LIMITATIONS in scr_preload(7)' \
    turns.err && ! grep -q 'rank 1 has waited' turns.err
"

test_done
