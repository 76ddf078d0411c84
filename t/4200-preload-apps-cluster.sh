#!/bin/sh
# 4200-preload-apps-cluster.sh - issue 4 end to end: the eight unmodified
# applications of examples/preload/ under LD_PRELOAD=libscr_preload.so with XOR
# redundancy on 4 fake nodes x 2 ranks. Each is killed right after a
# checkpoint, loses a node, resumes from its newest checkpoint rebuilt in cache
# (nothing flushed: the checkpoint files are in node-local cache, not in the
# prefix directory), is killed between two checkpoints, loses another node,
# resumes again, and ends with the result of an uninterrupted native run.
# posix_fpp also loses the whole cache and resumes from the flushed checkpoint
# fetched from the prefix directory.
# Each run's stdout is kept in $TRASH/<app>.<run>, its stderr in .err and its
# exit status in .status (SCR_TEST_KEEP=1 keeps them after a failure).
. "$top_srcdir/t/test-lib.sh"

# the preloaded sanitizer runtime is not first in the link order of the apps
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS

ex="$top_builddir/examples/preload"
apps="cxx_ofstream posix_fpp stdio_latest dirscan fortran_unformatted fortran_f08_stream hdf5_perrank shared_header"
# 64 KB per rank; checkpoints after steps 2, 4, 6, 8 and 10
args="--steps 10 --every 2 --bytes 65536"
nodes=node0,node1,node2,node3
ranks="0 1 2 3 4 5 6 7"
: "${SCR_TEST_TIMEOUT:=60}"

cluster_up 4 42
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_JOB_ID=t4200
export SCR_COPY_TYPE=XOR SCR_SET_SIZE=4

# the .scrconf rules of an app (examples/preload/README.md)
rules_of() {
  case "$1" in
    cxx_ofstream) echo 'PRELOAD=ckpt_{step}/rank_{rank}.bin TYPE=CHECKPOINT' ;;
    posix_fpp) echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' ;;
    stdio_latest)
      echo 'PRELOAD=ckpt.tmp.{rank} TYPE=CHECKPOINT BOUNDARY=BARRIER'
      echo 'PRELOAD=ckpt.{step}.{rank} TYPE=CHECKPOINT BOUNDARY=BARRIER'
      echo 'PRELOAD=ckpt.latest* TYPE=CHECKPOINT' ;;
    dirscan) echo 'PRELOAD=chk/state-{step}-{rank}.dat TYPE=CHECKPOINT' ;;
    fortran_unformatted) echo 'PRELOAD=restart_{rank}_{step}.dat TYPE=CHECKPOINT' ;;
    fortran_f08_stream) echo 'PRELOAD=step{step}.rank{rank}.stream TYPE=CHECKPOINT BOUNDARY=BARRIER' ;;
    hdf5_perrank) echo 'PRELOAD=h5ckpt/step_{step}_rank_{rank}.h5 TYPE=CHECKPOINT' ;;
    shared_header)
      echo 'PRELOAD=run/step_{step}/part_{rank}.bin TYPE=CHECKPOINT BOUNDARY=BARRIER'
      echo 'PRELOAD=run/step_{step}/header.txt TYPE=CHECKPOINT BOUNDARY=BARRIER' ;;
  esac
}

# a find -name pattern for any checkpoint file of APP (stdio_latest: also its
# temporaries and the pointer)
glob_of() {
  case "$1" in
    cxx_ofstream) echo 'rank_*.bin' ;;
    posix_fpp) echo 'step*_rank*.chk' ;;
    stdio_latest) echo 'ckpt.*' ;;
    dirscan) echo 'state-*-*.dat' ;;
    fortran_unformatted) echo 'restart_*_*.dat' ;;
    fortran_f08_stream) echo 'step*.rank*.stream' ;;
    hdf5_perrank) echo 'step_*_rank_*.h5' ;;
    shared_header) echo 'part_*.bin' ;;
  esac
}

# fresh_start APP: empty nodes, an empty prefix directory with APP's rules
fresh_start() {
  cluster_renew node0 node1 node2 node3 &&
  rm -rf "$PREFIX" && mkdir -p "$PREFIX" && rules_of "$1" >"$PREFIX/.scrconf"
}

# lose NODE...: the nodes fail and come back empty
lose() { cluster_renew "$@"; }

# pre_run APP RUN [ARGS...]: APP under the preload on the 4 nodes x 2 ranks,
# working directory and SCR_PREFIX the prefix directory; stdout in $TRASH/RUN,
# stderr in RUN.err, exit status in RUN.status; returns that status
pre_run() {
  pr_app=$1 pr_run=$2
  shift 2
  (cd "$PREFIX" && SCR_PREFIX="$PREFIX" scr_cluster run --nodes $nodes --ppn 2 --timeout "$SCR_TEST_TIMEOUT" -- \
    env LD_PRELOAD="$preload" "$ex/$pr_app" $args "$@") >"$TRASH/$pr_run" 2>"$TRASH/$pr_run.err"
  pr_status=$?
  echo $pr_status >"$TRASH/$pr_run.status"
  return $pr_status
}

# native_run APP RUN: 8 ranks of APP on this machine without the preload, in
# $TRASH/RUN.dir; output in $TRASH/RUN and RUN.err
native_run() {
  mkdir -p "$TRASH/$2.dir" &&
    (cd "$TRASH/$2.dir" && mpirun 8 "$ex/$1" $args) >"$TRASH/$2" 2>"$TRASH/$2.err"
  nr_status=$?
  echo $nr_status >"$TRASH/$2.status"
  return $nr_status
}

# show RUN: what a run printed, for a failed check (without mpiexec's noise
# about a job that was killed; all of it stays in the files)
show() {
  echo "--- exit status of $1: $(cat "$TRASH/$1.status" 2>/dev/null)"
  echo "--- stdout of $1:"; grep -v '^=\|^$' "$TRASH/$1"
  echo "--- stderr of $1 (last 16 lines but hydra's; all in $TRASH/$1.err):"
  grep -v '^\[proxy:\|^\[mpiexec@' "$TRASH/$1.err" | tail -n 16
}

# has PATTERN RUN: RUN's stdout (or stderr: RUN.err) has a line matching PATTERN
has() {
  grep -q -e "$1" "$TRASH/$2" || { echo "expected '$1' in $2"; return 1; }
}

# died RUN STEP: the run was killed by --die-at STEP (not by the timeout) and printed no result
died() {
  st=$(cat "$TRASH/$1.status") && test "$st" != 0 && test "$st" != 124 ||
    { echo "$1 ended with status $st, not killed by --die-at (124: timeout)"; return 1; }
  has "^dying at step $2\$" "$1" && { ! grep -q '^result:' "$TRASH/$1" || { echo "$1 printed a result"; return 1; }; }
}

# clean RUN: no SCR error in the run's stderr (such as an engine that cannot
# be loaded, which leaves the files unprotected)
clean() {
  ! grep -q '^SCR ERROR: ' "$TRASH/$1.err" || { echo "errors in $1.err:"; grep '^SCR ERROR: ' "$TRASH/$1.err"; return 1; }
}

# the 16 hex digits of the one result line of an output, or nothing
result_of() {
  test "$(grep -c '^result: ' "$TRASH/$1")" = 1 && sed -n 's/^result: \([0-9a-f]\{16\}\)$/\1/p' "$TRASH/$1"
}

# same_result RUN REF: RUN ends with REF's result
same_result() {
  r=$(result_of "$1") && test -n "$r" && test "$r" = "$(result_of "$2")" ||
    { echo "result of $1 '$r' differs from the native $2 '$(result_of "$2")'"; return 1; }
}

# not_in_prefix APP: no checkpoint file of APP in the prefix directory, apart
# from SCR's own directory .scr/ (where the engine keeps copies of files
# attached to a dataset, like stdio_latest's pointer)
not_in_prefix() {
  found=$(find "$PREFIX" -path "$PREFIX/.scr" -prune -o -name "$(glob_of "$1")" -print) &&
    { test -z "$found" || { echo "checkpoint files in the prefix directory:"; echo "$found"; return 1; }; }
}

# in_cache APP STEP: every rank's file of STEP is in node-local storage on its
# own node (ranks 2K and 2K+1 run on nodeK), and not at its path in the prefix
in_cache() {
  for r in $ranks; do
    f=$(example_file_of "$1" "$2" $r) && n=node$((r / 2)) &&
      test ! -e "$PREFIX/$f" || { echo "$PREFIX/$f exists"; return 1; }
    cluster exec $n -- find /scr-local -type f -name "$(basename "$f")" | grep -q . ||
      { echo "$f of rank $r is not under /scr-local on $n:"; cluster exec $n -- find /scr-local -type f; return 1; }
  done
}

# in_prefix APP STEP: every rank's file of STEP is at its path in the prefix directory
in_prefix() {
  for r in $ranks; do
    f=$(example_file_of "$1" "$2" $r) && test -s "$PREFIX/$f" || { echo "$PREFIX/$f missing or empty"; ls -laR "$PREFIX"; return 1; }
  done
}

if ! test -f "$preload_lib"; then
  test_skip "preloaded applications on the test cluster" "no $preload_lib"
  test_done; exit 0
fi

for app in $apps; do
  test_expect_success "$app: native reference run on 8 ranks prints a result" "
    native_run $app $app.ref &&
    has '^starting from step 0\$' $app.ref && test -n \"\$(result_of $app.ref)\" ||
    { show $app.ref; false; }
  "

  test_expect_success "$app: preloaded, XOR, no flush: killed right after checkpoint 6" "
    fresh_start $app &&
    ! SCR_FLUSH=0 pre_run $app $app.die6 --die-at 6 &&
    { died $app.die6 6 && clean $app.die6 && has '^starting from step 0\$' $app.die6 &&
      has '^checkpoint 6 written\$' $app.die6; } ||
    { show $app.die6; false; }
  "

  test_expect_success "$app: checkpoint 6 is in node-local cache, nothing in the prefix directory" "
    in_cache $app 6 && not_in_prefix $app
  "

  test_expect_success "$app: node1 lost; resumes from step 6 rebuilt from XOR, killed after step 9" "
    lose node1 &&
    ! SCR_FLUSH=0 pre_run $app $app.die9 --die-at 9 &&
    { died $app.die9 9 && clean $app.die9 && has '^resumed from step 6\$' $app.die9 &&
      has '^checkpoint 8 written\$' $app.die9 && has 'rebuilt the lost parts from XOR' $app.die9.err &&
      in_cache $app 8 && not_in_prefix $app; } ||
    { show $app.die9; false; }
  "

  test_expect_success "$app: node2 lost; resumes from step 8 and ends with the native result" "
    lose node2 &&
    SCR_FLUSH=0 pre_run $app $app.resume &&
    { clean $app.resume && has '^resumed from step 8\$' $app.resume && has '^checkpoint 10 written\$' $app.resume &&
      has 'rebuilt the lost parts from XOR' $app.resume.err && same_result $app.resume $app.ref &&
      not_in_prefix $app; } ||
    { show $app.resume; false; }
  "
done

# the whole cache lost: the restart can only come from the prefix directory
app=posix_fpp
test_expect_success "$app: preloaded, XOR, flush every checkpoint: killed after step 7" "
  fresh_start $app &&
  ! SCR_FLUSH=1 pre_run $app $app.fdie7 --die-at 7 &&
  { died $app.fdie7 7 && clean $app.fdie7 && has '^checkpoint 6 written\$' $app.fdie7 && in_prefix $app 6; } ||
  { show $app.fdie7; false; }
"

test_expect_success "$app: all 4 nodes lost; resumes from step 6 fetched from the prefix directory" "
  lose node0 node1 node2 node3 &&
  SCR_FLUSH=1 pre_run $app $app.fetch &&
  { clean $app.fetch && has '^resumed from step 6\$' $app.fetch && has 'fetched from' $app.fetch.err &&
    same_result $app.fetch $app.ref; } ||
  { show $app.fetch; false; }
"

# a restart from a flushed checkpoint rebuilt on a lost node, with nothing left
# to compute: the rebuilt ranks knew nothing of the flush, flushed again alone
# at MPI_Finalize, and the job hung there
test_expect_success "$app: killed after its last checkpoint, flushed; node1 lost; the relaunch rebuilds it and ends" "
  fresh_start $app &&
  ! SCR_FLUSH=1 pre_run $app $app.fdie10 --die-at 10 &&
  { died $app.fdie10 10 && clean $app.fdie10 && in_prefix $app 10; } || { show $app.fdie10; false; } &&
  lose node1 &&
  SCR_FLUSH=1 pre_run $app $app.fend &&
  { clean $app.fend && has '^resumed from step 10\$' $app.fend && has 'rebuilt the lost parts from XOR' $app.fend.err &&
    same_result $app.fend $app.ref; } ||
  { show $app.fend; false; }
"

test_done
