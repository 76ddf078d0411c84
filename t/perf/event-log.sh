#!/bin/bash
# event-log.sh - what the event log (on by default) costs: the same job of many
# small checkpoints with SCR_LOG_ENABLE=1 and =0, in turn in each round (the order
# alternating), as the ratio of wall times: t/perf/event-log.sh [RANKS [STEPS [BYTES [ROUNDS]]]]
# Small checkpoints are the worst case: the log's appends weigh most next to them.
# CPU time (user + system of every process of the job) is reported as well: on a
# shared machine it varies less than wall time.
set -eu
builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}
ranks=${1:-2}; steps=${2:-200}; bytes=${3:-4096}; rounds=${4:-5}
app="$builddir/t/helpers/scr-test-app"
[ -x "$app" ] || { echo "build first (make check), and set top_builddir if the build is not in ./build" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SCR_CACHE_BASE="${SCR_CACHE_BASE:-/dev/shm}/scr-log-bench.$$" SCR_CNTL_BASE="$work/cntl" SCR_JOB_ID=bench
export SCR_FLUSH=0

# one job: seconds of wall time, CPU seconds, and the number of lines it logged
job() {
  rm -rf "$work/prefix" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$work/prefix"
  local TIMEFORMAT='%R %U %S' t
  t=$( { time (cd "$work/prefix" && SCR_PREFIX="$work/prefix" SCR_LOG_ENABLE="$1" mpiexec -n "$ranks" "$app" \
       --steps "$steps" --bytes "$bytes" >/dev/null 2>&1); } 2>&1 )
  lines=$(cat "$work/prefix/.scr/log" 2>/dev/null | wc -l)
  echo "$t $lines" | awk '{ printf "%.3f %.3f %d\n", $1, $2 + $3, $4 }'
}

for round in $(seq "$rounds"); do
  if [ $((round % 2)) = 1 ]; then on=$(job 1); off=$(job 0); else off=$(job 0); on=$(job 1); fi
  echo "$on $off"
done >"$work/runs"
rm -rf "$SCR_CACHE_BASE"
awk -v ranks="$ranks" -v steps="$steps" -v bytes="$bytes" '
  { n++; on[n] = $1; con[n] = $2; lines = $3; off[n] = $4; coff[n] = $5
    r[n] = $1 / $4; c[n] = $2 / $5; d[n] = $1 - $4 }
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j] < a[j - 1]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    printf "%d ranks, %d checkpoints of %d bytes per rank; %d log lines per job\n", ranks, steps, bytes, lines
    for (i = 1; i <= n; i++)
      printf "  round %d: wall s on %.3f off %.3f (ratio %.3f); CPU s on %.3f off %.3f (ratio %.3f)\n", i, on[i], off[i],
             on[i] / off[i], con[i], coff[i], con[i] / coff[i]
    printf "median ratio log on / log off: wall time %.3f, CPU time %.3f\n", median(r, n), median(c, n)
  }' "$work/runs"
