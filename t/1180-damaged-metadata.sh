#!/bin/sh
# 1180-damaged-metadata.sh - SCR's own files damaged between runs (filemap, summary,
# flush and halt files): one error naming the file, no crash, an older checkpoint.
. "$top_srcdir/t/test-lib.sh"

bytes=4096
fresh() { rm -rf "$PREFIX" && mkdir -p "$PREFIX" && wipe_cache; }
filemap_of() { find "$SCR_CNTL_BASE" -name "filemap_$1.scr"; }

# a filemap is the only record of what a rank has in cache: without it the
# cached checkpoint cannot be trusted, and the flushed one is the fallback
test_expect_success 'a filemap that is garbage: named in an error, the cached checkpoint dropped, ckpt.2 fetched' "
  fresh && SCR_FLUSH=1 scr_app 2 --steps 2 --bytes $bytes >out 2>err &&
  f=\$(filemap_of 1) && test -n \"\$f\" && printf garbage >\"\$f\" &&
  SCR_FLUSH=1 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  expect_grep \"corrupt key-value tree file \$f\" err && expect_grep 'ignoring unreadable filemap' err &&
  expect_grep '^restart: ckpt.2\$' out && expect_grep 'fetched from' err && ! grep -q 'restart rejected' out
"

test_expect_success 'a truncated filemap: the same, the restart comes from the prefix' "
  fresh && SCR_FLUSH=1 scr_app 2 --steps 2 --bytes $bytes >out 2>err &&
  f=\$(filemap_of 0) && test -n \"\$f\" && truncate -s 24 \"\$f\" &&
  SCR_FLUSH=1 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  expect_grep \"corrupt key-value tree file \$f: truncated\" err &&
  expect_grep '^restart: ckpt.2\$' out && expect_grep 'fetched from' err && ! grep -q 'restart rejected' out
"

test_expect_success 'a summary on the prefix that is garbage: that checkpoint marked FAILED, the one before fetched' "
  fresh && SCR_FLUSH=1 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  printf garbage >'$PREFIX/.scr/scr.dataset.3/summary.scr' && wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 2 --bytes $bytes >out 2>err &&
  expect_grep 'scr.dataset.3/summary.scr: truncated' err && expect_grep 'cannot fetch dataset 3 (ckpt.3)' err &&
  expect_grep '^restart: ckpt.2\$' out && ! grep -q 'restart rejected' out &&
  scr_index --prefix '$PREFIX' --list >list && grep 'ckpt.3' list | grep -q FAILED
"

test_expect_success 'a flush file that is garbage: named in an error; the restart from cache and the next flush go on' "
  fresh && SCR_FLUSH=1 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  printf garbage >'$PREFIX/.scr/flush.scr' &&
  SCR_FLUSH=1 scr_app 2 --steps 4 --bytes $bytes >out 2>err &&
  expect_grep 'scr/flush.scr: truncated' err &&
  expect_grep '^restart: ckpt.3\$' out && expect_grep 'in cache' err &&
  check_pfs_file 4 0 $bytes && check_pfs_file 4 1 $bytes &&
  scr_index --prefix '$PREFIX' --list >list && grep 'ckpt.4' list | grep -q '\\*'
"

# the halt file is read at every checkpoint; one that cannot be read is no
# reason to stop a job nor to lose its checkpoints
test_expect_success 'a halt file that is garbage: named in an error, the job runs to its end and flushes' "
  fresh && mkdir -p '$PREFIX/.scr' && printf garbage >'$PREFIX/.scr/halt.scr' &&
  SCR_FLUSH=1 scr_app 2 --steps 3 --bytes $bytes >out 2>err &&
  expect_grep 'scr/halt.scr: truncated' err && expect_grep '^done: step 3\$' out &&
  check_pfs_file 3 0 $bytes && check_pfs_file 3 1 $bytes
"

test_done
