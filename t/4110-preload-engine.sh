#!/bin/sh
# 4110-preload-engine.sh - the preload engine on one node: unmodified programs
# under LD_PRELOAD write their checkpoints into the node-local cache, resume
# from it, see a pointer file as it was when the restored checkpoint was
# written, and run exactly as natively when the rules are wrong or absent.
. "$top_srcdir/t/test-lib.sh"

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
ex="$top_builddir/examples/preload"
args="--steps 8 --every 2 --bytes 1000"
export SCR_CACHE_BASE="$TRASH/cache" SCR_CNTL_BASE="$TRASH/cntl" SCR_JOB_ID=t4110 SCR_COPY_TYPE=SINGLE

# run APP DIR OUT [ARGS...]: 2 ranks of APP under the preload, in $TRASH/DIR
run() {
  app=$1 dir=$2 out=$3
  shift 3
  mkdir -p "$TRASH/$dir" &&
    (cd "$TRASH/$dir" && mpirun 2 env LD_PRELOAD="$preload" "$ex/$app" $args "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
}
native() {
  app=$1 dir=$2 out=$3
  shift 3
  mkdir -p "$TRASH/$dir" && (cd "$TRASH/$dir" && mpirun 2 "$ex/$app" $args "$@") >"$TRASH/$out" 2>"$TRASH/$out.err"
}
result_of() { sed -n 's/^result: \([0-9a-f]\{16\}\)$/\1/p' "$TRASH/$1"; }
same_result() {
  test -n "$(result_of "$1")" && test "$(result_of "$1")" = "$(result_of "$2")" ||
    { echo "results differ:"; cat "$TRASH/$1" "$TRASH/$1.err" "$TRASH/$2"; return 1; }
}
fresh() { rm -rf "$TRASH/$1" "$SCR_CACHE_BASE" "$SCR_CNTL_BASE" && mkdir -p "$TRASH/$1"; }

test_expect_success 'reference results of uninterrupted native runs' '
  native posix_fpp ref.posix ref.posix.out && native stdio_latest ref.stdio ref.stdio.out &&
  test -n "$(result_of ref.posix.out)"
'

test_expect_success 'checkpoint files go to the cache, not the prefix directory' "
  fresh posix &&
  echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >$TRASH/posix/.scrconf &&
  ! SCR_FLUSH=0 run posix_fpp posix die.out --die-at 5 &&
  expect_grep '^checkpoint 4 written' die.out &&
  ! test -e $TRASH/posix/data/step4_rank0.chk &&
  test -n \"\$(find $SCR_CACHE_BASE -name step4_rank1.chk -size +0)\"
"

test_expect_success 'a new run resumes from the cached checkpoint with the native result' "
  SCR_FLUSH=0 run posix_fpp posix resume.out &&
  expect_grep '^resumed from step 4\$' resume.out && same_result resume.out ref.posix.out &&
  expect_grep 'sees checkpoint .data/step4_rank{rank}.chk. at its original paths' resume.out.err
"

test_expect_success 'rank 0 prints one summary line at MPI_Finalize' "
  test \$(grep -c 'preload summary: 2 datasets' $TRASH/resume.out.err) = 1
"

test_expect_success 'with SCR_FLUSH=1 every checkpoint also reaches the prefix directory' "
  fresh flushed &&
  echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >$TRASH/flushed/.scrconf &&
  SCR_FLUSH=1 run posix_fpp flushed flushed.out &&
  for s in 2 4 6 8; do cmp $TRASH/flushed/data/step\${s}_rank1.chk $TRASH/ref.posix/data/step\${s}_rank1.chk || exit 1; done
"

test_expect_success 'a lost cache is fetched back from the prefix directory' "
  rm -rf $TRASH/flushed/data/step8_* $TRASH/flushed/data/step6_* $SCR_CACHE_BASE $SCR_CNTL_BASE &&
  SCR_FLUSH=1 run posix_fpp flushed fetched.out &&
  expect_grep '^resumed from step 4\$' fetched.out && same_result fetched.out ref.posix.out
"

rules_stdio='PRELOAD=ckpt.tmp.{rank} TYPE=CHECKPOINT BOUNDARY=BARRIER
PRELOAD=ckpt.{step}.{rank} TYPE=CHECKPOINT BOUNDARY=BARRIER
PRELOAD=ckpt.latest* TYPE=CHECKPOINT'

test_expect_success 'SCR_FLUSH_ASYNC=1: the preload layer flushes in the background, through a stage it publishes' "
  fresh async && echo \"\$rules_stdio\" >$TRASH/async/.scrconf &&
  SCR_FLUSH=2 SCR_FLUSH_ASYNC=1 SCR_DEBUG=1 SCR_CACHE_SIZE=3 run stdio_latest async async.out &&
  expect_grep 'flushing dataset [0-9]* to .* in the background' async.out.err &&
  for f in ckpt.latest ckpt.8.0 ckpt.8.1 ckpt.4.1; do cmp $TRASH/async/\$f $TRASH/ref.stdio/\$f || exit 1; done &&
  ! ls $TRASH/async/.scr | grep -q '^stage[.]\\|^publish[.]'
"

test_expect_success 'temp-then-rename files and a pointer: resumes where the pointer says' "
  fresh stdio && echo \"\$rules_stdio\" >$TRASH/stdio/.scrconf &&
  ! SCR_FLUSH=0 SCR_CACHE_SIZE=3 run stdio_latest stdio die.out --die-at 7 &&
  ! test -e $TRASH/stdio/ckpt.latest && ! test -e $TRASH/stdio/ckpt.6.0 &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=3 run stdio_latest stdio resume.out &&
  expect_grep '^resumed from step 6\$' resume.out && same_result resume.out ref.stdio.out &&
  test \$(ls $TRASH/stdio/.scr | grep -c '^attached[.]') -le 3
"

test_expect_success 'the pointer is read as it was when the restored checkpoint was written' "
  fresh stdio && echo \"\$rules_stdio\" >$TRASH/stdio/.scrconf &&
  ! SCR_FLUSH=0 SCR_CACHE_SIZE=3 run stdio_latest stdio die.out --die-at 7 &&
  newest=\$(dirname \$(find $SCR_CACHE_BASE -name ckpt.6.1)) && rm \$newest/ckpt.6.1 &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=3 run stdio_latest stdio resume.out &&
  expect_grep '^resumed from step 4\$' resume.out && same_result resume.out ref.stdio.out
"

test_expect_success 'a program dropping its old checkpoints (unlink) drops them from the cache' "
  fresh keep && echo \"\$rules_stdio\" >$TRASH/keep/.scrconf &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=4 run stdio_latest keep keep.out --keep 1 &&
  same_result keep.out ref.stdio.out &&
  test -n \"\$(find $SCR_CACHE_BASE -name ckpt.8.1)\" && test -z \"\$(find $SCR_CACHE_BASE -name 'ckpt.[246].*')\"
"

test_expect_success 'remove(), unlink() and rmdir() drop an old checkpoint and its directory from the view, with the errno of a file system' "
  fresh rm && echo 'PRELOAD=ckpt_{step}/rank_{rank}.bin TYPE=CHECKPOINT' >$TRASH/rm/.scrconf &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=4 run cxx_ofstream rm rm.out &&
  (cd $TRASH/rm && SCR_FLUSH=0 mpirun 2 env LD_PRELOAD=\"$preload\" $top_builddir/t/helpers/mpi-fileops \\
     unlink:ckpt_6 rmdir:ckpt_6/rank_%d.bin \\
     rmdir:ckpt_6 remove:ckpt_6/rank_%d.bin remove:ckpt_6/rank_%d.bin rmdir@0:ckpt_6 rmdir@0:ckpt_6 \\
     remove:ckpt_4 remove:ckpt_4/rank_%d.bin remove@0:ckpt_4) >remove.out 2>remove.err &&
  printf '%s\\n' 'unlink ckpt_6: -1 Is a directory' 'rmdir ckpt_6/rank_0.bin: -1 Not a directory' \\
    'rmdir ckpt_6: -1 Directory not empty' 'remove ckpt_6/rank_0.bin: 0 ok' \\
    'remove ckpt_6/rank_0.bin: -1 No such file or directory' 'rmdir@0 ckpt_6: 0 ok' \\
    'rmdir@0 ckpt_6: -1 No such file or directory' 'remove ckpt_4: -1 Directory not empty' \\
    'remove ckpt_4/rank_0.bin: 0 ok' 'remove@0 ckpt_4: 0 ok' >remove.expect &&
  cmp remove.expect remove.out &&
  test -z \"\$(find $SCR_CACHE_BASE -path '*ckpt_[46]/*')\" &&
  test -n \"\$(find $SCR_CACHE_BASE -path '*ckpt_8/rank_1.bin')\" &&
  test \"\$(ls $TRASH/rm | tr '\\n' ' ')\" = 'ckpt_2 ckpt_8 ' && no_files_below $TRASH/rm
"

test_expect_success 'std::filesystem::remove_all of old checkpoint directories drops them from the cache' "
  native cxx_ofstream ref.cxx ref.cxx.out &&
  fresh cxxkeep && echo 'PRELOAD=ckpt_{step}/rank_{rank}.bin TYPE=CHECKPOINT' >$TRASH/cxxkeep/.scrconf &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=4 run cxx_ofstream cxxkeep cxxkeep.out --keep 1 &&
  same_result cxxkeep.out ref.cxx.out && ! grep -q 'remove_all' cxxkeep.out.err &&
  test -z \"\$(find $SCR_CACHE_BASE -name rank_0.bin -path '*ckpt_[246]/*')\" &&
  test -n \"\$(find $SCR_CACHE_BASE -name rank_0.bin -path '*ckpt_8/*')\" && test \"\$(ls $TRASH/cxxkeep)\" = ckpt_8 &&
  no_files_below $TRASH/cxxkeep &&
  test -z \"\$(find $SCR_CACHE_BASE -name '.scr_view*')\"
"

test_expect_success 'a tree rank 0 removes through descriptors, as shutil.rmtree does, leaves nothing shown on any rank' "
  fresh tree && printf '%s\\n' 'PRELOAD=run/step_{step}/part_{rank}.bin BOUNDARY=BARRIER' \\
    'PRELOAD=run/step_{step}/header.txt BOUNDARY=BARRIER' >$TRASH/tree/.scrconf &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=4 run shared_header tree tree.out &&
  (cd $TRASH/tree && SCR_FLUSH=0 mpirun 2 env LD_PRELOAD=\"$preload\" $top_builddir/t/helpers/mpi-fileops \\
     rmtree@0:run/step_4 rmtree@0:run/step_4 rmdir@0:run rmtree@0:run rmtree@0:run) >rmtree.out 2>rmtree.err &&
  printf '%s\\n' 'rmtree@0 run/step_4: 0 ok' 'rmtree@0 run/step_4: -1 No such file or directory' \\
    'rmdir@0 run: -1 Directory not empty' 'rmtree@0 run: 0 ok' 'rmtree@0 run: -1 No such file or directory' >rmtree.expect &&
  cmp rmtree.expect rmtree.out &&
  test -z \"\$(find $SCR_CACHE_BASE -name '*.bin' -o -name '*.txt' -o -name '.scr_view*')\" &&
  test -z \"\$(ls $TRASH/tree)\"
"

test_expect_success 'a header rank 0 wrote for all is read by every rank at a restart from cache' "
  native shared_header ref.hdr ref.hdr.out &&
  fresh hdr && printf '%s\\n' 'PRELOAD=run/step_{step}/part_{rank}.bin BOUNDARY=BARRIER' \\
    'PRELOAD=run/step_{step}/header.txt BOUNDARY=BARRIER' >$TRASH/hdr/.scrconf &&
  ! SCR_FLUSH=0 run shared_header hdr hdr.die.out --die-at 5 &&
  no_files_below $TRASH/hdr/run && test -n \"\$(find $SCR_CACHE_BASE -name header.txt)\" &&
  SCR_FLUSH=0 run shared_header hdr hdr.resume.out &&
  expect_grep '^resumed from step 4\$' hdr.resume.out && same_result hdr.resume.out ref.hdr.out &&
  expect_grep 'shown to every rank' hdr.resume.out.err
"

# fileops DIR OUT OP...: mpi-fileops on 2 ranks under the preload, in $TRASH/DIR
fileops() {
  dir=$1 out=$2
  shift 2
  (cd "$TRASH/$dir" && SCR_FLUSH=0 mpirun 2 env LD_PRELOAD="$preload" "$top_builddir/t/helpers/mpi-fileops" "$@") \
    >"$TRASH/$out" 2>"$TRASH/$out.err"
}
# bytes OUT LINE: the count a "read" line of OUT reports
bytes() { sed -n "s|^$2: \([0-9]*\) ok\$|\1|p" "$TRASH/$1"; }

test_expect_success 'a rank renames its copy of a file another rank wrote: its view follows, the writer keeps it' "
  fileops hdr mvshared.out rename@1:run/step_8/header.txt=run/step_8/header.old read@1:run/step_8/header.old \
    read@1:run/step_8/header.txt read@0:run/step_8/header.txt &&
  printf '%s\\n' 'rename@1 run/step_8/header.txt=run/step_8/header.old: 0 ok' \
    'read@1 run/step_8/header.txt: -1 No such file or directory' >mvshared.expect &&
  grep -v '^read@[01] run/step_8/header.old:\\|^read@0' mvshared.out >mvshared.got && test_cmp mvshared.expect mvshared.got &&
  cached=\$(find $SCR_CACHE_BASE -name header.txt -path '*step_8*' ! -path '*.scr_shared*') && test -n \"\$cached\" &&
  cmp \"\$cached\" $TRASH/hdr/run/step_8/header.old &&
  test \"\$(stat -c %a \"\$cached\")\" = \"\$(stat -c %a $TRASH/hdr/run/step_8/header.old)\" &&
  test \"\$(bytes mvshared.out 'read@0 run/step_8/header.txt')\" = \"\$(wc -c <\"\$cached\")\"
"

test_expect_success 'mirrors and shared copies of ranks not on this node, left by a run that died, are removed' "
  cachedir=\$(find $SCR_CACHE_BASE -maxdepth 2 -type d -name scr.t4110) && test -n \"\$cachedir\" &&
  mkdir -p \$cachedir/.scr_view.7/run/step_8 \$cachedir/.scr_shared.5/run/step_8 \$cachedir/.scr_view.notarank &&
  touch \$cachedir/.scr_view.7/run/step_8/part_7.bin \$cachedir/.scr_shared.5/run/step_8/header.txt &&
  fileops hdr strays.out read@1:run/step_8/part_1.bin &&
  ! test -e \$cachedir/.scr_view.7 && ! test -e \$cachedir/.scr_shared.5 && test -d \$cachedir/.scr_view.notarank &&
  expect_grep '^read@1 run/step_8/part_1.bin: [1-9][0-9]* ok\$' strays.out
"

test_expect_success 'a checkpoint file renamed to a name no rule matches moves to the prefix directory' "
  fileops hdr mv.out read@0:run/step_8/part_0.bin rename@0:run/step_8/part_0.bin=run/step_8/part_0.old \
    read@0:run/step_8/part_0.old read@0:run/step_8/part_0.bin &&
  expect_grep '^rename@0 run/step_8/part_0.bin=run/step_8/part_0.old: 0 ok\$' mv.out &&
  test -n \"\$(bytes mv.out 'read@0 run/step_8/part_0.bin')\" &&
  test \"\$(bytes mv.out 'read@0 run/step_8/part_0.bin')\" = \"\$(bytes mv.out 'read@0 run/step_8/part_0.old')\" &&
  expect_grep '^read@0 run/step_8/part_0.bin: -1 No such file or directory\$' mv.out &&
  test -f $TRASH/hdr/run/step_8/part_0.old && ! test -e $TRASH/hdr/run/step_8/part_0.bin &&
  test -z \"\$(find $SCR_CACHE_BASE -name part_0.bin -path '*step_8*')\"
"

test_expect_success 'a checkpoint a rank deleted a file of is not restored: the next run resumes from the one before' "
  fresh partial && echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >$TRASH/partial/.scrconf &&
  ! SCR_FLUSH=0 SCR_CACHE_SIZE=2 run posix_fpp partial partial.die.out --die-at 7 &&
  expect_grep '^checkpoint 6 written' partial.die.out &&
  fileops partial partial.rm.out unlink@0:data/step6_rank0.chk &&
  expect_grep '^unlink@0 data/step6_rank0.chk: 0 ok\$' partial.rm.out &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=2 run posix_fpp partial partial.resume.out &&
  expect_grep '^resumed from step 4\$' partial.resume.out && same_result partial.resume.out ref.posix.out &&
  expect_grep \"sees checkpoint 'data/step4_rank{rank}.chk' at its original paths\" partial.resume.out.err
"

test_expect_success 'glob finds a restored file; opened with O_CREAT|O_EXCL it exists; without O_TRUNC it keeps its bytes' "
  fresh excl && echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >$TRASH/excl/.scrconf &&
  ! SCR_FLUSH=0 run posix_fpp excl excl.die.out --die-at 5 &&
  fileops excl excl.glob.out 'glob:data/step*_rank%d.chk' 'glob:data/*' 'glob:nothing/*' &&
  printf '%s\\n' 'glob data/step*_rank0.chk: 1 ok' '  = data/step4_rank0.chk' 'glob data/*: 2 ok' \
    '  = data/step4_rank0.chk' '  = data/step4_rank1.chk' 'glob nothing/*: 0 ok' >excl.glob.expect && test_cmp excl.glob.expect excl.glob.out &&
  fileops excl excl.out read:data/step4_rank%d.chk excl:data/step4_rank%d.chk update:data/step4_rank%d.chk \
    read:data/step4_rank%d.chk &&
  expect_grep '^excl data/step4_rank0.chk: -1 File exists\$' excl.out &&
  expect_grep '^update data/step4_rank0.chk: 0 ok\$' excl.out &&
  test \"\$(sed -n 1p excl.out | cut -d' ' -f3)\" = \"\$(sed -n 4p excl.out | cut -d' ' -f3)\" &&
  test \"\$(sed -n 1p excl.out | cut -d' ' -f3)\" -gt 1
"

test_expect_success 'nftw walks a restored checkpoint directory the file system lacks, and removes it' "
  fresh walk && echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >$TRASH/walk/.scrconf &&
  ! SCR_FLUSH=0 run posix_fpp walk walk.die.out --die-at 5 &&
  no_files_below $TRASH/walk/data && rmdir $TRASH/walk/data &&
  fileops walk walk.top.out walk:. 'glob:*' &&
  expect_grep '^  = D 1 ./data\$' walk.top.out && expect_grep '^  = F 2 ./data/step4_rank0.chk\$' walk.top.out &&
  expect_grep '^  = data\$' walk.top.out &&
  fileops walk walk.cd.out walkcd:data && expect_grep '^  = F 1 data/step4_rank0.chk\$' walk.cd.out &&
  ! test -e $TRASH/walk/data &&
  fileops walk walk.out walk:data rmwalk:data walk:data stat:data/step4_rank%d.chk 'glob:data/*' &&
  printf '%s\\n' 'walk data: 3 ok' '  = D 0 data' '  = F 1 data/step4_rank0.chk' '  = F 1 data/step4_rank1.chk' \
    'rmwalk data: 0 ok' \
    'walk data: -1 No such file or directory' 'stat data/step4_rank0.chk: -1 No such file or directory' \
    'glob data/*: 0 ok' >walk.expect && test_cmp walk.expect walk.out
"

test_expect_success 'a second file of a step that already completed joins that checkpoint, with a warning' "
  fresh twofiles && printf '%s\\n' 'PRELOAD=ck.{step}/r_{rank}.dat' 'PRELOAD=ck.{step}/q_{rank}.dat' >$TRASH/twofiles/.scrconf &&
  fileops twofiles two.out mkdir@0:ck.1 write:ck.1/r_%d.dat write:ck.1/q_%d.dat &&
  expect_grep 'ck.1/q_0.dat is a file of step 1, which completed .*set FILES=' two.out.err &&
  fileops twofiles two.read.out read:ck.1/r_%d.dat read:ck.1/q_%d.dat &&
  printf '%s\\n' 'read ck.1/r_0.dat: 7 ok' 'read ck.1/q_0.dat: 7 ok' >two.expect && test_cmp two.expect two.read.out
"

test_expect_success 'a completed checkpoint file opened again without O_TRUNC changes in place; written anew, a new version' "
  fresh again && echo 'PRELOAD=ck.{step}/r_{rank}.dat' >$TRASH/again/.scrconf &&
  fileops again again.out mkdir@0:ck.1 write:ck.1/r_%d.dat update:ck.1/r_%d.dat read:ck.1/r_%d.dat &&
  printf '%s\\n' 'mkdir@0 ck.1: 0 ok' 'write ck.1/r_0.dat: 0 ok' 'update ck.1/r_0.dat: 0 ok' 'read ck.1/r_0.dat: 7 ok' \
    >again.expect && test_cmp again.expect again.out &&
  files=\$(find $SCR_CACHE_BASE -name r_1.dat ! -path '*.scr_*') && test \"\$(echo \$files | wc -w)\" = 1 &&
  test \"\$(cat \$files)\" = 'Xank 1' && case \$files in *scr.dataset.1/*) true ;; *) false ;; esac &&
  fileops again again.new.out fwrite:ck.1/r_%d.dat &&
  files=\$(find $SCR_CACHE_BASE -name r_1.dat ! -path '*.scr_*') && test \"\$(echo \$files | wc -w)\" = 1 &&
  test \"\$(cat \$files)\" = 'rank 1' && case \$files in *scr.dataset.1/*) false ;; esac
"

test_expect_success 'a file of a rule without {step} opened again with O_CREAT, not O_TRUNC, starts the next checkpoint' "
  fresh nostep && echo 'PRELOAD=restart_{rank}.dat' >$TRASH/nostep/.scrconf &&
  fileops nostep nostep.out write:restart_%d.dat update:restart_%d.dat read:restart_%d.dat &&
  printf '%s\\n' 'write restart_0.dat: 0 ok' 'update restart_0.dat: 0 ok' 'read restart_0.dat: 7 ok' >nostep.expect &&
  test_cmp nostep.expect nostep.out &&
  files=\$(find $SCR_CACHE_BASE -name restart_1.dat ! -path '*.scr_*') && test \"\$(echo \$files | wc -w)\" = 1 &&
  test \"\$(cat \$files)\" = 'Xank 1' && case \$files in *scr.dataset.1/*) false ;; esac
"

test_expect_success 'a log appended to with fopen(a) after its checkpoint completed changes that checkpoint in place' "
  fresh applog && printf '%s\\n' 'PRELOAD=ck.{step}/r_{rank}.dat FILES=2' 'PRELOAD=ck.{step}/log_{rank}.txt FILES=2' \
    >$TRASH/applog/.scrconf &&
  fileops applog applog.out mkdir@0:ck.1 write:ck.1/r_%d.dat fappend:ck.1/log_%d.txt fappend:ck.1/log_%d.txt &&
  fileops applog applog.read.out read:ck.1/r_%d.dat read:ck.1/log_%d.txt &&
  expect_grep 'restarting from dataset 1 (ck.1) in cache' applog.read.out.err &&
  printf '%s\\n' 'read ck.1/r_0.dat: 7 ok' 'read ck.1/log_0.txt: 14 ok' >applog.expect &&
  test_cmp applog.expect applog.read.out
"

test_expect_success 'fstatat relative to the stream of a listed directory the file system lacks finds its files' "
  fresh dirstat && echo 'PRELOAD=ck.{step}/r_{rank}.dat' >$TRASH/dirstat/.scrconf &&
  fileops dirstat dirstat.out mkdir@0:ck.1 write:ck.1/r_%d.dat dirstat:ck.1 &&
  expect_grep '^dirstat ck.1: 14 ok\$' dirstat.out &&
  fileops dirstat dirstat.next.out dirstat:ck.1 && expect_grep '^dirstat ck.1: 14 ok\$' dirstat.next.out
"

test_expect_success 'mkdir of a cached file s name fails with EEXIST and makes no directory on the file system' "
  fresh mkfile && echo 'PRELOAD=ck.{step}/r_{rank}.dat' >$TRASH/mkfile/.scrconf &&
  fileops mkfile mkfile.out mkdir@0:ck.1 write:ck.1/r_%d.dat mkdir:ck.1/r_%d.dat read:ck.1/r_%d.dat &&
  printf '%s\\n' 'mkdir@0 ck.1: 0 ok' 'write ck.1/r_0.dat: 0 ok' 'mkdir ck.1/r_0.dat: -1 File exists' \
    'read ck.1/r_0.dat: 7 ok' >mkfile.expect && test_cmp mkfile.expect mkfile.out &&
  no_files_below $TRASH/mkfile/ck.1
"

test_expect_success 'a path through a cached file fails with ENOTDIR, as on a file system' "
  fresh notdir && echo 'PRELOAD=ck.{step}/r_{rank}.dat' >$TRASH/notdir/.scrconf &&
  fileops notdir notdir.out mkdir@0:ck.1 write:ck.1/r_%d.dat stat:ck.1/r_%d.dat/x read:ck.1/r_%d.dat/x \
    write:ck.1/r_%d.dat/x relist:ck.1/r_%d.dat mkdir:ck.1/r_%d.dat/x unlink:ck.1/r_%d.dat/x stat:ck.1/nothing &&
  printf '%s\\n' 'mkdir@0 ck.1: 0 ok' 'write ck.1/r_0.dat: 0 ok' 'stat ck.1/r_0.dat/x: -1 Not a directory' \
    'read ck.1/r_0.dat/x: -1 Not a directory' 'write ck.1/r_0.dat/x: -1 Not a directory' \
    'relist ck.1/r_0.dat: -1 Not a directory' 'mkdir ck.1/r_0.dat/x: -1 Not a directory' \
    'unlink ck.1/r_0.dat/x: -1 Not a directory' 'stat ck.1/nothing: -1 No such file or directory' >notdir.expect &&
  test_cmp notdir.expect notdir.out
"

test_expect_success 'a checkpoint directory renamed to a name no rule matches leaves the view; listings type directories' "
  fresh mvdir && echo 'PRELOAD=ck.{step}/r_{rank}.dat' >$TRASH/mvdir/.scrconf &&
  fileops mvdir mvdir.out mkdir@0:ck.4 write:ck.4/r_%d.dat mkdir@0:ck.5 ls:. rename@0:ck.4=ck.4.old stat@0:ck.4 ls@0:. \
    rmtree@0:ck.4.old ls@0:. &&
  printf '%s\\n' 'mkdir@0 ck.4: 0 ok' 'write ck.4/r_0.dat: 0 ok' 'mkdir@0 ck.5: 0 ok' 'ls .: 4 ok' '  = .scr d' \
    '  = .scrconf f' '  = ck.4 d' '  = ck.5 d' 'rename@0 ck.4=ck.4.old: 0 ok' \
    'stat@0 ck.4: -1 No such file or directory' 'ls@0 .: 4 ok' '  = .scr d' '  = .scrconf f' '  = ck.4.old d' \
    '  = ck.5 d' 'rmtree@0 ck.4.old: 0 ok' 'ls@0 .: 3 ok' '  = .scr d' '  = .scrconf f' '  = ck.5 d' >mvdir.expect &&
  test_cmp mvdir.expect mvdir.out
"

test_expect_success 'a checkpoint written in a temporary directory then renamed takes its name; its files deleted, the index stops offering it' "
  fresh tmpdir && printf '%s\\n' 'PRELOAD=ck.tmp/r_{rank}.dat BOUNDARY=BARRIER' \
    'PRELOAD=ck.{step}/r_{rank}.dat BOUNDARY=BARRIER' >$TRASH/tmpdir/.scrconf &&
  (cd $TRASH/tmpdir && SCR_FLUSH=1 SCR_CACHE_SIZE=1 mpirun 2 env LD_PRELOAD=\"$preload\" \
     $top_builddir/t/helpers/mpi-fileops mkdir@0:ck.tmp write:ck.tmp/r_%d.dat rename@0:ck.tmp=ck.1 mkdir@0:ck.tmp \
     write:ck.tmp/r_%d.dat rename@0:ck.tmp=ck.2 unlink:ck.1/r_%d.dat rmdir@0:ck.1) >tmpdir.out 2>tmpdir.err &&
  expect_grep '^rmdir@0 ck.1: 0 ok\$' tmpdir.out &&
  $top_builddir/scr_index --prefix $TRASH/tmpdir --list >tmpdir.index &&
  expect_grep '^ *1  ck.1 .* INCOMPLETE  *[a-z-]*\$' tmpdir.index && expect_grep '^ *2  ck.2 .* ok  *[a-z-]*\$' tmpdir.index
"

test_expect_success 'scandirat relative to a directory descriptor lists a checkpoint directory the file system lacks' "
  fresh scanat && echo 'PRELOAD=ck.{step}/r_{rank}.dat' >$TRASH/scanat/.scrconf &&
  fileops scanat scanat.out mkdir@0:ck.1 write:ck.1/r_%d.dat scanat:ck.1 scanat:ck.2 scanat:ck.1/r_%d.dat &&
  printf '%s\\n' 'mkdir@0 ck.1: 0 ok' 'write ck.1/r_0.dat: 0 ok' 'scanat ck.1: 4 ok' '  = .' '  = ..' '  = r_0.dat' '  = r_1.dat' \
    'scanat ck.2: -1 No such file or directory' 'scanat ck.1/r_0.dat: -1 Not a directory' >scanat.expect &&
  test_cmp scanat.expect scanat.out
"

test_expect_success 'freopen of a checkpoint stream for appending: one file, all its bytes, restored' "
  fresh reopen && echo 'PRELOAD=ck.{step}/r_{rank}.dat' >$TRASH/reopen/.scrconf &&
  fileops reopen reopen.out mkdir@0:ck.1 freopen:ck.1/r_%d.dat &&
  expect_grep '^freopen ck.1/r_0.dat: 0 ok' reopen.out && ! grep -q 'not flushed\\|were recorded' reopen.out.err &&
  fileops reopen reopen.read.out read:ck.1/r_%d.dat &&
  printf '%s\\n' 'read ck.1/r_0.dat: 12 ok' >reopen.expect && test_cmp reopen.expect reopen.read.out
"

test_expect_success 'an output file written after the checkpoint of its step is a dataset of its own' "
  fresh ckout && printf '%s\\n' 'PRELOAD=ck.{step}/r_{rank}.dat' 'PRELOAD=out/o_{step}_{rank}.txt TYPE=OUTPUT' \
    >$TRASH/ckout/.scrconf &&
  fileops ckout ckout.out mkdir@0:ck.3 mkdir@0:out write:ck.3/r_%d.dat write:out/o_3_%d.txt &&
  ! grep -q 'kept with that checkpoint' ckout.out.err &&
  test \"\$(cat $TRASH/ckout/out/o_3_1.txt)\" = 'rank 1' && ! test -e $TRASH/ckout/ck.3/r_1.dat
"

test_expect_success 'files and directories no rule matches, made in a checkpoint directory, go to the file system; statvfs sees it' "
  fresh others && echo 'PRELOAD=ck.{step}/r_{rank}.dat' >$TRASH/others/.scrconf &&
  fileops others others.out mkdir@0:ck.2 write:ck.2/notes_%d.txt fwrite:ck.2/log_%d.txt mkdir:ck.2/sub_%d \
    write:ck.2/r_%d.dat read:ck.2/notes_%d.txt mkdir@0:ck.3 mkdir:ck.3/logs_%d/ mkdir@0:ck.4 statvfs:ck.4 \
    write:ck.4/r_%d.dat statvfs:ck.4/r_%d.dat statvfs:ck.4/missing &&
  printf '%s\\n' 'mkdir@0 ck.2: 0 ok' 'write ck.2/notes_0.txt: 0 ok' 'fwrite ck.2/log_0.txt: 0 ok' 'mkdir ck.2/sub_0: 0 ok' \
    'write ck.2/r_0.dat: 0 ok' 'read ck.2/notes_0.txt: 7 ok' 'mkdir@0 ck.3: 0 ok' 'mkdir ck.3/logs_0/: 0 ok' \
    'mkdir@0 ck.4: 0 ok' 'statvfs ck.4: 0 ok' 'write ck.4/r_0.dat: 0 ok' 'statvfs ck.4/r_0.dat: 0 ok' \
    'statvfs ck.4/missing: -1 No such file or directory' >others.expect && test_cmp others.expect others.out &&
  test -f $TRASH/others/ck.2/notes_1.txt && test -f $TRASH/others/ck.2/log_1.txt && test -d $TRASH/others/ck.2/sub_1 &&
  test -d $TRASH/others/ck.3/logs_1 &&
  ! test -e $TRASH/others/ck.2/r_0.dat && test -n \"\$(find $SCR_CACHE_BASE -path '*ck.4/r_1.dat')\"
"

test_expect_success 'a symbolic link to a checkpoint directory the cache holds leads into it, in this run and the next' "
  fresh symlink && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat' >$TRASH/symlink/.scrconf &&
  fileops symlink symlink.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat symlink@0:ckpt.1=latest read:latest/rank_%d.dat \
    mkdir@0:ckpt.2 symlink@0:ckpt.2=next write:ckpt.2/rank_%d.dat stat:next/rank_%d.dat &&
  printf '%s\\n' 'mkdir@0 ckpt.1: 0 ok' 'write ckpt.1/rank_0.dat: 0 ok' 'symlink@0 ckpt.1=latest: 0 ok' \
    'read latest/rank_0.dat: 7 ok' 'mkdir@0 ckpt.2: 0 ok' 'symlink@0 ckpt.2=next: 0 ok' 'write ckpt.2/rank_0.dat: 0 ok' \
    'stat next/rank_0.dat: 7 ok' >symlink.expect && test_cmp symlink.expect symlink.out &&
  test \"\$(cat \$(find $SCR_CACHE_BASE -path '*ckpt.2/rank_1.dat' ! -path '*.scr_*'))\" = 'rank 1' &&
  no_files_below $TRASH/symlink/ckpt.2 && test -L $TRASH/symlink/latest &&
  fileops symlink symlink.next.out read:next/rank_%d.dat stat:next 'glob:next/*' chmod:next/rank_%d.dat \
    mode:next/rank_%d.dat chdir:next read:rank_%d.dat &&
  printf '%s\\n' 'read next/rank_0.dat: 7 ok' 'stat next: 4096 ok' 'glob next/*: 2 ok' '  = next/rank_0.dat' '  = next/rank_1.dat' \
    'chmod next/rank_0.dat: 0 ok' 'mode next/rank_0.dat: 444 ok' 'chdir next: 0 ok' 'read rank_0.dat: 7 ok' \
    >symlink.next.expect && test_cmp symlink.next.expect symlink.next.out
"

test_expect_success 'a link into the view mirror that names itself again fails as a missing name, once' "
  cachedir=\$(find $SCR_CACHE_BASE -maxdepth 2 -type d -name scr.t4110) && test -n \"\$cachedir\" &&
  ln -s \"\$cachedir/.scr_view.0/loop\" $TRASH/symlink/loop &&
  fileops symlink symlink.loop.out stat:loop/x stat:loop/x/ 'glob:loop/*' &&
  printf '%s\\n' 'stat loop/x: -1 No such file or directory' 'stat loop/x/: -1 No such file or directory' \
    'glob loop/*: 0 ok' >symlink.loop.expect && test_cmp symlink.loop.expect symlink.loop.out
"

test_expect_success 'a completed checkpoint changed in place restores with its new bytes; one whose change was cut short does not' "
  fresh inplace && echo 'PRELOAD=ck.{step}/r_{rank}.dat' >$TRASH/inplace/.scrconf &&
  SCR_CACHE_SIZE=3 fileops inplace inplace.out mkdir@0:ck.1 write:ck.1/r_%d.dat mkdir@0:ck.2 write:ck.2/r_%d.dat \
    inplace:ck.2/r_%d.dat &&
  SCR_CACHE_SIZE=3 fileops inplace inplace.next.out read:ck.2/r_%d.dat copy@1:ck.2/r_1.dat=got.1 &&
  expect_grep \"sees checkpoint 'ck.2'\" inplace.next.out.err && test \"\$(cat $TRASH/inplace/got.1)\" = 'Xank 1' &&
  SCR_CACHE_SIZE=3 fileops inplace inplace.crash.out mkdir@0:ck.3 write:ck.3/r_%d.dat crash:ck.3/r_%d.dat;
  SCR_CACHE_SIZE=3 fileops inplace inplace.after.out read:ck.3/r_%d.dat &&
  expect_grep \"sees checkpoint 'ck.2'\" inplace.after.out.err &&
  expect_grep '^read ck.3/r_0.dat: -1 No such file or directory\$' inplace.after.out
"

test_expect_success 'a checkpoint file open read-write, unchanged, when the job dies is still restored' "
  SCR_CACHE_SIZE=3 fileops inplace inplace.rw.out mkdir@0:ck.4 write:ck.4/r_%d.dat crashrw:ck.4/r_%d.dat;
  SCR_CACHE_SIZE=3 fileops inplace inplace.rw.after.out read:ck.4/r_%d.dat &&
  expect_grep \"sees checkpoint 'ck.4'\" inplace.rw.after.out.err &&
  expect_grep '^read ck.4/r_0.dat: 7 ok\$' inplace.rw.after.out
"

test_expect_success 'an older flushed checkpoint changed in place: the prefix directory gets the new bytes, it stays older' "
  fresh older && echo 'PRELOAD=ck.{step}/r_{rank}.dat' >$TRASH/older/.scrconf &&
  (cd $TRASH/older && SCR_FLUSH=1 SCR_CACHE_SIZE=3 mpirun 2 env LD_PRELOAD=\"$preload\" \
    $top_builddir/t/helpers/mpi-fileops mkdir@0:ck.1 write:ck.1/r_%d.dat mkdir@0:ck.2 write:ck.2/r_%d.dat \
    inplace:ck.1/r_%d.dat) >older.out 2>older.err &&
  expect_grep 'dataset 1 was changed in place: its redundancy was encoded again and it was flushed again' older.err &&
  test \"\$(cat $TRASH/older/ck.1/r_1.dat)\" = 'Xank 1' &&
  rm -rf $SCR_CACHE_BASE $SCR_CNTL_BASE &&
  SCR_CACHE_SIZE=3 fileops older older.next.out read:ck.2/r_%d.dat &&
  expect_grep \"sees checkpoint 'ck.2'\" older.next.out.err
"

test_expect_success 'a directory all ranks wrote in, renamed by one: the others follow at the next barrier, and the next run' "
  fresh dirmv && printf '%s\\n' 'PRELOAD=ckpt.tmp/rank_{rank}.dat' 'PRELOAD=ckpt.{step}/rank_{rank}.dat' \
    >$TRASH/dirmv/.scrconf &&
  SCR_CACHE_SIZE=3 fileops dirmv dirmv.out mkdir@0:ckpt.tmp write:ckpt.tmp/rank_%d.dat mkdir@0:ckpt.4 write:ckpt.4/rank_%d.dat \
    rename@0:ckpt.tmp=ckpt.4 rename@0:ckpt.tmp=ckpt.tmp/in rename@0:ckpt.tmp=ckpt.5 read:ckpt.5/rank_%d.dat \
    read@1:ckpt.5/rank_1.dat read@1:ckpt.tmp/rank_1.dat rename@1:ckpt.4=old read@0:old/rank_0.dat &&
  printf '%s\\n' 'mkdir@0 ckpt.tmp: 0 ok' 'write ckpt.tmp/rank_0.dat: 0 ok' 'mkdir@0 ckpt.4: 0 ok' \
    'write ckpt.4/rank_0.dat: 0 ok' 'rename@0 ckpt.tmp=ckpt.4: -1 Directory not empty' \
    'rename@0 ckpt.tmp=ckpt.tmp/in: -1 Invalid argument' 'rename@0 ckpt.tmp=ckpt.5: 0 ok' 'read ckpt.5/rank_0.dat: 7 ok' \
    'read@1 ckpt.5/rank_1.dat: 7 ok' 'read@1 ckpt.tmp/rank_1.dat: -1 No such file or directory' \
    'rename@1 ckpt.4=old: 0 ok' 'read@0 old/rank_0.dat: 7 ok' >dirmv.expect &&
  sort dirmv.expect >dirmv.expect.sorted && sort dirmv.out >dirmv.sorted && test_cmp dirmv.expect.sorted dirmv.sorted &&
  test \"\$(cat $TRASH/dirmv/old/rank_1.dat)\" = 'rank 1' && no_files_below $TRASH/dirmv/ckpt.5 &&
  test -n \"\$(find $SCR_CACHE_BASE -path '*ckpt.5/rank_1.dat')\" &&
  SCR_CACHE_SIZE=3 fileops dirmv dirmv.next.out read:ckpt.5/rank_%d.dat read@1:ckpt.5/rank_1.dat &&
  printf '%s\\n' 'read ckpt.5/rank_0.dat: 7 ok' 'read@1 ckpt.5/rank_1.dat: 7 ok' >dirmv.next.expect &&
  test_cmp dirmv.next.expect dirmv.next.out
"

test_expect_success 'a directory renamed to another step while its dataset is in progress: no collective on one rank' "
  fresh dirstep && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat BOUNDARY=FINALIZE' >$TRASH/dirstep/.scrconf &&
  SCR_TEST_TIMEOUT=30 fileops dirstep dirstep.out mkdir@0:ckpt.4 write:ckpt.4/rank_%d.dat rename@0:ckpt.4=ckpt.5 \
    read:ckpt.5/rank_%d.dat &&
  expect_grep '^read ckpt.5/rank_0.dat: 7 ok\$' dirstep.out &&
  fileops dirstep dirstep.next.out read:ckpt.5/rank_%d.dat read@1:ckpt.5/rank_1.dat &&
  printf '%s\\n' 'read ckpt.5/rank_0.dat: 7 ok' 'read@1 ckpt.5/rank_1.dat: 7 ok' >dirstep.next.expect &&
  test_cmp dirstep.next.expect dirstep.next.out
"

test_expect_success 'a file appended to, its directory renamed, then closed: the next run has the appended bytes' "
  fresh heldmv && printf '%s\\n' 'PRELOAD=ckpt.tmp/rank_{rank}.dat' 'PRELOAD=ckpt.{step}/rank_{rank}.dat' \
    >$TRASH/heldmv/.scrconf &&
  fileops heldmv heldmv.out mkdir@0:ckpt.tmp write:ckpt.tmp/rank_%d.dat hold:ckpt.tmp/rank_%d.dat append:x \
    rename@0:ckpt.tmp=ckpt.5 release:x &&
  fileops heldmv heldmv.next.out read:ckpt.5/rank_%d.dat read@1:ckpt.5/rank_1.dat &&
  printf '%s\\n' 'read ckpt.5/rank_0.dat: 12 ok' 'read@1 ckpt.5/rank_1.dat: 12 ok' >heldmv.next.expect &&
  test_cmp heldmv.next.expect heldmv.next.out
"

test_expect_success 'chmod of a cached checkpoint file changes the mode stat shows, in this run and the next' "
  fresh chmod && echo 'PRELOAD=ck.{step}/r_{rank}.dat' >$TRASH/chmod/.scrconf &&
  fileops chmod chmod.out mkdir@0:ck.1 write:ck.1/r_%d.dat mode:ck.1/r_%d.dat chmod:ck.1/r_%d.dat mode:ck.1/r_%d.dat \
    chmod:ck.1/missing &&
  printf '%s\\n' 'mkdir@0 ck.1: 0 ok' 'write ck.1/r_0.dat: 0 ok' 'mode ck.1/r_0.dat: 644 ok' 'chmod ck.1/r_0.dat: 0 ok' \
    'mode ck.1/r_0.dat: 444 ok' 'chmod ck.1/missing: -1 No such file or directory' >chmod.expect &&
  test_cmp chmod.expect chmod.out &&
  fileops chmod chmod.next.out mode:ck.1/r_%d.dat && expect_grep '^mode ck.1/r_0.dat: 444 ok\$' chmod.next.out
"

test_expect_success 'mkstemp then rename in a new checkpoint directory, chdir into it, realpath of its file' "
  fresh tmpfile && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat' >$TRASH/tmpfile/.scrconf &&
  fileops tmpfile tmpfile.out mkdir@0:ckpt.1 mkstemp:ckpt.1/tmp.XXXXXX=ckpt.1/rank_%d.dat read:ckpt.1/rank_%d.dat \
    chdir:ckpt.1 read:rank_%d.dat chdir:.. read@1:ckpt.1/rank_1.dat realpath:ckpt.1/./rank_0.dat &&
  real=\$(cd $TRASH/tmpfile && pwd -P) &&
  printf '%s\\n' 'mkdir@0 ckpt.1: 0 ok' 'mkstemp ckpt.1/tmp.XXXXXX=ckpt.1/rank_0.dat: 0 ok' 'read ckpt.1/rank_0.dat: 7 ok' \
    'chdir ckpt.1: 0 ok' 'read rank_0.dat: 7 ok' 'chdir ..: 0 ok' \
    \"realpath ckpt.1/./rank_0.dat: \$(printf %s \"\$real/ckpt.1/rank_0.dat\" | wc -c) ok\" \
    \"  = \$real/ckpt.1/rank_0.dat\" >tmpfile.expect &&
  grep -v '^read@1 ' tmpfile.out >tmpfile.rank0 && test_cmp tmpfile.expect tmpfile.rank0 &&
  expect_grep '^read@1 ckpt.1/rank_1.dat: 7 ok\$' tmpfile.out &&
  test \"\$(cat \$(find $SCR_CACHE_BASE -path '*ckpt.1/rank_1.dat'))\" = 'rank 1' &&
  test -d $TRASH/tmpfile/ckpt.1 && test -z \"\$(ls -A $TRASH/tmpfile/ckpt.1)\"
"

test_expect_success 'a directory listing shows the cached checkpoint files' "
  fresh dirscan && echo 'PRELOAD=chk/state-{step}-{rank}.dat TYPE=CHECKPOINT' >$TRASH/dirscan/.scrconf &&
  ! SCR_FLUSH=0 run dirscan dirscan die.out --die-at 5 &&
  ! test -e $TRASH/dirscan/chk/state-4-0.dat &&
  SCR_FLUSH=0 run dirscan dirscan resume.out &&
  expect_grep '^resumed from step 4\$' resume.out && same_result resume.out ref.posix.out
"

test_expect_success 'a wrong rule is reported once with file, line and key; the job runs unprotected' "
  fresh wrong && printf 'SCR_FLUSH=0\nPRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT BOUNDARY=SOMETIMES\n' >$TRASH/wrong/.scrconf &&
  run posix_fpp wrong wrong.out &&
  same_result wrong.out ref.posix.out &&
  test \$(grep -c '.scrconf:2.*BOUNDARY' $TRASH/wrong.out.err) = 1 &&
  test -e $TRASH/wrong/data/step8_rank1.chk && ! test -e $SCR_CACHE_BASE
"

test_expect_success 'without rules the job runs as natively and creates no cache' "
  fresh none && run posix_fpp none none.out &&
  same_result none.out ref.posix.out && ! test -s $TRASH/none.out.err && ! test -e $SCR_CACHE_BASE &&
  cmp $TRASH/none/data/step8_rank0.chk $TRASH/ref.posix/data/step8_rank0.chk
"

test_expect_success 'a dry run under MPI reports the matching opens and routes nothing' "
  fresh dry && echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >$TRASH/dry/.scrconf &&
  SCR_PRELOAD_DRYRUN=1 run posix_fpp dry dry.out && same_result dry.out ref.posix.out &&
  expect_grep 'step8_rank1.chk' dry.out.err && test -e $TRASH/dry/data/step8_rank1.chk && ! test -e $SCR_CACHE_BASE
"

test_expect_success 'files of an absolute rule outside the prefix directory are written in place, with a warning' "
  fresh outside && mkdir -p $TRASH/prefix-elsewhere &&
  echo 'PRELOAD=$TRASH/outside/data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >$TRASH/prefix-elsewhere/.scrconf &&
  SCR_PREFIX=$TRASH/prefix-elsewhere run posix_fpp outside outside.out && same_result outside.out ref.posix.out &&
  cmp $TRASH/outside/data/step8_rank1.chk $TRASH/ref.posix/data/step8_rank1.chk &&
  expect_grep 'lies outside the prefix directory' outside.out.err
"

writer="$top_builddir/t/perf/preload-write"
test_expect_success 'TYPE=OUTPUT files reach the prefix directory at once and leave the cache' "
  fresh out && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat TYPE=OUTPUT' >$TRASH/out/.scrconf &&
  (cd $TRASH/out && SCR_FLUSH=0 mpirun 2 env LD_PRELOAD=$preload $writer . 1 3) >out.out 2>out.err &&
  for c in 1 2 3; do test \$(stat -c %s $TRASH/out/ckpt.\$c/rank_1.dat) = 1048576 || exit 1; done &&
  test -z \"\$(find $SCR_CACHE_BASE -name 'rank_*.dat')\"
"

test_expect_success 'BOUNDARY=FINALIZE: each new step completes the one before, MPI_Finalize the last' "
  fresh fin && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat TYPE=CHECKPOINT BOUNDARY=FINALIZE' >$TRASH/fin/.scrconf &&
  (cd $TRASH/fin && SCR_FLUSH=0 SCR_DEBUG=1 mpirun 2 env LD_PRELOAD=$preload $writer . 1 3) >fin.out 2>fin.err &&
  test \$(grep -c 'completed dataset' fin.err) = 3 && expect_grep 'preload summary: 3 datasets' fin.err
"

stepper="$top_builddir/t/helpers/step-writer"
test_expect_success 'an output file and a checkpoint file of the same step are two datasets' "
  fresh mixed && printf 'PRELOAD=out/field_{step}.{rank} TYPE=OUTPUT\nPRELOAD=ckpt.{step}/rank_{rank} TYPE=CHECKPOINT\n' >$TRASH/mixed/.scrconf &&
  (cd $TRASH/mixed && SCR_FLUSH=0 SCR_DEBUG=1 mpirun 2 env LD_PRELOAD=$preload $stepper 3) >mixed.out 2>mixed.err &&
  ! grep -q 'SCR ERROR' mixed.err && test \$(grep -c 'completed dataset' mixed.err) = 6 &&
  test -s $TRASH/mixed/out/field_3.1 && ! test -e $TRASH/mixed/ckpt.3/rank_1 &&
  (cd $TRASH/mixed && SCR_FLUSH=0 mpirun 2 env LD_PRELOAD=$preload $stepper 4) >mixed2.out 2>mixed2.err &&
  expect_grep '^resumed from step 3' mixed2.out
"

test_expect_success 'flushed checkpoints the program deletes from cache stay deleted and leave the index (SCR_FLUSH_ASYNC=1 too)' "
  fresh asyncdel && echo 'PRELOAD=ckpt_{step}/rank_{rank}.bin TYPE=CHECKPOINT' >$TRASH/asyncdel/.scrconf &&
  SCR_CACHE_SIZE=8 SCR_FLUSH=2 SCR_FLUSH_ASYNC=1 SCR_FLUSH_ASYNC_BW=3MB SCR_DEBUG=1 run cxx_ofstream asyncdel asyncdel.out \
    --steps 6 --every 1 --bytes 1500000 --keep 1 &&
  native cxx_ofstream asyncdel.ref asyncdel.ref.out --steps 6 --every 1 --bytes 1500000 --keep 1 &&
  same_result asyncdel.out asyncdel.ref.out &&
  test \"\$(cd $TRASH/asyncdel && find . -name 'rank_*' | sort)\" = \"\$(cd $TRASH/asyncdel.ref && find . -name 'rank_*' | sort)\" &&
  scr_index -p $TRASH/asyncdel >index.out && expect_grep 'ckpt_6 .* ok' index.out &&
  ! grep -q 'ckpt_[24] .* ok' index.out
"

test_expect_success 'a flushed checkpoint deleted after it left the cache leaves the index too' "
  fresh evicted && echo 'PRELOAD=ckpt_{step}/rank_{rank}.bin TYPE=CHECKPOINT' >$TRASH/evicted/.scrconf &&
  SCR_CACHE_SIZE=1 SCR_FLUSH=2 run cxx_ofstream evicted evicted.out --steps 6 --every 1 --bytes 100000 --keep 1 &&
  test -n \"\$(result_of evicted.out)\" &&
  test \"\$(cd $TRASH/evicted && find . -name 'rank_*' | sort)\" = \"./ckpt_6/rank_0.bin
./ckpt_6/rank_1.bin\" &&
  scr_index -p $TRASH/evicted >index.out && expect_grep 'ckpt_6 .* ok' index.out &&
  ! grep -q 'ckpt_[24] .* ok' index.out
"

test_expect_success 'a temporary file no rule matches, renamed to a checkpoint name, completes the checkpoint at once' "
  fresh joined && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat TYPE=CHECKPOINT' >$TRASH/joined/.scrconf &&
  ! fileops joined joined.die.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat.tmp \
      rename:ckpt.1/rank_%d.dat.tmp=ckpt.1/rank_%d.dat write:other.%d crash:other.%d &&
  expect_grep '^rename ckpt.1/rank_0.dat.tmp=ckpt.1/rank_0.dat: 0 ok' joined.die.out &&
  ! test -e $TRASH/joined/ckpt.1/rank_0.dat &&
  fileops joined joined.read.out read:ckpt.1/rank_%d.dat &&
  expect_grep '^read ckpt.1/rank_0.dat: 7 ok' joined.read.out
"

test_expect_success 'the extended attributes of a cached file are its cache file s (shutil.copy2 lists them)' "
  fresh xattr && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat TYPE=CHECKPOINT' >$TRASH/xattr/.scrconf &&
  fileops xattr xattr.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat xattrs:ckpt.1/rank_%d.dat xattrs:ckpt.1/none &&
  ! test -e $TRASH/xattr/ckpt.1/rank_0.dat &&
  expect_grep '^xattrs ckpt.1/rank_0.dat: [0-9]* ok' xattr.out &&
  expect_grep '^xattrs ckpt.1/none: -1 No such file or directory' xattr.out
"

# a file a rule matches but that is only on the file system (written before)
mkdir -p "$TRASH/xattr/ckpt.9" && echo real >"$TRASH/xattr/ckpt.9/rank_0.dat"
if (cd "$TRASH/xattr" && "$top_builddir/t/helpers/mpi-fileops" setxattr:ckpt.9/rank_0.dat) 2>&1 | grep -q ": 0 ok"; then
  test_expect_success 'the extended attributes of a matching file only on the file system are its own' "
    fileops xattr xattr.real.out xattrs@0:ckpt.9/rank_0.dat &&
    expect_grep '^xattrs@0 ckpt.9/rank_0.dat: 9 ok' xattr.real.out
  "
else
  test_skip 'the extended attributes of a matching file only on the file system are its own' 'no user xattrs here'
fi

test_expect_success 'a real directory with cached files and a marker no rule matches: removed through a descriptor' "
  fresh mixed && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat TYPE=CHECKPOINT' >$TRASH/mixed/.scrconf &&
  fileops mixed mixed.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat write@0:ckpt.1/DONE rmtree@0:ckpt.1 stat:ckpt.1/rank_%d.dat &&
  expect_grep '^rmtree@0 ckpt.1: 0 ok' mixed.out &&
  expect_grep '^stat ckpt.1/rank_0.dat: -1 No such file or directory' mixed.out && ! test -e $TRASH/mixed/ckpt.1
"

test_expect_success 'rewinddir of a listing that shows cached files starts it over' "
  fresh relist && echo 'PRELOAD=ckpt.{step}/rank_{rank}.dat TYPE=CHECKPOINT' >$TRASH/relist/.scrconf &&
  fileops relist relist.out mkdir@0:ckpt.1 write:ckpt.1/rank_%d.dat write@0:ckpt.1/DONE relist@0:ckpt.1 &&
  expect_grep '^relist@0 ckpt.1: 5 ok' relist.out
"

# the exit comes inside the close that completes the second checkpoint, before
# the program can say it was written
test_expect_success 'a halt set with scr_halt ends an unmodified program after the checkpoint that meets it, flushed' "
  fresh halted &&
  echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >$TRASH/halted/.scrconf &&
  scr_halt -c 2 $TRASH/halted >/dev/null &&
  SCR_FLUSH=10 run posix_fpp halted halt.out &&
  expect_grep '^checkpoint 2 written' halt.out && ! grep -q '^checkpoint [468] written' $TRASH/halt.out &&
  ! grep -q '^result:' $TRASH/halt.out && expect_grep 'exiting after checkpoint 2 ' halt.out.err &&
  test -s $TRASH/halted/data/step4_rank1.chk
"

test_expect_success 'once the halt is removed, the next run resumes from it with the native result' "
  scr_halt -r $TRASH/halted >/dev/null && SCR_FLUSH=10 run posix_fpp halted halt.again &&
  expect_grep '^resumed from step 4\$' halt.again && same_result halt.again ref.posix.out
"

test_expect_success 'with SCR_HALT_EXIT=0 a halt leaves the program running to its end' "
  fresh running &&
  echo 'PRELOAD=data/step{step}_rank{rank}.chk TYPE=CHECKPOINT' >$TRASH/running/.scrconf &&
  scr_halt -c 1 $TRASH/running >/dev/null &&
  SCR_FLUSH=0 SCR_HALT_EXIT=0 run posix_fpp running run.out && same_result run.out ref.posix.out
"

test_done
