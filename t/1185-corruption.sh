#!/bin/sh
# 1190-corruption.sh - silent corruption on one node (issue 18, item 2): a
# flipped byte in a cached file of a SINGLE checkpoint, damage found while
# flushing or scavenging, a damaged index on the prefix. The program must
# never read wrong bytes, and the newest good checkpoint stays restorable.
. "$top_srcdir/t/test-lib.sh"

bytes=4096
fresh() { rm -rf "$PREFIX" && mkdir -p "$PREFIX" && wipe_cache; }
cached_file() { find "$SCR_CACHE_BASE" -path "*/scr.dataset.$1/*" -name "rank_$2.dat"; }
# flip FILE: one byte in the middle of FILE changed, its size kept
flip() { printf 'X' | dd of="$1" bs=1 seek=1000 conv=notrunc 2>/dev/null; }

# SINGLE has no redundancy to compute a CRC with: it must still record one
# at completion, and the restart check it
test_expect_success 'SINGLE: a flipped byte in a cached file: named, not restored, the restart falls back to ckpt.2' "
  fresh && SCR_FLUSH=0 SCR_COPY_TYPE=SINGLE SCR_CACHE_SIZE=2 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  f=\$(cached_file 3 1) && test -n \"\$f\" && flip \"\$f\" &&
  SCR_FLUSH=0 SCR_COPY_TYPE=SINGLE SCR_CACHE_SIZE=2 scr_app 2 --steps 4 --bytes $bytes >out 2>err &&
  expect_grep \"cached file \$f fails its CRC32 check\" err &&
  expect_grep '^restart: ckpt.2\$' out && ! grep -q 'restart rejected' out && expect_grep '^done: step 4\$' out
"

# XOR on one node forms no set (SINGLE stands in): the same
test_expect_success 'XOR on one node: a flipped byte in a cached file: named, not restored, the run starts over' "
  fresh && SCR_FLUSH=0 SCR_COPY_TYPE=XOR scr_app 2 --steps 2 --bytes $bytes >out 2>err &&
  f=\$(cached_file 2 0) && test -n \"\$f\" && flip \"\$f\" &&
  SCR_FLUSH=0 SCR_COPY_TYPE=XOR scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  expect_grep \"cached file \$f fails its CRC32 check\" err &&
  ! grep -q '^restart: ckpt.2' out && ! grep -q 'restart rejected' out && expect_grep '^done: step 3\$' out
"

test_expect_success 'SINGLE: a flipped byte in the newest cached checkpoint: the flushed one is fetched' "
  fresh && { SCR_COPY_TYPE=SINGLE SCR_FLUSH=2 scr_app 2 --steps 3 --crash-after 3 --bytes $bytes >out 2>err; true; } &&
  f=\$(cached_file 3 0) && test -n \"\$f\" && flip \"\$f\" &&
  SCR_COPY_TYPE=SINGLE SCR_FLUSH=2 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  expect_grep \"cached file \$f fails its CRC32 check\" err &&
  expect_grep '^restart: ckpt.2\$' out && ! grep -q 'restart rejected' out
"

# a byte flipped after completion, before the flush: the copy is checked
# before it is trusted, and the prefix keeps the older checkpoint current
test_expect_success 'SCR_FAULT_CORRUPT between completion and flush: the flush fails, ckpt.2 stays current, nothing wrong on the prefix' "
  fresh && SCR_COPY_TYPE=SINGLE SCR_FLUSH=1 SCR_FAULT_CORRUPT='encoded:3@1:*/ckpt.3/rank_1.dat' \
    scr_app 2 --steps 3 --bytes $bytes >out 2>err;
  expect_grep 'SCR FAULT: rank 1: corrupted' err &&
  expect_grep 'the cached copy is corrupt' err && expect_grep 'dataset 3 (ckpt.3) was not flushed' err &&
  scr_index --prefix '$PREFIX' --list >list && grep 'ckpt.2' list | grep -q '\\*' &&
  grep 'ckpt.3' list | grep -q CACHED && ! grep 'ckpt.3' list | grep -q prefix &&
  check_pfs_file 2 1 $bytes && ! test -e '$PREFIX/ckpt.3/rank_1.dat'
"

# the same in the background: the node's scr_transfer checks the bytes
# before its copy takes the file's name
test_expect_success 'SCR_FLUSH_ASYNC=1: a flipped byte found by the background copy: not flushed, ckpt.2 stays current' "
  fresh && SCR_FLUSH_ASYNC=1 SCR_COPY_TYPE=SINGLE SCR_FLUSH=2 SCR_FAULT_CORRUPT='encoded:4@1:*/ckpt.4/rank_1.dat' \
    scr_app 2 --steps 4 --bytes $bytes >out 2>err;
  expect_grep 'SCR FAULT: rank 1: corrupted' err &&
  expect_grep 'asynchronous flush of dataset 4: .*ckpt.4/rank_1.dat: CRC32 of the cached file is .* the cached copy is corrupt' err &&
  expect_grep 'dataset 4 (ckpt.4) was not flushed' err &&
  scr_index --prefix '$PREFIX' --list >list && grep 'ckpt.2' list | grep -q '\\*' &&
  ! test -e '$PREFIX/ckpt.4/rank_1.dat' && check_pfs_file 2 1 $bytes
"

test_expect_success 'scr_scavenge of a cached checkpoint with a flipped byte: not copied, the older one is' "
  fresh && SCR_FLUSH=0 SCR_COPY_TYPE=SINGLE SCR_CACHE_SIZE=2 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  f=\$(cached_file 3 1) && test -n \"\$f\" && flip \"\$f\" &&
  (cd '$PREFIX' && SCR_PREFIX='$PREFIX' SCR_COPY_TYPE=SINGLE SCR_CACHE_SIZE=2 mpirun 2 '$top_builddir/scr_scavenge') >sc.out 2>&1;
  expect_grep \"cached file \$f fails its CRC32 check\" sc.out &&
  scr_index --prefix '$PREFIX' --list >list && ! grep -q 'ckpt.3' list && grep 'ckpt.2' list | grep -q '\\*' &&
  check_pfs_file 2 0 $bytes && check_pfs_file 2 1 $bytes && ! test -e '$PREFIX/ckpt.3/rank_1.dat'
"

# the index is one file; the summaries beside each flushed dataset say
# everything it needs to be made again
for how in garbage truncated; do
test_expect_success "a $how index.scr: rebuilt from the summaries with one warning, kept aside, ckpt.3 fetched" "
  fresh && SCR_FLUSH=1 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  if test $how = garbage; then printf garbage >'$PREFIX/.scr/index.scr'; else truncate -s 40 '$PREFIX/.scr/index.scr'; fi &&
  wipe_cache && SCR_FLUSH=1 scr_app 2 --steps 4 --bytes $bytes >out 2>err &&
  test \$(grep -c 'rebuilt from the summaries' err) = 1 &&
  expect_grep '^restart: ckpt.3\$' out && expect_grep 'fetched from' err &&
  ls '$PREFIX/.scr/' | grep -q '^index.scr.damaged\\.[0-9]' &&
  scr_index --prefix '$PREFIX' --list >list && grep 'ckpt.4' list | grep -q '\\*' &&
  expect_grep 'ckpt.1' list && expect_grep 'ckpt.2' list && expect_grep 'ckpt.3' list
"
done

test_done
