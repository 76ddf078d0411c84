#!/bin/bash
# preload-layouts.sh - preload-passthrough.sh over several placements of the
# wrappers' code in its pages: t/perf/preload-layouts.sh [PLACEMENTS [ROUNDS]]
#
# After a system call, which 64-byte lines of the wrappers share cache sets
# and predictor entries with the kernel and libc depends on where the code
# lies within its 4 KiB pages, and that moves whenever any code before it
# changes size: one build can measure 1% faster or slower than the next
# with the same hot code. This links copies of libscr_preload.so with
# 0, 1, ... PLACEMENTS-1 times 4096/PLACEMENTS bytes of cold code ahead of
# the wrappers (the build itself is left as it is), runs the pass-through
# benchmark on each, and prints each placement's loop ratios and their mean.
set -eu
builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}
placements=${1:-8}; rounds=${2:-2}
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$builddir/t/perf/preload-passthrough" ] && [ -f "$builddir/libscr_preload.la" ] ||
  { echo "build first (make check), and set top_builddir if the build is not in ./build" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$builddir"
# the link command as make runs it (-W: as if its first object had changed)
link=$(make -n -W wrappers/libscr_preload_la-scr_preload_state.lo V=1 libscr_preload.la 2>/dev/null |
         grep -E -- "--mode=link.* -o libscr_preload.la " | head -1)
[ -n "$link" ] || { echo "preload-layouts: cannot find how libscr_preload.la is linked" >&2; exit 1; }
step=$((4096 / placements))
for k in $(seq 0 $((placements - 1))); do
  mkdir -p "$work/$k/.libs" "$work/$k/t/perf"
  pad=$((k * step)); asm=""
  [ "$pad" -eq 0 ] || asm="__asm__ volatile(\".skip $pad, 0x90\");"
  echo "__attribute__((cold, used, noinline)) void scr_preload_layout_pad(void) { $asm }" >"$work/pad$k.c"
  ./libtool --quiet --tag=CC --mode=compile gcc -O2 -c "$work/pad$k.c" -o "$work/pad$k.lo"
  eval "${link/ -o libscr_preload.la / -o $work/$k/libscr_preload.la $work/pad$k.lo }" >/dev/null
  ln -s "$builddir/t/perf/preload-passthrough" "$work/$k/t/perf/preload-passthrough"
done
cd "$work"
for k in $(seq 0 $((placements - 1))); do
  printf '%s ' "$k"
  top_builddir="$work/$k" sh "$here/preload-passthrough.sh" 40000 "$rounds" |
    awk '/10 rules|baseline screen/ { gsub(/[()]/, "", $NF); printf "%s ", $NF } END { print "" }'
done >ratios.txt
# per placement: outside, then the baseline screen's, absolute, relative
awk -v rounds="$rounds" '
  {
    printf "placement %d: outside %s, absolute %s, relative %s (baseline screen: %s, %s, %s)\n",
           $1, $2, $4, $6, $3, $5, $7
    for (i = 2; i <= 7; i++) sum[i] += $i
  }
  END {
    printf "loop ratio, 10 rules, no match, mean over %d placements (%d runs each):\n", NR, rounds
    printf "  outside the prefix %5.3f, absolute under it %5.3f, relative %5.3f\n", sum[2] / NR, sum[4] / NR, sum[6] / NR
    printf "  with the baseline screen: %5.3f, %5.3f, %5.3f\n", sum[3] / NR, sum[5] / NR, sum[7] / NR
  }' ratios.txt
