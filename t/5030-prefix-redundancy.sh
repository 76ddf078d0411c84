#!/bin/sh
# 5030-prefix-redundancy.sh - a node lost at the end of an allocation, no spare left:
# scr_postrun scavenges the surviving nodes' files and redundancy data, rebuilds the
# lost node's ranks on the prefix directory (scr_index --build) with the bytes they
# had written, and the next job restarts from there with the result of a native run.
. "$top_srcdir/t/test-lib.sh"

preload_prelude "redundancy data on the prefix directory"
cluster_up 4 53
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl
export SCR_SET_SIZE=4 SCR_SET_FAILURES=2
# nothing reaches the prefix directory but what scr_postrun scavenges
export SCR_FLUSH=0
api="$top_builddir/examples/api_checkpoint"
fpp="$top_builddir/examples/preload/posix_fpp"
all=node0,node1,node2,node3
job=0

# fresh: empty nodes and prefix directory, a job id of its own
fresh() {
  cluster_renew node0 node1 node2 node3 && rm -rf "$PREFIX" && mkdir -p "$PREFIX" &&
    job=$((job + 1)) && SCR_JOB_ID=t5030.$job && export SCR_JOB_ID
}

# on_nodes OUT NODES CMD...: CMD on NODES, 2 ranks each, in the prefix directory
on_nodes() {
  out=$1 nodes=$2
  shift 2
  (cd "$PREFIX" && SCR_PREFIX="$PREFIX" scr_cluster run --nodes "$nodes" --ppn 2 --timeout 120 -- "$@") \
    >"$TRASH/$out" 2>&1
}

# postrun_on OUT NODES: scr_postrun of the job on NODES; its status in OUT.status
postrun_on() {
  scr_postrun -p "$PREFIX" -- scr_cluster run --nodes "$2" --ppn 2 --timeout 120 -- >"$TRASH/$1" 2>&1
  echo $? >"$TRASH/$1.status"
}

# lose NODE...: each node's storage kept aside (to compare with), then the
# node fails: its processes killed, its storage wiped
lose() {
  for n in "$@"; do
    rm -rf "$TRASH/saved.$n" && cp -a "$SCR_CLUSTER_STATE/nodes/$n/local" "$TRASH/saved.$n" &&
      cluster kill "$n" >/dev/null || return 1
  done
}

# as_cached NODE FILE...: each FILE (relative to the prefix directory) has
# the bytes the lost NODE held for it in its cache
as_cached() {
  n=$1
  shift
  for f in "$@"; do
    c=$(find "$TRASH/saved.$n" -path "*/scr.dataset.*/$f" ! -path '*/.partner.*' | head -n 1)
    test -n "$c" && cmp "$c" "$PREFIX/$f" || { echo "$f: not what $n held (${c:-nothing})"; return 1; }
  done
}

# killed_after OUT LINE: the run printed LINE (its last checkpoint) and was
# killed before its result
killed_after() {
  grep -q "$2" "$TRASH/$1" && ! grep -q '^result' "$TRASH/$1" || { tail -n 20 "$TRASH/$1"; return 1; }
}

# result_of OUT: the result line of a run
result_of() { sed -n 's/^result: //p' "$TRASH/$1"; }
same_result() {
  test -n "$(result_of "$1")" && test "$(result_of "$1")" = "$(result_of "$2")" ||
    { echo "result of $1 '$(result_of "$1")' is not the native '$(result_of "$2")'"; tail -n 20 "$TRASH/$1"; return 1; }
}

# current_complete NAME: the index has NAME complete and current
current_complete() {
  scr_index -p "$PREFIX" >"$TRASH/index.out" && grep -q "^ *[0-9]*  $1 .* \* *ok " "$TRASH/index.out" ||
    { cat "$TRASH/index.out"; return 1; }
}

test_expect_success 'native reference runs of the API example and of an unmodified program' '
  mkdir -p native && (cd native && SCR_ENABLE=0 mpirun 8 "$api" --steps 10 --bytes 65536) >"$TRASH/api.ref" 2>&1 &&
  (cd native && mpirun 8 "$fpp" --steps 10 --every 2 --bytes 65536) >"$TRASH/fpp.ref" 2>&1 &&
  test -n "$(result_of api.ref)" && test -n "$(result_of fpp.ref)"
'

# SCHEME NODES-LOST SURVIVORS RANKS-LOST
for row in "XOR node1 node0,node2,node3 2_and_3" "RS node1,node2 node0,node3 2,_3,_4_and_5" \
           "PARTNER node1 node0,node2,node3 2_and_3"; do
  set -- $row
  scheme=$1 lost=$(echo "$2" | tr , " ") survivors=$3 ranks=$(echo "$4" | tr _ " ")
  export SCR_COPY_TYPE=$scheme

  test_expect_success "$scheme: API example killed after its checkpoint, $lost lost: scr_postrun on the survivors rebuilds ranks $ranks on the prefix as they were cached" "
    fresh && on_nodes api.$scheme.run $all \"\$api\" --steps 10 --bytes 65536 --crash-at 6;
    killed_after api.$scheme.run 'checkpoint ckpt.6 written' &&
    lose $lost && postrun_on api.$scheme.post $survivors &&
    { test \"\$(cat '$TRASH/api.$scheme.post.status')\" = 0 || { cat '$TRASH/api.$scheme.post'; false; }; } &&
    expect_grep 'copied to .* from the surviving nodes .* without ranks $ranks' '$TRASH/api.$scheme.post' &&
    expect_grep 'rebuilding ranks $ranks from the $scheme data' '$TRASH/api.$scheme.post' &&
    expect_grep 'marked complete' '$TRASH/api.$scheme.post' && current_complete ckpt.6 &&
    for n in $lost; do
      r=\$(( \${n#node} * 2 )) && as_cached \$n ckpt.6/rank_\$r.dat ckpt.6/rank_\$((r + 1)).dat || exit 1
    done
  "

  test_expect_success "$scheme: API example: the next job, all nodes new, restarts from the rebuilt checkpoint with the native result" "
    for n in $lost; do cluster revive \$n >/dev/null || exit 1; done &&
    cluster_renew node0 node1 node2 node3 &&
    on_nodes api.$scheme.resume $all \"\$api\" --steps 10 --bytes 65536 &&
    expect_grep 'resumed from step 6' '$TRASH/api.$scheme.resume' && same_result api.$scheme.resume api.ref
  "

  test_expect_success "$scheme: an unmodified program under the preload, killed after step 6, $lost lost: rebuilt on the prefix, resumed with the native result" "
    fresh && echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >'$PREFIX/.scrconf' &&
    on_nodes fpp.$scheme.run $all env LD_PRELOAD=\"\$preload\" \"\$fpp\" --steps 10 --every 2 --bytes 65536 --die-at 6;
    killed_after fpp.$scheme.run '^checkpoint 6 written' &&
    lose $lost && postrun_on fpp.$scheme.post $survivors &&
    test \"\$(cat '$TRASH/fpp.$scheme.post.status')\" = 0 && expect_grep 'marked complete' '$TRASH/fpp.$scheme.post' &&
    for n in $lost; do
      r=\$(( \${n#node} * 2 )) && as_cached \$n data/step6_rank\$r.chk data/step6_rank\$((r + 1)).chk || exit 1
    done &&
    for n in $lost; do cluster revive \$n >/dev/null || exit 1; done &&
    cluster_renew node0 node1 node2 node3 &&
    on_nodes fpp.$scheme.resume $all env LD_PRELOAD=\"\$preload\" \"\$fpp\" --steps 10 --every 2 --bytes 65536 &&
    expect_grep '^resumed from step 6' '$TRASH/fpp.$scheme.resume' && same_result fpp.$scheme.resume fpp.ref
  "
done

# api_lost SCHEME OUT NODE...: the API example with SCHEME killed after its
# sixth checkpoint, NODE... lost; its output in OUT
api_lost() {
  SCR_COPY_TYPE=$1 && export SCR_COPY_TYPE && out=$2 && shift 2 &&
    fresh && { on_nodes "$out" $all "$api" --steps 10 --bytes 65536 --crash-at 6; true; } &&
    killed_after "$out" 'checkpoint ckpt.6 written' && lose "$@"
}

# index_state NAME: the STATE column of NAME in scr_index --list
index_state() {
  scr_index -p "$PREFIX" >"$TRASH/index.out" && awk -v n="$1" '$2 == n { print $(NF - 1) }' "$TRASH/index.out"
}

test_expect_success 'XOR: two members of every set lost: scr_postrun names the ranks that cannot be rebuilt, fails, marks nothing complete' '
  api_lost XOR api.two.run node1 node2 && postrun_on api.two.post node0,node3 &&
  test "$(cat "$TRASH/api.two.post.status")" = 1 &&
  expect_grep "XOR set 0 (ranks 0, 2, 4, 6) lost 2 members (rank 2: files, rank 4: files); it rebuilds at most 1" "$TRASH/api.two.post" &&
  expect_grep "ranks 2, 3, 4 and 5 cannot be rebuilt; nothing is marked complete" "$TRASH/api.two.post" &&
  test "$(index_state ckpt.6)" = INCOMPLETE && ! grep -q "ckpt.6 .* \* " "$TRASH/index.out" &&
  test ! -e "$PREFIX/ckpt.6/rank_2.dat" &&
  cluster revive node1 >/dev/null && cluster revive node2 >/dev/null &&
  on_nodes api.two.again $all "$api" --steps 10 --bytes 65536 && expect_grep "^starting from step 0" "$TRASH/api.two.again"
'

test_expect_success 'XOR: a damaged parity file on the prefix is refused: the rank it would rebuild stays missing' '
  api_lost XOR api.parity.run node1 &&
  { on_nodes api.parity.scavenge node0,node2,node3 scr_scavenge || { cat "$TRASH/api.parity.scavenge"; false; }; } &&
  xor="$PREFIX/.scr/scr.dataset.6/redundancy/1_of_4_in_0.xor" && test -f "$xor" &&
  printf "\\377" | dd of="$xor" bs=1 seek=100 conv=notrunc 2>/dev/null &&
  ! scr_index -p "$PREFIX" --build ckpt.6 >build.out 2>&1 &&
  expect_grep "parity file .*1_of_4_in_0.xor of rank 0 does not match the CRC32 recorded when it was flushed: it is not used" build.out &&
  expect_grep "lost 2 members (rank 0: parity, rank 2: files)" build.out &&
  expect_grep "rank 2 cannot be rebuilt; nothing is marked complete" build.out &&
  test "$(index_state ckpt.6)" = INCOMPLETE && test ! -e "$PREFIX/ckpt.6/rank_2.dat" &&
  test -e "$PREFIX/ckpt.6/rank_3.dat" && cluster revive node1 >/dev/null
'

test_expect_success 'XOR: the job died while encoding its newest checkpoint, node1 lost: the checkpoint before is scavenged and rebuilt' '
  SCR_COPY_TYPE=XOR && export SCR_COPY_TYPE && fresh &&
  { on_nodes api.enc.run $all env SCR_CACHE_SIZE=2 SCR_FAULT_KILL=encode:6@0 "$api" --steps 10 --bytes 65536; true; } &&
  killed_after api.enc.run "checkpoint ckpt.5 written" && ! grep -q "checkpoint ckpt.6 written" "$TRASH/api.enc.run" &&
  lose node1 && postrun_on api.enc.post node0,node2,node3 &&
  { test "$(cat "$TRASH/api.enc.post.status")" = 0 || { cat "$TRASH/api.enc.post"; false; }; } &&
  expect_grep "dataset 5 (ckpt.5) copied to .* without ranks 2 and 3" "$TRASH/api.enc.post" &&
  current_complete ckpt.5 && test -z "$(index_state ckpt.6)" && as_cached node1 ckpt.5/rank_2.dat ckpt.5/rank_3.dat && cluster revive node1 >/dev/null
'

test_expect_success 'SCR_SCAVENGE_REDUNDANCY=0: the survivors files alone; scr_postrun says which ranks cannot be rebuilt, and fails' '
  api_lost XOR api.nored.run node1 &&
  (SCR_SCAVENGE_REDUNDANCY=0 && export SCR_SCAVENGE_REDUNDANCY && postrun_on api.nored.post node0,node2,node3) &&
  test "$(cat "$TRASH/api.nored.post.status")" != 0 &&
  expect_grep "without ranks 2 and 3 (0 bytes of redundancy data): incomplete" "$TRASH/api.nored.post" &&
  expect_grep "ranks 2 and 3 cannot be rebuilt" "$TRASH/api.nored.post" &&
  test ! -d "$PREFIX/.scr/scr.dataset.6/redundancy" && test "$(index_state ckpt.6)" = INCOMPLETE &&
  ! scr_index -p "$PREFIX" --build 6 >build.out 2>&1 && expect_grep "holds no redundancy data" build.out &&
  cluster revive node1 >/dev/null
'

test_expect_success 'RS: a spare takes the lost node: rebuilt in cache and scavenged whole, with every rank s parity' '
  api_lost RS api.spare.run node1 && cluster revive node1 >/dev/null &&
  postrun_on api.spare.post $all && test "$(cat "$TRASH/api.spare.post.status")" = 0 &&
  expect_grep "rebuilt the lost parts from RS" "$TRASH/api.spare.post" &&
  expect_grep "dataset 6 (ckpt.6) copied to" "$TRASH/api.spare.post" && current_complete ckpt.6 &&
  test "$(ls "$PREFIX/.scr/scr.dataset.6/redundancy" | grep -c "\.rs\$")" = 8 && as_cached node1 ckpt.6/rank_2.dat
'

test_expect_success 'scr_index --build repairs a file lost on the prefix later, from the parity scavenged with it' '
  cp "$PREFIX/ckpt.6/rank_5.dat" rank_5.before && rm "$PREFIX/ckpt.6/rank_5.dat" &&
  scr_index -p "$PREFIX" --build ckpt.6 >build.out 2>&1 &&
  expect_grep "rank 5: .*rank_5.dat is missing or damaged" build.out &&
  expect_grep "rebuilt 1 rank in" build.out && cmp rank_5.before "$PREFIX/ckpt.6/rank_5.dat" && current_complete ckpt.6
'

test_expect_success 'scr_index --build of a complete dataset checks it and leaves it so' '
  scr_index -p "$PREFIX" --build ckpt.6 >build.out 2>&1 &&
  expect_grep "every rank.s files are on the prefix directory; marked complete" build.out && current_complete ckpt.6
'

test_expect_success 'a flush carries no redundancy data by default; with SCR_FLUSH_REDUNDANCY=1 it does, and a file lost later is rebuilt from it' '
  fresh && SCR_COPY_TYPE=XOR && export SCR_COPY_TYPE &&
  on_nodes flush.default $all env SCR_FLUSH=2 "$api" --steps 2 --bytes 65536 &&
  current_complete ckpt.2 && test ! -e "$PREFIX/.scr/scr.dataset.2/redundancy" &&
  fresh && on_nodes flush.red $all env SCR_FLUSH=2 SCR_FLUSH_REDUNDANCY=1 "$api" --steps 2 --bytes 65536 &&
  current_complete ckpt.2 && test "$(ls "$PREFIX/.scr/scr.dataset.2/redundancy" | grep -c "\.xor\$")" = 8 &&
  cp "$PREFIX/ckpt.2/rank_6.dat" rank_6.before && rm "$PREFIX/ckpt.2/rank_6.dat" &&
  scr_index -p "$PREFIX" --build ckpt.2 >build.out 2>&1 && cmp rank_6.before "$PREFIX/ckpt.2/rank_6.dat" &&
  current_complete ckpt.2
'

test_expect_success 'a file on the prefix damaged in place (its size kept) fails its CRC32 in scr_index --build and is rebuilt from the parity flushed with it' '
  cp "$PREFIX/ckpt.2/rank_3.dat" rank_3.before &&
  printf "\\377\\377\\377\\377" | dd of="$PREFIX/ckpt.2/rank_3.dat" bs=1 seek=100 conv=notrunc 2>/dev/null &&
  ! cmp -s rank_3.before "$PREFIX/ckpt.2/rank_3.dat" &&
  scr_index -p "$PREFIX" --build ckpt.2 >build.out 2>&1 &&
  expect_grep "rank 3: .*rank_3.dat does not match the CRC32 recorded when it was written" build.out &&
  expect_grep "rebuilt 1 rank in" build.out && cmp rank_3.before "$PREFIX/ckpt.2/rank_3.dat" && current_complete ckpt.2
'

test_expect_success 'a restart that finds a file damaged on the prefix rebuilds it from the parity there and resumes from it' '
  printf "\\377\\377\\377\\377" | dd of="$PREFIX/ckpt.2/rank_3.dat" bs=1 seek=100 conv=notrunc 2>/dev/null &&
  ! cmp -s rank_3.before "$PREFIX/ckpt.2/rank_3.dat" &&
  cluster_renew node0 node1 node2 node3 &&
  on_nodes fetch.damaged $all "$api" --steps 3 --bytes 65536 &&
  expect_grep "cannot fetch dataset 2 (ckpt.2).*rebuilding it from the redundancy data there" "$TRASH/fetch.damaged" &&
  expect_grep "rebuilt 1 rank in" "$TRASH/fetch.damaged" &&
  expect_grep "resumed from step 2" "$TRASH/fetch.damaged" && ! grep -q "^starting from step 0" "$TRASH/fetch.damaged" &&
  cmp rank_3.before "$PREFIX/ckpt.2/rank_3.dat" &&
  grep "event=FETCH_FAILED .*dset=2 .*1 ranks rebuilt on the prefix" "$PREFIX/.scr/log" &&
  grep "event=FETCH_COMPLETE .*dset=2 " "$PREFIX/.scr/log"
'

test_expect_success 'a restart that finds a file missing on the prefix and no redundancy data there falls back to step 0' '
  rm -rf "$PREFIX/.scr/scr.dataset.2/redundancy" "$PREFIX/ckpt.2/rank_3.dat" "$PREFIX/ckpt.3" &&
  { scr_index -p "$PREFIX" --drop ckpt.3 >/dev/null 2>&1 || :; } &&
  cluster_renew node0 node1 node2 node3 &&
  on_nodes fetch.gone $all "$api" --steps 2 --bytes 65536 &&
  expect_grep "cannot fetch dataset 2 (ckpt.2)" "$TRASH/fetch.gone" &&
  ! grep -q "rebuilding it" "$TRASH/fetch.gone" && expect_grep "^starting from step 0" "$TRASH/fetch.gone"
'

# the preload layer's flushes publish from a stage: the redundancy data
# comes along both ways, the background one copied by the node's scr_transfer
for async in 0 1; do
  test_expect_success "an unmodified program, SCR_FLUSH_ASYNC=$async, SCR_FLUSH_REDUNDANCY=1: each flushed checkpoint's parity is on the prefix, and a file lost later is rebuilt from it" '
    fresh && SCR_COPY_TYPE=XOR && export SCR_COPY_TYPE &&
    echo "PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT" >"$PREFIX/.scrconf" &&
    on_nodes fpp.red.'$async' $all env SCR_FLUSH=1 SCR_FLUSH_ASYNC='$async' SCR_FLUSH_REDUNDANCY=1 \
      LD_PRELOAD="$preload" "$fpp" --steps 6 --every 2 --bytes 65536 &&
    for id in 1 2 3; do
      test "$(ls "$PREFIX/.scr/scr.dataset.$id/redundancy" | grep -c "\.xor\$")" = 8 ||
        { echo "dataset $id: $(ls "$PREFIX/.scr/scr.dataset.$id/redundancy" 2>&1)"; exit 1; }
    done &&
    cp "$PREFIX/data/step2_rank6.chk" step2_rank6.before && rm "$PREFIX/data/step2_rank6.chk" &&
    scr_index -p "$PREFIX" --build 1 >build.out 2>&1 && expect_grep "rebuilt 1 rank in" build.out &&
    cmp step2_rank6.before "$PREFIX/data/step2_rank6.chk"
  '
done

test_expect_success 'the API example, SCR_FLUSH_ASYNC=1, SCR_FLUSH_REDUNDANCY=1: the background flush carries the parity, and a file lost later is rebuilt from it' '
  fresh && SCR_COPY_TYPE=XOR && export SCR_COPY_TYPE &&
  on_nodes api.red.async $all env SCR_FLUSH=1 SCR_FLUSH_ASYNC=1 SCR_FLUSH_REDUNDANCY=1 SCR_DEBUG=1 \
    "$api" --steps 3 --bytes 65536 &&
  expect_grep "flushing dataset 3 to .* in the background" "$TRASH/api.red.async" &&
  test "$(ls "$PREFIX/.scr/scr.dataset.3/redundancy" | grep -c "\.xor\$")" = 8 &&
  cp "$PREFIX/ckpt.3/rank_1.dat" rank_1.before && rm "$PREFIX/ckpt.3/rank_1.dat" &&
  scr_index -p "$PREFIX" --build ckpt.3 >build.out 2>&1 && cmp rank_1.before "$PREFIX/ckpt.3/rank_1.dat" &&
  current_complete ckpt.3
'

# lose_after_checkpoint STEP: in the background, node1 fails a second after
# its part of checkpoint STEP is complete in its cache (its XOR file written)
lose_after_checkpoint() {
  ( dir="$SCR_CLUSTER_STATE/nodes/node1/local/cache/$(id -un)/scr.$SCR_JOB_ID/scr.dataset.$1"
    for i in $(seq 600); do
      ls "$dir"/*.xor >/dev/null 2>&1 && { sleep 1; scr_cluster kill node1 >/dev/null; exit 0; }
      sleep 0.1
    done ) &
}

# scr_run as a user runs it: the last launch loses node1 after a
# checkpoint, no spare is left, and what the next job needs is on the prefix
test_expect_success 'scr_run: node1 lost in the last launch, no spare: scr_postrun rebuilds its ranks on the prefix, every byte right' '
  fresh && SCR_COPY_TYPE=XOR && export SCR_COPY_TYPE && lose_after_checkpoint 3 &&
  (cd "$PREFIX" && SCR_RUNS=1 scr_run -v --no-preload scr_cluster run --nodes $all --ppn 2 --timeout 120 -- \
     "$APP" --steps 40 --bytes 4096 --step-sleep 300) >run.out 2>&1; wait
  expect_grep "postrun: scr_postrun .* --nodes node0,node2,node3 " run.out &&
  expect_grep "scr_postrun: dataset [0-9]* lacks the files of some ranks" run.out &&
  expect_grep "rebuilt 2 ranks in .*marked complete" run.out &&
  step=$(sed -n "s/^scr_scavenge: dataset [0-9]* (ckpt\.\([0-9]*\)) copied to .*/\1/p" run.out) &&
  test -n "$step" && test "$step" -ge 3 && current_complete "ckpt.$step" &&
  for r in 0 1 2 3 4 5 6 7; do
    "$APP" --check "$PREFIX/ckpt.$step/rank_$r.dat" "$step" "$r" 4096 || { echo "bad rank_$r.dat"; exit 1; }
  done && cluster revive node1 >/dev/null
'

test_expect_success 'scr_index --build of an unknown dataset is an error naming it' '
  ! scr_index -p "$PREFIX" --build ckpt.99 2>err && expect_grep "no dataset named .ckpt.99." err
'

test_done
