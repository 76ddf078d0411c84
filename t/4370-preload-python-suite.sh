#!/bin/sh
# 4370-preload-python-suite.sh - a third-party file I/O test suite under the
# preload: CPython's own regression tests (test_os, test_shutil, test_tempfile,
# ...; Debian's libpython3.11-testsuite) run in one MPI rank on the local test
# cluster, once natively and once under libscr_preload.so for each of three
# rules that route the suite's temporary files (os_helper.TESTFN,
# '@test_<pid>_tmp...', and tempfile's) into node-local cache. Every test whose outcome
# differs from the native run is a call the layer does not answer as the C
# library does; the script fails on any that is not in the expected list
# below, and prints what it got with the test's traceback. Issue 20, "Tests".
# MPI_Init comes from MPICH through ctypes (t/helpers/pysuite-driver.py):
# Debian's python3-mpi4py is built for Open MPI, which the layer does not
# protect, and installing it makes Open MPI the default mpicc and mpirun.
#
# Environment:
#   SCR_PYSUITE_LONG=1        also the modules that are slow under the preload
#                             (test_io, test_bufio, test_mmap: files of
#                             gigabytes, sparse; see the list below)
#   SCR_PYSUITE_MODULES="a b" just these test modules
#   SCR_PYSUITE_RULES="narrow" just these rules (narrow, wide, tmp; also deep)
. "$top_srcdir/t/test-lib.sh"

python=/usr/bin/python3
driver="$top_srcdir/t/helpers/pysuite-driver.py"

preload_prelude "CPython's file I/O tests under the preload"

# Debian's python3 (the suite is of its version), not another python on PATH
if ! test -x $python || ! $python -c 'import test.support.os_helper, test.test_os' 2>/dev/null; then
  test_skip "CPython's file I/O tests under the preload" "no CPython test suite (Debian: libpython3.11-testsuite)"
  test_done; exit 0
fi
if ! $python -c 'import ctypes; ctypes.CDLL("libmpich.so.12")' 2>/dev/null; then
  test_skip "CPython's file I/O tests under the preload" "no MPICH library for the driver (libmpich12)"
  test_done; exit 0
fi

# the modules, in the order they run: about a minute for each run
modules="test_os test_shutil test_tempfile test_glob test_fileio test_posix test_pathlib test_posixpath
  test_genericpath test_file test_fileinput test_filecmp test_stat test_univnewlines"
# each of these makes files of gigabytes (sparse) or many of megabytes; under
# the narrow rule each close of one costs a CRC and a copy to the prefix
# directory, which fills the holes: 5 GiB written for test_mmap's largest,
# and minutes
test "${SCR_PYSUITE_LONG:-0}" = 1 && modules="$modules test_io test_bufio test_mmap"
modules=${SCR_PYSUITE_MODULES:-$modules}
rules=${SCR_PYSUITE_RULES:-narrow wide tmp}
: "${SCR_TEST_TIMEOUT:=1200}"

cluster_up 1 65
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl SCR_COPY_TYPE=SINGLE

# The rules, TYPE=CHECKPOINT all. narrow: the files the suite makes in its
# working directory, where TESTFN lands, with the default BOUNDARY=CLOSE: the
# first file is checkpoint 1 and, as the rule has no {step}, every later one
# is attached to it (kept in cache, copied to the prefix directory's .scr/ at
# each close). wide: the same names anywhere below the prefix (TMPDIR, the
# tests' own directories), with BOUNDARY=FINALIZE: all of them are files of
# one checkpoint in progress until MPI_Finalize. tmp: every file in and below
# tempfile's directories (mkdtemp's tmpXXXXXXXX, in TMPDIR or the working
# directory), where test_shutil and test_tempfile copy, move and remove
# trees. deep, only when SCR_PYSUITE_RULES names it, as its differences are
# not in the list: everything in and below a TESTFN directory, with a pattern
# that matches the directories themselves too (a few bugs of directories
# that match a rule; one of them, a name once a directory with cached files
# in it cannot be created as a file again, fails hundreds of tests after it).
rule_of() {
  case $1 in
    narrow) echo 'PRELOAD=work/@test_* TYPE=CHECKPOINT' ;;
    wide) echo 'PRELOAD=**/@test_* TYPE=CHECKPOINT BOUNDARY=FINALIZE' ;;
    tmp) echo 'PRELOAD=**/tmp*/** TYPE=CHECKPOINT' ;;
    deep) echo 'PRELOAD=**/@test_** TYPE=CHECKPOINT' ;;
  esac
}

# The differences this script accepts, 'RULES TEST-ID REASON' (RULES: the
# rules it differs under, narrow, wide, tmp, separated by commas). Each is a bug of the layer, or a limit its
# man page states (LIMITATIONS); the goal is an empty list.
expected() {
  cat <<'EOF'
# link(2) of a file of a rule without {step} or {rank} (an attached file,
# copied to the prefix directory's .scr/ at each close): EXDEV, as the
# layer makes hard links only between names of one checkpoint's own files
narrow test.test_os.LinkTests.test_link                                 link(TESTFN, TESTFN2): EXDEV
narrow test.test_os.LinkTests.test_link_bytes                           link(TESTFN, TESTFN2): EXDEV
narrow test.test_os.LinkTests.test_unicode_name                         link(TESTFN, TESTFN2): EXDEV
narrow test.test_posixpath.PosixCommonTest.test_samefile_on_link        link(TESTFN, TESTFN2): EXDEV
narrow test.test_posixpath.PosixCommonTest.test_samestat_on_link        link(TESTFN, TESTFN2): EXDEV
narrow test.test_genericpath.TestGenericTest.test_samefile_on_link      link(TESTFN, TESTFN2): EXDEV
narrow test.test_genericpath.TestGenericTest.test_samestat_on_link      link(TESTFN, TESTFN2): EXDEV
EOF
}

# suite NAME LD_PRELOAD|'' [TEST...]: the driver on node0 with the modules (or
# the tests named), in the prefix directory $TRASH/NAME (its .scrconf made
# before); per-test outcomes in $TRASH/NAME.out, unittest's log in
# NAME.out.log, stderr in NAME.err (with SCR_DEBUG=1: a line for each file a
# rule routed), seconds in NAME.time
suite() {
  name=$1 with=${2:-} start=$(date +%s)
  shift 2
  mkdir -p "$TRASH/$name" &&
    (cd "$TRASH/$name" && scr_cluster run --nodes node0 --ppn 1 --timeout "$SCR_TEST_TIMEOUT" -- \
      env ${with:+LD_PRELOAD=$with SCR_DEBUG=1} SCR_JOB_ID="t4370-$name" $python "$driver" "$TRASH/$name" \
      "$TRASH/$name.out" ${*:-$modules}) >"$TRASH/$name.stdout" 2>"$TRASH/$name.err" || {
        rc=$?
        echo "the suite ($name) ended with status $rc; the end of its error output and of its log:"
        tail -n 20 "$TRASH/$name.err"; tail -n 40 "$TRASH/$name.out.log" 2>/dev/null
        return $rc
      }
  echo $(($(date +%s) - start)) >"$TRASH/$name.time"
  test -s "$TRASH/$name.out" || { echo "no results in $TRASH/$name.out"; return 1; }
}

# differ NATIVE NAME RULE: 'RULE TEST-ID NATIVE->PRELOAD' for each test whose
# outcome under the preload (NAME.out) is not the native one (NATIVE.out; a
# test only one run has counts as 'none' in the other)
differ() {
  awk -v rule="$3" '
    FNR == NR { native[$2] = $1; next }
    { seen[$2] = 1; if (native[$2] != $1) printf "%s %s %s->%s\n", rule, $2, ($2 in native) ? native[$2] : "none", $1 }
    END { for (t in native) if (!(t in seen)) printf "%s %s %s->none\n", rule, t, native[t] }
  ' "$TRASH/$1.out" "$TRASH/$2.out" | sort
}

# unexpected NAME RULE: the differences that are not in the expected list,
# each with its traceback from the log; none: exit 0
unexpected() {
  differ native "$1" "$2" >"$TRASH/$1.diff"
  expected | awk -v rule="$2" '!/^#/ && NF && index("," $1 ",", "," rule ",") { print $2 }' >"$TRASH/$1.expected"
  awk 'FNR == NR { ok[$1] = 1; next } !($2 in ok)' "$TRASH/$1.expected" "$TRASH/$1.diff" >"$TRASH/$1.unexpected"
  # an expected entry that ran and gave the native outcome: said, not failed
  awk 'FILENAME ~ /diff$/ { d[$2] = 1; next } FILENAME ~ /out$/ { ran[$2] = 1; next }
       ($1 in ran) && !($1 in d) { print "# expected difference gone, remove it from the list: " $1 }' \
    "$TRASH/$1.diff" "$TRASH/native.out" "$TRASH/$1.expected" >"$TRASH/$1.gone"
  test -s "$TRASH/$1.unexpected" || return 0
  # one that the machine's load may have upset (a test's own time limit):
  # it runs again alone, natively and under the rule, and is let go when
  # both give the same outcome (not a class's setUpClass, which cannot run
  # alone)
  again=$(awk '$2 ~ /^test\.[A-Za-z0-9_.]+$/ { print substr($2, 6) }' "$TRASH/$1.unexpected")
  if test -n "$again"; then
    mkdir -p "$TRASH/$1.again" && cp "$TRASH/$1/.scrconf" "$TRASH/$1.again/" &&
      suite $1.native.again "" $again && suite $1.again "$preload" $again || return 1
    differ $1.native.again $1.again "$2" | awk 'FNR == NR { still[$2] = 1; next } !($2 ~ /^test\.[A-Za-z0-9_.]+$/) || ($2 in still)' \
      - "$TRASH/$1.unexpected" >"$TRASH/$1.unexpected.again"
    awk 'FNR == NR { still[$2] = 1; next } !($2 in still) { print "# differed once, not when run again alone: " $2 }' \
      "$TRASH/$1.unexpected.again" "$TRASH/$1.unexpected" >>"$TRASH/$1.gone"
    mv "$TRASH/$1.unexpected.again" "$TRASH/$1.unexpected"
    test -s "$TRASH/$1.unexpected" || return 0
  fi
  echo "$(wc -l <"$TRASH/$1.unexpected") test(s) differ from the native run under $(rule_of "$2"):"
  cat "$TRASH/$1.unexpected"
  while read -r r id change; do
    # unittest's heading: 'FAIL: test_x (test.mod.Class.test_x)', 'ERROR: setUpClass (test.mod.Class)'
    case $id in
      *:*) heading="${id##*:} (${id%:*})" ;;
      *) heading="${id##*.} ($id)" ;;
    esac
    echo "--- $id ($change), from $1.out.log:"
    awk -v h="$heading" '/^(ERROR|FAIL): / { p = index($0, h) > 0; n = 0 } /^======/ { p = 0 } /^-------/ && n++ { p = 0 } p' \
      "$TRASH/$1.out.log" | head -n 30
  done <"$TRASH/$1.unexpected"
  return 1
}

# summary NAME: a TAP comment on the run's figures
summary() {
  test -s "$TRASH/$1.out" || return 0
  printf '# %s: %d tests, %d ok, %d skipped, %s s' "$1" "$(wc -l <"$TRASH/$1.out")" "$(grep -c '^ok ' "$TRASH/$1.out")" \
    "$(grep -c '^skip ' "$TRASH/$1.out")" "$(cat "$TRASH/$1.time" 2>/dev/null)"
  test -f "$TRASH/$1.diff" && printf '; %d files routed, %d tests differ from the native run' \
    "$(grep -c ': routed$' "$TRASH/$1.err")" "$(wc -l <"$TRASH/$1.diff")"
  echo
  test -f "$TRASH/$1.diff" && sed 's/^/#   /' "$TRASH/$1.diff"
  cat "$TRASH/$1.gone" 2>/dev/null
}

test_expect_success "natively, in an MPI process on the cluster: the suite runs ($(echo $modules | wc -w) modules)" "
  suite native '' &&
  { ! grep -q '_FailedTest' native.out || { echo 'modules or tests that do not load:'; grep _FailedTest native.out; false; }; }
"
summary native

for rule in $rules; do
  conf=$(rule_of $rule)
  test_expect_success "under the preload, $conf: every test as natively, but for the expected list" "
    mkdir -p $rule && printf '%s\\n' '$conf' >$rule/.scrconf &&
    suite $rule '$preload' &&
    expect_grep 'preload summary: ' $rule.err && expect_grep ': routed\$' $rule.err &&
    unexpected $rule $rule
  "
  summary $rule
done

test_done
