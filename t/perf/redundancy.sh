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
    complete[$s]="${complete[$s]:-} $(echo "$out" | awk '{print $6}')"
    ckpt_write=$(echo "$out" | awk '{print $4}')
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
printf "%-8s %12s %10s %12s\n" scheme complete_s vs_SINGLE rebuild_s
for s in $schemes; do
  c=$(echo "${complete[$s]}" | median)
  b=$( [ "$s" = SINGLE ] && echo - || echo "${rebuild[$s]}" | median)
  printf "%-8s %12.4f %10s %12s\n" "$s" "$c" "-" "$b"
done
echo "(complete_s: time inside SCR_Complete_checkpoint; SINGLE does no redundancy work, so"
echo " compare each scheme's complete_s with the time to write the checkpoint: ${ckpt_write}s)"
