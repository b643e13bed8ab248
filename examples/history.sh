#!/usr/bin/env bash
# Gives the example library (examples/textkit) a git history the
# history-based collection methods can read: three releases (annotated
# tags), a changelog in Keep a Changelog's style naming the pull requests,
# and pull requests merged as merge commits ("Merge pull request #N from
# …") and as squash commits ("… (#N)"). The pull requests are the patches
# in examples/history/, written for this project: reversed from the
# current textkit, newest first, they give the first release; applied in
# order, they give textkit as it is, plus the changelog.
#
# Names, e-mails and dates are fixed, so the same script gives the same
# commits, with the same hashes, on any machine:
#
#   bash examples/history.sh [DEST]     # default: .cache/textkit-history
#
# It prints the last commit's hash (what `commit` in [[collect.repo]]
# names) and refuses to write into an existing DEST.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/examples/textkit
prs=$root/examples/history
dest=${1:-$root/.cache/textkit-history}
if [ -e "$dest" ]; then
	echo "history.sh: $dest exists; remove it or name another folder" >&2
	exit 1
fi
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
	GIT_AUTHOR_NAME="FeatBench example" GIT_AUTHOR_EMAIL=example@featbench.invalid \
	GIT_COMMITTER_NAME="FeatBench example" GIT_COMMITTER_EMAIL=example@featbench.invalid \
	TZ=UTC LC_ALL=C
day=0
tick() { # the next day's date, for the next commit or tag
	day=$((day + 1))
	GIT_AUTHOR_DATE=$(printf '2025-01-%02dT10:00:00Z' "$day")
	GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
	export GIT_AUTHOR_DATE GIT_COMMITTER_DATE
}
g() { git -C "$dest" -c commit.gpgsign=false -c tag.gpgsign=false -c init.defaultBranch=main "$@"; }

# The sources, without caches and build leftovers.
(cd "$src" && find . -type f ! -path '*/__pycache__/*' ! -path '*/.pytest_cache/*' ! -path '*.egg-info/*' ! -name '*.pyc' -print0 |
	tar --null -T - -cf -) | tar -xf - -C "$dest"
g init -q
# Back to the first release.
for p in 07-hanging-indent 05-wrap-break-long-words 04-is-roman 03-slugify-max-length; do
	g apply -R "$prs/$p.diff"
done

changelog() { # the changelog with these release sections (newest first)
	{
		printf '# Changelog\n\nAll notable changes to textkit are documented in this file.\n'
		for section in "$@"; do
			printf '\n%s\n' "$section"
		done
	} >"$dest/CHANGELOG.md"
}
r010='## [0.1.0] - 2025-01-01

### Added

- The first release: slugs, case conversion, wrapping, Roman numerals and more.'
changelog "$r010"
tick
g add -A
g commit -q -m "Initial import of textkit"
g tag -a v0.1.0 -m "textkit 0.1.0"

merged() { # merged NUMBER BRANCH PATCH TITLE BODY: a pull request merged with a merge commit
	g checkout -q -b "$2"
	g apply "$prs/$3.diff"
	tick
	g add -A
	g commit -q -m "$4"
	g checkout -q main
	tick
	g merge -q --no-ff -m "Merge pull request #$1 from featbench/$2" -m "$4" -m "$5" "$2"
	g branch -q -D "$2"
}
squashed() { # squashed NUMBER PATCH TITLE BODY: a pull request merged as one commit
	g apply "$prs/$2.diff"
	tick
	g add -A
	g commit -q -m "$3 (#$1)" -m "$4"
}

merged 3 slugify-max-length 03-slugify-max-length "Cut slugs to a maximum length" \
	"Long titles make long URLs. slugify and unique_slug take max_length: the slug is cut to at most that many characters, at a separator when there is one."
squashed 4 04-is-roman "Add roman.is_roman: tell whether a text is a Roman numeral" \
	"roman.is_roman answers True for a canonical numeral from_roman reads, in either case, and False for anything else."
r020='## [0.2.0] - 2025-01-06

### Added

- `slugify` and `unique_slug` take a `max_length` (#3).
- `roman.is_roman` tells whether a text is a canonical Roman numeral (#4).'
changelog "$r020" "$r010"
tick
g add -A
g commit -q -m "Release 0.2.0"
g tag -a v0.2.0 -m "textkit 0.2.0"

merged 5 wrap-long-words 05-wrap-break-long-words "Keep long words whole when asked" \
	"wrap cuts a word longer than the width into pieces. With break_long_words=False it keeps such a word whole, alone on a line longer than the width."
r030='## [0.3.0] - 2025-01-14

### Added

- `wrap.wrap` can keep long words whole: `break_long_words` (#5).
- `wrap.hanging_indent` and `wrap.wrap_paragraphs` (#7).

### Changed

- The changelog says what each release added (#6).'
changelog "## [Unreleased]

### Added

- \`wrap.wrap\` can keep long words whole: \`break_long_words\` (#5)." "$r020" "$r010"
tick
g add -A
g commit -q -m "Keep a changelog section for what is not released yet (#6)" -m "Only the changelog changes."
merged 7 hanging-indent 07-hanging-indent "Add hanging indents and paragraph filling" \
	"hanging_indent fills a text after a label such as 'Note: ', lining the other lines up with it; wrap_paragraphs fills each paragraph on its own."
changelog "$r030" "$r020" "$r010"
tick
g add -A
g commit -q -m "Release 0.3.0"
g tag -a v0.3.0 -m "textkit 0.3.0"

# The last release is textkit as it is.
if ! diff -r -q -x .git -x CHANGELOG.md -x __pycache__ -x .pytest_cache -x '*.egg-info' "$src" "$dest" >/dev/null; then
	echo "history.sh: the history does not end at examples/textkit:" >&2
	diff -r -q -x .git -x CHANGELOG.md -x __pycache__ -x .pytest_cache -x '*.egg-info' "$src" "$dest" >&2 || true
	exit 1
fi
g rev-parse HEAD
