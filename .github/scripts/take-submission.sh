#!/usr/bin/env bash
# The submission gate's first step, run from the BASE branch's checkout by
# .github/workflows/submission.yml: it reads the pull request's changes as
# git data (never running anything of the pull request), refuses a pull
# request from a fork that changes anything but data/submissions/ and
# data/logos/, and copies the changed data into the base checkout, where the
# base's own tools then check it.
#
#   take-submission.sh BASE_DIR HEAD_DIR BASE_SHA HEAD_SHA FORK OUT
#
# BASE_DIR: the base branch's checkout (the files are taken into it);
# HEAD_DIR: a git repository holding both commits (the pull request's
# checkout); FORK: "true" for a pull request from another repository;
# OUT: a file to write the changed submission folders to, relative to the
# project root, one per line.
#
# Taken: data/submissions/** and data/logos/** (for a pull request from a
# branch of this repository also data/datasets/** and data/checked.toml, so
# that the base's lock and the attestations' hashes are checked against
# them). Never taken: the code, the workflows, featbench.toml and
# data/datasets.lock.toml: the gate runs the base's, whatever the pull
# request says.
set -euo pipefail

if [ $# -ne 6 ]; then
	echo "usage: take-submission.sh BASE_DIR HEAD_DIR BASE_SHA HEAD_SHA FORK OUT" >&2
	exit 2
fi
base=$1 head=$2 base_sha=$3 head_sha=$4 fork=$5 out=$6

# esc makes a path safe in a workflow command's message (::error::…) and
# escp in its properties (file=…): a file name may hold a newline that
# would start a command of its own.
esc() {
	local s=${1//'%'/'%25'}
	s=${s//$'\r'/'%0D'}
	s=${s//$'\n'/'%0A'}
	printf '%s' "$s"
}
escp() {
	local s
	s=$(esc "$1")
	s=${s//':'/'%3A'}
	s=${s//','/'%2C'}
	printf '%s' "$s"
}

taken() {
	case $1 in
	data/submissions/* | data/logos/*) return 0 ;;
	data/datasets/* | data/checked.toml) [ "$fork" != true ] ;;
	*) return 1 ;;
	esac
}

# Changes since the merge base, renames as a deletion and an addition (so
# that a file moved out of a protected place counts there too), raw so
# that each change has its modes, NUL-separated so that no file name can
# split a record.
changes=$(mktemp)
trap 'rm -f "$changes"' EXIT
if ! git -C "$head" merge-base "$base_sha" "$head_sha" >/dev/null; then
	echo "::error::The pull request's head $head_sha shares no history with the base $base_sha: rebase it on the base branch."
	exit 1
fi
git -C "$head" diff --raw -z --no-renames --no-ext-diff --no-textconv "$base_sha...$head_sha" >"$changes"

refused=0 n=0
declare -A dirs=()
while IFS= read -r -d '' meta && IFS= read -r -d '' path; do
	n=$((n + 1))
	# meta is ":oldmode newmode oldsha newsha status".
	read -r _ new_mode _ _ status <<<"$meta"
	if ! taken "$path"; then
		if [ "$fork" = true ]; then
			echo "::error file=$(escp "$path")::This pull request comes from a fork and changes $(esc "$path"). A submission may change only data/submissions/ (and add logos under data/logos/): code, workflows, datasets, data/datasets.lock.toml, data/checked.toml and featbench.toml are the maintainers'. Remove this change from the pull request, or open an issue for it."
			refused=1
		else
			echo "::notice file=$(escp "$path")::Not taken into the gate: $(esc "$path") is checked by CI (ci.yml) and reviewed by its code owners; the gate runs the base branch's tools, lock and configuration."
		fi
		continue
	fi
	if [ "$status" != D ] && [ "$new_mode" != 100644 ] && [ "$new_mode" != 100755 ]; then
		echo "::error file=$(escp "$path")::$(esc "$path") is not a regular file (git mode $new_mode: a symbolic link or submodule): data/ may hold only regular files and folders."
		refused=1
		continue
	fi
	dest="$base/$path"
	if [ "$status" = D ]; then
		rm -f -- "$dest"
	else
		mkdir -p -- "$(dirname -- "$dest")"
		# From git's objects, not the pull request's files on disk.
		git -C "$head" cat-file blob "$head_sha:$path" >"$dest"
	fi
	case $path in
	data/submissions/*/*/*/*/*)
		IFS=/ read -r d1 d2 d3 d4 d5 d6 _ <<<"$path"
		dirs["$d1/$d2/$d3/$d4/$d5/$d6"]=1
		;;
	esac
done <"$changes"

if [ "$refused" = 1 ]; then
	exit 1
fi
: >"$out"
for d in "${!dirs[@]}"; do
	# A submission the pull request removes has nothing to validate; a
	# folder name build --check refuses is never passed on.
	if [ -d "$base/$d" ] && [[ $d =~ ^[A-Za-z0-9/._-]+$ ]]; then
		printf '%s\n' "$d" >>"$out"
	fi
done
sort -o "$out" "$out"
echo "take-submission: $n changed files; submission folders to validate: $(wc -l <"$out")"
