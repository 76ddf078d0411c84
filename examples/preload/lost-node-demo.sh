#!/bin/bash
# lost-node-demo.sh - the product in two minutes: an unmodified MPI program under libscr_preload.so
# loses a node of the local test cluster and resumes on a spare, bit-exact; then the job's timeline.
#   examples/preload/lost-node-demo.sh BUILDDIR [WORKDIR]
# As root: 5 fake nodes (scr_cluster), 4 x 2 ranks, XOR; node1 is killed once
# checkpoint 6 is protected, scr_run launches again on node0, node2-4, and the
# program resumes from its newest checkpoint, rebuilt from XOR. As another
# user: one node, a killed job restarted from its cache (what needs no root).
# Environment: SCR_CLUSTER_ID / SCR_CLUSTER_STATE to use a cluster already up
# (the test suite's); without them the script brings one up and down itself.
set -euo pipefail

BUILD=$(cd "${1:?usage: lost-node-demo.sh BUILDDIR [WORKDIR]}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${2:-$(mktemp -d "${TMPDIR:-/tmp}/scr-demo.XXXXXX")}
mkdir -p "$WORK"
export PATH="$BUILD:$BUILD/scripts:$SRC/scripts:$PATH"
APP="$BUILD/examples/preload/posix_fpp"
PRELOAD="$BUILD/.libs/libscr_preload.so"
ARGS=(--steps 16 --every 2 --bytes 1048576 --step-ms 400)
# MPICH's mpiexec: where Open MPI is the default MPI, plain mpiexec is Open MPI's
MPIEXEC=${MPIEXEC:-$(command -v mpiexec.hydra || command -v mpiexec.mpich || echo mpiexec)}

say() { printf 'demo: %s\n' "$*"; }
die() { printf 'demo: error: %s\n' "$*" >&2; exit 1; }
# the lines of a run worth seeing, indented
show() { grep -E "$2" "$1" | sed 's/^/    | /' || true; }
result_of() { sed -n 's/^result: //p' "$1"; }

[ -x "$APP" ] && [ -f "$PRELOAD" ] || die "build first (make -C $BUILD all examples/preload/posix_fpp): no $APP or $PRELOAD"

say "an unmodified program: $(basename "$APP") (POSIX open/write/close, one file per rank per checkpoint)"
say "its checkpoint files, declared in .scrconf:"
mkdir -p "$WORK/native" "$WORK/prefix"
echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >"$WORK/prefix/.scrconf"
sed 's/^/    | /' "$WORK/prefix/.scrconf"

# timeline N: step N, the job's timeline from its event log
timeline() {
  say "$1. the job's timeline, from its event log (scr_log):"
  scr_log --prefix "$WORK/prefix" --svg "$WORK/timeline.svg" | sed 's/^/    | /'
  say "   picture: $WORK/timeline.svg (open it in a browser; hover a span for its size and bandwidth)"
}

if [ "$(id -u)" != 0 ]; then
  say "not root: no test cluster (it needs network and mount namespaces); one node instead"
  export SCR_CACHE_BASE="$WORK/cache" SCR_CNTL_BASE="$WORK/cntl" SCR_JOB_ID=demo SCR_COPY_TYPE=SINGLE SCR_FLUSH=0
  say "1. reference: the same program without SCR, 4 ranks"
  (cd "$WORK/native" && "$MPIEXEC" -n 4 "$APP" "${ARGS[@]}") >"$WORK/native.out" 2>&1 || die "native run failed"
  say "2. under the preload, killed (every rank) after step 9"
  (cd "$WORK/prefix" && "$MPIEXEC" -n 4 env LD_PRELOAD="$PRELOAD" "$APP" "${ARGS[@]}" --die-at 9) \
    >"$WORK/killed.out" 2>&1 && die "the run was to be killed"
  show "$WORK/killed.out" '^checkpoint|^dying'
  say "3. started again: it finds its newest checkpoint in node-local cache"
  (cd "$WORK/prefix" && "$MPIEXEC" -n 4 env LD_PRELOAD="$PRELOAD" "$APP" "${ARGS[@]}") >"$WORK/again.out" 2>&1 ||
    die "the restarted run failed"
  show "$WORK/again.out" '^resumed|^result'
  [ "$(result_of "$WORK/again.out")" = "$(result_of "$WORK/native.out")" ] || die "results differ"
  say "same result as the run without SCR: $(result_of "$WORK/native.out")"
  timeline 4
  say "skipped (needs root): losing a node, the relaunch on a spare, the rebuild from XOR"
  exit 0
fi

own_cluster=0
if [ -z "${SCR_CLUSTER_STATE:-}" ]; then
  export SCR_CLUSTER_ID=${SCR_CLUSTER_ID:-97} SCR_CLUSTER_STATE="$WORK/cluster"
  own_cluster=1
fi
killer=""
cleanup() {
  [ -z "$killer" ] || kill "$killer" 2>/dev/null || true
  [ "$own_cluster" = 0 ] || scr_cluster down >/dev/null 2>&1 || true
}
trap cleanup EXIT
if [ "$own_cluster" = 1 ]; then
  say "bringing up the local test cluster: 5 nodes in namespaces, each with its own node-local cache"
  scr_cluster down >/dev/null 2>&1 || true
  scr_cluster up 5 >"$WORK/cluster-up.log" 2>&1 || { cat "$WORK/cluster-up.log"; die "scr_cluster up failed"; }
fi
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_JOB_ID=demo.$$
export SCR_COPY_TYPE=XOR SCR_SET_SIZE=4 SCR_FLUSH=0 SCR_RUNS=2

say "1. reference: the same program without SCR, 8 ranks on one shared directory"
(cd "$WORK/native" && "$MPIEXEC" -n 8 "$APP" "${ARGS[@]}") >"$WORK/native.out" 2>&1 || die "native run failed"
say "   result $(result_of "$WORK/native.out")"

say "2. under scr_run on node0-node3 (2 ranks each, XOR over the 4 nodes, node4 spare);"
say "   node1 dies as soon as checkpoint 6 is protected"
cache1="$SCR_CLUSTER_STATE/nodes/node1/local/cache/$(id -un)/scr.$SCR_JOB_ID"
( for _ in $(seq 600); do
    # checkpoint 6 is the program's third: dataset 3, protected once its XOR file is there
    ls "$cache1"/scr.dataset.3/*.xor >/dev/null 2>&1 && { scr_cluster kill node1 >/dev/null; exit 0; }
    sleep 0.1
  done ) &
killer=$!
start=$(date +%s)
(cd "$WORK/prefix" && scr_run -v scr_cluster run --nodes node0,node1,node2,node3 --ppn 2 --timeout 120 -- \
   "$APP" "${ARGS[@]}") >"$WORK/job.out" 2>&1 || die "the job failed: see $WORK/job.out"
wait "$killer" || true
show "$WORK/job.out" '^checkpoint|launch [0-9]:|is down|rebuilt|^resumed|^result'
resumed=$(sed -n 's/^resumed from step \([0-9]*\)$/\1/p' "$WORK/job.out")
[ -n "$resumed" ] || die "the job did not resume from a checkpoint"
grep -q 'launch 2: .*node4' "$WORK/job.out" || die "the second launch did not use the spare node4"
[ "$(result_of "$WORK/job.out")" = "$(result_of "$WORK/native.out")" ] ||
  die "final result $(result_of "$WORK/job.out") differs from the native $(result_of "$WORK/native.out")"
say "node1 was lost; the job resumed from step $resumed on the spare and ended with the native result,"
say "bit for bit, in $(($(date +%s) - start)) s"

timeline 3
