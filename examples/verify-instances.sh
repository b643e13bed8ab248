#!/usr/bin/env bash
# Check every instance of data/datasets/example/v1/instances.jsonl against
# the complete project in examples/textkit:
#   1. reverse-applying test_patch and patch to the project gives a tree whose
#      base commit (made as make-instances.sh makes it) has the hash base_commit;
#   2. on that base with test_patch applied, every FAIL_TO_PASS test fails and
#      every PASS_TO_PASS test passes;
#   3. with patch applied too, every FAIL_TO_PASS and PASS_TO_PASS test passes,
#      together they are every test of the project, the tree is the complete
#      project again, and lines/files/functions/top_objects/*_test_points
#      agree with the patch.
#
# usage: examples/verify-instances.sh [INSTANCE_ID...]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tools/lib.sh"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
INSTANCES=$DATASET/instances.jsonl
if [ $# -gt 0 ]; then ids=("$@"); else mapfile -t ids < <(exkit ids "$INSTANCES"); fi

fail=0
for id in "${ids[@]}"; do
	echo "$id"
	d=$WORK/$id
	commit=$(base_tree "$d/tree" "$id")
	want=$(exkit get "$INSTANCES" "$id" base_commit)
	if [ "$commit" != "$want" ]; then
		echo "  base commit is $commit, the instance says $want" >&2
		fail=1
	else
		echo "  base_commit $commit reproduced"
	fi
	g clone -q "$d/tree" "$d/base"
	(cd "$d/tree" && g apply "$d/tree.test_patch.diff")
	exkit expect "$INSTANCES" "$id" base "$d/tree" || fail=1
	(cd "$d/tree" && g apply "$d/tree.patch.diff")
	exkit expect "$INSTANCES" "$id" complete "$d/tree" --base "$d/base" || fail=1
	if ! diff -r -q -x .git -x __pycache__ -x .pytest_cache "$d/tree" "$PROJECT" >/dev/null; then
		echo "  base + test_patch + patch is not the complete project" >&2
		fail=1
	fi
done
if [ "$fail" != 0 ]; then
	echo "FAILED" >&2
	exit 1
fi
echo "all ${#ids[@]} instances verified"
