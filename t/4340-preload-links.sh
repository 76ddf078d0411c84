#!/bin/sh
# 4340-preload-links.sh - hard and symbolic links of checkpoint files, and a
# directory at a rule's file name, behave as on a file system: scr_preload(7)
# LINKS. 4 fake nodes x 2 ranks, XOR over sets of 4; mpi-fileops does the
# I/O, and the same operations run natively on one shared directory give the
# expected output, except where the layer answers EXDEV by design.
. "$top_srcdir/t/test-lib.sh"

preload_prelude "links of checkpoint files"
: "${SCR_TEST_TIMEOUT:=60}"

cluster_up 4 64
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_JOB_ID=t4340
export SCR_COPY_TYPE=XOR SCR_SET_SIZE=4 SCR_CACHE_SIZE=2 SCR_FLUSH=0

# fresh: empty nodes and an empty prefix directory with the rule
fresh() {
  cluster_fresh 'PRELOAD=ck/r{rank}.{step}*'
}
# same_as_native NAME OP...: the operations on a fresh prefix give what they give natively
same_as_native() {
  name=$1
  shift
  fresh && rm -rf "$TRASH/$name" &&
    fileops_native "$name" "$name.native" "$@" && fileops_pre "$name.pre" "$@" &&
    { test_cmp "$name.native" "$name.pre" || { fileops_show "$name.pre"; false; }; }
}
# count PATTERN RUN: the number of lines of RUN that PATTERN matches
count() {
  grep -c -e "$1" "$TRASH/$2"
}

written='mkdir@0:ck write:ck/r%d.1'

test_expect_success 'a hard link of a checkpoint file is a second name of it: one file, listed and read by every rank' "
  same_as_native one \$written link:ck/r%d.1=ck/r%d.1.b nlink@all:ck/r%d.1 same@all:ck/r%d.1=ck/r%d.1.b \
    ls@0:ck read@all:ck/r%d.1.b link:ck/r%d.1=ck/r%d.1.b
"

test_expect_success 'a change through one name is one of the file: the other name shows it, after a restart too' "
  same_as_native change \$written link:ck/r%d.1=ck/r%d.1.b inplace:ck/r%d.1.b truncate:ck/r%d.1 \
    stat@all:ck/r%d.1.b &&
  fileops_pre change.again stat@all:ck/r%d.1 stat@all:ck/r%d.1.b same@all:ck/r%d.1=ck/r%d.1.b &&
  { expect_grep 'restarting from dataset 1 (ck/r{rank}.1) in cache' change.again.err &&
    test \"\$(count '^stat@[0-9] ck/r[0-9].1: 3 ok' change.again)\" = 8 &&
    test \"\$(count '^stat@[0-9] ck/r[0-9].1.b: 3 ok' change.again)\" = 8 &&
    test \"\$(count '^same@[0-9] .*: 1 ok' change.again)\" = 8 || { fileops_show change.again; false; }; }
"

test_expect_success 'unlinking one name leaves the other, and the checkpoint whole: restored after a crash' "
  same_as_native drop \$written link:ck/r%d.1=ck/r%d.1.b unlink:ck/r%d.1 nlink@all:ck/r%d.1.b ls@0:ck &&
  fresh && ! fileops_pre drop.die \$written link:ck/r%d.1=ck/r%d.1.b unlink:ck/r%d.1 die:- &&
  fileops_pre drop.again read@all:ck/r%d.1.b stat@all:ck/r%d.1 &&
  { expect_grep 'restarting from dataset 1 (ck/r{rank}.1' drop.again.err &&
    test \"\$(count '^read@[0-9] ck/r[0-9].1.b: 7 ok' drop.again)\" = 8 &&
    test \"\$(count '^stat@[0-9] ck/r[0-9].1: -1 No such file or directory' drop.again)\" = 8 ||
    { fileops_show drop.again; false; }; }
"

test_expect_success 'a linked checkpoint file is rebuilt after a lost node, under both names, as one file again' "
  fresh && ! fileops_pre lost.die \$written link:ck/r%d.1=ck/r%d.1.b die:- &&
  cluster_renew node2 &&
  fileops_pre lost.again nlink@all:ck/r%d.1 same@all:ck/r%d.1=ck/r%d.1.b read@all:ck/r%d.1.b &&
  { expect_grep 'dataset 1: rebuilt the lost parts' lost.again.err &&
    test \"\$(count '^nlink@[0-9] ck/r[0-9].1: 2 ok' lost.again)\" = 8 &&
    test \"\$(count '^same@[0-9] .*: 1 ok' lost.again)\" = 8 &&
    test \"\$(count '^read@[0-9] ck/r[0-9].1.b: 7 ok' lost.again)\" = 8 || { fileops_show lost.again; false; }; }
"

test_expect_success 'killed after one name of a linked file was deleted, a node lost: rebuilt from the name left' "
  fresh && ! PRE_ENV=SCR_FAULT_KILL=unlink:1@0 fileops_pre alias.die \$written link:ck/r%d.1=ck/r%d.1.b \
    unlink@0:ck/r0.1 &&
  expect_grep 'killed at point unlink' alias.die.err &&
  cluster_renew node1 &&
  fileops_pre alias.again read@all:ck/r%d.1.b stat@0:ck/r0.1 &&
  { expect_grep 'dataset 1: rebuilt the lost parts' alias.again.err &&
    test \"\$(count '^read@[0-9] ck/r[0-9].1.b: 7 ok' alias.again)\" = 8 &&
    expect_grep '^stat@0 ck/r0.1: -1 No such file or directory' alias.again || { fileops_show alias.again; false; }; }
"

test_expect_success 'both names are flushed as one file, and fetched as one into an empty cache' "
  fresh && PRE_ENV=SCR_FLUSH=1 fileops_pre flush \$written link:ck/r%d.1=ck/r%d.1.b &&
  for r in 0 1 2 3 4 5 6 7; do
    test \"\$(stat -c '%h %i' $PREFIX/ck/r\$r.1)\" = \"\$(stat -c '2 %i' $PREFIX/ck/r\$r.1.b)\" ||
      { ls -li $PREFIX/ck; return 1; }
  done &&
  cluster_renew node0 node1 node2 node3 &&
  fileops_pre flush.again nlink@all:ck/r%d.1.b same@all:ck/r%d.1=ck/r%d.1.b &&
  { expect_grep 'fetched from' flush.again.err &&
    test \"\$(count '^nlink@[0-9] ck/r[0-9].1.b: 2 ok' flush.again)\" = 8 &&
    test \"\$(count '^same@[0-9] .*: 1 ok' flush.again)\" = 8 || { fileops_show flush.again; false; }; }
"

test_expect_success 'a link between the cache and the file system, or into another checkpoint, fails with EXDEV' "
  fresh && fileops_pre exdev \$written write@0:plain link@0:ck/r0.1=plain.b link@0:plain=ck/r0.1.c \
    link@0:ck/r0.1=ck/r0.2 stat@0:plain.b stat@0:ck/r0.1.c &&
  cat >expect.exdev <<-\\EOF &&
	mkdir@0 ck: 0 ok
	write ck/r0.1: 0 ok
	write@0 plain: 0 ok
	link@0 ck/r0.1=plain.b: -1 Invalid cross-device link
	link@0 plain=ck/r0.1.c: -1 Invalid cross-device link
	link@0 ck/r0.1=ck/r0.2: -1 Invalid cross-device link
	stat@0 plain.b: -1 No such file or directory
	stat@0 ck/r0.1.c: -1 No such file or directory
	EOF
  { test_cmp expect.exdev exdev || { fileops_show exdev; false; }; }
"

test_expect_success 'symbolic links at rule names and into the cache: made, read and followed as natively' "
  same_as_native sym \$written symlink:r%d.1=ck/r%d.4 readlink:ck/r%d.4 kind@all:ck/r%d.4 read@all:ck/r%d.4 \
    stat:ck/r%d.4 symlink:ck/r%d.1=lnk%d read@all:lnk%d readlink:ck/r%d.1 symlink:x=ck/r%d.1 \
    link:ck/r%d.4=ck/r%d.5 kind:ck/r%d.5 linkf:ck/r%d.4=ck/r%d.1.f nlink:ck/r%d.1 ls@0:ck \
    rename:ck/r%d.4=ck/r%d.7 readlink:ck/r%d.7 unlink:ck/r%d.7 unlink:ck/r%d.5 ls@0:ck
"

test_expect_success 'a directory made at a rule s file name is a directory: stat, list, enter, rename, remove' "
  same_as_native dir mkdir@0:ck mkdir@0:ck/r0.5 kind@all:ck/r0.5 ls@0:ck mkdir@0:ck/r0.5 write@0:ck/r0.5/inner \
    chdir@0:ck/r0.5 cwd@0:- read@0:inner chdir@0:../.. unlink@0:ck/r0.5/inner rmdir@0:ck/r0.5 kind:ck/r0.5 \
    mkdir@0:ck/r0.5 rename@0:ck/r0.5=ck/r0.6 kind@all:ck/r0.6 ls@0:ck rmdir@0:ck/r0.6 ls@0:ck
"

symdir_ops='mkdir@0:tree mkdir@0:tree/real write:tree/real/f%d.1 symlink@0:real=tree/link ls@0:tree/link read@all:tree/link/f%d.1'
test_expect_success 'a listing through a symbolic link, at a path the rules list, shows the files where it leads' "
  cluster_fresh 'PRELOAD=tree/**/f{rank}.{step}' && rm -rf \"\$TRASH/symdir\" &&
    fileops_native symdir symdir.native \$symdir_ops && fileops_pre symdir.pre \$symdir_ops &&
    { test_cmp symdir.native symdir.pre || { fileops_show symdir.pre; false; }; }
"

test_done
