#!/bin/sh
# 4260-preload-dirfd-mirror.sh - calls through the descriptor of a rule
# directory that exists only in the view (made by mkdir, not flushed): such a
# descriptor is one of its mirror in the cache, but what the program makes
# through it that no rule matches (openat, mkdirat, renameat, fchdir then
# fopen) lands at the original path on the file system, with its bytes,
# after MPI_Finalize, as without the preload; rule files through it still go
# to the cache and come back on restart. Each run is compared with the same
# operations without the preload. 2 ranks, mpi-fileops does the I/O.
. "$top_srcdir/t/test-lib.sh"

export SCR_JOB_ID=t4260 SCR_COPY_TYPE=SINGLE SCR_FLUSH=0
rule='PRELOAD=ckpt.{step}/rank_{rank}.dat BOUNDARY=BARRIER'

preload_prelude "calls through descriptors of virtual directories"

# run MODE NAME OP...: mpi-fileops on 2 ranks in $TRASH/NAME.MODE, MODE nat
# (natively) or pre (under the preload, with the rule unless NORULE=1, its
# cache in $TRASH/NAME.cache, kept for a restart); rank 0's lines in
# NAME.MODE.out, without mkdir's (which rank makes a shared directory first
# is a race), stderr in NAME.MODE.err
run() {
  mode=$1 name=$2
  shift 2
  dir="$TRASH/$name.$mode"
  mkdir -p "$dir" || return 1
  if test $mode = pre; then
    test -n "$NORULE" || echo "$rule" >"$dir/.scrconf"
    (cd "$dir" && SCR_CACHE_BASE="$TRASH/$name.cache" SCR_CNTL_BASE="$TRASH/$name.cntl" \
      mpirun 2 env LD_PRELOAD="$preload" "$fileops" "$@") >"$TRASH/$name.$mode.raw" 2>"$TRASH/$name.$mode.err"
  else
    (cd "$dir" && mpirun 2 "$fileops" "$@") >"$TRASH/$name.$mode.raw" 2>"$TRASH/$name.$mode.err"
  fi
  rc=$?
  grep -v '^mkdir ' "$TRASH/$name.$mode.raw" >"$TRASH/$name.$mode.out"
  return $rc
}

# both NAME OP...: natively and under the preload, with the same lines
both() {
  name=$1
  shift
  run nat "$name" "$@" && run pre "$name" "$@" && test_cmp "$TRASH/$name.nat.out" "$TRASH/$name.pre.out"
}

# holds FILE TEXT: FILE is on the file system and holds the line TEXT
holds() { test -f "$1" && test "$(cat "$1")" = "$2" || { echo "$1: not '$2'"; ls -la "$(dirname "$1")"; return 1; }; }

# not_cached NAME FILE: no copy of FILE is left in the cache (the mirror is gone)
not_cached() { test -z "$(find "$TRASH/$1.cache" -name "$2" 2>/dev/null)"; }

test_expect_success 'without rules the preload changes nothing' "
  NORULE=1 both norule mkdir:ckpt.1 dirfd:ckpt.1 writeat:notes_%d.txt writeat:../log_%d.txt mkdirat:sub_%d \
    sameat:..=. fchdir: cwd: fwrite:f_%d.txt &&
  holds $TRASH/norule.pre/ckpt.1/notes_1.txt 'rank 1' && holds $TRASH/norule.pre/ckpt.1/f_0.txt 'rank 0'
"

test_expect_success 'openat of a new file that no rule matches: made in the directory on the file system' "
  both notes mkdir:ckpt.1 dirfd:ckpt.1 writeat:notes_%d.txt stat:ckpt.1/notes_0.txt readat:notes_0.txt &&
  expect_grep '^stat ckpt.1/notes_0.txt: 7 ok\$' notes.pre.out &&
  holds $TRASH/notes.pre/ckpt.1/notes_0.txt 'rank 0' && holds $TRASH/notes.pre/ckpt.1/notes_1.txt 'rank 1' &&
  not_cached notes notes_0.txt
"

test_expect_success 'openat of ../NAME through the descriptor: made in the directory above, on the file system' "
  both up mkdir:ckpt.1 dirfd:ckpt.1 writeat:../log_%d.txt stat:log_0.txt &&
  expect_grep '^stat log_0.txt: 7 ok\$' up.pre.out &&
  holds $TRASH/up.pre/log_0.txt 'rank 0' && holds $TRASH/up.pre/log_1.txt 'rank 1' && not_cached up log_1.txt
"

test_expect_success 'mkdirat through the descriptor: the directory is made on the file system, and files in it' "
  both sub mkdir:ckpt.1 dirfd:ckpt.1 mkdirat:sub_%d writeat:sub_%d/x.txt mode:ckpt.1/sub_0 stat:ckpt.1/sub_0/x.txt &&
  expect_grep '^mode ckpt.1/sub_0: 755 ok\$' sub.pre.out &&
  test -d $TRASH/sub.pre/ckpt.1/sub_1 && holds $TRASH/sub.pre/ckpt.1/sub_1/x.txt 'rank 1'
"

test_expect_success 'renameat and unlinkat through the descriptor act on the file system' "
  both mv mkdir:ckpt.1 dirfd:ckpt.1 writeat:tmp_%d.txt renameat:tmp_%d.txt=kept_%d.txt writeat:gone_%d.txt \
    unlinkat:gone_%d.txt stat:ckpt.1/kept_0.txt stat:ckpt.1/gone_0.txt &&
  expect_grep '^renameat tmp_0.txt=kept_0.txt: 0 ok\$' mv.pre.out &&
  holds $TRASH/mv.pre/ckpt.1/kept_1.txt 'rank 1' && ! test -e $TRASH/mv.pre/ckpt.1/tmp_1.txt &&
  ! test -e $TRASH/mv.pre/ckpt.1/gone_1.txt
"

test_expect_success 'lookups through the descriptor: .. is the directory above, a missing name is missing' "
  both look mkdir:ckpt.1 dirfd:ckpt.1 sameat:..=. readat:missing.txt sameat:../ckpt.1=ckpt.1 &&
  expect_grep '^sameat ..=.: 1 ok\$' look.pre.out &&
  expect_grep '^readat missing.txt: -1 No such file or directory\$' look.pre.out
"

test_expect_success 'rule files through the descriptor go to the cache, beside a file that no rule matches' "
  both route mkdir:ckpt.1 mkdir:ckpt.2 dirfd:ckpt.1 writeat:rank_%d.dat writeat:../ckpt.2/rank_%d.dat \
    writeat:notes_%d.txt &&
  ! test -e $TRASH/route.pre/ckpt.1/rank_0.dat && ! test -e $TRASH/route.pre/ckpt.2/rank_1.dat &&
  test -n \"\$(find $TRASH/route.cache -name rank_1.dat -size +0)\" &&
  holds $TRASH/route.pre/ckpt.1/notes_1.txt 'rank 1'
"

test_expect_success 'a restart reads the newest back, by name and through a descriptor' "
  both route read:ckpt.2/rank_%d.dat dirfd:ckpt.2 readat:rank_%d.dat dirfd:ckpt.1 readat:notes_%d.txt &&
  expect_grep '^read ckpt.2/rank_0.dat: 7 ok\$' route.pre.out && expect_grep '^readat rank_0.dat: 7 ok\$' route.pre.out
"

test_expect_success 'fchdir into the directory: getcwd and .. as without the preload, new files on the file system' "
  both cd mkdir:ckpt.1 dirfd:ckpt.1 fchdir: cwd: fwrite:notes_%d.txt write:rank_%d.dat chdir:.. cwd: \
    stat:ckpt.1/notes_0.txt stat:ckpt.1/rank_0.dat &&
  expect_grep '^  = ckpt.1\$' cd.pre.out &&
  holds $TRASH/cd.pre/ckpt.1/notes_0.txt 'rank 0' && holds $TRASH/cd.pre/ckpt.1/notes_1.txt 'rank 1' &&
  ! test -e $TRASH/cd.pre/ckpt.1/rank_0.dat && not_cached cd notes_0.txt
"

test_expect_success 'the rule files written after fchdir come back on restart' "
  both cd read:ckpt.1/rank_%d.dat && expect_grep '^read ckpt.1/rank_0.dat: 7 ok\$' cd.pre.out
"

test_done
