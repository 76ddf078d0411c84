#!/bin/sh
# A checkpointing program restarted in the same job resumes from the newest
# checkpoint in cache, for 1, 2 and 4 ranks, with every byte as written.
. "$top_srcdir/t/test-lib.sh"

for n in 1 2 4; do
  test_expect_success "$n ranks: first run writes 3 checkpoints" "
    rm -rf '$PREFIX' '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' && mkdir -p '$PREFIX' &&
    SCR_FLUSH=0 scr_app $n --steps 3 --bytes 100000 >out 2>err &&
    expect_grep 'restart: none' out && expect_grep 'checkpoint: ckpt.3' out
  "
  test_expect_success "$n ranks: nothing reached the prefix with SCR_FLUSH=0" "
    test ! -e '$PREFIX/ckpt.3'
  "
  test_expect_success "$n ranks: second run restarts from ckpt.3 in cache" "
    SCR_FLUSH=0 scr_app $n --steps 5 --bytes 100000 >out 2>err &&
    expect_grep 'restart: ckpt.3' out && expect_grep 'checkpoint: ckpt.5' out &&
    expect_grep 'in cache' err
  "
done

test_expect_success 'a restart the application rejects falls back to the older checkpoint' "
  rm -rf '$PREFIX' '$SCR_CACHE_BASE' '$SCR_CNTL_BASE' && mkdir -p '$PREFIX' &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=2 scr_app 2 --steps 2 --bytes 4096 >out 2>err &&
  SCR_FLUSH=0 SCR_CACHE_SIZE=2 scr_app 2 --steps 2 --bytes 4096 --invalid-restart >out 2>err &&
  expect_grep 'restart rejected: ckpt.2' out && expect_grep 'restart: ckpt.1' out
"

test_done
