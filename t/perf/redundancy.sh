#!/bin/bash
# redundancy.sh - cost of each redundancy scheme relative to SINGLE, of
# rebuilding one lost node relative to a checkpoint, and the peak memory of
# the ranks, on the local test cluster (scripts/scr_cluster, needs root):
#   t/perf/redundancy.sh [-n NODES] [-s MIB] [-r ROUNDS] [-m MIB[,MIB...]]
#   t/perf/redundancy.sh [NODES [MIB [ROUNDS]]]      (the same, positional)
#   -n NODES   fake nodes, one rank each (default 4)
#   -s MIB     checkpoint size per rank for the timing table (default 64;
#              the issue's measurement is -s 256)
#   -r ROUNDS  rounds at MIB; the table shows medians (default 3)
#   -m SIZES   further sizes per rank (comma list) run once each for the
#              memory table (default MIB/8; -m '' for none)
# Each run is redundancy-bench on all nodes: one checkpoint, then node1 is
# killed and revived empty (SINGLE: nothing is lost) and SCR_Init restarts,
# rebuilding node1's part. Schemes alternate within a round so drift affects
# them alike; each round at MIB also times MPI alone between the nodes (the
# schemes' costs are mostly MPI traffic: read the ratios against it). Node-local storage (SCR cache and control directories) is a
# private tmpfs. The cluster is number $SCR_CLUSTER_ID (default 31; one run
# at a time) with its state in a temporary directory; it is removed at exit.
set -eu
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${top_builddir:-$srcdir/build}
bench="$builddir/t/perf/redundancy-bench"
cluster="$srcdir/scripts/scr_cluster"

usage() { sed -n '2,18s/^# \{0,1\}//p' "$0" >&2; exit 2; }
nodes=4 mib=64 rounds=3 extra=
while getopts n:s:r:m:h opt; do
  case $opt in
    n) nodes=$OPTARG ;; s) mib=$OPTARG ;; r) rounds=$OPTARG ;; m) extra=$OPTARG; extra_set=1 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -le 3 ] || usage
nodes=${1:-$nodes}; mib=${2:-$mib}; rounds=${3:-$rounds}
for v in "$nodes" "$mib" "$rounds"; do
  case "$v" in ''|*[!0-9]*|0) echo "redundancy.sh: NODES, MIB and ROUNDS must be positive numbers" >&2; exit 2 ;; esac
done
[ "$nodes" -ge 3 ] || { echo "redundancy.sh: RS with 2 failures needs 3 nodes or more" >&2; exit 2; }
[ -n "${extra_set:-}" ] || extra=$((mib / 8 > 0 ? mib / 8 : 1))
sizes=$(echo "$mib ${extra//,/ }" | tr ' ' '\n' | grep . | sort -gu | tr '\n' ' ')
[ -x "$bench" ] || { echo "redundancy.sh: no $bench (make check builds it; set top_builddir)" >&2; exit 2; }
. "$srcdir/t/perf/perf-cluster.sh"
perf_cluster_up redundancy-bench "$nodes" 31

export SCR_PREFIX="$work/prefix" SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl
export SCR_SET_SIZE=$nodes SCR_SET_FAILURES=2 SCR_FLUSH=0 SCR_JOB_ID=bench

# run MIB CHECKPOINTS: the bench on every node, its output line on stdout
run() {
  (cd "$work/prefix" && "$cluster" run --timeout 900 -- "$bench" "$@") 2>"$work/err" ||
    { echo "redundancy.sh: ${SCR_COPY_TYPE:-MPI} run '$*' failed:" >&2; cat "$work/err" >&2; return 1; }
}
field() { awk -v k="$1" '{for (i = 1; i < NF; i++) if ($i == k) print $(i + 1)}'; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
mib_of() { awk -v kb="$1" 'BEGIN {printf "%.1f", kb / 1024}'; }
mib_diff() { awk -v kb="$1" 'BEGIN {v = kb / 1024; if (v > -0.05 && v < 0.05) v = 0; printf "%+.1f", v}'; }

declare -A wr cm ck rs cm_rss rs_rss
schemes="SINGLE XOR RS PARTNER"
for size in $sizes; do
  n=1; [ "$size" = "$mib" ] && n=$rounds
  for ((r = 0; r < n; r++)); do
    if [ "$size" = "$mib" ]; then
      # MPI alone between the nodes, to read the ratios against
      out=$(run ring "$size")
      ring="${ring:-} $(echo "$out" | field ring_mib_s)"
      printf '%s MiB round %d: MPI %s\n' "$size" $((r + 1)) "$out" | tee -a "$work/log" >&2
    fi
    for s in $schemes; do
      export SCR_COPY_TYPE=$s
      rm -rf "$work"/local/node*/local/* "$work"/prefix/* "$work"/prefix/.scr* 2>/dev/null || true
      out=$(run "$size" 1)
      ckpt_out=$out
      k="$s,$size"
      wr[$k]="${wr[$k]:-} $(echo "$out" | field write)"
      cm[$k]="${cm[$k]:-} $(echo "$out" | field complete)"
      ck[$k]="${ck[$k]:-} $(echo "$out" | awk '{print $4 + $6}')"
      cm_rss[$k]="${cm_rss[$k]:-} $(echo "$out" | field rss_max_kb)"
      if [ "$s" != SINGLE ]; then
        "$cluster" kill node1 >/dev/null && "$cluster" revive node1 >/dev/null
      fi
      out=$(run "$size" 0)
      if [ "$(echo "$out" | field restart)" != bench.0 ] ||
         { [ "$s" != SINGLE ] && ! grep -q 'rebuilt the lost parts' "$work/err"; }; then
        echo "redundancy.sh: $s did not restart from a rebuilt bench.0: $out" >&2
        cat "$work/err" >&2
        exit 1
      fi
      rs[$k]="${rs[$k]:-} $(echo "$out" | field init)"
      rs_rss[$k]="${rs_rss[$k]:-} $(echo "$out" | field rss_max_kb)"
      printf '%s %s MiB round %d: checkpoint: %s; restart: %s\n' "$s" "$size" $((r + 1)) \
        "$ckpt_out" "$out" | tee -a "$work/log" >&2
    done
  done
done
[ -z "${REDUNDANCY_LOG:-}" ] || cp "$work/log" "$REDUNDANCY_LOG"

single=$(echo "${ck[SINGLE,$mib]}" | median)
printf "%d fake nodes x 1 rank, %d MiB per rank, %d rounds (medians), cache on tmpfs\n" \
  "$nodes" "$mib" "$rounds"
printf "%-8s %9s %11s %9s %11s %11s %13s\n" scheme write_s complete_s ckpt_s ckpt/SINGLE \
  restart_s restart/ckpt
for s in $schemes; do
  k="$s,$mib"
  c=$(echo "${ck[$k]}" | median); b=$(echo "${rs[$k]}" | median)
  printf "%-8s %9.4f %11.4f %9.4f %11.2f %11.4f %13.2f\n" "$s" "$(echo "${wr[$k]}" | median)" \
    "$(echo "${cm[$k]}" | median)" "$c" "$(awk -v a="$c" -v b="$single" 'BEGIN {print a / b}')" \
    "$b" "$(awk -v a="$b" -v b="$c" 'BEGIN {print a / b}')"
done
echo "ckpt_s: write the files + SCR_Complete_checkpoint (SCR_Complete_output);"
echo "restart_s: SCR_Init of the next run, SINGLE: nothing lost, others: node1 lost and rebuilt"
printf "MPI alone between the nodes moves %s MiB/s per rank (ring of 1 MiB transfers, waiting as SCR does);\n" \
  "$(echo "$ring" | median)"
printf "SINGLE writes its files at %.0f MiB/s per rank\n" \
  "$(awk -v m="$mib" -v t="$(echo "${wr[SINGLE,$mib]}" | median)" 'BEGIN {print m / t}')"
echo
declare -A xc xr    # peak RSS over SINGLE's at the same size, KiB
for size in $sizes; do
  for s in $schemes; do
    xc[$s,$size]=$(($(echo "${cm_rss[$s,$size]}" | median) - $(echo "${cm_rss[SINGLE,$size]}" | median)))
    xr[$s,$size]=$(($(echo "${rs_rss[$s,$size]}" | median) - $(echo "${rs_rss[SINGLE,$size]}" | median)))
  done
done
small=${sizes%% *} large=$(echo $sizes | awk '{print $NF}')
echo "peak RSS per rank in MiB (VmHWM at the end of the run, largest over the ranks);"
echo "SINGLE: absolute, others: +extra over SINGLE at the same size (checkpoint run / restart run)"
printf "%-8s" scheme
for size in $sizes; do printf " %12s %12s" "ckpt@${size}M" "restart@${size}M"; done
[ "$small" = "$large" ] || printf "  extra growth %s->%s MiB/rank (ckpt, restart)" "$small" "$large"
echo
for s in $schemes; do
  printf "%-8s" "$s"
  for size in $sizes; do
    if [ "$s" = SINGLE ]; then
      printf " %12s %12s" "$(mib_of "$(echo "${cm_rss[$s,$size]}" | median)")" \
        "$(mib_of "$(echo "${rs_rss[$s,$size]}" | median)")"
    else
      printf " %12s %12s" "$(mib_diff "${xc[$s,$size]}")" "$(mib_diff "${xr[$s,$size]}")"
    fi
  done
  if [ "$s" != SINGLE ] && [ "$small" != "$large" ]; then
    printf "  %s, %s" "$(mib_diff $((xc[$s,$large] - xc[$s,$small])))" \
      "$(mib_diff $((xr[$s,$large] - xr[$s,$small])))"
  fi
  echo
done
