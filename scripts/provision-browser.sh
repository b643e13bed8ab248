#!/usr/bin/env bash
# Installs what the browser tests need: Debian's chromium (headless) and npm.
# Idempotent: installs only what is missing, runs `apt-get update` only when
# apt has no usable package lists or an install fails with stale lists.
# Finally checks that chromium really starts headless.
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
