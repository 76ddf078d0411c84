#!/bin/sh
# SCR_Route_file: output paths must be under SCR_PREFIX and keep their relative paths;
# restart finds only files of the dataset; outside both the name comes back as given.
. "$top_srcdir/t/test-lib.sh"

test_expect_success 'a file outside the prefix directory is refused during output' "
  mkdir -p '$TRASH/outside' &&
  scr_app 2 --steps 1 --bytes 64 --path '$TRASH/outside/ckpt.{step}.{rank}' >out 2>err &&
  expect_grep 'route $TRASH/outside/ckpt.1.0: failed' out &&
  expect_grep 'not inside the prefix directory' err &&
  ! grep -q 'checkpoint: ckpt.1' out && test -z \"\$(ls -A '$TRASH/outside')\"
"

test_expect_success 'an absolute path under the prefix lands at the same place' "
  wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 1 --bytes 4096 --path '$PREFIX/abs/c{step}/r{rank}' >out 2>err &&
  '$APP' --check '$PREFIX/abs/c1/r0' 1 0 4096 && '$APP' --check '$PREFIX/abs/c1/r1' 1 1 4096
"

test_expect_success 'files in subdirectories keep their relative paths when flushed' "
  wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 2 --bytes 4096 --path 'sub/dir/ckpt.{step}/r{rank}.dat' >out 2>err &&
  for s in 1 2; do for r in 0 1; do
    '$APP' --check '$PREFIX/sub/dir/ckpt.'\$s/r\$r.dat \$s \$r 4096 || exit 1
  done; done
"

test_expect_success 'fetched from the prefix, they are found again under their names' "
  wipe_cache &&
  SCR_FLUSH=1 scr_app 2 --steps 2 --bytes 4096 --path 'sub/dir/ckpt.{step}/r{rank}.dat' >out 2>err &&
  expect_grep 'restart: ckpt.2' out
"

test_expect_success 'during restart a file that is not in the dataset is not found' "
  SCR_FLUSH=1 scr_app 2 --steps 2 --bytes 4096 --path 'sub/dir/ckpt.{step}/r{rank}.dat' \
    --restart-route 'sub/dir/ckpt.{step}/other{rank}.dat' >out 2>err &&
  expect_grep 'restart route sub/dir/ckpt.{step}/other{rank}.dat: failed' out &&
  expect_grep 'restart: ckpt.2' out
"

test_expect_success 'during restart a bare file name finds the file of that name (LLNL compatibility)' "
  SCR_FLUSH=1 scr_app 2 --steps 2 --bytes 4096 --path 'sub/dir/ckpt.{step}/r{rank}.dat' \
    --restart-route 'r{rank}.dat' >out 2>err &&
  expect_grep 'restart route r{rank}.dat: ok' out
"

test_expect_success 'outside output and restart the name comes back verbatim' "
  scr_app 1 --steps 0 --ignore-restart --route-idle 'some/../rel/file' >out 2>err &&
  expect_grep '^idle route some/../rel/file: some/../rel/file\$' out
"

test_done
