#!/bin/bash
# recovery-phases.sh - how long a job takes to recover from a lost node, phase by
# phase (scr_log's RECOVERY PHASES: detection, relaunch, restore, resume), on the
# local test cluster (scripts/scr_cluster, needs root):
#   t/perf/recovery-phases.sh [-s MIB] [-r ROUNDS] [-a preload|api] [-l cluster|slurm]
#   -s MIB     checkpoint size per rank (default 256)
#   -r ROUNDS  rounds (default 3); the summary shows medians
#   -a APP     preload: the unmodified posix_fpp under libscr_preload.so
#              (default); api: the SCR API test program
#   -l HOW     cluster: scr_run scr_cluster run (default); slurm: a real Slurm
#              on the nodes, scr_run srun inside salloc --no-kill
# 5 fake nodes; the job runs on 4 of them, 2 ranks each, XOR over the 4 nodes,
# node4 a spare. Each round runs the job twice, in alternating order: once
# undisturbed (the baseline) and once with node1 killed as soon as the job's
# second checkpoint is complete; scr_run relaunches it on the others and the
# spare (in node1's place: the other ranks stay on their nodes). Printed per round: the phases of the failure, and the wall time
# of both runs side by side (their difference is the recovery plus the work
# lost since the checkpoint). Goal (issue 17): failure to resumed <= 30 s,
# detection <= 5 s. Node-local storage is a private tmpfs; the cluster is number
# $SCR_CLUSTER_ID (default 33) with its state in a temporary directory.
set -eu
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${top_builddir:-$srcdir/build}
cluster="$srcdir/scripts/scr_cluster"
export PATH="$builddir:$builddir/scripts:$srcdir/scripts:$PATH"

usage() { sed -n '2,20s/^# \{0,1\}//p' "$0" >&2; exit 2; }
mib=256 rounds=3 kind=preload how=cluster
while getopts s:r:a:l:h opt; do
  case $opt in
    s) mib=$OPTARG ;; r) rounds=$OPTARG ;; a) kind=$OPTARG ;; l) how=$OPTARG ;; *) usage ;;
  esac
done
for v in "$mib" "$rounds"; do
  case "$v" in ''|*[!0-9]*|0) echo "recovery-phases.sh: MIB and ROUNDS must be positive numbers" >&2; exit 2 ;; esac
done
case "$kind" in
  preload) app=("$builddir/examples/preload/posix_fpp" --steps 8 --every 2 --bytes $((mib * 1048576)))
           preload_opt=() ;;
  api) app=("$builddir/t/helpers/scr-test-app" --steps 4 --bytes $((mib * 1048576)))
       preload_opt=(--no-preload) ;;
  *) usage ;;
esac
case "$how" in cluster|slurm) ;; *) usage ;; esac
[ -x "${app[0]}" ] || { echo "recovery-phases.sh: no ${app[0]} (make check builds it; set top_builddir)" >&2; exit 2; }
. "$srcdir/t/perf/perf-cluster.sh"
perf_cluster_up recovery-phases 5 33
if [ "$how" = slurm ]; then
  for t in munged slurmctld slurmd srun salloc; do
    command -v "$t" >/dev/null || { echo "recovery-phases.sh: $t not installed" >&2; exit 2; }
  done
  for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
  "$cluster" slurm up >"$work/slurm-up.log" 2>&1 || { cat "$work/slurm-up.log" >&2; exit 1; }
  eval "$("$cluster" slurm env)"
fi

export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_COPY_TYPE=XOR SCR_SET_SIZE=4
export SCR_FLUSH=0 SCR_RUNS=2
echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >"$work/prefix/.scrconf"

# renew: every node up and empty, the prefix directory empty but for its rules
renew() {
  local n
  for n in node0 node1 node2 node3 node4; do "$cluster" kill "$n" >/dev/null && "$cluster" revive "$n" >/dev/null; done
  if [ "$how" = slurm ]; then
    for n in $(seq 600); do
      [ "$(sinfo -h -N -o %t | grep -c '^idle$')" = 5 ] && break
      sleep 0.1
    done
  fi
  find "$work/prefix" -mindepth 1 ! -name .scrconf -delete
}

# job NAME [KILL]: the job under scr_run; with KILL, node1 dies once its part
# of the second checkpoint is protected. Its wall seconds on stdout
job() {
  local name=$1 kill=${2:-} start end killer=
  renew
  export SCR_JOB_ID=phases.$name
  if [ -n "$kill" ]; then
    ( for _ in $(seq 36000); do
        grep -q " job=$SCR_JOB_ID event=CHECKPOINT_COMPLETE .* dset=2 " "$work/prefix/.scr/log" 2>/dev/null &&
          { "$cluster" kill node1 >/dev/null; exit 0; }
        sleep 0.05
      done ) &
    killer=$!
  fi
  start=$(date +%s.%N)
  if [ "$how" = slurm ]; then
    (cd "$work/prefix" && timeout -k 5 1830 salloc -N 5 --no-kill timeout -k 10 1800 \
       scr_run -v --no-postrun "${preload_opt[@]}" srun -N 4 -n 8 "${app[@]}") >"$work/$name.out" 2>&1 || true
  else
    (cd "$work/prefix" && scr_run -v --no-postrun "${preload_opt[@]}" scr_cluster run \
       --nodes node0,node1,node2,node3 --ppn 2 --timeout 1800 -- "${app[@]}") >"$work/$name.out" 2>&1 || true
  fi
  end=$(date +%s.%N)
  [ -z "$killer" ] || wait "$killer" || true
  grep -q "^result:\|^done:" "$work/$name.out" ||
    { echo "recovery-phases.sh: job $name did not finish:" >&2; tail -n 30 "$work/$name.out" >&2; exit 1; }
  # its phases now: the next job's renew empties the prefix directory, event log and all
  [ -z "$kill" ] || scr_log --prefix "$work/prefix" --job "$SCR_JOB_ID" >"$work/$name.log" 2>&1 || true
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

echo "$kind program, $mib MiB per rank, 4 nodes x 2 ranks (XOR), node4 a spare, $how; $rounds rounds"
printf '%5s %9s %9s %9s %9s %9s %9s %9s %9s\n' round detection relaunch restore resume total \
  base_s failed_s extra_s
: >"$work/rows"
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then
    base=$(job base$r); failed=$(job failed$r kill)
  else
    failed=$(job failed$r kill); base=$(job base$r)
  fi
  # the first failure's line: failure launch died detection relaunch restore resume total what...
  line=$(awk '/^recovery from/ { on = 1; next } on && $1 == "1" { print; exit }' "$work/failed$r.log")
  [ -n "$line" ] || { echo "recovery-phases.sh: no recovery phases in round $r:" >&2; cat "$work/failed$r.log" >&2; exit 1; }
  read -r _ _ _ det rel res rsm tot _ <<<"$line"
  echo "$det $rel $res $rsm $tot $base $failed" >>"$work/rows"
  printf '%5s %9s %9s %9s %9s %9s %9s %9s %9.3f\n' "$r" "$det" "$rel" "$res" "$rsm" "$tot" "$base" "$failed" \
    "$(awk -v a="$base" -v b="$failed" 'BEGIN { print b - a }')"
done
awk '
  function median(col,   i, j, t, v, n) {
    n = 0
    for (i = 1; i <= NR; i++) if (row[i, col] != "-") v[++n] = row[i, col] + 0
    if (n == 0) return "-"
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j] < v[j - 1]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  { for (c = 1; c <= NF; c++) row[NR, c] = $c }
  END {
    for (c = 1; c <= 7; c++) m[c] = median(c)
    printf "median %9s %9s %9s %9s %9s %9s %9s %9.3f\n", m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[7] - m[6]
    printf "goal: detection <= 5 s: %s (median %s s, ratio %.2f); failure to resumed <= 30 s: %s (median %s s, ratio %.2f)\n",
      (m[1] != "-" && m[1] <= 5) ? "met" : "missed", m[1], m[1] / 5, (m[5] != "-" && m[5] <= 30) ? "met" : "missed",
      m[5], m[5] / 30
  }' "$work/rows"
echo "phases (scr_log(1), RECOVERY PHASES): detection = node lost -> launch end seen; relaunch = -> next launch;"
echo "restore = -> SCR_Init restored (launch, MPI_Init, rebuild); resume = -> restart read done / first step"
