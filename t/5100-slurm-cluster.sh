#!/bin/sh
# 5100-slurm-cluster.sh - a real Slurm (munged, slurmctld, a slurmd per node)
# on 5 fake nodes of the local test cluster: srun, salloc and sbatch run MPI
# jobs across the nodes, each node keeps its own node-local storage, and a
# killed node goes down in Slurm and serves again once revived.
. "$top_srcdir/t/test-lib.sh"

: "${SCR_TEST_TIMEOUT:=60}"
slurm_up 5 80
export SCR_CACHE_BASE=/scr-local/cache SCR_CNTL_BASE=/scr-local/cntl

# node_state NODE: its state as sinfo prints it (idle, alloc, down*, ...)
node_state() { sinfo -h -N -n "$1" -o %t; }
# wait_state NODE PATTERN: until the state matches (Slurm's own timeouts
# decide how long: SlurmdTimeout=5 in scr_cluster's slurm.conf)
wait_state() {
  for i in $(seq 600); do
    case $(node_state "$1") in $2) return 0 ;; esac
    sleep 0.1
  done
  echo "$1 stays $(node_state "$1"), not $2"; sinfo -N; return 1
}

test_expect_success 'every node is idle once slurm up returns' '
  sinfo -h -N -o "%N %t" >states && cat states &&
  test "$(grep -c " idle$" states)" = 5
'

test_expect_success 'srun runs tasks on the nodes, in their host names' '
  timeout "$SCR_TEST_TIMEOUT" srun -N 4 -n 8 hostname >out && sort out | uniq -c >counts &&
  test "$(grep -c "^ *2 node[0-3]$" counts)" = 4
'

test_expect_success 'an MPI job through srun (pmi2) spans the nodes and checkpoints to their caches' '
  (cd "$PREFIX" && SCR_PREFIX="$PREFIX" SCR_FLUSH=0 timeout "$SCR_TEST_TIMEOUT" \
     srun -N 4 -n 8 "$APP" --steps 2 --bytes 4096) >out 2>&1 &&
  expect_grep "^done: step 2$" out &&
  for n in 0 1 2 3; do
    ls "$SCR_CLUSTER_STATE"/nodes/node$n/local/cache/*/scr.*/scr.dataset.2 >/dev/null || exit 1
  done &&
  ! ls "$SCR_CLUSTER_STATE"/nodes/node4/local/cache >/dev/null 2>&1
'

test_expect_success 'salloc gives an allocation in which mpiexec -iface BRIDGE runs MPI' '
  timeout -k 5 "$SCR_TEST_TIMEOUT" salloc -N 2 sh -c "echo nodes=\$SLURM_JOB_NODELIST;
    mpiexec -iface scrbr80 -n 4 hostname" >out 2>&1 &&
  expect_grep "^nodes=node\[0-1\]$" out &&
  test "$(grep -c "^node0$" out)" = 2 && test "$(grep -c "^node1$" out)" = 2
'

test_expect_success 'sbatch runs its script on the first node of the allocation' '
  printf "#!/bin/sh\nhostname\nsrun hostname | sort\n" >job.sh &&
  id=$(sbatch --parsable -N 3 -o "$TRASH/job.out" job.sh) && test -n "$id" &&
  for i in $(seq 600); do
    squeue -h -j "$id" 2>/dev/null | grep -q . || break; sleep 0.1
  done &&
  printf "node0\nnode0\nnode1\nnode2\n" >expected && test_cmp expected job.out
'

test_expect_success 'a killed node is down in Slurm; revived, it is idle again' '
  cluster kill node3 && wait_state node3 "down*" &&
  cluster revive node3 && wait_state node3 idle
'

# ReturnToService=2 may give node1 back before the RESUME (a loaded machine
# misses SlurmdTimeout, and the node's registration returns it), which
# scontrol then refuses with 'Invalid node state specified'
test_expect_success 'scontrol marks a node down at once; an allocation with --no-kill survives it' '
  timeout -k 5 "$SCR_TEST_TIMEOUT" salloc -N 3 --no-kill sh -c "
    scontrol update NodeName=node1 State=DOWN Reason=test &&
    squeue -h -j \$SLURM_JOB_ID -o %N; srun -N 2 hostname | sort" >out 2>&1 &&
  expect_grep "^node\[0,2\]$" out && expect_grep "^node2$" out &&
  { scontrol update NodeName=node1 State=RESUME 2>/dev/null ||
    sinfo -h -n node1 -o %T | grep -qx idle; } && wait_state node1 idle
'

test_expect_success 'slurm down leaves no process on the nodes and no daemon of the cluster' '
  cluster slurm down && test -z "$(cluster ps)" &&
  ! grep -lsz "$SCR_CLUSTER_STATE/slurm" /proc/[0-9]*/cmdline &&
  cluster slurm up >/dev/null && eval "$(cluster slurm env)" && wait_state node0 idle
'

test_done
