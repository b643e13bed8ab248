#!/usr/bin/env bash
# Builds the same synthetic problem statements with FeatBench (cmd/build)
# and with Hugo, alternating, and prints the wall time, CPU time and peak
# memory of each run and how many times faster FeatBench is.
#
#   scripts/bench-hugo.sh [-instances N] [-submissions M] [-rounds N] [-statements real|small|small,real] [-keep]
#
# The statements are internal/synth's FeatureBench-sized ones (27 KB on
# average), or with -statements small the 1.5 KB ones of earlier
# benchmarks; -statements small,real measures both in one run, one after
# the other, each with its own project, and prints both summaries at the
# end. Hugo gets a generated project (internal/synth's WriteHugo, in
# a temporary folder): one page per instance with the same markdown and a
# table of every system's result on it (50 rows by default), its code
# fences highlighted as Hugo does by default (its built-in chroma, inline
# styles), and the least layout a page needs. FeatBench builds its whole
# site from the same data: leaderboards, system pages, charts, downloads,
# and instance pages that also show the gold and test patches highlighted.
#
# Both builds are full builds: each starts without its output folder
# (FeatBench without its build state either), which is moved aside, not
# deleted (see scripts/bench.sh on ext4 and freshly deleted files). Rounds
# alternate which of the two goes first, as the machine's speed drifts.
#
# Hugo is Debian's package (0.111 on Debian 12), installed with apt-get
# when missing.
set -euo pipefail
trap 'echo "bench-hugo.sh: failed at line $LINENO" >&2' ERR

instances=4000
submissions=50
rounds=3
statements=real
keep=0
while [ $# -gt 0 ]; do
	case "$1" in
	-instances) instances=$2; shift 2 ;;
	-submissions) submissions=$2; shift 2 ;;
	-rounds) rounds=$2; shift 2 ;;
	-statements) statements=$2; shift 2 ;;
	-keep) keep=1; shift ;;
	*) echo "usage: $0 [-instances N] [-submissions M] [-rounds N] [-statements real|small|small,real] [-keep]" >&2; exit 2 ;;
	esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
apt_install() {
	echo "installing Debian's $1 package" >&2
	$sudo apt-get update -qq >&2
	# No recommends: hugo's would pull in a Go toolchain.
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$1" >&2
}
command -v hugo >/dev/null || apt_install hugo
[ -x /usr/bin/time ] || apt_install time

work=$(mktemp -d /tmp/featbench-hugo.XXXXXX)
if [ "$keep" -eq 0 ]; then
	trap 'rm -rf "$work"' EXIT
fi
bin=$work/build
go build -o "$bin" ./cmd/build
summaries=()

# bench KIND: the whole measurement on statements of that kind, in
# $work/KIND; appends its summary to summaries.
bench() {
local statements=$1
local top=$work
local work=$top/$statements
mkdir -p "$work"
root=$work/project
site=$work/hugo

echo "generating $instances instances, $submissions submissions into $root, and the Hugo project into $site" >&2
go run ./internal/synth/cmd/synth -repo "$repo" -out "$root" -instances "$instances" -submissions "$submissions" -statements "$statements" -hugo "$site"
# cmd/build finds the chart library under <root>/.cache/npm: share the
# checkout's install, as scripts/bench.sh does.
mkdir -p "$repo/.cache/npm" "$root/.cache"
ln -s "$repo/.cache/npm" "$root/.cache/npm"

featbench=("$bin" --root "$root")
hugo_build=(hugo --quiet --source "$site" --destination "$work/hugo-public" --cacheDir "$work/hugo-cache")

# One untimed build of each: the chart library installed if missing, the
# page cache warm, the binaries loaded. Hugo's takes both CPUs for a
# minute or so, which the load average after it counts: the load before
# it is printed too.
load_before_warm=$(cut -d' ' -f1-3 /proc/loadavg)
"${featbench[@]}" >"$work/warm-featbench.txt" 2>&1 || { cat "$work/warm-featbench.txt" >&2; exit 1; }
"${hugo_build[@]}" >"$work/warm-hugo.txt" 2>&1 || { cat "$work/warm-hugo.txt" >&2; exit 1; }

aside=0
fresh() {
	aside=$((aside + 1))
	case $1 in
	featbench)
		mv "$root/public" "$work/old-featbench-$aside"
		if [ -d "$root/.cache/build" ]; then
			mv "$root/.cache/build" "$work/old-state-$aside"
		fi
		;;
	hugo) mv "$work/hugo-public" "$work/old-hugo-$aside" ;;
	esac
}

# measure NAME ROUND: a full build under /usr/bin/time; sets wall, cpu
# and rss.
measure() {
	local name=$1 log=$work/time-$1-$2.txt
	fresh "$name"
	# Write back the previous run's pages first: the kernel's writeback
	# would otherwise take CPU from this run.
	sync
	local cmd=("${featbench[@]}")
	[ "$name" = hugo ] && cmd=("${hugo_build[@]}")
	/usr/bin/time -v -o "$log" "${cmd[@]}" >"$work/out-$name-$2.txt" 2>&1 || {
		cat "$work/out-$name-$2.txt" >&2
		exit 1
	}
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s}' "$log")
	cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$log")
	rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$log")
}

load=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
fb_walls=()
hugo_walls=()
fb_cpus=()
hugo_cpus=()
for r in $(seq "$rounds"); do
	order="featbench hugo"
	[ $((r % 2)) -eq 0 ] && order="hugo featbench"
	for name in $order; do
		measure "$name" "$r"
		rows+=("$(printf '%-6s %-10s %8s %8s %10s' "$r" "$name" "$wall" "$cpu" "$rss")")
		if [ "$name" = hugo ]; then
			hugo_walls+=("$wall")
			hugo_cpus+=("$cpu")
			hugo_wall=$wall
		else
			fb_walls+=("$wall")
			fb_cpus+=("$cpu")
			fb_wall=$wall
		fi
	done
	rows+=("$(printf '%-6s %-10s %8s' "$r" "ratio" "$(awk -v h="$hugo_wall" -v f="$fb_wall" 'BEGIN {printf "%.1fx", h / f}')")")
done

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
fb_median=$(median "${fb_walls[@]}")
hugo_median=$(median "${hugo_walls[@]}")

{
echo
echo "statements: $statements"
echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.1f GB", $2 / 1048576}' /proc/meminfo) RAM"
echo "load average before the warm-up builds: $load_before_warm; before the timed runs: $load"
echo "data: $instances instances, $submissions submissions, $statements statements, $(du -sh "$root/data" | cut -f1) under data/; Hugo content $(du -sh "$site/content" | cut -f1)"
echo "$(hugo version | cut -d' ' -f1-2)"
echo
printf '%-6s %-10s %8s %8s %10s\n' "round" "build" "wall s" "cpu s" "maxRSS MB"
for row in "${rows[@]}"; do
	echo "$row"
done
echo
echo "median wall: FeatBench $fb_median s, Hugo $hugo_median s: FeatBench $(awk -v h="$hugo_median" -v f="$fb_median" 'BEGIN {printf "%.1f", h / f}')x faster"
fb_cpu=$(median "${fb_cpus[@]}")
hugo_cpu=$(median "${hugo_cpus[@]}")
echo "median CPU (user + system): FeatBench $fb_cpu s, Hugo $hugo_cpu s: $(awk -v h="$hugo_cpu" -v f="$fb_cpu" 'BEGIN {printf "%.1f", h / f}')x less (on a loaded machine the steadier figure)"
} >"$work/summary.txt"
cat "$work/summary.txt"
summaries+=("$work/summary.txt")
}

for kind in ${statements//,/ }; do
	case $kind in
	small | real) bench "$kind" ;;
	*) echo "-statements: $kind is neither small nor real" >&2; exit 2 ;;
	esac
done
if [ "${#summaries[@]}" -gt 1 ]; then
	echo
	echo "=== both, as measured one after the other ==="
	cat "${summaries[@]}"
fi
echo "targets (issue 30): at least 3x less CPU than Hugo on small statements, about 11x on real ones"
if [ "$keep" -eq 1 ]; then
	echo "kept $work"
fi
