# shellcheck shell=bash
# Shared by make-instances.sh, verify-instances.sh and evaluate.sh.

EXAMPLES=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROJECT=$EXAMPLES/textkit
DATASET=$(cd "$EXAMPLES/.." && pwd)/data/datasets/example/v1
SUBMISSIONS=$(cd "$EXAMPLES/.." && pwd)/data/submissions/example/v1

# A Python with pytest runs the tests; PYTHON overrides the choice.
if [ -z "${PYTHON:-}" ]; then
	for p in python3 /usr/bin/python3; do
		if "$p" -c 'import pytest' 2>/dev/null; then PYTHON=$p; break; fi
	done
fi
if [ -z "${PYTHON:-}" ]; then
	echo "need a python3 with pytest installed (or set PYTHON=/path/to/python)" >&2
	exit 1
fi
export PYTHON
exkit() { "$PYTHON" "$EXAMPLES/tools/exkit.py" "$@"; }

# Git without any user or system configuration, and with a fixed identity and
# date, so that diffs look the same everywhere and a base commit's hash
# depends only on its files and its message.
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME="FeatBench" GIT_AUTHOR_EMAIL="bench@featbench.invalid"
export GIT_COMMITTER_NAME="FeatBench" GIT_COMMITTER_EMAIL="bench@featbench.invalid"
export GIT_AUTHOR_DATE="2026-01-01T00:00:00+00:00" GIT_COMMITTER_DATE="2026-01-01T00:00:00+00:00"
g() { git -c init.defaultBranch=main -c core.autocrlf=false -c commit.gpgsign=false "$@"; }

# copy_project DEST: the complete project, without caches and build output.
copy_project() {
	mkdir -p "$1"
	tar -C "$PROJECT" --exclude=__pycache__ --exclude=.pytest_cache --exclude='*.egg-info' \
		--exclude=build --exclude=dist -cf - . | tar -C "$1" -xf -
}

# commit_base DIR ID: commit the tree at DIR as the base of instance ID, a
# root commit; print its hash.
commit_base() {
	(cd "$1" && g init -q && g add -A && g commit -q -m "base of $2" && g rev-parse HEAD)
}

# base_tree DIR ID: the base of instance ID at DIR, a git repository: the
# complete project with the instance's test_patch and patch reverse-applied.
base_tree() {
	copy_project "$1"
	exkit get "$DATASET/instances.jsonl" "$2" patch >"$1.patch.diff"
	exkit get "$DATASET/instances.jsonl" "$2" test_patch >"$1.test_patch.diff"
	(cd "$1" && g apply -R "$1.test_patch.diff" && g apply -R "$1.patch.diff")
	commit_base "$1" "$2"
}
