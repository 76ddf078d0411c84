#!/bin/sh
# The SCR API from Fortran: a program written for LLNL SCR 3.x's binding
# (INCLUDE 'scrf.h', -lscrf -lscr) builds against the installed library with
# pkg-config, crashes, and resumes from its newest checkpoint.
. "$top_srcdir/t/test-lib.sh"

DEST="$TRASH/dest"
# in a sanitizer build the installed libscr needs the ASan runtime, which the
# programs, built as a user would, do not link first
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
: "${MPIFC:=mpif90}"

test_expect_success 'make install puts scrf.h, libscrf and scrf.pc in place' "
  make -C '$top_builddir' install DESTDIR='$DEST' >install.log 2>&1 &&
  find '$DEST' -name scrf.h | grep -q include/scrf.h &&
  find '$DEST' -name 'libscrf.so' | grep -q . && find '$DEST' -name scrf.pc | grep -q pkgconfig/
"

# pkg-config on the staged install
scrf_flags() {
  pcdir=$(dirname "$(find "$DEST" -name scrf.pc)")
  PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR="$DEST" pkg-config --cflags --libs scrf
}
libdir() { dirname "$(find "$DEST" -name 'libscr.so' | head -n 1)"; }

test_expect_success 'the Fortran example and probe compile with pkg-config --cflags --libs scrf' "
  $MPIFC -o '$TRASH/api_checkpoint_f' '$top_srcdir/examples/api_checkpoint.f90' \$(scrf_flags) &&
  $MPIFC -o '$TRASH/fortran-api-probe' '$top_srcdir/t/helpers/fortran-api-probe.f90' \$(scrf_flags)
"

test_expect_success 'names and values cross the binding blank-padded, and short buffers fail' "
  (cd '$PREFIX' && LD_LIBRARY_PATH=\$(libdir) SCR_PREFIX='$PREFIX' \
    mpirun 2 env $user_program_env '$TRASH/fortran-api-probe' >'$TRASH/probe.out' 2>'$TRASH/probe.err') &&
  cat '$TRASH/probe.out' && test \$(grep -c '^ok ' '$TRASH/probe.out') -eq 11 &&
  ! grep -q '^not ok' '$TRASH/probe.out'
"

test_expect_success 'an uninterrupted run gives the reference result' "
  rm -rf '$PREFIX' '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' && mkdir -p '$PREFIX' &&
  (cd '$PREFIX' && LD_LIBRARY_PATH=\$(libdir) SCR_PREFIX='$PREFIX' \
    mpirun 4 env $user_program_env '$TRASH/api_checkpoint_f' --steps 6 >'$TRASH/ref.out' 2>&1) &&
  expect_grep 'completed 6 steps' '$TRASH/ref.out' &&
  grep '^result:' '$TRASH/ref.out' >'$TRASH/ref.result'
"

test_expect_success 'a run killed after step 3 resumes from its checkpoint in cache with the same result' "
  rm -rf '$PREFIX' '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' && mkdir -p '$PREFIX' &&
  (cd '$PREFIX' && LD_LIBRARY_PATH=\$(libdir) SCR_PREFIX='$PREFIX' SCR_FLUSH=0 \
    mpirun 4 env $user_program_env '$TRASH/api_checkpoint_f' --steps 6 --crash-at 3 >crash.out 2>&1;
   LD_LIBRARY_PATH=\$(libdir) SCR_PREFIX='$PREFIX' SCR_FLUSH=0 \
    mpirun 4 env $user_program_env '$TRASH/api_checkpoint_f' --steps 6 >'$TRASH/resume.out' 2>&1) &&
  expect_grep 'resumed from step 3 (checkpoint ckpt.3)' '$TRASH/resume.out' &&
  grep '^result:' '$TRASH/resume.out' | cmp - '$TRASH/ref.result'
"

test_expect_success 'with the cache lost, it resumes from the checkpoint flushed to the prefix' "
  rm -rf '$PREFIX' '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' && mkdir -p '$PREFIX' &&
  (cd '$PREFIX' && LD_LIBRARY_PATH=\$(libdir) SCR_PREFIX='$PREFIX' SCR_FLUSH=2 \
    mpirun 4 env $user_program_env '$TRASH/api_checkpoint_f' --steps 6 --crash-at 3 >crash.out 2>&1;
   rm -rf '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' &&
   LD_LIBRARY_PATH=\$(libdir) SCR_PREFIX='$PREFIX' \
    mpirun 4 env $user_program_env '$TRASH/api_checkpoint_f' --steps 6 >'$TRASH/fetch.out' 2>&1) &&
  expect_grep 'resumed from step 2 (checkpoint ckpt.2)' '$TRASH/fetch.out' &&
  grep '^result:' '$TRASH/fetch.out' | cmp - '$TRASH/ref.result'
"

test_done
