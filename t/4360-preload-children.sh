#!/bin/sh
# 4360-preload-children.sh - the processes a preloaded program starts (system,
# popen, posix_spawn, fork then exec, fork alone) see its checkpoint files at
# their paths, read-only: scr_preload(7) CHILD PROCESSES. 2 fake nodes x 2
# ranks; mpi-fileops starts the children, and the same operations run
# natively in one shared directory give the expected output.
. "$top_srcdir/t/test-lib.sh"

preload_prelude "child processes of a preloaded program"
: "${SCR_TEST_TIMEOUT:=60}"

cluster_up 2 66
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_JOB_ID=t4360
export SCR_COPY_TYPE=PARTNER SCR_CACHE_SIZE=2 SCR_FLUSH=0
nodes=node0,node1

# pre RUN OP...: mpi-fileops under the preload on 2 nodes x 2 ranks in
# $PREFIX; rank 0's lines (and its children's) in $TRASH/RUN, stderr in RUN.err
pre() {
  run=$1
  shift
  (cd "$PREFIX" && SCR_PREFIX="$PREFIX" scr_cluster run --nodes $nodes --ppn 2 --timeout "$SCR_TEST_TIMEOUT" -- \
    env LD_PRELOAD="$preload" "$fileops" "$@") >"$TRASH/$run" 2>"$TRASH/$run.err"
}
# native RUN OP...: the same operations on 4 ranks without the preload, in
# the one directory $TRASH/native that all of them share
native() {
  run=$1
  shift
  mkdir -p "$TRASH/native" && (cd "$TRASH/native" && mpirun 4 "$fileops" "$@") >"$TRASH/$run" 2>"$TRASH/$run.err"
}
# both RUN OPS: native and preloaded runs of OPS, one operation a line
both() {
  ( name=$1 IFS='
'
    # shellcheck disable=SC2086 # split into lines on purpose
    set -- $2
    native "$name.native" "$@" && pre "$name" "$@" ) || { show "$1"; return 1; }
}
# show RUN: what a failed run printed
show() {
  echo "--- $1:"; cat "$TRASH/$1"
  echo "--- $1.err (hydra's lines left out):"; grep -v '^\[proxy:\|^\[mpiexec@' "$TRASH/$1.err" | tail -n 20
}
# section RUN OP: the line of the operation that starts with OP, and the
# lines that follow it up to the next operation's
section() {
  awk -v op="$2" 'index($0, op) == 1 { on = 1; print; next } /^[^ ]/ { on = 0 } on' "$TRASH/$1"
}
# same RUN OP: that section is the same in the native and the preloaded RUN
same() {
  section "$1.native" "$2" >"$TRASH/$1.want" && section "$1" "$2" >"$TRASH/$1.got" && test -s "$TRASH/$1.want" &&
    { test_cmp "$TRASH/$1.want" "$TRASH/$1.got" || { show "$1"; false; }; }
}

# A checkpoint of two files per rank (FILES=2): between the two it is in
# progress. Rank 0 runs its helpers on its first file, the rank file, then
# on the whole checkpoint once the second file completed it.
rules='PRELOAD=ckpt.{step}/rank_{rank}.dat FILES=2
PRELOAD=ckpt.{step}/meta_{rank}.txt'
ckpt_ops='mkdir@0:ckpt.5
write:ckpt.5/rank_%d.dat
popen@0:cat ckpt.5/rank_0.dat | md5sum
system@0:gzip -c ckpt.5/rank_0.dat | gunzip | md5sum
spawn@0:stat -c "%s %F" ckpt.5/rank_0.dat
forkexec@0:stat -L -c "%s %F" ckpt.5/rank_0.dat && sh -c "test -r ckpt.5/rank_0.dat" && echo readable
forkread@0:ckpt.5/rank_0.dat
spawnenv@0:stat -c "%s %F" ckpt.5/rank_0.dat
execenv@0:cat ckpt.5/rank_0.dat | md5sum
write:ckpt.5/meta_%d.txt
popen@0:ls ckpt.5
spawn@0:cat ckpt.5/meta_0.txt ckpt.5/rank_0.dat | md5sum
forkread@all:ckpt.5/rank_%d.dat
system@all:gzip -c ckpt.5/meta_%d.txt >/dev/null'

test_expect_success 'the program checkpoints and runs its helpers on the checkpoint: native and preloaded runs' '
  rm -rf "$PREFIX" && mkdir -p "$PREFIX" && printf "%s\n" "$rules" >"$PREFIX/.scrconf" &&
  both ckpt "$ckpt_ops" && no_files_below "$PREFIX"
'

test_expect_success 'popen (sh -c cat | md5sum) reads a file of a checkpoint in progress' '
  same ckpt "popen@0 cat ckpt.5/rank_0.dat | md5sum"
'

# system's child writes on the program's own output, before the operation's line
system_line() {
  grep -B1 "^system@0 gzip" "$TRASH/$1"
}
test_expect_success 'system (gzip -c | gunzip | md5sum) reads it too' '
  system_line ckpt.native >gzip.want && system_line ckpt >gzip.got && test_cmp gzip.want gzip.got
'

test_expect_success 'posix_spawn (stat) gives its size and type' '
  same ckpt "spawn@0 stat"
'

test_expect_success 'fork then exec of a script (stat, test -r) finds it readable' '
  same ckpt "forkexec@0 stat"
'

test_expect_success 'fork without exec (as multiprocessing) stats and reads it' '
  same ckpt "forkread@0 ckpt.5/rank_0.dat"
'

test_expect_success 'posix_spawn with an environment of its own (no LD_PRELOAD) stats it' '
  same ckpt "spawnenv@0 stat"
'

test_expect_success 'fork then execve with an environment of its own reads it' '
  same ckpt "execenv@0 cat"
'

test_expect_success 'once complete, ls in a child lists every rank s files of the checkpoint' '
  same ckpt "popen@0 ls ckpt.5"
'

test_expect_success 'once complete, a child reads both files of the checkpoint' '
  same ckpt "spawn@0 cat ckpt.5/meta_0.txt"
'

test_expect_success 'every rank s forked child reads that rank s file, on both nodes' '
  for r in 0 1 2 3; do
    expect_grep "^forkread@$r ckpt.5/rank_$r.dat: 7 ok" ckpt || return 1
  done
'

test_expect_success 'every rank s gzip reads that rank s second file' '
  for r in 0 1 2 3; do
    expect_grep "^system@$r gzip -c ckpt.5/meta_$r.txt >/dev/null: 0 ok" ckpt || return 1
  done
'

# a child's changes to the checkpoint fail; it stays as it was
readonly_ops='popen@0:rm ckpt.5/rank_0.dat; mv ckpt.5/meta_0.txt ckpt.5/moved; echo x >ckpt.5/rank_0.dat; truncate -s 0 ckpt.5/meta_0.txt; echo $?'
test_expect_success 'a child cannot change the checkpoint: rm, mv, > and truncate fail with EROFS' '
  pre ro "$readonly_ops" "popen@0:ls ckpt.5" "popen@0:cat ckpt.5/meta_0.txt ckpt.5/rank_0.dat | md5sum" &&
  { test "$(grep -c "Read-only file system" ro.err)" = 4 || { show ro; false; }; } &&
  section ckpt "popen@0 ls ckpt.5" >ro.want && section ro "popen@0 ls ckpt.5" >ro.got && test_cmp ro.want ro.got &&
  section ckpt "spawn@0 cat ckpt.5/meta_0.txt" | sed 1d >ro.want &&
  section ro "popen@0 cat ckpt.5/meta_0.txt" | sed 1d >ro.got && test_cmp ro.want ro.got
'

restart_ops='popen@0:cat ckpt.5/meta_0.txt ckpt.5/rank_0.dat | md5sum
popen@0:ls ckpt.5
forkread@all:ckpt.5/rank_%d.dat'
test_expect_success 'after a restart from cache, children see the restored checkpoint' '
  both again "$restart_ops" &&
  { expect_grep "restarting from dataset 1 (ckpt.5) in cache" again.err && test_cmp again.native again ||
    { show again; false; }; }
'

# a child that is an MPI program of its own (started without mpiexec, as a
# singleton: the job's PMI variables removed)
inner_cmd="system@0:cd $TRASH/inner && env -u PMI_FD -u PMI_RANK -u PMI_SIZE SCR_JOB_ID=t4360in SCR_PREFIX=$TRASH/inner $fileops write:in.3.0 read:in.3.0 read:$PREFIX/ckpt.5/rank_0.dat"
test_expect_success 'a child that calls MPI_Init is a rank of its own job, with its own rules and cache' '
  mkdir -p inner && printf "PRELOAD=in.{step}.{rank}\n" >inner/.scrconf &&
  pre nested "$inner_cmd" &&
  { expect_grep "^write in.3.0: 0 ok" nested && expect_grep "^read in.3.0: 7 ok" nested &&
    expect_grep "^read $PREFIX/ckpt.5/rank_0.dat: -1 No such file or directory" nested &&
    expect_grep "^system@0 cd .*: 0 ok" nested && ! test -e inner/in.3.0 &&
    test -n "$(cluster exec node0 -- find /scr-local/cache -path "*scr.t4360in*" -name in.3.0)" ||
    { show nested; false; }; }
'

test_done
