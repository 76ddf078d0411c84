#!/bin/sh
# preload-children.sh - what libscr_preload.so costs the processes a rank starts
# (cat, gzip, a shell), which see the rank's checkpoint files through
# SCR_PRELOAD_PARENT: t/perf/preload-children.sh [COUNT [ROUNDS]]
# Per call on a path no rule matches, see preload-passthrough.sh (its "a rank s
# child" line); this measures a whole process, start to exit, in rounds that
# alternate the configurations.
set -eu
builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}
count=${1:-300}; rounds=${2:-5}
spawn="$builddir/t/perf/preload-spawn"
preload="$builddir/.libs/libscr_preload.so"
fileops="$builddir/t/helpers/mpi-fileops"
rules="$(cd "$(dirname "$0")" && pwd)/preload-rules.scrconf"
[ -x "$spawn" ] && [ -x "$fileops" ] && [ -f "$preload" ] ||
  { echo "build first (make check), and set top_builddir if the build is not in ./build" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir data && head -c 65536 /dev/urandom >data/input.dat
# the ten rules of preload-passthrough.sh
cp "$rules" .scrconf && echo SCR_FLUSH=0 >>.scrconf
# a rank's checkpoint of 64 KiB, left in cache for the children to read
export SCR_CACHE_BASE="$work/cache" SCR_CNTL_BASE="$work/cntl" SCR_JOB_ID=perfchild
mkdir ckpt.1
mpiexec -n 1 env LD_PRELOAD="$preload" "$fileops" copy:data/input.dat=ckpt.1/rank_0.dat >/dev/null
parent="1:1:0:-1:$work:$work/cntl/$(id -un)/scr.perfchild:$work/cache/$(id -un)/scr.perfchild:$work/.scrconf"
# the variable must lead to the file, or the numbers measure nothing
SCR_PRELOAD_PARENT="$parent" LD_PRELOAD="$preload" cmp -s ckpt.1/rank_0.dat data/input.dat ||
  { echo "a child does not read the cached checkpoint: nothing to measure" >&2; exit 1; }

# one line per run: CONFIG WALL CPU
for round in $(seq "$rounds"); do
  for config in plain inert child child-reads; do
    case $config in
      plain) "$spawn" "$count" /bin/cat data/input.dat ;;
      inert) LD_PRELOAD="$preload" "$spawn" "$count" /bin/cat data/input.dat ;;
      child) SCR_PRELOAD_PARENT="$parent" LD_PRELOAD="$preload" "$spawn" "$count" /bin/cat data/input.dat ;;
      child-reads) SCR_PRELOAD_PARENT="$parent" LD_PRELOAD="$preload" "$spawn" "$count" /bin/cat ckpt.1/rank_0.dat ;;
    esac | sed "s/^/$config /"
  done
done >runs.txt

awk -v rounds="$rounds" -v count="$count" '
  function median(key, what,   n, j, m, t, v) {
    n = runs[key]
    for (j = 1; j <= n; j++) v[j] = value[key, what, j]
    for (j = 2; j <= n; j++) for (m = j; m > 1 && v[m] < v[m - 1]; m--) { t = v[m]; v[m] = v[m - 1]; v[m - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  { n = ++runs[$1]; value[$1, "wall", n] = $3; value[$1, "cpu", n] = $5 }
  END {
    printf "a process started and waited for, %d rounds of %d: median over rounds of the median\n", rounds, count
    printf "wall time and of the mean CPU time (user + system) per process, in microseconds\n"
    split("plain inert child child-reads", configs, " ")
    names["plain"] = "cat of a 64 KiB file, no preload"
    names["inert"] = " preload, no variable (inert)"
    names["child"] = " a rank s child (rules loaded)"
    names["child-reads"] = " the same child reading the rank s cached 64 KiB (view loaded)"
    for (c = 1; c <= 4; c++) {
      key = configs[c]
      printf "  %-66s wall %7.0f  cpu %6.0f\n", names[key], median(key, "wall"), median(key, "cpu")
    }
  }' runs.txt
