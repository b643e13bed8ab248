package history

import (
	"reflect"
	"strings"
	"testing"
)

// The samples below are written for these tests, each in one style a
// project writes its changelog in.

const keepAChangelog = `# Changelog
All notable changes to this project are documented here.

## [Unreleased]
### Added
- A ` + "`--dry-run`" + ` flag for the sync command.

## [2.1.0] - 2024-03-02
### Added
- ` + "`Widget.resize`" + ` accepts a ` + "`keep_ratio`" + ` keyword (#41).
- Support for reading TOML settings files ([#44](https://example.invalid/acme/widgets/pull/44)).

### Fixed
- Crash when the palette is empty (#39, #40).

### Deprecated
- ` + "`Widget.scale`" + `; use resize.

## [2.0.0] - 2024-01-15
### Changed
- Colours are now RGBA tuples.

[2.1.0]: https://example.invalid/acme/widgets/compare/v2.0.0...v2.1.0
`

const towncrierRST = `=========
Changelog
=========

.. towncrier release notes start

widgets 3.4.0 (2024-06-01)
==========================

Features
--------

- Added a ` + "``tolerance``" + ` argument to :func:` + "`widgets.align`" + `. (#120)
- :class:` + "`~widgets.Grid`" + ` can now be iterated row by row. (#118)


Bugfixes
--------

- Fixed rounding in :meth:` + "`Grid.snap`" + ` for negative
  coordinates. (#121)


Improved Documentation
----------------------

- Rewrote the tutorial. (#119)


widgets 3.3.1 (2024-05-20)
==========================

Bugfixes
--------

- Do not leak file handles in ` + "``load``" + `. (#115)
`

const towncrierMarkdown = `# Release notes

<!-- towncrier release notes start -->

## 0.9.0 (2023-11-30)

### Features

- Streams accept a ` + "`chunk_size`" + `. ([#77](https://example.invalid/o/p/issues/77))

### Misc

- [#78](https://example.invalid/o/p/issues/78)
`

const overlinedRST = `
=======
v1.2.0
=======

* New functions:
    * :func:` + "`chunked_even`" + ` splits into nearly equal parts (thanks to someone)
    * :func:` + "`windowed_complete`" + `

* Changes to existing functions:
    * :func:` + "`first`" + ` was fixed to raise on empty input
    * :func:` + "`peekable`" + ` now supports slicing
      with a step
    * :func:` + "`collapse`" + ` was optimized

=======
v1.1.0
=======

* Updates
    * Python 3.8 support was dropped
`

const plainText = `Release history

New in 0.8.0

*   ` + "`merge_with`" + ` takes a default
*   Fix a crash in get_in when keys are missing
*   Faster groupby

New Authors:

Someone Else


New in 0.7.2

Removed the sandbox module
`

func TestParseChangelogKeepAChangelog(t *testing.T) {
	cl := ParseChangelog("CHANGELOG.md", []byte(keepAChangelog))
	if got := versions(cl); !reflect.DeepEqual(got, []string{"", "2.1.0", "2.0.0"}) {
		t.Fatalf("sections %q", got)
	}
	sec := cl.For("v2.1.0")
	if sec == nil || sec.Heading != "[2.1.0] - 2024-03-02" {
		t.Fatalf("For(v2.1.0) = %+v", sec)
	}
	want := []Entry{
		{Text: "`Widget.resize` accepts a `keep_ratio` keyword (#41).", Group: "Added", Kind: Feature, PRs: []int{41}, Line: 10},
		{Text: "Support for reading TOML settings files ([#44](https://example.invalid/acme/widgets/pull/44)).", Group: "Added", Kind: Feature, PRs: []int{44}, Line: 11},
		{Text: "Crash when the palette is empty (#39, #40).", Group: "Fixed", Kind: Fix, PRs: []int{39, 40}, Line: 14},
		{Text: "`Widget.scale`; use resize.", Group: "Deprecated", Kind: Other, Line: 17},
	}
	if !reflect.DeepEqual(sec.Entries, want) {
		t.Errorf("2.1.0 entries:\n got %+v\nwant %+v", sec.Entries, want)
	}
	if e := cl.For("2.0"); e == nil || len(e.Entries) != 1 || e.Entries[0].Kind != Improvement {
		t.Errorf("2.0.0: %+v (a 'Changed' entry that says nothing clearer is an improvement)", e)
	}
	if cl.For("2.1.1") != nil || cl.For("1") != nil {
		t.Error("a version with no section found one")
	}
}

func TestParseChangelogTowncrierRST(t *testing.T) {
	cl := ParseChangelog("CHANGES.rst", []byte(towncrierRST))
	if got := versions(cl); !reflect.DeepEqual(got, []string{"3.4.0", "3.3.1"}) {
		t.Fatalf("sections %q (the document title is no section)", got)
	}
	sec := cl.For("3.4.0")
	kinds := map[string]Kind{}
	for _, e := range sec.Entries {
		kinds[Plain(e.Text)] = e.Kind
	}
	want := map[string]Kind{
		"Added a tolerance argument to widgets.align.":          Feature,
		"widgets.Grid can now be iterated row by row.":          Feature,
		"Fixed rounding in Grid.snap for negative coordinates.": Fix,
		"Rewrote the tutorial.":                                 Other,
	}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("3.4.0 by plain text:\n got %v\nwant %v", kinds, want)
	}
	for _, e := range sec.Entries {
		if len(e.PRs) != 1 {
			t.Errorf("%q names %v", e.Text, e.PRs)
		}
	}
	if s := cl.For("3.3.1"); len(s.Entries) != 1 || s.Entries[0].Group != "Bugfixes" || s.Entries[0].PRs[0] != 115 {
		t.Errorf("3.3.1: %+v", s)
	}
}

func TestParseChangelogTowncrierMarkdown(t *testing.T) {
	cl := ParseChangelog("NEWS.md", []byte(towncrierMarkdown))
	sec := cl.For("0.9")
	if sec == nil || len(sec.Entries) != 2 {
		t.Fatalf("0.9.0: %+v", sec)
	}
	if e := sec.Entries[0]; e.Kind != Feature || !reflect.DeepEqual(e.PRs, []int{77}) {
		t.Errorf("feature entry %+v", e)
	}
	if e := sec.Entries[1]; e.Kind != Other || e.Group != "Misc" {
		t.Errorf("misc entry %+v", e)
	}
}

func TestParseChangelogNestedLabels(t *testing.T) {
	cl := ParseChangelog("docs/versions.rst", []byte(overlinedRST))
	if got := versions(cl); !reflect.DeepEqual(got, []string{"1.2.0", "1.1.0"}) {
		t.Fatalf("sections %q", got)
	}
	var got []string
	for _, e := range cl.For("1.2.0").Entries {
		got = append(got, string(e.Kind)+" | "+e.Group+" | "+Plain(e.Text))
	}
	want := []string{
		"feature | New functions | chunked_even splits into nearly equal parts (thanks to someone)",
		"feature | New functions | windowed_complete",
		"fix | Changes to existing functions | first was fixed to raise on empty input",
		"feature | Changes to existing functions | peekable now supports slicing with a step",
		"improvement | Changes to existing functions | collapse was optimized",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("1.2.0:\n got %q\nwant %q", got, want)
	}
	if e := cl.For("1.1.0").Entries; len(e) != 1 || e[0].Group != "Updates" || e[0].Kind != Other {
		t.Errorf("1.1.0: a short bullet with items under it is their group: %+v", e)
	}
}

func TestParseChangelogPlainText(t *testing.T) {
	cl := ParseChangelog("release-notes", []byte(plainText))
	if got := versions(cl); !reflect.DeepEqual(got, []string{"0.8.0", "0.7.2"}) {
		t.Fatalf("sections %q", got)
	}
	var got []string
	for _, e := range cl.For("0.8.0").Entries {
		got = append(got, string(e.Kind)+" | "+e.Group+" | "+Plain(e.Text))
	}
	want := []string{
		"feature |  | merge_with takes a default",
		"fix |  | Fix a crash in get_in when keys are missing",
		"improvement |  | Faster groupby",
		"other | New Authors | Someone Else",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("0.8.0:\n got %q\nwant %q", got, want)
	}
	if e := cl.For("0.7.2").Entries; len(e) != 1 || e[0].Text != "Removed the sandbox module" {
		t.Errorf("0.7.2 %+v", e)
	}
}

// A heading line inside a fenced code block is not a heading, and an
// entry's date line is not an entry.
func TestParseChangelogFenceAndDates(t *testing.T) {
	src := "## 1.0.0\n\n_(March 3, 2024)_\n\n- Added `x`\n\n```\n## 0.9.0\n```\n\n## 0.8.0\n\n- Fixed y\n"
	cl := ParseChangelog("CHANGELOG.md", []byte(src))
	if got := versions(cl); !reflect.DeepEqual(got, []string{"1.0.0", "0.8.0"}) {
		t.Fatalf("sections %q", got)
	}
	if e := cl.For("1.0.0").Entries; len(e) != 1 || e[0].Text != "Added `x`" {
		t.Errorf("1.0.0 entries %+v", e)
	}
}

func TestFindChangelog(t *testing.T) {
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{"README.md", "src/x.py", "CHANGELOG.md"}, "CHANGELOG.md"},
		{[]string{"docs/changelog.rst", "CHANGES.rst"}, "CHANGES.rst"},
		{[]string{"HISTORY", "NEWS.md"}, "HISTORY"},
		{[]string{"docs/conf.py", "docs/versions.rst"}, "docs/versions.rst"},
		{[]string{"versions.rst", "setup.py"}, ""}, // versions means a changelog only in docs
		{[]string{"doc/source/history.rst"}, "doc/source/history.rst"},
		{[]string{"release-notes", "tests/CHANGELOG.md"}, "release-notes"},
		{[]string{"pkg/changelog.py"}, ""},
	} {
		if got := FindChangelog(c.files); got != c.want {
			t.Errorf("FindChangelog(%q) = %q, want %q", c.files, got, c.want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for _, c := range []struct {
		tag, version string
		pre, ok      bool
	}{
		{"v1.2.3", "1.2.3", false, true},
		{"1.0", "1.0", false, true},
		{"release-2.4.1", "2.4.1", false, true},
		{"boltons-20.0.0", "20.0.0", false, true},
		{"1.0.1a0", "1.0.1a0", true, true},
		{"v3.0.0rc2", "3.0.0rc2", true, true},
		{"v2.0.0-beta.1", "2.0.0-beta.1", true, true},
		{"1.2.post1", "1.2.post1", false, true},
		{"latest", "", false, false},
		{"v7", "", false, false},
	} {
		v, pre, ok := ParseVersion(c.tag)
		if v != c.version || pre != c.pre || ok != c.ok {
			t.Errorf("ParseVersion(%q) = %q %v %v, want %q %v %v", c.tag, v, pre, ok, c.version, c.pre, c.ok)
		}
	}
	if !SameVersion("1.2", "1.2.0") || SameVersion("1.2", "1.20") || SameVersion("1.2.0", "1.2.0rc1") || !SameVersion("v1.2", "1.2") {
		t.Error("SameVersion")
	}
	if CompareVersions("1.10.0", "1.9.2") <= 0 {
		t.Error("1.10.0 sorts before 1.9.2")
	}
}

func TestReferences(t *testing.T) {
	for _, c := range []struct {
		text string
		want []int
	}{
		{"Fix it (#12)", []int{12}},
		{"PR #3 and pull 4, GH-5", []int{3, 4, 5}},
		{"see https://example.invalid/o/r/pull/77 and /issues/78", []int{77, 78}},
		{":pr:`9` :issue:`10`", []int{9, 10}},
		{"colour #ff0000 and a&#39;b", nil},
		{"version 1.2 (#0)", nil},
	} {
		if got := References(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("References(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func versions(cl *Changelog) []string {
	var out []string
	for _, s := range cl.Sections {
		out = append(out, s.Version)
	}
	return out
}

// A section of a hundred thousand labels gives bounded entries: the
// items read are bounded before the labels' pass, which is quadratic
// (without the bound this test runs for hours).
func TestParseChangelogHuge(t *testing.T) {
	src := "## 1.0\n\n" + strings.Repeat("- x:\n  - y\n", 100_000)
	cl := ParseChangelog("CHANGELOG.md", []byte(src))
	if len(cl.Sections) != 1 || len(cl.Sections[0].Entries) > MaxEntries {
		t.Fatalf("%d sections, %d entries", len(cl.Sections), len(cl.Sections[0].Entries))
	}
}

func TestIdentifiers(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		// What an entry is about: the roles' targets, not its literals.
		{":func:`sample` now accepts ``counts`` and ``strict`` parameters", []string{"sample"}},
		{"Added [`strutils.ellipsize`][strutils.ellipsize] for truncation", []string{"ellipsize", "strutils.ellipsize"}},
		{"The :meth:`~widgets.Grid.snap` method rounds", []string{"snap", "widgets.Grid.snap"}},
		// Without a reference, the names it mentions.
		{"Streams accept a ``chunk_size``", []string{"chunk_size"}},
		{"merge_with takes a default", []string{"merge_with"}},
		{"Faster groupby", nil},
	} {
		if got := Identifiers(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Identifiers(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	// A pull request about another function that shares a parameter's
	// name is not linked.
	prs := []PullRequest{
		{Number: 1, Title: "Add option strict to sort_together"},
		{Number: 2, Title: "Speed up sample()"},
		(PullRequest{Number: 3, Title: "Speed-ups"}).WithChanged("@@ -1 +1 @@ def sample(iterable, k, counts=None):\n-x\n+y\n"),
	}
	e := Entry{Text: ":func:`sample` now accepts ``counts`` and ``strict`` parameters", Kind: Feature}
	if got := link(e, prs); !reflect.DeepEqual(got, []Link{{2, LinkMatched}}) {
		t.Errorf("links %+v, want #2 (by its title; #3 by its code only when no title matches)", got)
	}
	if got := link(e, []PullRequest{prs[0], prs[2]}); !reflect.DeepEqual(got, []Link{{3, LinkMatched}}) {
		t.Errorf("links %+v, want #3 (by its code)", got)
	}
}

func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		":func:`last` now works when ``__reversed__`` is ``None`` (#12)":     "last now works when __reversed__ is None",
		"Added [`strutils.ellipsize`][strutils.ellipsize] for **long** text": "Added strutils.ellipsize for long text",
		"_(July 17, 2026)_": "(July 17, 2026)",
		"See `the docs <https://example.invalid/x>`_ and https://example.invalid": "See the docs and",
		"snake_case_names stay": "snake_case_names stay",
	} {
		if got := Plain(in); got != want {
			t.Errorf("Plain(%q) = %q, want %q", in, got, want)
		}
	}
}
