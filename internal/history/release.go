package history

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Release is a tag that names a version: a release of the repository.
type Release struct {
	Tag     string    `json:"tag"`
	Version string    `json:"version"` // the tag's version, without a prefix such as "v"
	Commit  string    `json:"commit"`
	Date    time.Time `json:"date"` // the tagger's date, or the commit's for a lightweight tag
	// Message is an annotated tag's message (its signature left out):
	// some projects write their release notes there. "" for a
	// lightweight tag.
	Message string `json:"message,omitempty"`
	// Commits are the commits this release brought: reachable from its
	// tag and from none of the releases dated before it, newest first.
	Commits []string `json:"commits"`
}

// Window bounds releases by date: Since and Until are days (inclusive),
// zero for no bound. A benchmark collected again from a later window stays
// ahead of what models were trained on (paper 003's evolving benchmark).
type Window struct {
	Since, Until time.Time
}

// Contains reports whether t is inside the window, by its UTC day.
func (w Window) Contains(t time.Time) bool {
	d := t.UTC().Format(time.DateOnly)
	if !w.Since.IsZero() && d < w.Since.UTC().Format(time.DateOnly) {
		return false
	}
	if !w.Until.IsZero() && d > w.Until.UTC().Format(time.DateOnly) {
		return false
	}
	return true
}

// SkippedTag is a tag that is not a release, and why.
type SkippedTag struct {
	Tag    string `json:"tag"`
	Reason string `json:"reason"`
}

// versionPattern is a version inside a tag or a heading: digits separated
// by dots, at least two parts, and an optional pre-release or local suffix.
var versionPattern = regexp.MustCompile(`(?i)(?:^|[^0-9A-Za-z.])v?(\d+(?:\.\d+)+)((?:[-._]?(?:a|b|c|rc|alpha|beta|pre|preview|dev|post)[-._]?\d*)*)(?:$|[^0-9A-Za-z])`)

// preRelease matches a version suffix that marks a pre-release.
var preRelease = regexp.MustCompile(`(?i)(a|b|c|rc|alpha|beta|pre|preview|dev)`)

// ParseVersion finds the version a tag names: "v1.2.3", "release-1.2",
// "boltons-20.0.0" and "1.0.1a0" all name one. pre reports a pre-release
// (alpha, beta, candidate, development); ok is false for a tag that names
// no version.
func ParseVersion(tag string) (version string, pre, ok bool) {
	m := versionPattern.FindStringSubmatch(tag)
	if m == nil {
		return "", false, false
	}
	return m[1] + m[2], m[2] != "" && preRelease.MatchString(m[2]), true
}

// maxTag bounds a tag's name (bench's release field holds at most 200
// bytes).
const maxTag = 200

// Releases lists the releases reachable from tip whose date is in the
// window, oldest first. Tags that name no version, name a pre-release, or
// point at no commit are skipped (and listed): a pre-release's changes are
// its final release's. Each release's commits are computed against every
// release dated before it, in or out of the window, so that a tag on a
// side branch (not on tip's first-parent line) gets what it brought and
// nothing its neighbours did.
func (g Git) Releases(ctx context.Context, tip string, w Window) ([]Release, []SkippedTag, error) {
	out, err := g.run(ctx, 0, "for-each-ref", "--format=%(objectname) %(objecttype) %(*objecttype) %(creatordate:unix) %(refname)", "refs/tags")
	if err != nil {
		return nil, nil, err
	}
	var all []Release
	var skipped []SkippedTag
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, " ", 5)
		if len(f) != 5 {
			continue
		}
		name := strings.TrimPrefix(f[4], "refs/tags/")
		if len(name) > maxTag || name != Clean(name) {
			skipped = append(skipped, SkippedTag{Tag: OneLine(name, 80), Reason: "the tag's name is too long or holds control characters"})
			continue
		}
		version, pre, ok := ParseVersion(name)
		switch {
		case !ok:
			skipped = append(skipped, SkippedTag{Tag: name, Reason: "names no version"})
			continue
		case pre:
			skipped = append(skipped, SkippedTag{Tag: name, Reason: "a pre-release: its changes are counted in the final release"})
			continue
		}
		commit, message := f[0], ""
		if f[1] == "tag" {
			if message, err = g.tagMessage(ctx, f[0]); err != nil {
				return nil, nil, err
			}
			// An annotated tag (perhaps of a tag): what it finally names.
			if commit, err = g.Resolve(ctx, f[0]); err != nil {
				skipped = append(skipped, SkippedTag{Tag: name, Reason: "names no commit"})
				continue
			}
		} else if f[1] != "commit" {
			skipped = append(skipped, SkippedTag{Tag: name, Reason: "names a " + f[1] + ", not a commit"})
			continue
		}
		sec, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			skipped = append(skipped, SkippedTag{Tag: name, Reason: "has no date"})
			continue
		}
		if ok, err := g.IsAncestor(ctx, commit, tip); err != nil {
			return nil, nil, err
		} else if !ok {
			skipped = append(skipped, SkippedTag{Tag: name, Reason: "not reachable from the collected commit"})
			continue
		}
		all = append(all, Release{Tag: name, Version: version, Commit: commit, Date: time.Unix(sec, 0).UTC(), Message: message})
	}
	// Oldest first; tags of one date by version, then name, so that the
	// order never depends on git's.
	slices.SortFunc(all, func(a, b Release) int {
		if c := a.Date.Compare(b.Date); c != 0 {
			return c
		}
		if c := CompareVersions(a.Version, b.Version); c != 0 {
			return c
		}
		return cmp.Compare(a.Tag, b.Tag)
	})
	// Two tags of one commit (v1.0 and 1.0): the first is the release.
	seen := map[string]string{}
	var rels []Release
	for _, r := range all {
		if first, ok := seen[r.Commit]; ok {
			skipped = append(skipped, SkippedTag{Tag: r.Tag, Reason: "names the same commit as " + first})
			continue
		}
		seen[r.Commit] = r.Tag
		rels = append(rels, r)
	}
	var in []Release
	for i, r := range rels {
		if !w.Contains(r.Date) {
			continue
		}
		args := []string{r.Commit}
		for _, e := range rels[:i] {
			args = append(args, "^"+e.Commit)
		}
		r.Commits, err = g.RevList(ctx, args...)
		if err != nil {
			return nil, nil, fmt.Errorf("the commits of %s: %w", r.Tag, err)
		}
		in = append(in, r)
	}
	slices.SortFunc(skipped, func(a, b SkippedTag) int { return cmp.Compare(a.Tag, b.Tag) })
	return in, skipped, nil
}

// CompareVersions orders two versions by their numeric parts ("1.10" after
// "1.9"), then as text.
func CompareVersions(a, b string) int {
	pa, pb := numericParts(a), numericParts(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if c := cmp.Compare(pa[i], pb[i]); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(pa), len(pb)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

func numericParts(v string) []int {
	var out []int
	for _, p := range strings.Split(v, ".") {
		n, err := strconv.Atoi(strings.TrimLeft(p, "vV"))
		if err != nil {
			break
		}
		out = append(out, n)
	}
	return out
}

// SameVersion reports whether two versions are one: "1.2" and "1.2.0"
// are, "1.2" and "1.20" are not.
func SameVersion(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	pa, pb := numericParts(a), numericParts(b)
	sa, sb := versionSuffix(a), versionSuffix(b)
	if len(pa) == 0 || len(pb) == 0 || !strings.EqualFold(sa, sb) {
		return false
	}
	for len(pa) < len(pb) {
		pa = append(pa, 0)
	}
	for len(pb) < len(pa) {
		pb = append(pb, 0)
	}
	return slices.Equal(pa, pb)
}

var suffixPattern = regexp.MustCompile(`^[vV]?[\d.]*\d`)

func versionSuffix(v string) string {
	return strings.TrimLeft(suffixPattern.ReplaceAllString(v, ""), "-._")
}

// maxTagMessage bounds a tag's message.
const maxTagMessage = 16 << 10

// tagMessage reads an annotated tag's message, without its signature.
func (g Git) tagMessage(ctx context.Context, obj string) (string, error) {
	raw, err := g.run(ctx, maxObject, "cat-file", "tag", obj)
	if err != nil {
		return "", err
	}
	_, msg, _ := strings.Cut(string(raw), "\n\n")
	if i := strings.Index(msg, "-----BEGIN "); i >= 0 {
		msg = msg[:i]
	}
	return Bound(Clean(msg), maxTagMessage), nil
}
