#!/usr/bin/env bash
# Builds the Python base images, one per Python a repository may name
# (internal/pybase: Debian bookworm's 3.11, trixie's 3.13), into the Docker
# engine at $DOCKER_HOST, so that tests and cmd/eval find them there.
# Building runs debootstrap, which needs root (sudo when not root) and the
# network to Debian's mirror; finding them later needs neither, so tests
# may then run as any user. About a minute an image the first time; an
# image already in the engine is found in a second.
#
#   eval "$(bash scripts/provision-docker.sh)"   # the engine, and debootstrap
#   bash scripts/provision-images.sh             # the base images
#
# Progress goes to stderr; stdout lists "python suite image" per base.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { echo "provision-images: $*" >&2; }

if [ -z "${DOCKER_HOST:-}" ]; then
	log 'DOCKER_HOST is not set: run eval "$(bash scripts/provision-docker.sh)" first'
	exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# Built as the caller (root's Go cache would build everything again), run
# as root.
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
log "go build ./cmd/eval"
go build -o "$bin/eval" ./cmd/eval
log "eval images --bases (DOCKER_HOST=$DOCKER_HOST)"
start=$SECONDS
$SUDO env "DOCKER_HOST=$DOCKER_HOST" "PATH=$PATH" "$bin/eval" images --bases --root .
log "done in $((SECONDS - start)) s"
