#!/bin/sh
# 4240-preload-deletions.sh - what a program deletes or renames away under the
# preload is gone, as on a file system: a file attached to a checkpoint (with
# its copy on the prefix directory), every cached version of a name, and a
# checkpoint whose files the program deleted, which is then neither flushed as
# complete nor offered at a restart. One node; mpi-fileops does the I/O, and
# the same operations without the preload give the expected output.
. "$top_srcdir/t/test-lib.sh"

export SCR_JOB_ID=t4240 SCR_COPY_TYPE=SINGLE

preload_prelude "deletions under the preload"

# pre N DIR OUT OP...: mpi-fileops on N ranks under the preload, in $TRASH/DIR;
# rank 0's lines in $TRASH/OUT, stderr in OUT.err
pre() {
  n=$1 dir=$2 out=$3
  shift 3
  (cd "$TRASH/$dir" && mpirun "$n" env LD_PRELOAD="$preload" "$fileops" "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
}
# native N DIR OUT OP...: the same operations without the preload, in a new DIR
native() {
  n=$1 dir=$2 out=$3
  shift 3
  rm -rf "$TRASH/$dir" && mkdir -p "$TRASH/$dir" &&
    (cd "$TRASH/$dir" && mpirun "$n" "$fileops" "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
}
# fresh DIR RULE...: an empty DIR with these rules, and empty caches
fresh() {
  dir=$1
  shift
  rm -rf "$TRASH/$dir" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$TRASH/$dir" &&
    printf '%s\n' "$@" >"$TRASH/$dir/.scrconf"
}
# a new allocation: the node-local storage is gone
wipe() { rm -rf "$SCR_CACHE_BASE" "$SCR_CNTL_BASE"; }

deck_rules='PRELOAD=ckpt/step_{step}/rank_{rank}.bin
PRELOAD=ckpt/step_{step}/deck_{rank}.txt'
deck='mkdir@0:ckpt mkdir@0:ckpt/step_2 write:ckpt/step_2/rank_%d.bin write:ckpt/step_2/deck_%d.txt'

test_expect_success 'a file attached to a checkpoint and deleted is gone, its copies on the prefix directory too' "
  fresh att \"\$deck_rules\" &&
  ops=\"\$deck unlink:ckpt/step_2/deck_%d.txt stat:ckpt/step_2/deck_%d.txt read:ckpt/step_2/rank_%d.bin\" &&
  native 2 att.native att.native.out \$ops && SCR_FLUSH=1 pre 2 att att.out \$ops &&
  test_cmp att.native.out att.out && expect_grep 'deck_0.txt is a file of step 2, which completed' att.out.err &&
  test -z \"\$(find $TRASH/att -name 'deck_*')\" &&
  scr_index -p $TRASH/att >att.index && expect_grep '^ *1  ckpt/step_2 .* ok  *[a-z-]*\$' att.index
"

test_expect_success 'the deleted attached file stays gone after a restart, from cache and fetched' "
  SCR_FLUSH=1 pre 2 att att.cached.out stat:ckpt/step_2/deck_%d.txt stat@1:ckpt/step_2/deck_%d.txt &&
  expect_grep 'restarting from dataset 1 (ckpt/step_2) in cache' att.cached.out.err &&
  printf '%s\\n' 'stat ckpt/step_2/deck_0.txt: -1 No such file or directory' \
    'stat@1 ckpt/step_2/deck_1.txt: -1 No such file or directory' >att.gone.expect &&
  test_cmp att.gone.expect att.cached.out &&
  wipe && SCR_FLUSH=1 pre 2 att att.fetched.out stat:ckpt/step_2/deck_%d.txt stat@1:ckpt/step_2/deck_%d.txt &&
  expect_grep 'ckpt/step_2' att.fetched.out.err && test_cmp att.gone.expect att.fetched.out
"

test_expect_success 'a file attached to a checkpoint and renamed away leaves its old name, now and after a restart' "
  fresh attmv \"\$deck_rules\" &&
  ops=\"\$deck rename:ckpt/step_2/deck_%d.txt=deck_backup_%d.txt stat:ckpt/step_2/deck_%d.txt\" &&
  ops=\"\$ops read:deck_backup_%d.txt\" &&
  native 2 attmv.native attmv.native.out \$ops && SCR_FLUSH=0 pre 2 attmv attmv.out \$ops &&
  test_cmp attmv.native.out attmv.out && test -z \"\$(find $TRASH/attmv/.scr -name 'deck_*')\" &&
  SCR_FLUSH=0 pre 2 attmv attmv.again.out stat:ckpt/step_2/deck_%d.txt stat@1:ckpt/step_2/deck_%d.txt &&
  expect_grep 'restarting from dataset 1 (ckpt/step_2) in cache' attmv.again.out.err &&
  printf '%s\\n' 'stat ckpt/step_2/deck_0.txt: -1 No such file or directory' \
    'stat@1 ckpt/step_2/deck_1.txt: -1 No such file or directory' >attmv.again.expect &&
  test_cmp attmv.again.expect attmv.again.out
"

test_expect_success 'a checkpoint directory whose attached file was renamed away is removed whole' "
  fresh attrm \"\$deck_rules\" &&
  ops=\"\$deck rename:ckpt/step_2/deck_%d.txt=deck_backup_%d.txt rmtree:ckpt stat:ckpt\" &&
  native 1 attrm.native attrm.native.out \$ops && SCR_FLUSH=0 pre 1 attrm attrm.out \$ops &&
  test_cmp attrm.native.out attrm.out
"

test_expect_success 'unlink of a name written again drops every cached version of it' "
  fresh again 'PRELOAD=restart_{rank}.dat' &&
  ops='write:restart_%d.dat update:restart_%d.dat unlink:restart_%d.dat stat:restart_%d.dat' &&
  native 2 again.native again.native.out \$ops && SCR_FLUSH=0 SCR_CACHE_SIZE=2 pre 2 again again.out \$ops &&
  test_cmp again.native.out again.out &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=2 pre 2 again again.next.out stat:restart_%d.dat &&
  expect_grep '^stat restart_0.dat: -1 No such file or directory\$' again.next.out &&
  ! grep -q 'sees checkpoint' again.next.out.err
"

test_expect_success 'rename of a name written again to a name no rule matches leaves no version at the old name' "
  fresh mvout 'PRELOAD=restart_{rank}.dat' &&
  ops='write:restart_%d.dat update:restart_%d.dat rename:restart_%d.dat=old_%d.dat stat:restart_%d.dat' &&
  ops=\"\$ops read:old_%d.dat\" &&
  native 2 mvout.native mvout.native.out \$ops && SCR_FLUSH=0 SCR_CACHE_SIZE=2 pre 2 mvout mvout.out \$ops &&
  test_cmp mvout.native.out mvout.out
"

test_expect_success 'rename of a name written again within the cache leaves no version at the old name' "
  fresh mvin 'PRELOAD=restart_{rank}.dat*' &&
  ops='write:restart_%d.dat update:restart_%d.dat rename:restart_%d.dat=restart_%d.dat.bak stat:restart_%d.dat' &&
  ops=\"\$ops read:restart_%d.dat.bak\" &&
  native 2 mvin.native mvin.native.out \$ops && SCR_FLUSH=0 SCR_CACHE_SIZE=2 pre 2 mvin mvin.out \$ops &&
  test_cmp mvin.native.out mvin.out && test -n \"\$(find $SCR_CACHE_BASE -name restart_1.dat.bak)\"
"

for size in 1 2; do
  test_expect_success "SCR_CACHE_SIZE=$size: a new version deleted while open (close(status='delete')) leaves none" "
    fresh open$size 'PRELOAD=restart_{rank}.dat' &&
    ops='write:restart_%d.dat holdnew:restart_%d.dat unlink:restart_%d.dat stat:restart_%d.dat release:-' &&
    ops=\"\$ops stat:restart_%d.dat\" &&
    native 2 open$size.native open$size.native.out \$ops &&
    SCR_FLUSH=0 SCR_CACHE_SIZE=$size pre 2 open$size open$size.out \$ops &&
    test_cmp open$size.native.out open$size.out &&
    SCR_FLUSH=0 SCR_CACHE_SIZE=$size pre 2 open$size open$size.next.out stat:restart_%d.dat &&
    expect_grep '^stat restart_0.dat: -1 No such file or directory\$' open$size.next.out &&
    ! grep -q 'sees checkpoint' open$size.next.out.err
  "
done

test_expect_success 'a new step whose file is deleted while open leaves the checkpoint before it restorable' "
  fresh step 'PRELOAD=ck.{step}/r_{rank}.dat' &&
  ops='mkdir@0:ck.1 write:ck.1/r_%d.dat mkdir@0:ck.2 holdnew:ck.2/r_%d.dat unlink:ck.2/r_%d.dat release:- \
    read:ck.1/r_%d.dat stat:ck.2/r_%d.dat' &&
  native 2 step.native step.native.out \$ops && SCR_FLUSH=0 SCR_CACHE_SIZE=1 pre 2 step step.out \$ops &&
  test_cmp step.native.out step.out &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=1 pre 2 step step.next.out read:ck.1/r_%d.dat &&
  expect_grep \"sees checkpoint 'ck.1' at its original paths\" step.next.out.err &&
  expect_grep '^read ck.1/r_0.dat: 7 ok\$' step.next.out
"

gone='mkdir@0:ckpt mkdir@0:ckpt/step_2 write:ckpt/step_2/rank_%d.bin unlink:ckpt/step_2/rank_%d.bin
  rmdir@0:ckpt/step_2 rmdir@0:ckpt stat:ckpt'

test_expect_success 'a checkpoint every rank deleted is not flushed at MPI_Finalize, nor restored' "
  fresh gone 'PRELOAD=ckpt/step_{step}/rank_{rank}.bin' &&
  native 2 gone.native gone.native.out \$gone && SCR_FLUSH=2 pre 2 gone gone.out \$gone &&
  test_cmp gone.native.out gone.out &&
  { scr_index -p $TRASH/gone >gone.index 2>&1; ! grep 'ckpt/step_2' gone.index | grep -qv ' CACHED '; } &&
  wipe && SCR_FLUSH=2 pre 2 gone gone.next.out stat:ckpt/step_2/rank_%d.bin &&
  expect_grep '^stat ckpt/step_2/rank_0.bin: -1 No such file or directory\$' gone.next.out &&
  ! grep -q 'restarting from' gone.next.out.err
"

# flushed before the deletions (synchronously: one flushed in the background
# and deleted before its publish is not published at all, t/4320)
test_expect_success 'a flushed checkpoint every rank deleted is incomplete in the index, and not current' "
  fresh gone1 'PRELOAD=ckpt/step_{step}/rank_{rank}.bin' &&
  SCR_FLUSH=1 SCR_FLUSH_ASYNC=0 pre 2 gone1 gone1.out \$gone && test_cmp gone.native.out gone1.out &&
  scr_index -p $TRASH/gone1 >gone1.index && expect_grep '^ *1  ckpt/step_2 .* INCOMPLETE  *[a-z-]*\$' gone1.index &&
  ! grep -q ' [*] ' gone1.index &&
  wipe && SCR_FLUSH=1 pre 2 gone1 gone1.next.out stat:ckpt/step_2/rank_%d.bin &&
  ! grep -q 'restarting from' gone1.next.out.err
"

test_expect_success 'a checkpoint one rank deleted its file of is not flushed as complete, nor restored' "
  fresh half 'PRELOAD=ckpt/step_{step}/rank_{rank}.bin' &&
  SCR_FLUSH=2 pre 2 half half.out mkdir@0:ckpt mkdir@0:ckpt/step_2 write:ckpt/step_2/rank_%d.bin \
    unlink@1:ckpt/step_2/rank_%d.bin &&
  expect_grep '^unlink@1 ckpt/step_2/rank_1.bin: 0 ok\$' half.out &&
  { scr_index -p $TRASH/half >half.index 2>&1; ! grep -q 'ckpt/step_2 .* ok  *[a-z-]*\$' half.index; } &&
  SCR_FLUSH=2 pre 2 half half.next.out stat:ckpt/step_2/rank_%d.bin &&
  ! grep -q 'restarting from\\|sees checkpoint' half.next.out.err
"

test_expect_success 'the checkpoint before a deleted one is flushed at MPI_Finalize and fetched by the next run' "
  fresh older 'PRELOAD=ckpt/step_{step}/rank_{rank}.bin' &&
  SCR_FLUSH=5 SCR_CACHE_SIZE=2 pre 2 older older.out mkdir@0:ckpt mkdir@0:ckpt/step_1 mkdir@0:ckpt/step_2 \
    write:ckpt/step_1/rank_%d.bin write:ckpt/step_2/rank_%d.bin unlink:ckpt/step_2/rank_%d.bin &&
  scr_index -p $TRASH/older >older.index && expect_grep '^ *1  ckpt/step_1 .* [*] *ok  *[a-z-]*\$' older.index &&
  ! grep -q 'ckpt/step_2 .* ok  *[a-z-]*\$' older.index &&
  wipe && SCR_FLUSH=5 pre 2 older older.next.out read:ckpt/step_1/rank_%d.bin stat:ckpt/step_2/rank_%d.bin &&
  expect_grep 'restarting from dataset 1 (ckpt/step_1)' older.next.out.err &&
  printf '%s\\n' 'read ckpt/step_1/rank_0.bin: 7 ok' 'stat ckpt/step_2/rank_0.bin: -1 No such file or directory' \
    >older.next.expect && test_cmp older.next.expect older.next.out
"

test_expect_success 'a rename after a deletion does not hide it: the checkpoint is not flushed as complete' "
  fresh hid 'PRELOAD=ckpt/step_{step}/*_{rank}.bin FILES=2' &&
  SCR_FLUSH=2 pre 2 hid hid.out mkdir@0:ckpt mkdir@0:ckpt/step_2 write:ckpt/step_2/a_%d.bin \
    write:ckpt/step_2/b_%d.bin unlink@1:ckpt/step_2/a_%d.bin rename@1:ckpt/step_2/b_%d.bin=ckpt/step_2/c_%d.bin &&
  expect_grep '^rename@1 ckpt/step_2/b_1.bin=ckpt/step_2/c_1.bin: 0 ok\$' hid.out &&
  { scr_index -p $TRASH/hid >hid.index 2>&1; ! grep -q 'ckpt/step_2 .* ok  *[a-z-]*\$' hid.index; } &&
  wipe && SCR_FLUSH=2 pre 2 hid hid.next.out stat:ckpt/step_2/c_%d.bin &&
  ! grep -q 'restarting from' hid.next.out.err
"

test_done
