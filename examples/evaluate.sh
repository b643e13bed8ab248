#!/usr/bin/env bash
# Regenerates the example submissions in data/submissions/example/v1/ with
# cmd/eval, in Docker containers: the gold patches, empty predictions and
# the two hand-written agents of examples/predictions/. Each is evaluated on
# the full split (runs/example-<slug>/) and submitted with its folder's own
# metadata.toml, for full and, where the example has one, lite.
#
# usage: examples/evaluate.sh [SLUG...]     default: gold empty tiny-agent shell-loop
#
# It needs a Docker engine: `eval "$(bash scripts/provision-docker.sh)"`.
# The submissions' logs change with every run (durations), so the
# maintainers' attestations of the gold and empty submissions must be
# renewed afterwards: `go run ./cmd/build --attest ID` prints each entry of
# data/checked.toml.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/eval" ./cmd/eval

# evaluate SLUG DATE SPLITS ARGS...: run the predictions ARGS on the full
# split, then submit the run for the splits SPLITS (comma-separated).
evaluate() {
	local slug=$1 date=$2 splits=$3
	shift 3
	local dir
	dir=$(echo data/submissions/example/v1/full/*_"$slug")
	cp "$dir/metadata.toml" "$tmp/$slug.toml"
	"$tmp/eval" run --dataset example/v1 --split full --run-id "example-$slug" --force "$@"
	local flags=()
	IFS=, read -ra list <<<"$splits"
	for s in "${list[@]}"; do flags+=(--split "$s"); done
	"$tmp/eval" submit "example-$slug" --slug "$slug" --date "$date" --metadata "$tmp/$slug.toml" --force "${flags[@]}"
}

slugs=("$@")
[ ${#slugs[@]} -gt 0 ] || slugs=(gold empty tiny-agent shell-loop)
for slug in "${slugs[@]}"; do
	case $slug in
	gold) evaluate gold 2026-11-01 full,lite --gold ;;
	empty) evaluate empty 2026-11-01 full --empty ;;
	tiny-agent) evaluate tiny-agent 2026-11-12 full,lite --predictions examples/predictions/tiny-agent.jsonl ;;
	shell-loop) evaluate shell-loop 2026-11-20 full,lite --predictions examples/predictions/shell-loop.jsonl ;;
	*)
		echo "evaluate.sh: unknown example submission $slug" >&2
		exit 2
		;;
	esac
done
