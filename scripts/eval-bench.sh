#!/usr/bin/env bash
# Measures cmd/eval on the example dataset: the harness's overhead per
# instance (an instance's wall time minus the time pytest itself reports
# inside the container) and the throughput with 1, 2 and 4 workers, beside
# a bare `docker run` of the same tests in the same image, the least any
# harness can cost.
#
#   scripts/eval-bench.sh [-runs N] [-dataset NAME/VERSION] [-compare REV | -swarm]
#
# -compare REV measures the harness of commit REV (built from a worktree of
# it, on that commit's data) against this checkout's instead, one worker,
# alternating which goes first each round, with the overhead per level:
# the "before and after" of a change to the flow.
#
# -swarm measures the swarm backend (docs/executors.md) on the swarm of
# scripts/provision-swarm.sh ($FEATBENCH_SWARM_* as it prints them, else
# its defaults): --gold with 1, 2 and 3 nodes active (the others drained,
# all made active again at the end), beside the local engine with 1 and 2
# workers; the per-attempt overhead of each (the swarm's extra over a
# local container is the difference); the manager's own cost per attempt,
# measured by internal/swarm's BenchmarkPlacement (services created at
# once: create -> task assigned, serial per service, plus their removal);
# then scripts/eval-bench/simulate.py plays 1,000 attempts over 10 nodes
# from the measured per-attempt costs, with that manager cost as its
# --dispatch.
# The nodes of that swarm share this machine's cores: more nodes add
# slots, not CPUs.
#
# Needs a Docker engine: eval "$(bash scripts/provision-docker.sh)".
set -euo pipefail
trap 'echo "eval-bench.sh: failed at line $LINENO" >&2' ERR

runs=3
dataset=example/v4
compare=
swarm=
while [ $# -gt 0 ]; do
	case "$1" in
	-runs) runs=$2; shift 2 ;;
	-dataset) dataset=$2; shift 2 ;;
	-compare) compare=$2; shift 2 ;;
	-swarm) swarm=1; shift ;;
	*) echo "usage: $0 [-runs N] [-dataset NAME/VERSION] [-compare REV | -swarm]" >&2; exit 2 ;;
	esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
work=$(mktemp -d /tmp/featbench-eval-bench.XXXXXX)
manager=${FEATBENCH_SWARM_MANAGER:-unix:///run/featbench-swarm/node1.sock}
cleanup() {
	[ -z "$compare" ] || git worktree remove --force "$work/before" 2>/dev/null || true
	if [ -n "$swarm" ]; then
		# Every node active again, whatever the bench drained.
		for id in $(docker -H "$manager" node ls -q 2>/dev/null); do
			docker -H "$manager" node update --availability active "$id" >/dev/null 2>&1 || true
		done
	fi
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

if [ -n "$swarm" ]; then
	# The same configuration with backend = "swarm".
	sed "s|^runs = .*|runs = \"$work/runs\"|; s|^\[eval\]\$|[eval]\nbackend = \"swarm\"|" featbench.toml >"$work/featbench-swarm.toml"
	cat >>"$work/featbench-swarm.toml" <<EOF

[eval.swarm]
manager = "$manager"
registry = "${FEATBENCH_SWARM_REGISTRY:-10.77.0.1:5077}"
push_registry = "${FEATBENCH_SWARM_PUSH_REGISTRY:-127.0.0.1:5077}"
EOF
	sproj=(--root "$repo" --config "$work/featbench-swarm.toml")
	dk() { docker -H "$manager" "$@"; }
	# The manager first, then the workers: k nodes = the first k active.
	mapfile -t nodes < <(dk node ls --format '{{.ID}} {{.ManagerStatus}}' | sort -k2r | awk '{print $1}')
	echo "swarm: ${#nodes[@]} nodes at $manager, each reporting $(dk node inspect --format '{{.Description.Resources.NanoCPUs}}' "${nodes[0]}" | awk '{print $1 / 1e9}') CPUs (this machine's: they share them)"
	use_nodes() {
		local k=$1 j
		for j in "${!nodes[@]}"; do
			if [ "$j" -lt "$k" ]; then
				dk node update --availability active "${nodes[$j]}" >/dev/null
			else
				dk node update --availability drain "${nodes[$j]}" >/dev/null
			fi
		done
	}
	# timed NAME RUN-ID ARGS...: one eval run --gold, its line, its costs
	# (each attempt's seconds) kept in costs-<name of the run>.txt.
	timed() {
		local name=$1 id=$2 start end wall p50 pmax count
		shift 2
		start=$(date +%s.%N)
		if ! "$work/eval" run "$@" --dataset "$dataset" --split full --gold --run-id "$id" >"$work/$id.out" 2>&1; then
			tail -20 "$work/$id.out" >&2
			return 1
		fi
		end=$(date +%s.%N)
		wall=$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')
		read -r p50 pmax count _ _ < <(stats "$work/runs/$id")
		printf '%-34s %8.2f %10.1f %12s %12s\n' "$name" "$wall" "$(awk -v n="$count" -v w="$wall" 'BEGIN {print n * 60 / w}')" "$p50 s" "$pmax s"
		python3 -c 'import json, glob, sys; [print(json.load(open(p))["seconds"]) for p in glob.glob(sys.argv[1] + "/*/attempt-*/report.json")]' \
			"$work/runs/$id" >>"$work/costs-${id%%-*}.txt"
	}
	# Warm-up, not counted: the image pushed, and pulled on every node.
	use_nodes "${#nodes[@]}"
	"$work/eval" run "${sproj[@]}" --dataset "$dataset" --split full --gold --run-id warm >"$work/warm.out" 2>&1 || { tail -20 "$work/warm.out" >&2; exit 1; }
	printf '%-34s %8s %10s %12s %12s\n' "run ($dataset, --gold)" "wall s" "inst/min" "overhead p50" "overhead max"
	for i in $(seq "$runs"); do
		timed "local engine, 1 worker" "local1-$i" "${proj[@]}" --workers 1
		timed "local engine, 2 workers" "local2-$i" "${proj[@]}" --workers 2
		for k in $(seq "${#nodes[@]}"); do
			use_nodes "$k"
			timed "swarm, $k node(s)" "swarm$k-$i" "${sproj[@]}"
		done
	done
	use_nodes "${#nodes[@]}"
	echo
	# The swarm's extra per attempt: its median overhead with one node
	# (room for two at once) minus the local engine's with two workers.
	extra=$(python3 -c '
import glob, json, statistics, sys
def over(pat):
    return [r["seconds"] - r["pytest_seconds"] for r in (json.load(open(p)) for p in glob.glob(sys.argv[1] + "/" + pat + "/*/attempt-*/report.json"))]
print("%.2f" % (statistics.median(over("swarm1-*")) - statistics.median(over("local2-*"))))
' "$work/runs")
	echo "the swarm's extra per attempt over a local container (median overhead, 1 node vs 2 local workers): $extra s"
	if awk -v e="$extra" 'BEGIN {exit !(e < 0)}'; then
		# Below zero only by the noise of a shared machine: the swarm
		# does not start containers faster than the local engine.
		echo "(below zero: noise, the load changed between the runs; the simulation takes 0)"
		extra=0
	fi
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	# The manager's part, measured apart (docs/performance.md): bursts of
	# services created at once, each iteration's figures in the log.
	echo "placement (go test -bench Placement ./internal/swarm, $runs round(s) a burst size), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	if ! FEATBENCH_REQUIRE_DOCKER=1 FEATBENCH_REQUIRE_SWARM=1 FEATBENCH_SWARM_MANAGER="$manager" \
		FEATBENCH_SWARM_REGISTRY="${FEATBENCH_SWARM_REGISTRY:-10.77.0.1:5077}" \
		FEATBENCH_SWARM_PUSH_REGISTRY="${FEATBENCH_SWARM_PUSH_REGISTRY:-127.0.0.1:5077}" \
		go test -run '^$' -bench Placement -benchtime "${runs}x" -count 1 ./internal/swarm >"$work/placement.txt" 2>&1; then
		tail -20 "$work/placement.txt" >&2
		exit 1
	fi
	grep '^BenchmarkPlacement/' "$work/placement.txt"
	# simulate.py's dispatch: the manager's serial seconds per attempt,
	# placing it and removing it, from the largest burst with
	# reservations as the executor sets them.
	read -r place remove < <(awk '/^BenchmarkPlacement\/reservations=executor\/services=/ {
		split($1, f, /services=|-/); if (f[2] + 0 < n) next; n = f[2] + 0
		for (i = 3; i < NF; i++) { if ($(i + 1) == "mgr-s/svc") p = $i; if ($(i + 1) == "remove-s/svc") r = $i }
	} END { print p, r }' "$work/placement.txt")
	if [ -z "$place" ] || [ -z "$remove" ]; then
		echo "eval-bench.sh: no placement figures in the benchmark's output" >&2
		tail -20 "$work/placement.txt" >&2
		exit 1
	fi
	dispatch=$(awk -v p="$place" -v r="$remove" 'BEGIN {printf "%.4f", p + r}')
	echo "the manager's serial time per attempt (placement $place s + removal $remove s): $dispatch s"
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "simulation (scripts/eval-bench/simulate.py): 1,000 attempts on 10 nodes, costs of the local runs with 2 workers plus the extra, the measured dispatch"
	for slots in 2 8; do
		python3 scripts/eval-bench/simulate.py --costs "$work/costs-local2.txt" --tasks 1000 --nodes 10 --slots "$slots" --dispatch "$dispatch" --extra "$extra"
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
