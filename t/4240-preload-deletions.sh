#!/bin/sh
# 4240-preload-deletions.sh - what a program deletes or renames away under the
# preload is gone, as on a file system: a file attached to a checkpoint (with
# its copy on the prefix directory), every cached version of a name, and a
# checkpoint whose files the program deleted, which is then neither flushed as
# complete nor offered at a restart. One node; mpi-fileops does the I/O, and
# the same operations without the preload give the expected output.
. "$top_srcdir/t/test-lib.sh"

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
preload="$top_builddir/.libs/libscr_preload.so"
fileops="$top_builddir/t/helpers/mpi-fileops"
export SCR_JOB_ID=t4240 SCR_COPY_TYPE=SINGLE

if ! test -f "$preload"; then
  test_skip "deletions under the preload" "no $preload"
  test_done; exit 0
fi

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
  scr_index -p $TRASH/att >att.index && expect_grep '^ *1  ckpt/step_2 .* ok\$' att.index
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
    test_cmp open$size.native.out open$size.out
  "
done

test_done
