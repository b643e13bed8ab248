package site

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/metrics"
	"github.com/featbench/featbench/templates"
)

// page is one output file: its URL and how to render it.
type page struct {
	url    string // site URL, base-prefixed; folders end in "/"
	html   bool   // listed in the sitemap
	render func() (templ.Component, []byte, error)
	// lines, when set instead of render, gives the file as lines to be
	// written each with a newline after it: a split's download is made
	// of the dataset's lines, which are written, not copied together.
	lines func() ([][]byte, error)
	// keyed, when set instead of render, gives the page's key and its
	// rendering, which is skipped when the last build rendered the page
	// from the same key (output.reuseKeyed).
	keyed func() (uint64, func() (templ.Component, []byte, error), error)
	// source, when set instead of render, is a file of data/ published
	// as it is (output.copySource).
	source *bench.SubmissionFile
	// big: the page is megabytes (a system's result on every instance),
	// rendered into a buffer kept for such pages.
	big bool
}

// frame is the frame of the page at url, which shows dataset ds (nil for
// pages of the whole site: they follow the headline dataset).
func (b *builder) frame(url string, ds *bench.Dataset, title, desc string, crumbs ...templates.Link) templates.Page {
	return templates.Page{
		Site: b.site, Title: title, Description: desc, Crumbs: crumbs,
		Nav:       b.nav(url, ds),
		Canonical: b.canonical(url),
	}
}

// canonical is the absolute URL of a page, or "" when base_url is a path.
func (b *builder) canonical(url string) string {
	if !b.cfg.Absolute() {
		return ""
	}
	return b.absolute(url)
}

// nav is the navigation of the page at url: the leaderboard, per-repository
// page and charts of the dataset the page shows (the headline dataset on
// site-wide pages), the datasets, and the configured links. The link to
// the page itself is marked current, and the section it is in active.
func (b *builder) nav(url string, ds *bench.Dataset) []templates.Link {
	u := b.m.u
	if ds == nil {
		if hb := b.headline(); hb != nil {
			ds = hb.ds
		}
	}
	type item struct {
		templates.Link
		section string // URL prefix of the pages the link's section holds
	}
	var items []item
	if ds != nil {
		items = append(items,
			item{templates.Link{Title: "Leaderboard", URL: u.board(ds, b.openSplit(ds))}, u.base + "leaderboard/" + ds.Name + "/" + ds.Version + "/"},
			item{templates.Link{Title: "Per repository", URL: u.repos(ds)}, u.repos(ds)},
			item{templates.Link{Title: "Charts", URL: u.charts(ds)}, u.charts(ds)},
		)
	} else {
		items = append(items, item{templates.Link{Title: "Leaderboard", URL: u.base}, ""})
	}
	items = append(items, item{templates.Link{Title: "Datasets", URL: u.base + "datasets/"}, u.base + "datasets/"})
	for _, l := range b.cfg.Links {
		items = append(items, item{templates.Link{Title: l.Title, URL: b.link(l.URL)}, ""})
	}
	out := make([]templates.Link, len(items))
	// The longest section prefix wins: a charts page is in Charts, not
	// in Datasets.
	best := -1
	for i, it := range items {
		out[i] = it.Link
		out[i].Current = it.URL == url
		if it.section != "" && strings.HasPrefix(url, it.section) && (best < 0 || len(it.section) > len(items[best].section)) {
			best = i
		}
	}
	if best >= 0 {
		out[best].Active = true
	}
	return out
}

func (b *builder) home() templ.Component {
	h := &templates.Home{
		Page:  b.frame(b.m.u.base, nil, "", b.cfg.Description),
		Intro: b.cfg.Description,
	}
	for _, bd := range b.cfg.Badges {
		h.Badges = append(h.Badges, templates.Badge{Label: bd.Label, Value: bd.Value, URL: b.link(bd.URL)})
	}
	// Boards with no system yet are left out: an empty table says nothing.
	if hb := b.headline(); hb != nil && len(hb.entries) > 0 {
		h.Board = b.m.view(hb, "board-home")
	}
	// Every board, with the counts its own page gives: ranked systems
	// and reference rows apart.
	for _, bd := range b.m.boards {
		n := len(bd.ranked())
		title := bd.ds.DisplayName() + " — " + bd.split + " (" + templates.SystemCount(n, len(bd.entries)-n) + ")"
		h.Boards = append(h.Boards, templates.Link{Title: title, URL: b.m.u.board(bd.ds, bd.split)})
	}
	h.Changes = b.changes()
	return templates.HomePage(h)
}

// headline is the board the home page shows: the configured default
// dataset (else the dataset with the most recent ranked submission, else
// the newest dataset), on the split it opens on (openSplit).
func (b *builder) headline() *board {
	var ds *bench.Dataset
	if b.cfg.DefaultDataset != "" {
		ds = b.data.Dataset(b.cfg.DefaultDataset)
	}
	if ds == nil {
		if bd := b.latest(nil); bd != nil {
			ds = bd.ds
		}
	}
	if ds == nil && len(b.data.Datasets) > 0 {
		ds = b.data.Datasets[len(b.data.Datasets)-1]
	}
	if ds == nil {
		return nil
	}
	return b.m.board(ds, b.openSplit(ds))
}

// latest is the board (of ds, or of any dataset when ds is nil) with the
// most recent ranked submission: where new systems show first. On a tie,
// the first such board in the manifests' order; nil when no board has a
// ranked system.
func (b *builder) latest(ds *bench.Dataset) *board {
	var best *board
	var when time.Time
	for _, bd := range b.m.boards {
		if ds != nil && bd.ds != ds {
			continue
		}
		for _, e := range bd.ranked() {
			if best == nil || e.sub.Date.After(when) {
				best, when = bd, e.sub.Date
			}
		}
	}
	return best
}

// openSplit is the split a dataset's leaderboard link, and the home page
// when it shows the dataset, open on: the one featbench.toml's
// [site.boards] gives it, else the split with its most recent ranked
// submission (FeatureBench's newest systems are on lite only: its full
// board would hide them), else site.default_split where the dataset has
// it, else its first split.
func (b *builder) openSplit(ds *bench.Dataset) string {
	if bc := b.cfg.Board(ds.Name, ds.Version); bc.DefaultSplit != "" && ds.Split(bc.DefaultSplit) != nil {
		return bc.DefaultSplit
	}
	if bd := b.latest(ds); bd != nil {
		return bd.split
	}
	return b.repoSplit(ds)
}

// changes is the dated log of leaderboard changes: submissions grouped by
// day and board, newest first.
func (b *builder) changes() []templates.Change {
	type key struct {
		day   string
		ds    *bench.Dataset
		split string
	}
	groups := map[key][]*bench.Submission{}
	var keys []key
	for _, s := range b.data.Submissions {
		k := key{date(s.Date), s.Dataset, s.Split}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].day != keys[j].day {
			return keys[i].day > keys[j].day
		}
		if keys[i].ds.Key() != keys[j].ds.Key() {
			return keys[i].ds.Key() < keys[j].ds.Key()
		}
		return keys[i].split < keys[j].split
	})
	var out []templates.Change
	for _, k := range keys {
		subs := groups[k]
		names := make([]string, len(subs))
		for i, s := range subs {
			names[i] = s.Name
		}
		sort.Strings(names)
		refs := 0
		for _, s := range subs {
			if s.Reference {
				refs++
			}
		}
		title := added(len(subs)-refs, refs) + " added to " + k.ds.DisplayName() + " " + k.split
		if len(subs) == 1 {
			title = fmt.Sprintf("%s added to %s %s", subs[0].Name, k.ds.DisplayName(), k.split)
			if refs == 1 {
				title = fmt.Sprintf("%s (a reference row) added to %s %s", subs[0].Name, k.ds.DisplayName(), k.split)
			}
		}
		out = append(out, templates.Change{
			Date:    k.day,
			Title:   title,
			Summary: strings.Join(names, "; "),
			URL:     b.m.u.board(k.ds, k.split),
		})
	}
	return out
}

// added counts the submissions of one day's change: systems and
// reference rows apart, as the boards count them.
func added(systems, refs int) string {
	plural := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + many
	}
	switch {
	case refs == 0:
		return plural(systems, "system", "systems")
	case systems == 0:
		return plural(refs, "reference row", "reference rows")
	}
	return plural(systems, "system", "systems") + " and " + plural(refs, "reference row", "reference rows")
}

func (b *builder) boardPage(bd *board) templ.Component {
	v := b.m.view(bd, "board")
	p := b.frame(b.m.u.board(bd.ds, bd.split), bd.ds, fmt.Sprintf("%s %s leaderboard", bd.ds.DisplayName(), bd.split),
		fmt.Sprintf("Leaderboard of %s, %s split: %% resolved, %% passed and token I/O per system.", bd.ds.DisplayName(), bd.split),
		templates.Link{Title: "Home", URL: b.m.u.base},
		templates.Link{Title: bd.ds.DisplayName(), URL: b.m.u.dataset(bd.ds)},
		templates.Link{Title: bd.split})
	return templates.BoardPage(p, v)
}

func (b *builder) datasetIndex() templ.Component {
	d := &templates.DatasetIndex{Page: b.frame(b.m.u.base+"datasets/", nil, "Datasets", "Every dataset version of the benchmark.",
		templates.Link{Title: "Home", URL: b.m.u.base}, templates.Link{Title: "Datasets"})}
	for _, ds := range b.data.Datasets {
		s := templates.DatasetSummary{
			Title:       ds.DisplayName(),
			URL:         b.m.u.dataset(ds),
			Version:     ds.Version,
			Released:    date(ds.ReleaseDate),
			Repos:       len(ds.Repos),
			Description: ds.Description,
		}
		var sizes []string
		for _, sp := range ds.Splits {
			s.Splits = append(s.Splits, templates.Link{Title: sp.Name, URL: b.m.u.board(ds, sp.Name)})
			sizes = append(sizes, fmt.Sprintf("%s %d", sp.Name, ds.SplitSize(sp.Name)))
			if ds.PublishesStatements() {
				s.Downloads = append(s.Downloads, templates.Link{Title: sp.Name + ".jsonl", URL: b.m.u.download(ds, sp.Name)})
			}
		}
		s.Instances = strings.Join(sizes, ", ")
		d.Datasets = append(d.Datasets, s)
	}
	return templates.DatasetIndexPage(d)
}

// instanceFacts are per-instance figures several pages share.
type instanceFacts struct {
	splits    map[string][]string // instance id -> split names
	evaluated map[string]int      // instance id -> systems evaluated on it
	resolved  map[string]int      // instance id -> systems that resolved it
}

// facts gathers, per instance, its splits and how many distinct systems
// (by slug) were evaluated on it and resolved it. A system evaluated on a
// split is evaluated on all its instances: a missing prediction counts.
// Reference rows (gold, empty) are baselines, not systems: not counted.
func (b *builder) facts(ds *bench.Dataset) *instanceFacts {
	if f, ok := b.factCache[ds]; ok {
		return f
	}
	f := &instanceFacts{
		splits:    make(map[string][]string, len(ds.Instances)),
		evaluated: make(map[string]int, len(ds.Instances)),
		resolved:  make(map[string]int, len(ds.Instances)),
	}
	for _, sp := range ds.Splits {
		for _, id := range sp.Instances {
			f.splits[id] = append(f.splits[id], sp.Name)
		}
	}
	// A system with runs on two splits counts once per instance.
	bySlug := map[string][]*bench.Submission{}
	var slugs []string
	for _, s := range b.data.Submissions {
		if s.Dataset != ds || !s.PerInstance() || s.Reference {
			continue
		}
		if bySlug[s.Slug] == nil {
			slugs = append(slugs, s.Slug)
		}
		bySlug[s.Slug] = append(bySlug[s.Slug], s)
	}
	const evaluated, resolved = 1, 2
	seen := map[*bench.Instance]uint8{}
	for _, slug := range slugs {
		clear(seen)
		for _, s := range bySlug[slug] {
			for _, in := range ds.SplitInstances(s.Split) {
				mark := seen[in] | evaluated
				if r := s.ResultOf(in); r != nil && r.Resolved {
					mark |= resolved
				}
				seen[in] = mark
			}
		}
		for in, mark := range seen {
			f.evaluated[in.InstanceID]++
			if mark&resolved != 0 {
				f.resolved[in.InstanceID]++
			}
		}
	}
	b.factCache[ds] = f
	return f
}

// solved is how many ranked systems were evaluated on the instance and
// resolved it.
func (f *instanceFacts) solved(id string) metrics.Solved {
	return metrics.Solved{By: f.resolved[id], Of: f.evaluated[id]}
}

// difficulty is the share of evaluated systems that resolved the instance.
func (f *instanceFacts) difficulty(id string) templates.Cell {
	s := f.solved(id)
	rate, ok := s.Share()
	if !ok {
		return missing()
	}
	return templates.Cell{Text: fmt.Sprintf("%d of %d systems (%.0f%%)", s.By, s.Of, rate*100), Sort: rate}
}

func (b *builder) datasetPage(ds *bench.Dataset) templ.Component {
	d := &templates.DatasetPage{
		Page: b.frame(b.m.u.dataset(ds), ds, ds.DisplayName(), ds.Description,
			templates.Link{Title: "Home", URL: b.m.u.base},
			templates.Link{Title: "Datasets", URL: b.m.u.base + "datasets/"},
			templates.Link{Title: ds.DisplayName()}),
		Title:             ds.Title,
		Version:           ds.Version,
		Released:          date(ds.ReleaseDate),
		Description:       ds.Description,
		PaperURL:          ds.PaperURL,
		SourceURL:         ds.SourceURL,
		ReposURL:          b.m.u.repos(ds),
		ChartsURL:         b.m.u.charts(ds),
		Described:         !ds.HasInstances(),
		PrivateStatements: ds.HasInstances() && ds.KeepsStatementsPrivate(),
	}
	if d.Title == "" {
		d.Title = ds.Name
	}
	for _, other := range b.data.Datasets {
		if other.Name == ds.Name {
			d.Versions = append(d.Versions, templates.Link{Title: other.Version, URL: b.m.u.dataset(other), Current: other == ds})
		}
	}
	for _, sp := range ds.Splits {
		bd := b.m.board(ds, sp.Name)
		info := templates.SplitInfo{
			Name: sp.Name, Description: sp.Description, Size: ds.SplitSize(sp.Name),
			BoardURL: b.m.u.board(ds, sp.Name), Ranked: len(bd.ranked()), References: len(bd.entries) - len(bd.ranked()),
		}
		if ds.PublishesStatements() {
			info.DownloadURL = b.m.u.download(ds, sp.Name)
		}
		if len(bd.entries) > 0 {
			info.ReposURL = b.m.u.reposSplit(ds, sp.Name)
		}
		for _, e := range bd.entries {
			if e.sub.PerInstance() {
				info.CompareURL = b.m.u.compare(ds, sp.Name)
				break
			}
		}
		d.Splits = append(d.Splits, info)
	}
	count := map[string]int{}
	for _, in := range ds.Instances {
		count[in.Repo]++
	}
	for _, r := range ds.Repos {
		d.Repos = append(d.Repos, templates.RepoInfo{Name: r.Name, URL: r.URL, License: r.License, Instances: count[r.Name]})
	}
	d.Citation = bibtex(ds)
	d.Collection = collectionInfo(ds.Collection)
	d.RankLabel = map[string]string{bench.RankPassed: "% passed"}[ds.Ranking()]
	if d.RankLabel == "" {
		d.RankLabel = "% resolved"
	}
	f := b.facts(ds)
	d.Methods = datasetMethods(ds.Instances)
	for _, in := range ds.Instances {
		d.Instances = append(d.Instances, templates.InstanceRow{
			ID: in.InstanceID, URL: b.m.u.instance(ds, in.InstanceID), Repo: in.Repo, Level: in.Level, Method: in.MethodOrDefault(),
			Lines: intCell(in.Lines), F2P: len(in.FailToPass), Splits: strings.Join(f.splits[in.InstanceID], ", "),
			Difficulty: f.difficulty(in.InstanceID),
		})
		s := f.solved(in.InstanceID)
		if s.Of > 0 {
			d.Evaluated++
		}
		if s.Unsolved() {
			d.Unsolved = append(d.Unsolved, templates.Link{Title: in.InstanceID, URL: b.m.u.instance(ds, in.InstanceID)})
		}
	}
	return templates.DatasetVersionPage(d)
}

// repoSplit is the split a dataset's charts and system pages take their
// per-repository and per-system figures from: the configured default
// split when the dataset has it, else its first.
func (b *builder) repoSplit(ds *bench.Dataset) string {
	if ds.Split(b.cfg.DefaultSplit) != nil {
		return b.cfg.DefaultSplit
	}
	return ds.Splits[0].Name
}

// splitsDefaultFirst is the dataset's splits, repoSplit's first and the
// others in manifest order: the order of the charts and repository pages'
// sections.
func (b *builder) splitsDefaultFirst(ds *bench.Dataset) []string {
	first := b.repoSplit(ds)
	splits := []string{first}
	for _, sp := range ds.Splits {
		if sp.Name != first {
			splits = append(splits, sp.Name)
		}
	}
	return splits
}

// reposPage is the gold statistics per repository, then one section per
// split that has systems: the default split first, the others in manifest
// order. Each section has a stable id (splitAnchor) that the leaderboards
// and the dataset page link to.
func (b *builder) reposPage(ds *bench.Dataset) templ.Component {
	r := &templates.ReposPage{
		Page: b.frame(b.m.u.repos(ds), ds, ds.DisplayName()+" per repository", "Per-repository statistics and results of "+ds.DisplayName()+", split by split.",
			templates.Link{Title: "Home", URL: b.m.u.base},
			templates.Link{Title: ds.DisplayName(), URL: b.m.u.dataset(ds)},
			templates.Link{Title: "Per repository"}),
		Dataset: ds.DisplayName(), DatasetURL: b.m.u.dataset(ds),
	}
	r.Stats = b.repoStats(ds)
	r.Difficulty = b.repoDifficulty(ds)
	for _, split := range b.splitsDefaultFirst(ds) {
		bd := b.m.board(ds, split)
		if len(bd.entries) == 0 {
			continue
		}
		r.Splits = append(r.Splits, b.repoGrids(bd))
	}
	return templates.ReposPageView(r)
}

// repoGrids is a split's section of the per-repository page: for each
// figure, one grid of repositories × systems (in leaderboard order), each
// cell computed from per-instance results or as published, "—" where a
// system has no figure for a repository.
func (b *builder) repoGrids(bd *board) templates.RepoSplit {
	ds := bd.ds
	sec := templates.RepoSplit{
		ID: splitAnchor(bd.split), Name: bd.split, Size: ds.SplitSize(bd.split),
		BoardURL: b.m.u.board(ds, bd.split), Ranked: len(bd.ranked()), Refs: len(bd.entries) - len(bd.ranked()),
		Counted: ds.HasInstances(),
	}
	type column struct {
		e    *entry
		rows map[string]templates.RepoScoreRow
	}
	var cols []column
	for _, e := range bd.entries {
		t := b.repoScores(e, false)
		if t == nil || len(t.Rows) == 0 {
			continue
		}
		c := column{e: e, rows: map[string]templates.RepoScoreRow{}}
		for _, row := range t.Rows {
			c.rows[row.Repo] = row
		}
		cols = append(cols, c)
		col := templates.RepoCol{Name: e.sub.Name, URL: b.m.u.system(ds, e.sub.Slug), Ref: e.ref()}
		if e.sub.Reported != nil {
			col.Source = t.Source
		}
		sec.Systems = append(sec.Systems, col)
	}
	if len(cols) == 0 {
		return sec
	}
	count := map[string]int{}
	for _, in := range ds.SplitInstances(bd.split) {
		count[in.Repo]++
	}
	figures := []struct {
		id, title string
		cell      func(templates.RepoScoreRow) templates.Cell
	}{
		{"passed", "% passed", func(r templates.RepoScoreRow) templates.Cell { return r.Passed }},
		{"resolved", "% resolved", func(r templates.RepoScoreRow) templates.Cell { return r.Resolved }},
		{"tokens", "Token I/O (mean input / output tokens per instance)", func(r templates.RepoScoreRow) templates.Cell {
			if r.TokensIn.Missing && r.TokensOut.Missing {
				return missing()
			}
			return templates.Cell{Text: r.TokensIn.String() + " / " + r.TokensOut.String(), Sort: r.TokensIn.Sort}
		}},
	}
	if ds.Ranking() != bench.RankPassed {
		figures[0], figures[1] = figures[1], figures[0]
	}
	for _, f := range figures {
		g := templates.RepoGrid{ID: sec.ID + "-" + f.id, Title: f.title}
		any := false
		for _, repo := range ds.Repos {
			row := templates.RepoGridRow{Repo: repo.Name, Instances: missing()}
			if n := count[repo.Name]; n > 0 {
				row.Instances = templates.Cell{Text: strconv.Itoa(n), Sort: float64(n)}
			}
			for _, c := range cols {
				cell := missing()
				if sr, ok := c.rows[repo.Name]; ok {
					cell = f.cell(sr)
				}
				any = any || !cell.Missing
				row.Cells = append(row.Cells, cell)
			}
			g.Rows = append(g.Rows, row)
		}
		if any {
			sec.Grids = append(sec.Grids, g)
		}
	}
	return sec
}

// repoDifficulty is, per repository, how many ranked systems solve each
// of its instances, hardest first; nil when no ranked system has
// per-instance results on the dataset.
func (b *builder) repoDifficulty(ds *bench.Dataset) []templates.RepoDifficulty {
	f := b.facts(ds)
	byRepo := map[string][]*bench.Instance{}
	evaluated := false
	for _, in := range ds.Instances {
		byRepo[in.Repo] = append(byRepo[in.Repo], in)
		evaluated = evaluated || f.evaluated[in.InstanceID] > 0
	}
	if !evaluated {
		return nil
	}
	var out []templates.RepoDifficulty
	for _, repo := range ds.Repos {
		ins := byRepo[repo.Name]
		if len(ins) == 0 {
			continue
		}
		solved := make([]metrics.Solved, len(ins))
		for i, in := range ins {
			solved[i] = f.solved(in.InstanceID)
		}
		sum := metrics.Difficulties(solved)
		rd := templates.RepoDifficulty{
			Repo: repo.Name, Instances: sum.Instances, Evaluated: sum.Evaluated,
			None: sum.None, Some: sum.Some, All: sum.All, Mean: missing(),
		}
		if sum.Evaluated > 0 {
			rd.Mean = pctCell(sum.MeanShare, 0)
		}
		order := make([]int, len(ins))
		for i := range order {
			order[i] = i
		}
		// Hardest first: the smallest share solving, instances no system
		// was evaluated on last; the dataset's order within a share.
		sort.SliceStable(order, func(x, y int) bool {
			sx, okx := solved[order[x]].Share()
			sy, oky := solved[order[y]].Share()
			if okx != oky {
				return okx
			}
			return sx < sy
		})
		for _, i := range order {
			s, cell := solved[i], missing()
			if s.Of > 0 {
				cell = templates.Cell{Text: strconv.Itoa(s.By) + " of " + strconv.Itoa(s.Of), Sort: float64(s.By) / float64(s.Of)}
			}
			rd.Rows = append(rd.Rows, templates.InstanceSolved{ID: ins[i].InstanceID, URL: b.m.u.instance(ds, ins[i].InstanceID), Solved: cell})
		}
		out = append(out, rd)
	}
	return out
}

// repoStats is the gold statistics per repository: computed from the
// instances when they are here, else as published.
func (b *builder) repoStats(ds *bench.Dataset) templates.RepoStatsTable {
	var t templates.RepoStatsTable
	byRepo := map[string][]*bench.Instance{}
	for _, in := range ds.Instances {
		byRepo[in.Repo] = append(byRepo[in.Repo], in)
	}
	for _, repo := range ds.Repos {
		row := templates.RepoStatsRow{Repo: repo.Name, License: repo.License}
		if ins := byRepo[repo.Name]; len(ins) > 0 {
			t.Source = "computed from the instances"
			t.Counted = true
			// A mean over the instances that publish the figure.
			mean := func(get func(*bench.Instance) *int) templates.Cell {
				sum, n := 0, 0
				for _, in := range ins {
					if v := get(in); v != nil {
						sum += *v
						n++
					}
				}
				if n == 0 {
					return missing()
				}
				v := float64(sum) / float64(n)
				return templates.Cell{Text: strconv.FormatFloat(v, 'f', 1, 64), Sort: v}
			}
			row.Instances = templates.Cell{Text: strconv.Itoa(len(ins)), Sort: float64(len(ins))}
			row.Lines = mean(func(in *bench.Instance) *int { return in.Lines })
			row.Files = mean(func(in *bench.Instance) *int { return in.Files })
			row.Functions = mean(func(in *bench.Instance) *int { return in.Functions })
			row.TestPoints = mean(func(in *bench.Instance) *int { return in.F2PTestPoints })
		} else if rs := repo.Reported; rs != nil {
			t.Source = rs.Source
			row.Instances = missing()
			row.Lines, row.Files = figureCell(rs.Lines), figureCell(rs.Files)
			row.Functions, row.TestPoints = figureCell(rs.Functions), figureCell(rs.TestPoints)
		} else {
			row.Instances, row.Lines, row.Files, row.Functions, row.TestPoints = missing(), missing(), missing(), missing(), missing()
		}
		t.Rows = append(t.Rows, row)
	}
	for _, col := range []func(*templates.RepoStatsRow) *templates.Cell{
		func(r *templates.RepoStatsRow) *templates.Cell { return &r.Lines },
		func(r *templates.RepoStatsRow) *templates.Cell { return &r.Files },
		func(r *templates.RepoStatsRow) *templates.Cell { return &r.Functions },
		func(r *templates.RepoStatsRow) *templates.Cell { return &r.TestPoints },
	} {
		cells := make([]*templates.Cell, len(t.Rows))
		for i := range t.Rows {
			cells[i] = col(&t.Rows[i])
		}
		alignDecimals(cells...)
	}
	return t
}

// alignScores gives a per-repository table's % passed and % resolved one
// number of decimals each.
func alignScores(rows []templates.RepoScoreRow) {
	passed := make([]*templates.Cell, len(rows))
	resolved := make([]*templates.Cell, len(rows))
	for i := range rows {
		passed[i], resolved[i] = &rows[i].Passed, &rows[i].Resolved
	}
	alignDecimals(passed...)
	alignDecimals(resolved...)
}

// repoScores is a system's per-repository table on its board, or nil when
// there is none. Its HTML id is "repos-<slug>"; qualified tables, for a
// page that holds several splits, add the split ("repos-<split>:<slug>",
// which no slug can collide with), so that the default split's anchors
// keep the ids they always had.
//
// The unqualified table is computed once an entry: the system page and
// the per-repository page both show it (metrics over every repository,
// 50 systems times two in a build).
func (b *builder) repoScores(e *entry, qualified bool) *templates.RepoSystemTable {
	if !qualified {
		b.repoMemo.mu.Lock()
		if b.repoMemo.m == nil {
			b.repoMemo.m = map[*entry]*repoScoresOnce{}
		}
		o := b.repoMemo.m[e]
		if o == nil {
			o = &repoScoresOnce{}
			b.repoMemo.m[e] = o
		}
		b.repoMemo.mu.Unlock()
		o.once.Do(func() { o.t = b.computeRepoScores(e, false) })
		return o.t
	}
	return b.computeRepoScores(e, true)
}

// repoScoresOnce is an entry's unqualified repoScores, computed once.
type repoScoresOnce struct {
	once sync.Once
	t    *templates.RepoSystemTable
}

func (b *builder) computeRepoScores(e *entry, qualified bool) *templates.RepoSystemTable {
	s := e.sub
	ds := s.Dataset
	t := &templates.RepoSystemTable{
		ID:    "repos-" + s.Slug,
		Name:  s.Name,
		Split: s.Split,
		URL:   b.m.u.system(ds, s.Slug),
	}
	if qualified {
		t.ID = "repos-" + s.Split + ":" + s.Slug
	}
	count := map[string]int{}
	for _, in := range ds.SplitInstances(s.Split) {
		count[in.Repo]++
	}
	t.Counted = ds.HasInstances()
	if rep := s.Reported; rep != nil {
		if len(rep.Repos) == 0 {
			return nil
		}
		sources := map[string]bool{}
		for _, repo := range ds.Repos {
			sc := rep.Repos[repo.Name]
			if sc == nil {
				continue
			}
			sources[sc.Source] = true
			t.Rows = append(t.Rows, templates.RepoScoreRow{
				Repo: repo.Name, Instances: count[repo.Name], Passed: figureCell(sc.Passed), Resolved: figureCell(sc.Resolved),
				TokensIn: figureCell(sc.TokensIn), TokensOut: figureCell(sc.TokensOut),
			})
		}
		// In a stable order: the page's key hashes it.
		t.Source = strings.Join(slices.Sorted(maps.Keys(sources)), "; ")
		alignScores(t.Rows)
		return t
	}
	byRepo := map[string][]*bench.Instance{}
	for _, in := range ds.SplitInstances(s.Split) {
		byRepo[in.Repo] = append(byRepo[in.Repo], in)
	}
	t.Source = "computed from per-instance results"
	for _, repo := range ds.Repos {
		ins := byRepo[repo.Name]
		if len(ins) == 0 {
			continue
		}
		sc := metrics.Compute(ins, s.ResultOf)
		t.Rows = append(t.Rows, templates.RepoScoreRow{
			Repo: repo.Name, Instances: len(ins),
			Passed: passedCell(sc, 1), Resolved: pctCell(sc.ResolvedRate(), 1),
			TokensIn: tokenCell(sc.TokensIn()), TokensOut: tokenCell(sc.TokensOut()),
		})
	}
	return t
}

// systems groups a dataset version's submissions by slug: one system page
// each, covering every split it was submitted to.
func (b *builder) systems(ds *bench.Dataset) map[string][]*entry {
	out := map[string][]*entry{}
	for _, bd := range b.m.boards {
		if bd.ds != ds {
			continue
		}
		for _, e := range bd.entries {
			out[e.sub.Slug] = append(out[e.sub.Slug], e)
		}
	}
	return out
}

func round(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

// datasetMethods are the collection methods of the instances, in
// bench.Methods order, or none when every instance is test-driven (the
// method column says nothing then).
func datasetMethods(ins []*bench.Instance) []string {
	have := map[string]bool{}
	for _, in := range ins {
		have[in.MethodOrDefault()] = true
	}
	if len(have) == 0 || len(have) == 1 && have[bench.MethodTestDriven] {
		return nil
	}
	var out []string
	for _, m := range bench.Methods {
		if have[m] {
			out = append(out, m)
		}
	}
	return out
}
