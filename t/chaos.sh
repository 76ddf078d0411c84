# chaos.sh - the chaos harness's driver, sourced by t/4300-preload-chaos.sh: one
# scenario kills an unmodified program at random moments, loses nodes, relaunches.
#
# A scenario is an idiom (a program and its .scrconf rules) and a seed. From
# the seed a small generator of its own (an LCG, the same in every shell)
# decides, run after run, where the run is killed: at the N-th time a rank
# reaches a fault point of the library (SCR_FAULT_KILL=<where>:<n>[@rank]),
# by SIGKILL to every rank after a delay, or not at all; and, after a killed
# run, whether one node loses its cache (never a second loss before a run got
# past its restart: XOR covers one per set). The program is relaunched until
# a run completes (after chaos_cap killed runs, one runs without a kill).
#
# Checks: a completed run prints the native result; no run resumes from an
# older step than an earlier run, nor from one older than the newest
# checkpoint an earlier run said every rank had written (a lost checkpoint:
# see chaos_print_is_global); a run fails only by its kill
# (no other exit, no "error:" of the program, no "SCR ERROR"); no run hangs
# (its timeout). A failure prints the seed, the runs so far as
# SCR_CHAOS_REPLAY, and the failing run's output.
#
# Needs from the caller: $TRASH, $PREFIX, chaos_nodes (comma list of 4
# nodes, 2 ranks each), chaos_args (the programs' options), chaos_timeout, and
# chaos_native=1 for the harness's own check: the same loop without the
# preload (timed kills only), on the prefix directory shared by the nodes.

chaos_ex="$top_builddir/examples/preload"
chaos_app="$top_builddir/t/helpers/chaos-app"
chaos_preload="$preload"
chaos_idioms_all="ptr-inplace tmpdir-rename mkdir-tmp-rename h5-latest delete-old stdio_latest dirscan hdf5_perrank fortran_unformatted cxx_ofstream"
: "${chaos_cap:=8}"
: "${chaos_native:=0}"

# ---- the idioms

# chaos_command IDIOM: the program and its idiom's own options
chaos_command() {
  case "$1" in
    ptr-inplace|tmpdir-rename|mkdir-tmp-rename|h5-latest|delete-old) echo "$chaos_app --idiom $1" ;;
    cxx_ofstream) echo "$chaos_ex/cxx_ofstream --keep 2" ;;
    stdio_latest|dirscan|hdf5_perrank|fortran_unformatted) echo "$chaos_ex/$1" ;;
    *) return 1 ;;
  esac
}

# chaos_rules IDIOM: its .scrconf (man/scr_preload.7 RULES); the pointer
# files, without {step}, are attached to the newest checkpoint
chaos_rules() {
  case "$1" in
    ptr-inplace|delete-old)
      echo 'PRELOAD=ckpt/{step}/rank{rank}.dat TYPE=CHECKPOINT'
      echo 'PRELOAD=ckpt/LATEST TYPE=CHECKPOINT' ;;
    tmpdir-rename)
      echo 'PRELOAD=tmp.{step}/rank{rank}.dat TYPE=CHECKPOINT BOUNDARY=BARRIER'
      echo 'PRELOAD=step.{step}/rank{rank}.dat TYPE=CHECKPOINT BOUNDARY=BARRIER' ;;
    mkdir-tmp-rename) echo 'PRELOAD=chk/step_{step}_{rank}.bin TYPE=CHECKPOINT' ;;
    h5-latest)
      echo 'PRELOAD=d/{step}/r{rank}.h5 TYPE=CHECKPOINT'
      echo 'PRELOAD=d/LATEST* TYPE=CHECKPOINT' ;;
    stdio_latest)
      echo 'PRELOAD=ckpt.tmp.{rank} TYPE=CHECKPOINT BOUNDARY=BARRIER'
      echo 'PRELOAD=ckpt.{step}.{rank} TYPE=CHECKPOINT BOUNDARY=BARRIER'
      echo 'PRELOAD=ckpt.latest* TYPE=CHECKPOINT' ;;
    dirscan) echo 'PRELOAD=chk/state-{step}-{rank}.dat TYPE=CHECKPOINT' ;;
    hdf5_perrank) echo 'PRELOAD=h5ckpt/step_{step}_rank_{rank}.h5 TYPE=CHECKPOINT' ;;
    fortran_unformatted) echo 'PRELOAD=restart_{rank}_{step}.dat TYPE=CHECKPOINT' ;;
    cxx_ofstream) echo 'PRELOAD=ckpt_{step}/rank_{rank}.bin TYPE=CHECKPOINT' ;;
  esac
}

# chaos_opens IDIOM: files rank 0 creates per checkpoint (its pointer too)
chaos_opens() {
  case "$1" in
    ptr-inplace|delete-old|h5-latest|stdio_latest) echo 2 ;;
    *) echo 1 ;;
  esac
}

# chaos_print_is_global IDIOM: true when rank 0 says "checkpoint N written"
# only once every rank has written it. Natively, only where the program
# synchronizes before it says so (the others print after their own write);
# under the preload a checkpoint completes on every rank together before the
# close or barrier that ends it returns, so for every idiom
chaos_print_is_global() {
  [ "$chaos_native" != 1 ] && return 0
  case "$1" in
    ptr-inplace|tmpdir-rename|h5-latest|delete-old|stdio_latest) return 0 ;;
    *) return 1 ;;
  esac
}

# ---- the generator: chaos_rand N sets REPLY to 0..N-1 (never call it in a
# subshell: its state is the shell variable chaos_state)
chaos_seed() { chaos_state=$(( ($1 * 2654435761 + 12345) % 2147483648 )); chaos_rand 2; chaos_rand 2; }
chaos_rand() {
  chaos_state=$(( (chaos_state * 1103515245 + 12345) % 2147483648 ))
  REPLY=$(( (chaos_state / 65536) % $1 ))
}

# ---- one run

# chaos_launch RUN KILLSPEC: the idiom's program on the nodes; stdout in
# $TRASH/RUN.out, stderr RUN.err, status RUN.status. KILLSPEC is
# fault:<where>:<n>[@rank] (SCR_FAULT_KILL), timed:<ms> (SIGKILL to every rank
# after that long; RUN.killed says whether any was still there), or none.
chaos_launch() {
  cl_run=$1 cl_spec=$2 cl_tag="chaos-$$-$1"
  set -- -e "CHAOS_TAG=$cl_tag"
  case "$cl_spec" in fault:*) set -- "$@" -e "SCR_FAULT_KILL=${cl_spec#fault:}" ;; esac
  if [ "$chaos_native" = 1 ]; then set -- "$@" --; else set -- "$@" -- env LD_PRELOAD="$chaos_preload"; fi
  rm -f "$TRASH/$cl_run.killed"
  # the job's own time (not the wait for a kill that came too late): the
  # delays of timed kills are drawn from it
  (cl_start=$(date +%s%N)
   (cd "$PREFIX" && exec scr_cluster run --nodes "$chaos_nodes" --ppn 2 --timeout "$chaos_timeout" "$@" \
     $(chaos_command "$chaos_idiom") $chaos_args) >"$TRASH/$cl_run.out" 2>"$TRASH/$cl_run.err"
   echo $? >"$TRASH/$cl_run.status"
   cl_end=$(date +%s%N)
   echo $(( (cl_end - cl_start) / 1000000 )) >"$TRASH/$cl_run.ms") &
  cl_pid=$!
  case "$cl_spec" in
    timed:*)
      sleep "$(awk -v ms="${cl_spec#timed:}" 'BEGIN { printf "%.3f", ms / 1000 }')"
      # every rank at once (a node's power going), as far as a shell can:
      # the ranks are the processes whose environment has the tag; if none
      # started yet, they are waited for, as long as the job runs
      while kill -0 "$cl_pid" 2>/dev/null; do
        cl_pids=$(grep -lsz "^CHAOS_TAG=$cl_tag\$" /proc/[0-9]*/environ | cut -d/ -f3)
        if [ -n "$cl_pids" ]; then
          kill -9 $cl_pids 2>/dev/null && echo "$cl_pids" >"$TRASH/$cl_run.killed"
          break
        fi
        sleep 0.05
      done ;;
  esac
  wait "$cl_pid"
}

# chaos_start_of RUN: the step the run resumed from (0: from scratch), or nothing
chaos_start_of() {
  sed -n -e 's/^resumed from step \([0-9]*\)$/\1/p' -e 's/^starting from step 0$/0/p' "$TRASH/$1.out" | head -n 1
}

# chaos_newest_written RUN: the newest "checkpoint N written" of the run, or 0
chaos_newest_written() {
  sed -n 's/^checkpoint \([0-9]*\) written$/\1/p' "$TRASH/$1.out" | sort -n | tail -n 1 | grep . || echo 0
}

chaos_result_of() {
  test "$(grep -c '^result: ' "$1")" = 1 && sed -n 's/^result: \([0-9a-f]\{16\}\)$/\1/p' "$1"
}

# chaos_show RUN: what a failing run printed, without hydra's noise
chaos_show() {
  echo "--- $1: exit status $(cat "$TRASH/$1.status"), $(cat "$TRASH/$1.ms") ms; stdout:"
  grep -v '^=\|^$' "$TRASH/$1.out" | tail -n 12
  echo "--- $1: stderr (last 20 lines but hydra's; all in $TRASH/$1.err):"
  grep -v '^\[proxy:\|^\[mpiexec@\|^=\|^$\|^BAD TERMINATION\|^PID \|^RUNNING AT\|^EXIT CODE\|^CLEANING UP\|^YOUR APPLICATION' \
    "$TRASH/$1.err" | tail -n 20
}

# ---- the native reference

# chaos_reference IDIOM: the result of 8 ranks on this machine without the
# preload, without a kill (once per idiom); empty and status 1 when none
chaos_reference() {
  cr_dir="$TRASH/native.$1"
  if [ ! -s "$cr_dir.result" ]; then
    rm -rf "$cr_dir" && mkdir -p "$cr_dir" &&
      (cd "$cr_dir" && mpirun 8 $(chaos_command "$1") $chaos_args) >"$cr_dir.out" 2>&1
    chaos_result_of "$cr_dir.out" >"$cr_dir.result"
  fi
  cat "$cr_dir.result"
  test -s "$cr_dir.result"
}

# ---- the kill of a run

# chaos_pick_kill: REPLY is the next run's KILLSPEC, from the generator
# (cs_* are the scenario's state: the step it resumed from last, whether a
# loss is outstanding, the runs so far)
chaos_pick_kill() {
  if [ "$cs_runs" -ge "$chaos_cap" ]; then REPLY=none; return; fi
  # checkpoints still to come from where the last run resumed
  cpk_left=$(( (chaos_steps - cs_resume) / chaos_every ))
  [ "$cpk_left" -ge 1 ] || cpk_left=1
  chaos_rand 100
  if [ "$chaos_native" = 1 ]; then
    # no library, no fault points: the kills are timed
    if [ "$REPLY" -lt 85 ] || [ "$cs_runs" = 1 ]; then chaos_rand "$chaos_timed_max"; REPLY=timed:$((REPLY + 200)); else REPLY=none; fi
    return
  fi
  # (a scenario whose first run is not killed tests nothing)
  if [ "$REPLY" -lt 10 ] && [ "$cs_runs" -gt 1 ]; then REPLY=none; return; fi
  if [ "$REPLY" -lt 35 ]; then chaos_rand "$chaos_timed_max"; REPLY=timed:$((REPLY + 200)); return; fi
  # a fault point: rebuild only where a lost node is to be rebuilt, flush
  # only where there are flushes (and then as often as the others: both
  # are rare moments, which timed kills seldom hit)
  while :; do
    chaos_rand 13
    case $REPLY in
      0|1) cpk_where=open cpk_n=$(( cpk_left * $(chaos_opens "$chaos_idiom") )) ;;
      2|3) cpk_where=close cpk_n=$(( cpk_left * $(chaos_opens "$chaos_idiom") )) ;;
      4|5|6) cpk_where=complete cpk_n=$cpk_left ;;
      7|8) cpk_where=encode cpk_n=$cpk_left ;;
      9|10) [ "$chaos_flush" -gt 0 ] || continue
         cpk_where=flush cpk_n=$(( (cpk_left + chaos_flush - 1) / chaos_flush )) ;;
      11|12) [ "$cs_lost" = 1 ] || continue
          cpk_where=rebuild cpk_n=1 ;;
    esac
    break
  done
  chaos_rand "$cpk_n"
  cpk_spec="$cpk_where:$((REPLY + 1))"
  # on one rank (the others die with the job), or on all that get there
  chaos_rand 2
  if [ "$REPLY" = 0 ]; then chaos_rand 8; cpk_spec="$cpk_spec@$REPLY"; fi
  REPLY=fault:$cpk_spec
}

# chaos_pick_loss: REPLY is the node to lose after a killed run, or nothing
chaos_pick_loss() {
  chaos_rand 100
  if [ "$cs_lost" = 0 ] && [ "$REPLY" -lt "$chaos_loss_percent" ]; then chaos_rand 4; REPLY=node$REPLY; else REPLY=; fi
}

# ---- a scenario

# chaos_scenario IDIOM SEED FLUSH: runs until one completes; 0 when every
# check holds. Figures (one line, KEY=VALUE) in $TRASH/figures.IDIOM.SEED.
# SCR_CHAOS_REPLAY (runs as a failure prints them) replaces the generator.
chaos_scenario() {
  chaos_idiom=$1 chaos_flush=$3
  cs_name="$1.$2" cs_runs=0 cs_resume=0 cs_written=0 cs_lost=0 cs_seq='' cs_fail=''
  cs_kills=0 cs_faults=0 cs_timed=0 cs_losses=0 cs_restores=0 cs_wrong=0 cs_hangs=0 cs_done=0
  chaos_seed "$2"
  cs_replay=${SCR_CHAOS_REPLAY:-}
  export SCR_FLUSH=$chaos_flush
  cs_ref=$(chaos_reference "$1") || cs_fail="no native result for $1 (see $TRASH/native.$1.out)"
  # a fresh allocation: empty caches, an empty prefix directory with the rules
  if [ -z "$cs_fail" ]; then
    cluster_renew $(echo "$chaos_nodes" | tr , ' ') >/dev/null || cs_fail="cannot renew the nodes"
    rm -rf "$PREFIX" && mkdir -p "$PREFIX" && chaos_rules "$1" >"$PREFIX/.scrconf"
  fi
  while [ -z "$cs_fail" ] && [ "$cs_done" = 0 ]; do
    cs_runs=$((cs_runs + 1))
    cs_run="$cs_name.run$cs_runs"
    if [ -n "$cs_replay" ]; then
      # run<N>=<killspec>[+lose:<node>] ...
      cs_item=${cs_replay%% *}
      cs_replay=${cs_replay#"$cs_item"}; cs_replay=${cs_replay# }
      cs_item=${cs_item#*=}
      cs_spec=${cs_item%%+*}
      case "$cs_item" in *+lose:*) cs_loss=${cs_item#*+lose:} ;; *) cs_loss= ;; esac
      [ -n "$cs_spec" ] || cs_spec=none
    else
      chaos_pick_kill; cs_spec=$REPLY
      chaos_pick_loss; cs_loss=$REPLY
    fi
    chaos_launch "$cs_run" "$cs_spec"
    st=$(cat "$TRASH/$cs_run.status")
    start=$(chaos_start_of "$cs_run")
    written=$(chaos_newest_written "$cs_run")
    killed=0
    case "$cs_spec" in
      fault:*) grep -q '^SCR FAULT: ' "$TRASH/$cs_run.err" && killed=1 ;;
      timed:*) test -s "$TRASH/$cs_run.killed" && killed=1 ;;
    esac
    # the run's checks, the first that fails is the scenario's failure
    if [ "$st" = 124 ]; then
      cs_hangs=$((cs_hangs + 1)); cs_fail="$cs_run hung (no end within $chaos_timeout s)"
    elif grep -q '^SCR ERROR' "$TRASH/$cs_run.err"; then
      cs_fail="$cs_run: SCR ERROR: $(grep -m 1 '^SCR ERROR' "$TRASH/$cs_run.err" | cut -c1-300)"
    elif grep -q '^error: ' "$TRASH/$cs_run.out" "$TRASH/$cs_run.err"; then
      cs_fail="$cs_run: the program failed: $(grep -h -m 1 '^error: ' "$TRASH/$cs_run.out" "$TRASH/$cs_run.err" | head -n 1 | cut -c1-300)"
    elif [ -n "$start" ] && [ "$start" -lt "$cs_resume" ]; then
      cs_fail="$cs_run resumed from step $start, older than step $cs_resume an earlier run resumed from"
    elif [ -n "$start" ] && [ "$start" -lt "$cs_written" ] && chaos_print_is_global "$chaos_idiom"; then
      cs_fail="$cs_run resumed from step $start, but checkpoint $cs_written had been written on every rank (lost)"
    elif [ "$st" = 0 ] || grep -q '^result: ' "$TRASH/$cs_run.out"; then
      # (a run killed inside MPI_Finalize has printed its result too)
      [ "$st" = 0 ] && cs_done=1
      r=$(chaos_result_of "$TRASH/$cs_run.out")
      if [ "$r" != "$cs_ref" ]; then
        cs_wrong=$((cs_wrong + 1)); cs_fail="$cs_run: result '$r', the native result is '$cs_ref'"
      elif [ "$st" != 0 ] && [ "$killed" = 0 ]; then
        cs_fail="$cs_run ended with status $st without its kill ($cs_spec)"
      fi
      [ "$st" = 0 ] && cat "$TRASH/$cs_run.ms" >>"$TRASH/durations.$chaos_idiom"
    elif [ "$killed" = 0 ]; then
      cs_fail="$cs_run ended with status $st without its kill ($cs_spec)"
    fi
    # what happened, for the figures and for a replay
    [ -n "$start" ] && [ "$start" -gt 0 ] && cs_restores=$((cs_restores + 1))
    [ -n "$start" ] && [ "$start" -gt "$cs_resume" ] && cs_resume=$start
    [ "$written" -gt "$cs_written" ] && cs_written=$written
    # past its restart: the lost node's part is rebuilt
    [ -n "$start" ] && cs_lost=0
    cs_item="run$cs_runs=$cs_spec"
    if [ "$killed" = 1 ]; then
      cs_kills=$((cs_kills + 1))
      case "$cs_spec" in fault:*) cs_faults=$((cs_faults + 1)) ;; *) cs_timed=$((cs_timed + 1)) ;; esac
      if [ -z "$cs_fail" ] && [ "$cs_done" = 0 ] && [ -n "$cs_loss" ] && [ "$cs_lost" = 0 ]; then
        cluster_renew "$cs_loss" >/dev/null || cs_fail="cannot renew $cs_loss"
        cs_lost=1 cs_losses=$((cs_losses + 1)) cs_item="$cs_item+lose:$cs_loss"
      fi
    fi
    cs_seq="${cs_seq:+$cs_seq }$cs_item"
    printf '%s: %s (%s ms, status %s%s%s%s)\n' "$cs_name" "$cs_item" "$(cat "$TRASH/$cs_run.ms")" "$st" \
      "${start:+, resumed from $start}" "$( [ "$killed" = 1 ] && echo ', killed')" \
      "$( [ "$cs_done" = 1 ] && echo ', completed')" >>"$TRASH/chaos.log"
    if [ -z "$cs_fail" ] && [ "$cs_done" = 0 ] && [ -n "${SCR_CHAOS_REPLAY:-}" ] && [ -z "$cs_replay" ] &&
       [ "$cs_runs" -ge 16 ]; then
      cs_fail="the replay ended and the program did not complete"
    fi
  done
  echo "runs=$cs_runs kills=$cs_kills faults=$cs_faults timed=$cs_timed losses=$cs_losses restores=$cs_restores" \
    "wrong=$cs_wrong hangs=$cs_hangs failed=$( [ -n "$cs_fail" ] && echo 1 || echo 0)" \
    "seq='$cs_seq'" >"$TRASH/figures.$cs_name"
  if [ -n "$cs_fail" ]; then
    echo "FAILED: $cs_fail"
    echo "scenario: idiom $1, seed $2, SCR_FLUSH=$chaos_flush${chaos_native:+ (native=$chaos_native)}"
    echo "reproduce: SCR_CHAOS_ONLY=$1:$2:$chaos_flush SCR_CHAOS_REPLAY='$cs_seq'" \
      "make -C build check TESTS=t/4300-preload-chaos.sh"
    chaos_show "$cs_run"
    return 1
  fi
  return 0
}
