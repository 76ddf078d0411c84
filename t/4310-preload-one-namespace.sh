#!/bin/sh
# 4310-preload-one-namespace.sh - the ranks of a preloaded job share one file
# system, as on the parallel file system, and after a failure see a state the
# program could have left there: scr_preload(7) CONSISTENCY. 4 fake nodes x 2
# ranks, XOR over sets of 4; mpi-fileops does the I/O, and the same operations
# run natively on one shared directory give the expected output.
. "$top_srcdir/t/test-lib.sh"

preload_prelude "one namespace across ranks"
: "${SCR_TEST_TIMEOUT:=60}"

cluster_up 4 62
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_JOB_ID=t4310
export SCR_COPY_TYPE=XOR SCR_SET_SIZE=4 SCR_CACHE_SIZE=2 SCR_FLUSH=0
nodes=node0,node1,node2,node3

tmp_ops='mkdir@0:chk fwrite:chk/.tmp_%d rename:chk/.tmp_%d=chk/step_2_%d.bin read@all:chk/step_2_%d.bin'

test_expect_success 'a directory rank 0 made holds, on every node, a file no rule matches renamed to a rule name' "
  cluster_fresh 'PRELOAD=chk/step_{step}_{rank}.bin' &&
  fileops_native tmp tmp.native \$tmp_ops && fileops_pre tmp.pre \$tmp_ops &&
  { test_cmp tmp.native tmp.pre || { fileops_show tmp.pre; false; }; } &&
  test -z \"\$(find $PREFIX/chk -name 'step_*')\"
"

test_expect_success 'rank 0 lists a completed checkpoint directory: every rank s files' "
  fileops_native tmp tmp.ls.native ls@0:chk && fileops_pre tmp.ls ls@0:chk &&
  { test_cmp tmp.ls.native tmp.ls || { fileops_show tmp.ls; false; }; }
"

test_expect_success 'every rank stats another rank s checkpoint file: its size, as natively' "
  look='stat@all:chk/step_2_5.bin stat@all:chk/step_2_0.bin' &&
  fileops_native tmp tmp.stat.native \$look && fileops_pre tmp.stat \$look &&
  { test_cmp tmp.stat.native tmp.stat || { fileops_show tmp.stat; false; }; }
"

test_expect_success 'a listing gives the inode number stat gives: real entries, cached files, other ranks files' "
  fileops_native tmp tmp.ino.native write@0:chk/notes.txt inodes@all:chk inodes@0:. &&
  fileops_pre tmp.ino write@0:chk/notes.txt inodes@all:chk inodes@0:. &&
  { test_cmp tmp.ino.native tmp.ino || { fileops_show tmp.ino; false; }; }
"

test_expect_success 'rmdir of a checkpoint directory holding only other ranks files fails with ENOTEMPTY' "
  fileops_native tmp tmp.rmdir.native rmdir@0:chk && fileops_pre tmp.rmdir rmdir@0:chk &&
  { test_cmp tmp.rmdir.native tmp.rmdir || { fileops_show tmp.rmdir; false; }; }
"

test_expect_success 'rank 0 removes the checkpoint tree: every rank s files are gone, from every node s cache' "
  gone='rmtree@0:chk stat@all:chk/step_2_%d.bin stat@0:chk' &&
  fileops_native tmp tmp.rm.native \$gone && fileops_pre tmp.rm \$gone &&
  { test_cmp tmp.rm.native tmp.rm || { fileops_show tmp.rm; false; }; } &&
  for n in 0 1 2 3; do
    left=\$(cluster exec node\$n -- find /scr-local -name 'step_2_*') &&
      test -z \"\$left\" || { echo \"node\$n still caches: \$left\"; false; } || return 1
  done
"

test_expect_success 'a checkpoint file in a directory no rank made fails with ENOENT, as natively' "
  nodir='write@all:chk/step_8_%d.bin stat@0:chk' &&
  fileops_native tmp tmp.nodir.native \$nodir && fileops_pre tmp.nodir \$nodir &&
  { test_cmp tmp.nodir.native tmp.nodir || { fileops_show tmp.nodir; false; }; }
"

test_expect_success 'a checkpoint rank 0 took a file of is not restored after a crash: the one before is' "
  steps='mkdir@0:chk write:chk/step_4_%d.bin write:chk/step_6_%d.bin unlink@0:chk/step_6_5.bin' &&
  ! fileops_pre del.die \$steps die:- &&
  fileops_pre del.again stat@all:chk/step_6_%d.bin stat@all:chk/step_4_%d.bin &&
  { expect_grep 'restarting from dataset [0-9]* (chk/step_4_{rank}.bin) in cache' del.again.err &&
    ! grep -q 'damaged' $TRASH/del.again.err &&
    test \"\$(grep -c '^stat@[0-9] chk/step_6_[0-9].bin: -1 No such file or directory' $TRASH/del.again)\" = 8 &&
    test \"\$(grep -c '^stat@[0-9] chk/step_4_[0-9].bin: 7 ok' $TRASH/del.again)\" = 8 || { fileops_show del.again; false; }; }
"

h5_rules='PRELOAD=d/{step}/r{rank}.h5
PRELOAD=d/LATEST'
write_step() {
  echo "mkdir@0:d/$1 write:d/$1/r%d.h5 mkstemp@0:d/LATEST.XXXXXX=d/LATEST"
}

test_expect_success 'killed between a checkpoint and its pointer, a node lost: the pointer names a whole checkpoint' "
  cluster_fresh \"\$h5_rules\" &&
  ! fileops_pre h5.die mkdir@0:d \$(write_step 14) mkdir@0:d/16 write:d/16/r%d.h5 die:- &&
  { expect_grep '^write d/16/r0.h5: [0-9]* ok' h5.die || { fileops_show h5.die; false; }; } &&
  cluster_renew node2 &&
  fileops_pre h5.again read@all:d/LATEST read@all:d/14/r%d.h5 read@all:d/16/r%d.h5 &&
  { expect_grep 'restarting from dataset 2 (d/16) in cache' h5.again.err &&
    ! grep -q ' -1 ' h5.again || { fileops_show h5.again; false; }; }
"

test_expect_success 'killed right after rank 0 renamed a checkpoint directory: every rank s files follow at the restart' "
  cluster_fresh 'PRELOAD=tmp.{step}/rank{rank}.dat' 'PRELOAD=step.{step}/rank{rank}.dat' &&
  ! PRE_ENV=SCR_FAULT_KILL=rename:1@0 fileops_pre mv.die mkdir@0:tmp.2 write:tmp.2/rank%d.dat rename@0:tmp.2=step.2 &&
  expect_grep 'killed at point rename' mv.die.err &&
  fileops_pre mv.again read@all:step.2/rank%d.dat stat@0:tmp.2 &&
  { test \"\$(grep -c '^read@[0-9] step.2/rank[0-9].dat: [0-9]* ok' $TRASH/mv.again)\" = 8 &&
    expect_grep '^stat@0 tmp.2: -1 No such file or directory' mv.again || { fileops_show mv.again; false; }; }
"

test_expect_success 'killed while the other ranks moved their files after rank 0 renamed the directory: they follow' "
  cluster_fresh 'PRELOAD=tmp.{step}/rank{rank}.dat' 'PRELOAD=step.{step}/rank{rank}.dat' &&
  ! PRE_ENV=SCR_FAULT_KILL=move:1@2,move:1@3,move:1@4,move:1@5,move:1@6,move:1@7 \
    fileops_pre mvf.die mkdir@0:tmp.2 write:tmp.2/rank%d.dat rename@0:tmp.2=step.2 ls@0:. &&
  expect_grep 'killed at point move' mvf.die.err &&
  fileops_pre mvf.again read@all:step.2/rank%d.dat &&
  { test \"\$(grep -c '^read@[0-9] step.2/rank[0-9].dat: [0-9]* ok' $TRASH/mvf.again)\" = 8 || { fileops_show mvf.again; false; }; }
"

test_expect_success 'killed while a renamed checkpoint s parity took the new names, a node lost: rebuilt, under them' "
  cluster_fresh 'PRELOAD=tmp.{step}/rank{rank}.dat' 'PRELOAD=step.{step}/rank{rank}.dat' &&
  ! PRE_ENV=SCR_FAULT_KILL=encode:2@0 fileops_pre mvl.die mkdir@0:tmp.2 write:tmp.2/rank%d.dat rename@0:tmp.2=step.2 ls@0:. &&
  expect_grep 'killed at point encode' mvl.die.err &&
  cluster_renew node2 &&
  fileops_pre mvl.again read@all:step.2/rank%d.dat &&
  { expect_grep 'dataset 1: rebuilt the lost parts' mvl.again.err &&
    test \"\$(grep -c '^read@[0-9] step.2/rank[0-9].dat: [0-9]* ok' $TRASH/mvl.again)\" = 8 || { fileops_show mvl.again; false; }; }
"

test_expect_success 'a renamed checkpoint whose new names were being encoded when the job died is encoded again' "
  cluster_fresh 'PRELOAD=tmp.{step}/rank{rank}.dat' 'PRELOAD=step.{step}/rank{rank}.dat' &&
  ! PRE_ENV=SCR_FAULT_KILL=encode:2 fileops_pre mve.die mkdir@0:tmp.2 write:tmp.2/rank%d.dat rename@0:tmp.2=step.2 ls@0:. &&
  expect_grep 'killed at point encode' mve.die.err &&
  fileops_pre mve.again read@all:step.2/rank%d.dat &&
  { test \"\$(grep -c '^read@[0-9] step.2/rank[0-9].dat: [0-9]* ok' $TRASH/mve.again)\" = 8 || { fileops_show mve.again; false; }; }
"

test_expect_success 'killed after other ranks began the next checkpoint, before the pointer moved: the one it names is whole' "
  cluster_fresh \"\$h5_rules\" &&
  ! fileops_pre ev.die mkdir@0:d \$(write_step 2) mkdir@0:d/4 write:d/4/r%d.h5 mkdir@0:d/6 holdnew@5:d/6/r5.h5 die:- &&
  fileops_pre ev.again read@all:d/LATEST read@all:d/2/r%d.h5 &&
  { test \"\$(grep -c ' ok\$' $TRASH/ev.again)\" = 16 || { fileops_show ev.again; false; }; }
"

test_expect_success 'restarted before the pointer moved, killed after the next checkpoint: the pointer still names a whole one' "
  cluster_fresh \"\$h5_rules\" &&
  ! fileops_pre pin.die mkdir@0:d \$(write_step 2) \$(write_step 4) mkdir@0:d/6 write:d/6/r%d.h5 die:- &&
  ! fileops_pre pin.again mkdir@0:d/8 write:d/8/r%d.h5 die:- &&
  expect_grep 'restarting from dataset 3 (d/6) in cache' pin.again.err &&
  fileops_pre pin.last read@all:d/LATEST read@all:d/4/r%d.h5 &&
  { test \"\$(grep -c ' ok\$' $TRASH/pin.last)\" = 16 || { fileops_show pin.last; false; }; }
"

test_expect_success 'the same with the pointer writer s node lost before the restart: its copy on the prefix pins it' "
  cluster_fresh \"\$h5_rules\" &&
  ! fileops_pre lost.die mkdir@0:d \$(write_step 2) \$(write_step 4) mkdir@0:d/6 write:d/6/r%d.h5 die:- &&
  cluster_renew node0 &&
  ! fileops_pre lost.again mkdir@0:d/8 write:d/8/r%d.h5 die:- &&
  expect_grep 'restarting from dataset 3 (d/6) in cache' lost.again.err &&
  fileops_pre lost.last read@all:d/LATEST read@all:d/4/r%d.h5 &&
  { test \"\$(grep -c ' ok\$' $TRASH/lost.last)\" = 16 || { fileops_show lost.last; false; }; }
"

test_expect_success 'a flipped byte in the pointer writer s checkpoint file: its file is rebuilt, the pointer stays' "
  cluster_fresh \"\$h5_rules\" &&
  ! fileops_pre flip.die mkdir@0:d \$(write_step 2) die:- &&
  cluster exec node0 -- sh -c 'f=\$(ls /scr-local/cache/*/*/scr.dataset.*/d/2/r0.h5) &&
    printf X | dd of=\$f bs=1 seek=3 conv=notrunc 2>/dev/null' &&
  fileops_pre flip.again read@all:d/LATEST read@all:d/2/r%d.h5 &&
  { expect_grep 'rebuilt the lost parts' flip.again.err &&
    test \"\$(grep -c ' ok\$' $TRASH/flip.again)\" = 16 || { fileops_show flip.again; false; }; }
"

test_expect_success 'copies of pointers of checkpoints the cache let go leave the prefix, a lost node s too' "
  cluster_fresh \"\$h5_rules\" &&
  ! fileops_pre gone.die mkdir@0:d \$(write_step 2) \$(write_step 4) die:- &&
  cluster_renew node0 &&
  fileops_pre gone.again \$(write_step 6) \$(write_step 8) \$(write_step 10) &&
  ls -d $PREFIX/.scr/attached.* >gone.ls &&
  { test \$(wc -l <gone.ls) -le 3 || { cat gone.ls; false; }; }
"

test_done
