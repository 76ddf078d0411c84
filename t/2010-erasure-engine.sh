#!/bin/sh
# The XOR/RS engine rebuilds exactly (data and parity) every combination of up to
# k lost members, for several set sizes, uneven streams and pieces smaller than chunks.
. "$top_srcdir/t/test-lib.sh"

for n in 2 3 4 5; do
  test_expect_success "$n members: every loss of up to k members rebuilds bit-exact" "
    mkdir -p '$TRASH/e$n' &&
    mpirun $n '$top_builddir/t/helpers/erasure-test' '$TRASH/e$n' 4096 >out 2>&1 &&
    expect_grep ' 0 failures' out
  "
done

test_expect_success 'one piece larger than a chunk works too' "
  mkdir -p '$TRASH/big' &&
  mpirun 3 '$top_builddir/t/helpers/erasure-test' '$TRASH/big' 1048576 >out 2>&1 &&
  expect_grep ' 0 failures' out
"

test_done
