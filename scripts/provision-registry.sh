#!/usr/bin/env bash
# Starts the local registries the registry tests pull from, with Debian's
# docker-registry (2.8):
#
#   - an open one on :5077 (every interface: the swarm's nodes reach it as
#     10.77.0.1:5077 on their bridge, the host's engine as 127.0.0.1:5077,
#     which Docker treats as insecure, so plain HTTP), storing under
#     /var/lib/featbench-registry/open; scripts/provision-swarm.sh uses it
#     as the swarm's registry;
#   - one that wants a password on 127.0.0.1:5078 (htpasswd, bcrypt, made
#     with apache2-utils' htpasswd), storing under
#     /var/lib/featbench-registry/auth, for the tests of an unauthorised
#     pull and of credentials read from a docker configuration. Its user
#     is "featbench" and its password is made at random the first time and
#     kept in /var/lib/featbench-registry/auth/password.
#
# Idempotent: installs what is missing (docker-registry, apache2-utils,
# curl), reuses a registry that already answers.
#
# Progress goes to stderr; stdout carries only lines to eval:
#   eval "$(bash scripts/provision-registry.sh)"   # sets FEATBENCH_REGISTRY*
#   bash scripts/provision-registry.sh --stop      # stops both
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
LIB=/var/lib/featbench-registry
RUN=/run/featbench-registry
LOGDIR=/var/log/featbench-registry
OPEN_PORT=5077
AUTH_PORT=5078
USER_NAME=featbench
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

log() { echo "provision-registry: $*" >&2; }

stop() {
	local name=$1 pid
	pid="$(cat "$RUN/$name.pid" 2>/dev/null || true)"
	if [ -n "$pid" ] && $SUDO kill "$pid" 2>/dev/null; then
		for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
		log "stopped the $name registry (pid $pid)"
	fi
}

if [ "${1:-}" = "--stop" ]; then
	stop open
	stop auth
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
command -v docker-registry >/dev/null 2>&1 || install docker-registry
command -v htpasswd >/dev/null 2>&1 || install apache2-utils
command -v curl >/dev/null 2>&1 || install curl

$SUDO mkdir -p "$RUN" "$LIB/open" "$LIB/auth/store" "$LOGDIR"

# The password, made once; its bcrypt hash in the htpasswd file.
if [ ! -s "$LIB/auth/password" ]; then
	head -c 18 /dev/urandom | base64 | tr -d '/+=' | $SUDO tee "$LIB/auth/password" >/dev/null
	$SUDO chmod 644 "$LIB/auth/password"
fi
password="$(cat "$LIB/auth/password")"
if [ ! -s "$LIB/auth/htpasswd" ] || ! htpasswd -vbB "$LIB/auth/htpasswd" "$USER_NAME" "$password" >/dev/null 2>&1; then
	htpasswd -nbB "$USER_NAME" "$password" | $SUDO tee "$LIB/auth/htpasswd" >/dev/null
fi

# answers NAME URL: the registry's /v2/ answers (200, or 401 for the one
# that wants a password).
answers() {
	local code
	code="$(curl -s -o /dev/null -m 5 -w '%{http_code}' "$1/v2/" || true)"
	[ "$code" = 200 ] || [ "$code" = 401 ]
}

start() {
	local name=$1 url=$2 config=$3
	if answers "$url"; then
		log "the $name registry already answers at $url"
		return
	fi
	printf '%s' "$config" | $SUDO tee "$LIB/$name.yml" >/dev/null
	log "starting the $name registry at $url (log: $LOGDIR/$name.log)"
	$SUDO setsid nohup docker-registry serve "$LIB/$name.yml" >>"$LOGDIR/$name.log" 2>&1 </dev/null &
	echo $! | $SUDO tee "$RUN/$name.pid" >/dev/null
	for i in $(seq 30); do
		answers "$url" && return
		if [ "$i" -eq 30 ]; then
			log "the $name registry did not answer within 30 s; last lines of its log:"
			tail -n 20 "$LOGDIR/$name.log" >&2
			exit 1
		fi
		sleep 1
	done
}

start open "http://127.0.0.1:$OPEN_PORT" "version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $LIB/open
  delete:
    enabled: true
http:
  addr: :$OPEN_PORT
"

start auth "http://127.0.0.1:$AUTH_PORT" "version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $LIB/auth/store
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$AUTH_PORT
auth:
  htpasswd:
    realm: featbench
    path: $LIB/auth/htpasswd
"

log "registries up: open 127.0.0.1:$OPEN_PORT, with a password 127.0.0.1:$AUTH_PORT (user $USER_NAME)"
echo "export FEATBENCH_REGISTRY=127.0.0.1:$OPEN_PORT"
echo "export FEATBENCH_AUTH_REGISTRY=127.0.0.1:$AUTH_PORT"
echo "export FEATBENCH_AUTH_REGISTRY_USER=$USER_NAME"
echo "export FEATBENCH_AUTH_REGISTRY_PASSWORD=$password"
