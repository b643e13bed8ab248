#!/usr/bin/env bash
# Starts a real multi-node Docker Swarm on this one machine, and a registry,
# for the tests of internal/swarm and `eval run` with [eval] backend =
# "swarm" (docs/executors.md).
#
# Each node is its own dockerd in its own network namespace (fbswarmN,
# made with ip netns add and entered with nsenter --net),
# joined by a veth pair to a Linux bridge on the host (fbswarm0,
# 10.77.0.1/24), with its own --data-root, --exec-root and unix socket
# (/run/featbench-swarm/nodeN.sock), no bridge network and no iptables
# rules: nothing of the host's own engines is touched. Node 1 is the
# manager (docker swarm init --advertise-addr 10.77.0.11); the others join
# as workers. Each node carries the label featbench.engine=<its socket>,
# which is how the executor reaches a task's container on its node.
#
# The registry is Debian's docker-registry (2.8) that
# scripts/provision-registry.sh starts, listening on the bridge and on the
# host's loopback at port 5077. The nodes know it as 10.77.0.1:5077
# (--insecure-registry); an engine on the host pushes to 127.0.0.1:5077,
# which Docker treats as insecure by default.
#
# Idempotent: installs what is missing (docker.io, iproute2; the
# registry's script its own), reuses what already answers, restarts a node whose engine
# stopped (it rejoins the swarm from its data root).
#
# Progress goes to stderr; stdout carries only lines to eval:
#   eval "$(bash scripts/provision-swarm.sh)"    # sets FEATBENCH_SWARM_*
#   bash scripts/provision-swarm.sh --stop       # stops the nodes, removes the namespaces (provision-registry.sh --stop the registries)
#   bash scripts/provision-swarm.sh --stop-node N  # stops node N's engine (tests: a node lost)
#   eval "$(bash scripts/provision-swarm.sh --reset)"  # the swarm made anew: every node
#       leaves it first, so the manager's store (services, tasks) starts empty; images stay
# FEATBENCH_SWARM_NODES (default 3) is how many nodes to start.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
NODES="${FEATBENCH_SWARM_NODES:-3}"
BRIDGE=fbswarm0
SUBNET=10.77.0
HOSTIP="$SUBNET.1"
PORT=5077
RUN=/run/featbench-swarm
LIB=/var/lib/featbench-swarm
LOGDIR=/var/log/featbench-swarm
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

log() { echo "provision-swarm: $*" >&2; }

sock() { echo "$RUN/node$1.sock"; }
nodeip() { echo "$SUBNET.$((10 + $1))"; }
dk() { local n=$1; shift; timeout 60 docker -H "unix://$(sock "$n")" "$@"; }
answers() { [ -S "$(sock "$1")" ] && timeout 10 docker -H "unix://$(sock "$1")" info >/dev/null 2>&1; }

stop_node() {
	local n=$1 pid
	pid="$(cat "$RUN/node$n.pid" 2>/dev/null || true)"
	if [ -n "$pid" ] && $SUDO kill "$pid" 2>/dev/null; then
		for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
		log "stopped node $n (dockerd pid $pid)"
	fi
}

if [ "${1:-}" = "--stop-node" ]; then
	stop_node "$2"
	exit 0
fi

reset=
if [ "${1:-}" = "--reset" ]; then
	reset=1
fi

if [ "${1:-}" = "--stop" ]; then
	for n in $(seq "$NODES"); do stop_node "$n"; done
	# The registries are provision-registry.sh's: --stop there stops them.
	for n in $(seq "$NODES"); do
		$SUDO ip netns del "fbswarm$n" 2>/dev/null || true
	done
	$SUDO ip link del "$BRIDGE" 2>/dev/null || true
	exit 0
fi

install() {
	local pkg=$1
	if ! apt-cache policy "$pkg" 2>/dev/null | grep -q 'Candidate: [^(]'; then
		$SUDO apt-get update -qq >&2
	fi
	log "apt-get install $pkg"
	if ! $SUDO apt-get install -y -qq --no-install-recommends "$pkg" >&2; then
		$SUDO apt-get update -qq >&2
		$SUDO apt-get install -y -qq --no-install-recommends "$pkg" >&2
	fi
}
command -v dockerd >/dev/null 2>&1 || install docker.io
command -v ip >/dev/null 2>&1 || install iproute2

$SUDO mkdir -p "$RUN" "$LOGDIR"

# The bridge, with the host's address on it.
if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
	log "ip link add $BRIDGE type bridge ($HOSTIP/24)"
	$SUDO ip link add "$BRIDGE" type bridge
fi
# Read first, then match: grep -q would close the pipe early, and with
# pipefail ip's SIGPIPE would read as "no address".
addrs="$(ip addr show dev "$BRIDGE")"
grep -q "inet $HOSTIP/" <<<"$addrs" || $SUDO ip addr add "$HOSTIP/24" dev "$BRIDGE"
$SUDO ip link set "$BRIDGE" up

# The registry: scripts/provision-registry.sh's open one on :5077 (it also
# starts the one with a password the registry tests use).
bash "$(dirname "${BASH_SOURCE[0]}")/provision-registry.sh" >/dev/null

# The nodes: a namespace, a veth pair to the bridge, a dockerd.
for n in $(seq "$NODES"); do
	ns="fbswarm$n"
	if ! ip netns list | grep -qw "$ns"; then
		log "ip netns add $ns ($(nodeip "$n"))"
		$SUDO ip netns add "$ns"
	fi
	if ! ip link show "fbsw${n}h" >/dev/null 2>&1; then
		$SUDO ip link add "fbsw${n}h" type veth peer name "fbsw${n}n"
		$SUDO ip link set "fbsw${n}n" netns "$ns"
		$SUDO ip link set "fbsw${n}h" master "$BRIDGE" up
		$SUDO ip netns exec "$ns" ip link set "fbsw${n}n" name eth0
		$SUDO ip netns exec "$ns" ip addr add "$(nodeip "$n")/24" dev eth0
		$SUDO ip netns exec "$ns" ip link set eth0 up
		$SUDO ip netns exec "$ns" ip link set lo up
		$SUDO ip netns exec "$ns" ip route add default via "$HOSTIP"
	fi
	if answers "$n"; then
		log "node $n already answers on $(sock "$n")"
		continue
	fi
	stale="$(cat "$RUN/node$n.pid" 2>/dev/null || true)"
	if [ -n "$stale" ] && kill -0 "$stale" 2>/dev/null; then
		log "node $n's dockerd (pid $stale) does not answer: stopping it"
		stop_node "$n"
	fi
	$SUDO mkdir -p "$LIB/node$n" "$RUN/node$n"
	log "starting node $n's dockerd in $ns (log: $LOGDIR/node$n.log)"
	# nsenter --net, not ip netns exec: the latter also remounts /sys in a
	# new mount namespace, which hides the cgroup mounts dockerd needs.
	$SUDO nsenter --net="/run/netns/$ns" setsid nohup dockerd --storage-driver=overlay2 --iptables=false --bridge=none \
		--data-root "$LIB/node$n" --exec-root "$RUN/node$n" --pidfile "$RUN/node$n.pid" \
		-H "unix://$(sock "$n")" --insecure-registry "$HOSTIP:$PORT" \
		>>"$LOGDIR/node$n.log" 2>&1 </dev/null &
	for i in $(seq 60); do
		answers "$n" && break
		if [ "$i" -eq 60 ]; then
			log "node $n did not answer within 60 s; last lines of its log:"
			tail -n 20 "$LOGDIR/node$n.log" >&2
			exit 1
		fi
		sleep 1
	done
done

if [ -n "$reset" ]; then
	for n in $(seq "$NODES" -1 1); do
		log "node $n leaves the swarm (--reset)"
		dk "$n" swarm leave --force >&2 || true
	done
fi

# The swarm: node 1 manages, the others join as workers. Whatever state a
# run left them in (a node in "error" or still "pending", a worker of an
# older swarm whose manager was made anew), each ends up in this one.
state() { dk "$1" info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null || true; }
nodeid() { dk "$1" info --format '{{.Swarm.NodeID}}'; }
st="$(state 1)"
for _ in $(seq 20); do [ "$st" = pending ] || break; sleep 1; st="$(state 1)"; done
if [ "$st" = active ] && ! dk 1 node ls >/dev/null 2>&1; then
	st=stale # part of a swarm, but not managing it
fi
if [ "$st" != active ]; then
	[ "$st" = inactive ] || dk 1 swarm leave --force >&2 || true
	log "docker swarm init on node 1 ($(nodeip 1))"
	dk 1 swarm init --advertise-addr "$(nodeip 1)" --listen-addr "$(nodeip 1):2377" >&2
fi
token="$(dk 1 swarm join-token -q worker)"
ids=("$(nodeid 1)")
for n in $(seq 2 "$NODES"); do
	st="$(state "$n")"
	# A restarted node rejoins from its data root; give it a moment.
	for _ in $(seq 20); do [ "$st" = pending ] || break; sleep 1; st="$(state "$n")"; done
	if [ "$st" = active ] && ! dk 1 node inspect "$(nodeid "$n")" >/dev/null 2>&1; then
		st=stale # a worker of a swarm this manager is not
	fi
	if [ "$st" != active ]; then
		[ "$st" = inactive ] || dk "$n" swarm leave --force >&2 || true
		log "node $n joins the swarm"
		dk "$n" swarm join --token "$token" --advertise-addr "$(nodeip "$n")" "$(nodeip 1):2377" >&2
	fi
	ids+=("$(nodeid "$n")")
done
for n in $(seq "$NODES"); do
	dk 1 node update --label-add "featbench.engine=unix://$(sock "$n")" "${ids[$((n - 1))]}" >/dev/null
done
# Nodes the manager still lists that none of ours is now (an older data
# root, a node that left and joined again) would count as capacity or
# never be ready.
for id in $(dk 1 node ls -q); do
	case " ${ids[*]} " in
	*" $id "*) ;;
	*)
		log "removing node $id, which is none of this swarm's nodes now"
		dk 1 node rm --force "$id" >/dev/null || true
		;;
	esac
done
# A restarted node is ready once the manager hears from it again, which
# on a loaded machine takes a while: wait, and fail rather than print a
# swarm with a node missing (tests would count it).
for i in $(seq 120); do
	ready="$(dk 1 node ls --format '{{.Status}}' | grep -c '^Ready$' || true)"
	[ "$ready" -ge "$NODES" ] && break
	if [ "$i" -eq 120 ]; then
		log "only $ready of $NODES nodes ready after 120 s:"
		dk 1 node ls >&2 || true
		exit 1
	fi
	sleep 1
done
log "swarm up: $ready of $NODES nodes ready; registry $HOSTIP:$PORT"

echo "export FEATBENCH_SWARM_MANAGER=unix://$(sock 1)"
echo "export FEATBENCH_SWARM_REGISTRY=$HOSTIP:$PORT"
echo "export FEATBENCH_SWARM_PUSH_REGISTRY=127.0.0.1:$PORT"
