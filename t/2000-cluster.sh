#!/bin/sh
# scr_cluster: a simulated cluster of namespaces on this machine. Nodes have
# their own host names and private node-local storage, MPI jobs span them in
# node order, a killed node ends the job and leaves nothing behind, a revived
# node is empty, and "down" removes every namespace, link and mount.
. "$top_srcdir/t/test-lib.sh"

# needs root and namespaces; skip the whole script otherwise
skip_all() { echo "1..0 # SKIP $*"; test_failed=0; exit 0; }
[ "$(id -u)" -eq 0 ] || skip_all "scr_cluster needs root"
for tool in ip nsenter unshare setsid; do
  command -v $tool >/dev/null 2>&1 || skip_all "$tool not installed"
done
unshare --net --uts --mount --pid --fork true 2>/dev/null ||
  skip_all "this kernel or container does not allow namespaces"

cluster_lock
# a cluster of its own: number 20 (bridge scrbr20, 10.77.20.0/24), state here
export SCR_CLUSTER_ID=20 SCR_CLUSTER_STATE="$TRASH/cluster"
export SCR_CACHE_BASE=/scr-local SCR_CNTL_BASE=/scr-local
CL="scr_cluster"
HOSTAPP="$top_builddir/t/helpers/mpi-hostname"
test_cleanup_hook='scr_cluster down >/dev/null 2>&1'
[ -e /scr-local ] && echo yes >"$TRASH/mountpoint-existed"
scr_cluster down >/dev/null 2>&1    # leftovers of an interrupted run

# the ranks of a job, "rank R of N on HOST" lines, in rank order
job_hosts() { grep '^rank ' "$1" | sed 's/.* on //' | tr '\n' ' '; }

test_expect_success 'up 4 creates four nodes with their own host names' '
  $CL up 4 >out &&
  ip netns list | grep -q "^scr20node3" && ip link show scrbr20 >/dev/null &&
  $CL status >status && cat status &&
  test "$(grep -c " up " status)" = 4 &&
  for k in 0 1 2 3; do
    test "$($CL exec node$k -- hostname)" = node$k || exit 1
  done
'

test_expect_success 'a job with 2 ranks per node spans 4 hosts in rank order' '
  $CL run --ppn 2 --timeout 60 -- "$HOSTAPP" --touch /scr-local >out 2>err &&
  cat out && expect_grep "allreduce ok" out &&
  test "$(job_hosts out)" = "node0 node0 node1 node1 node2 node2 node3 node3 " &&
  test "$(grep "^rank " out | sed "s/ on .*//" | tr "\n" " ")" = \
    "rank 0 of 8 rank 1 of 8 rank 2 of 8 rank 3 of 8 rank 4 of 8 rank 5 of 8 rank 6 of 8 rank 7 of 8 "
'

test_expect_success 'each rank wrote into its own node-local directory' '
  for k in 0 1 2 3; do
    test "$($CL exec node$k -- ls /scr-local | tr "\n" " ")" = "rank_$((2 * k)) rank_$((2 * k + 1)) " || exit 1
  done &&
  test "$(cat "$SCR_CLUSTER_STATE/nodes/node2/local/rank_5")" = "5 node2"
'

test_expect_success 'node-local directories are private' '
  $CL exec node1 -- sh -c "echo secret >/scr-local/private" &&
  test "$($CL exec node1 -- cat /scr-local/private)" = secret &&
  ! $CL exec node2 -- test -e /scr-local/private &&
  ! test -e /scr-local/private &&
  test -z "$(ls -A /scr-local)"
'

test_expect_success 'exec passes the exit status, environment and directory' '
  $CL exec node3 -- sh -c "exit 7"; test $? = 7 &&
  test "$(FOO=bar $CL exec node0 -- sh -c "echo \$FOO \$SCR_CLUSTER_NODE")" = "bar node0" &&
  test "$($CL exec node0 -- pwd)" = "$TRASH"
'

test_expect_success 'ranks get exported variables and -e VAR=VALUE' '
  FOO=exported $CL run --nodes node1,node2 -e BAR=given -- \
    sh -c "echo \$PMI_RANK \$(hostname) \$FOO \$BAR \$SCR_CACHE_BASE" >out 2>err &&
  test "$(sort out | tr "\n" " ")" = "0 node1 exported given /scr-local 1 node2 exported given /scr-local "
'

test_expect_success 'killing a node ends the job on it, leaving no process' '
  date +%s >start
  { $CL run --ppn 2 --timeout 40 -- "$HOSTAPP" --sleep 30 >out 2>err; echo $? >rc; } &
  for i in $(seq 100); do
    grep -q "^allreduce" out 2>/dev/null && break; sleep 0.1
  done &&
  $CL ps node1 | grep -q mpi-hostname &&
  $CL kill node1 &&
  wait && start=$(cat start) && end=$(date +%s) &&
  echo "run exit status $(cat rc) after $((end - start)) s" &&
  test "$(cat rc)" != 0 && test $((end - start)) -lt 20 &&
  test -z "$($CL ps)" &&
  ! pgrep -f "$HOSTAPP" &&
  $CL status | grep "^node1 .* down " &&
  test -z "$(ls -A "$SCR_CLUSTER_STATE/nodes/node1/local")"
'

test_expect_success 'a down node refuses launches and commands' '
  ! $CL exec node1 -- true 2>err && expect_grep "node1 is down" err &&
  ! $CL run --nodes node0,node1 -- true 2>err && expect_grep "node1 is down" err
'

test_expect_success 'revive brings the node back empty' '
  $CL revive node1 &&
  $CL status | grep "^node1 .* up " &&
  test "$($CL exec node1 -- hostname)" = node1 &&
  test -z "$($CL exec node1 -- ls -A /scr-local)" &&
  test "$($CL exec node0 -- ls /scr-local | tr "\n" " ")" = "rank_0 rank_1 "
'

test_expect_success 'a relaunch on the reversed node list numbers ranks in that order' '
  $CL run --ppn 2 --nodes node3,node2,node1,node0 --timeout 60 -- "$HOSTAPP" >out 2>err &&
  expect_grep "allreduce ok" out &&
  test "$(job_hosts out)" = "node3 node3 node2 node2 node1 node1 node0 node0 "
'

test_expect_success 'a job that outlives its timeout is killed with status 124' '
  start=$(date +%s) &&
  { $CL run --nodes node0,node2 --timeout 2 -- "$HOSTAPP" --sleep 30 >out 2>err; echo $? >rc; } &&
  end=$(date +%s) &&
  test "$(cat rc)" = 124 && test $((end - start)) -lt 10 &&
  expect_grep "timed out" err &&
  test -z "$($CL ps)" && ! pgrep -f "$HOSTAPP"
'

# not root: a copy anyone can read runs as nobody, since the source tree may
# be where nobody can (a fresh machine's clone in /root)
test_expect_success 'clear errors: unknown node, bad option, not root' '
  ! $CL exec node9 -- true 2>err && expect_grep "no node .node9." err &&
  ! $CL run --ppn x -- true 2>err && expect_grep "ppn" err &&
  ! $CL up 2 2>err && expect_grep "already up" err &&
  { ! command -v setpriv >/dev/null ||
    { mkdir -p anyone && cp "$(command -v $CL)" anyone/ && chmod -R a+rX anyone &&
      ! setpriv --reuid=65534 --regid=65534 --clear-groups anyone/scr_cluster status 2>err &&
      expect_grep "must be run as root" err; }; }
'

test_expect_success 'down removes namespaces, links, mounts and state' '
  $CL down &&
  ! ip netns list | grep -q "^scr20node" &&
  ! ip link show scrbr20 2>/dev/null &&
  ! ip -o link show | grep -q "scr20v[0-9]" &&
  ! grep -q -e "$SCR_CLUSTER_STATE" -e /scr-local -e scr20node /proc/mounts &&
  ! test -e "$SCR_CLUSTER_STATE" &&
  { test -e "$TRASH/mountpoint-existed" || test -e /run/.scr_cluster_users || ! test -e /scr-local; }
'

test_expect_success 'down again is a no-op' '
  $CL down && $CL down
'

# A cluster made in a chroot (a build root, a fresh Debian from debootstrap):
# entering a node's mount namespace moves a process to that namespace's root,
# so the node's processes must be put back into the chroot. The chroot here is
# the machine's own tree bound elsewhere, told apart by a file only it has;
# /run is its own and the cache mount is in $TRASH, so the machine's clusters
# see nothing of it.
cat >"$TRASH/in-chroot.sh" <<EOF
trap 'scr_cluster down >/dev/null 2>&1' EXIT
export SCR_CLUSTER_STATE="$TRASH/chroot-cluster"
scr_cluster up 1 --cache-mount "$TRASH/chroot-cache" >"$TRASH/chroot-up.log" 2>&1 ||
  { echo "up failed:"; cat "$TRASH/chroot-up.log"; exit 1; }
scr_cluster exec node0 -- test -e "$TRASH/mark/inside" || { echo "exec ran outside the chroot"; exit 1; }
(cd "$TRASH/mark" && scr_cluster exec node0 -- pwd) >"$TRASH/exec.out" 2>"$TRASH/exec.err"
test "\$(cat "$TRASH/exec.out")" = "$TRASH/mark" || { echo "exec did not run in the current directory"; exit 1; }
test ! -s "$TRASH/exec.err" || { echo "exec said:"; cat "$TRASH/exec.err"; exit 1; }
scr_cluster run --nodes node0 --timeout 60 -- test -e "$TRASH/mark/inside" ||
  { echo "a job ran outside the chroot"; exit 1; }
EOF
test_expect_success 'in a chroot, commands and jobs on a node run inside the chroot' '
  mkdir -p root mark &&
  { unshare --mount --propagation private sh -c "
      mount --rbind / root && mount -t tmpfs -o mode=755 tmpfs root/run &&
      mount -t tmpfs tmpfs root$TRASH/mark && : >root$TRASH/mark/inside &&
      exec chroot root sh $TRASH/in-chroot.sh"; echo $? >rc; } &&
  test "$(cat rc)" = 0 &&
  ! ip link show scrbr20 2>/dev/null
'

test_done
