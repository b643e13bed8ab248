package site

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/metrics"
	"github.com/featbench/featbench/templates"
)

// The charts of a dataset version, built as ECharts options with
// go-echarts: first those over the instances, then, for every split with
// systems, those over its systems. Each carries its data as a table too,
// and says why when the data cannot draw it. Reference rows (gold, empty)
// are baselines, not systems: they are left out.

func (b *builder) chartsPage(ds *bench.Dataset) templ.Component {
	c := &templates.ChartsPage{
		Page: b.frame(b.m.u.charts(ds), ds, ds.DisplayName()+" charts", "Charts of "+ds.DisplayName()+" results.",
			templates.Link{Title: "Home", URL: b.m.u.base},
			templates.Link{Title: ds.DisplayName(), URL: b.m.u.dataset(ds)},
			templates.Link{Title: "Charts"}),
		Dataset: ds.DisplayName(), DatasetURL: b.m.u.dataset(ds),
	}
	mp := b.meanPassed(ds) // for both charts: 200,000 results at 4,000 instances
	c.Sections = append(c.Sections, templates.ChartSection{
		ID: "instances", Title: "Instances",
		Intro: "Over the instances of every split, and every system with per-instance results.",
		Charts: []templates.Chart{
			b.passVsLines(ds, mp),
			b.passVsDate(ds, mp),
			b.perRepo(ds),
			b.failureModes(ds),
		},
	})
	for _, split := range b.splitsDefaultFirst(ds) {
		bd := b.m.board(ds, split)
		if len(bd.ranked()) == 0 {
			continue
		}
		id := "split-" + split
		c.Sections = append(c.Sections, templates.ChartSection{
			ID: id, Title: split + " split",
			Intro: fmt.Sprintf("The %d systems on the %s leaderboard (%d instances).", len(bd.ranked()), split, ds.SplitSize(split)),
			Charts: []templates.Chart{
				b.tokensChart(bd, id, true),
				b.tokensChart(bd, id, false),
				b.paretoChart(bd, id),
				b.timeChart(bd, id),
				b.levelChart(bd, id, false),
				b.levelChart(bd, id, true),
			},
		})
	}
	c.Page.Charts = true
	return templates.ChartsPageView(c)
}

// Charts are drawn as SVG (site.js), so that the browser tests can measure
// every text's box. Nothing is drawn where it could be clipped or run into
// another text: the value axis's name sits above the axis, written from
// it rightwards (a name beside rotated tick labels was cut at the page's
// edge when the labels were narrow), the legend at the top right, and
// categories (systems, error types) down a vertical axis, their names
// written level and cut to a width, never rotated.

// scatterBase is a scatter chart: x named under its axis, y above.
func scatterBase(xName, yName, xType string) *charts.Scatter {
	return scatterWith(xName, yName, xType, "32")
}

// scatterWith is scatterBase with a right margin: labelled points need
// room for their labels.
func scatterWith(xName, yName, xType, right string) *charts.Scatter {
	sc := charts.NewScatter()
	sc.SetGlobalOptions(
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0", Right: "8"}),
		charts.WithXAxisOpts(opts.XAxis{Name: xName, Type: xType, NameLocation: "middle", NameGap: 30, Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(opts.YAxis{Name: yName, Type: "value", NameLocation: "end", NameGap: 14}),
		charts.WithGridOpts(opts.Grid{Top: "56", Bottom: "40", Left: "16", Right: right, ContainLabel: opts.Bool(true)}),
		charts.WithAnimation(false),
	)
	return sc
}

// barBase is a horizontal bar chart: one category a row, first at the
// top, its name written level on the left and cut to a width; the values
// along the bottom, named under them.
func barBase(valueName string, categories []string, counts bool) *charts.Bar {
	bar := charts.NewBar()
	x := opts.XAxis{Name: valueName, Type: "value", NameLocation: "middle", NameGap: 30}
	if counts {
		x.MinInterval = 1 // no tick at 2.5 instances
	}
	bar.SetGlobalOptions(
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0", Right: "8"}),
		charts.WithXAxisOpts(x),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Inverse: opts.Bool(true), AxisLabel: &opts.AxisLabel{Interval: "0"}}),
		charts.WithGridOpts(opts.Grid{Top: "32", Bottom: "40", Left: "16", Right: "24", ContainLabel: opts.Bool(true)}),
		charts.WithAnimation(false),
	)
	bar.SetXAxis(categories)
	bar.XYReversal()
	return bar
}

// barHeight is how tall a bar chart of n categories of k bars each is
// drawn, in CSS pixels: room for each name, on up to three lines on a
// phone.
func barHeight(n, k int) int {
	return max(180, 80+n*max(10+12*k, 50))
}

// options turns a chart into plain JSON values. Bar charts need Validate
// to put the categories set with SetXAxis into their axis. go-echarts has
// no field for some options; they are set on the plain values: the y
// axis's name written from the axis rightwards, and category names cut
// to a width (site.js narrows it on a phone).
func options(c interface {
	Validate()
	JSON() map[string]any
}) map[string]any {
	c.Validate()
	raw, err := json.Marshal(c.JSON())
	if err != nil {
		panic(err) // go-echarts' options are plain data
	}
	var o map[string]any
	if err := json.Unmarshal(raw, &o); err != nil {
		panic(err)
	}
	for _, y := range axisList(o["yAxis"]) {
		if y["type"] == "category" {
			// Names wrap onto more lines, never cut (site.js sets the
			// width to the room; barHeight leaves three lines a name).
			y["axisLabel"] = map[string]any{"interval": 0, "width": 150, "overflow": "break", "lineHeight": 14}
		} else if y["name"] != nil {
			y["nameTextStyle"] = map[string]any{"align": "left"}
		}
	}
	// Bars no thicker than a line of text, however few the categories.
	if list, ok := o["series"].([]any); ok {
		for _, s := range list {
			if m, ok := s.(map[string]any); ok && m["type"] == "bar" {
				m["barMaxWidth"] = 20
			}
		}
	}
	// The end labels of a value axis inside its ends: the first one ran
	// into the y axis's "0", the last out of the chart.
	for _, x := range axisList(o["xAxis"]) {
		if x["type"] != "category" {
			x["axisLabel"] = map[string]any{"alignMinLabel": "left", "alignMaxLabel": "right"}
		}
	}
	logScale(o)
	return o
}

// logScale draws a log x axis as a value axis over the values' base-10
// logarithms, with ticks at 1, 2 and 5 times powers of ten (or finer, to
// have at least four): ECharts' log axis ticks only at powers of ten,
// which left two ticks on a chart whose points span less than a decade.
// Each point keeps its value as a third coordinate, and the axis its
// ticks as logTicks: site.js labels the ticks and the tooltips with the
// values, not their logarithms.
func logScale(o map[string]any) {
	axes := axisList(o["xAxis"])
	if len(axes) == 0 || axes[0]["type"] != "log" {
		return
	}
	x := axes[0]
	series, _ := o["series"].([]any)
	var values [][]any
	for _, s := range series {
		m, _ := s.(map[string]any)
		data, _ := m["data"].([]any)
		for _, d := range data {
			if dm, ok := d.(map[string]any); ok {
				if v, ok := dm["value"].([]any); ok && len(v) >= 2 {
					values = append(values, v)
				}
			}
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if f, ok := v[0].(float64); ok && f > 0 {
			lo, hi = min(lo, f), max(hi, f)
		}
	}
	if math.IsInf(lo, 1) {
		x["type"] = "value"
		return
	}
	ticks := logTicks(lo, hi)
	logs := make([]float64, len(ticks))
	for i, t := range ticks {
		logs[i] = math.Log10(t)
	}
	x["type"] = "value"
	x["min"], x["max"] = logs[0], logs[len(logs)-1]
	x["logTicks"] = logs
	delete(x, "scale")
	for _, s := range series {
		m, _ := s.(map[string]any)
		data, _ := m["data"].([]any)
		for i, d := range data {
			dm, ok := d.(map[string]any)
			if !ok {
				continue
			}
			v, ok := dm["value"].([]any)
			if !ok || len(v) < 2 {
				continue
			}
			if f, ok := v[0].(float64); ok && f > 0 {
				dm["value"] = []any{math.Log10(f), v[1], f}
				data[i] = dm
			}
		}
	}
}

// logTicks are the ticks of a log axis holding [lo, hi] (both above 0):
// the first set of mantissas (1; 1, 2, 5; 1, 1.5, 2, 3, 5, 7) whose
// multiples of powers of ten give at least four ticks, from the last at or
// below lo to the first at or above hi; at most ten.
func logTicks(lo, hi float64) []float64 {
	sets := [][]float64{{1}, {1, 2, 5}, {1, 1.5, 2, 3, 5, 7}}
	var best []float64
	for _, ms := range sets {
		var all []float64
		for e := math.Floor(math.Log10(lo)) - 1; e <= math.Ceil(math.Log10(hi))+1; e++ {
			for _, m := range ms {
				all = append(all, m*math.Pow(10, e))
			}
		}
		first, last := 0, len(all)-1
		for i, t := range all {
			if t <= lo*(1+1e-9) {
				first = i
			}
		}
		for i := len(all) - 1; i >= 0; i-- {
			if all[i] >= hi*(1-1e-9) {
				last = i
			}
		}
		ticks := all[first : last+1]
		if len(ticks) > 10 && best != nil {
			break
		}
		best = ticks
		if len(ticks) >= 4 {
			break
		}
	}
	return best
}

// placeLabels marks series whose points are named on the chart: site.js
// places each name inside the plot, clear of every point, of the Pareto
// line and of the other names (labelPlace, which ECharts ignores), or
// numbers the point and names it in a key under the chart where no place
// is free; "front" prefers above and left of the point, away from the
// Pareto line, "side" beside it.
func placeLabels(o map[string]any, place string, series ...string) {
	list, _ := o["series"].([]any)
	for _, s := range list {
		m, _ := s.(map[string]any)
		if m != nil && slices.Contains(series, m["name"].(string)) {
			m["labelPlace"] = place
		}
	}
}

// axisList is an option's axes, as a list of plain objects.
func axisList(v any) []map[string]any {
	var out []map[string]any
	switch a := v.(type) {
	case map[string]any:
		out = append(out, a)
	case []any:
		for _, x := range a {
			if m, ok := x.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// perInstanceSubs are a dataset's submissions with per-instance results,
// reference rows left out.
func (b *builder) perInstanceSubs(ds *bench.Dataset) []*bench.Submission {
	var out []*bench.Submission
	for _, s := range b.data.Submissions {
		if s.Dataset == ds && s.PerInstance() && !s.Reference {
			out = append(out, s)
		}
	}
	return out
}

// meanPassed is, per instance, the mean F2P fraction passed over the
// systems evaluated on it (a missing prediction counts as none).
// Keyed by instance, which within a dataset is keyed by id: hashing a
// pointer is cheaper than an id.
func (b *builder) meanPassed(ds *bench.Dataset) map[*bench.Instance]float64 {
	type acc struct {
		sum float64
		n   int
	}
	accs := make(map[*bench.Instance]*acc, len(ds.Instances))
	for _, s := range b.perInstanceSubs(ds) {
		for _, in := range ds.SplitInstances(s.Split) {
			a := accs[in]
			if a == nil {
				a = &acc{}
				accs[in] = a
			}
			a.n++
			if r := s.ResultOf(in); r != nil {
				a.sum += metrics.PassedFraction(in, r)
			}
		}
	}
	out := make(map[*bench.Instance]float64, len(accs))
	for in, a := range accs {
		out[in] = a.sum / float64(a.n)
	}
	return out
}

func num(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

func (b *builder) passVsLines(ds *bench.Dataset, mp map[*bench.Instance]float64) templates.Chart {
	ch := templates.Chart{ID: "chart-pass-lines", Title: "Pass rate against gold-patch size"}
	if len(mp) > 0 {
		ch.Caption = "One point per instance: mean % of F2P tests passed over the systems evaluated on it, against the lines of its gold patch."
		sc := scatterBase("gold patch lines", "% passed", "value")
		var pts []opts.ScatterData
		ch.Table.Columns = []string{"instance", "gold patch lines", "% passed"}
		for _, in := range ds.Instances {
			if v, ok := mp[in]; ok && in.Lines != nil {
				pts = append(pts, opts.ScatterData{Name: in.InstanceID, Value: []any{*in.Lines, round(v*100, 2)}})
				ch.Table.Rows = append(ch.Table.Rows, []string{in.InstanceID, strconv.Itoa(*in.Lines), num(v*100, 2)})
			}
		}
		if len(pts) > 0 {
			// Instances are named when there are few enough to read.
			if len(pts) <= maxNamedPoints {
				sc.AddSeries("instances", pts, pointNames)
				ch.Options = options(sc)
				placeLabels(ch.Options.(map[string]any), "side", "instances")
			} else {
				sc.AddSeries("instances", pts)
				ch.Options = options(sc)
			}
			return ch
		}
	}
	// Per repository, from the published repository statistics and
	// results: the mean over the systems that publish the repository's %
	// passed, one point a repository (a point per repository and system
	// made some 190 points in near-identical colours behind a paged
	// legend).
	sc := scatterBase("mean gold patch lines in the repository", "% passed", "value")
	ch.Table = templates.ChartTable{Columns: []string{"repository", "mean gold lines", "mean % passed", "systems"}}
	var pts []opts.ScatterData
	ranked := b.m.board(ds, b.repoSplit(ds)).ranked()
	for _, repo := range ds.Repos {
		if repo.Reported == nil || !repo.Reported.Lines.Set() {
			continue
		}
		sum, n := 0.0, 0
		for _, e := range ranked {
			if rep := e.sub.Reported; rep != nil {
				if sr := rep.Repos[repo.Name]; sr != nil && sr.Passed.Set() {
					sum += sr.Passed.Value
					n++
				}
			}
		}
		if n == 0 {
			continue
		}
		mean := round(sum/float64(n), 1)
		pts = append(pts, opts.ScatterData{Name: repo.Name, Value: []any{repo.Reported.Lines.Value, mean}})
		ch.Table.Rows = append(ch.Table.Rows, []string{repo.Name, repo.Reported.Lines.Text, num(mean, 1), strconv.Itoa(n)})
	}
	if len(pts) == 0 {
		ch.Empty = "Needs per-instance results with gold-patch sizes, or published per-repository figures."
		ch.Table = templates.ChartTable{}
		return ch
	}
	sc.AddSeries("repositories", pts, pointNames)
	ch.Caption = "One point per repository, named: the mean over the systems that publish it of their % passed on the repository, against its mean gold-patch lines (per-instance results are not available for this dataset)."
	ch.Options = options(sc)
	placeLabels(ch.Options.(map[string]any), "side", "repositories")
	return ch
}

func (b *builder) passVsDate(ds *bench.Dataset, mp map[*bench.Instance]float64) templates.Chart {
	ch := templates.Chart{ID: "chart-pass-date", Title: "Pass rate against instance creation date",
		Caption: "One point per instance: mean % of F2P tests passed over the systems evaluated on it, against when the instance was created."}
	sc := scatterBase("created", "% passed", "time")
	var pts []opts.ScatterData
	ch.Table.Columns = []string{"instance", "created", "% passed"}
	for _, in := range ds.Instances {
		v, ok := mp[in]
		t, err := in.Created()
		if !ok || err != nil || t.IsZero() {
			continue
		}
		pts = append(pts, opts.ScatterData{Name: in.InstanceID, Value: []any{t.UTC().Format(time.RFC3339), round(v*100, 2)}})
		ch.Table.Rows = append(ch.Table.Rows, []string{in.InstanceID, t.UTC().Format("2006-01-02"), num(v*100, 2)})
	}
	if len(pts) == 0 {
		ch.Empty = "Needs per-instance results and instance creation dates, which this dataset does not publish."
		ch.Table = templates.ChartTable{}
		return ch
	}
	sc.AddSeries("instances", pts)
	ch.Options = options(sc)
	return ch
}

func (b *builder) failureModes(ds *bench.Dataset) templates.Chart {
	ch := templates.Chart{ID: "chart-failures", Title: "Failure modes",
		Caption: "Error types in failing tests, counted over every per-instance result on this dataset."}
	var subs [][]bench.Result
	for _, s := range b.perInstanceSubs(ds) {
		subs = append(subs, s.Results)
	}
	counts := metrics.FailureModes(subs...)
	if len(counts) == 0 {
		ch.Empty = "Needs per-instance results with failure modes, which this dataset's submissions do not publish."
		return ch
	}
	return failureChart(ch.ID, ch.Title, ch.Caption, counts)
}

// failureChart is a bar per error type, most frequent first, as the
// FeatureBench paper's failure-mode figure.
func failureChart(id, title, caption string, counts []metrics.Count) templates.Chart {
	ch := templates.Chart{ID: id, Title: title, Caption: caption}
	var cats []string
	var vals []opts.BarData
	ch.Table.Columns = []string{"error type", "failing tests"}
	for _, c := range counts {
		cats = append(cats, c.Label)
		vals = append(vals, opts.BarData{Value: c.N})
		ch.Table.Rows = append(ch.Table.Rows, []string{c.Label, strconv.Itoa(c.N)})
	}
	bar := barBase("failing tests", cats, true)
	bar.AddSeries("failures", vals)
	ch.Options = options(bar)
	ch.Height = barHeight(len(cats), 1)
	return ch
}

func (b *builder) perRepo(ds *bench.Dataset) templates.Chart {
	ch := templates.Chart{ID: "chart-repos", Title: "Instances per repository",
		Caption: "How many instances each repository contributes, by level."}
	if !ds.HasInstances() {
		ch.Empty = "The per-repository instance counts of this dataset are not published."
		return ch
	}
	count := map[string][2]int{}
	for _, in := range ds.Instances {
		c := count[in.Repo]
		c[in.Level-1]++
		count[in.Repo] = c
	}
	var repos []string
	for r := range count {
		repos = append(repos, r)
	}
	sort.Slice(repos, func(i, j int) bool {
		ci, cj := count[repos[i]], count[repos[j]]
		if ci[0]+ci[1] != cj[0]+cj[1] {
			return ci[0]+ci[1] > cj[0]+cj[1]
		}
		return repos[i] < repos[j]
	})
	var l1, l2 []opts.BarData
	ch.Table.Columns = []string{"repository", "L1", "L2"}
	for _, r := range repos {
		l1 = append(l1, opts.BarData{Value: count[r][0]})
		l2 = append(l2, opts.BarData{Value: count[r][1]})
		ch.Table.Rows = append(ch.Table.Rows, []string{r, strconv.Itoa(count[r][0]), strconv.Itoa(count[r][1])})
	}
	bar := barBase("instances", repos, true)
	bar.AddSeries("L1", l1, charts.WithBarChartOpts(opts.BarChart{Stack: "level"}))
	bar.AddSeries("L2", l2, charts.WithBarChartOpts(opts.BarChart{Stack: "level"}))
	ch.Options = options(bar)
	ch.Height = barHeight(len(repos), 1)
	return ch
}

// tokensChart is % resolved and % passed against mean input (in) or
// output tokens per instance, one labelled point per system.
func (b *builder) tokensChart(bd *board, section string, in bool) templates.Chart {
	which, id := "output", section+"-tokens-out"
	if in {
		which, id = "input", section+"-tokens-in"
	}
	ch := templates.Chart{ID: id, Title: "Resolved and passed rate against " + which + " tokens",
		Caption: "One point per system: % resolved and % passed against mean " + which + " tokens per instance (log scale)."}
	sc := scatterWith("mean "+which+" tokens per instance", "%", "log", "32")
	var res, pass []opts.ScatterData
	ch.Table.Columns = []string{"system", "mean input tokens", "mean output tokens", "% resolved", "% passed"}
	for _, e := range bd.ranked() {
		r := e.row
		t := r.TokensOut
		if in {
			t = r.TokensIn
		}
		if t.Missing {
			continue
		}
		if !r.Resolved.Missing {
			res = append(res, opts.ScatterData{Name: r.Name, Value: []any{t.Sort, r.Resolved.Sort}})
		}
		if !r.Passed.Missing {
			pass = append(pass, opts.ScatterData{Name: r.Name, Value: []any{t.Sort, r.Passed.Sort}})
		}
		ch.Table.Rows = append(ch.Table.Rows, []string{r.Name, r.TokensIn.String(), r.TokensOut.String(), r.Resolved.String(), r.Passed.String()})
	}
	if len(res)+len(pass) == 0 {
		ch.Empty = "No system on this split reports " + which + " token counts."
		ch.Table = templates.ChartTable{}
		return ch
	}
	// Both series' points are named (site.js places each name clear of
	// every point and other name, or numbers it with a key under the
	// chart where there is no room), the ranking figure's first.
	if bd.ds.Ranking() == bench.RankPassed {
		sc.AddSeries("% passed", pass, pointNames)
		sc.AddSeries("% resolved", res, pointNames)
	} else {
		sc.AddSeries("% resolved", res, pointNames)
		sc.AddSeries("% passed", pass, pointNames)
	}
	ch.Options = options(sc)
	placeLabels(ch.Options.(map[string]any), "side", "% resolved", "% passed")
	return ch
}

// paretoChart is % resolved against what it cost: mean cost per instance
// where at least two systems report one, else mean input tokens, and the
// title and caption say which. The line joins the systems no other system
// beats on both (cheaper and better); only they are named on the chart,
// above their points (the line leaves each to the right and comes from
// below), the others in the tooltip and the table.
func (b *builder) paretoChart(bd *board, section string) templates.Chart {
	ch := templates.Chart{ID: section + "-pareto"}
	type point struct {
		name string
		x, y float64
		xs   string
	}
	collect := func(x func(templates.Row) templates.Cell) []point {
		var pts []point
		for _, e := range bd.ranked() {
			c := x(e.row)
			if c.Missing || e.row.Resolved.Missing {
				continue
			}
			pts = append(pts, point{e.row.Name, c.Sort, e.row.Resolved.Sort, c.Text})
		}
		return pts
	}
	xName, unit, better := "mean cost per instance (US dollars)", "cost", "cheaper and better"
	pts := collect(func(r templates.Row) templates.Cell { return r.Cost })
	xType := "value"
	if len(pts) < 2 {
		xName, unit, xType, better = "mean input tokens per instance", "input tokens", "log", "resolves more with fewer input tokens"
		pts = collect(func(r templates.Row) templates.Cell { return r.TokensIn })
	}
	ch.Title = "Resolved rate against " + unit + ": the Pareto front"
	if len(pts) < 2 {
		ch.Title = "Resolved rate against cost: the Pareto front"
		ch.Empty = "Needs at least two systems on this split that report their cost or token counts."
		return ch
	}
	ch.Caption = "One point per system: % resolved against mean " + unit + " per instance. The line joins the systems on the Pareto front, named on the chart: no other system " + better + "."
	// The front: by x ascending, each point that resolves more than every
	// cheaper one.
	sorted := append([]point(nil), pts...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].x != sorted[j].x {
			return sorted[i].x < sorted[j].x
		}
		return sorted[i].y > sorted[j].y
	})
	onFront := map[string]bool{}
	var front []opts.LineData
	best := -1.0
	for _, p := range sorted {
		if p.y > best {
			best = p.y
			onFront[p.name] = true
			front = append(front, opts.LineData{Name: p.name, Value: []any{p.x, p.y}})
		}
	}
	sc := scatterWith(xName, "% resolved", xType, "32")
	var named, others []opts.ScatterData
	ch.Table.Columns = []string{"system", unit, "% resolved", "on the front"}
	for _, p := range pts {
		d := opts.ScatterData{Name: p.name, Value: []any{p.x, p.y}}
		front := "no"
		if onFront[p.name] {
			front = "yes"
			named = append(named, d)
		} else {
			others = append(others, d)
		}
		ch.Table.Rows = append(ch.Table.Rows, []string{p.name, p.xs, num(p.y, 1), front})
	}
	sc.AddSeries("on the front", named, pointNames)
	sc.AddSeries("others", others)
	line := charts.NewLine()
	line.AddSeries("Pareto front", front, charts.WithLineChartOpts(opts.LineChart{Step: "end"}))
	sc.Overlap(line)
	ch.Options = options(sc)
	placeLabels(ch.Options.(map[string]any), "front", "on the front")
	return ch
}

// timeChart is the best % resolved by submission date: a step line of
// the best a ranked system had reached by each date, each system a point
// at its date, the ones that set a new best named.
func (b *builder) timeChart(bd *board, section string) templates.Chart {
	ch := templates.Chart{ID: section + "-time", Title: "Best resolved rate over time",
		Caption: "One point per system at its submission date: % resolved (per attempt for a system with several; as published for a reported one). The line is the best any ranked system had reached by each date; the systems that raised it are named."}
	type sub struct {
		name string
		when time.Time
		y    float64
	}
	var subs []sub
	for _, e := range bd.ranked() {
		if e.row.Resolved.Missing {
			continue
		}
		subs = append(subs, sub{e.row.Name, e.sub.Date, e.row.Resolved.Sort})
	}
	if len(subs) == 0 {
		ch.Empty = "No ranked system on this split has a % resolved."
		return ch
	}
	sort.SliceStable(subs, func(i, j int) bool {
		if !subs[i].when.Equal(subs[j].when) {
			return subs[i].when.Before(subs[j].when)
		}
		return subs[i].y > subs[j].y
	})
	day := func(t time.Time) string { return t.UTC().Format("2006-01-02") }
	var records, others []opts.ScatterData
	var line []opts.LineData
	best := -1.0
	ch.Table.Columns = []string{"system", "date", "% resolved", "best by then"}
	for i, s := range subs {
		d := opts.ScatterData{Name: s.name, Value: []any{day(s.when), s.y}}
		if s.y > best {
			best = s.y
			records = append(records, d)
		} else {
			others = append(others, d)
		}
		// One step a date: the best once every system of the date counts.
		if i+1 == len(subs) || !subs[i+1].when.Equal(s.when) {
			line = append(line, opts.LineData{Name: "best by " + day(s.when), Value: []any{day(s.when), best}})
		}
		ch.Table.Rows = append(ch.Table.Rows, []string{s.name, day(s.when), num(s.y, 1), num(best, 1)})
	}
	// The axis spans at least two weeks of whole days: submissions of one
	// date made an axis of hours (06:00, 12:00) with the line a point. The
	// line goes on to the axis's end: the best as of the last date.
	first, last := subs[0].when.UTC().Truncate(24*time.Hour), subs[len(subs)-1].when.UTC().Truncate(24*time.Hour)
	if span := last.Sub(first); span < minTimeSpan {
		pad := (minTimeSpan - span) / 2
		pad = pad.Truncate(24 * time.Hour)
		first, last = first.Add(-pad), last.Add(pad)
	}
	first, last = first.Add(-24*time.Hour), last.Add(24*time.Hour)
	if day(last) != day(subs[len(subs)-1].when) {
		line = append(line, opts.LineData{Name: "best as of the last submission", Value: []any{day(last), best}, Symbol: "none"})
	}
	sc := scatterWith("submission date", "% resolved", "time", "32")
	sc.AddSeries("raised the best", records, pointNames)
	sc.AddSeries("others", others)
	l := charts.NewLine()
	l.AddSeries("best so far", line, charts.WithLineChartOpts(opts.LineChart{Step: "end"}))
	sc.Overlap(l)
	o := options(sc)
	for _, x := range axisList(o["xAxis"]) {
		x["min"], x["max"] = day(first), day(last)
		x["minInterval"] = 24 * time.Hour / time.Millisecond
		// Short labels, a phone's axis holds five: "21 Jan", "Feb ’26",
		// the year alone at its turn.
		x["splitNumber"] = 4
		x["axisLabel"] = map[string]any{"formatter": map[string]any{"year": "{yyyy}", "month": "{MMM} ’{yy}", "day": "{d} {MMM}"}, "hideOverlap": true}
	}
	ch.Options = o
	placeLabels(ch.Options.(map[string]any), "front", "raised the best")
	return ch
}

// minTimeSpan is the least span of dates a time chart's axis shows.
const minTimeSpan = 14 * 24 * time.Hour

// levelChart is % resolved (or % passed) on L1 and L2 instances per
// system, in leaderboard order (paper Table 8 gives both).
func (b *builder) levelChart(bd *board, section string, passed bool) templates.Chart {
	ch := templates.Chart{ID: section + "-levels", Title: "Resolved rate by level",
		Caption: "% resolved on L1 (extend a codebase) and L2 (build from scratch) instances, per system."}
	yName := "% resolved"
	pick := func(r templates.Row) (l1, l2 templates.Cell) { return r.L1Resolved, r.L2Resolved }
	if passed {
		ch = templates.Chart{ID: section + "-levels-passed", Title: "Passed rate by level",
			Caption: "% of fail-to-pass tests passed on L1 (extend a codebase) and L2 (build from scratch) instances, per system."}
		yName = "% passed"
		pick = func(r templates.Row) (l1, l2 templates.Cell) { return r.L1Passed, r.L2Passed }
	}
	var cats, without []string
	var l1, l2 []opts.BarData
	ch.Table.Columns = []string{"system", "L1", "L2"}
	for _, e := range bd.ranked() {
		c1, c2 := pick(e.row)
		if c1.Missing && c2.Missing {
			without = append(without, e.row.Name)
			continue
		}
		cats = append(cats, e.row.Name)
		l1 = append(l1, barValue(c1))
		l2 = append(l2, barValue(c2))
		ch.Table.Rows = append(ch.Table.Rows, []string{e.row.Name, c1.String(), c2.String()})
	}
	if len(cats) == 0 {
		ch.Empty = "No system on this split has " + yName + " by level."
		ch.Table = templates.ChartTable{}
		return ch
	}
	if len(without) > 0 {
		what := "publishes"
		if len(without) > 1 {
			what = "publish"
		}
		ch.Without = fmt.Sprintf("Not shown: %s, which %s no %s by level (%d of the %d ranked systems).",
			strings.Join(without, "; "), what, yName, len(without), len(bd.ranked()))
	}
	bar := barBase(yName, cats, false)
	bar.AddSeries("L1", l1)
	bar.AddSeries("L2", l2)
	ch.Options = options(bar)
	ch.Height = barHeight(len(cats), 2)
	return ch
}

// pointNames shows each point's name: site.js places it (placeLabels).
var pointNames = charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Formatter: "{b}", FontSize: 11})

// maxNamedPoints is the most points a scatter of instances names: more
// and the names are no longer readable (the table has them).
const maxNamedPoints = 60

func barValue(c templates.Cell) opts.BarData {
	if c.Missing {
		return opts.BarData{Value: "-"}
	}
	return opts.BarData{Value: c.Sort}
}
