#!/bin/sh
# The LLNL-SCR-3.x example in examples/ builds against the installed library
# with pkg-config alone, crashes, and resumes from its newest checkpoint.
. "$top_srcdir/t/test-lib.sh"

DEST="$TRASH/dest"
# MPICH's wrapper, as configure found it: where Open MPI is the default MPI
# (Debian's mpi-default-dev), plain mpicc builds for Open MPI
: "${MPICC:=mpicc}"
# in a sanitizer build the installed libscr needs the ASan runtime, which the
# example, built as a user would, does not link first
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
test_expect_success 'make install into a staging directory' "
  make -C '$top_builddir' install DESTDIR='$DEST' >install.log 2>&1 &&
  pc=\$(find '$DEST' -name scr.pc) && test -n \"\$pc\" &&
  find '$DEST' -name scr.h | grep -q include/scr.h &&
  find '$DEST' -name 'libscr.so*' | grep -q . && find '$DEST' -name libscr.a | grep -q . &&
  find '$DEST' -name scr_index | grep -q bin/ && find '$DEST' -name 'scrconf.5' | grep -q man5
"

test_expect_success 'the example compiles with pkg-config --cflags --libs scr' "
  pcdir=\$(dirname \$(find '$DEST' -name scr.pc)) &&
  PKG_CONFIG_PATH=\$pcdir PKG_CONFIG_SYSROOT_DIR='$DEST' \
    '$MPICC' -o '$TRASH/api_checkpoint' '$top_srcdir/examples/api_checkpoint.c' \
    \$(PKG_CONFIG_PATH=\$pcdir PKG_CONFIG_SYSROOT_DIR='$DEST' pkg-config --cflags --libs scr)
"

libdir() { dirname "$(find "$DEST" -name 'libscr.so' | head -n 1)"; }

test_expect_success 'an uninterrupted run gives the reference result' "
  (cd '$PREFIX' && LD_LIBRARY_PATH=\$(libdir) SCR_PREFIX='$PREFIX' \
    mpirun 4 env $user_program_env '$TRASH/api_checkpoint' --steps 6 --bytes 65536 >'$TRASH/ref.out' 2>&1) &&
  grep '^result:' '$TRASH/ref.out' >'$TRASH/ref.result'
"

test_expect_success 'a run killed after step 3 resumes from its checkpoint with the same result' "
  rm -rf '$PREFIX' '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' && mkdir -p '$PREFIX' &&
  (cd '$PREFIX' && LD_LIBRARY_PATH=\$(libdir) SCR_PREFIX='$PREFIX' \
    mpirun 4 env $user_program_env '$TRASH/api_checkpoint' --steps 6 --bytes 65536 --crash-at 3 >crash.out 2>&1;
   LD_LIBRARY_PATH=\$(libdir) SCR_PREFIX='$PREFIX' \
    mpirun 4 env $user_program_env '$TRASH/api_checkpoint' --steps 6 --bytes 65536 >'$TRASH/resume.out' 2>&1) &&
  expect_grep 'resumed from step 3' '$TRASH/resume.out' &&
  grep '^result:' '$TRASH/resume.out' | cmp - '$TRASH/ref.result'
"

test_expect_success 'the installed library starts the installed scr_transfer for SCR_FLUSH_ASYNC=1' "
  rm -rf '$PREFIX' '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' && mkdir -p '$PREFIX' &&
  find '$DEST' -name scr_transfer | grep -q bin/scr_transfer &&
  (cd '$PREFIX' && LD_LIBRARY_PATH=\$(libdir) SCR_PREFIX='$PREFIX' SCR_FLUSH=2 SCR_FLUSH_ASYNC=1 SCR_DEBUG=1 \
    mpirun 4 env $user_program_env '$TRASH/api_checkpoint' --steps 6 --bytes 65536 >'$TRASH/async.out' 2>&1) &&
  expect_grep 'in the background' '$TRASH/async.out' && ! grep -q 'cannot start' '$TRASH/async.out' &&
  grep '^result:' '$TRASH/async.out' | cmp - '$TRASH/ref.result' &&
  scr_index -p '$PREFIX' >list && expect_grep ' ok' list
"

test_done
