package site

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/metrics"
	"github.com/featbench/featbench/templates"
)

// systemPage is one system on a dataset version: who it is, its figures on
// each split (with the number of instances each mean is taken over), its
// per-repository breakdown, its failure modes and its result on every
// instance. It returns the page's key (viewKey) and its rendering: after
// one submission changed, the other systems' pages are often the same.
func (b *builder) systemPage(ds *bench.Dataset, entries []*entry) (uint64, func() (templ.Component, []byte, error), error) {
	s := b.systemView(ds, entries)
	render := func() (templ.Component, []byte, error) {
		return afterRender(templates.SystemPageView(s), func() {
			for _, t := range s.Outcomes {
				b.rows.outcomes.put(t.Rows)
			}
		}), nil, nil
	}
	key, err := viewKey(b.key, s)
	if err != nil {
		key = 0 // no key: rendered every time
	}
	return key, render, nil
}

// systemView is a system page's view.
func (b *builder) systemView(ds *bench.Dataset, entries []*entry) *templates.SystemPage {
	// The newest submission describes the system (loading checked that
	// the submissions of one slug agree on who it is).
	latest := entries[0].sub
	for _, e := range entries {
		if e.sub.Date.After(latest.Date) {
			latest = e.sub
		}
	}
	u := b.m.u
	s := &templates.SystemPage{
		Page: b.frame(u.system(ds, latest.Slug), ds, latest.Name+" on "+ds.DisplayName(), "Results of "+latest.Name+" on "+ds.DisplayName()+".",
			templates.Link{Title: "Home", URL: u.base},
			templates.Link{Title: ds.DisplayName(), URL: u.dataset(ds)},
			templates.Link{Title: latest.Name}),
		Name: latest.Name, Scaffold: latest.Scaffold, Model: latest.Model,
		Organisations: strings.Join(latest.Organisations, ", "), Orgs: b.m.orgs(latest.Organisations),
		OpenWeights: latest.OpenWeights, OpenScaffold: latest.OpenScaffold, Reference: latest.Reference,
		SiteURL: latest.SiteURL, ReportURL: latest.ReportURL, Notes: latest.Notes, Tags: latest.Tags,
		Dataset: ds.DisplayName(), DatasetURL: u.dataset(ds),
	}
	s.Links = submissionLinks(latest, "")
	marks := b.cfg.Board(ds.Name, ds.Version).Marks
	for _, text := range slices.Sorted(maps.Keys(marks)) {
		if strings.Contains(s.Name, text) {
			s.Marks = append(s.Marks, templates.Mark{N: len(s.Marks) + 1, Text: text, Explanation: marks[text]})
		}
	}
	var results [][]bench.Result
	var subs []*bench.Submission
	for _, e := range entries {
		bd := b.m.board(ds, e.sub.Split)
		r := e.row
		s.Checked = s.Checked || e.sub.Checked
		sp := templates.SystemSplit{
			Split: e.sub.Split, BoardURL: u.board(ds, e.sub.Split), Date: r.Date,
			Rank: r.Rank, RankLo: r.RankLo, RankHi: r.RankHi, Of: len(bd.ranked()), Resolved: r.Resolved, Passed: r.Passed,
			TokensIn: r.TokensIn, TokensOut: r.TokensOut, TokensN: r.TokensN, Cost: r.Cost, CostN: r.CostN,
			Measured:   e.sub.MeasuredTokens(),
			Instances:  ds.SplitSize(e.sub.Split),
			L1Resolved: r.L1Resolved, L1Passed: r.L1Passed, L2Resolved: r.L2Resolved, L2Passed: r.L2Passed,
			FV: r.FV, RT: r.RT, File: r.File, Attempts: e.sub.Attempts, AnyResolved: r.AnyResolved,
			Reported: r.Reported, Source: r.Source, Checked: e.sub.Checked,
		}
		sp.Links = append(sp.Links, b.fileLinks(e.sub)...)
		if len(entries) > 1 {
			sp.Links = append(sp.Links, submissionLinks(e.sub, latest.Folder)...)
		}
		s.Splits = append(s.Splits, sp)
		if e.sub.Split == b.repoSplit(ds) || s.Repos == nil {
			if t := b.repoScores(e, false); t != nil {
				s.Repos = t
			}
		}
		results = append(results, e.sub.Results)
		subs = append(subs, e.sub)
		if e.sub.PerInstance() {
			s.Outcomes = append(s.Outcomes, b.outcomes(ds, e.sub))
		}
	}
	// One number of decimals a column, over the splits.
	for _, col := range []func(*templates.SystemSplit) *templates.Cell{
		func(sp *templates.SystemSplit) *templates.Cell { return &sp.Resolved },
		func(sp *templates.SystemSplit) *templates.Cell { return &sp.Passed },
		func(sp *templates.SystemSplit) *templates.Cell { return &sp.L1Resolved },
		func(sp *templates.SystemSplit) *templates.Cell { return &sp.L1Passed },
		func(sp *templates.SystemSplit) *templates.Cell { return &sp.L2Resolved },
		func(sp *templates.SystemSplit) *templates.Cell { return &sp.L2Passed },
		func(sp *templates.SystemSplit) *templates.Cell { return &sp.FV },
		func(sp *templates.SystemSplit) *templates.Cell { return &sp.RT },
		func(sp *templates.SystemSplit) *templates.Cell { return &sp.File },
	} {
		cells := make([]*templates.Cell, len(s.Splits))
		for i := range s.Splits {
			cells[i] = col(&s.Splits[i])
		}
		alignDecimals(cells...)
	}
	s.RankBy = ds.Ranking()
	for _, sp := range s.Splits {
		s.HasLevels = s.HasLevels || !sp.L1Resolved.Missing || !sp.L1Passed.Missing || !sp.L2Resolved.Missing || !sp.L2Passed.Missing
		s.HasEval = s.HasEval || !sp.FV.Missing || !sp.RT.Missing || !sp.File.Missing
		s.HasTokens = s.HasTokens || !sp.TokensIn.Missing || !sp.TokensOut.Missing
		s.HasCost = s.HasCost || !sp.Cost.Missing
	}
	s.Flags = flagCounts(subs)
	for _, c := range metrics.FailureModes(results...) {
		s.FailureModes = append(s.FailureModes, templates.Count{Label: c.Label, N: c.N})
	}
	if len(s.FailureModes) > 0 {
		ch := failureChart("chart-failures-"+latest.Slug, "Failure modes of "+latest.Name,
			"Error types in its failing tests, over all its results: the exception behind each failed fail-to-pass or pass-to-pass test.",
			metrics.FailureModes(results...))
		s.FailureChart = &ch
		s.Page.Charts = true
	}
	// The default split's table open, or the first.
	for i := range s.Outcomes {
		s.Outcomes[i].Open = s.Outcomes[i].Split == b.repoSplit(ds)
	}
	if len(s.Outcomes) == 1 {
		s.Outcomes[0].Open = true
	}
	return s
}

// submissionLinks are the links a submission's metadata gives to what
// stands behind its figures. A submission whose folder is skip gives
// none: the system's own links show them once.
func submissionLinks(s *bench.Submission, skip string) []templates.Link {
	if s.Folder == skip {
		return nil
	}
	var out []templates.Link
	for _, l := range []struct{ title, url string }{
		{"logs", s.LogsURL}, {"trajectories", s.TrajectoriesURL}, {"predictions", s.PredictionsURL},
	} {
		if l.url != "" {
			out = append(out, templates.Link{Title: l.title, URL: l.url})
		}
	}
	return out
}

// outcomes is a submission's result on every instance of its split, in
// the dataset's order; an instance without a result is listed as such.
func (b *builder) outcomes(ds *bench.Dataset, s *bench.Submission) templates.OutcomeTable {
	t := templates.OutcomeTable{Split: s.Split}
	ins := ds.SplitInstances(s.Split)
	leads := b.outcomeLeads(ds, s.Split)
	t.Rows = b.rows.outcomes.get(len(ins))
	for i, in := range ins {
		o := templates.Outcome{Lead: leads[i]}
		if r := s.ResultOf(in); r == nil {
			o.NoPrediction = true
		} else {
			// Thousands of rows on dozens of pages: no fmt here.
			o.Resolved, o.Applied, o.Empty = r.Resolved, r.PatchApplied, emptyPrediction(r)
			o.F2PPassed, o.F2PTotal = len(r.F2PPassed), len(in.FailToPass)
			o.P2PPassed, o.P2PTotal = len(r.P2PPassed), len(in.PassToPass)
			o.Failures = failures(r, o.Empty)
			o.Flags = flagViews(r)
		}
		t.Rows = append(t.Rows, o)
	}
	lists := make([][]templates.Flag, 0, len(t.Rows))
	for _, o := range t.Rows {
		lists = append(lists, o.Flags)
	}
	t.Legend = flagLegend(lists...)
	return t
}

// emptyModeName is the failure mode cmd/eval gives an empty prediction
// where it has nothing to test (level 2).
const emptyModeName = "EmptyPatch"

// emptyPrediction reports whether a result is of an empty prediction.
// cmd/eval grades one differently by level: at level 1 the tests run on
// the base as it is ("applied", no file touched, the base's failures); at
// level 2 nothing was built ("not applied", EmptyPatch). Pages show both
// as an empty patch. An applied prediction that touched no file, by no
// apply method, and resolved nothing is one.
func emptyPrediction(r *bench.Result) bool {
	if r.PatchApplied {
		return r.FilesChanged == 0 && r.ApplyMethod == "" && !r.Resolved
	}
	return slices.Contains(r.FailureModes, emptyModeName)
}

// failures is a result's failure modes as shown: an empty prediction's
// are EmptyPatch at either level, with the failures of the base's tests
// where they ran.
func failures(r *bench.Result, empty bool) string {
	modes := strings.Join(r.FailureModes, ", ")
	if !empty || modes == emptyModeName {
		return modes
	}
	if modes == "" {
		return emptyModeName
	}
	return emptyModeName + " (the tests ran on the base: " + modes + ")"
}

// fileTitles name a submission's published files on its system page.
var fileTitles = map[string]string{
	bench.ResultsFile:      "per-instance results",
	bench.PredictionsFile:  "predictions",
	bench.LogsFile:         "test logs",
	bench.TrajectoriesFile: "trajectories",
}

// publishedFile reports whether a file of a submission folder is
// published with the site: one of fileTitles, but not the trajectories
// of a dataset whose statements are private (the prompts quote them).
func publishedFile(s *bench.Submission, name string) bool {
	if fileTitles[name] == "" {
		return false
	}
	return name != bench.TrajectoriesFile || !s.Dataset.KeepsStatementsPrivate()
}

// fileLinks are the files a submission folder holds beside its results
// (predictions, logs, trajectories), published with the site.
func (b *builder) fileLinks(s *bench.Submission) []templates.Link {
	var out []templates.Link
	for _, f := range s.Files {
		if !publishedFile(s, f.Name) {
			continue
		}
		title := fileTitles[f.Name]
		out = append(out, templates.Link{Title: title + " (" + humanBytes(f.Size) + ")", URL: b.m.u.file(s, f.Name)})
	}
	return out
}

// humanBytes is a file size as people read it.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 0, 64) + " kB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
