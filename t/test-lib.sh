# test-lib.sh - shared by the numbered shell tests in t/: TAP output, a scratch
# directory per test script, and helpers to run MPI programs and compare bytes.
# Usage in a test:  . "$top_srcdir/t/test-lib.sh"; test_expect_success 'name' 'commands'; test_done

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${MPIEXEC:=mpiexec}"
export top_srcdir top_builddir MPIEXEC

test_count=0
test_failed=0
test_name=$(basename "$0" .sh)
TRASH="${TMPDIR:-/tmp}/scr-test.$test_name.$$"
rm -rf "$TRASH" && mkdir -p "$TRASH" || { echo "Bail out! cannot create $TRASH"; exit 1; }
trap 'test_cleanup' EXIT
test_cleanup() {
  [ -n "${test_cleanup_hook:-}" ] && eval "$test_cleanup_hook"
  if [ "$test_failed" -eq 0 ] || [ -z "${SCR_TEST_KEEP:-}" ]; then rm -rf "$TRASH"; fi
}
PATH="$top_builddir:$top_builddir/scripts:$top_srcdir/scripts:$PATH"
export PATH

# the preload library ($preload_lib) and the LD_PRELOAD value that loads it
# ($preload): in a ThreadSanitizer build its runtime (SANITIZER_PRELOAD, as
# configure found it, from make check) right behind it, before libc, and
# libscr_preload_tsan.so, which starts the runtime first (README, Sanitizers)
preload_lib="$top_builddir/.libs/libscr_preload.so"
preload="$preload_lib${SANITIZER_PRELOAD:+:$SANITIZER_PRELOAD:$top_builddir/.libs/libscr_preload_tsan.so}"

# programs built as a user builds them (no sanitizer flags) that link the
# instrumented libscr: ThreadSanitizer's runtime must be preloaded for them
# (AddressSanitizer's is told not to mind its place: verify_asan_link_order=0)
user_program_env="${SANITIZER_PRELOAD:+LD_PRELOAD=$SANITIZER_PRELOAD}"

# in a ThreadSanitizer build: what the runtime must not report (MPICH's own
# races; t/tsan.supp says why each is there), wherever a run adds its options
TSAN_OPTIONS="suppressions=$top_srcdir/t/tsan.supp${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
export TSAN_OPTIONS

# and there, MPICH's transport (UCX) patches madvise, which glibc calls as
# UCX's own thread ends, after ThreadSanitizer let go of the thread: the
# process died of SIGSEGV at exit; without those memory hooks UCX runs as it
# does on a machine without RDMA
if [ -n "${SANITIZER_PRELOAD:-}" ]; then export UCX_MEM_EVENTS=no; fi

# hwloc's PCI plugin (libhwloc-plugins) leaks in MPI_Init, which a sanitizer
# build reports as the program's leak; the tests need no PCI topology
export HWLOC_COMPONENTS=-pci

# keep each test's SCR state inside its scratch directory
export SCR_CNTL_BASE="$TRASH/cntl"
export SCR_CACHE_BASE="$TRASH/cache"
unset SCR_PREFIX SCR_CONF_FILE SCR_JOB_ID SCR_JOB_NAME SCR_DEBUG SCR_CACHE_SIZE SCR_FLUSH 2>/dev/null

# run "name" "shell commands": passes when the commands exit 0
test_expect_success() {
  test_count=$((test_count + 1))
  local out="$TRASH/.out.$test_count"
  # fd 3: the test's own output, for helpers whose output the test redirected
  if (exec 3>&1; cd "$TRASH" && eval "$2") >"$out" 2>&1; then
    echo "ok $test_count - $1"
  else
    test_failed=$((test_failed + 1))
    echo "not ok $test_count - $1"
    sed -e 's/^/#   /' "$out" | tail -n 40
  fi
}

# run "name" "shell commands": passes when the commands exit non-zero
test_expect_failure_exit() {
  test_expect_success "$1" "! ( $2 )"
}

test_skip() {
  test_count=$((test_count + 1))
  echo "ok $test_count - $1 # SKIP $2"
}

test_done() {
  [ -n "${SANITIZERS:-}" ] && test_sanitizer_reports
  echo "1..$test_count"
  [ "$test_failed" -eq 0 ]
}

# In a sanitizer build (SANITIZERS, from make check), one more test: no
# report in what the test's programs wrote to its scratch directory. A
# program whose report makes it exit non-zero fails its own test, but not
# one the test expected to fail or killed (a node lost, --die-at). A
# LeakSanitizer that could not check (its fatal error, under ptrace say)
# counts too: the run it ended was not checked for leaks.
test_sanitizer_reports() {
  local found
  found=$(grep -rIlE 'WARNING: ThreadSanitizer|ERROR: (Address|Leak)Sanitizer|LeakSanitizer has encountered|ThreadSanitizer:DEADLYSIGNAL|runtime error: ' \
    "$TRASH" 2>/dev/null)
  test_count=$((test_count + 1))
  if [ -z "$found" ]; then
    echo "ok $test_count - no $SANITIZERS sanitizer report in the programs' output"
  else
    test_failed=$((test_failed + 1))
    echo "not ok $test_count - no $SANITIZERS sanitizer report in the programs' output"
    for f in $found; do
      echo "#   in ${f#"$TRASH"/}:"
      grep -m 3 -A 12 -E 'WARNING: ThreadSanitizer|ERROR: (Address|Leak)Sanitizer|LeakSanitizer has encountered|DEADLYSIGNAL|runtime error: ' "$f" |
        sed -e 's/^/#     /' | head -n 40
    done
  fi
}

# run an MPI program: mpirun NPROCS program args...
mpirun() {
  local n="$1"; shift
  timeout "${SCR_TEST_TIMEOUT:-120}" "$MPIEXEC" -n "$n" "$@"
}

# grep that prints what it searched on failure
expect_grep() {
  local pattern="$1" file="$2"
  grep -q -e "$pattern" "$file" || { echo "expected '$pattern' in $file:"; cat "$file"; return 1; }
}

# test_cmp EXPECTED ACTUAL: the same bytes, or the difference shown
test_cmp() {
  cmp -s "$1" "$2" || { echo "$2 differs from $1:"; diff -u "$1" "$2"; return 1; }
}

# no_files_below DIR: DIR holds no file but the rules (.scrconf) and SCR's
# own .scr/: what the preload leaves on the file system while checkpoints
# live in node-local cache (their directories are real, their files are not)
no_files_below() {
  found=$(find "$1" -path '*/.scr' -prune -o ! -type d ! -name .scrconf -print) &&
    { test -z "$found" || { echo "files below $1:"; echo "$found"; return 1; }; }
}

# ---- the unmodified example programs (examples/preload)
# example_file_of APP S R: the file rank R of APP writes for step S,
# relative to the directory it runs in
example_file_of() {
  case "$1" in
    cxx_ofstream) echo "ckpt_$2/rank_$3.bin" ;;
    posix_fpp) echo "data/step$2_rank$3.chk" ;;
    stdio_latest) echo "ckpt.$2.$3" ;;
    dirscan) echo "chk/state-$2-$3.dat" ;;
    fortran_unformatted) printf 'restart_%04d_%06d.dat\n' "$3" "$2" ;;
    fortran_f08_stream) echo "step$2.rank$3.stream" ;;
    hdf5_perrank) echo "h5ckpt/step_$2_rank_$3.h5" ;;
    shared_header) echo "run/step_$2/part_$3.bin" ;;
  esac
}

# ---- SCR API programs
APP="$top_builddir/t/helpers/scr-test-app"
PREFIX="$TRASH/prefix"
mkdir -p "$PREFIX"

# run the test app with N ranks inside the prefix directory: scr_app N args...
scr_app() {
  local n="$1"; shift
  (cd "$PREFIX" && SCR_PREFIX="$PREFIX" mpirun "$n" "$APP" "$@")
}

# check that the PFS copy of a rank's checkpoint file holds the expected bytes
check_pfs_file() {
  local step="$1" rank="$2" bytes="$3"
  "$APP" --check "$PREFIX/ckpt.$step/rank_$rank.dat" "$step" "$rank" "$bytes" ||
    { echo "bad or missing $PREFIX/ckpt.$step/rank_$rank.dat"; return 1; }
}

# remove every cached dataset (a lost allocation)
wipe_cache() {
  rm -rf "$SCR_CACHE_BASE" "$SCR_CNTL_BASE"
}

# ---- the local test cluster (scripts/scr_cluster): fake nodes in namespaces
# one cluster test script at a time: each runs 8 ranks on a 2-core machine,
# and two at once made node start-up and jobs miss their time limits; the
# lock is held until the script exits (fd 9)
cluster_lock() {
  exec 9>"${TMPDIR:-/tmp}/scr-cluster-tests.lock" && flock 9
}

# preload_prelude WHAT: what a test of the preload layer needs: $preload,
# $fileops (the scriptable MPI I/O helper), an ASAN_OPTIONS under which an
# instrumented preload runs in programs that were not instrumented, and the
# whole script skipped (WHAT says what) when the preload was not built
preload_prelude() {
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
  export ASAN_OPTIONS
  fileops="$top_builddir/t/helpers/mpi-fileops"
  if ! test -f "$preload_lib"; then
    test_skip "$1" "no $preload_lib"
    test_done; exit 0
  fi
}

# cluster_up N ID: N fake nodes for this test script, removed again at exit.
# ID (1..99) gives the script a cluster of its own (bridge, subnet, state), so
# test scripts running in parallel never share nodes.
cluster_up() {
  if [ "$(id -u)" != 0 ]; then
    test_skip "local test cluster" "needs root"
    test_done; exit 0
  fi
  cluster_lock
  SCR_CLUSTER_ID="$2" SCR_CLUSTER_STATE="$TRASH/cluster"
  export SCR_CLUSTER_ID SCR_CLUSTER_STATE
  test_cleanup_hook="scr_cluster down >/dev/null 2>&1 || true; ${test_cleanup_hook:-}"
  scr_cluster down >/dev/null 2>&1    # leftovers of an interrupted run
  scr_cluster up "$1" >"$TRASH/cluster-up.log" 2>&1 ||
    { cat "$TRASH/cluster-up.log"; echo "Bail out! cannot start the local test cluster"; exit 1; }
}

# slurm_up N ID: cluster_up N ID with a real Slurm on it (scr_cluster slurm
# up), SLURM_CONF exported; the whole script skipped when Slurm is not
# installed. salloc ignores TERM while its command runs: bound the command,
# or use timeout -k. Variables of a Slurm job that runs make check are dropped, so
# that the test's commands talk to the test's Slurm only.
slurm_up() {
  for t in munged slurmctld slurmd srun salloc sbatch sinfo scontrol; do
    command -v "$t" >/dev/null 2>&1 && continue
    test_skip "Slurm on the local test cluster" "$t not installed (munge slurmctld slurmd slurm-client)"
    test_done; exit 0
  done
  for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
  cluster_up "$1" "$2"
  scr_cluster slurm up >"$TRASH/slurm-up.log" 2>&1 ||
    { cat "$TRASH/slurm-up.log"; echo "Bail out! cannot start Slurm on the local test cluster"; exit 1; }
  eval "$(scr_cluster slurm env)"
}

# cluster CMD ARGS...: scr_cluster on this test's cluster
cluster() {
  scr_cluster "$@"
}

# cluster_renew NODE...: each node fails (processes killed, node-local
# storage wiped) and comes back empty
cluster_renew() {
  for n in "$@"; do
    scr_cluster kill "$n" >/dev/null && scr_cluster revive "$n" >/dev/null || { echo "cannot renew $n"; return 1; }
  done
}

# ---- mpi-fileops (t/helpers) on the test cluster's 4 nodes x 2 ranks
# (nodes: $nodes, else node0..node3), against the same operations natively
# fileops_pre RUN OP...: under the preload in $PREFIX (with the variables
# PRE_ENV sets); rank 0's lines in $TRASH/RUN, stderr in RUN.err
fileops_pre() {
  run=$1
  shift
  (cd "$PREFIX" && SCR_PREFIX="$PREFIX" scr_cluster run --nodes "${nodes:-node0,node1,node2,node3}" --ppn 2 \
    --timeout "${SCR_TEST_TIMEOUT:-120}" -- env ${PRE_ENV:-} LD_PRELOAD="$preload" "$fileops" "$@") \
    >"$TRASH/$run" 2>"$TRASH/$run.err"
}
# fileops_native DIR RUN OP...: the same operations on 8 ranks without the
# preload, in the one directory $TRASH/DIR that all of them share
fileops_native() {
  dir=$1 run=$2
  shift 2
  mkdir -p "$TRASH/$dir" && (cd "$TRASH/$dir" && mpirun 8 "$fileops" "$@") >"$TRASH/$run" 2>"$TRASH/$run.err"
}
# fileops_show RUN: what a failed run printed
fileops_show() {
  echo "--- $1:"; cat "$TRASH/$1"
  echo "--- $1.err (hydra's lines left out):"; grep -v '^\[proxy:\|^\[mpiexec@' "$TRASH/$1.err" | tail -n 20
}
# cluster_fresh RULE...: empty nodes and an empty prefix directory with these rules
cluster_fresh() {
  cluster_renew node0 node1 node2 node3 &&
    rm -rf "$PREFIX" && mkdir -p "$PREFIX" && printf '%s\n' "$@" >"$PREFIX/.scrconf"
}

# cluster_app NODES PPN APP-ARGS...: the test app on the given nodes (comma list)
cluster_app() {
  local nodes="$1" ppn="$2" rc=0 err="$TRASH/.cluster-app.err"; shift 2
  (cd "$PREFIX" && SCR_PREFIX="$PREFIX" scr_cluster run \
    --nodes "$nodes" --ppn "$ppn" --timeout "${SCR_TEST_TIMEOUT:-120}" -- "$APP" "$@") 2>"$err" || rc=$?
  cat "$err" >&2
  # a failed job says so, with the end of its error output, on the test's own
  # output whatever the caller redirected: a flake under load must be readable
  if [ "$rc" != 0 ]; then
    { echo "cluster job on $nodes failed with status $rc: $APP $*"
      tail -n 25 "$err" | sed 's/^/  | /'; } >&3 2>/dev/null
  fi
  return "$rc"
}

# ---- jobs under scr_run on the test cluster (t/50xx, t/51xx)
# job_fresh TAG [IDLE]: node0..node4 renewed and empty (with IDLE, that
# many idle in Slurm again), an empty prefix directory, and a job id
# TAG.<test number> of its own
job_fresh() {
  cluster_renew node0 node1 node2 node3 node4 && { [ -z "${2:-}" ] || slurm_all_idle "$2"; } &&
    rm -rf "$PREFIX" && mkdir -p "$PREFIX" && SCR_JOB_ID=$1.$test_count && export SCR_JOB_ID
}

# on_cluster OUT [ENV...] -- [--no-preload] PROGRAM...: scr_run -v of PROGRAM
# on node0..3, 2 ranks each, in the prefix directory with ENV set; its
# output in $TRASH/OUT, its status in OUT.status
on_cluster() {
  local out=$1 envs= opt=; shift
  while [ "$1" != -- ]; do envs="$envs $1"; shift; done; shift
  [ "$1" = --no-preload ] && { opt=$1; shift; }
  (cd "$PREFIX" && env $envs scr_run -v $opt scr_cluster run --nodes node0,node1,node2,node3 --ppn 2 \
    --timeout "$SCR_TEST_TIMEOUT" -- "$@") >"$TRASH/$out" 2>&1
  echo $? >"$TRASH/$out.status"
}

# status_of OUT: the status a job's helper left in $TRASH/OUT.status
status_of() { cat "$TRASH/$1.status"; }

# after_dataset ID ACTION...: in the background, ACTION once dataset ID of
# job $SCR_JOB_ID is complete (its event log in $PREFIX says so)
after_dataset() {
  local id=$1; shift
  ( for i in $(seq 900); do
      grep -q " job=$SCR_JOB_ID event=CHECKPOINT_COMPLETE .* dset=$id " "$PREFIX/.scr/log" 2>/dev/null &&
        { "$@"; exit 0; }
      sleep 0.1
    done ) &
}

# when_cached NODE ID ACTION...: in the background, ACTION once NODE's cache
# holds a complete part (its XOR file) of a dataset ID or newer of this job
when_cached() {
  local node=$1 id=$2; shift 2
  ( for i in $(seq 1200); do
      for d in "$SCR_CLUSTER_STATE"/nodes/$node/local/cache/*/scr.$SCR_JOB_ID/scr.dataset.*; do
        n=${d##*.}
        [ -d "$d" ] && [ "$n" -ge "$id" ] && ls "$d"/*.xor >/dev/null 2>&1 && { "$@"; exit 0; }
      done
      sleep 0.1
    done ) &
}

# stop_rank NODE PROGRAM: SIGSTOP to one rank of PROGRAM on NODE (a hang)
stop_rank() {
  pid=$(scr_cluster ps "$1" | awk -v p="$2" '$3 ~ ("/" p "$") { print $2; exit }')
  [ -n "$pid" ] && kill -STOP "$pid"
}

# scavenged STEP: the prefix directory holds checkpoint STEP of the test
# app's 8 ranks, with the 4096 bytes each wrote
scavenged() {
  for r in 0 1 2 3 4 5 6 7; do
    "$APP" --check "$PREFIX/ckpt.$1/rank_$r.dat" "$1" "$r" 4096 || { echo "bad ckpt.$1/rank_$r.dat"; return 1; }
  done
}

# ---- Slurm on the test cluster (slurm_up)
# slurm_all_idle N: N nodes idle in Slurm (a renewed node registers again)
slurm_all_idle() {
  for i in $(seq 600); do
    test "$(sinfo -h -N -o %t | grep -c "^idle$")" = "$1" && return 0
    sleep 0.1
  done
  sinfo -N; return 1
}

# in_alloc [-t MINUTES] OUT COMMAND...: COMMAND (a program, not a shell
# function) in an allocation of 5 nodes that survives a node failure (with
# Slurm's time limit MINUTES), in the prefix directory; its output in
# $TRASH/OUT, its status in OUT.status. salloc ignores TERM while its
# command runs: the command has the test's time limit, salloc a KILL some
# time after it
in_alloc() {
  local out limit=
  [ "$1" = -t ] && { limit="-t $2"; shift 2; }
  out=$1; shift
  (cd "$PREFIX" && timeout -k 5 $((SCR_TEST_TIMEOUT + 30)) salloc -N 5 --no-kill $limit \
     timeout -k 10 "$SCR_TEST_TIMEOUT" "$@") >"$TRASH/$out" 2>&1
  echo $? >"$TRASH/$out.status"
}
