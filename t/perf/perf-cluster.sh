# perf-cluster.sh - sourced by the benchmarks that run on the local test
# cluster: perf_cluster_up NAME NODES [ID] makes $work (a temporary directory
# with prefix/ and a private tmpfs as the nodes' local storage) and cluster
# ID (default $SCR_CLUSTER_ID, else the one given), and removes both at exit.
# Needs root; $cluster is scripts/scr_cluster.
perf_cluster_up() {
  local name=$1 nodes=$2
  [ "$(id -u)" = 0 ] || { echo "$name: needs root (scr_cluster)" >&2; exit 2; }
  export SCR_CLUSTER_ID=${SCR_CLUSTER_ID:-$3}
  work=$(mktemp -d "/tmp/scr-$name.XXXXXX")
  export SCR_CLUSTER_STATE="$work/cluster"
  perf_cluster_upped=
  trap perf_cluster_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM HUP
  mkdir -p "$work/local" "$work/prefix"
  mount -t tmpfs -o mode=0700 "scr-$name" "$work/local"
  # fails when cluster $SCR_CLUSTER_ID exists (another run, or one killed with -9:
  # "scripts/scr_cluster --id $SCR_CLUSTER_ID down" removes it)
  "$cluster" up "$nodes" --base "$work/local" >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; exit 1; }
  perf_cluster_upped=1
}

perf_cluster_cleanup() {
  # only a cluster this run made: "down" would remove another run's
  [ -z "$perf_cluster_upped" ] || "$cluster" down >/dev/null 2>&1 || "$cluster" down >&2 || true
  if mountpoint -q "$work/local"; then umount "$work/local"; fi
  rm -rf "$work"
}
