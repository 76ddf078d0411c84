#!/bin/sh
# 4230-preload-open-truncate.sh - open(O_TRUNC) without O_CREAT of a file a
# rule matches, as HDF5's family driver opens each member file before it
# retries with O_CREAT: a file neither the view nor the file system has is
# ENOENT and nothing else (no dataset begins, the next checkpoint completes);
# one the view shows, or one only on the file system, is rewritten as with
# O_CREAT|O_TRUNC. Errno and return values as natively, also of a pointer
# file in a directory nobody made. 2 ranks on one node;
# mpi-fileops does the I/O.
. "$top_srcdir/t/test-lib.sh"

export SCR_JOB_ID=t4230 SCR_COPY_TYPE=SINGLE

preload_prelude "open(O_TRUNC) without O_CREAT through the preload"

# native DIR OUT OP...: mpi-fileops on 2 ranks without the preload, in $TRASH/DIR
native() {
  dir=$1 out=$2
  shift 2
  mkdir -p "$TRASH/$dir" && (cd "$TRASH/$dir" && mpirun 2 "$fileops" "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
}
# ops DIR OUT OP...: the same under the preload (the cache and SCR_FLUSH as set)
ops() {
  dir=$1 out=$2
  shift 2
  (cd "$TRASH/$dir" && mpirun 2 env LD_PRELOAD="$preload" "$fileops" "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
}
# fresh DIR RULE: an empty DIR with one rule, and an empty cache
fresh() {
  rm -rf "$TRASH/$1" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$TRASH/$1" && echo "$2" >"$TRASH/$1/.scrconf"
}
# clean OUT: no error, no dataset thrown away
clean() {
  ! grep -e 'SCR ERROR' -e 'is invalid' -e 'discarded' "$TRASH/$1.err" || { cat "$TRASH/$1.err"; return 1; }
}

ops_a='mkdir@0:ckpt.1 rewriterw:ckpt.1/rank_%d.dat stat:ckpt.1/rank_%d.dat write:ckpt.1/rank_%d.dat'

test_expect_success 'a file nobody has, opened O_RDWR|O_TRUNC: ENOENT as natively; created, checkpointed, flushed' "
  native a.native a.native.out $ops_a &&
  expect_grep '^rewriterw ckpt.1/rank_0.dat: -1 No such file or directory\$' a.native.out &&
  fresh a 'PRELOAD=ckpt.{step}/rank_{rank}.dat' &&
  SCR_FLUSH=1 ops a a.out $ops_a && test_cmp a.native.out a.out && clean a.out &&
  expect_grep 'preload summary: 1 datasets' a.out.err &&
  test \"\$(cat a/ckpt.1/rank_1.dat)\" = 'rank 1'
"

test_expect_success 'the checkpoint is restored from cache with its bytes' "
  rm -f a/ckpt.1/rank_*.dat &&
  SCR_FLUSH=0 ops a a.restart.out copy:ckpt.1/rank_%d.dat=got.%d &&
  expect_grep \"sees checkpoint 'ckpt.1'\" a.restart.out.err &&
  test \"\$(cat a/got.0)\" = 'rank 0' && test \"\$(cat a/got.1)\" = 'rank 1'
"

test_expect_success 'a failed open of the next step begins nothing: the newest checkpoint stays, the next completes' "
  fresh a2 'PRELOAD=ckpt.{step}/rank_{rank}.dat' &&
  SCR_FLUSH=0 ops a2 a2.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat mkdir@0:ckpt.2 rewrite:ckpt.2/rank_%d.dat \
    stat:ckpt.2/rank_%d.dat &&
  expect_grep '^rewrite ckpt.2/rank_0.dat: -1 No such file or directory\$' a2.out &&
  expect_grep '^stat ckpt.2/rank_0.dat: -1 No such file or directory\$' a2.out &&
  clean a2.out && expect_grep 'preload summary: 1 datasets' a2.out.err &&
  SCR_FLUSH=0 ops a2 a2.next.out rewrite:ckpt.3/rank_%d.dat write:ckpt.2/rank_%d.dat copy:ckpt.2/rank_%d.dat=got.%d &&
  expect_grep \"sees checkpoint 'ckpt.1'\" a2.next.out.err &&
  expect_grep '^rewrite ckpt.3/rank_0.dat: -1 No such file or directory\$' a2.next.out &&
  clean a2.next.out && expect_grep 'preload summary: 1 datasets' a2.next.out.err &&
  test \"\$(cat a2/got.1)\" = 'rank 1' && ! test -e a2/ckpt.2/rank_1.dat
"

ops_s='mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat rewriterw:ckpt.1/rank_%d.dat read:ckpt.1/rank_%d.dat'
ops_b='write:rst_%d.dat rewrite:rst_%d.dat stat:rst_%d.dat read:rst_%d.dat'

test_expect_success 'a file the view shows, opened O_WRONLY|O_TRUNC: rewritten as natively, a new checkpoint' "
  native b.native b.native.out $ops_b &&
  expect_grep '^rewrite rst_0.dat: 0 ok\$' b.native.out && expect_grep '^stat rst_0.dat: 6 ok\$' b.native.out &&
  fresh b 'PRELOAD=rst_{rank}.dat' &&
  SCR_FLUSH=0 ops b b.out $ops_b && test_cmp b.native.out b.out && clean b.out &&
  expect_grep 'preload summary: 2 datasets' b.out.err && ! test -e b/rst_0.dat
"

test_expect_success 'the rewritten checkpoint is restored with the new bytes' "
  SCR_FLUSH=0 ops b b.restart.out copy:rst_%d.dat=got.%d &&
  test \"\$(cat b/got.0)\" = 'new 0' && test \"\$(cat b/got.1)\" = 'new 1'
"

test_expect_success 'a shown file of a step opened O_RDWR|O_TRUNC: a new version of its checkpoint, as natively' "
  native s.native s.native.out $ops_s && expect_grep '^rewriterw ckpt.1/rank_0.dat: 0 ok\$' s.native.out &&
  fresh s 'PRELOAD=ckpt.{step}/rank_{rank}.dat' &&
  SCR_FLUSH=0 ops s s.out $ops_s &&
  test_cmp s.native.out s.out && clean s.out && expect_grep 'preload summary: 2 datasets' s.out.err &&
  SCR_FLUSH=0 ops s s.restart.out copy:ckpt.1/rank_%d.dat=got.%d && test \"\$(cat s/got.1)\" = 'new 1'
"

test_expect_success 'a file only on the file system, opened O_WRONLY|O_TRUNC: checkpointed with new bytes, its mode' "
  native c.native c.native.out write:rst_%d.dat && chmod 640 c.native/rst_0.dat c.native/rst_1.dat &&
  native c.native c.native.out rewrite:rst_%d.dat mode:rst_%d.dat stat:rst_%d.dat &&
  fresh c 'PRELOAD=rst_{rank}.dat' && native c c.first.out write:rst_%d.dat && chmod 640 c/rst_0.dat c/rst_1.dat &&
  SCR_FLUSH=0 ops c c.out rewrite:rst_%d.dat mode:rst_%d.dat stat:rst_%d.dat &&
  test_cmp c.native.out c.out && clean c.out && expect_grep 'preload summary: 1 datasets' c.out.err &&
  test \"\$(cat c/rst_1.dat)\" = 'rank 1' &&
  SCR_FLUSH=1 ops c c.flush.out read:rst_%d.dat && test \"\$(cat c/rst_1.dat)\" = 'new 1' &&
  test \"\$(stat -c %a c/rst_1.dat)\" = 640
"

test_expect_success 'a directory, opened O_WRONLY|O_TRUNC: EISDIR as natively, nothing begins' "
  native d.native d.native.out mkdir:rst_%d.dat rewrite:rst_%d.dat &&
  fresh d 'PRELOAD=rst_{rank}.dat' &&
  SCR_FLUSH=0 ops d d.out mkdir:rst_%d.dat rewrite:rst_%d.dat && test_cmp d.native.out d.out && clean d.out &&
  expect_grep 'preload summary: 0 datasets' d.out.err
"

test_expect_success 'creat, fopen \"w\" and O_CREAT|O_EXCL on a shown file: as before' "
  fresh e 'PRELOAD=ckpt.{step}/rank_{rank}.dat' &&
  SCR_FLUSH=0 ops e e.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat excl:ckpt.1/rank_%d.dat fwrite:ckpt.1/rank_%d.dat \
    read:ckpt.1/rank_%d.dat &&
  expect_grep '^excl ckpt.1/rank_0.dat: -1 File exists\$' e.out &&
  expect_grep '^fwrite ckpt.1/rank_0.dat: 0 ok\$' e.out &&
  clean e.out && expect_grep 'preload summary: 2 datasets' e.out.err
"

test_expect_success 'O_CREAT|O_EXCL of a file only the file system has: EEXIST, and no flush overwrites it' "
  fresh x 'PRELOAD=ckpt.{step}/rank_{rank}.dat' && mkdir -p x/ckpt.1 &&
  echo old >x/ckpt.1/rank_0.dat && echo old >x/ckpt.1/rank_1.dat &&
  SCR_FLUSH=1 ops x x.out excl:ckpt.1/rank_%d.dat &&
  expect_grep '^excl ckpt.1/rank_0.dat: -1 File exists\$' x.out &&
  test \"\$(cat x/ckpt.1/rank_0.dat)\" = old && test \"\$(cat x/ckpt.1/rank_1.dat)\" = old
"

long=$(printf 'n%.0s' $(seq 300))
test_expect_success 'an open the file system refuses too (a name too long) leaves the other files of the rank a checkpoint' "
  native y.native y.native.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat write:ckpt.1/rank_%d_$long.dat &&
  expect_grep 'File name too long' y.native.out &&
  fresh y 'PRELOAD=ckpt.{step}/rank_{rank}*.dat BOUNDARY=FINALIZE' &&
  SCR_FLUSH=1 ops y y.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat write:ckpt.1/rank_%d_$long.dat &&
  test_cmp y.native.out y.out && clean y.out && expect_grep 'preload summary: 1 datasets' y.out.err &&
  test \"\$(cat y/ckpt.1/rank_1.dat)\" = 'rank 1'
"

# a file of a rule with neither {step} nor {rank} created once a checkpoint
# completed is attached to it (the pointer to it); in a directory nobody made
# its open fails as natively, errno set (the view's lookup of the directory
# cleared it)
ops_z='mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat write@0:nodir/latest'
test_expect_success 'a pointer file after a checkpoint, in a directory nobody made: ENOENT as natively' "
  native z.native z.native.out $ops_z &&
  expect_grep '^write@0 nodir/latest: -1 No such file or directory\$' z.native.out &&
  fresh z 'PRELOAD=ckpt.{step}/rank_{rank}.dat
PRELOAD=nodir/latest' &&
  SCR_FLUSH=0 ops z z.out $ops_z && test_cmp z.native.out z.out && clean z.out &&
  expect_grep 'preload summary: 1 datasets' z.out.err
"

# HDF5's family driver: H5Fcreate opens each member after the first with
# O_RDWR|O_TRUNC, and with O_CREAT|O_TRUNC when that fails
# (built here without instrumentation, the program cannot take an
# instrumented preload, ASan's or TSan's: glibc's locale lock deadlocks in
# MPI_Init, in newlocale)
h5flags=$(pkg-config --cflags --libs hdf5 2>/dev/null)
if ldd "$preload_lib" 2>/dev/null | grep -q 'libasan\|libtsan'; then
  test_skip "HDF5 family driver" "sanitizer build"
elif [ -n "$h5flags" ] && command -v mpicc >/dev/null; then
  # the program: mkdir, H5Fcreate of a family of 2 KiB members, a dataset of
  # 512 doubles, H5Fclose ("write"); or H5Fopen and H5Dread ("read")
  cat >"$TRASH/h5family.c" <<-\EOC
	#include <hdf5.h>
	#include <mpi.h>
	#include <stdio.h>
	#include <string.h>
	#include <sys/stat.h>
	int main(int argc, char** argv)
	{
	  int rank;
	  MPI_Init(&argc, &argv);
	  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	  double v[512];
	  char name[64];
	  snprintf(name, sizeof(name), "h5/step_2/r%d_%%d.h5", rank);
	  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	  H5Pset_fapl_family(fapl, 2048, H5P_DEFAULT);
	  hsize_t n = 512;
	  herr_t rc;
	  if (strcmp(argv[1], "write") == 0) {
	    for (int i = 0; i < 512; i++) v[i] = rank * 1000 + i;
	    mkdir("h5", 0755);
	    mkdir("h5/step_2", 0755);
	    hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	    hid_t s = H5Screate_simple(1, &n, NULL);
	    hid_t d = H5Dcreate2(f, "v", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	    rc = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
	    H5Dclose(d), H5Sclose(s);
	    if (H5Fclose(f) < 0 || f < 0) rc = -1;
	  } else {
	    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, fapl);
	    hid_t d = H5Dopen2(f, "v", H5P_DEFAULT);
	    rc = H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
	    H5Dclose(d), H5Fclose(f);
	  }
	  double sum = 0;
	  for (int i = 0; i < 512; i++) sum += v[i];
	  printf("rank %d %s: %d %.1f\n", rank, argv[1], (int) rc, sum);
	  MPI_Barrier(MPI_COMM_WORLD);
	  MPI_Finalize();
	  return rc < 0;
	}
	EOC
  test_expect_success 'HDF5 family driver: every member in the checkpoint, restored with its values' "
    mpicc h5family.c -o h5family $h5flags &&
    mkdir -p h5native &&
    (cd h5native && mpirun 2 ../h5family write && mpirun 2 ../h5family read) >h5.native 2>h5.native.err &&
    test \$(ls h5native/h5/step_2 | wc -l) -gt 2 &&
    fresh h5 'PRELOAD=h5/step_{step}/r{rank}_*.h5 BOUNDARY=BARRIER' &&
    (cd h5 && SCR_FLUSH=0 mpirun 2 env LD_PRELOAD=\"$preload\" ../h5family write) >h5.out 2>h5.out.err &&
    clean h5.out && expect_grep 'preload summary: 1 datasets' h5.out.err && ! test -e h5/h5/step_2/r0_1.h5 &&
    (cd h5 && SCR_FLUSH=0 mpirun 2 env LD_PRELOAD=\"$preload\" ../h5family read) >>h5.out 2>h5.read.err &&
    sort h5.native >h5.native.sorted && sort h5.out >h5.out.sorted && test_cmp h5.native.sorted h5.out.sorted
  "
else
  test_skip "HDF5 family driver" "no HDF5 (pkg-config hdf5) or mpicc"
fi

test_done
