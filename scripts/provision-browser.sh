#!/usr/bin/env bash
# Installs what the browser tests need: Debian's chromium (headless), npm,
# and the npm packages package-lock.json pins (the chart library, and
# axe-core, which the browser tests run on every page type), installed with
# `npm ci` where cmd/build and the tests look for them: .cache/npm/<the
# first 16 hex digits of the lockfile's SHA-256>/node_modules, never in the
# tree itself. Idempotent: installs only what is missing, runs `apt-get
# update` only when apt has no usable package lists or an install fails with
# stale lists. Finally checks that chromium really starts headless.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

apt_updated=0
apt_update() {
	if [ "$apt_updated" -eq 0 ]; then
		echo "provision-browser: apt-get update"
		$SUDO apt-get update -qq
		apt_updated=1
	fi
}

# apt_install PKG...: install with --no-install-recommends; refresh the package
# lists first if apt knows no candidate, and once more if the download fails
# (stale lists pointing at superseded .debs).
apt_install() {
	local pkg
	for pkg in "$@"; do
		if ! apt-cache policy "$pkg" 2>/dev/null | grep -q 'Candidate: [^(]'; then
			apt_update
		fi
	done
	echo "provision-browser: apt-get install $*"
	if ! $SUDO apt-get install -y -qq --no-install-recommends "$@"; then
		[ "$apt_updated" -eq 0 ] || return 1
		apt_update
		$SUDO apt-get install -y -qq --no-install-recommends "$@"
	fi
}

if [ ! -x /usr/bin/chromium ]; then
	apt_install chromium
else
	echo "provision-browser: /usr/bin/chromium already installed"
fi

if ! command -v npm >/dev/null 2>&1; then
	apt_install npm
else
	echo "provision-browser: npm already present ($(command -v npm))"
fi

# The lockfile's packages, for the user running this script (the tests
# run as that user too).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
npm_dir="$root/.cache/npm/$(sha256sum "$root/package-lock.json" | cut -c1-16)"
if [ -f "$npm_dir/node_modules/axe-core/axe.min.js" ] && [ -f "$npm_dir/node_modules/echarts/dist/echarts.min.js" ]; then
	echo "provision-browser: npm packages already installed in $npm_dir"
else
	echo "provision-browser: npm ci (package-lock.json) into $npm_dir"
	mkdir -p "$npm_dir"
	cp "$root/package.json" "$root/package-lock.json" "$npm_dir/"
	(cd "$npm_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi

# Smoke test: chromium must start headless and render a blank page.
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
out="$(timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu \
	--disable-background-networking --disable-component-update --no-first-run \
	--user-data-dir="$profile" --dump-dom about:blank 2>"$profile.log")" || {
	echo "provision-browser: chromium failed to start headless:" >&2
	cat "$profile.log" >&2 || true
	rm -f "$profile.log"
	exit 1
}
rm -f "$profile.log"
case "$out" in
*"<body></body>"*) ;;
*)
	echo "provision-browser: unexpected output from chromium --dump-dom: $out" >&2
	exit 1
	;;
esac
echo "provision-browser: OK: $(/usr/bin/chromium --version 2>/dev/null | head -n1)"
