#!/bin/sh
# Many small routed files per rank (one per variable or block: FILES files of
# KIB KiB each, created, written once and closed, every checkpoint) through
# the preload (SINGLE, into node-local cache), against the same loop run
# natively in a directory of the same node-local storage, without the preload.
# For each rank count (1, then several ranks on one node), runs alternate in
# one invocation so both sides see the same machine; prints each round, the
# median of the per-round ratios, the ratio of the fastest runs, and the
# ratios of the medians and of the fastest of all single checkpoints (a
# stall of this shared machine spoils a whole run more often than one
# checkpoint of it).
#   t/perf/preload-smallfiles.sh [RANKS...] (default: 1 2)
#   environment: FILES (256), KIB (64), CHECKPOINTS (4), ROUNDS (7);
#   BASELINE=another build directory adds its libscr_preload.so as a third
#   side, in the same rounds (an older commit, to compare with)
set -e
files=${FILES:-256} kib=${KIB:-64} checkpoints=${CHECKPOINTS:-4} rounds=${ROUNDS:-7}
[ $# -gt 0 ] || set -- 1 2
. "$(dirname "$0")/perf-preload.sh"
perf_preload_setup preload-smallfiles
# FILES= completes each checkpoint at the close of the rank's last file, as
# an application that declares its files would
echo "PRELOAD=ckpt.{step}/r{rank}_v*.dat TYPE=CHECKPOINT FILES=$files" >"$base/prefix/.scrconf"
# the cache keeps every checkpoint, as the native directory does: eviction
# is not timed
export SCR_CACHE_BASE="$base/cache" SCR_CNTL_BASE="$base/cntl" SCR_COPY_TYPE=SINGLE SCR_FLUSH=0 \
       SCR_JOB_ID=perf SCR_CACHE_SIZE=$((checkpoints + 1))

# each prints the run's total seconds, and appends its single checkpoints'
# times to $base/SIDE_each
run_native() { (cd "$base/native" && mpiexec -n "$1" "$app" . "$files" "$kib" "$checkpoints" | seconds native); }
run_preload() {
  rm -rf "$base/prefix"/ckpt.* "$base/cache" "$base/cntl"
  (cd "$base/prefix" && mpiexec -n "$1" env LD_PRELOAD="$2" "$app" . "$files" "$kib" "$checkpoints" \
     2>"$base/stderr" | seconds "$3")
  # the summary line at MPI_Finalize is expected; anything else is shown
  grep -v 'preload summary:' "$base/stderr" >&2 || true
}
seconds() {
  tee "$base/last" | sed -n 's/^checkpoint seconds \([0-9.]*\).*/\1/p'
  sed -n 's/^checkpoint times //p' "$base/last" | tr ' ' '\n' | grep . >>"$base/$1_each"
}
median_of() { sort -g "$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { echo "$1 $2" | awk '{ printf "%.3f", $1 / $2 }'; }

echo "$files files of $kib KiB per rank per checkpoint, $checkpoints checkpoints per run, $rounds rounds"
for ranks in "$@"; do
  echo "ranks $ranks"
  echo "round  native_s  preload_s  preload/native_throughput${baseline:+  baseline_s  baseline/native}"
  for f in ratios bratios native_s preload_s baseline_s native_each preload_each baseline_each; do : >"$base/$f"; done
  for r in $(seq 1 "$rounds"); do
    rm -rf "$base/native"/*
    # which goes first alternates, so neither always follows the other
    b=
    if [ $((r % 2)) = 1 ]; then
      n=$(run_native "$ranks") p=$(run_preload "$ranks" "$preload" preload)
      [ -z "$baseline" ] || b=$(run_preload "$ranks" "$baseline" baseline)
    else
      [ -z "$baseline" ] || b=$(run_preload "$ranks" "$baseline" baseline)
      p=$(run_preload "$ranks" "$preload" preload) n=$(run_native "$ranks")
    fi
    echo "$(ratio "$n" "$p")" >>"$base/ratios"
    echo "$n" >>"$base/native_s"
    echo "$p" >>"$base/preload_s"
    if [ -n "$baseline" ]; then
      echo "$(ratio "$n" "$b")" >>"$base/bratios"
      echo "$b" >>"$base/baseline_s"
      echo "$r      $n  $p  $(ratio "$n" "$p")  $b  $(ratio "$n" "$b")"
    else
      echo "$r      $n  $p  $(ratio "$n" "$p")"
    fi
  done
  echo "ranks $ranks: median preload/native throughput over $rounds rounds: $(median_of "$base/ratios")"
  [ -z "$baseline" ] ||
    echo "ranks $ranks: median baseline/native throughput over $rounds rounds: $(median_of "$base/bratios")"
  # a run that met a stall of the machine says nothing about either side: the
  # fastest run of each is the steadier figure
  fastest_n=$(sort -g "$base/native_s" | head -1) fastest_p=$(sort -g "$base/preload_s" | head -1)
  echo "ranks $ranks: fastest runs: native $fastest_n s, preload $fastest_p s," \
       "preload/native throughput $(ratio "$fastest_n" "$fastest_p")"
  if [ -n "$baseline" ]; then
    fastest_b=$(sort -g "$base/baseline_s" | head -1)
    echo "ranks $ranks: fastest baseline run $fastest_b s, baseline/native throughput $(ratio "$fastest_n" "$fastest_b")"
  fi
  # single checkpoints, which a stall of the machine spoils fewer of
  for side in preload ${baseline:+baseline}; do
    echo "ranks $ranks: single checkpoints ($(wc -l <"$base/native_each") per side): $side/native throughput" \
         "of the medians $(ratio "$(median_of "$base/native_each")" "$(median_of "$base/${side}_each")")," \
         "of the fastest $(ratio "$(sort -g "$base/native_each" | head -1)" "$(sort -g "$base/${side}_each" | head -1)")"
  done
done
