#!/bin/sh
# preload-flush.sh - the preload layer's background flush (SCR_FLUSH_ASYNC=1,
# scr_preload(7) FLUSH) against no flush and the synchronous flush, side by
# side in one run (rounds alternate the order):
#   compute   an unmodified program (t/perf/preload-compute) checkpoints, then
#             computes in bulk-synchronous steps while its checkpoint is copied
#             in the background: compute time flushed / not flushed (target <= 1.05
#             at the default throttle)
#   close     the time in the close() that completes a checkpoint (and, in the
#             background mode, publishes the one before and hands this one over):
#             flushed / not flushed (target <= 1.1), the synchronous flush beside it
#   throttle  the copy's bandwidth, measured on the stage, against SCR_FLUSH_ASYNC_BW
#             (target within 10%)
#   example   a whole run of examples/preload/posix_fpp with SCR_FLUSH=1, background
#             / synchronous, the cache on tmpfs and on disk
# The prefix directory is on disk (under $TMPDIR, /tmp).
#   t/perf/preload-flush.sh [RANKS [MIB-PER-RANK [ROUNDS [COMPUTE-SECONDS]]]]
set -e
build=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}
ranks=${1:-2} mib=${2:-64} rounds=${3:-5} phase=${4:-4}
app="$build/t/perf/preload-compute"
fpp="$build/examples/preload/posix_fpp"
preload="$build/.libs/libscr_preload.so"
[ -x "$app" ] && [ -x "$fpp" ] && [ -f "$preload" ] ||
  { echo "build first (make check), and set top_builddir if the build is not in ./build" >&2; exit 1; }
disk=$(mktemp -d "${TMPDIR:-/tmp}/scr-perf-flush.XXXXXX")
shm=$(mktemp -d /dev/shm/scr-perf-flush.XXXXXX)
trap 'rm -rf "$disk" "$shm"' EXIT
export SCR_CNTL_BASE="$shm/cntl" SCR_COPY_TYPE=SINGLE SCR_JOB_ID=perf SCR_CACHE_SIZE=2
rules='PRELOAD=ckpt.{step}/rank_{rank}.dat TYPE=CHECKPOINT'
checkpoints=5

# fresh CACHE: an empty prefix directory with the rules, empty cache and control directories
fresh() {
  rm -rf "$disk/prefix" "$disk/cache" "$shm/cache" "$shm/cntl" && mkdir -p "$disk/prefix" &&
    echo "$rules" >"$disk/prefix/.scrconf" && export SCR_CACHE_BASE="$1/cache"
}
# compute_run MODE...: preload-compute under the preload with the variables
# given; its lines in $disk/out
compute_run() {
  fresh "$shm"
  (cd "$disk/prefix" && env "$@" mpiexec -n "$ranks" env LD_PRELOAD="$preload" "$app" . "$mib" "$checkpoints" "$work") \
    >"$disk/out" 2>"$disk/err"
}
# column NAME FIRST: the median over checkpoints FIRST.. of the run's NAME seconds
median() { sort -g | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
column() {
  awk -v name="$1" -v first="$2" '$1 == "checkpoint" && $2 >= first {
      for (i = 3; i < NF; i += 2) if ($i == name) print $(i + 1) }' "$disk/out" | median
}

rate=$(mpiexec -n "$ranks" "$app" . 0 0 50 | sed -n 's/^rate //p')
work=$(echo "$rate $phase" | awk '{ w = int($1 * $2 / 10); print (w > 0 ? w : 1) }')
echo "$ranks ranks on one node, $mib MiB per rank per checkpoint, $checkpoints checkpoints a run, compute phases of" \
  "$phase s ($work M multiply-adds a step); cache on tmpfs, prefix on disk"

echo "-- compute and close (medians over checkpoints 2-$checkpoints of each run; seconds)"
echo "round  none:close compute  sync:close compute  background:close compute"
: >"$disk/r_compute" && : >"$disk/r_close" && : >"$disk/r_sync" && : >"$disk/r_cpu"
for r in $(seq 1 "$rounds"); do
  for mode in none sync async; do
    case $mode in
      none) compute_run SCR_FLUSH=0 ;;
      sync) compute_run SCR_FLUSH=1 SCR_FLUSH_ASYNC=0 ;;
      async) compute_run SCR_FLUSH=1 SCR_FLUSH_ASYNC=1 SCR_DEBUG=1 ;;
    esac
    eval "${mode}_close=$(column close 2) ${mode}_compute=$(column compute 2)"
  done
  # the CPU the daemon took, against the run's time computing: what it
  # slows the compute loop by at worst (all of it on one rank's core), as
  # the machine's other load does not change it
  cpu=$(sed -n 's/.*scr_transfer of .* used \([0-9.]*\) s of CPU.*/\1/p' "$disk/err" | head -1)
  busy=$(awk '$1 == "checkpoint" { s += $NF } END { print s }' "$disk/out")
  echo "$r      $none_close $none_compute    $sync_close $sync_compute    $async_close $async_compute" \
    "  daemon CPU ${cpu:-?} s in $busy s of computing"
  echo "${cpu:-0} $busy" | awk '{ print 1 + $1 / $2 }' >>"$disk/r_cpu"
  echo "$async_compute $none_compute" | awk '{ print $1 / $2 }' >>"$disk/r_compute"
  echo "$async_close $none_close" | awk '{ print $1 / $2 }' >>"$disk/r_close"
  echo "$sync_close $none_close" | awk '{ print $1 / $2 }' >>"$disk/r_sync"
done
echo "median ratio, compute while a background flush runs / without flush: $(median <"$disk/r_compute") (target <= 1.05);" \
  "bound from the daemon's CPU: $(median <"$disk/r_cpu")"
echo "median ratio, close of a checkpoint flushed in the background / not flushed: $(median <"$disk/r_close")" \
  "(target <= 1.1); flushed synchronously / not flushed: $(median <"$disk/r_sync")"

echo "-- throttle (one checkpoint, its copy measured on the stage every 20 ms)"
# bytes below DIR in regular files
bytes_below() { find "$1" -type f -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
now() { date +%s.%N; }
total=$((ranks * mib * 1048576))
for bw in 20000000 50000000; do
  # long enough a compute phase for the whole copy, and then some
  long=$(echo "$total $bw $rate" | awk '{ print int($3 * (2 * $1 / $2 + 2) / 10) + 1 }')
  fresh "$shm" && : >"$disk/out"
  (cd "$disk/prefix" && SCR_FLUSH=1 SCR_FLUSH_ASYNC=1 SCR_FLUSH_ASYNC_BW=$bw \
     mpiexec -n "$ranks" env LD_PRELOAD="$preload" "$app" . "$mib" 1 "$long" >"$disk/out" 2>"$disk/err") &
  job=$!
  first= last=
  # only the daemon's pace counts: once the program prints its times it is
  # done computing, and MPI_Finalize has the ranks copy the rest at full
  # speed (with the machine's load, a phase sized by $rate may end early)
  while kill -0 $job 2>/dev/null && ! grep -q '^checkpoint 1 ' "$disk/out"; do
    b=$(bytes_below "$disk/prefix/.scr/stage.1")
    t=$(now)
    if [ "$b" -gt 0 ] && [ -z "$first" ]; then first=$t first_b=$b; fi
    [ -n "$first" ] && last=$t last_b=$b
    [ "$b" -ge "$total" ] && break
    sleep 0.02
  done
  wait $job || true
  if [ -n "$first" ] && [ $((4 * (last_b - first_b))) -ge "$total" ]; then
    echo "$bw $first $first_b $last $last_b $total" | awk '{ r = ($5 - $3) / ($4 - $2)
      printf "SCR_FLUSH_ASYNC_BW=%d: %.1f MB/s measured over %.0f%% of the copy, ratio %.3f (target 0.9-1.1)\n",
        $1, r / 1e6, 100 * ($5 - $3) / $6, r / $1 }'
  else
    echo "SCR_FLUSH_ASYNC_BW=$bw: the program was done computing before a quarter of the copy was seen on the stage"
  fi
done

echo "-- a whole run of examples/preload/posix_fpp (20 steps, a checkpoint every 2, $mib MiB per rank, 100 ms a step)"
echo "round  tmpfs: sync  background  disk: sync  background (seconds of wall time)"
fpp_run() {
  fresh "$1"
  echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >"$disk/prefix/.scrconf"
  start=$(now)
  (cd "$disk/prefix" && env SCR_FLUSH=1 "$2" mpiexec -n "$ranks" env LD_PRELOAD="$preload" "$fpp" --steps 20 \
     --every 2 --bytes $((mib * 1048576)) --step-ms 100 >/dev/null 2>"$disk/err")
  echo "$start $(now)" | awk '{ printf "%.2f", $2 - $1 }'
}
: >"$disk/r_tmpfs" && : >"$disk/r_disk"
for r in $(seq 1 "$rounds"); do
  ts=$(fpp_run "$shm" SCR_FLUSH_ASYNC=0) ta=$(fpp_run "$shm" SCR_FLUSH_ASYNC=1)
  ds=$(fpp_run "$disk" SCR_FLUSH_ASYNC=0) da=$(fpp_run "$disk" SCR_FLUSH_ASYNC=1)
  echo "$r      $ts  $ta        $ds  $da"
  echo "$ta $ts" | awk '{ print $1 / $2 }' >>"$disk/r_tmpfs"
  echo "$da $ds" | awk '{ print $1 / $2 }' >>"$disk/r_disk"
done
echo "median ratio background / synchronous: cache on tmpfs $(median <"$disk/r_tmpfs"), on disk $(median <"$disk/r_disk")"
