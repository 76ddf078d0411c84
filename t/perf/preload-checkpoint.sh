#!/bin/sh
# Checkpoint bandwidth of an unmodified program through the preload (SINGLE,
# into node-local cache) against the same program writing the same bytes
# natively into the same cache directory (which keeps every checkpoint: so
# does the cache here, SCR_CACHE_SIZE above the count, so eviction is not
# timed). Runs alternate in one invocation,
# so both see the same machine; prints each pair and the ratio of the medians.
# The machine's own write speed into tmpfs varies by 2-4x from one run to the
# next (seen here: native runs of the same 2 GiB from 0.38 s to 2.03 s), so
# the script also compares single checkpoints: the fastest of each side, and
# the medians over all checkpoints of all rounds.
#   t/perf/preload-checkpoint.sh [RANKS] [MIB-PER-RANK] [CHECKPOINTS] [ROUNDS]
set -e
ranks=${1:-2} mib=${2:-256} checkpoints=${3:-4} rounds=${4:-5}
. "$(dirname "$0")/perf-preload.sh"
perf_preload_setup preload-write
echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat TYPE=CHECKPOINT' >"$base/prefix/.scrconf"
export SCR_CACHE_BASE="$base/cache" SCR_CNTL_BASE="$base/cntl" SCR_COPY_TYPE=SINGLE SCR_FLUSH=0 \
       SCR_JOB_ID=perf SCR_CACHE_SIZE=$((checkpoints + 1))

run_native() { (cd "$base/native" && mpiexec -n "$ranks" "$app" . "$mib" "$checkpoints" | seconds native); }
run_preload() {
  (cd "$base/prefix" && mpiexec -n "$ranks" env LD_PRELOAD="$preload" "$app" . "$mib" "$checkpoints" |
   seconds preload)
}
# the run's total on stdout; its single checkpoints appended to $base/SIDE_each
seconds() {
  tee "$base/last" | sed -n 's/^checkpoint seconds \([0-9.]*\).*/\1/p'
  sed -n 's/^checkpoint times //p' "$base/last" | tr ' ' '\n' | grep . >>"$base/$1_each"
}
echo "ranks $ranks, $mib MiB per rank, $checkpoints checkpoints per run"
echo "round  native_s  preload_s  preload/native_bandwidth"
: >"$base/ratios" && : >"$base/native_s" && : >"$base/preload_s" && : >"$base/native_each" && : >"$base/preload_each"
for r in $(seq 1 "$rounds"); do
  rm -rf "$base/native"/* "$base/cache" "$base/cntl"
  # which goes first alternates, so neither always follows the other
  if [ $((r % 2)) = 1 ]; then
    n=$(run_native) p=$(run_preload)
  else
    p=$(run_preload) n=$(run_native)
  fi
  ratio=$(echo "$n $p" | awk '{ printf "%.3f", $1 / $2 }')
  echo "$ratio" >>"$base/ratios"
  echo "$n" >>"$base/native_s"
  echo "$p" >>"$base/preload_s"
  echo "$r      $n  $p  $ratio"
done
sort -n "$base/ratios" | awk '{ a[NR] = $1 } END { printf "median preload/native bandwidth: %s\n", a[int((NR + 1) / 2)] }'
# a run that met a stall of the machine (either side, seconds long) says
# nothing about either: the fastest run of each side is the steadier figure
echo "$(sort -n "$base/native_s" | head -1) $(sort -n "$base/preload_s" | head -1)" |
  awk '{ printf "fastest runs: native %.3f s, preload %.3f s, preload/native bandwidth %.3f\n", $1, $2, $1 / $2 }'
median_of() { sort -g "$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "$(sort -g "$base/native_each" | head -1) $(sort -g "$base/preload_each" | head -1) \
$(median_of "$base/native_each") $(median_of "$base/preload_each") $(wc -l <"$base/native_each")" |
  awk '{ printf "single checkpoints (%d per side): fastest native %.4f s, preload %.4f s, ratio %.3f; median native %.4f s, preload %.4f s, ratio %.3f\n", $5, $1, $2, $1 / $2, $3, $4, $3 / $4 }'
