#!/bin/sh
# checkpoint-bandwidth.sh - run the cache-vs-direct checkpoint benchmark:
#   t/perf/checkpoint-bandwidth.sh [RANKS [MIB_PER_RANK [REPETITIONS]]]
# Both sides write to the same device (SCR_CACHE_BASE, default /dev/shm).
set -eu
builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}
ranks=${1:-4}; mib=${2:-256}; reps=${3:-5}
base=${SCR_CACHE_BASE:-/dev/shm}
work=$(mktemp -d)
trap 'rm -rf "$work" "$base/scr-bench-direct"' EXIT
cd "$work"
SCR_PREFIX="$work" SCR_FLUSH=0 SCR_CACHE_SIZE=1 SCR_CACHE_BASE="$base" SCR_CNTL_BASE="$work/cntl" \
  mpiexec -n "$ranks" "$builddir/t/perf/checkpoint-bandwidth" "$mib" "$reps" "$base/scr-bench-direct"
