#!/bin/sh
# 0040-scr-param.sh - scr_param prints configuration values with the library's
# precedence (environment, .scrconf, default), checked, for scripts like scr_run.
. "$top_srcdir/t/test-lib.sh"

test_expect_success 'a default value, and an unset parameter as an empty line' '
  scr_param SCR_RUNS SCR_NODELIST >out && printf "1\n\n" >expect && test_cmp expect out
'

test_expect_success '.scrconf in the current directory sets a value, with its origin' '
  mkdir d && printf "# runs\nSCR_RUNS=3\n" >d/.scrconf &&
  (cd d && scr_param --origin SCR_RUNS) >out && printf "3\t$TRASH/d/.scrconf:2\n" >expect && test_cmp expect out
'

test_expect_success 'the environment wins over .scrconf' '
  (cd d && SCR_RUNS=5 scr_param --origin SCR_RUNS) >out && printf "5\tenvironment\n" >expect && test_cmp expect out
'

test_expect_success '$SCR_PREFIX/.scrconf is read when there is none here' '
  mkdir p && echo SCR_MIN_NODES=2 >p/.scrconf && SCR_PREFIX="$TRASH/p" scr_param SCR_MIN_NODES >out &&
  echo 2 >expect && test_cmp expect out
'

test_expect_success 'booleans are printed as 0 or 1' '
  SCR_ENABLE=no scr_param SCR_ENABLE >out && echo 0 >expect && test_cmp expect out
'

test_expect_success 'a value that does not parse: status 1, the message names file, line and key' '
  mkdir bad && printf "SCR_FLUSH=1\nSCR_RUNS=often\n" >bad/.scrconf &&
  (cd bad && scr_param SCR_RUNS) >out 2>err; test $? = 1 &&
  expect_grep "\.scrconf:2" err && expect_grep SCR_RUNS err
'

test_expect_success 'a value out of range: status 1, naming where it was set' '
  SCR_MIN_NODES=0 scr_param SCR_MIN_NODES >out 2>err; test $? = 1 &&
  expect_grep "environment variable SCR_MIN_NODES: expected an integer >= 1" err
'

test_expect_success 'an unknown key or a descriptor: status 2' '
  scr_param SCR_NO_SUCH_KEY 2>err; test $? = 2 && expect_grep "no such parameter" err &&
  scr_param CKPT 2>err; test $? = 2 && expect_grep "descriptor" err
'

test_expect_success '--job-id: SCR_JOB_ID, else the id of the batch job, else one derived from the prefix' '
  SCR_JOB_ID=mine SLURM_JOB_ID=77 scr_param --job-id >out && echo mine >expect && test_cmp expect out &&
  (unset SCR_JOB_ID; SLURM_JOB_ID=77 scr_param -j) >out && echo 77 >expect && test_cmp expect out &&
  scr_param -j SCR_RUNS 2>err; test $? = 2 && expect_grep "takes no KEY" err
'

test_expect_success '--job-id is the id a job started in the same place logs under' '
  rm -rf "$PREFIX/.scr" && (cd "$PREFIX" && scr_param --job-id) >id && grep -q "^prefix-[0-9a-f]\{8\}$" id &&
  SCR_FLUSH=0 scr_app 1 --steps 1 --bytes 64 >/dev/null 2>&1 &&
  grep -q " job=$(cat id) event=INIT " "$PREFIX/.scr/log" &&
  (cd / && SCR_PREFIX="$PREFIX" scr_param --job-id) >id2 && test_cmp id id2
'

test_done
