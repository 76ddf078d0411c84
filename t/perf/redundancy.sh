#!/bin/bash
# redundancy.sh - cost of each redundancy scheme relative to SINGLE, and of
# rebuilding one lost node relative to a checkpoint, measured in one run:
#   t/perf/redundancy.sh [NODES [MIB_PER_RANK [ROUNDS]]]
# Ranks run one per fake node (own UTS namespace, so failure groups differ);
# the schemes alternate round by round so drift affects them alike.
set -eu
builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}
nodes=${1:-4}; mib=${2:-256}; rounds=${3:-3}
bench="$builddir/t/perf/redundancy-bench"
work=$(mktemp -d /dev/shm/scr-redundancy-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

launch() { # launch ARGS...: one rank per fake host
  local args=() i
  for ((i = 0; i < nodes; i++)); do
    [ $i -gt 0 ] && args+=(:)
    args+=(-n 1 unshare --uts sh -c "hostname benchnode$i; exec \"\$0\" \"\$@\"" "$bench" "$@")
  done
  (cd "$work/prefix" && timeout 600 mpiexec "${args[@]}")
}

declare -A complete rebuild
schemes="SINGLE XOR RS PARTNER"
for ((r = 0; r < rounds; r++)); do
  for s in $schemes; do
    rm -rf "$work"/*; mkdir -p "$work/prefix"
    export SCR_PREFIX="$work/prefix" SCR_CACHE_BASE="$work/cache" SCR_CNTL_BASE="$work/cntl"
    export SCR_COPY_TYPE=$s SCR_SET_SIZE=$nodes SCR_SET_FAILURES=2 SCR_FLUSH=0 SCR_JOB_ID=bench
    out=$(launch "$mib" 1)
    # checkpoint time = writing the files + SCR_Complete_checkpoint
    complete[$s]="${complete[$s]:-} $(echo "$out" | awk '{print $4 + $6}')"
    if [ "$s" != SINGLE ]; then
      # lose node 1: its data, redundancy and filemap
      rm -rf "$work"/cache/*/scr.bench/scr.dataset.1/bench.0/rank_1.dat \
             "$work"/cache/*/scr.bench/scr.dataset.1/2_of_* \
             "$work"/cache/*/scr.bench/scr.dataset.1/.partner.0 \
             "$work"/cntl/*/scr.bench/filemap_1.scr
      out=$(launch "$mib" 0)
      rebuild[$s]="${rebuild[$s]:-} $(echo "$out" | awk '{print $2}')"
    fi
  done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
single=$(echo "${complete[SINGLE]}" | median)
printf "%d fake nodes x 1 rank, %d MiB per rank, %d rounds (medians)\n" "$nodes" "$mib" "$rounds"
printf "%-8s %14s %10s %12s %14s\n" scheme checkpoint_s vs_SINGLE rebuild_s rebuild/ckpt
for s in $schemes; do
  c=$(echo "${complete[$s]}" | median)
  if [ "$s" = SINGLE ]; then
    printf "%-8s %14.4f %10.2f %12s %14s\n" "$s" "$c" 1 - -
  else
    b=$(echo "${rebuild[$s]}" | median)
    printf "%-8s %14.4f %10.2f %12.4f %14.2f\n" "$s" "$c" "$(awk -v a="$c" -v b="$single" 'BEGIN {print a / b}')" "$b" \
      "$(awk -v a="$b" -v b="$c" 'BEGIN {print a / b}')"
  fi
done
echo "checkpoint_s: write the files + SCR_Complete_checkpoint; rebuild_s: SCR_Init after one node lost"
