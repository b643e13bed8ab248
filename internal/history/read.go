package history

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Options say what Read reads.
type Options struct {
	Tip    string // the commit history is read up to (a hash or any revision)
	Window Window // releases, and pull requests, by date
	// Changelog is the changelog's path in the repository; "" finds it
	// (FindChangelog) at the tip.
	Changelog string
	// Export, when set, is a JSON file of pull requests in GitHub's REST
	// shape (ReadExport), read instead of the commit messages.
	Export string
	// IsTest says which paths are test code, for Split.
	IsTest func(path string) bool
}

// History is what Read found: the releases in the window with their notes
// and pull requests, and every pull request merged in the window.
type History struct {
	Tip       string `json:"tip"`
	Changelog string `json:"changelog,omitempty"`
	// Releases are oldest first.
	Releases []ReleaseNotes `json:"releases"`
	// Pulls are every pull request reachable from the tip and merged in
	// the window (whether or not a release in the window brought it), by
	// number, with its patches.
	Pulls []Change `json:"pulls"`
	// Left out, and why: tags that are no releases, commits that looked
	// like pull requests but were not taken.
	SkippedTags []SkippedTag `json:"skipped_tags,omitempty"`
	Skipped     []Skipped    `json:"skipped,omitempty"`
}

// ReleaseNotes is a release with its notes and the pull requests it
// brought.
type ReleaseNotes struct {
	Release
	Notes Notes `json:"notes"`
	// NotesReason says why the notes are not the changelog's, when not.
	NotesReason string `json:"notes_reason,omitempty"`
	Pulls       []int  `json:"pulls"` // the numbers of the pull requests it brought
}

// Change is a pull request with its patch split into code and tests.
type Change struct {
	PullRequest
	Patches Patches `json:"patches"`
	// Problem, when set, is why the pull request cannot be a task
	// whatever a method wants of it (its diff cannot be read, its merge's
	// parents are the wrong way round).
	Problem string `json:"problem,omitempty"`
}

// Read reads a repository's history up to the tip: releases in the
// window, each with its notes (NotesFor) and the pull requests it brought,
// and every pull request merged in the window with its diff split by
// IsTest. Every list is sorted, so the same repository and options give
// the same History.
func Read(ctx context.Context, g Git, o Options) (*History, error) {
	if o.IsTest == nil {
		return nil, fmt.Errorf("history: no IsTest")
	}
	tip, err := g.Resolve(ctx, o.Tip)
	if err != nil {
		return nil, err
	}
	h := &History{Tip: tip}
	rels, skippedTags, err := g.Releases(ctx, tip, o.Window)
	if err != nil {
		return nil, err
	}
	h.SkippedTags = skippedTags

	// Every pull request reachable from the tip, from the commits or the
	// export.
	var prs []PullRequest
	if o.Export != "" {
		all, err := ReadExport(o.Export)
		if err != nil {
			return nil, err
		}
		for _, pr := range all {
			anchored, reason, err := g.anchor(ctx, pr, tip)
			if err != nil {
				return nil, err
			}
			if reason != "" {
				h.Skipped = append(h.Skipped, Skipped{Commit: pr.Merge, Reason: fmt.Sprintf("pull request #%d: %s", pr.Number, reason)})
				continue
			}
			prs = append(prs, anchored)
		}
	} else {
		hashes, err := g.RevList(ctx, tip)
		if err != nil {
			return nil, err
		}
		commits, err := g.Commits(ctx, hashes)
		if err != nil {
			return nil, err
		}
		var skipped []Skipped
		prs, skipped = PullRequests(commits)
		h.Skipped = append(h.Skipped, skipped...)
	}
	byMerge := map[string]int{}
	for i, pr := range prs {
		byMerge[pr.Merge] = i
	}

	// The changes: each pull request in a release of the window or merged
	// in it, diffed and split.
	want := map[int]bool{}
	relPRs := make([][]int, len(rels))
	for i, r := range rels {
		for _, c := range r.Commits {
			if j, ok := byMerge[c]; ok {
				relPRs[i] = append(relPRs[i], prs[j].Number)
				want[prs[j].Number] = true
			}
		}
		slices.Sort(relPRs[i])
	}
	changes := map[int]*Change{}
	for _, pr := range prs {
		inWindow := o.Window.Contains(pr.Date)
		if !want[pr.Number] && !inWindow {
			continue
		}
		ch, err := g.change(ctx, pr, o.IsTest)
		if err != nil {
			return nil, err
		}
		changes[pr.Number] = ch
		if inWindow {
			h.Pulls = append(h.Pulls, *ch)
		}
	}
	slices.SortFunc(h.Pulls, func(a, b Change) int { return a.Number - b.Number })

	// The notes, from the changelog at the tip (or at the release's own
	// commit when the tip's has no section for it).
	clPath := o.Changelog
	if clPath == "" {
		files, err := g.Files(ctx, tip)
		if err != nil {
			return nil, err
		}
		clPath = FindChangelog(files)
	}
	h.Changelog = clPath
	var atTip *Changelog
	if clPath != "" {
		if atTip, err = g.changelogAt(ctx, tip, clPath); err != nil {
			return nil, err
		}
	}
	for i, r := range rels {
		cl := atTip
		if cl.For(r.Version) == nil && clPath != "" {
			if own, err := g.changelogAt(ctx, r.Commit, clPath); err != nil {
				return nil, err
			} else if own.For(r.Version) != nil {
				cl = own
			}
		}
		var mine []PullRequest
		for _, n := range relPRs[i] {
			ch := changes[n]
			mine = append(mine, ch.PullRequest.WithChanged(ch.Patches.Code))
		}
		notes, reason := NotesFor(r, cl, mine)
		h.Releases = append(h.Releases, ReleaseNotes{Release: r, Notes: notes, NotesReason: reason, Pulls: relPRs[i]})
	}
	// A pull request a release brought but merged outside the window is
	// still its release's.
	for _, r := range h.Releases {
		for _, n := range r.Pulls {
			if !slices.ContainsFunc(h.Pulls, func(c Change) bool { return c.Number == n }) {
				h.Pulls = append(h.Pulls, *changes[n])
			}
		}
	}
	slices.SortFunc(h.Pulls, func(a, b Change) int { return a.Number - b.Number })
	return h, nil
}

// changelogAt parses the changelog file of a commit; nil when the commit
// has none.
func (g Git) changelogAt(ctx context.Context, commit, file string) (*Changelog, error) {
	data, ok, err := g.ReadFile(ctx, commit, file)
	if err != nil || !ok {
		return nil, err
	}
	return ParseChangelog(file, data), nil
}

// change diffs a pull request and splits its patch; a diff that cannot be
// read or split is the change's Problem, not an error.
func (g Git) change(ctx context.Context, pr PullRequest, isTest func(string) bool) (*Change, error) {
	ch := &Change{PullRequest: pr}
	if pr.From == FromMerge {
		commits, err := g.Commits(ctx, []string{pr.Merge})
		if err != nil {
			return nil, err
		}
		why, err := g.CheckParents(ctx, pr, commits[0])
		if err != nil {
			return nil, err
		}
		if why != "" {
			ch.Problem = why
			return ch, nil
		}
	}
	diff, err := g.Diff(ctx, pr.Base, pr.Merge)
	if err != nil {
		if strings.Contains(err.Error(), ErrTooLarge.Error()) {
			ch.Problem = fmt.Sprintf("its diff is larger than %d bytes", MaxDiff)
			return ch, nil
		}
		return nil, err
	}
	if ch.Patches, err = Split(diff, isTest); err != nil {
		ch.Problem = OneLine(err.Error(), 300)
	}
	return ch, nil
}

// anchor places an exported pull request in the repository: its merge
// commit must be there and reachable from the tip; its patch is what that
// commit brought (the diff from its first parent), which is the base.
// GitHub's base.sha is the base branch's head when the pull request was
// last updated, which can lack what was merged before it; the merge
// commit's first parent has it.
func (g Git) anchor(ctx context.Context, pr PullRequest, tip string) (PullRequest, string, error) {
	if _, ok, _ := g.objectExists(ctx, pr.Merge); !ok {
		return pr, "its merge commit " + short(pr.Merge) + " is not in the repository", nil
	}
	if ok, err := g.IsAncestor(ctx, pr.Merge, tip); err != nil {
		return pr, "", err
	} else if !ok {
		return pr, "its merge commit " + short(pr.Merge) + " is not reachable from the collected commit", nil
	}
	cs, err := g.Commits(ctx, []string{pr.Merge})
	if err != nil {
		return pr, "", err
	}
	if len(cs[0].Parents) == 0 {
		return pr, "its merge commit has no parent", nil
	}
	pr.Base = cs[0].Parents[0]
	return pr, "", nil
}

func (g Git) objectExists(ctx context.Context, hash string) (string, bool, error) {
	if !hexHash.MatchString(hash) {
		return "", false, nil
	}
	if err := g.command(ctx, "cat-file", "-e", hash+"^{commit}").Run(); err != nil {
		return "", false, nil
	}
	return hash, true, nil
}
