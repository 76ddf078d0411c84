# perf-preload.sh - sourced by the benchmarks that time a program under the
# preload against the same program natively on this machine, in one run.
# perf_preload_setup PROGRAM sets $build, $app (t/perf/PROGRAM of the build),
# $preload, $baseline (BASELINE=another build directory: its library, as a
# third side; empty when unset) and $base (a directory in /dev/shm with
# prefix/ and native/, removed at exit).
perf_preload_setup() {
  build=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}
  app="$build/t/perf/$1"
  preload="$build/.libs/libscr_preload.so"
  [ -x "$app" ] && [ -f "$preload" ] ||
    { echo "build first (make check), and set top_builddir if the build is not in ./build" >&2; exit 1; }
  baseline=
  if [ -n "$BASELINE" ]; then
    baseline="$BASELINE/.libs/libscr_preload.so"
    [ -f "$baseline" ] || { echo "no $baseline" >&2; exit 1; }
  fi
  base=$(mktemp -d /dev/shm/scr-perf.XXXXXX)
  trap 'rm -rf "$base"' EXIT
  mkdir -p "$base/prefix" "$base/native"
}
