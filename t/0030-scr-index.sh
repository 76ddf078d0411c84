#!/bin/sh
# 0030-scr-index.sh - scr_index lists an index written by t/helpers/index-write,
# changes the current dataset, drops entries, and refuses unknown names.
. "$top_srcdir/t/test-lib.sh"

TZ=UTC
export TZ
index_write="$top_builddir/t/helpers/index-write"
index_file=p/.scr/index.scr

# the row of dataset $1 in the listing $2, blanks squeezed
row() {
  awk -v id="$1" '$1 == id' "$2" | tr -s " "
}

test_expect_success 'setup: write an index with one dataset in every state' '
  mkdir p &&
  "$index_write" p current=ckpt.4 \
    id=2,name=ckpt.2,files=4,size=1536,fetched=1718453000 \
    id=3,name=ckpt.3,files=4,size=4096,flushed=1718450000,failed=1718452000 \
    id=4,name=ckpt.4,files=4,size=2097152,flushed=1718452800 \
    id=5,name=out.5,flags=OUTPUT,files=2,size=512,flushed=1718452900 \
    id=6,name=ckpt.6,complete=0,files=4,size=3221225472
'

test_expect_success '--list prints a header and the newest dataset first' '
  scr_index --prefix p --list >list &&
  head -n 1 list | tr -s " " >header &&
  echo "ID NAME CKPT FLAGS FILES SIZE SCHEME WHERE FLUSHED CUR STATE RESTART" | cmp - header &&
  sed -n 2p list | awk "{print \$1}" >first && echo 6 | cmp - first &&
  [ $(wc -l <list) -eq 6 ]
'

test_expect_success '--list shows checkpoint number, flags, files, sizes, place, flush time, current, state, restart' '
  scr_index --prefix p --list >list &&
  [ "$(row 4 list)" = " 4 ckpt.4 4 CKPT 4 2.0 MiB - prefix 2024-06-15 12:00:00 * ok first" ] &&
  [ "$(row 5 list)" = " 5 out.5 - OUTPUT 2 512 B - prefix 2024-06-15 12:01:40 ok no" ] &&
  [ "$(row 6 list)" = " 6 ckpt.6 6 CKPT 4 3.0 GiB - - - INCOMPLETE no" ] &&
  [ "$(row 3 list)" = " 3 ckpt.3 3 CKPT 4 4.0 KiB - prefix 2024-06-15 11:13:20 FAILED no" ] &&
  [ "$(row 2 list)" = " 2 ckpt.2 2 CKPT 4 1.5 KiB - prefix - FETCHED fallback" ]
'

test_expect_success '--list columns are aligned' '
  scr_index --prefix p --list >list &&
  awk "{ match(\$0, /^ *[^ ]+ +[^ ]+ +[^ ]+ +/); print RLENGTH }" list | sort -u >cols &&
  [ $(wc -l <cols) -eq 1 ]
'

test_expect_success '--json gives the same as valid JSON' '
  scr_index --prefix p --json >json &&
  python3 -m json.tool json >/dev/null &&
  python3 -c "
import json, sys
d = json.load(open(\"json\"))
assert d[\"current\"] == \"ckpt.4\", d[\"current\"]
by = {x[\"name\"]: x for x in d[\"datasets\"]}
assert [x[\"id\"] for x in d[\"datasets\"]] == [6, 5, 4, 3, 2]
assert by[\"ckpt.4\"][\"restart\"] == \"first\" and by[\"ckpt.4\"][\"current\"] and by[\"ckpt.4\"][\"bytes\"] == 2097152
assert by[\"ckpt.4\"][\"checkpoint\"] == 4 and by[\"ckpt.4\"][\"flushed\"] == 1718452800
assert by[\"ckpt.3\"][\"failed\"] and by[\"ckpt.3\"][\"restart\"] == \"no\"
assert not by[\"ckpt.6\"][\"complete\"] and by[\"out.5\"][\"flags\"] == [\"OUTPUT\"]
assert by[\"ckpt.2\"][\"fetched\"] and by[\"ckpt.2\"][\"restart\"] == \"fallback\"
assert by[\"ckpt.4\"][\"cache\"] is None and by[\"ckpt.4\"][\"scheme\"] is None
"
'

test_expect_success 'a dataset in cache (flush.scr) is listed with the scheme and host the event log gives' '
  cp -r p pc &&
  printf "%s\n" "2024-06-15T12:00:00 job=j event=INIT time=1718452000.000 ranks=8 nodes=4 host=n0 prefix=/x" \
    "2024-06-15T12:00:00 job=j event=ENCODE_START time=1718452001.000 dset=7 scheme=XOR files=8 bytes=64 write_seconds=0.1" \
    >pc/.scr/log &&
  "$top_builddir/t/helpers/kvtree-write" pc/.scr/flush.scr DSET.7.NAME=ckpt.7 DSET.7.LOCATION=CACHE &&
  scr_index --prefix pc >list && cat list &&
  [ "$(row 7 list)" = " 7 ckpt.7 - - - - XOR cache(n0+3) - CACHED first" ] &&
  [ "$(row 4 list | awk "{print \$NF}")" = fetch-next ] &&
  scr_index --prefix pc --json | python3 -m json.tool >json &&
  expect_grep "\"cache_nodes\": 4" json
'

test_expect_success 'the prefix defaults to SCR_PREFIX' '
  SCR_PREFIX="$TRASH/p" scr_index --list >list && expect_grep "ckpt.4" list
'

test_expect_success 'without SCR_PREFIX the prefix is the current directory' '
  (cd p && scr_index --list) >list && expect_grep "ckpt.4" list
'

test_expect_success '--current marks another complete checkpoint current' '
  scr_index --prefix p --current ckpt.2 >out &&
  scr_index --prefix p --list >list &&
  row 2 list | grep -q " \* " && ! row 4 list | grep -q " \* "
'

test_expect_success '--current of an unknown name fails and leaves the index untouched' '
  cp $index_file saved &&
  ! scr_index --prefix p --current nope 2>err &&
  expect_grep "no dataset named .nope." err && cmp $index_file saved
'

test_expect_success '--current of an incomplete checkpoint fails' '
  cp $index_file saved &&
  ! scr_index --prefix p --current ckpt.6 2>err &&
  expect_grep "incomplete" err && cmp $index_file saved
'

test_expect_success '--current of an output dataset fails' '
  ! scr_index --prefix p --current out.5 2>err && expect_grep "not a checkpoint" err
'

test_expect_success '--drop removes the dataset from the list but not its files' '
  mkdir p/ckpt.3 && echo data >p/ckpt.3/rank0 &&
  scr_index --prefix p --drop ckpt.3 >out &&
  scr_index --prefix p --list >list && [ -z "$(row 3 list)" ] &&
  test -f p/ckpt.3/rank0
'

test_expect_success '--drop of the current dataset clears CUR' '
  scr_index --prefix p --drop ckpt.2 >out &&
  scr_index --prefix p --list >list && ! grep -q " \* " list
'

test_expect_success '--drop of an unknown name fails and leaves the index untouched' '
  cp $index_file saved &&
  ! scr_index --prefix p --drop nope 2>err &&
  expect_grep "no dataset named .nope." err && cmp $index_file saved
'

test_expect_success 'a prefix without an index lists nothing and creates nothing' '
  mkdir empty && scr_index --prefix empty --list >out &&
  expect_grep "No datasets" out && test ! -e empty/.scr
'

test_expect_failure_exit 'two actions at once are refused' '
  scr_index --prefix p --list --drop ckpt.4
'

test_expect_success '--build of a dataset never flushed here says so, fails, and leaves the index untouched' '
  cp $index_file saved && ! scr_index --prefix p --build ckpt.6 2>err &&
  expect_grep "dataset 6 has no readable summary and rank2file map in .*scr.dataset.6: it was never flushed or scavenged there" err &&
  cmp $index_file saved
'

test_expect_success '--json: an incomplete dataset without redundancy data on the prefix has nothing to rebuild from' '
  scr_index --prefix p --json >json &&
  expect_grep "\"id\": 6, .*\"complete\": false, .*\"rebuild_from\": null" json
'

test_done
