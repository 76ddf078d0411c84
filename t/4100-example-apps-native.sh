#!/bin/sh
# 4100-example-apps-native.sh - the unmodified applications of examples/preload/
# without the preload layer, files on the normal file system: each runs to a
# result; killed (--die-at) right after a checkpoint, or between two, it
# resumes from its newest checkpoint and ends with the result of an
# uninterrupted run; it finds the newest checkpoint its own way (an older one
# when a rank's newest file is missing or short). The preload tests run the
# same programs and rely on this.
. "$top_srcdir/t/test-lib.sh"


apps="cxx_ofstream posix_fpp stdio_latest dirscan fortran_unformatted fortran_f08_stream hdf5_perrank shared_header"
# about 1 KB per rank, checkpoints after steps 3, 6, 9 and 12
args="--steps 12 --every 3 --bytes 1000"
ex="$top_builddir/examples/preload"

# run_app APP DIR OUT [ARGS...]: 4 ranks of the app in $TRASH/DIR, output in $TRASH/OUT
run_app() {
  app=$1 dir=$2 out=$3
  shift 3
  mkdir -p "$TRASH/$dir" && (cd "$TRASH/$dir" && mpirun 4 "$ex/$app" $args "$@") >"$TRASH/$out" 2>&1
}

# the 16 hex digits of the one result line of an output, or nothing
result_of() {
  test "$(grep -c '^result: ' "$TRASH/$1")" = 1 && sed -n 's/^result: \([0-9a-f]\{16\}\)$/\1/p' "$TRASH/$1"
}

# same_result OUT REF: OUT ends with REF's result
same_result() {
  r=$(result_of "$1") && test -n "$r" && test "$r" = "$(result_of "$2")" ||
    { echo "result of $1 '$r' differs from $2:"; cat "$TRASH/$1" "$TRASH/$2"; return 1; }
}

for app in $apps; do
  test_expect_success "$app: an uninterrupted run starts from step 0 and prints a result" "
    run_app $app $app.ref $app.ref.out &&
    expect_grep '^starting from step 0\$' $app.ref.out && expect_grep '^checkpoint 12 written\$' $app.ref.out &&
    test -n \"\$(result_of $app.ref.out)\" &&
    for r in 0 1 2 3; do test -s $app.ref/\$(example_file_of $app 12 \$r) || exit 1; done
  "

  test_expect_success "$app: killed right after checkpoint 6, it resumes from step 6" "
    ! run_app $app $app.job $app.die6.out --die-at 6 &&
    expect_grep '^dying at step 6\$' $app.die6.out && ! grep -q '^result:' $app.die6.out &&
    ! grep -q '^checkpoint 9' $app.die6.out &&
    ! run_app $app $app.job $app.die11.out --die-at 11 &&
    expect_grep '^resumed from step 6\$' $app.die11.out && expect_grep '^checkpoint 9 written\$' $app.die11.out &&
    expect_grep '^dying at step 11\$' $app.die11.out && ! grep -q '^result:' $app.die11.out
  "

  test_expect_success "$app: killed between checkpoints 9 and 12, it resumes from step 9 with the same result" "
    run_app $app $app.job $app.resume.out &&
    expect_grep '^resumed from step 9\$' $app.resume.out && same_result $app.resume.out $app.ref.out
  "

  test_expect_success "$app: run again after the end, it resumes from step 12 with the same result" "
    run_app $app $app.job $app.again.out &&
    expect_grep '^resumed from step 12\$' $app.again.out && ! grep -q '^checkpoint' $app.again.out &&
    same_result $app.again.out $app.ref.out
  "
done

test_expect_success 'all the programs compute the same result' "
  first=\$(result_of cxx_ofstream.ref.out) &&
  for app in $apps; do test \"\$(result_of \$app.ref.out)\" = \"\$first\" || exit 1; done
"

# a missing or short file: the probing programs agree on an older checkpoint
for app in cxx_ofstream posix_fpp dirscan fortran_unformatted hdf5_perrank shared_header; do
  test_expect_success "$app: rank 2 lost its step 12 file and rank 1's step 9 file is short: resumes from 6" "
    rm $app.ref/\$(example_file_of $app 12 2) && truncate -s 100 $app.ref/\$(example_file_of $app 9 1) &&
    run_app $app $app.ref $app.fallback.out &&
    expect_grep '^resumed from step 6\$' $app.fallback.out && same_result $app.fallback.out $app.ref.out
  "
done

test_expect_success 'fortran_f08_stream: keeps the two newest checkpoints; rank 2 lost its step 12 file: resumes from 9' "
  test \"\$(cd fortran_f08_stream.ref && ls step*.rank0.stream)\" = \"\$(printf 'step12.rank0.stream\\nstep9.rank0.stream')\" &&
  rm fortran_f08_stream.ref/\$(example_file_of fortran_f08_stream 12 2) &&
  run_app fortran_f08_stream fortran_f08_stream.ref fortran_f08_stream.fallback.out &&
  expect_grep '^resumed from step 9\$' fortran_f08_stream.fallback.out &&
  same_result fortran_f08_stream.fallback.out fortran_f08_stream.ref.out
"

test_expect_success 'shared_header: a step whose header is gone is passed over' "
  rm shared_header.ref/run/step_12/header.txt &&
  run_app shared_header shared_header.ref shared_header.nohdr.out &&
  expect_grep '^resumed from step 9\$' shared_header.nohdr.out &&
  same_result shared_header.nohdr.out shared_header.ref.out
"

test_expect_success 'stdio_latest: a pointer to a checkpoint that is gone is a fatal error' "
  rm stdio_latest.ref/ckpt.12.2 &&
  ! run_app stdio_latest stdio_latest.ref stdio_latest.gone.out &&
  expect_grep 'ckpt.latest names a checkpoint that cannot be opened: ckpt.12.2' stdio_latest.gone.out &&
  ! grep -q '^result:' stdio_latest.gone.out
"

test_expect_success 'cxx_ofstream --keep 2: remove_all leaves the two newest checkpoint directories' "
  run_app cxx_ofstream cxxkeep cxxkeep.out --keep 2 &&
  same_result cxxkeep.out cxx_ofstream.ref.out &&
  test \"\$(ls cxxkeep)\" = \"\$(printf 'ckpt_12\\nckpt_9')\"
"

test_expect_success 'stdio_latest --keep 2: only the two newest checkpoints stay, and a crash still resumes' "
  ! run_app stdio_latest keep keep.die.out --keep 2 --die-at 11 &&
  ls keep | grep '^ckpt\.[0-9]' | sort >keep.before &&
  printf 'ckpt.6.%s\n' 0 1 2 3 >keep.expect && printf 'ckpt.9.%s\n' 0 1 2 3 >>keep.expect &&
  cmp keep.expect keep.before && test \"\$(cat keep/ckpt.latest)\" = 9 &&
  run_app stdio_latest keep keep.resume.out --keep 2 &&
  expect_grep '^resumed from step 9\$' keep.resume.out && same_result keep.resume.out stdio_latest.ref.out &&
  test ! -e keep/ckpt.6.0 && test -e keep/ckpt.12.3 && test ! -e keep/ckpt.tmp.0
"

test_expect_success 'a bad option is refused with a usage line' "
  for app in $apps; do
    ! run_app \$app usage \$app.usage.out --stpes 3 && expect_grep 'usage: .*--steps N' \$app.usage.out || exit 1
  done
"

test_done
