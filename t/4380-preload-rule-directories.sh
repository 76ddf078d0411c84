#!/bin/sh
# 4380-preload-rule-directories.sh - directories at names a rule matches as
# files: a pattern ending in ** (PRELOAD=**/@test_**, the python suite's
# rule 'deep', t/4370) matches a directory @test_d as it matches the files
# below it, and a trailing '/' makes any name a directory's. Every call must
# answer as natively: mpi-fileops on 1 rank, natively and under the preload,
# the same lines out (issue 20, the python suite's rule deep).
. "$top_srcdir/t/test-lib.sh"

preload_prelude "directories at the names of a rule's files"
export SCR_JOB_ID=t4380 SCR_FLUSH=0

# ops MODE DIR RULE OP...: mpi-fileops on 1 rank in $TRASH/MODE.DIR (made
# afresh, with RULE in its .scrconf), under the preload (MODE pre) or not
# (nat); its output in MODE.DIR.out
ops() {
  mode=$1 dir=$2 rule=$3
  shift 3
  rm -rf "$TRASH/$mode.$dir" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$TRASH/$mode.$dir" &&
    echo "$rule" >"$TRASH/$mode.$dir/.scrconf" || return 1
  if [ "$mode" = pre ]; then
    (cd "$TRASH/$mode.$dir" && mpirun 1 env LD_PRELOAD="$preload" "$fileops" "$@") >"$TRASH/$mode.$dir.out" \
      2>"$TRASH/$mode.$dir.out.err"
  else
    (cd "$TRASH/$mode.$dir" && mpirun 1 "$fileops" "$@") >"$TRASH/$mode.$dir.out" 2>"$TRASH/$mode.$dir.out.err"
  fi
}
# same DIR RULE OP...: the preload's output is the native one, which has
# the lines EXPECT (a variable) among it, so that the test knows what it tests
same() {
  dir=$1 rule=$2
  shift 2
  ops nat "$dir" "$rule" "$@" && ops pre "$dir" "$rule" "$@" || return 1
  printf '%s\n' "$expect" | while read -r line; do
    test -z "$line" || expect_grep "^$line\$" "$TRASH/nat.$dir.out" || return 1
  done &&
    test_cmp "$TRASH/nat.$dir.out" "$TRASH/pre.$dir.out" &&
    expect_grep 'preload summary' "$TRASH/pre.$dir.out.err"
}

deep='PRELOAD=**/@test_** TYPE=CHECKPOINT'
tmp='PRELOAD=**/tmp*/** TYPE=CHECKPOINT'

test_expect_success "open('d/missing/', O_WRONLY|O_CREAT|O_TRUNC): EISDIR, no file made; 'file/' is not a directory" "
  expect='write tmpa/missing/: -1 Is a directory
stat tmpa/missing: -1 No such file or directory
stat tmpa/f/: -1 Not a directory
read tmpa/f/: -1 Not a directory' &&
  same slash '$tmp' mkdir:tmpa write:tmpa/missing/ stat:tmpa/missing write:tmpa/f write:tmpa/f/ stat:tmpa/f/ \
    read:tmpa/f/ stat:tmpa/f/. stat:tmpa/f/x
"

test_expect_success 'a name once a directory of cached files is a file again once the directory is gone' "
  expect='rmdir @test_d: 0 ok
write @test_d: 0 ok
kind @test_d: 1 ok' &&
  same again '$deep' mkdir:@test_d write:@test_d/f unlink:@test_d/f rmdir:@test_d write:@test_d stat:@test_d \
    kind:@test_d unlink:@test_d mkdir:@test_d write:@test_d/f unlink:@test_d/f rmdir:@test_d write:@test_d \
    read:@test_d
"

test_expect_success 'the same for a file renamed to that name, and after rmtree' "
  expect='rename @test_x=@test_d: 0 ok' &&
  same again2 '$deep' mkdir:@test_d write:@test_d/f rmtree:@test_d write:@test_x rename:@test_x=@test_d \
    stat:@test_d kind:@test_d
"

test_expect_success 'rename of a directory of cached files that the rule matches: its files follow, nothing stays' "
  expect='rename @test_d=@test_e: 0 ok
stat @test_e/f: 7 ok
stat @test_d/f: -1 No such file or directory
ls @test_e: 1 ok' &&
  same rename '$deep' mkdir:@test_d write:@test_d/f rename:@test_d=@test_e kind:@test_e kind:@test_d \
    stat:@test_e/f stat:@test_d/f ls:@test_e read:@test_e/f
"

test_expect_success 'rename of such a directory where the file system refuses it: as natively' "
  expect='rename @test_d=@test_g/x: -1 Not a directory
rename @test_d=@test_d/y: -1 Invalid argument' &&
  same rename2 '$deep' mkdir:@test_d write:@test_d/f mkdir:@test_g write:@test_g/x rename:@test_d=@test_g/x \
    write:@test_g/y/ mkdir:@test_e write:@test_e/z rename:@test_d=@test_e rename:@test_d=@test_d/y stat:@test_d/f
"

test_expect_success 'rmdir of a directory that holds only cached files: ENOTEMPTY' "
  expect='rmdir @test_d: -1 Directory not empty
kind @test_d: 2 ok' &&
  same rmdir '$deep' mkdir:@test_d write:@test_d/f rmdir:@test_d kind:@test_d stat:@test_d/f rmtree:@test_d \
    kind:@test_d
"

test_expect_success 'a name below a cached file: ENOTDIR' "
  expect='write @test_f/x: -1 Not a directory
stat @test_f/x: -1 Not a directory
read @test_f/x: -1 Not a directory' &&
  same below '$deep' write:@test_f write:@test_f/x stat:@test_f/x read:@test_f/x mkdir:@test_f/y excl:@test_f/x
"

test_expect_success 'a directory on the file system at a rule file name: open for writing is EISDIR, no file shadows it' "
  expect='write @test_d: -1 Is a directory
update @test_d: -1 Is a directory
unlink @test_d: -1 Is a directory' &&
  same isdir '$deep' mkdir:@test_d write:@test_d write:@test_d/f excl:@test_d rewrite:@test_d update:@test_d \
    read:@test_d unlink:@test_d mkdir:@test_e mkdir:@test_e/sub write:@test_e/sub write:@test_e/sub/ stat:@test_e/sub
"

test_expect_success 'the access time futimens set on a routed file survives its close (the checkpoint reads it)' "
  expect='atimew @test_a: 0 ok
atime @test_a: 0 ok
atimew @test_d/f: 0 ok' &&
  same atime '$deep' write:@test_x atimew:@test_a atimew:@test_x atime:@test_a mkdir:@test_d atimew:@test_d/f \
    atime:@test_d/f
"

test_done
