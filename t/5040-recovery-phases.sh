#!/bin/sh
# 5040-recovery-phases.sh - a recovery measured in phases: a job on 4 of 5 fake
# nodes loses node1; scr_run logs when the launch ended, the node's loss (with
# the time it was lost) and the relaunch, the library when SCR_Init had
# restored and when the program resumed, and scr_log prints each phase in
# order with a plausible length, for an API program and an unmodified one.
. "$top_srcdir/t/test-lib.sh"

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
: "${SCR_TEST_TIMEOUT:=90}"

cluster_up 5 53
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl
export SCR_COPY_TYPE=XOR SCR_SET_SIZE=4 SCR_FLUSH=0
LOG="$PREFIX/.scr/log"
ex="$top_builddir/examples/preload"

fresh() { job_fresh t5040; }

# at PATTERN [N]: the line number of the Nth line of the log matching PATTERN
# (default the first); time_of PATTERN [N]: its time=
at() { grep -n -e "$1" "$LOG" | sed -n "${2:-1}p" | cut -d: -f1; }
time_of() { grep -e "$1" "$LOG" | sed -n "${2:-1}p" | sed 's/.* time=\([0-9.]*\).*/\1/'; }
# before A B: numbers A < B (both set)
before() { test -n "$1" && test -n "$2" && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }' ||
  { echo "not $1 < $2"; return 1; }; }
# not_after A B: A <= B
not_after() { test -n "$1" && test -n "$2" && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }' ||
  { echo "not $1 <= $2"; return 1; }; }

# phases OUT: scr_log's line of failure 1 into $TRASH/OUT, its fields in
# died det rel res rsm total, the rest in what
phases() {
  scr_log --prefix "$PREFIX" >"$TRASH/$1.log" &&
    line=$(awk '/^recovery from/ { on = 1; next } on && $1 == "1" { print; exit }' "$TRASH/$1.log") &&
    test -n "$line" || { cat "$TRASH/$1.log"; return 1; }
  set -- $line
  launch=$2 died=$3 det=$4 rel=$5 res=$6 rsm=$7 total=$8
  shift 8; what="$*"
  echo "launch $launch died $died detection $det relaunch $rel restore $res resume $rsm total $total: $what"
}

# restored_id: the dataset the relaunch restored (its RESTORED event)
restored_id() { sed -n "s/.*event=RESTORED .* dset=\([0-9]*\) .*/\1/p" "$LOG" | head -n 1; }

# within V LOW HIGH: LOW <= V <= HIGH
within() { awk -v v="$1" -v a="$2" -v b="$3" 'BEGIN { exit !(v != "-" && v + 0 >= a && v + 0 <= b) }' ||
  { echo "$1 not within [$2, $3]"; return 1; }; }
# sums: the phases add up to the total (each is rounded to the millisecond)
sums() {
  awk -v a="$det" -v b="$rel" -v c="$res" -v d="$rsm" -v t="$total" \
    'BEGIN { s = a + b + c + d; exit !(s - t < 0.0025 && t - s < 0.0025) }' || { echo "phases do not add up to $total"; return 1; }
}

test_expect_success 'API: node1 lost; scr_run logs the launch, its end, the lost node with its time, the relaunch' '
  fresh && after_dataset 3 scr_cluster kill node1 &&
  on_cluster api SCR_RUNS=3 -- "$APP" --steps 10 --bytes 65536 --step-sleep 300 && wait &&
  test "$(cat "$TRASH/api.status")" = 0 && expect_grep "^done: step 10$" "$TRASH/api" &&
  before "$(at "event=LAUNCH .* launch=1 nodes=node0,node1,node2,node3$")" "$(at "event=LAUNCH_END .* launch=1 status=[1-9]")" &&
  before "$(at "event=LAUNCH_END .* launch=1 ")" "$(at "event=NODE_DOWN .* node=node1 lost_at=[0-9.]* reason=")" &&
  before "$(at "event=NODE_DOWN")" "$(at "event=LAUNCH .* launch=2 nodes=node0,node4,node2,node3$")" &&
  before "$(at "event=LAUNCH .* launch=2 ")" "$(at "event=LAUNCH_END .* launch=2 status=0$")" &&
  lost=$(sed -n "s/.*event=NODE_DOWN .* lost_at=\([0-9.]*\) .*/\1/p" "$LOG") &&
  scr_cluster status | grep "^node1 .* down .* lost at $lost$" &&
  not_after "$lost" "$(time_of "event=LAUNCH_END .* launch=1 ")" &&
  not_after "$(time_of "event=CHECKPOINT_START .* dset=3 ")" "$lost"
'

test_expect_success 'API: the relaunch logs RESTORED once SCR_Init rebuilt, then RESUMED at SCR_Need_checkpoint' '
  init2=$(at "event=INIT " 2) &&
  before "$(at "event=LAUNCH .* launch=2 ")" "$init2" &&
  before "$init2" "$(at "event=RESTORE_COMPLETE .* source=rebuild ")" &&
  id=$(restored_id) && test "$id" -ge 3 &&
  before "$(at "event=RESTORE_COMPLETE .* source=rebuild ")" "$(at "event=RESTORED .* dset=$id name=ckpt.$id seconds=")" &&
  before "$(at "event=RESTORED .* dset=$id ")" "$(at "event=RESUMED .* dset=$id after=SCR_Need_checkpoint$")" &&
  before "$(at "event=RESUMED")" "$(at "event=CHECKPOINT_START .* dset=$((id + 1)) ")" &&
  test "$(grep -c "event=RESUMED" "$LOG")" = 2 && expect_grep "event=RESUMED .* after=SCR_Finalize$" "$LOG"
'

test_expect_success 'API: scr_log prints the phases in order, of plausible lengths, adding up to the total' '
  phases api && id=$(restored_id) &&
  test "$launch" = 1 && within "$died" 0.5 "$SCR_TEST_TIMEOUT" &&
  within "$det" 0 10 && within "$rel" 0 30 && within "$res" 0.001 60 && within "$rsm" 0 30 && sums &&
  within "$total" 0.01 90 && test "$what" = "node1 lost; dataset $id rebuilt; resumed after SCR_Need_checkpoint"
'

test_expect_success 'preload: the program resumes at the end of its restart read, before its next checkpoint' '
  fresh && echo "PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT" >"$PREFIX/.scrconf" &&
  after_dataset 2 scr_cluster kill node1 &&
  on_cluster fpp SCR_RUNS=3 -- "$ex/posix_fpp" --steps 16 --every 2 --bytes 1048576 --step-ms 200 && wait &&
  test "$(cat "$TRASH/fpp.status")" = 0 && expect_grep "^resumed from step [1-9]" "$TRASH/fpp" &&
  id=$(restored_id) && test "$id" -ge 2 &&
  before "$(at "event=RESTORED .* dset=$id ")" "$(at "event=RESUMED .* dset=$id after=restart-read seen_at=dataset-start$")" &&
  before "$(at "event=RESUMED")" "$(at "event=CHECKPOINT_START .* dset=$((id + 1)) ")" &&
  not_after "$(time_of "event=RESTORED .* dset=$id ")" "$(time_of "event=RESUMED")" &&
  before "$(time_of "event=RESUMED")" "$(time_of "event=CHECKPOINT_START .* dset=$((id + 1)) ")" &&
  phases fpp && within "$det" 0 10 && within "$rel" 0 30 && within "$res" 0.001 60 && within "$rsm" 0 30 && sums &&
  test "$what" = "node1 lost; dataset $id rebuilt; resumed after restart-read"
'

test_expect_success 'runs exhausted: the failure is not relaunched, its checkpoint scavenged' '
  fresh && after_dataset 3 scr_cluster kill node1 &&
  on_cluster once -- "$APP" --steps 40 --bytes 4096 --step-sleep 300; wait &&
  test "$(cat "$TRASH/once.status")" != 0 && expect_grep "scr_scavenge: dataset [0-9]* (ckpt\.[0-9]*) copied" "$TRASH/once" &&
  expect_grep "event=POSTRUN .* attempt=1 nodes=node0,node4,node2,node3$" "$LOG" &&
  phases once && test "$rel" = - && test "$res" = - && test "$total" = - && within "$det" 0 10 &&
  test "$what" = "node1 lost; not relaunched, scavenged"
'

test_expect_success 'no event log (SCR_LOG_ENABLE=0): scr_run writes none either' '
  fresh && on_cluster quiet SCR_LOG_ENABLE=0 -- "$APP" --steps 2 --bytes 4096 &&
  test "$(cat "$TRASH/quiet.status")" = 0 && ! test -e "$LOG"
'

test_done
