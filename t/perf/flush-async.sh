#!/bin/sh
# flush-async.sh - what flushing every checkpoint costs a program that computes
# between checkpoints, synchronously and in the background (SCR_FLUSH_ASYNC=1),
# against not flushing: t/perf/flush-async.sh [RANKS [MB_PER_RANK [STEPS [MS_PER_STEP [ROUNDS]]]]]
# The three ways run in turn in each round; the ratios are of the job's wall time.
set -eu
builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}
ranks=${1:-2}; mb=${2:-64}; steps=${3:-8}; ms=${4:-300}; rounds=${5:-3}
app="$builddir/t/helpers/scr-test-app"
[ -x "$app" ] || { echo "build first (make check), and set top_builddir if the build is not in ./build" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SCR_CACHE_BASE="${SCR_CACHE_BASE:-/dev/shm}/scr-flush-bench.$$" SCR_CNTL_BASE="$work/cntl" SCR_JOB_ID=bench
export SCR_CACHE_SIZE=2

# one job: seconds of wall time
job() {
  rm -rf "$work/prefix" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$work/prefix"
  start=$(date +%s.%N)
  (cd "$work/prefix" && SCR_PREFIX="$work/prefix" env "$@" mpiexec -n "$ranks" "$app" --steps "$steps" \
     --bytes $((mb * 1000000)) --step-sleep "$ms" >/dev/null)
  end=$(date +%s.%N)
  echo "$start $end" | awk '{ printf "%.3f\n", $2 - $1 }'
}

for round in $(seq "$rounds"); do
  none=$(job SCR_FLUSH=0)
  sync=$(job SCR_FLUSH=1 SCR_FLUSH_ASYNC=0)
  async=$(job SCR_FLUSH=1 SCR_FLUSH_ASYNC=1)
  echo "$none $sync $async"
done >"$work/runs"
rm -rf "$SCR_CACHE_BASE"
awk -v ranks="$ranks" -v mb="$mb" -v steps="$steps" -v ms="$ms" '
  { n++; none[n] = $1; sync[n] = $2; async[n] = $3; rs[n] = $2 / $1; ra[n] = $3 / $1 }
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j] < a[j - 1]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    printf "%d ranks x %d MB, %d checkpoints, %d ms of computing per step; wall time of each job in s\n", ranks, mb, steps, ms
    for (i = 1; i <= n; i++) printf "  round %d: no flush %.2f, flush every checkpoint %.2f, in the background %.2f\n", i, none[i], sync[i], async[i]
    printf "median ratio to no flush: synchronous %.3f, asynchronous %.3f\n", median(rs, n), median(ra, n)
  }' "$work/runs"
