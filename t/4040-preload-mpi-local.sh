#!/bin/sh
# 4040-preload-mpi-local.sh - MPI outside the global scope: a program without
# MPI loads a module linked with MPI using RTLD_LOCAL, as Python loads mpi4py.
# The layer must find the MPI library through its caller: inert without rules,
# protecting with them.
. "$top_srcdir/t/test-lib.sh"

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
loader="$top_builddir/t/helpers/mpi-local-loader"
module="$top_builddir/t/helpers/.libs/mpi-local-module.so"
export SCR_JOB_ID=t4040

# run DIR [ENV...]: 2 ranks of the loader in $TRASH/DIR
run() {
  dir=$1; shift
  mkdir -p "$TRASH/$dir/ckpt.1" && (cd "$TRASH/$dir" && mpirun 2 env "$@" "$loader" "$module")
}

test_expect_success 'natively the module initialises MPI and writes its files' '
  run native >out 2>err && expect_grep "^module done$" out && test -s native/ckpt.1/rank_1.dat
'

test_expect_success 'preloaded without rules: MPI starts and ends as natively, the files are written in place' '
  run plain LD_PRELOAD="$preload" >out 2>err && expect_grep "^module done$" out &&
  ! grep -q "SCR ERROR" err && cmp native/ckpt.1/rank_1.dat plain/ckpt.1/rank_1.dat
'

test_expect_success 'preloaded with SCR_ENABLE=0: as natively' '
  run disabled LD_PRELOAD="$preload" SCR_ENABLE=0 >out 2>err && expect_grep "^module done$" out &&
  ! grep -q "SCR ERROR" err
'

test_expect_success 'preloaded with a rule: the checkpoint goes to the cache and completes' '
  mkdir -p ruled && echo "PRELOAD=ckpt.{step}/rank_{rank}.dat TYPE=CHECKPOINT" >ruled/.scrconf &&
  run ruled LD_PRELOAD="$preload" SCR_FLUSH=0 >out 2>err && expect_grep "^module done$" out &&
  ! grep -q "SCR ERROR" err && test ! -e ruled/ckpt.1/rank_0.dat &&
  expect_grep "preload summary: 1 datasets" err &&
  test -n "$(find "$SCR_CACHE_BASE" -name rank_1.dat -size 1000c)"
'

# Open MPI's MPI_Comm is a pointer, MPICH's an int: a program of the other MPI
# that inherits LD_PRELOAD must run as without it (when Open MPI is installed)
ompi_lib=$(ls /usr/lib/*/libmpi.so.40 2>/dev/null | head -n 1)
if [ -n "$ompi_lib" ] && command -v mpiexec.openmpi >/dev/null && command -v cc >/dev/null; then
  test_expect_success 'an Open MPI program runs through the layer, told it is not protected' '
    cat >ompi.c <<-\EOC &&
	extern char ompi_mpi_comm_world[];
	int MPI_Init(int*, char***); int MPI_Comm_rank(void*, int*); int MPI_Barrier(void*); int MPI_Finalize(void);
	#include <stdio.h>
	int main(int c, char** v) { int r = -1; MPI_Init(&c, &v); MPI_Comm_rank(ompi_mpi_comm_world, &r);
	  MPI_Barrier(ompi_mpi_comm_world); printf("rank %d ok\n", r); return MPI_Finalize(); }
	EOC
    cc ompi.c -o ompi "$ompi_lib" && mkdir -p om && echo "PRELOAD=ckpt.{step}/r{rank}" >om/.scrconf &&
    (cd om && timeout 60 mpiexec.openmpi --allow-run-as-root --oversubscribe -n 2 env LD_PRELOAD="$preload" ../ompi) \
      >out 2>err && test "$(grep -c "^rank [01] ok$" out)" = 2 &&
    test "$(grep -c "uses Open MPI, and libscr_preload.so was built for MPICH" err)" = 1
  '
else
  test_skip 'an Open MPI program runs through the layer, told it is not protected' 'Open MPI is not installed'
fi

test_done
