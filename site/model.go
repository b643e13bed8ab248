package site

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/metrics"
	"github.com/featbench/featbench/templates"
)

// urls builds every site URL from the base path, so a GitHub Pages project
// subpath works. Each URL is a folder ending in "/" or a file.
type urls struct{ base string }

func (u urls) dataset(ds *bench.Dataset) string {
	return u.base + "datasets/" + ds.Name + "/" + ds.Version + "/"
}
func (u urls) board(ds *bench.Dataset, split string) string {
	return u.base + "leaderboard/" + ds.Name + "/" + ds.Version + "/" + split + "/"
}

// instance is an instance's task page, "" where the dataset publishes
// none (its statements are private, or it is only described): a link
// to it shows the id as text.
func (u urls) instance(ds *bench.Dataset, id string) string {
	if !ds.PublishesStatements() {
		return ""
	}
	return u.dataset(ds) + "instances/" + id + "/"
}
func (u urls) system(ds *bench.Dataset, slug string) string {
	return u.dataset(ds) + "systems/" + slug + "/"
}
func (u urls) repos(ds *bench.Dataset) string  { return u.dataset(ds) + "repos/" }
func (u urls) charts(ds *bench.Dataset) string { return u.dataset(ds) + "charts/" }
func (u urls) compare(ds *bench.Dataset, split string) string {
	return u.dataset(ds) + "compare/" + split + "/"
}
func (u urls) logo(key, ext string) string { return u.base + "logos/" + key + "." + ext }

// file is a submission's published file (predictions, logs), beside its
// system's page.
func (u urls) file(s *bench.Submission, name string) string {
	return u.system(s.Dataset, s.Slug) + s.Split + "/" + name
}

func (u urls) download(ds *bench.Dataset, split string) string {
	return u.dataset(ds) + split + ".jsonl"
}

// reposSplit is a split's section of the per-repository page.
func (u urls) reposSplit(ds *bench.Dataset, split string) string {
	return u.repos(ds) + "#" + splitAnchor(split)
}

// splitAnchor is the HTML id of a split's section on the per-repository
// page; split names are safe names ([A-Za-z0-9._-]).
func splitAnchor(split string) string { return "split-" + split }

// entry is one submission on its board, with its computed figures.
type entry struct {
	sub     *bench.Submission
	score   metrics.Score            // per-instance submissions only
	levels  map[int]metrics.Score    // per-instance submissions only
	methods map[string]metrics.Score // per-instance submissions only, by collection method
	row     templates.Row
}

// ref reports whether the entry is a reference row (gold, empty): shown
// apart, not ranked, not counted in instance difficulty.
func (e *entry) ref() bool { return e.sub.Reference }

// board is a dataset version's split with its entries: ranked systems
// best first, then the reference rows.
type board struct {
	ds      *bench.Dataset
	split   string
	entries []*entry
	// ranged: the ranked rows carry bootstrap ranges of their ranks
	// (Row.RankLo, RankHi); reported is how many ranked systems have only
	// reported aggregates, which rule ranges out.
	ranged   bool
	methods  []string // the collection methods of the split, when it mixes them
	reported int
}

// ranked returns the board's ranked entries, best first.
func (b *board) ranked() []*entry {
	var out []*entry
	for _, e := range b.entries {
		if !e.ref() {
			out = append(out, e)
		}
	}
	return out
}

// model is everything computed from the data once, before rendering.
type model struct {
	cfg    config.Site
	data   *bench.Data
	u      urls
	boards []*board // by dataset, then split in manifest order
}

func newModel(cfg config.Site, data *bench.Data, u urls) (*model, error) {
	m := &model{cfg: cfg, data: data, u: u}
	for _, ds := range data.Datasets {
		for _, sp := range ds.Splits {
			b, err := m.newBoard(ds, sp.Name)
			if err != nil {
				return nil, err
			}
			m.boards = append(m.boards, b)
		}
	}
	return m, nil
}

func (m *model) board(ds *bench.Dataset, split string) *board {
	for _, b := range m.boards {
		if b.ds == ds && b.split == split {
			return b
		}
	}
	return nil
}

// rankKeys are the two figures a board ranks by, the dataset's ranking
// figure first.
func rankKeys(ds *bench.Dataset, r templates.Row) (first, second float64) {
	if ds.Ranking() == bench.RankPassed {
		return r.Passed.Sort, r.Resolved.Sort
	}
	return r.Resolved.Sort, r.Passed.Sort
}

func (m *model) newBoard(ds *bench.Dataset, split string) (*board, error) {
	b := &board{ds: ds, split: split}
	instances := ds.SplitInstances(split)
	byLevel := map[int][]*bench.Instance{}
	byMethod := map[string][]*bench.Instance{}
	for _, in := range instances {
		byLevel[in.Level] = append(byLevel[in.Level], in)
		byMethod[in.MethodOrDefault()] = append(byMethod[in.MethodOrDefault()], in)
	}
	if len(byMethod) > 1 {
		b.methods = datasetMethods(instances)
	}
	for _, s := range m.data.SubmissionsFor(ds, split) {
		e := &entry{sub: s}
		if s.PerInstance() {
			e.score = metrics.Compute(instances, s.ResultOf)
			e.levels = map[int]metrics.Score{}
			for lvl, ins := range byLevel {
				e.levels[lvl] = metrics.Compute(ins, s.ResultOf)
			}
			e.methods = map[string]metrics.Score{}
			for _, meth := range b.methods {
				e.methods[meth] = metrics.Compute(byMethod[meth], s.ResultOf)
			}
		}
		e.row = m.row(e)
		for _, meth := range b.methods {
			c := missing()
			if sc, ok := e.methods[meth]; ok && sc.Instances > 0 {
				c = pctCell(sc.ResolvedRate(), 1)
			}
			e.row.Methods = append(e.row.Methods, c)
		}
		b.entries = append(b.entries, e)
	}
	// Reference rows after the ranked ones; each group best first by the
	// dataset's ranking figure, then the other, then name. A missing
	// figure sorts last.
	sort.SliceStable(b.entries, func(i, j int) bool {
		ei, ej := b.entries[i], b.entries[j]
		if ei.ref() != ej.ref() {
			return !ei.ref()
		}
		a, c := ei.row, ej.row
		if a.Resolved.Missing != c.Resolved.Missing || a.Passed.Missing != c.Passed.Missing {
			am, cm := rankMissing(ds, a), rankMissing(ds, c)
			if am != cm {
				return !am
			}
		}
		a1, a2 := rankKeys(ds, a)
		c1, c2 := rankKeys(ds, c)
		if a1 != c1 {
			return a1 > c1
		}
		if a2 != c2 {
			return a2 > c2
		}
		return a.Name < c.Name
	})
	alignColumns(b.entries)
	// Equal figures share a rank; reference rows have none.
	var prev *entry
	rank := 0
	for _, e := range b.entries {
		if e.ref() {
			e.row.Rank = 0
			continue
		}
		rank++
		e.row.Rank = rank
		if prev != nil {
			p1, p2 := rankKeys(ds, prev.row)
			e1, e2 := rankKeys(ds, e.row)
			if p1 == e1 && p2 == e2 {
				e.row.Rank = prev.row.Rank
			}
		}
		prev = e
	}
	if err := b.rankRanges(instances); err != nil {
		return nil, fmt.Errorf("ranking %s %s: %w", ds.Key(), split, err)
	}
	return b, nil
}

// alignColumns gives each figure column of a board one number of
// decimals (alignDecimals), over its ranked and reference rows.
func alignColumns(entries []*entry) {
	for _, col := range rowFigures {
		cells := make([]*templates.Cell, len(entries))
		for i, e := range entries {
			cells[i] = col(&e.row)
		}
		alignDecimals(cells...)
	}
	for k := 0; len(entries) > 0 && k < len(entries[0].row.Methods); k++ {
		var cells []*templates.Cell
		for _, e := range entries {
			if k < len(e.row.Methods) {
				cells = append(cells, &e.row.Methods[k])
			}
		}
		alignDecimals(cells...)
	}
}

// rowFigures are a row's plain-number figure columns.
var rowFigures = []func(*templates.Row) *templates.Cell{
	func(r *templates.Row) *templates.Cell { return &r.Resolved },
	func(r *templates.Row) *templates.Cell { return &r.Passed },
	func(r *templates.Row) *templates.Cell { return &r.L1Resolved },
	func(r *templates.Row) *templates.Cell { return &r.L1Passed },
	func(r *templates.Row) *templates.Cell { return &r.L2Resolved },
	func(r *templates.Row) *templates.Cell { return &r.L2Passed },
	func(r *templates.Row) *templates.Cell { return &r.FV },
	func(r *templates.Row) *templates.Cell { return &r.RT },
	func(r *templates.Row) *templates.Cell { return &r.File },
	func(r *templates.Row) *templates.Cell { return &r.AnyResolved },
}

// rankRanges gives every ranked row the range of ranks its per-instance
// results are consistent with (metrics.RankRanges over the dataset's
// ranking figure). A board with a system that has only reported
// aggregates gets none: its figures cannot be resampled.
func (b *board) rankRanges(instances []*bench.Instance) error {
	ranked := b.ranked()
	for _, e := range ranked {
		if !e.sub.PerInstance() {
			b.reported++
		}
	}
	if len(ranked) == 0 || b.reported > 0 {
		return nil
	}
	// Per instance, the figure the board ranks by on a per-attempt basis:
	// the share of attempts that resolved it, or the mean share of F2P
	// tests the attempts passed. Rows without the figure sort last and
	// get no range; the others are bootstrapped among themselves.
	passed := b.ds.Ranking() == bench.RankPassed
	var withFig []*entry
	for _, e := range ranked {
		if !rankMissing(b.ds, e.row) {
			withFig = append(withFig, e)
		}
	}
	if len(withFig) == 0 {
		return nil
	}
	scores := make([][]float64, len(withFig))
	for s, e := range withFig {
		row := make([]float64, len(instances))
		for i, in := range instances {
			r := e.sub.ResultOf(in)
			if passed {
				row[i], _ = metrics.PassedShare(in, r)
			} else {
				row[i] = metrics.ResolvedShare(r)
			}
		}
		scores[s] = row
	}
	ranges, err := metrics.RankRanges(scores, metrics.RankResamples, metrics.RankSeed, metrics.RankLevel)
	if err != nil {
		return err
	}
	for s, e := range withFig {
		// The range holds the rank shown, which the second figure may
		// have settled where the first was tied.
		e.row.RankLo = min(ranges[s].Lo, e.row.Rank)
		e.row.RankHi = max(ranges[s].Hi, e.row.Rank)
	}
	for _, e := range withFig {
		for _, o := range withFig {
			if o != e && e.row.RankLo <= o.row.RankHi && o.row.RankLo <= e.row.RankHi {
				e.row.Tied++
			}
		}
	}
	b.ranged = true
	return nil
}

// rankMissing reports whether the row lacks the dataset's ranking figure.
func rankMissing(ds *bench.Dataset, r templates.Row) bool {
	if ds.Ranking() == bench.RankPassed {
		return r.Passed.Missing
	}
	return r.Resolved.Missing
}

func (m *model) row(e *entry) templates.Row {
	s := e.sub
	r := templates.Row{
		Reference:     s.Reference,
		Name:          s.Name,
		Slug:          s.Slug,
		URL:           m.u.system(s.Dataset, s.Slug),
		Scaffold:      s.Scaffold,
		Model:         s.Model,
		Organisations: strings.Join(s.Organisations, ", "),
		Orgs:          m.orgs(s.Organisations),
		Date:          date(s.Date),
		OpenScaffold:  s.OpenScaffold,
		OpenWeights:   s.OpenWeights,
		Checked:       s.Checked,
		Attempts:      s.Attempts,
		Tags:          s.Tags,
		SiteURL:       s.SiteURL,
		ReportURL:     s.ReportURL,
		Turns:         missing(),
		L1Resolved:    missing(),
		L1Passed:      missing(),
		L2Resolved:    missing(),
		L2Passed:      missing(),
		FV:            missing(),
		RT:            missing(),
		File:          missing(),
		AnyResolved:   missing(),
	}
	r.Links = m.rowLinks(s)
	if rep := s.Reported; rep != nil {
		r.Reported = true
		r.Source = rep.Source
		r.Resolved = figureCell(rep.Resolved)
		// Uncertainty all the same: Wilson's interval from the published
		// rate and the split's size, marked as derived (the rate was
		// rounded when published, and nothing was recomputed).
		if n := s.Dataset.SplitSize(s.Split); n > 0 && !r.Resolved.Missing && r.Resolved.Sort >= 0 && r.Resolved.Sort <= 100 {
			lo, hi := metrics.WilsonRate(r.Resolved.Sort/100, n, metrics.Z95)
			r.Resolved.Note = intervalNote(lo, hi) + " derived"
			r.HasCI, r.CIDerived, r.ResolvedLo, r.ResolvedHi = true, true, round(lo*100, 1), round(hi*100, 1)
		}
		r.Passed = figureCell(rep.Passed)
		r.TokensIn = figureCell(rep.TokensIn)
		r.TokensOut = figureCell(rep.TokensOut)
		r.Cost = costAs(rep.Cost)
		if l := rep.Levels["L1"]; l != nil {
			r.L1Resolved, r.L1Passed = figureCell(l.Resolved), figureCell(l.Passed)
		}
		if l := rep.Levels["L2"]; l != nil {
			r.L2Resolved, r.L2Passed = figureCell(l.Resolved), figureCell(l.Passed)
		}
		return r
	}
	if !s.Reference {
		r.Flagged = flagCounts([]*bench.Submission{s})
	}
	sc := e.score
	r.Resolved = pctCell(sc.ResolvedRate(), 1)
	lo, hi := sc.Interval()
	r.Resolved.Note = intervalNote(lo, hi)
	r.HasCI, r.ResolvedLo, r.ResolvedHi = true, round(lo*100, 1), round(hi*100, 1)
	r.Passed = missing()
	if p, ok := sc.PassedRate(); ok {
		r.Passed = pctCell(p, 2)
	} else {
		r.Passed.Note = "not given per attempt: results.jsonl lacks attempts_passed"
	}
	r.TokensIn = tokenCell(sc.TokensIn())
	r.TokensOut = tokenCell(sc.TokensOut())
	r.TokensN = sc.TokenResults()
	r.Cost = costCell(sc.Cost())
	r.CostN = sc.Costs
	r.Turns, r.TurnsN = missing(), sc.Turns
	if t, ok := sc.MeanTurns(); ok {
		r.Turns = templates.Cell{Text: strconv.FormatFloat(t, 'f', 1, 64), Sort: t}
	}
	r.FV, r.RT = pctCell(sc.FVRate(), 1), missing()
	// RT % is over the level 1 instances with pass-to-pass tests; it
	// says nothing of a row whose every prediction is empty (nothing
	// changed, nothing to regress).
	if rt, ok := sc.RTRate(); ok && !allEmpty(s) {
		r.RT = pctCell(rt, 1)
	}
	r.File = missing()
	if f, ok := sc.FileRate(); ok {
		r.File = pctCell(f, 1)
	}
	r.AnyResolved = missing()
	if s.Attempts > 1 || sc.Multi > 0 {
		r.AnyResolved = pctCell(sc.AnyResolvedRate(), 1)
	}
	// Per level, in the formats of the overall figures.
	if l, ok := e.levels[1]; ok && l.Instances > 0 {
		r.L1Resolved, r.L1Passed = pctCell(l.ResolvedRate(), 1), passedCell(l, 2)
	}
	if l, ok := e.levels[2]; ok && l.Instances > 0 {
		r.L2Resolved, r.L2Passed = pctCell(l.ResolvedRate(), 1), passedCell(l, 2)
	}
	return r
}

// sortedKeys are a set's non-empty members, sorted.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// allEmpty reports whether every one of a submission's predictions is
// empty, as the empty-patch baseline's are.
func allEmpty(s *bench.Submission) bool {
	for i := range s.Results {
		if !emptyPrediction(&s.Results[i]) {
			return false
		}
	}
	return len(s.Results) > 0
}

// rowLinks are a board row's links to what stands behind its figures:
// the files its submission folder publishes with the site, else the
// places its metadata names.
func (m *model) rowLinks(s *bench.Submission) []templates.Link {
	var out []templates.Link
	for _, l := range []struct{ title, file, url string }{
		{"results", bench.ResultsFile, ""},
		{"logs", bench.LogsFile, s.LogsURL},
		{"trajectories", bench.TrajectoriesFile, s.TrajectoriesURL},
	} {
		switch {
		case s.File(l.file) != nil && publishedFile(s, l.file):
			out = append(out, templates.Link{Title: l.title, URL: m.u.file(s, l.file)})
		case l.url != "":
			out = append(out, templates.Link{Title: l.title, URL: l.url})
		}
	}
	return out
}

// passedCell is a score's % passed, "—" where it is not defined per
// attempt.
func passedCell(sc metrics.Score, decimals int) templates.Cell {
	if p, ok := sc.PassedRate(); ok {
		return pctCell(p, decimals)
	}
	return missing()
}

// orgs are a submission's organisations for the templates, with the logos
// data/logos/ has for them.
func (m *model) orgs(names []string) []templates.Org {
	out := make([]templates.Org, 0, len(names))
	for _, n := range names {
		o := templates.Org{Name: n}
		key := bench.OrgKey(n)
		if l, ok := m.data.Logos[key]; ok {
			o.LogoURL, o.Width, o.Height = m.u.logo(key, l.Ext), l.Width, l.Height
		}
		out = append(out, o)
	}
	return out
}

// view is the board as the templates want it.
func (m *model) view(b *board, id string) *templates.Board {
	v := &templates.Board{
		ID:         id,
		RankBy:     b.ds.Ranking(),
		RankRanges: b.ranged,
		Resamples:  metrics.RankResamples,
		Reported:   b.reported,
		Dataset:    b.ds.DisplayName(),
		DatasetURL: m.u.dataset(b.ds),
		Methods:    b.methods,
		Split:      b.split,
		Size:       b.ds.SplitSize(b.split),
		URL:        m.u.board(b.ds, b.split),
		CSVURL:     m.u.board(b.ds, b.split) + "board.csv",
		JSONURL:    m.u.board(b.ds, b.split) + "board.json",
	}
	for _, sp := range b.ds.Splits {
		v.Splits = append(v.Splits, templates.Link{Title: sp.Name, URL: m.u.board(b.ds, sp.Name), Current: sp.Name == b.split})
	}
	if len(b.entries) > 0 {
		v.ReposURL = m.u.reposSplit(b.ds, b.split)
	}
	vocab := map[string]bool{}
	if bc := m.cfg.Board(b.ds.Name, b.ds.Version); bc.FilterTags != nil {
		for _, t := range bc.FilterTags {
			vocab[t] = true
		}
	}
	tags := map[string]bool{}
	models, scaffolds, orgs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, e := range b.entries {
		r := e.row
		if e.ref() {
			v.References = append(v.References, r)
		} else {
			v.Rows = append(v.Rows, r)
		}
		v.HasLevels = v.HasLevels || !r.L1Resolved.Missing || !r.L2Resolved.Missing ||
			!r.L1Passed.Missing || !r.L2Passed.Missing
		v.HasTokens = v.HasTokens || !r.TokensIn.Missing || !r.TokensOut.Missing
		v.HasCost = v.HasCost || !r.Cost.Missing
		v.HasTurns = v.HasTurns || !r.Turns.Missing
		v.HasAttempts = v.HasAttempts || !r.AnyResolved.Missing
		v.Flagged = v.Flagged || len(r.Flagged) > 0
		if e.sub.PerInstance() {
			v.HasCI = true
			v.HasEval = true
			v.CompareURL = m.u.compare(b.ds, b.split)
		}
		if e.ref() {
			continue
		}
		for _, t := range r.Tags {
			if vocab[t] {
				tags[t] = true
			}
		}
		models[r.Model] = true
		scaffolds[r.Scaffold] = true
		for _, o := range e.sub.Organisations {
			orgs[o] = true
		}
	}
	// Marks in names, numbered in the order the board first shows them;
	// logos only when every organisation on the board has one.
	marks := m.cfg.Board(b.ds.Name, b.ds.Version).Marks
	number := map[string]int{}
	v.Logos = true
	for _, rows := range [][]templates.Row{v.Rows, v.References} {
		for i := range rows {
			r := &rows[i]
			for _, text := range slices.Sorted(maps.Keys(marks)) {
				if !strings.Contains(r.Name, text) {
					continue
				}
				if number[text] == 0 {
					number[text] = len(number) + 1
					v.Marks = append(v.Marks, templates.Mark{N: number[text], Text: text, Explanation: marks[text]})
				}
				r.Marks = append(r.Marks, templates.Mark{N: number[text], Text: text, Explanation: marks[text]})
			}
			for _, o := range r.Orgs {
				v.Logos = v.Logos && o.LogoURL != ""
			}
		}
	}
	v.Tags = sortedKeys(tags)
	v.Models, v.Scaffolds, v.Orgs = sortedKeys(models), sortedKeys(scaffolds), sortedKeys(orgs)
	return v
}
