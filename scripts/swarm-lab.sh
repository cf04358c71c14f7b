#!/usr/bin/env bash
# A multi-node Docker Swarm on one machine, for tests and for organizers trying the multi-host path:
#   scripts/swarm-lab.sh up [WORKERS]   a manager (the data node) + WORKERS workers (default 2), each a real Docker
#                                       engine in its own network namespace and hostname, workers advertising fake
#                                       GPUs as generic resources, and a registry; prints lines to `eval`
#   scripts/swarm-lab.sh down           removes everything it made: engines (and the containers a killed engine
#                                       left running), mounts, namespaces, bridge, iptables rule, registry, folder
#   scripts/swarm-lab.sh kill NODE      kill -9 one node's engine (fault tests: a node lost mid-run)
# Traffic stays between the lab's bridge and namespaces. Needs root, iproute2, iptables, nsenter, unshare, dockerd
# and Debian's docker-registry. State lives in $HARNESS_LAB_DIR (default /var/lib/harness-lab).
set -euo pipefail
LAB="${HARNESS_LAB_DIR:-/var/lib/harness-lab}"
BR=hlab0
NET=10.213.0
REGISTRY="$NET.1:5000"
GPUS_PER_WORKER="${HARNESS_LAB_GPUS:-1}"

node_sock() { echo "unix://$LAB/node$1/docker.sock"; }
dk() { local n=$1; shift; docker -H "$(node_sock "$n")" "$@"; }

wait_engine() {  # wait_engine I PID: until node I's engine answers; at once if its process PID is gone
  # bounded by time, not by tries: on a loaded machine an engine restarted after a SIGKILL can take a minute
  local end=$((SECONDS + 300))
  while [ "$SECONDS" -lt "$end" ]; do
    dk "$1" info >/dev/null 2>&1 && return 0
    if ! kill -0 "$2" 2>/dev/null; then
      echo "swarm-lab: engine of node$1 exited; its log ($LAB/node$1/dockerd.log) ends:" >&2
      tail -n 5 "$LAB/node$1/dockerd.log" >&2
      return 1
    fi
    sleep 0.2
  done
  echo "swarm-lab: engine of node$1 did not answer within 300 s; see $LAB/node$1/dockerd.log" >&2
  return 1
}

start_registry() {
  [ -f "$LAB/registry.pid" ] && kill -0 "$(cat "$LAB/registry.pid")" 2>/dev/null && return 0
  mkdir -p "$LAB/registry"
  cat >"$LAB/registry.yml" <<EOF
version: 0.1
log: {level: error}
storage: {filesystem: {rootdirectory: $LAB/registry}, delete: {enabled: true}}
http: {addr: $REGISTRY}
EOF
  nohup docker-registry serve "$LAB/registry.yml" >"$LAB/registry.log" 2>&1 &
  echo $! >"$LAB/registry.pid"
  for _ in $(seq 1 100); do curl -fsS "http://$REGISTRY/v2/" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "swarm-lab: registry did not start; see $LAB/registry.log" >&2
  return 1
}

start_node() {  # start_node I ROLE
  local i=$1 role=$2 dir="$LAB/node$1" ns="hlab$1"
  mkdir -p "$dir"
  if ! ip netns list | grep -qw "$ns"; then
    ip netns add "$ns"
    ip link add "hl$i-h" type veth peer name "hl$i-n"
    ip link set "hl$i-h" master "$BR" up
    ip link set "hl$i-n" netns "$ns"
    ip -n "$ns" link set "hl$i-n" name eth0
    ip -n "$ns" addr add "$NET.$((10 + i))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  fi
  if [ -f "$dir/docker.pid" ] && kill -0 "$(cat "$dir/docker.pid")" 2>/dev/null; then return 0; fi
  local resources="[]"
  if [ "$role" = worker ]; then
    resources=$(python3 -c "import json,sys; print(json.dumps(['gpu=lab-node$i-gpu%d' % g for g in range(int(sys.argv[1]))]))" "$GPUS_PER_WORKER")
  fi
  cat >"$dir/daemon.json" <<EOF
{"node-generic-resources": $resources, "insecure-registries": ["$REGISTRY"], "no-new-privileges": true}
EOF
  # its own network namespace (nsenter, not `ip netns exec`, which remounts /sys) and hostname (unshare --uts)
  nohup nsenter --net="/var/run/netns/$ns" unshare --uts sh -c "hostname hlab-node$i && exec dockerd \
    --config-file '$dir/daemon.json' --data-root '$dir/data' --exec-root '$dir/exec' --pidfile '$dir/docker.pid' \
    -H '$(node_sock "$i")' --bip 172.31.$((i + 1)).1/24 --cgroup-parent hlab-node$i" >"$dir/dockerd.log" 2>&1 &
  wait_engine "$i" $!  # nsenter, unshare and sh each exec the next: $! ends up as dockerd itself
}

up() {
  local workers=${1:-2}
  mkdir -p "$LAB"
  if ! ip link show "$BR" >/dev/null 2>&1; then
    ip link add "$BR" type bridge
    ip addr add "$NET.1/24" dev "$BR"
    ip link set "$BR" up
  fi
  iptables -C FORWARD -i "$BR" -o "$BR" -j ACCEPT 2>/dev/null || iptables -I FORWARD -i "$BR" -o "$BR" -j ACCEPT
  start_registry
  start_node 0 manager
  if [ "$(dk 0 info -f '{{.Swarm.LocalNodeState}}')" != active ]; then
    dk 0 swarm init --advertise-addr "$NET.10" >/dev/null
  fi
  local manager_id token
  manager_id=$(dk 0 info -f '{{.Swarm.NodeID}}')
  dk 0 node update --label-add harness.data=true "$manager_id" >/dev/null
  token=$(dk 0 swarm join-token -q worker)
  for i in $(seq 1 "$workers"); do
    start_node "$i" worker
    if [ "$(dk "$i" info -f '{{.Swarm.LocalNodeState}}')" != active ]; then
      dk "$i" swarm join --token "$token" "$NET.10:2377" >/dev/null
    fi
  done
  local end=$((SECONDS + 300))
  until [ "$(dk 0 node ls -q --filter role=worker | wc -l)" -ge "$workers" ] \
      && ! dk 0 node ls --format '{{.Status}}' | grep -qv Ready; do  # every node Ready
    if [ "$SECONDS" -ge "$end" ]; then
      echo "swarm-lab: not every node is Ready after 300 s: $(dk 0 node ls --format '{{.Hostname}} {{.Status}}' | tr '\n' ' ')" >&2
      return 1
    fi
    sleep 0.2
  done
  echo "$workers" >"$LAB/workers"
  echo "export DOCKER_HOST=$(node_sock 0)"
  echo "export HARNESS_REGISTRY=$REGISTRY"
}

stop_pid() {  # stop_pid PIDFILE SIGNAL
  [ -f "$1" ] || return 0
  local pid; pid=$(cat "$1")
  kill "-$2" "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$1"
}

kill_leftovers() {  # processes a killed engine left behind: containerd, shims and the containers under them
  local pids
  pids=$(grep -lsa "$LAB/" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3 | grep -vx "$$" || true)
  for p in $pids; do
    for c in $(pgrep -P "$p" 2>/dev/null); do kill -9 "$c" 2>/dev/null || true; done
    kill -9 "$p" 2>/dev/null || true
  done
}

kill_node() {
  local i=${1#node}
  [ -f "$LAB/node$i/docker.pid" ] || { echo "swarm-lab: no node$i" >&2; return 1; }
  kill -9 "$(cat "$LAB/node$i/docker.pid")"
}

down() {
  [ -d "$LAB" ] || { cleanup_net; return 0; }
  for dir in "$LAB"/node*; do
    [ -d "$dir" ] && stop_pid "$dir/docker.pid" TERM
  done
  kill_leftovers
  stop_pid "$LAB/registry.pid" TERM
  { grep " $LAB/" /proc/mounts || true; } | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  cleanup_net
  rm -rf "$LAB"
}

cleanup_net() {
  for ns in $(ip netns list | awk '{print $1}' | grep -E '^hlab[0-9]+$' || true); do ip netns del "$ns"; done
  ip link show "$BR" >/dev/null 2>&1 && ip link del "$BR"
  while iptables -C FORWARD -i "$BR" -o "$BR" -j ACCEPT 2>/dev/null; do iptables -D FORWARD -i "$BR" -o "$BR" -j ACCEPT; done
  return 0
}

case "${1:-}" in
  up) up "${2:-2}" ;;
  down) down ;;
  kill) kill_node "${2:?node name, e.g. node1}" ;;
  *) echo "usage: $0 up [WORKERS] | down | kill NODE" >&2; exit 2 ;;
esac
