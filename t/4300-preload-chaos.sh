#!/bin/sh
# 4300-preload-chaos.sh - the chaos harness (issue 16): unmodified programs under
# the preload, killed at random moments and relaunched, must end right.
#
# 4 fake nodes x 2 ranks, XOR in sets of 4, SCR_CACHE_SIZE=2, SCR_FLUSH 0 or 3
# by scenario. One TAP test per scenario (idiom, seed, SCR_FLUSH): the idiom's
# program is killed at fault points of the library (SCR_FAULT_KILL), by
# SIGKILL after a random delay, with a node's cache lost now and then, and
# relaunched until it completes (t/chaos.sh says how and what is checked).
# Idioms: the five of t/helpers/chaos-app and the examples stdio_latest,
# dirscan, hdf5_perrank, fortran_unformatted and cxx_ofstream --keep 2.
#
# make check runs two short scenarios per idiom with a fixed seed. By hand:
#   SCR_CHAOS_SEED=N      first seed (default 4300); scenario i has seed N+i
#   SCR_CHAOS_KILLS=K     long mode: scenarios round the idioms until K kill
#                         points were taken (K >= 200 for issue 16)
#   SCR_CHAOS_IDIOMS="a b"  only these idioms
#   SCR_CHAOS_ONLY=IDIOM:SEED:FLUSH  just that scenario, as a failure prints it
#   SCR_CHAOS_REPLAY='run1=... run2=...'  with SCR_CHAOS_ONLY: those runs
#                         exactly, instead of the generator's
#   SCR_CHAOS_NATIVE=1    the harness's own check: the same loop without the
#                         preload (timed kills only), which must always pass
# Each run's output stays in $TRASH/<idiom>.<seed>.run<N>.{out,err,status}
# (SCR_TEST_KEEP=1 keeps them after a failure); $TRASH/chaos.log lists runs.
. "$top_srcdir/t/test-lib.sh"
. "$top_srcdir/t/chaos.sh"

chaos_native=${SCR_CHAOS_NATIVE:-0}
if [ "$chaos_native" != 1 ]; then
  preload_prelude "the chaos harness"
fi
if ! test -x "$chaos_app"; then
  test_skip "the chaos harness" "no $chaos_app"
  test_done; exit 0
fi

seed=${SCR_CHAOS_SEED:-4300}
kills=${SCR_CHAOS_KILLS:-0}
idioms=${SCR_CHAOS_IDIOMS:-$chaos_idioms_all}
: "${SCR_TEST_TIMEOUT:=60}"
chaos_timeout=$SCR_TEST_TIMEOUT
# 64 KB per rank; the short mode checkpoints after steps 2, 4, 6 and 8, the
# long one twice as often; natively, where a run is mostly MPI's start-up,
# 20 times, so that timed kills fall into checkpoints too
if [ "$chaos_native" = 1 ]; then chaos_steps=40; elif [ "$kills" -gt 0 ]; then chaos_steps=16; else chaos_steps=8; fi
chaos_every=2
chaos_args="--steps $chaos_steps --every $chaos_every --bytes 65536"
chaos_loss_percent=40
chaos_nodes=node0,node1,node2,node3

cluster_up 4 61
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_JOB_ID=t4300
export SCR_COPY_TYPE=XOR SCR_SET_SIZE=4 SCR_CACHE_SIZE=2
unset SCR_FAULT_KILL

# scenario IDIOM SEED FLUSH: one TAP test
scenario() {
  # the delays of timed kills span a run: as long as the median of those
  # that completed so far (a first guess before that)
  chaos_timed_max=$(sort -n "$TRASH/durations.$1" 2>/dev/null | awk '{ d[NR] = $1 } END { if (NR) print d[int((NR + 1) / 2)] }')
  : "${chaos_timed_max:=3000}"
  test_expect_success "$1, seed $2, SCR_FLUSH=$3${SCR_CHAOS_REPLAY:+, replayed}$( [ "$chaos_native" = 1 ] && echo ', native')" \
    "chaos_scenario $1 $2 $3"
  # its runs, for the log
  grep "^$1\.$2: " "$TRASH/chaos.log" 2>/dev/null | sed 's/^/#   /'
}

# figure KEY: the sum over the scenarios so far
figure() {
  cat "$TRASH"/figures.* 2>/dev/null | tr ' ' '\n' | sed -n "s/^$1=//p" | awk '{ s += $1 } END { print s + 0 }'
}

if [ -n "${SCR_CHAOS_ONLY:-}" ]; then
  IFS=: read -r only_idiom only_seed only_flush <<EOF
$SCR_CHAOS_ONLY
EOF
  seed=$only_seed
  scenario "$only_idiom" "$only_seed" "${only_flush:-0}"
else
  # rounds of the idioms: two in the short mode, as many as the kills take
  # in the long one; half the scenarios flush every third checkpoint (an
  # idiom's in every other round), half never
  i=0 round=0
  while :; do
    k=0
    for idiom in $idioms; do
      scenario "$idiom" "$((seed + i))" "$(( (round + k) % 2 * 3 ))"
      i=$((i + 1)) k=$((k + 1))
      # (and a bound, should the kills come too late to count)
      [ "$kills" -gt 0 ] && { [ "$(figure kills)" -ge "$kills" ] || [ "$i" -ge $((4 * kills)) ]; } && break 2
      # a long run lets the other cluster tests in between its scenarios
      # (cluster_lock's fd 9; this cluster stays up, on its own bridge)
      if [ "$kills" -gt 0 ]; then flock -u 9; sleep 1; flock 9; fi
    done
    round=$((round + 1))
    [ "$kills" -gt 0 ] || [ "$round" -lt 2 ] || break
  done
fi

# the figures
fault_places=$(sed -n "s/^.*seq='\(.*\)'$/\1/p" "$TRASH"/figures.* 2>/dev/null | tr ' ' '\n' |
  sed -n 's/^run[0-9]*=\(fault:[a-z]*\|timed\|none\).*/\1/p' | sed 's/^fault://' | sort | uniq -c |
  awk '{ printf "%s%s %d", sep, $2, $1; sep = ", " }')
echo "# chaos figures (seed $seed$( [ "$chaos_native" = 1 ] && echo ', native')): $test_count scenarios," \
  "$test_failed failed; $(figure runs) runs"
echo "# kill points: $(figure kills) ($(figure faults) at fault points, $(figure timed) timed);" \
  "runs by kill: $fault_places"
echo "# node losses: $(figure losses); restores (runs that resumed): $(figure restores)"
echo "# wrong results: $(figure wrong) (must be 0); hangs: $(figure hangs) (must be 0)"
if [ "$test_failed" -gt 0 ]; then
  for f in "$TRASH"/figures.*; do
    grep -q 'failed=1' "$f" && echo "# failed: ${f##*/figures.} $(sed -n "s/^.*\(seq='.*'\)$/\1/p" "$f")"
  done
fi

test_done
