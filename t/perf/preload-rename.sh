#!/bin/bash
# preload-rename.sh - what the write-into-a-temporary-directory-then-rename
# idiom costs an unmodified program under the preload, against writing each
# checkpoint straight into its own directory, on the local test cluster
# (scripts/scr_cluster, needs root): t/perf/preload-rename.sh [NODES [MIB [ROUNDS]]]
# One rank per node writes MIB MiB per checkpoint, 4 checkpoints per run,
# XOR over all nodes, with SCR_FLUSH=0 and SCR_FLUSH=1 (every checkpoint to
# the prefix directory); the two ways alternate within a round. A rename
# that encodes the parity and copies the flushed bytes again costs about one
# more checkpoint; one that only renames costs little.
# Node-local storage is a private tmpfs; the cluster is number
# $SCR_CLUSTER_ID (default 32), removed at exit. KEEP_ERR=PATH keeps each
# run's stderr as PATH.WAY.FLUSH (with SCR_DEBUG=1: where the time goes).
set -eu
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${top_builddir:-$srcdir/build}
app="$builddir/t/perf/preload-write"
preload="$builddir/.libs/libscr_preload.so"
cluster="$srcdir/scripts/scr_cluster"
nodes=${1:-4} mib=${2:-64} rounds=${3:-3}
[ -x "$app" ] && [ -f "$preload" ] ||
  { echo "preload-rename.sh: build first (make check), and set top_builddir if the build is not in ./build" >&2; exit 2; }
. "$srcdir/t/perf/perf-cluster.sh"
perf_cluster_up rename-bench "$nodes" 32
printf '%s\n' 'PRELOAD=ckpt.tmp/rank_{rank}.dat' 'PRELOAD=ckpt.{step}/rank_{rank}.dat' >"$work/rules"
export SCR_PREFIX="$work/prefix" SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl
export SCR_COPY_TYPE=XOR SCR_SET_SIZE=$nodes SCR_CACHE_SIZE=2 SCR_JOB_ID=bench

# run WAY FLUSH: one job from empty nodes and prefix directory; its seconds
run() {
  for n in $(seq -f 'node%g' 0 $((nodes - 1))); do
    "$cluster" kill "$n" >/dev/null && "$cluster" revive "$n" >/dev/null
  done
  rm -rf "$work/prefix" && mkdir -p "$work/prefix" && cp "$work/rules" "$work/prefix/.scrconf"
  local mode=
  [ "$1" = direct ] || mode=rename
  (cd "$work/prefix" && SCR_FLUSH=$2 "$cluster" run --timeout 900 -- \
     env LD_PRELOAD="$preload" "$app" . "$mib" 4 $mode) >"$work/out" 2>"$work/err" ||
    { echo "preload-rename.sh: run '$*' failed:" >&2; cat "$work/err" >&2; return 1; }
  sed -n 's/^checkpoint seconds \([0-9.]*\).*/\1/p' "$work/out"
  [ -z "${KEEP_ERR:-}" ] || cp "$work/err" "$KEEP_ERR.$1.$2"
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "$nodes nodes x 1 rank, $mib MiB per rank and checkpoint, 4 checkpoints per run, XOR"
echo "SCR_FLUSH  round  direct_s  rename_s  rename/direct"
for flush in 0 1; do
  ratios=
  for r in $(seq "$rounds"); do
    d=$(run direct $flush) && t=$(run rename $flush)
    ratio=$(awk -v a="$t" -v b="$d" 'BEGIN {printf "%.3f", a / b}')
    ratios="$ratios $ratio"
    printf '%9s  %5d  %8.3f  %8.3f  %13s\n' "$flush" "$r" "$d" "$t" "$ratio"
  done
  echo "SCR_FLUSH=$flush: median rename/direct $(echo "$ratios" | median)"
done
