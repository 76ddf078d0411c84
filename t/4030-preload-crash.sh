#!/bin/sh
# 4030-preload-crash.sh - a preloaded process that dies of a fatal signal logs a
# backtrace naming the faulting function, then dies of that signal all the same.
. "$top_srcdir/t/test-lib.sh"

probe="$top_builddir/t/helpers/preload-probe"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
mkdir -p "$TRASH/run" && printf "PRELOAD=ckpt.{step}/rank_{rank}.dat\n" >"$TRASH/run/.scrconf"

# crash KIND [ENV=VALUE...]: the exit status as sh reports it in status, stderr in crash.err
crash() {
  kind="$1"; shift
  (cd run && ulimit -c 0 && env LD_PRELOAD="$preload" "$@" sh -c '"$0" crash "$1"; echo "status=$?" >&2' \
    "$probe" "$kind") 2>crash.err
  sed -n "s/^status=//p" crash.err >status
}

if ldd "$preload_lib" 2>/dev/null | grep -q 'libasan\|libtsan'; then
  test_skip 'fatal signals' 'the sanitizer runtime handles them in an instrumented build'
  test_done; exit 0
fi

test_expect_success 'SIGSEGV: backtrace names the faulting function, then the process dies of SIGSEGV' '
  crash segv && cat crash.err &&
  test "$(cat status)" = 139 &&
  expect_grep "^SCR pid [0-9]* on $(hostname): caught SIGSEGV (address 0x0); backtrace:$" crash.err &&
  expect_grep "^SCR pid [0-9]* on .*: *#0 0x[0-9a-f]* crash_here+0x" crash.err &&
  expect_grep "#1 0x[0-9a-f]* mode_crash+0x" crash.err && expect_grep " main+0x" crash.err
'

test_expect_success 'with the rank once the launcher gave one' '
  crash segv PMI_RANK=5 && test "$(cat status)" = 139 &&
  expect_grep "^SCR rank 5 on $(hostname): caught SIGSEGV" crash.err
'

test_expect_success 'SIGABRT: abort still ends the process with SIGABRT' '
  crash abort && test "$(cat status)" = 134 &&
  expect_grep "caught SIGABRT; backtrace:" crash.err && expect_grep " abort+0x" crash.err
'

test_expect_success 'SIGFPE: the division that faulted is frame 0' '
  crash fpe && test "$(cat status)" = 136 &&
  expect_grep "caught SIGFPE" crash.err && expect_grep "#0 0x[0-9a-f]* divide_here+0x" crash.err
'

test_expect_success 'stack overflow: reported from the alternate stack' '
  crash overflow && test "$(cat status)" = 139 &&
  expect_grep "caught SIGSEGV" crash.err && expect_grep "#0 0x[0-9a-f]* recurse_here+0x" crash.err &&
  test "$(grep -c "recurse_here" crash.err)" -ge 60
'

test_expect_success 'an application handler installed first still runs after the backtrace' '
  crash chain && test "$(cat status)" = 42 &&
  expect_grep "crash_here+0x" crash.err && expect_grep "^application handler: signal 11$" crash.err &&
  test "$(grep -n "application handler" crash.err | cut -d: -f1)" -gt "$(grep -n "crash_here" crash.err | cut -d: -f1)"
'

test_expect_success 'without rules the library installs no handler' '
  crash inert && test "$(cat status)" = 139 && ! grep -q "caught SIG" crash.err
'

test_done
