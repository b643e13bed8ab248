#!/usr/bin/env bash
# Evaluate the example submissions on the example dataset and write their
# results.jsonl files.
#
# usage: examples/evaluate.sh [SLUG...]
#   default: every folder data/submissions/example/v1/full/<YYYYMMDD>_<slug>/
#
# The prediction of a submission for an instance is
#   gold        the instance's own patch (the reference solution),
#   empty       no change at all,
#   otherwise   examples/predictions/<slug>/<instance_id>.diff, and no
#               prediction (no result line) when that file does not exist.
# Each prediction is applied with `git apply` to the instance's base (the
# complete project with test_patch and patch reverse-applied); when it does
# not apply no test runs. Otherwise test_patch is applied and the instance's
# FAIL_TO_PASS and PASS_TO_PASS tests run with pytest, one process per test
# file. Token counts and cost come from examples/predictions/<slug>/usage.tsv
# (invented for the example). The full split's results are written to
# full/<folder>/results.jsonl, and restricted to the lite split's instances
# to lite/<folder>/results.jsonl when that folder exists.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tools/lib.sh"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
INSTANCES=$DATASET/instances.jsonl
if [ $# -gt 0 ]; then
	slugs=("$@")
else
	mapfile -t slugs < <(for f in "$SUBMISSIONS"/full/*_*/; do f=${f%/}; f=${f##*/}; echo "${f#*_}"; done)
fi
mapfile -t ids < <(exkit ids "$INSTANCES" full)
mapfile -t lite < <(exkit ids "$INSTANCES" lite)

for slug in "${slugs[@]}"; do
	dirs=("$SUBMISSIONS"/full/*_"$slug")
	[ ${#dirs[@]} = 1 ] && [ -d "${dirs[0]}" ] || { echo "no single submission folder full/*_$slug" >&2; exit 1; }
	folder=${dirs[0]##*/}
	out=$WORK/$slug.jsonl
	: >"$out"
	for id in "${ids[@]}"; do
		t=$WORK/$slug/$id
		case $slug in
		gold) pred=$t.gold.diff; mkdir -p "$WORK/$slug"; exkit get "$INSTANCES" "$id" patch >"$pred" ;;
		empty) pred=$t.empty.diff; mkdir -p "$WORK/$slug"; : >"$pred" ;;
		*) pred=$EXAMPLES/predictions/$slug/$id.diff ;;
		esac
		if [ ! -f "$pred" ]; then
			echo "$slug $id: no prediction"
			continue
		fi
		base_tree "$t" "$id" >/dev/null
		applied=yes
		if [ -s "$pred" ] && ! (cd "$t" && g apply "$pred" 2>"$t.apply.log"); then
			applied=no
		fi
		[ $applied = yes ] && (cd "$t" && g apply "$t.test_patch.diff")
		usage=()
		[ -f "$EXAMPLES/predictions/$slug/usage.tsv" ] && usage=(--usage "$EXAMPLES/predictions/$slug/usage.tsv")
		exkit result --instances "$INSTANCES" --id "$id" --dir "$t" --applied $applied \
			--prediction "$pred" "${usage[@]}" >>"$out"
		echo "$slug $id: $(tail -n1 "$out" | cut -c1-160)"
	done
	cp "$out" "$SUBMISSIONS/full/$folder/results.jsonl"
	if [ -d "$SUBMISSIONS/lite/$folder" ]; then
		: >"$SUBMISSIONS/lite/$folder/results.jsonl"
		while IFS= read -r line; do
			for id in "${lite[@]}"; do
				case $line in "{\"instance_id\": \"$id\","*) echo "$line" >>"$SUBMISSIONS/lite/$folder/results.jsonl" ;; esac
			done
		done <"$out"
	fi
done
