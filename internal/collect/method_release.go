package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/history"
	"github.com/featbench/featbench/internal/llm"
)

// releaseMethod is FeatBench's release-driven method (paper 003, section
// 2.3 and appendix A.2): releases in a date window, their notes sorted
// into features, improvements, fixes and other changes with the pull
// requests each names, the feature pull requests whose code patch
// changes Python and only modifies existing functions (none added or
// removed) and whose test patch has a test that fails before the patch
// and passes after it, and a code-free request ("I want to …") written
// from the pull request as its statement.
type releaseMethod struct {
	kinds []history.Kind // the entry kinds taken (release_kinds)
}

func newReleaseMethod(rc config.Repo) historyMethod {
	m := &releaseMethod{}
	for _, k := range rc.ReleaseKinds {
		m.kinds = append(m.kinds, history.Kind(k))
	}
	return m
}

func (m *releaseMethod) Name() string { return bench.MethodRelease }

// Funnel steps of the release method.
const (
	stepReleases = "releases"
	stepEntries  = "release-notes entries"
	stepWanted   = "entries of the wanted kinds"
	stepPulls    = "pull requests"
	stepModifies = "only modifying existing functions"
)

// Select reads each release's notes (sorted by the LLM when one is
// configured, else by the rules of internal/history) and takes the pull
// requests the entries of the wanted kinds are linked to.
func (m *releaseMethod) Select(ctx context.Context, r *historyRun) ([]*prCandidate, error) {
	h := r.hist
	byNum := map[int]history.Change{}
	for _, c := range h.Pulls {
		byNum[c.Number] = c
	}
	readme := r.readme(ctx)
	var cands []*prCandidate
	taken := map[int]bool{}
	entries, wanted := 0, 0
	for _, rel := range h.Releases {
		notes := rel.Notes
		if r.o.LLM != nil {
			sorted, err := m.sortNotesLLM(ctx, r, rel, readme, byNum)
			if err != nil {
				// The rules decide, and this run's selection is not
				// stored: the next run asks again.
				r.logf("release %s: the LLM failed, the rules sort its notes: %v", rel.Tag, err)
				r.unstored = true
			} else {
				notes = sorted
			}
		}
		if len(notes.Entries) == 0 {
			r.dropSubject(StageSelect, "release "+rel.Tag, "its notes have no entries and it brought no pull request")
			continue
		}
		for i, e := range notes.Entries {
			entries++
			subject := fmt.Sprintf("%s: %s", rel.Tag, history.OneLine(history.Plain(e.Text), 80))
			if !slices.Contains(m.kinds, e.Kind) {
				r.dropSubject(StageSelect, subject, fmt.Sprintf("not wanted: its kind is %s (release_kinds: %s)", e.Kind, kindList(m.kinds)))
				continue
			}
			wanted++
			if len(notes.Links[i]) == 0 {
				r.dropSubject(StageSelect, subject, "names no pull request the history holds")
				continue
			}
			for _, l := range notes.Links[i] {
				ch, ok := byNum[l.Number]
				if !ok || taken[l.Number] {
					continue
				}
				taken[l.Number] = true
				cands = append(cands, &prCandidate{Change: ch, Release: rel.Tag, Entry: e.Text, Kind: e.Kind, Link: l.How})
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Number < cands[j].Number })
	r.step(stepReleases, len(h.Releases))
	r.step(stepEntries, entries)
	r.step(stepWanted, wanted)
	r.step(stepPulls, len(cands))
	return cands, nil
}

func kindList(ks []history.Kind) string {
	var s []string
	for _, k := range ks {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

// Filters: the code patch only modifies existing functions (paper 003:
// "must only modify existing functions, without adding or deleting any").
func (m *releaseMethod) Filters() []prFilter {
	return []prFilter{{Step: stepModifies, Drop: onlyModifies}}
}

// onlyModifies drops a candidate whose code patch adds or removes a
// function, method or class, or modifies none. A function defined inside
// another is part of it.
func onlyModifies(pc *prCandidate) string {
	var added, removed []string
	modified := 0
	for _, f := range sortedFiles(pc.Defs) {
		fd := pc.Defs[f]
		if fd.Error != "" {
			return fd.Error
		}
		for _, d := range fd.Changes.Added {
			added = append(added, d.Name+" ("+f+")")
		}
		for _, d := range fd.Changes.Removed {
			removed = append(removed, d.Name+" ("+f+")")
		}
		for _, d := range fd.Changes.Modified {
			if d.Kind != "class" {
				modified++
			}
		}
	}
	switch {
	case len(added) > 0:
		return "the code patch adds " + countNames(added, "definition")
	case len(removed) > 0:
		return "the code patch removes " + countNames(removed, "definition")
	case modified == 0:
		return "the code patch modifies no existing function"
	}
	return ""
}

// countNames lists definitions in a reason: "definitions: f (a.py)" or
// "definitions: 5 of them, f (a.py), g (a.py), h (b.py) and 2 more", so
// that reasons of one kind share their words before the colon.
func countNames(names []string, what string) string {
	if len(names) == 1 {
		return what + "s: " + names[0]
	}
	shown := names[:min(3, len(names))]
	more := ""
	if len(names) > 3 {
		more = fmt.Sprintf(" and %d more", len(names)-3)
	}
	return fmt.Sprintf("%ss: %d of them, %s%s", what, len(names), strings.Join(shown, ", "), more)
}

func sortedFiles(m map[string]fileDefs) []string {
	out := make([]string, 0, len(m))
	for f := range m {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Accept wants a test of the test patch that fails before the patch and
// passes after it.
func (m *releaseMethod) Accept(pc *prCandidate) string {
	if len(pc.verify.FailToPass) > 0 {
		return ""
	}
	failing := 0
	for _, ro := range pc.verify.After {
		failing += len(ro.Failing)
	}
	if failing > 0 {
		return fmt.Sprintf("no test of the test patch fails before the patch and passes after it (%d tests fail even after it)", failing)
	}
	return "no test of the test patch fails before the patch and passes after it"
}

// Statement writes the user's request: by the LLM when one is configured
// and its answer passes the checks, else by the rules; the request must
// start "I want to", and hold no code and no line of either patch.
func (m *releaseMethod) Statement(ctx context.Context, r *historyRun, pc *prCandidate) (string, string, error) {
	var why string
	if r.o.LLM != nil {
		text, err := m.requestLLM(ctx, r, pc)
		if err == nil {
			if why = checkRequest(text, pc); why == "" {
				return text, "", nil
			}
			r.logf("pull request #%d: the LLM's request is not used: %s", pc.Number, why)
		} else {
			r.logf("pull request #%d: the LLM failed, the rules write the request: %v", pc.Number, err)
		}
	}
	text := requestRules(r.rc.Repository, pc)
	if text == "" {
		return "", "the request cannot be written: neither the release notes' entry nor the title says anything but code", nil
	}
	if w := checkRequest(text, pc); w != "" {
		if why != "" {
			w = why + "; and the rules' request: " + w
		}
		return "", "the request cannot be written without giving the solution away: " + w, nil
	}
	return text, "", nil
}

// Extras: the release method has no fields of its own beyond the
// pull request and the release, which every history-based instance has.
func (m *releaseMethod) Extras(pc *prCandidate, in *bench.Instance) {}

// checkRequest says why a request cannot be a FeatBench statement: it
// does not start "I want to", or it holds code or a line of the patches.
func checkRequest(text string, pc *prCandidate) string {
	if !strings.HasPrefix(strings.TrimSpace(text), "I want to") {
		return "it does not start with \"I want to\""
	}
	if why := hasCode(text); why != "" {
		return why
	}
	return leaks(text, pc.Patches.Code, pc.Patches.Test)
}

// sortNotesLLM has the LLM sort a release's notes into the paper's four
// categories and link each entry to the pull requests it came from,
// among those the release brought. An answer that leaves out an entry,
// names another category or a pull request not listed is an error.
func (m *releaseMethod) sortNotesLLM(ctx context.Context, r *historyRun, rel history.ReleaseNotes, readme string, byNum map[int]history.Change) (history.Notes, error) {
	notes := rel.Notes
	if len(notes.Entries) == 0 {
		return notes, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Project: %s\n\n", r.rc.Repository)
	if readme != "" {
		fmt.Fprintf(&b, "## What the project is (the start of its README)\n\n%s\n\n", readme)
	}
	src := map[string]string{history.NotesChangelog: "its changelog, " + notes.File, history.NotesTag: "the release's tag message",
		history.NotesGenerated: "the titles of the pull requests it brought"}[notes.Source]
	fmt.Fprintf(&b, "## Release %s (%s)\n\nIts notes, from %s:\n\n", rel.Tag, rel.Date.Format("2006-01-02"), src)
	for i, e := range notes.Entries {
		g := ""
		if e.Group != "" {
			g = "[" + e.Group + "] "
		}
		fmt.Fprintf(&b, "%d. %s%s\n", i+1, g, history.OneLine(e.Text, 600))
	}
	b.WriteString("\n## Pull requests the release brought\n\n")
	if len(rel.Pulls) == 0 {
		b.WriteString("(none)\n")
	}
	for _, n := range rel.Pulls {
		fmt.Fprintf(&b, "#%d: %s\n", n, byNum[n].Title)
	}
	b.WriteString(`
Sort every numbered note into exactly one category:
- new_features: something users could not do before: a new function, class, command, option, parameter or capability;
- improvements: something users could already do, made better: faster, more general, more convenient;
- bug_fixes: wrong behaviour corrected, a crash or a wrong error removed;
- other_changes: documentation, packaging, continuous integration, dependencies, supported Python versions, deprecations, removals, refactoring.
For each note, list the pull requests above it came from: those it names by number, and those whose title plainly describes the same change. Leave the list empty when none does, and never list a number that is not above.

Answer with one JSON block and nothing else:
` + "```json\n" + `{"notes": [{"note": 1, "category": "new_features", "pull_requests": [12]}]}
` + "```\n")
	reply, err := r.o.LLM.Chat(ctx, []llm.Message{
		{Role: "system", Content: "You read a software project's release notes, say what kind of change each note describes, and which pull requests it came from."},
		{Role: "user", Content: b.String()},
	})
	if err != nil {
		return notes, err
	}
	raw, err := llm.ExtractJSONBlock(reply.Content)
	if err != nil {
		return notes, fmt.Errorf("reading the answer: %w", err)
	}
	var ans struct {
		Notes []struct {
			Note     int    `json:"note"`
			Category string `json:"category"`
			PRs      []int  `json:"pull_requests"`
		} `json:"notes"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return notes, fmt.Errorf("reading the answer: %w", err)
	}
	kinds := map[string]history.Kind{"new_features": history.Feature, "improvements": history.Improvement, "bug_fixes": history.Fix, "other_changes": history.Other}
	out := notes
	out.Entries = slices.Clone(notes.Entries)
	out.Links = make([][]history.Link, len(notes.Entries))
	seen := map[int]bool{}
	for _, a := range ans.Notes {
		if a.Note < 1 || a.Note > len(notes.Entries) || seen[a.Note] {
			return notes, fmt.Errorf("the answer sorts note %d, which is not a note or is sorted twice", a.Note)
		}
		seen[a.Note] = true
		k, ok := kinds[a.Category]
		if !ok {
			return notes, fmt.Errorf("the answer puts note %d in %q, which is not a category", a.Note, a.Category)
		}
		out.Entries[a.Note-1].Kind = k
		for _, n := range a.PRs {
			if !slices.Contains(rel.Pulls, n) {
				return notes, fmt.Errorf("the answer links note %d to #%d, which the release did not bring", a.Note, n)
			}
			how := history.LinkMatched
			if slices.Contains(notes.Entries[a.Note-1].PRs, n) || notes.Source == history.NotesGenerated {
				how = history.LinkNamed
			}
			out.Links[a.Note-1] = append(out.Links[a.Note-1], history.Link{Number: n, How: how})
		}
	}
	if len(seen) != len(notes.Entries) {
		return notes, fmt.Errorf("the answer sorts %d of %d notes", len(seen), len(notes.Entries))
	}
	return out, nil
}

// requestLLM has the LLM write the user's request from the pull request.
func (m *releaseMethod) requestLLM(ctx context.Context, r *historyRun, pc *prCandidate) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "A change to %s added a feature. Write the request a user of the project could have made for it, so that a developer who never saw the change could build the same behaviour from the request alone.\n\n", r.rc.Repository)
	if pc.Entry != "" {
		fmt.Fprintf(&b, "Release-notes entry: %s\n\n", history.Plain(pc.Entry))
	}
	fmt.Fprintf(&b, "Title: %s\n\n", pc.Title)
	if body := strings.TrimSpace(pc.Body); body != "" {
		fmt.Fprintf(&b, "Description:\n%s\n\n", history.Bound(body, 8<<10))
	}
	fmt.Fprintf(&b, "What the change did, for your understanding only (never quote it):\n```diff\n%s\n```\n\n", history.Bound(pc.Patches.Code, 24<<10))
	if len(pc.verify.FailToPass) > 0 {
		b.WriteString("The behaviour is checked by tests named:\n")
		for _, id := range pc.verify.FailToPass[:min(20, len(pc.verify.FailToPass))] {
			fmt.Fprintf(&b, "- %s\n", id[strings.LastIndex(id, "::")+2:])
		}
		b.WriteString("\n")
	}
	b.WriteString(`Rules:
- Begin with "I want to".
- Say what the user wants to achieve and how the result must behave: what they pass in, the option and parameter names they would use, what comes out, the errors they expect, the edge cases the change handles.
- Keep every requirement the description states.
- Write prose only: no code, no code blocks, no diffs, no file names, no function bodies. Name a function, class or parameter in plain words only where a user would.
- Do not say how to implement it, and do not mention the change, its tests, the release notes or this prompt.
Answer with the request alone.
`)
	reply, err := r.o.LLM.Chat(ctx, []llm.Message{
		{Role: "system", Content: "You write feature requests the way a user of a software library would: in plain language, without code."},
		{Role: "user", Content: b.String()},
	})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(history.Clean(reply.Content)), nil
}

// requestRules writes the user's request without a model: the release
// notes' entry and the pull request's title and description, as prose,
// with their code taken out.
func requestRules(repo string, pc *prCandidate) string {
	var parts []string
	lead := "I want to"
	if proseOf(history.Plain(pc.Entry)) == "" && proseOf(pc.Title) == "" {
		return "" // nothing but code to ask with
	}
	if e := proseOf(history.Plain(pc.Entry)); e != "" {
		parts = append(parts, fmt.Sprintf("%s have this change in %s: %s", lead, repo, sentence(e)))
	} else {
		parts = append(parts, fmt.Sprintf("%s have this change in %s: %s", lead, repo, sentence(proseOf(pc.Title))))
		lead = ""
	}
	if lead != "" {
		if t := proseOf(pc.Title); t != "" && !strings.EqualFold(strings.TrimRight(t, "."), strings.TrimRight(proseOf(history.Plain(pc.Entry)), ".")) {
			parts = append(parts, "In other words: "+sentence(t))
		}
	}
	if body := proseOf(pc.Body); body != "" {
		parts = append(parts, body)
	}
	return strings.Join(parts, "\n\n")
}

func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "!") && !strings.HasSuffix(s, "?") {
		s += "."
	}
	return s
}

// readme is the start of the repository's README at the tip, for the
// LLM's context; "" when there is none.
func (r *historyRun) readme(ctx context.Context) string {
	if r.o.LLM == nil {
		return ""
	}
	files, err := r.git.Files(ctx, r.hist.Tip)
	if err != nil {
		return ""
	}
	for _, f := range files {
		if strings.Contains(f, "/") || !strings.HasPrefix(strings.ToLower(f), "readme") {
			continue
		}
		data, ok, err := r.git.ReadFile(ctx, r.hist.Tip, f)
		if err == nil && ok {
			return history.Bound(history.Clean(string(data)), 3000)
		}
	}
	return ""
}
