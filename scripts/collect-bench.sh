#!/usr/bin/env bash
# Collection figures: tracing overhead (each test file's pytest wall time
# with the tracer against without, alternating runs, in the repository's
# container) and end-to-end instances per hour (a whole collection into a
# fresh work folder; the environment image, cached by content, is built
# first and not counted).
#
# usage: bash scripts/collect-bench.sh [--config FILE] [--runs N] [--repo OWNER/NAME]...
#   --config  featbench.toml with the [[collect.repo]] tables (default: the project's)
#   --runs    runs of each test file per variant, medians taken (default 3)
#   --repo    repositories to measure (default: every [[collect.repo]])
# Needs a Docker engine (DOCKER_HOST; see scripts/provision-docker.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"

config="$root/featbench.toml"
runs=3
repos=()
while [ $# -gt 0 ]; do
	case "$1" in
	--config) config="$(realpath "$2")"; shift 2 ;;
	--runs) runs="$2"; shift 2 ;;
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
	echo "image $image, ${#files[@]} test files; tracing overhead, median of $runs runs each:"
	docker run --rm --network none --memory 4g --cpus 1 \
		-v "$root/internal/trace/tracer.py:/fb/tracer.py:ro" -v "$root/scripts/collect-bench/overhead.py:/fb/overhead.py:ro" \
		-e PYTHONDONTWRITEBYTECODE=1 -w /testbed "$image" python3 /fb/overhead.py /fb/tracer.py "$runs" "${files[@]}" | tee "$tmp/overhead.txt"

	echo "end to end, every stage into a fresh work folder:"
	rm -rf "$work"
	start=$(date +%s.%N)
	"$tmp/collect" --root "$root" --config "$config" --work "$work" --data "$tmp/data" --repo "$repo" \
		--dataset "bench/${repo//\//_}" >"$tmp/collect.txt" 2>"$tmp/collect.log" || { tail -20 "$tmp/collect.log"; cat "$tmp/collect.txt"; }
	end=$(date +%s.%N)
	kept=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["instances"])' "$tmp/data/datasets/bench/${repo//\//_}/collection.json" 2>/dev/null || echo 0)
	python3 -c 'import sys; k, s = int(sys.argv[1]), float(sys.argv[3]) - float(sys.argv[2]); print("  %d instances in %.0f s: %.0f instances an hour" % (k, s, k * 3600 / s))' "$kept" "$start" "$end"
	# The stage times, as collect prints them.
	grep -h ', discover .* s, ' "$tmp/collect.txt" "$tmp/collect.log" | sed 's/^/  stages: /' || true
	rm -rf "$tmp/data"
done
