#!/bin/sh
# 0010-scr-print.sh - scr_print shows a key-value tree file as indented text
# and refuses missing or corrupt files with one error line and exit status 1.
. "$top_srcdir/t/test-lib.sh"

write="$top_builddir/t/helpers/kvtree-write"

test_expect_success 'scr_print prints KEY = VALUE and nested keys indented' '
  "$write" tree.scr NAME=ckpt.5 RANK.0.FILES=2 RANK.0.FILES=3 &&
  scr_print tree.scr >out &&
  printf "NAME = ckpt.5\nRANK\n  0\n    FILES\n      2\n      3\n" >expect &&
  cmp expect out
'

test_expect_success 'scr_print titles each file when given several' '
  "$write" a.scr A=1 && "$write" b.scr B=2 &&
  scr_print a.scr b.scr >out &&
  expect_grep "^==> a.scr <==" out && expect_grep "^==> b.scr <==" out &&
  expect_grep "^B = 2" out
'

test_expect_success 'scr_print fails with one error line on a corrupt file' '
  "$write" bad.scr KEY=value &&
  printf X | dd of=bad.scr bs=1 seek=24 conv=notrunc 2>/dev/null &&
  ! scr_print bad.scr >out 2>err &&
  test "$(wc -l <err)" -eq 1 && expect_grep "bad.scr" err && expect_grep "CRC" err &&
  test ! -s out
'

test_expect_success 'scr_print exits 1 and names a missing file' '
  scr_print missing.scr 2>err; test $? -eq 1 && expect_grep "missing.scr" err
'

test_expect_success 'scr_print still prints good files after a bad one' '
  "$write" good.scr G=1 &&
  ! scr_print missing.scr good.scr >out 2>/dev/null && expect_grep "^G = 1" out
'

test_expect_success 'scr_print without a file is a usage error' '
  scr_print 2>err; test $? -eq 2
'

test_done
