#!/bin/sh
# 0070-fault-matrix.sh - t/FAULT-MATRIX.md cannot drift from the tests: every row names
# a script that exists and is in Makefile.am, with a test of exactly that title.
. "$top_srcdir/t/test-lib.sh"

matrix="$top_srcdir/t/FAULT-MATRIX.md"
tab=$(printf '\t')

# the rows as NUMBER<tab>SCRIPT<tab>TITLE; a row whose last cell is not
# `t/NNNN-name.sh: title` is left out here and caught by the count below
sed -n 's/^| *\([0-9][0-9]*\) |.*| `\(t\/[^`:]*\.sh\): \([^`]*\)` |$/\1\t\2\t\3/p' "$matrix" >"$TRASH/rows"
all_rows=$(grep -c '^| *[0-9][0-9]* |' "$matrix")
rows=$(wc -l <"$TRASH/rows")

test_expect_success 'every row ends in a test named as `t/NNNN-name.sh: title`' "
  test $all_rows = $rows || { grep '^| *[0-9][0-9]* |' '$matrix' | grep -v '| \`t/[^\`:]*\.sh: [^\`]*\` |\$'; false; }
"

# numbers 1..N in order: a row deleted or pasted twice shows
test_expect_success 'the rows are numbered 1 to N in order, at least 40 of them' "
  cut -f1 rows >numbers && seq 1 $rows >expect && test_cmp expect numbers && test $rows -ge 40
"

# check_row SCRIPT TITLE: the script exists, Makefile.am lists it (in TESTS,
# or in a variable TESTS takes in), and a test_expect_success has exactly
# that title, in single or double quotes as the script writes it
check_row() {
  test -f "$top_srcdir/$1" || { echo "no such script: $1"; return 1; }
  grep -qF "$1" "$top_srcdir/Makefile.am" || { echo "$1 is not in Makefile.am"; return 1; }
  grep -qF -e "test_expect_success '$2'" -e "test_expect_success \"$2\"" "$top_srcdir/$1" ||
    { echo "$1 has no test_expect_success titled: $2"; return 1; }
}

# fd 4: test_expect_success gives the test fd 3, and its commands stdin
while IFS="$tab" read -r row_number row_script row_title <&4; do
  test_expect_success "row $row_number: $row_script has the test it names" 'check_row "$row_script" "$row_title"'
done 4<"$TRASH/rows"

sections=$(grep -c '^## ' "$matrix")
tests=$(cut -f2,3 "$TRASH/rows" | sort -u | wc -l)
scripts=$(cut -f2 "$TRASH/rows" | sort -u | wc -l)
gaps=$(sed -n '/^## Gaps/,$p' "$matrix" | grep -c '^[0-9][0-9]*\. ')
echo "# fault matrix: $rows rows in $((sections - 1)) sections, backed by $tests distinct tests in $scripts scripts; $gaps gaps listed"

test_done
