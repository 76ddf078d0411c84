#!/bin/sh
# The fixed cost of a checkpoint under the preload: every rank writes one empty
# routed file per checkpoint (SINGLE, one node, no flush), so what is timed is
# SCR's metadata alone (filemap, flush.scr, agreement collectives), against the
# same loop run natively, for each rank count, in one invocation, alternating.
# It then counts, per checkpoint, the MPI calls (t/perf/mpi-count.c, an
# interposer built here with mpicc) and the synchronous writes (strace -c:
# fsync, rename, openat) of both sides: the difference of a run of 2C and one
# of C checkpoints, divided by C, so that start-up and MPI_Finalize cancel.
#   t/perf/checkpoint-fixed-cost.sh [RANKS...] (default: 1 2 4 8)
#   environment: CHECKPOINTS (30 per timed run), ROUNDS (5), COUNT (1: 0 skips
#   the counts); BASELINE=another build directory adds its libscr_preload.so
#   as a third side, in the same rounds and counts (an older commit)
set -e
srcdir=$(cd "$(dirname "$0")" && pwd)
checkpoints=${CHECKPOINTS:-30} rounds=${ROUNDS:-5} count=${COUNT:-1}
[ $# -gt 0 ] || set -- 1 2 4 8
. "$(dirname "$0")/perf-preload.sh"
perf_preload_setup preload-smallfiles
echo "PRELOAD=ckpt.{step}/r{rank}_v*.dat TYPE=CHECKPOINT FILES=1" >"$base/prefix/.scrconf"
# the cache keeps two checkpoints, as a real job's would: every checkpoint
# after the second evicts one, and that eviction is part of the fixed cost
export SCR_CACHE_BASE="$base/cache" SCR_CNTL_BASE="$base/cntl" SCR_COPY_TYPE=SINGLE SCR_FLUSH=0 \
       SCR_JOB_ID=fixed SCR_CACHE_SIZE=2

sides="native preload${baseline:+ baseline}"
library_of() { case $1 in preload) echo "$preload" ;; baseline) echo "$baseline" ;; esac; }

# run SIDE RANKS CHECKPOINTS [WRAP...]: the program's output in $base/out;
# WRAP runs mpiexec (strace) and LD_PRELOAD_FIRST goes before the library
run() {
  side=$1 ranks=$2 n=$3
  shift 3
  rm -rf "$base/prefix"/ckpt.* "$base/native"/* "$base/cache" "$base/cntl" "$base/prefix/.scr"
  if [ "$side" = native ]; then
    (cd "$base/native" && "$@" mpiexec -n "$ranks" \
       env ${LD_PRELOAD_FIRST:+LD_PRELOAD="$LD_PRELOAD_FIRST"} "$app" . 1 0 "$n" >"$base/out" 2>"$base/err")
  else
    lib=$(library_of "$side")
    (cd "$base/prefix" && "$@" mpiexec -n "$ranks" \
       env LD_PRELOAD="${LD_PRELOAD_FIRST:+$LD_PRELOAD_FIRST:}$lib" "$app" . 1 0 "$n" >"$base/out" 2>"$base/err")
  fi
  grep -v 'preload summary:\|^mpi-count' "$base/err" >&2 || true
}
median_of() { sort -g "$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "empty checkpoints: 1 file of 0 bytes per rank, $checkpoints checkpoints per run, $rounds rounds; ms per checkpoint"
echo "(median of the single checkpoints, from a barrier before the open to one after the close)"
for ranks in "$@"; do
  for s in $sides; do : >"$base/${s}_each"; done
  for r in $(seq 1 "$rounds"); do
    # which side goes first turns each round, so that none always follows another
    order=$sides
    [ $((r % 2)) = 1 ] || order=$(echo "$sides" | tr ' ' '\n' | tac | tr '\n' ' ')
    for s in $order; do
      run "$s" "$ranks" "$checkpoints"
      sed -n 's/^checkpoint times //p' "$base/out" | tr ' ' '\n' | grep . >>"$base/${s}_each"
    done
  done
  native=$(median_of "$base/native_each")
  line="ranks $ranks: native $(echo "$native" | awk '{ printf "%.3f", $1 * 1000 }') ms"
  for s in preload ${baseline:+baseline}; do
    m=$(median_of "$base/${s}_each")
    line="$line, $s $(echo "$m" | awk '{ printf "%.3f", $1 * 1000 }') ms"
    line="$line (+$(echo "$m $native" | awk '{ printf "%.3f", ($1 - $2) * 1000 }') ms)"
  done
  echo "$line"
done

[ "$count" = 1 ] || exit 0
command -v mpicc >/dev/null && command -v strace >/dev/null ||
  { echo "no mpicc or strace: the counts are skipped" >&2; exit 0; }
mpicc -O2 -shared -fPIC -o "$base/mpi-count.so" "$srcdir/mpi-count.c" -ldl
# counts of rank 0 (MPI) or of every process (strace) for a run of N checkpoints
mpi_counts() {
  LD_PRELOAD_FIRST="$base/mpi-count.so" run "$1" "$2" "$3"
  sed -n 's/^mpi-count //p' "$base/err" | tr ' ' '\n' | paste - -
}
sys_counts() {
  run "$1" "$2" "$3" strace -f -c -o "$base/strace" -e trace=fsync,fdatasync,rename,renameat,renameat2,openat,fchmod
  # the columns: % time, seconds, usecs/call, calls, [errors], syscall
  awk '$NF ~ /^(fsync|fdatasync|rename|renameat|renameat2|openat|fchmod)$/ { print $NF, $4 }' "$base/strace"
}
# per checkpoint: (count of a run of 2C - count of a run of C) / C, per name
per_checkpoint() {
  awk -v c="$3" -v scale="$4" 'NR == FNR { a[$1] = $2; next } { d = ($2 - a[$1]) / c / scale; if (d > 0.005) printf " %s %.2f", $1, d }' "$1" "$2"
}
c=10
echo "per checkpoint (runs of $c and $((2 * c)) checkpoints, differenced):"
for ranks in "$@"; do
  for s in $sides; do
    mpi_counts "$s" "$ranks" "$c" >"$base/m1"
    mpi_counts "$s" "$ranks" "$((2 * c))" >"$base/m2"
    sys_counts "$s" "$ranks" "$c" >"$base/s1"
    sys_counts "$s" "$ranks" "$((2 * c))" >"$base/s2"
    echo "ranks $ranks $s: MPI calls (rank 0):$(per_checkpoint "$base/m1" "$base/m2" "$c" 1)"
    echo "ranks $ranks $s: system calls per rank:$(per_checkpoint "$base/s1" "$base/s2" "$c" "$ranks")"
  done
done
