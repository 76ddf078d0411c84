#!/bin/sh
# 2110-corruption-cluster.sh - silent corruption of what SCR keeps beside the
# checkpoint files (issue 18, item 2): a flipped byte in XOR or RS parity, in a
# PARTNER copy, in the two copies of a preloaded program's pointer file. Each is
# found by its CRC32 and made again as if its node were lost (the test then
# loses the node the repaired data protects); only what redundancy cannot cover
# falls back to the prefix directory. 4 fake nodes x 2 ranks.
. "$top_srcdir/t/test-lib.sh"

cluster_up 4 77
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_JOB_ID=t2110
export SCR_SET_SIZE=4 SCR_SET_FAILURES=1
bytes=300000
all=node0,node1,node2,node3

fresh_start() {
  cluster_renew node0 node1 node2 node3 || return 1
  rm -rf "$PREFIX" && mkdir -p "$PREFIX"
}
# flip_on NODE GLOB: one byte changed in the middle of each cached file of
# NODE that GLOB (below the node's cache) names; fails when none does
flip_on() {
  cluster exec "$1" -- sh -c "n=0; for f in /scr-local/cache/*/*/$2; do test -f \"\$f\" || continue;
    s=\$(stat -c %s \"\$f\"); printf X | dd of=\"\$f\" bs=1 seek=\$((s / 2)) conv=notrunc 2>/dev/null; n=1; done;
    test \$n = 1"
}

for scheme in XOR RS; do
  ext=$(echo $scheme | tr A-Z a-z)
  export SCR_COPY_TYPE=$scheme
  test_expect_success "$scheme: a flipped byte in node2 s parity: found, encoded again, then node1 lost is rebuilt from it" "
    fresh_start &&
    SCR_FLUSH=0 cluster_app $all 2 --steps 2 --bytes $bytes >out 2>err &&
    flip_on node2 'scr.dataset.*/*.$ext' &&
    SCR_FLUSH=0 cluster_app $all 2 --steps 2 --bytes $bytes >out 2>err &&
    expect_grep 'redundancy file .*\\.$ext is missing or damaged' err && expect_grep 'encoding it now' err &&
    expect_grep '^restart: ckpt.2\$' out && ! grep -q 'restart rejected' out &&
    cluster_renew node1 &&
    SCR_FLUSH=0 cluster_app $all 2 --steps 3 --bytes $bytes >out 2>err &&
    expect_grep 'rebuilt the lost parts' err && expect_grep '^restart: ckpt.2\$' out && ! grep -q 'restart rejected' out
  "
done

# node2 holds the copies of node1's files (the partner on the left)
export SCR_COPY_TYPE=PARTNER
test_expect_success 'PARTNER: a flipped byte in a partner copy: found, copied again, then the node it copies lost is rebuilt from it' "
  fresh_start &&
  SCR_FLUSH=0 cluster_app $all 2 --steps 2 --bytes $bytes >out 2>err &&
  flip_on node2 'scr.dataset.*/.partner.*/ckpt.2/rank_*.dat' &&
  SCR_FLUSH=0 cluster_app $all 2 --steps 2 --bytes $bytes >out 2>err &&
  expect_grep 'partner copy .* is missing or damaged' err && expect_grep 'encoding it now' err &&
  expect_grep '^restart: ckpt.2\$' out && ! grep -q 'restart rejected' out &&
  cluster_renew node1 &&
  SCR_FLUSH=0 cluster_app $all 2 --steps 3 --bytes $bytes >out 2>err &&
  expect_grep 'rebuilt the lost parts' err && expect_grep '^restart: ckpt.2\$' out && ! grep -q 'restart rejected' out
"

# a damaged data file is a lost member; damaged parity of another member of
# its set is a second one: more than XOR rebuilds
export SCR_COPY_TYPE=XOR
test_expect_success 'XOR: a flipped byte in a data file and in the parity of its set: beyond XOR, ckpt.2 fetched from the prefix' "
  fresh_start &&
  SCR_FLUSH=1 cluster_app $all 2 --steps 2 --bytes $bytes >out 2>err &&
  flip_on node1 'scr.dataset.*/ckpt.2/rank_*.dat' && flip_on node2 'scr.dataset.*/*.xor' &&
  SCR_FLUSH=1 cluster_app $all 2 --steps 2 --bytes $bytes >out 2>err &&
  expect_grep 'fails its CRC32 check' err && expect_grep 'beyond what its redundancy can rebuild' err &&
  expect_grep 'fetched from' err && expect_grep '^restart: ckpt.2\$' out && ! grep -q 'restart rejected' out
"

# SCR_FAULT_CORRUPT at the moment a checkpoint is protected, before the job's
# next one: the damage is found at the restart and rebuilt
test_expect_success 'XOR: SCR_FAULT_CORRUPT flips a byte in a parity file as ckpt.2 completes: the restart encodes it again' "
  fresh_start &&
  SCR_FLUSH=0 SCR_FAULT_CORRUPT='encoded:2@5:*/scr.dataset.*/*.xor' cluster_app $all 2 --steps 2 --bytes $bytes >out 2>err &&
  expect_grep 'SCR FAULT: rank 5: corrupted .*\\.xor' err &&
  SCR_FLUSH=0 cluster_app $all 2 --steps 2 --bytes $bytes >out 2>err &&
  expect_grep 'is missing or damaged' err && expect_grep '^restart: ckpt.2\$' out
"

# ---- a preloaded program's pointer file (d/LATEST): one copy in the writer's
# cache, one in <prefix>/.scr/attached.<id>/ that the other ranks read
preload="$top_builddir/.libs/libscr_preload.so"
fileops="$top_builddir/t/helpers/mpi-fileops"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
h5_rules='PRELOAD=d/{step}/r{rank}.h5
PRELOAD=d/LATEST'
write_step() {
  echo "mkdir@0:d/$1 write:d/$1/r%d.h5 mkstemp@0:d/LATEST.XXXXXX=d/LATEST"
}
nodes=$all
# every rank read the pointer's bytes as rank 0 wrote them
same_pointers() {
  for r in 0 1 2 3 4 5 6 7; do
    printf 'rank 0\n' | cmp - "$PREFIX/got.$r" || return 1
  done
}
if test -f "$preload"; then
  export SCR_COPY_TYPE=XOR SCR_CACHE_SIZE=2 SCR_FLUSH=0
  test_expect_success 'preload: a flipped byte in the prefix copy of the pointer file: copied again from cache, every rank reads it whole' "
    cluster_fresh \"\$h5_rules\" &&
    ! fileops_pre ap.die mkdir@0:d \$(write_step 2) die:- &&
    f=\$(ls $PREFIX/.scr/attached.*/d/LATEST) && test -n \"\$f\" &&
    s=\$(stat -c %s \"\$f\") && printf X | dd of=\"\$f\" bs=1 seek=\$((s / 2)) conv=notrunc 2>/dev/null &&
    fileops_pre ap.again copy@all:d/LATEST=got.%d read@all:d/2/r%d.h5 &&
    { expect_grep 'attached file .* fails its CRC32 check: copied again from cache' ap.again.err &&
      test \"\$(grep -c ' ok\$' $TRASH/ap.again)\" = 16 && same_pointers || { fileops_show ap.again; false; }; }
  "
  test_expect_success 'preload: a flipped byte in the writer s cached pointer file: copied again from the prefix copy' "
    cluster_fresh \"\$h5_rules\" &&
    ! fileops_pre ac.die mkdir@0:d \$(write_step 2) die:- &&
    flip_on node0 'scr.dataset.*/d/LATEST' &&
    fileops_pre ac.again copy@all:d/LATEST=got.%d read@all:d/2/r%d.h5 &&
    { expect_grep 'cached attached file .* fails its CRC32 check: copied again' ac.again.err &&
      test \"\$(grep -c ' ok\$' $TRASH/ac.again)\" = 16 && same_pointers || { fileops_show ac.again; false; }; }
  "
  test_expect_success 'preload: both copies of the newest pointer damaged: the older pointer and its checkpoint are read' "
    cluster_fresh \"\$h5_rules\" &&
    ! fileops_pre ab.die mkdir@0:d \$(write_step 2) \$(write_step 4) die:- &&
    flip_on node0 'scr.dataset.*/d/LATEST' &&
    for f in $PREFIX/.scr/attached.*/d/LATEST; do :; done &&
    s=\$(stat -c %s \"\$f\") && printf X | dd of=\"\$f\" bs=1 seek=\$((s / 2)) conv=notrunc 2>/dev/null &&
    fileops_pre ab.again copy@all:d/LATEST=got.%d read@all:d/2/r%d.h5 &&
    { expect_grep 'both copies of attached file' ab.again.err &&
      test \"\$(grep -c ' ok\$' $TRASH/ab.again)\" = 16 && same_pointers || { fileops_show ab.again; false; }; }
  "
  # the writer's filemap, with the CRC32 of its pointer, went with its node:
  # the record beside the copies on the prefix directory tells
  test_expect_success 'preload: the writer s node lost and the prefix copy of its newest pointer damaged: the older pointer is read' "
    cluster_fresh \"\$h5_rules\" &&
    ! fileops_pre al.die mkdir@0:d \$(write_step 2) \$(write_step 4) die:- &&
    cluster_renew node0 &&
    for f in $PREFIX/.scr/attached.*/d/LATEST; do :; done &&
    s=\$(stat -c %s \"\$f\") && printf X | dd of=\"\$f\" bs=1 seek=\$((s / 2)) conv=notrunc 2>/dev/null &&
    fileops_pre al.again copy@all:d/LATEST=got.%d read@all:d/2/r%d.h5 &&
    { expect_grep 'fails its CRC32 check and no rank holds it in cache' al.again.err &&
      test \"\$(grep -c ' ok\$' $TRASH/al.again)\" = 16 && same_pointers || { fileops_show al.again; false; }; }
  "
else
  test_skip "preload: pointer file copies" "no $preload"
fi

test_done
