#!/bin/sh
# 5020-lost-node-demo.sh - the first thing a newcomer runs (scripts/quickstart demo, part 1):
# an unmodified program loses a node, resumes on a spare with the native result, and its timeline is drawn.
. "$top_srcdir/t/test-lib.sh"

preload_prelude "the lost-node demo"
cluster_up 5 52

test_expect_success 'the demo: node1 lost, a second launch on the spare, resumed, the native result' "
  '$top_srcdir/examples/preload/lost-node-demo.sh' '$top_builddir' '$TRASH/demo' >out 2>&1 ||
    { tail -n 40 out; false; }
  expect_grep 'node1 was lost; the job resumed from step [0-9]* on the spare and ended with the native result' out &&
  expect_grep 'launch 2: .*node4' out && expect_grep 'rebuilt the lost parts from XOR' out
"

test_expect_success 'it shows the configuration and one plain line per step' "
  expect_grep '^    | PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' out &&
  test \"\$(grep -c '^demo: [0-9]\\. ' out)\" = 3
"

test_expect_success 'its timeline has the failed run and the one that finished, and renders' "
  test -s '$TRASH/demo/timeline.svg' && expect_grep ': [23] runs (1 failed)' out && expect_grep 'run 2: .* finished' out &&
  if command -v rsvg-convert >/dev/null; then
    rsvg-convert -o '$TRASH/demo/timeline.png' '$TRASH/demo/timeline.svg' && test -s '$TRASH/demo/timeline.png'
  fi
"

test_done
