#!/usr/bin/env bash
# Starts a private Docker engine for the tests that need one.
# Idempotent: installs Debian's docker.io only if dockerd is missing (and
# debootstrap, which builds the base image, and npm, which fetches the
# agents' packages for eval infer, if they are), and reuses the engine if it
# already answers on its socket.
#
# Progress goes to stderr; stdout carries only the line to eval:
#   eval "$(bash scripts/provision-docker.sh)"   # sets DOCKER_HOST
#   bash scripts/provision-docker.sh --stop      # stops the engine again
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
SOCK=/run/featbench-docker.sock
HOST="unix://$SOCK"
PIDFILE=/run/featbench-docker.pid
LOG="${FEATBENCH_DOCKERD_LOG:-/var/log/featbench-dockerd.log}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

log() { echo "provision-docker: $*" >&2; }

if [ "${1:-}" = "--stop" ]; then
	pid="$(cat "$PIDFILE" 2>/dev/null || true)"
	if [ -n "$pid" ] && $SUDO kill "$pid" 2>/dev/null; then
		for _ in $(seq 30); do [ -S "$SOCK" ] || break; sleep 1; done
		log "stopped dockerd (pid $pid)"
	else
		log "no featbench dockerd running"
	fi
	exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
	if ! apt-cache policy docker.io 2>/dev/null | grep -q 'Candidate: [^(]'; then
		log "apt-get update"
		$SUDO apt-get update -qq >&2
	fi
	log "apt-get install docker.io"
	if ! $SUDO apt-get install -y -qq --no-install-recommends docker.io >&2; then
		log "install failed; refreshing package lists and retrying"
		$SUDO apt-get update -qq >&2
		$SUDO apt-get install -y -qq --no-install-recommends docker.io >&2
	fi
fi

# debootstrap builds the Python base images offline from Debian packages
# (internal/images.EnsureBase, the first time a test or `eval images` needs
# one, or scripts/provision-images.sh; the engine keeps them between runs).
if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
	log "apt-get install debootstrap"
	if ! $SUDO apt-get install -y -qq --no-install-recommends debootstrap >&2; then
		log "install failed; refreshing package lists and retrying"
		$SUDO apt-get update -qq >&2
		$SUDO apt-get install -y -qq --no-install-recommends debootstrap >&2
	fi
fi

# Debian's archive keys, so that debootstrap checks what it downloads on a
# host that is not Debian (Ubuntu's debootstrap does not bring them).
if [ ! -e /usr/share/keyrings/debian-archive-keyring.gpg ]; then
	log "apt-get install debian-archive-keyring"
	if ! $SUDO apt-get install -y -qq --no-install-recommends debian-archive-keyring >&2; then
		log "install failed; refreshing package lists and retrying"
		$SUDO apt-get update -qq >&2
		$SUDO apt-get install -y -qq --no-install-recommends debian-archive-keyring >&2
	fi
fi

# npm fetches the agents' packages on this machine for eval infer (from the
# lockfiles under agents/; they are installed into the agent's image layer
# without network), which the Docker tests of cmd/eval run.
if ! command -v npm >/dev/null 2>&1; then
	log "apt-get install npm"
	if ! $SUDO apt-get install -y -qq --no-install-recommends npm >&2; then
		log "install failed; refreshing package lists and retrying"
		$SUDO apt-get update -qq >&2
		$SUDO apt-get install -y -qq --no-install-recommends npm >&2
	fi
fi

answers() { timeout 10 docker -H "$HOST" info >/dev/null 2>&1; }

if [ -S "$SOCK" ] && answers; then
	log "dockerd already answers on $SOCK"
else
	log "starting dockerd (log: $LOG)"
	$SUDO mkdir -p /var/lib/featbench-docker /run/featbench-docker "$(dirname "$LOG")"
	# setsid + nohup: the engine outlives this script.
	$SUDO setsid nohup dockerd --storage-driver=overlay2 --iptables=false --bridge=none \
		--data-root /var/lib/featbench-docker --exec-root /run/featbench-docker \
		--pidfile "$PIDFILE" -H "$HOST" >>"$LOG" 2>&1 </dev/null &
	pid=$!
	for i in $(seq 60); do
		if answers; then break; fi
		if ! kill -0 "$pid" 2>/dev/null; then
			log "dockerd exited early; last lines of $LOG:"
			tail -n 20 "$LOG" >&2
			exit 1
		fi
		if [ "$i" -eq 60 ]; then
			log "dockerd did not answer on $SOCK within 60s; last lines of $LOG:"
			tail -n 20 "$LOG" >&2
			exit 1
		fi
		sleep 1
	done
	log "dockerd up: server $(docker -H "$HOST" version --format '{{.Server.Version}}' 2>/dev/null)"
fi

echo "export DOCKER_HOST=$HOST"
