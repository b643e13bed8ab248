#!/usr/bin/env bash
# Collection figures: tracing overhead (each test file's pytest wall time
# with the tracer against without, alternating runs, in the repository's
# container) and end-to-end instances per hour (a whole collection into a
# fresh work folder; the environment image, cached by content, is built
# first and not counted).
#
# usage: bash scripts/collect-bench.sh [--config FILE] [--runs N] [--floor] [--overhead-only] [--repo OWNER/NAME]...
#   --config         featbench.toml with the [[collect.repo]] tables (default: the project's)
#   --runs           runs of each test file per variant, medians taken (default 3)
#   --floor          also run each file under a hook that does nothing (on the tracer's events): the
#                    interpreter's share of the overhead (see docs/performance.md)
#   --overhead-only  measure the tracing overhead, not a whole collection
#   --repo           repositories to measure (default: every [[collect.repo]])
# Needs a Docker engine (DOCKER_HOST; see scripts/provision-docker.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"

config="$root/featbench.toml"
runs=3
floor=()
collect=1
repos=()
while [ $# -gt 0 ]; do
	case "$1" in
	--config) config="$(realpath "$2")"; shift 2 ;;
	--runs) runs="$2"; shift 2 ;;
	--floor) floor=(--floor); shift ;;
	--overhead-only) collect=0; shift ;;
	--repo) repos+=("$2"); shift 2 ;;
	*) echo "collect-bench: unknown argument $1" >&2; exit 2 ;;
	esac
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/collect" ./cmd/collect
if [ ${#repos[@]} -eq 0 ]; then
	mapfile -t repos < <(python3 -c 'import sys, tomllib; [print(r["repository"]) for r in tomllib.load(open(sys.argv[1], "rb"))["collect"]["repo"]]' "$config")
fi

echo "machine: $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), $(free -g | awk '/Mem:/ {print $2}') GiB; $(docker version --format 'Docker {{.Server.Version}}' 2>/dev/null || echo 'docker CLI missing')"
for repo in "${repos[@]}"; do
	echo
	echo "== $repo"
	work="$tmp/work-${repo//\//_}"
	# The image, and the list of test files, from the first two stages.
	for stage in env discover; do
		"$tmp/collect" --root "$root" --config "$config" --work "$work" --repo "$repo" --stage "$stage" 2>>"$tmp/env.log" >/dev/null || { cat "$tmp/env.log"; exit 1; }
	done
	image="$(sed -n 's/.*environment image //p' "$tmp/env.log" | tail -1)"
	[ -n "$image" ] || { echo "collect-bench: no environment image for $repo" >&2; cat "$tmp/env.log" >&2; exit 1; }
	: >"$tmp/env.log"
	mapfile -t files < <(python3 -c 'import glob, json, sys; [print(f["path"]) for p in glob.glob(sys.argv[1] + "/*/discover.json") for f in json.load(open(p))["output"]["files"]]' "$work")
	echo "image $image, ${#files[@]} test files; tracing overhead, median of $runs runs each (load average $(cut -d' ' -f1-3 /proc/loadavg)):"
	docker run --rm --network none --memory 4g --cpus 1 \
		-v "$root/internal/trace/tracer.py:/fb/tracer.py:ro" -v "$root/scripts/collect-bench/overhead.py:/fb/overhead.py:ro" \
		-e PYTHONDONTWRITEBYTECODE=1 -w /testbed "$image" python3 /fb/overhead.py "${floor[@]}" /fb/tracer.py "$runs" "${files[@]}" | tee "$tmp/overhead.txt"
	echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	[ "$collect" = 1 ] || continue

	echo "end to end, every stage into a fresh work folder:"
	rm -rf "$work"
	start=$(date +%s.%N)
	rc=0
	"$tmp/collect" --root "$root" --config "$config" --work "$work" --data "$tmp/data" --repo "$repo" \
		--dataset "bench/${repo//\//_}" >"$tmp/collect.txt" 2>"$tmp/collect.log" || { rc=$?; tail -20 "$tmp/collect.log"; cat "$tmp/collect.txt"; }
	end=$(date +%s.%N)
	# What was kept comes from the written dataset, or from collect's table
	# when the write failed (a failed write is not zero instances).
	python3 scripts/collect-bench/report.py "$repo" "$start" "$end" "$rc" \
		"$tmp/data/datasets/bench/${repo//\//_}/collection.json" "$tmp/collect.txt" "$tmp/collect.log"
	# The stage times, as collect prints them.
	grep -h ', discover .* s, ' "$tmp/collect.txt" "$tmp/collect.log" | sed 's/^/  stages: /' || true
	rm -rf "$tmp/data"
done
