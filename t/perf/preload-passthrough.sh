#!/bin/sh
# preload-passthrough.sh - what libscr_preload.so adds to calls on paths that no
# rule matches: t/perf/preload-passthrough.sh [ITERATIONS [ROUNDS]]
# Each run times the wrappers and libc's own functions in alternating blocks.
set -eu
builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}
iterations=${1:-40000}; rounds=${2:-3}
bench="$builddir/t/perf/preload-passthrough"
preload="$builddir/.libs/libscr_preload.so"
[ -x "$bench" ] && [ -f "$preload" ] ||
  { echo "build first (make check), and set top_builddir if the build is not in ./build" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir data && echo input >data/input.dat
# ten rules under this directory (the prefix), none matching data/ or /etc
cat >.scrconf <<'RULES'
PRELOAD=ckpt.{step}/rank_{rank}.dat
PRELOAD=ckpt.{step}/meta.json
PRELOAD=ckpt.latest
PRELOAD=out/field_{step}_{rank}.h5 TYPE=OUTPUT
PRELOAD=restart/{step}/r{rank}.bin
PRELOAD=state.{step}.[0-9][0-9]*.ckpt
PRELOAD=dumps/**/chk_{step}.{rank}
PRELOAD=ckpt.{step}/rank_{rank}.idx
PRELOAD=ckpt.{step}/rank_{rank}.?
PRELOAD=snap_{step}/*.bin
RULES

# one line per run: CONFIG PATHKIND open(W D) stat(W D) fopen(W D)
for round in $(seq "$rounds"); do
  for kind in outside absolute relative; do
    case $kind in
      outside) path=/etc/passwd ;;
      absolute) path="$work/data/input.dat" ;;
      relative) path=data/input.dat ;;
    esac
    set -- $("$bench" "$path" "$iterations"); echo "plain $kind $2 $3 $5 $6 $8 $9"
    set -- $(LD_PRELOAD="$preload" "$bench" "$path" "$iterations"); echo "inert $kind $2 $3 $5 $6 $8 $9"
    set -- $(LD_PRELOAD="$preload" "$bench" --load-rules "$path" "$iterations"); echo "rules $kind $2 $3 $5 $6 $8 $9"
    set -- $(LD_PRELOAD="$preload" "$bench" --load-rules-mpi "$path" "$iterations"); echo "mpi $kind $2 $3 $5 $6 $8 $9"
  done
done >runs.txt

awk -v rounds="$rounds" -v iterations="$iterations" '
  { key = $1 " " $2; for (i = 3; i <= 8; i++) if (!((key, i) in best) || $i < best[key, i]) best[key, i] = $i }
  END {
    printf "preload pass-through: ns per call pair, wrapped / straight into libc (ratio),\n"
    printf "fastest blocks of %d runs of %d calls, both sides alternating in each run\n", rounds, iterations
    split("outside absolute relative", kinds, " ")
    split("/etc/passwd (outside the prefix),prefix/data/input.dat (absolute),data/input.dat (relative)", labels, ",")
    split("plain inert rules mpi", configs, " ")
    names["plain"] = "no preload (both libc)"; names["inert"] = "preload, no rules"
    names["rules"] = "preload, 10 rules, no match"; names["mpi"] = " + virtual dirs (as in MPI)"
    for (k = 1; k <= 3; k++) {
      printf "%s:\n  %-28s %22s %22s %22s\n", labels[k], "", "open+close", "stat", "fopen+fclose"
      for (c = 1; c <= 4; c++) {
        key = configs[c] " " kinds[k]
        printf "  %-28s", names[configs[c]]
        for (i = 3; i <= 8; i += 2) printf " %6.0f / %6.0f (%4.2f)", best[key, i], best[key, i + 1], best[key, i] / best[key, i + 1]
        printf "\n"
      }
    }
  }' runs.txt
