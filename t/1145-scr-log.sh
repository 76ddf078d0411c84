#!/bin/sh
# scr_log reads the event log of a job that failed, halted and finished over
# three runs: its summary counts runs, checkpoints and phases, and its SVG,
# rendered by a real renderer (rsvg-convert), shows each kind of span in its colour.
. "$top_srcdir/t/test-lib.sh"

LOG="$PREFIX/.scr/log"
# steps long enough that every span is a few pixels wide on the picture
slow="--step-sleep 150 --ckpt-sleep 60 --bytes 200000"

test_expect_success 'setup: a run dies after its second checkpoint, one halts, one finishes' "
  SCR_FLUSH=0 scr_app 2 --steps 4 $slow --crash-after 2 >out1 2>err1;
  test \$(grep -c 'event=CHECKPOINT_COMPLETE' '$LOG') = 2 &&
  scr_halt --checkpoints 1 '$PREFIX' &&
  SCR_FLUSH=1 SCR_HALT_EXIT=1 scr_app 2 --steps 6 $slow >out2 2>err2 &&
  scr_halt --remove '$PREFIX' &&
  SCR_FLUSH=2 scr_app 2 --steps 6 $slow >out3 2>err3 &&
  test \$(grep -c 'event=INIT' '$LOG') = 3
"

test_expect_success 'the summary counts the runs, the failure, the checkpoints and their bytes' "
  scr_log --prefix '$PREFIX' >sum &&
  expect_grep '3 runs (1 failed), 6 checkpoints (2.3 MiB)' sum &&
  expect_grep 'run 1: .* 2 checkpoints, FAILED' sum &&
  expect_grep 'run 2: .* 1 checkpoints, halted' sum &&
  expect_grep 'run 3: .* 3 checkpoints, finished' sum
"

test_expect_success 'it gives the seconds of every phase and the overhead as a share of the run' "
  for phase in compute 'checkpoint write' 'redundancy encoding' 'flush (synchronous)' 'restore (rebuild or fetch)' \
               'failure to relaunch'; do
    grep -q \"^\$phase  *[0-9.]*  *[0-9.]*%\" sum || { echo \"no \$phase\"; cat sum; exit 1; }
  done &&
  expect_grep '^overhead: [0-9.]*% of run time' sum
"

test_expect_success 'the advice takes the MTBF from the failures seen, from SCR_MTBF, or from --mtbf' "
  expect_grep 'checkpoint cost .*, MTBF .*: checkpoint every ~.*; you checkpoint every .* (MTBF from the failures in this log)' sum &&
  SCR_MTBF=6h scr_log --prefix '$PREFIX' >sum6 && expect_grep 'MTBF 6 h: .*(MTBF from SCR_MTBF)' sum6 &&
  scr_log --prefix '$PREFIX' --mtbf 2d >sum2 && expect_grep 'MTBF 2 d: .*(MTBF from --mtbf)' sum2 &&
  ! scr_log --prefix '$PREFIX' --mtbf soon 2>err && expect_grep 'not a duration' err
"

test_expect_success 'the SVG is one self-contained XML file: a row per run, spans with titles, markers' "
  scr_log --prefix '$PREFIX' --svg job.svg >out &&
  python3 -c 'import xml.etree.ElementTree as E; E.parse(\"job.svg\")' &&
  ! grep -E 'href|<image|<script' job.svg &&
  test \$(grep -c '<g class=\"run\"' job.svg) = 3 &&
  for kind in compute write encode flush restore lost; do
    grep -q \"class=\\\"span \$kind\\\"\" job.svg || { echo \"no \$kind span\"; exit 1; }
  done &&
  test \$(grep -c 'class=\"marker failure\"' job.svg) = 1 &&
  test \$(grep -c 'class=\"marker halt\"' job.svg) -ge 1 &&
  test \$(grep -c 'class=\"span write\"' job.svg) = 6
"

test_expect_success 'each checkpoint write says its dataset, size and bandwidth on hover' "
  grep 'class=\"span write\"' job.svg >writes &&
  test \$(grep -c '<title>checkpoint write, dataset [0-9]*: .* s), 390.6 KiB at [0-9.]* [KMG]*i*B/s' writes) = 6 &&
  expect_grep '<title>redundancy encoding, dataset 1: .*scheme ' job.svg &&
  expect_grep '<title>restore (rebuild or fetch), dataset 2: .*from cache' job.svg
"

test_expect_success 'the SVG goes to standard output with -, the summary then to standard error' "
  scr_log --prefix '$PREFIX' --svg - >o.svg 2>o.txt &&
  cmp job.svg o.svg && expect_grep '^overhead' o.txt
"

if command -v rsvg-convert >/dev/null 2>&1; then
  test_expect_success 'rsvg-convert renders it, and each kind of span shows in its colour' "
    rsvg-convert -o job.png job.svg &&
    python3 '$top_srcdir/t/helpers/svg-spans.py' job.svg job.png compute write encode flush restore lost >pixels;
    rc=\$?; cat pixels; test \$rc = 0
  "
else
  test_skip 'rsvg-convert renders it, and each kind of span shows in its colour' 'no rsvg-convert (librsvg2-bin)'
fi

test_expect_success 'the relaunch by hand: its restore from SCR_Init and its resume; the phases before, unknown' "
  awk '/^recovery from 1 failure/ { on = 1; next } on && \$1 == 1 { print; exit }' sum >line &&
  set -- \$(cat line) && test \$2 = - && test \$3 = - && test \$4 = - && test \$5 = - && test \$8 = - &&
  awk -v a=\$6 -v b=\$7 'BEGIN { exit !(a > 0 && a < 30 && b >= 0 && b < 30) }' &&
  expect_grep 'relaunched without scr_run; dataset 2 from cache; resumed after SCR_Need_checkpoint\$' line
"

test_expect_success 'a run scr_postrun began (a POSTRUN event before it) is named the scavenge' "
  job=\$(sed -n 's/.* job=\\([^ ]*\\) event=INIT .*/\\1/p' '$LOG' | tail -n 1) && test -n \"\$job\" &&
  printf '%s job=%s event=POSTRUN time=%s attempt=1 nodes=node0\\n' \"\$(date +%Y-%m-%dT%H:%M:%S)\" \"\$job\" \\
    \"\$(date +%s).000\" >>'$LOG' &&
  SCR_FLUSH=0 scr_app 2 --steps 6 --bytes 200000 >out4 2>err4 &&
  scr_log --prefix '$PREFIX' --svg scavenge.svg >sum4 &&
  expect_grep 'run 3: .* 3 checkpoints, finished\$' sum4 &&
  expect_grep \"run 4: .*, finished (scr_postrun's scavenge)\$\" sum4 &&
  expect_grep '>scavenge 4</text>' scavenge.svg && expect_grep '>run 3</text>' scavenge.svg
"

test_expect_success 'a missing log is an error that says why' "
  mkdir empty && ! scr_log --prefix empty 2>err && expect_grep 'cannot read the event log' err
"

test_done
