#!/bin/bash
# t/fuzz/build.sh - builds the libFuzzer targets (t/fuzz/fuzz-*.c) with clang,
# against the library's MPI-free sources compiled with coverage and sanitizers.
# usage: t/fuzz/build.sh BUILDDIR OUTDIR
#   BUILDDIR  a configured build directory (its config.h is used)
#   OUTDIR    where the objects and the fuzz-* programs go
# Environment: CLANG (default: clang, else clang-14), FUZZ_CFLAGS (extra).
# Exits 77 when no clang with libFuzzer is found, so that callers can skip.
set -eu

srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
builddir=${1:?usage: build.sh BUILDDIR OUTDIR}
outdir=${2:?usage: build.sh BUILDDIR OUTDIR}
builddir=$(cd "$builddir" && pwd)
[ -f "$builddir/config.h" ] || { echo "build.sh: $builddir/config.h not found (run configure)" >&2; exit 1; }
mkdir -p "$outdir/obj"
outdir=$(cd "$outdir" && pwd)

clang=${CLANG:-}
if [ -z "$clang" ]; then
  for c in clang clang-14; do
    if command -v "$c" >/dev/null 2>&1; then clang=$c; break; fi
  done
fi
[ -n "$clang" ] || { echo "build.sh: no clang found (Debian: apt-get install clang libclang-rt-14-dev)" >&2; exit 77; }

# libFuzzer is in libclang-rt-14-dev, apart from clang itself: ask for it
# with a program of one line rather than trusting the package name
probe="$outdir/obj/probe"
printf 'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n) { (void) d; (void) n; return 0; }\n' \
  >"$probe.c"
if ! "$clang" -fsanitize=fuzzer,address,undefined -o "$probe" "$probe.c" >"$probe.log" 2>&1; then
  echo "build.sh: $clang cannot link libFuzzer with ASan and UBSan (libclang-rt-14-dev missing?):" >&2
  sed 's/^/    /' "$probe.log" >&2
  exit 77
fi

# the library's code gets coverage (fuzzer-no-link); only the targets get
# libFuzzer's main. UBSan findings abort, so the fuzzer counts them as crashes.
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
cflags="-g -O1 -fno-omit-frame-pointer -Wall -Wextra $san ${FUZZ_CFLAGS:-}"
# the preload headers declare MPI types (only the header is needed: nothing
# here calls MPI)
mpi_cflags=$(sed -n 's/^MPI_CFLAGS = //p' "$builddir/Makefile")
cppflags="$mpi_cflags -I$builddir -I$srcdir/include -I$srcdir/src/base -I$srcdir/src/config -I$srcdir/src/formats
  -I$srcdir/wrappers -DSCR_CONFIG_FILE=\"/nonexistent/scr.conf\""

# libscr_base.la and libscr_preload_core.la of Makefile.am, less the MPI parts
sources="src/base/scr_error.c src/base/scr_log.c src/base/scr_kvtree.c src/base/scr_kvtree_file.c
  src/base/scr_io.c src/base/scr_path.c src/base/scr_fault.c src/base/scr_env.c
  src/formats/scr_dataset.c src/formats/scr_filemap.c src/formats/scr_filemap_journal.c
  src/formats/scr_summary_file.c src/formats/scr_flush_file.c src/formats/scr_transfer_file.c
  src/formats/scr_prefix_dir.c src/formats/scr_halt_file.c src/formats/scr_index_file.c src/formats/scr_publish.c
  src/config/scr_config.c src/config/scr_param.c src/config/scr_param_table.c
  wrappers/scr_preload_hot.c wrappers/scr_preload_rules.c wrappers/scr_preload_match.c
  wrappers/scr_preload_screen.c wrappers/scr_preload_path.c wrappers/scr_preload_real.c
  wrappers/scr_preload_fd.c"

objects=""
for s in $sources; do
  o="$outdir/obj/$(basename "$s" .c).o"
  # rebuilt when the source or config.h is newer: repeated runs stay quick
  if [ ! -e "$o" ] || [ "$srcdir/$s" -nt "$o" ] || [ "$builddir/config.h" -nt "$o" ]; then
    # shellcheck disable=SC2086  # the flag lists are meant to split
    "$clang" $cflags -fsanitize=fuzzer-no-link $cppflags -c -o "$o" "$srcdir/$s"
  fi
  objects="$objects $o"
done
rm -f "$outdir/obj/libscrfuzz.a"
# shellcheck disable=SC2086
ar rcs "$outdir/obj/libscrfuzz.a" $objects

# the libraries libscr_base.la links, as configure found them
libs=$(sed -n 's/^ISAL_LIBS = //p; s/^ZLIB_LIBS = //p' "$builddir/Makefile" | tr '\n' ' ')
for t in "$srcdir"/t/fuzz/fuzz-*.c; do
  name=$(basename "$t" .c)
  # shellcheck disable=SC2086
  "$clang" $cflags -fsanitize=fuzzer $cppflags -o "$outdir/$name" "$t" "$outdir/obj/libscrfuzz.a" \
    $libs -ldl -lpthread
done
echo "build.sh: built $(cd "$srcdir/t/fuzz" && ls fuzz-*.c | sed 's/\.c$//' | tr '\n' ' ')in $outdir"
