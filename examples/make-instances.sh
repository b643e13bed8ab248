#!/usr/bin/env bash
# Derive the example dataset's instances from the complete project in
# examples/textkit and the specs in examples/instances/<feature>/.
#
# usage: examples/make-instances.sh [OUT]
#   OUT defaults to data/datasets/example/v1/instances.jsonl; "-" prints.
#
# For each feature: copy the project, remove what the spec's REMOVE lists
# (top-level definitions or whole files), commit that as the base (fixed
# author, committer and dates, so base_commit is reproducible), put the
# complete project back and take `git diff` base -> complete: changes under
# tests/ are the test_patch, the rest is the patch. Then run the tests on the
# base with the test patch and on the complete project: FAIL_TO_PASS are the
# tests that fail on the first and pass on the second, PASS_TO_PASS those
# that pass on both. Running it again gives the same file.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tools/lib.sh"

FEATURES=(unique-slug wrap-fill template-filters roman table fuzzy-match)
OUT=${1:-$DATASET/instances.jsonl}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

for f in "${FEATURES[@]}"; do
	(
		# shellcheck source=/dev/null
		source "$EXAMPLES/instances/$f/spec"
		id="featbench__textkit-$f.lv$LEVEL"
		d=$WORK/$f
		copy_project "$d/base"
		# shellcheck disable=SC2086
		exkit strip "$d/base" $REMOVE
		commit=$(commit_base "$d/base" "$id")
		g clone -q "$d/base" "$d/complete"
		copy_project "$d/complete"
		(
			cd "$d/complete"
			g add -A
			g diff --cached --no-color --no-ext-diff -- . ':(exclude)tests' >"$d/patch.diff"
			g diff --cached --no-color --no-ext-diff -- tests >"$d/test_patch.diff"
		)
		g clone -q "$d/base" "$d/tests-base"
		(cd "$d/tests-base" && g apply "$d/test_patch.diff")
		exkit instance --id "$id" --level "$LEVEL" --base-commit "$commit" \
			--problem "$EXAMPLES/instances/$f/problem.md" \
			--patch "$d/patch.diff" --test-patch "$d/test_patch.diff" \
			--base "$d/base" --complete "$d/complete" --tests-base "$d/tests-base" \
			--created-at "$CREATED_AT" >>"$WORK/instances.jsonl"
		echo "$id  base_commit $commit" >&2
	)
done

if [ "$OUT" = "-" ]; then
	cat "$WORK/instances.jsonl"
else
	mkdir -p "$(dirname "$OUT")"
	cp "$WORK/instances.jsonl" "$OUT"
	echo "wrote $OUT" >&2
fi
