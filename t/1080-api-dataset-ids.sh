#!/bin/sh
# Dataset ids and checkpoint ids count up across runs, from what the cache
# remembers and, when the cache is gone, from what the index remembers.
. "$top_srcdir/t/test-lib.sh"

# "ID CKPT" of the dataset named $1 in rank 0's filemap
filemap_ids() {
  scr_print "$SCR_CNTL_BASE"/*/*/filemap_0.scr |
    awk -v n="$1" '$1=="ID"{id=$3} $1=="NAME"&&$3==n{want=1} $1=="CKPT"&&want{print id, $3; exit}'
}

# id of the dataset named $1 in scr_index --list
index_id() {
  scr_index --prefix "$PREFIX" --list | awk -v n="$1" '$2==n{print $1}'
}

test_expect_success 'first run: four datasets, the last one checkpoint 3 with id 4' "
  SCR_FLUSH=0 scr_app 2 --steps 3 --output-every 2 --bytes 64 >out 2>err &&
  test \"\$(filemap_ids ckpt.3)\" = '4 3'
"

test_expect_success 'second run continues the numbering from the cache' "
  SCR_FLUSH=0 scr_app 2 --steps 5 --output-every 2 --bytes 64 >out 2>err &&
  expect_grep 'restart: ckpt.3' out &&
  test \"\$(filemap_ids ckpt.5)\" = '7 5' &&
  test \"\$(index_id out.2)\" = 3 && test \"\$(index_id out.4)\" = 6
"

test_expect_success 'with the cache lost, the numbering continues from the index' "
  wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 1 --bytes 64 >out 2>err &&
  expect_grep 'restart: none' out &&
  test \"\$(index_id ckpt.1)\" = 7
"

test_expect_success 'a run restarting from the prefix numbers its checkpoints after the fetched one' "
  wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 3 --bytes 64 >out 2>err &&
  expect_grep 'restart: ckpt.1' out &&
  test \"\$(filemap_ids ckpt.3)\" = '9 3'
"

test_done
