#!/usr/bin/env bash
# Measures cmd/eval on the example dataset: the harness's overhead per
# instance (an instance's wall time minus the time pytest itself reports
# inside the container) and the throughput with 1, 2 and 4 workers, beside
# a bare `docker run` of the same tests in the same image, the least any
# harness can cost.
#
#   scripts/eval-bench.sh [-runs N]
#
# Needs a Docker engine: eval "$(bash scripts/provision-docker.sh)".
set -euo pipefail
trap 'echo "eval-bench.sh: failed at line $LINENO" >&2' ERR

runs=3
while [ $# -gt 0 ]; do
	case "$1" in
	-runs) runs=$2; shift 2 ;;
	*) echo "usage: $0 [-runs N]" >&2; exit 2 ;;
	esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
work=$(mktemp -d /tmp/featbench-eval-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/eval" ./cmd/eval
# The checkout's data, with runs written here.
sed "s|^runs = .*|runs = \"$work/runs\"|" featbench.toml >"$work/featbench.toml"
proj=(--root "$repo" --config "$work/featbench.toml")

# The environment image first (built once, cached by content).
"$work/eval" images "${proj[@]}" --build --dataset example/v2 >"$work/images.txt"
image=$(awk '{print $2}' "$work/images.txt" | head -1)

# stats RUN: per-instance overhead (median, max) and the run's wall time.
stats() {
	python3 - "$1" <<'EOF'
import json, glob, statistics, sys
run = sys.argv[1]
over = []
for p in glob.glob(run + "/*/attempt-*/report.json"):
    r = json.load(open(p))
    over.append(r["seconds"] - r["pytest_seconds"])
print("%.2f %.2f %d" % (statistics.median(over), max(over), len(over)))
EOF
}

echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.1f GB", $2 / 1048576}' /proc/meminfo) RAM; docker $(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-26s %8s %10s %12s %12s\n' "run" "wall s" "inst/min" "overhead p50" "overhead max"
n=$(grep -c . data/datasets/example/v2/instances.jsonl)
for i in $(seq "$runs"); do
	for w in 1 2 4; do
		start=$(date +%s.%N)
		"$work/eval" run "${proj[@]}" --dataset example/v2 --split full --gold --run-id "w$w-$i" --workers "$w" >/dev/null 2>&1
		end=$(date +%s.%N)
		wall=$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')
		read -r p50 pmax count < <(stats "$work/runs/w$w-$i")
		printf '%-26s %8.2f %10.1f %12s %12s\n' "eval run --gold, $w worker(s)" "$wall" "$(awk -v n="$count" -v w="$wall" 'BEGIN {print n * 60 / w}')" "$p50 s" "$pmax s"
	done
	# The peer: one bare `docker run` per instance, running all its test
	# files in the same image with no patch to apply (the complete
	# project passes them all), no limits, no log kept.
	start=$(date +%s.%N)
	for k in $(seq "$n"); do
		docker run --rm --network none "$image" python3 -m pytest -q -p no:cacheprovider tests >/dev/null
	done
	end=$(date +%s.%N)
	wall=$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')
	printf '%-26s %8.2f %10.1f %12s %12s\n' "bare docker run, 1 at once" "$wall" "$(awk -v n="$n" -v w="$wall" 'BEGIN {print n * 60 / w}')" "-" "-"
done
echo
echo "target: harness overhead per instance, median <= 1 s with one worker"
