#!/bin/sh
# prefix-redundancy.sh - what carrying the redundancy data to the prefix directory costs a
# scavenge, per scheme, and what a scavenge from the surviving nodes plus scr_index --build
# costs against a scavenge of all nodes: t/perf/prefix-redundancy.sh [MB_PER_RANK [ROUNDS]]
# On 4 fake nodes x 2 ranks (tmpfs), the API example is killed after its checkpoint;
# scr_postrun then copies it: without the redundancy data, with it, and with node1 lost
# (no spare: the survivors' part, then the rebuild on the prefix). Times are of the copy
# itself (the flush in the event log; the scavenge's and the build's own lines), apart
# from the launch and restart every scavenge pays; ratios to the copy without redundancy.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
builddir=${top_builddir:-$(cd "$here/../.." && pwd)/build}
mb=${1:-16}; rounds=${2:-3}
api="$builddir/examples/api_checkpoint"
cluster="$here/../../scripts/scr_cluster"
[ -x "$api" ] || { echo "build first (make check), and set top_builddir if the build is not in ./build" >&2; exit 1; }
export PATH="$builddir:$builddir/scripts:$here/../../scripts:$PATH"
. "$here/perf-cluster.sh"
perf_cluster_up prefix-redundancy 4 93
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_FLUSH=0
export SCR_SET_SIZE=4 SCR_SET_FAILURES=2 SCR_JOB_ID=bench
prefix="$work/prefix"
all=node0,node1,node2,node3

renew() { for n in node0 node1 node2 node3; do "$cluster" kill "$n" >/dev/null; "$cluster" revive "$n" >/dev/null; done; }

# job: the API example killed after its checkpoint of step 2, in cache only
job() {
  renew && rm -rf "$prefix" && mkdir -p "$prefix"
  (cd "$prefix" && SCR_PREFIX="$prefix" "$cluster" run --nodes $all --ppn 2 --timeout 300 -- \
    "$api" --steps 4 --bytes $((mb * 1048576)) --crash-at 2) >"$work/job.out" 2>&1 || true
  grep -q 'checkpoint ckpt.2 written' "$work/job.out" || { cat "$work/job.out" >&2; exit 1; }
}

# postrun NODES [ENV...]: seconds of scr_postrun on NODES, its output in $work/post.out
postrun() {
  nodes=$1
  shift
  start=$(date +%s.%N)
  env "$@" scr_postrun -p "$prefix" -- "$cluster" run --nodes "$nodes" --ppn 2 --timeout 300 -- \
    >"$work/post.out" 2>&1 || { cat "$work/post.out" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$start $end" | awk '{ printf "%.3f", $2 - $1 }'
}

# seconds of the scavenge's flush of the checkpoint, from the event log
flush_seconds() {
  sed -n 's/.* event=FLUSH_COMPLETE .* dset=2 .* seconds=\([0-9.]*\).*/\1/p' "$prefix/.scr/log" | tail -n 1
}

# bytes under the prefix directory: the checkpoint's files, and its redundancy data
data_bytes() { du -sb "$prefix/ckpt.2" | cut -f1; }
red_bytes() { du -sb "$prefix/.scr/scr.dataset.2/redundancy" 2>/dev/null | cut -f1 || echo 0; }

: >"$work/runs"
for round in $(seq "$rounds"); do
  for scheme in XOR RS PARTNER; do
    export SCR_COPY_TYPE=$scheme
    job; total=$(postrun $all SCR_SCAVENGE_REDUNDANCY=0); plain=$(flush_seconds); data=$(data_bytes)
    job; total_with=$(postrun $all SCR_SCAVENGE_REDUNDANCY=1); with=$(flush_seconds); red=$(red_bytes)
    job; "$cluster" kill node1 >/dev/null
    total_lost=$(postrun node0,node2,node3 SCR_SCAVENGE_REDUNDANCY=1)
    survivors=$(sed -n 's/.*from the surviving nodes in \([0-9.]*\) s.*/\1/p' "$work/post.out")
    build=$(sed -n 's/.*rebuilt [0-9]* ranks* in \([0-9.]*\) s.*/\1/p' "$work/post.out")
    grep -q 'marked complete' "$work/post.out" || { cat "$work/post.out" >&2; exit 1; }
    echo "$scheme $plain $with $survivors $build $data $red $total $total_with $total_lost" >>"$work/runs"
  done
done

awk -v mb="$mb" -v rounds="$rounds" '
  { s = $1; n[s]++; k = n[s]; plain[s, k] = $2; with[s, k] = $3; surv[s, k] = $4; build[s, k] = $5
    data[s] = $6; red[s] = $7; tp[s, k] = $8; tw[s, k] = $9; tl[s, k] = $10
    rw[s, k] = $3 / $2; rl[s, k] = ($4 + $5) / $2; rt[s, k] = $9 / $8; rtl[s, k] = $10 / $8 }
  function median(a, s, n,   i, j, t, v) {
    for (i = 1; i <= n; i++) v[i] = a[s, i]
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j] < v[j - 1]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  END {
    printf "8 ranks x %d MiB on 4 fake nodes (tmpfs), %d rounds; seconds of the copy (of scr_postrun)\n", mb, rounds
    for (s in n) {
      printf "%-7s data %d B, redundancy data %d B (%.3f of the data)\n", s, data[s], red[s], red[s] / data[s]
      for (i = 1; i <= n[s]; i++)
        printf "  round %d: all nodes %.3f (%.2f), with redundancy data %.3f (%.2f); node1 lost: survivors %.3f + build %.3f (%.2f)\n", i, plain[s, i], tp[s, i], with[s, i], tw[s, i], surv[s, i], build[s, i], tl[s, i]
      printf "  median ratio to the copy without redundancy data: with it %.3f, survivors + scr_index --build %.3f; of scr_postrun: %.3f and %.3f\n", median(rw, s, n[s]), median(rl, s, n[s]), median(rt, s, n[s]), median(rtl, s, n[s])
    }
  }' "$work/runs"
