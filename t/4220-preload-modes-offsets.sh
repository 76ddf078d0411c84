#!/bin/sh
# 4220-preload-modes-offsets.sh - what a program sees of a routed file's offset
# and of a virtual directory's mode is what it sees without the preload: the
# position of a stream or descriptor opened for appending (fopen "a" seeks to
# the end, "a+" and open(O_APPEND) do not), and the permissions a rule
# directory that exists only in the view was made with (mkdir's mode less the
# umask; a chmod since). Each test runs mpi-fileops on 2 ranks of one node,
# natively and under the preload, and compares rank 0's lines.
. "$top_srcdir/t/test-lib.sh"

export SCR_CACHE_BASE="$TRASH/cache" SCR_CNTL_BASE="$TRASH/cntl" SCR_JOB_ID=t4220 SCR_COPY_TYPE=SINGLE SCR_FLUSH=0

preload_prelude "offsets and modes under the preload"

# same NAME RULE OP...: mpi-fileops in a fresh $TRASH/NAME.native without the
# preload and in $TRASH/NAME.preload under it with RULE in .scrconf, umask
# 027 (so that mkdir's mode and what it makes differ); rank 0's lines must be
# the same
same() {
  name=$1 rule=$2
  shift 2
  rm -rf "$TRASH/$name.native" "$TRASH/$name.preload" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" &&
    mkdir -p "$TRASH/$name.native" "$TRASH/$name.preload" &&
    echo "PRELOAD=$rule" >"$TRASH/$name.preload/.scrconf" &&
    (umask 027 && cd "$TRASH/$name.native" && mpirun 2 "$fileops" "$@") >"$TRASH/$name.native.out" 2>&1 &&
    (umask 027 && cd "$TRASH/$name.preload" && mpirun 2 env LD_PRELOAD="$preload" "$fileops" "$@") \
      >"$TRASH/$name.preload.out" 2>"$TRASH/$name.preload.err" &&
    test_cmp "$TRASH/$name.native.out" "$TRASH/$name.preload.out"
}

log='ckpt.{step}/log_{rank}.txt'
dat='ckpt.{step}/rank_{rank}.dat'

test_expect_success 'fopen "a" of a file of a completed checkpoint: ftell tells its size at once' "
  same fopen-a '$log' mkdir@0:ckpt.1 fwrite:ckpt.1/log_%d.txt tell:a=ckpt.1/log_%d.txt read:ckpt.1/log_%d.txt &&
  expect_grep '^tell a=ckpt.1/log_0.txt: 7 ok\$' fopen-a.preload.out && expect_grep '^  = 7 11\$' fopen-a.preload.out
"

test_expect_success 'fopen "a+" of a file of a completed checkpoint: ftell 0 until the first write, as in libc' "
  same fopen-aplus '$log' mkdir@0:ckpt.1 fwrite:ckpt.1/log_%d.txt tell:a+=ckpt.1/log_%d.txt read:ckpt.1/log_%d.txt
"

test_expect_success 'fopen "ab" and "ae" (modifiers after the a) seek to the end too' "
  same fopen-ab '$log' mkdir@0:ckpt.1 fwrite:ckpt.1/log_%d.txt tell:ab=ckpt.1/log_%d.txt tell:ae=ckpt.1/log_%d.txt \
    read:ckpt.1/log_%d.txt
"

test_expect_success 'freopen "a" of a file of a completed checkpoint: ftell tells its size' "
  same freopen-a '$log' mkdir@0:ckpt.1 fwrite:ckpt.1/log_%d.txt tell:freopen=ckpt.1/log_%d.txt read:ckpt.1/log_%d.txt
"

test_expect_success 'open(O_APPEND) of a file of a completed checkpoint: offset 0 until the first write' "
  same open-append '$log' mkdir@0:ckpt.1 fwrite:ckpt.1/log_%d.txt tell:open=ckpt.1/log_%d.txt read:ckpt.1/log_%d.txt
"

test_expect_success 'fopen "a" of a checkpoint file that does not exist yet' "
  same fopen-new '$log' mkdir@0:ckpt.1 tell:a=ckpt.1/log_%d.txt read:ckpt.1/log_%d.txt
"

test_expect_success 'a virtual directory shows the mode mkdir gave it less the umask' "
  same mkdir-mode '$dat' mkdirm@0:775=ckpt.1 modes@0:ckpt.1 &&
  expect_grep '^modes@0 ckpt.1: 750 ok\$' mkdir-mode.preload.out &&
  expect_grep '^  = 750 750 750 750 750 750\$' mkdir-mode.preload.out
"

test_expect_success 'a virtual directory keeps its mode once files are written in it' "
  same mkdir-files '$dat' mkdirm@0:751=ckpt.1 write:ckpt.1/rank_%d.dat modes@0:ckpt.1 modes@0:ckpt.1/rank_%d.dat
"

test_expect_success 'nested virtual directories each show their own mode' "
  same mkdir-nested 'ckpt.{step}/part/rank_{rank}.dat' mkdirm@0:711=ckpt.1 mkdirm@0:755=ckpt.1/part \
    write:ckpt.1/part/rank_%d.dat modes@0:ckpt.1/part modes@0:ckpt.1
"

test_expect_success 'chmod of a virtual directory: stat shows the new mode' "
  same chmod-dir '$dat' mkdirm@0:750=ckpt.1 chmodm@0:705=ckpt.1 modes@0:ckpt.1 write:ckpt.1/rank_%d.dat modes@0:ckpt.1
"

test_expect_success 'a directory the flush makes on the file system keeps the mode mkdir gave it' "
  (SCR_FLUSH=1 && export SCR_FLUSH && same flush-mode '$dat' mkdirm@0:700=ckpt.1 write:ckpt.1/rank_%d.dat) &&
  test \$(stat -c %a flush-mode.native/ckpt.1) = 700 &&
  test \$(stat -c %a flush-mode.preload/ckpt.1/rank_0.dat) = \$(stat -c %a flush-mode.native/ckpt.1/rank_0.dat) &&
  test \$(stat -c %a flush-mode.preload/ckpt.1) = 700
"

test_expect_success 'a directory made real for a file no rule matches keeps the mode mkdir gave it' "
  same materialize-mode '$dat' mkdirm@0:700=ckpt.1 write@0:ckpt.1/notes.txt &&
  test \$(stat -c %a materialize-mode.native/ckpt.1) = 700 &&
  test \$(stat -c %a materialize-mode.preload/ckpt.1) = 700
"

test_done
