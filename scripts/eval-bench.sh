#!/usr/bin/env bash
# Measures cmd/eval on the example dataset: the harness's overhead per
# instance (an instance's wall time minus the time pytest itself reports
# inside the container) and the throughput with 1, 2 and 4 workers, beside
# a bare `docker run` of the same tests in the same image, the least any
# harness can cost.
#
#   scripts/eval-bench.sh [-runs N] [-dataset NAME/VERSION] [-compare REV]
#
# -compare REV measures the harness of commit REV (built from a worktree of
# it, on that commit's data) against this checkout's instead, one worker,
# alternating which goes first each round, with the overhead per level:
# the "before and after" of a change to the flow.
#
# Needs a Docker engine: eval "$(bash scripts/provision-docker.sh)".
set -euo pipefail
trap 'echo "eval-bench.sh: failed at line $LINENO" >&2' ERR

runs=3
dataset=example/v4
compare=
while [ $# -gt 0 ]; do
	case "$1" in
	-runs) runs=$2; shift 2 ;;
	-dataset) dataset=$2; shift 2 ;;
	-compare) compare=$2; shift 2 ;;
	*) echo "usage: $0 [-runs N] [-dataset NAME/VERSION] [-compare REV]" >&2; exit 2 ;;
	esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
work=$(mktemp -d /tmp/featbench-eval-bench.XXXXXX)
cleanup() {
	[ -z "$compare" ] || git worktree remove --force "$work/before" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/eval" ./cmd/eval
# The checkout's data, with runs written here.
sed "s|^runs = .*|runs = \"$work/runs\"|" featbench.toml >"$work/featbench.toml"
proj=(--root "$repo" --config "$work/featbench.toml")

# The environment image first (built once, cached by content).
"$work/eval" images "${proj[@]}" --build --dataset "$dataset" >"$work/images.txt"
image=$(awk '{print $2}' "$work/images.txt" | head -1)

# stats RUN: per-instance overhead (median, max), the number of
# instances, and the median overhead at level 1 and at level 2.
stats() {
	python3 - "$1" <<'EOF'
import json, glob, statistics, sys
run = sys.argv[1]
over, by_level = [], {1: [], 2: []}
for p in glob.glob(run + "/*/attempt-*/report.json"):
    r = json.load(open(p))
    o = r["seconds"] - r["pytest_seconds"]
    over.append(o)
    by_level.setdefault(r["level"], []).append(o)
med = lambda xs: "%.2f" % statistics.median(xs) if xs else "-"
print("%.2f %.2f %d %s %s" % (statistics.median(over), max(over), len(over), med(by_level[1]), med(by_level[2])))
EOF
}

echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.1f GB", $2 / 1048576}' /proc/meminfo) RAM; docker $(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
# The peer: one bare `docker run` per instance, running all its test
# files in the same image with no patch to apply (the complete project
# passes them all), no limits, no log kept.
bare() {
	local start end wall
	start=$(date +%s.%N)
	for k in $(seq "$n"); do
		docker run --rm --network none "$image" python3 -m pytest -q -p no:cacheprovider tests >/dev/null
	done
	end=$(date +%s.%N)
	wall=$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')
	printf '%-30s %8.2f %10.1f %12s %12s\n' "bare docker run, 1 at once" "$wall" "$(awk -v n="$n" -v w="$wall" 'BEGIN {print n * 60 / w}')" "-" "-"
	bare_wall=$wall
}

n=$(grep -c . "data/datasets/$dataset/instances.jsonl")
if [ -n "$compare" ]; then
	git worktree add --quiet --detach "$work/before" "$compare"
	(cd "$work/before" && go build -o "$work/eval-before" ./cmd/eval)
	sed "s|^runs = .*|runs = \"$work/runs-before\"|" "$work/before/featbench.toml" >"$work/featbench-before.toml"
	printf '%-30s %8s %10s %12s %12s %8s %8s\n' "run ($dataset, 1 worker)" "wall s" "inst/min" "overhead p50" "overhead max" "level 1" "level 2"
	declare -A walls
	for i in $(seq "$runs"); do
		echo "round $i, load average $(cut -d' ' -f1-3 /proc/loadavg)"
		order=(before after)
		[ $((i % 2)) -eq 1 ] || order=(after before)
		for which in "${order[@]}"; do
			if [ "$which" = before ]; then
				bin=$work/eval-before args=(--root "$work/before" --config "$work/featbench-before.toml") out=$work/runs-before
			else
				bin=$work/eval args=("${proj[@]}") out=$work/runs
			fi
			start=$(date +%s.%N)
			"$bin" run "${args[@]}" --dataset "$dataset" --split full --gold --run-id "$which-$i" >/dev/null 2>&1
			end=$(date +%s.%N)
			wall=$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')
			read -r p50 pmax count l1 l2 < <(stats "$out/$which-$i")
			printf '%-30s %8.2f %10.1f %12s %12s %8s %8s\n' "$which" "$wall" "$(awk -v n="$count" -v w="$wall" 'BEGIN {print n * 60 / w}')" "$p50 s" "$pmax s" "$l1 s" "$l2 s"
			walls[$which]=$wall
		done
		bare
		# The round's harnesses against its bare run: the figure that
		# matters on a shared machine, whose load changes between rounds.
		awk -v b="${walls[before]}" -v a="${walls[after]}" -v w="$bare_wall" 'BEGIN {printf "%-30s before %.2fx, after %.2fx\n", "wall / bare", b / w, a / w}'
	done
	exit 0
fi

printf '%-30s %8s %10s %12s %12s\n' "run ($dataset)" "wall s" "inst/min" "overhead p50" "overhead max"
for i in $(seq "$runs"); do
	for w in 1 2 4; do
		start=$(date +%s.%N)
		"$work/eval" run "${proj[@]}" --dataset "$dataset" --split full --gold --run-id "w$w-$i" --workers "$w" >/dev/null 2>&1
		end=$(date +%s.%N)
		wall=$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')
		read -r p50 pmax count _ _ < <(stats "$work/runs/w$w-$i")
		printf '%-30s %8.2f %10.1f %12s %12s\n' "eval run --gold, $w worker(s)" "$wall" "$(awk -v n="$count" -v w="$wall" 'BEGIN {print n * 60 / w}')" "$p50 s" "$pmax s"
	done
	bare
done
echo
echo "target: harness overhead per instance, median <= 1 s with one worker"
