#!/usr/bin/env bash
# Measures cmd/build on a synthetic project at the issue's scale and prints
# wall time, CPU time and peak memory (max RSS) for a full build (no
# output folder), a rebuild with nothing changed and a rebuild after one
# results.jsonl changed.
#
#   scripts/bench.sh [-instances N] [-submissions M] [-tests files|functions] [-statements real|small] [-runs N] [-keep]
#
# Each kind of build is measured -runs times (default 5): file-system
# times on this machine vary from run to run. Each rebuild after a change
# changes another submission's results.jsonl.
#
# Without -keep the script removes its folder when it ends, and freshly
# deleted files slow down creating new ones for a few minutes (see the
# comment at fresh_output): for back-to-back invocations pass -keep and
# remove the kept folders after the last one.
#
# -tests picks the test ids of the synthetic instances: files (default) as
# in FeatureBench, one fail-to-pass and five pass-to-pass test files per
# instance; functions as in SWE-bench, 3-15 and 5-30 test functions, which
# makes results.jsonl about four times larger.
#
# -statements picks the problem statements: real (default) shaped like
# FeatureBench's, 27 KB on average with a fifth of their Python blocks
# 8 KB or more; small, about 1.5 KB each, as earlier benchmarks had.
#
# Targets (2-core machine, 4,000 instances, 50 submissions, real
# statements): full build <= 5 s, peak memory <= 1 GB, unchanged rebuild
# <= 0.1 s, rebuild after one results.jsonl changed <= 1 s.
set -euo pipefail
trap 'echo "bench.sh: failed at line $LINENO" >&2' ERR

instances=4000
submissions=50
tests=files
statements=real
runs=5
keep=0
while [ $# -gt 0 ]; do
	case "$1" in
	-instances) instances=$2; shift 2 ;;
	-submissions) submissions=$2; shift 2 ;;
	-tests) tests=$2; shift 2 ;;
	-statements) statements=$2; shift 2 ;;
	-runs) runs=$2; shift 2 ;;
	-keep) keep=1; shift ;;
	*) echo "usage: $0 [-instances N] [-submissions M] [-tests files|functions] [-statements real|small] [-runs N] [-keep]" >&2; exit 2 ;;
	esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

# GNU time reports max RSS; the shell keyword does not.
if [ ! -x /usr/bin/time ]; then
	echo "installing Debian's time package for /usr/bin/time" >&2
	sudo=""
	[ "$(id -u)" -ne 0 ] && sudo=sudo
	$sudo apt-get update -qq >&2
	$sudo apt-get install -y -qq time >&2
fi

work=$(mktemp -d /tmp/featbench-bench.XXXXXX)
if [ "$keep" -eq 0 ]; then
	trap 'rm -rf "$work"' EXIT
fi
root=$work/project
bin=$work/build

echo "generating $instances instances, $submissions submissions into $root" >&2
go run ./internal/synth/cmd/synth -repo "$repo" -out "$root" -instances "$instances" -submissions "$submissions" -tests "$tests" -statements "$statements"
# cmd/build looks for the chart library under <root>/.cache/npm: share the
# checkout's install so npm is not run (and not measured) here.
mkdir -p "$repo/.cache/npm" "$root/.cache"
ln -s "$repo/.cache/npm" "$root/.cache/npm"
go build -o "$bin" ./cmd/build

# measure NAME: runs the build under /usr/bin/time and records its figures.
rows=()
measure() {
	local name=$1 log=$work/time-$1.txt
	# Write back the previous run's pages first: the kernel's writeback
	# threads would otherwise take CPU from this run on a 2-core machine.
	sync
	/usr/bin/time -v -o "$log" "$bin" --root "$root" >"$work/out-$name.txt" 2>&1 || {
		cat "$work/out-$name.txt" >&2
		exit 1
	}
	local wall cpu rss
	# "Elapsed (wall clock) time (h:mm:ss or m:ss): 0:01.23"
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s}' "$log")
	# user + system CPU: less sensitive than wall time to other load.
	cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$log")
	rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$log")
	rows+=("$(printf '%-30s %7s %7s %10s   %s' "$name" "$wall" "$cpu" "$rss" "$(head -1 "$work/out-$name.txt")")")
}

# One untimed build first: it installs the chart library into the shared
# npm cache if missing and warms the page cache, so the runs measure the
# build, not npm or the disk.
"$bin" --root "$root" >"$work/warm-up.txt" 2>&1 || {
	cat "$work/warm-up.txt" >&2
	exit 1
}
# A full build starts with no output folder and no build state (both the
# state and the previous site kept for reuse live in .cache/build). They
# are moved aside, not deleted, and removed at the end:
# this machine's ext4 has no journal, and without one ext4 avoids reusing
# an inode freed in the last minute (five while its inode table block is
# unwritten), scanning past each such inode for every file it creates.
# Deleting a site of 4,000 files just before a build makes creating files
# several times slower, which would measure the disk, not the build.
aside=0
fresh_output() {
	aside=$((aside + 1))
	mv "$root/public" "$work/old-output-$aside"
	if [ -d "$root/.cache/build" ]; then
		mv "$root/.cache/build" "$work/old-state-$aside"
	fi
}
load=$(cut -d' ' -f1-3 /proc/loadavg)
for i in $(seq "$runs"); do
	fresh_output
	measure "full-build-$i"
done
for i in $(seq "$runs"); do
	measure "rebuild-unchanged-$i"
done
# One results.jsonl changed, another each time: one result dropped (a
# missing prediction is valid).
mapfile -t all_results < <(find "$root/data/submissions" -name results.jsonl | sort)
for i in $(seq "$runs"); do
	sed -i '$d' "${all_results[$(((i - 1) % ${#all_results[@]}))]}"
	measure "rebuild-one-changed-$i"
done

echo
echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.1f GB", $2 / 1048576}' /proc/meminfo) RAM"
echo "load average before the runs: $load (other processes share the CPUs: compare cpu s too)"
echo "data: $instances instances, $submissions submissions, test ids: $tests, statements: $statements, $(du -sh "$root/data" | cut -f1) under data/"
echo
printf '%-30s %7s %7s %10s   %s\n' "run" "wall s" "cpu s" "maxRSS MB" "build output"
for r in "${rows[@]}"; do
	echo "$r"
done
echo
echo "targets: full build <= 5 s, peak memory <= 1024 MB, unchanged rebuild <= 0.1 s, one results.jsonl changed <= 1 s"
if [ "$keep" -eq 1 ]; then
	echo "kept $work"
fi
