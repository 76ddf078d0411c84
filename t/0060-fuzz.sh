#!/bin/bash
# 0060-fuzz.sh - the libFuzzer targets of t/fuzz/ (parsers of configuration, key-value files,
# the filemap journal, and the PRELOAD rules against a reference): every saved input replayed,
# then each target run for SCR_FUZZ_SECONDS (default 30; 0: replay only). Skipped without clang
# and libFuzzer (Debian: clang libclang-rt-14-dev).
. "$top_srcdir/t/test-lib.sh"

seconds=${SCR_FUZZ_SECONDS:-30}
fuzzdir="$top_srcdir/t/fuzz"
bin="$top_builddir/t/fuzz/bin"
targets=$(cd "$fuzzdir" && ls fuzz-*.c | sed 's/\.c$//')

rc=0
"$fuzzdir/build.sh" "$top_builddir" "$bin" >"$TRASH/build.log" 2>&1 || rc=$?
if [ "$rc" -eq 77 ]; then
  for t in $targets; do
    test_skip "$t" "$(head -n 1 "$TRASH/build.log")"
  done
  test_done
  exit $?
fi
test_expect_success 'the fuzz targets build with clang and libFuzzer' "
  cat '$TRASH/build.log' && test $rc -eq 0
"

for t in $targets; do
  # every input saved so far: the seeds, and the crashes found before,
  # which must stay fixed (libFuzzer runs each file once with -runs=0)
  test_expect_success "$t: the corpus and the regressions replay" "
    dirs='$fuzzdir/corpus/$t' &&
    if [ -d '$fuzzdir/regressions/$t' ]; then dirs=\"\$dirs $fuzzdir/regressions/$t\"; fi &&
    '$bin/$t' -runs=0 -timeout=60 \$dirs >replay-$t.log 2>&1 ||
      { grep -v '^SCR' replay-$t.log | tail -n 60; false; }
  "
  if [ "$seconds" -gt 0 ]; then
    # new inputs go to a copy: the corpus in the source tree changes only
    # by hand. -close_fd_mask=2 silences the readers' error messages (the
    # target's crash report is still printed)
    test_expect_success "$t: $seconds s of fuzzing find no crash" "
      mkdir -p corpus-$t && cp '$fuzzdir/corpus/$t'/* corpus-$t/ &&
      '$bin/$t' -max_total_time=$seconds -timeout=60 -close_fd_mask=2 -print_final_stats=1 \
        -artifact_prefix='$TRASH/crash-$t-' corpus-$t >run-$t.log 2>&1 ||
        { tail -n 60 run-$t.log; ls '$TRASH'/crash-$t-* 2>/dev/null; false; }
    "
    # the figure the issue asks for, as a TAP comment
    sed -n "s/^stat::number_of_executed_units: */# $t: executions: /p" "$TRASH/run-$t.log" 2>/dev/null
  fi
done

test_done
