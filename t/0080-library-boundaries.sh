#!/bin/sh
# 0080-library-boundaries.sh - what the built libraries and commands may not contain:
# thread-local storage in what the preload layer loads with dlopen, MPI in the commands.
. "$top_srcdir/t/test-lib.sh"

libs="$top_builddir/.libs"
command -v readelf >/dev/null 2>&1 || { test_skip "library boundaries" "readelf not installed (binutils)"; test_done; exit 0; }

# The engine, the child view and libscr are opened with dlopen under the
# preload. A __thread variable there is dynamic TLS, which LeakSanitizer's
# scan at exit crashes on (google/sanitizers #1322): sanitizer builds of
# preloaded jobs died at exit until the one such variable was removed.
# libscr_preload.so itself is loaded at start-up (static TLS) and may have it.
for lib in libscr_preload_engine.so libscr_preload_child.so libscr.so; do
  test_expect_success "$lib, opened with dlopen under the preload, has no thread-local storage" "
    test -f '$libs/$lib' && readelf -lW '$libs/$lib' >segments &&
    { ! grep -q '^ *TLS ' segments || { echo '$lib has a TLS segment: no __thread in code the preload opens'; false; }; }
  "
done

# The commands run on login and batch nodes, without an MPI launcher, and
# the preload layer is loaded into processes that are not MPI programs
# (the ranks' children): none of them may need the MPI library.
for prog in scr_index scr_log scr_halt scr_transfer scr_param scr_print .libs/libscr_preload.so; do
  test_expect_success "$(basename "$prog") needs no MPI library" "
    f='$top_builddir/$prog' && { test ! -f '$top_builddir/.libs/$prog' || f='$top_builddir/.libs/$prog'; } &&
    readelf -dW \"\$f\" >dynamic && grep -q NEEDED dynamic &&
    { ! grep -E 'NEEDED.*lib(mpi|mpich|mpicxx|mpifort)' dynamic || { echo \"\$f needs MPI\"; false; }; }
  "
done

test_done
