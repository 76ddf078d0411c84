#!/bin/sh
# 0020-scr-halt.sh - scr_halt sets, lists, unsets and removes each halt
# condition, picks its prefix directory, and refuses bad input without writing.
. "$top_srcdir/t/test-lib.sh"

# dates in the listing are local time
TZ=UTC
export TZ
halt_file=p/.scr/halt.scr

test_expect_success 'without options scr_halt sets ExitReason SCR_HALT' '
  mkdir p && scr_halt p >out &&
  scr_halt --list p >list && expect_grep "ExitReason  *SCR_HALT$" list
'

test_expect_success '--checkpoints sets CheckpointsLeft' '
  scr_halt --checkpoints 3 p >out && scr_halt --list p >list &&
  expect_grep "CheckpointsLeft  *3$" list
'

test_expect_success '--before with a date sets ExitBefore' '
  scr_halt --before "2030-01-01 12:00" p >out && scr_halt --list p >list &&
  expect_grep "ExitBefore  *2030-01-01 12:00:00 (@1893499200)" list
'

test_expect_success '--after with @EPOCH sets ExitAfter' '
  scr_halt --after @1893456000 p >out && scr_halt --list p >list &&
  expect_grep "ExitAfter  *2030-01-01 00:00:00 (@1893456000)" list
'

test_expect_success '--seconds sets HaltSeconds' '
  scr_halt --seconds 600 p >out && scr_halt --list p >list &&
  expect_grep "HaltSeconds  *600$" list
'

test_expect_success '--after with a relative time lands that far ahead' '
  before=$(date +%s) && scr_halt --after +2h p >out && after=$(date +%s) &&
  epoch=$(scr_halt --list p | sed -n "s/.*ExitAfter.*(@\([0-9]*\)).*/\1/p") &&
  [ "$epoch" -ge $((before + 7200)) ] && [ "$epoch" -le $((after + 7200)) ]
'

test_expect_success '--immediate sets ExitReason SCR_HALT_IMMEDIATE' '
  scr_halt --immediate p >out && scr_halt --list p >list &&
  expect_grep "ExitReason  *SCR_HALT_IMMEDIATE$" list
'

test_expect_success 'a bad TIME fails with exit 2 and leaves the file untouched' '
  cp $halt_file saved &&
  { scr_halt --after tomorrow p 2>err; test $? -eq 2; } &&
  expect_grep "invalid TIME .tomorrow." err && [ $(wc -l <err) -eq 1 ] &&
  cmp $halt_file saved
'

test_expect_success 'a bad --checkpoints count fails with exit 2 and leaves the file untouched' '
  cp $halt_file saved &&
  { scr_halt --checkpoints -1 p 2>err; test $? -eq 2; } &&
  cmp $halt_file saved
'

test_expect_success 'each --unset option clears only its condition' '
  scr_halt --unset-checkpoints p >out && ! grep -q CheckpointsLeft out && grep -q ExitReason out &&
  scr_halt --unset-before p >out && ! grep -q ExitBefore out && grep -q ExitAfter out &&
  scr_halt --unset-after p >out && ! grep -q ExitAfter out &&
  scr_halt --unset-seconds p >out && ! grep -q HaltSeconds out &&
  scr_halt --checkpoints 1 --unset-reason p >out && ! grep -q ExitReason out &&
  expect_grep CheckpointsLeft out
'

test_expect_success 'unsetting the last condition removes the file' '
  scr_halt --unset-checkpoints p >out && test ! -e $halt_file &&
  scr_halt --list p >list && expect_grep "No halt conditions" list
'

test_expect_success '--remove deletes the halt file' '
  scr_halt --checkpoints 2 p >out && test -e $halt_file &&
  scr_halt --remove p >out && test ! -e $halt_file
'

test_expect_success 'the prefix defaults to SCR_PREFIX' '
  mkdir env && SCR_PREFIX="$TRASH/env" scr_halt >out && test -e env/.scr/halt.scr
'

test_expect_success 'without SCR_PREFIX the prefix is the current directory' '
  mkdir cwd && (cd cwd && scr_halt >out) && test -e cwd/.scr/halt.scr
'

test_expect_failure_exit 'a missing prefix directory is an error' '
  scr_halt no-such-dir
'

test_expect_success '--check: status 3 without a halt file, and with a condition not met' '
  mkdir check && scr_halt --check check >out; test $? = 3 &&
  scr_halt --checkpoints 2 check >/dev/null && scr_halt --check check >out; test $? = 3 && test ! -s out
'

test_expect_success '--check: status 0 and the reason when a condition is met' '
  scr_halt --checkpoints 0 check >/dev/null && scr_halt --check check >out &&
  expect_grep "^Halt condition met: " out &&
  scr_halt --remove check >/dev/null && scr_halt --after @1 check >/dev/null && scr_halt --check check >out &&
  scr_halt --remove check >/dev/null && scr_halt check >/dev/null && scr_halt --check check >out
'

test_expect_success '--check takes SCR_HALT_SECONDS from the prefix directory .scrconf, as the job does' '
  mkdir margin && echo SCR_HALT_SECONDS=7200 >margin/.scrconf && scr_halt --before +1h margin >/dev/null &&
  scr_halt --check margin >out && expect_grep "less than 7200 seconds before ExitBefore" out &&
  echo SCR_HALT_SECONDS=60 >margin/.scrconf && scr_halt --check margin >out; test $? = 3
'

test_expect_success '--check does not combine with changes' '
  scr_halt --check --checkpoints 1 check 2>err; test $? = 2 && expect_grep "give it alone" err
'

test_expect_success '--check of a damaged halt file is status 1, not "not met"' '
  printf "garbage" >check/.scr/halt.scr && scr_halt --check check 2>err; test $? = 1 &&
  expect_grep "cannot read halt file" err
'

test_done
