#!/bin/sh
# 4000-preload-passthrough.sh - libscr_preload.so is invisible where no rule
# matches: ordinary I/O gives byte-identical results with and without it.
. "$top_srcdir/t/test-lib.sh"

probe="$top_builddir/t/helpers/io-probe"
# an instrumented build carries the sanitizer runtime, which must not insist
# on coming first; and the probe's failing freopen calls leave glibc's FILE
# objects allocated (glibc closes the stream but does not free it)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
export ASAN_OPTIONS

# the fixture is read by every run, so its inode and times may be printed
mkdir -p "$TRASH/work" && printf 'fixture text\n' >"$TRASH/fixture" &&
  touch -d '2020-01-02 03:04:05' "$TRASH/fixture"

# run the probe in work/: probe_run OUTPUT [ENV=VALUE...] [--load-rules]
probe_run() {
  out="$1"; shift
  (cd work && env "$@" "$probe" ${load:-} "$TRASH/fixture" >"../$out" 2>"../$out.err")
}

test_expect_success 'the probe runs without the preload' '
  load= probe_run plain.out && test -s plain.out && expect_grep "errno=EEXIST" plain.out &&
  expect_grep "errno=EACCES" plain.out && expect_grep "errno=EISDIR" plain.out
'

test_expect_success 'the library loads and finds no rules without a configuration' '
  load=--load-rules probe_run none.out LD_PRELOAD="$preload" &&
  expect_grep "preload rules loaded: rc=0 rules=0" none.out.err
'

test_expect_success 'preloaded without rules: output is byte-identical' '
  load= probe_run inert.out LD_PRELOAD="$preload" && cmp plain.out inert.out && cmp plain.out none.out
'

test_expect_success 'preloaded with rules that match nothing: output is byte-identical' '
  printf "PRELOAD=ckpt.{step}/rank_{rank}.dat\nPRELOAD=/elsewhere/**/x.{step}\nPRELOAD=out/*.h5 TYPE=OUTPUT\n" >work/.scrconf &&
  printf "PRELOAD=elsewhere/*.txt\n" >>work/.scrconf &&
  load=--load-rules probe_run rules.out LD_PRELOAD="$preload" &&
  expect_grep "preload rules loaded: rc=0 rules=4" rules.out.err &&
  cmp plain.out rules.out
'

# rules that match files and directories the probe uses: every wrapper's
# lookup and hook path runs, and the default hooks let every call through
matching_rules() {
  printf "PRELOAD=probe.d/*.txt\nPRELOAD=probe.d/mode.{step}\nPRELOAD=probe.d/ck.{step}/x.dat\n" >work/.scrconf &&
  printf "PRELOAD=probe.d/link\nPRELOAD=probe.d/secret\nPRELOAD=probe.d/m*/x\n" >>work/.scrconf
}

test_expect_success 'preloaded with matching rules in dry run: identical, and the matches are reported' '
  matching_rules &&
  load=--load-rules probe_run dryrun.out LD_PRELOAD="$preload" SCR_PRELOAD_DRYRUN=1 &&
  cmp plain.out dryrun.out &&
  expect_grep "dry run: open $TRASH/work/probe.d/new.txt matches PRELOAD=probe.d/\*.txt at $TRASH/work/.scrconf:1" dryrun.out.err &&
  expect_grep "dry run: openat $TRASH/work/probe.d/at.txt matches" dryrun.out.err &&
  expect_grep "dry run: fopen $TRASH/work/probe.d/append.txt matches" dryrun.out.err &&
  ! grep -q "fixture\|work/missing.txt" dryrun.out.err &&
  test "$(grep -c "dry run: .* $TRASH/work/probe.d/new.txt matches" dryrun.out.err)" = 1
'

test_expect_success 'preloaded with matching rules, the default hooks: byte-identical' '
  matching_rules &&
  load=--load-rules probe_run hooks.out LD_PRELOAD="$preload" SCR_DEBUG=1 &&
  expect_grep "preload rules loaded: rc=0 rules=6" hooks.out.err &&
  cmp plain.out hooks.out &&
  expect_grep "^SCR open $TRASH/work/probe.d/new.txt matches PRELOAD=probe.d/\*.txt at $TRASH/work/.scrconf:1: passed through$" hooks.out.err &&
  expect_grep "^SCR fopen64 $TRASH/work/probe.d/f64.txt matches" hooks.out.err &&
  expect_grep "^SCR creat $TRASH/work/probe.d/creat.txt matches" hooks.out.err &&
  test "$(grep -c "new.txt matches" hooks.out.err)" = 1
'

test_expect_success 'the same at SCR_DEBUG=2, where the default hooks say what they were asked' '
  load=--load-rules probe_run hooks2.out LD_PRELOAD="$preload" SCR_DEBUG=2 &&
  cmp plain.out hooks2.out &&
  expect_grep "preload hook: rename $TRASH/work/probe.d/r1.txt -> $TRASH/work/probe.d/r3.txt flags 0: not handled" hooks2.out.err &&
  expect_grep "preload hook: mkdir $TRASH/work/probe.d/ck.5 mode 0755 (directory of PRELOAD=probe.d/ck.{step}/x.dat): not handled" hooks2.out.err &&
  expect_grep "preload hook: opendir $TRASH/work/probe.d (directory of PRELOAD=probe.d/\*.txt): not handled" hooks2.out.err &&
  expect_grep "preload hook: __lxstat $TRASH/work/probe.d/link flags 0x100 (file of PRELOAD=probe.d/link): not handled" hooks2.out.err &&
  expect_grep "preload hook: truncate64 $TRASH/work/probe.d/t.txt to 10000 bytes" hooks2.out.err &&
  expect_grep "preload hook: unlinkat $TRASH/work/probe.d/r1.txt flags 0x200 " hooks2.out.err &&
  expect_grep "preload hook: faccessat $TRASH/work/probe.d/a.txt mode 6 flags 0x200 " hooks2.out.err &&
  expect_grep "preload hook: statx $TRASH/work/probe.d/link flags 0x100 " hooks2.out.err
'

test_expect_success 'SCR_ENABLE=0 loads no rules' '
  printf "PRELOAD=probe.d/*.txt\n" >work/.scrconf &&
  load=--load-rules probe_run disabled.out LD_PRELOAD="$preload" SCR_ENABLE=0 SCR_PRELOAD_DRYRUN=1 &&
  expect_grep "preload rules loaded: rc=0 rules=0" disabled.out.err && ! grep -q "dry run" disabled.out.err &&
  cmp plain.out disabled.out
'

test_expect_success 'a bad rule is refused with file, line and key' '
  printf "# rules\nPRELOAD=ckpt[.dat\n" >work/.scrconf &&
  load=--load-rules probe_run bad.out LD_PRELOAD="$preload" &&
  expect_grep "rc=5 rules=0 $TRASH/work/.scrconf:2: key PRELOAD: pattern .ckpt\[.dat.: .\[. at character 5 has no closing" bad.out.err &&
  cmp plain.out bad.out && rm -f work/.scrconf
'

if ldd "$preload_lib" 2>/dev/null | grep -q libasan; then
  test_skip 'system commands are unchanged under the preload' 'sanitizer build'
else
  test_expect_success 'system commands are unchanged under the preload' '
    (cd work && ls -laR probe.d && cat ../fixture && sh -c "stat -c %s:%a ../fixture") >ls.plain 2>&1 &&
    (cd work && LD_PRELOAD="$preload" ls -laR probe.d && LD_PRELOAD="$preload" cat ../fixture &&
      LD_PRELOAD="$preload" sh -c "stat -c %s:%a ../fixture") >ls.preload 2>&1 &&
    cmp ls.plain ls.preload
  '
fi

walk_probe="$top_builddir/t/helpers/walk-probe"

test_expect_success 'nftw and ftw as linked give what libc gives, without the preload' '
  mkdir walk.plain && (cd walk.plain && "$walk_probe") >walk.plain.out &&
  expect_grep "^660 walks, 0 differences\$" walk.plain.out
'

test_expect_success 'the layer walks trees itself while directories are shown: every flag, link and answer as glibc' '
  mkdir walk.rules && printf "PRELOAD=ckpt.{step}/rank_{rank}.dat\n" >walk.rules/.scrconf &&
  (cd walk.rules && LD_PRELOAD="$preload" "$walk_probe" --load-rules) >walk.rules.out 2>walk.rules.err &&
  expect_grep "rules loaded, virtual directories shown" walk.rules.err &&
  expect_grep "^660 walks, 0 differences\$" walk.rules.out
'

test_done
