#!/bin/sh
# preload-passthrough.sh - what libscr_preload.so adds to calls on paths that no
# rule matches: t/perf/preload-passthrough.sh [ITERATIONS [ROUNDS]]
# Each run times the wrappers and libc's own functions in alternating blocks.
set -eu
builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}
iterations=${1:-40000}; rounds=${2:-3}
bench="$builddir/t/perf/preload-passthrough"
rules="$(cd "$(dirname "$0")" && pwd)/preload-rules.scrconf"
preload="$builddir/.libs/libscr_preload.so"
[ -x "$bench" ] && [ -f "$preload" ] ||
  { echo "build first (make check), and set top_builddir if the build is not in ./build" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir data && echo input >data/input.dat
# ten rules under this directory (the prefix), none matching data/ or /etc
cp "$rules" .scrconf

# one line per run: CONFIG PATHKIND, then W D R for open+close, stat, fopen+fclose
for round in $(seq "$rounds"); do
  for kind in outside absolute relative; do
    case $kind in
      outside) path=/etc/passwd ;;
      absolute) path="$work/data/input.dat" ;;
      relative) path=data/input.dat ;;
    esac
    for config in plain inert rules baseline mpi child; do
      case $config in
        plain) set -- $("$bench" "$path" "$iterations") ;;
        inert) set -- $(LD_PRELOAD="$preload" "$bench" "$path" "$iterations") ;;
        rules) set -- $(LD_PRELOAD="$preload" "$bench" --load-rules "$path" "$iterations") ;;
        # the screen without AVX2, where the processor has it (else as above)
        baseline) set -- $(LD_PRELOAD="$preload" "$bench" --load-rules --screen baseline "$path" "$iterations") ;;
        mpi) set -- $(LD_PRELOAD="$preload" "$bench" --load-rules-mpi "$path" "$iterations") ;;
        # a process a rank started: the rules loaded before main, as the
        # variable says (its process id is not this one's), none matching
        child) set -- $(SCR_PRELOAD_PARENT="1:1:0:-1:$work:$work/cntl:$work/cache:$work/.scrconf" \
                          LD_PRELOAD="$preload" "$bench" "$path" "$iterations") ;;
      esac
      echo "$config $kind $2 $3 $4 $6 $7 $8 ${10} ${11} ${12}"
    done
  done
done >runs.txt

awk -v rounds="$rounds" -v iterations="$iterations" '
  function median(key, i,   n, j, m, t, v) {
    n = count[key]
    for (j = 1; j <= n; j++) v[j] = ratio[key, i, j]
    for (j = 2; j <= n; j++) for (m = j; m > 1 && v[m] < v[m - 1]; m--) { t = v[m]; v[m] = v[m - 1]; v[m - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  {
    key = $1 " " $2; n = ++count[key]
    for (i = 3; i <= 11; i += 3) {
      if (!((key, i) in best) || $i < best[key, i]) best[key, i] = $i
      if (!((key, i + 1) in best) || $(i + 1) < best[key, i + 1]) best[key, i + 1] = $(i + 1)
      ratio[key, i, n] = $(i + 2)
    }
  }
  END {
    printf "preload pass-through, %d runs of %d calls per operation, wrapped and straight into libc in\n", rounds, iterations
    printf "alternating blocks: ns per call pair in the fastest block, wrapped / straight, and (in brackets)\n"
    printf "the median over runs of the median ratio of neighbouring blocks; loop: the five calls of one\n"
    printf "iteration together (open, close, stat, fopen, fclose), the ratios weighted by time\n"
    split("outside absolute relative", kinds, " ")
    split("/etc/passwd (outside the prefix),prefix/data/input.dat (absolute),data/input.dat (relative)", labels, ",")
    split("plain inert rules baseline mpi child", configs, " ")
    names["plain"] = "no preload (both libc)"; names["inert"] = "preload, no rules"
    names["rules"] = "preload, 10 rules, no match"; names["baseline"] = " the same, baseline screen"
    names["mpi"] = " + virtual dirs (as in MPI)"; names["child"] = "a rank s child, 10 rules"
    for (k = 1; k <= 3; k++) {
      printf "%s:\n  %-28s %23s %23s %23s %7s\n", labels[k], "", "open+close", "stat", "fopen+fclose", "loop"
      for (c = 1; c <= 6; c++) {
        key = configs[c] " " kinds[k]
        printf "  %-28s", names[configs[c]]
        weighted = 0; straight = 0
        for (i = 3; i <= 11; i += 3) {
          r = median(key, i)
          printf " %6.0f / %6.0f (%5.3f)", best[key, i], best[key, i + 1], r
          weighted += r * best[key, i + 1]; straight += best[key, i + 1]
        }
        printf "  (%5.3f)\n", weighted / straight
      }
    }
  }' runs.txt
