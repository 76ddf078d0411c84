#!/bin/sh
# 4020-preload-descriptors.sh - descriptors of matching files are tracked across
# dup, dup2, dup3, fcntl, fclose, threads and fork; the hooks see what they should.
. "$top_srcdir/t/test-lib.sh"

probe="$top_builddir/t/helpers/preload-probe"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
mkdir -p "$TRASH/run" "$TRASH/cache"

probe() {
  (cd run && env LD_PRELOAD="$preload" "$@" >../run.out 2>../run.err)
}

test_expect_success 'threads: 8 threads open, dup, dup2, dup3, fcntl, fopen and close; the marks stay exact' '
  printf "PRELOAD=threads.d/*.dat\n" >run/.scrconf &&
  probe "$probe" threads && cat run.err &&
  expect_grep "threads: errors=0 marked=0 files=0" run.out &&
  expect_grep "hooks: open=16000 close=16000" run.out
'

test_expect_success 'threads: the same in dry run (no hooks, same bookkeeping)' '
  probe SCR_PRELOAD_DRYRUN=1 "$probe" threads &&
  expect_grep "threads: errors=0 marked=0 files=0" run.out && expect_grep "hooks: open=0 close=0" run.out
'

test_expect_success 'fork, vfork: the child has no rules and no marks; the parent keeps its file' '
  probe "$probe" fork &&
  expect_grep "child: marked=0 rules=none matching open marked=0" run.out &&
  expect_grep "child: hooks open=0 close=0" run.out &&
  expect_grep "parent: marked=1" run.out && expect_grep "parent: hooks open=1 close=1" run.out &&
  expect_grep "after vfork: marked=1 hooks open=0 close=0" run.out
'

test_expect_success 'hooks: routed writes land in the cache, and read back at their own paths' '
  printf "PRELOAD=route.d/ckpt.{step}/rank_{rank}.dat\n" >run/.scrconf &&
  probe "$probe" route "$TRASH/cache" && cat run.err &&
  expect_grep "^mkdir dataset: 0$" run.out &&
  expect_grep "^dataset directory on disk: no$" run.out &&
  expect_grep "^stat virtual dataset directory: size=[0-9]* dir$" run.out &&
  expect_grep "^open for writing: marked=1 write=5$" run.out &&
  expect_grep "^routed file at its own path on disk: no$" run.out &&
  test "$(cat "$TRASH/cache$TRASH/run/route.d/ckpt.1/rank_0.dat")" = hello &&
  expect_grep "^stat routed file: size=5 file$" run.out &&
  expect_grep "^access routed file: 0$" run.out &&
  expect_grep "^read back: hello$" run.out
'

test_expect_success 'hooks: the engine hears of a file once, when its last descriptor closes' '
  expect_grep "^after the first close: hooks close=0$" run.out &&
  expect_grep "^after the last close: hooks close=1$" run.out &&
  expect_grep "^hooks: open=4 close=4$" run.out
'

test_expect_success 'hooks: fopen and freopen of a routed file use the engine descriptor' '
  expect_grep "^freopen: marked=1$" run.out &&
  test "$(cat "$TRASH/cache$TRASH/run/route.d/ckpt.1/rank_2.dat")" = reopened
'

test_expect_success 'hooks: rename, truncate and unlink of routed files' '
  expect_grep "^rename routed: 0$" run.out && expect_grep "^stat old name: errno=ENOENT$" run.out &&
  expect_grep "^stat new name: size=11 file$" run.out &&
  expect_grep "^truncate routed: 0$" run.out && expect_grep "^stat truncated: size=3 file$" run.out &&
  expect_grep "^unlink routed: 0$" run.out && expect_grep "^stat unlinked: errno=ENOENT$" run.out
'

test_expect_success 'hooks: listings show virtual dataset directories beside what is on disk' '
  expect_grep "^readdir of route.d: ckpt.1 notes.txt$" run.out &&
  expect_grep "^scandir of route.d: ckpt.1 notes.txt$" run.out &&
  expect_grep "^scandir of route.d/ckpt.1: rank_0.dat rank_2.dat rank_9.dat$" run.out
'

test_expect_success 'summary: the layer counts and the engine numbers on one line' '
  expect_grep "^SCR preload summary: 4 opens of 3 files matched, 4 routed; 1 dataset, 3.0 MiB, checkpoint 0.50 s, redundancy 0.25 s, 6.0 MiB/s$" run.err
'

test_done
