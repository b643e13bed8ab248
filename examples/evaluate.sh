#!/usr/bin/env bash
# Regenerates the example submissions in data/submissions/example/v4/ with
# cmd/eval, in Docker containers: the gold patches and empty predictions on
# the full split, and the two hand-written agents of examples/predictions/
# on the lite split. Each run is submitted with examples/metadata/<slug>.toml
# for its split and, for the full split, the lite split too.
#
# usage: examples/evaluate.sh [SLUG...]     default: gold empty (and, for example/v2, tiny-agent shell-loop)
# DATASET=example/v2 examples/evaluate.sh gold   regenerates an older version's
#
# It needs a Docker engine: `eval "$(bash scripts/provision-docker.sh)"`.
# The submissions' logs change with every run (durations), so the
# maintainers' attestations of the gold and empty submissions must be
# renewed afterwards: `go run ./cmd/build --attest ID` prints each entry of
# data/checked.toml.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

dataset=${DATASET:-example/v4}
run=${dataset//\//-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/eval" ./cmd/eval

# evaluate SLUG SPLIT SUBMIT-SPLITS ARGS...: run the predictions ARGS on
# SPLIT, then submit the run for SUBMIT-SPLITS (comma-separated).
evaluate() {
	local slug=$1 split=$2 splits=$3
	shift 3
	# A fresh run: --force would refuse the folder of a run whose
	# predictions were since edited. ([eval] runs is "runs" here.)
	rm -rf "runs/$run-$slug"
	"$tmp/eval" run --dataset "$dataset" --split "$split" --run-id "$run-$slug" --force "$@"
	local flags=()
	IFS=, read -ra list <<<"$splits"
	for s in "${list[@]}"; do flags+=(--split "$s"); done
	"$tmp/eval" submit "$run-$slug" --slug "$slug" --metadata "examples/metadata/$slug.toml" --force "${flags[@]}"
}

slugs=("$@")
if [ ${#slugs[@]} -eq 0 ]; then
	# The two hand-written agents answered example/v2's lite split.
	slugs=(gold empty)
	[ "$dataset" != example/v2 ] || slugs+=(tiny-agent shell-loop)
fi
for slug in "${slugs[@]}"; do
	case $slug in
	gold) evaluate gold full full,lite --gold ;;
	empty) evaluate empty full full,lite --empty ;;
	tiny-agent | shell-loop) evaluate "$slug" lite lite --predictions "examples/predictions/$slug.jsonl" ;;
	*)
		echo "evaluate.sh: unknown example submission $slug" >&2
		exit 2
		;;
	esac
done
