package site

import (
	"sort"
	"time"

	"github.com/a-h/templ"
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/metrics"
	"github.com/featbench/featbench/templates"
)

// The charts of a dataset version, built as ECharts options with
// go-echarts. Each falls back to published per-repository or per-level
// figures when per-instance results are missing, and says so when neither
// exists.

func (b *builder) chartsPage(ds *bench.Dataset) templ.Component {
	c := &templates.ChartsPage{
		Page: b.frame(ds.DisplayName()+" charts", "Charts of "+ds.DisplayName()+" results.",
			templates.Link{Title: "Home", URL: b.m.u.base},
			templates.Link{Title: ds.DisplayName(), URL: b.m.u.dataset(ds)},
			templates.Link{Title: "Charts"}),
		Dataset: ds.DisplayName(), DatasetURL: b.m.u.dataset(ds),
	}
	c.Charts = []templates.Chart{
		b.passVsLines(ds),
		b.tokensChart(ds),
		b.passVsDate(ds),
		b.failureModes(ds),
		b.perRepo(ds),
		b.byLevel(ds),
		b.passedByLevel(ds),
	}
	c.Page.Charts = true
	return templates.ChartsPageView(c)
}

func scatterBase(title, xName, yName string, xType string) *charts.Scatter {
	sc := charts.NewScatter()
	sc.SetGlobalOptions(
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Bottom: "0"}),
		charts.WithXAxisOpts(opts.XAxis{Name: xName, Type: xType, NameLocation: "middle", NameGap: 28}),
		charts.WithYAxisOpts(opts.YAxis{Name: yName, Type: "value"}),
		charts.WithGridOpts(opts.Grid{Bottom: "70", Left: "60", Right: "30"}),
		charts.WithAnimation(false),
	)
	return sc
}

// perInstanceEntries are a dataset's submissions with per-instance results.
func (b *builder) perInstanceSubs(ds *bench.Dataset) []*bench.Submission {
	var out []*bench.Submission
	for _, s := range b.data.Submissions {
		if s.Dataset == ds && s.PerInstance() {
			out = append(out, s)
		}
	}
	return out
}

// meanPassed is, per instance, the mean F2P fraction passed over the
// systems evaluated on it (a missing prediction counts as none).
func (b *builder) meanPassed(ds *bench.Dataset) map[string]float64 {
	sum := map[string]float64{}
	n := map[string]int{}
	for _, s := range b.perInstanceSubs(ds) {
		for _, in := range ds.SplitInstances(s.Split) {
			n[in.InstanceID]++
			if r := s.ResultOf(in); r != nil {
				sum[in.InstanceID] += metrics.PassedFraction(in, r)
			}
		}
	}
	out := make(map[string]float64, len(n))
	for id, k := range n {
		out[id] = sum[id] / float64(k)
	}
	return out
}

func (b *builder) passVsLines(ds *bench.Dataset) templates.Chart {
	ch := templates.Chart{ID: "chart-pass-lines", Title: "Pass rate against gold-patch size"}
	if mp := b.meanPassed(ds); len(mp) > 0 {
		ch.Caption = "One point per instance: mean % of F2P tests passed over the systems evaluated on it, against the lines of its gold patch."
		sc := scatterBase(ch.Title, "gold patch lines", "% passed", "value")
		var pts []opts.ScatterData
		for _, in := range ds.Instances {
			if v, ok := mp[in.InstanceID]; ok && in.Lines != nil {
				pts = append(pts, opts.ScatterData{Name: in.InstanceID, Value: []any{*in.Lines, round(v*100, 2)}})
			}
		}
		sc.AddSeries("instances", pts)
		ch.Options = sc.JSON()
		return ch
	}
	// Per repository, from the published repository statistics and results.
	sc := scatterBase(ch.Title, "mean gold patch lines in the repository", "% passed", "value")
	drawn := false
	for _, e := range b.m.board(ds, b.repoSplit(ds)).entries {
		rep := e.sub.Reported
		if rep == nil || len(rep.Repos) == 0 {
			continue
		}
		var pts []opts.ScatterData
		for _, repo := range ds.Repos {
			sr := rep.Repos[repo.Name]
			if sr == nil || repo.Reported == nil || !repo.Reported.Lines.Set() || !sr.Passed.Set() {
				continue
			}
			pts = append(pts, opts.ScatterData{Name: repo.Name, Value: []any{repo.Reported.Lines.Value, sr.Passed.Value}})
		}
		if len(pts) > 0 {
			drawn = true
			sc.AddSeries(e.sub.Name, pts)
		}
	}
	if !drawn {
		ch.Empty = "Needs per-instance results or published per-repository figures."
		return ch
	}
	ch.Caption = "One point per repository and system: published % passed against the repository's mean gold-patch lines (per-instance results are not available for this dataset)."
	ch.Options = sc.JSON()
	return ch
}

func (b *builder) tokensChart(ds *bench.Dataset) templates.Chart {
	split := b.repoSplit(ds)
	ch := templates.Chart{ID: "chart-tokens", Title: "Resolved and passed rate against token I/O",
		Caption: "One point per system on the " + split + " split: % resolved and % passed against mean input tokens per instance."}
	sc := scatterBase(ch.Title, "mean input tokens per instance", "%", "log")
	var res, pass []opts.ScatterData
	for _, e := range b.m.board(ds, split).entries {
		r := e.row
		if r.TokensIn.Missing {
			continue
		}
		label := r.Name + " (" + r.TokensIn.Text + " / " + r.TokensOut.String() + ")"
		if !r.Resolved.Missing {
			res = append(res, opts.ScatterData{Name: label, Value: []any{r.TokensIn.Sort, r.Resolved.Sort}})
		}
		if !r.Passed.Missing {
			pass = append(pass, opts.ScatterData{Name: label, Value: []any{r.TokensIn.Sort, r.Passed.Sort}})
		}
	}
	if len(res)+len(pass) == 0 {
		ch.Empty = "No system on this split reports token counts."
		return ch
	}
	sc.AddSeries("% resolved", res)
	sc.AddSeries("% passed", pass)
	ch.Options = sc.JSON()
	return ch
}

func (b *builder) passVsDate(ds *bench.Dataset) templates.Chart {
	ch := templates.Chart{ID: "chart-pass-date", Title: "Pass rate against instance creation date",
		Caption: "One point per instance: mean % of F2P tests passed over the systems evaluated on it, against when the instance was created."}
	mp := b.meanPassed(ds)
	sc := scatterBase(ch.Title, "created", "% passed", "time")
	var pts []opts.ScatterData
	for _, in := range ds.Instances {
		v, ok := mp[in.InstanceID]
		t, err := in.Created()
		if !ok || err != nil || t.IsZero() {
			continue
		}
		pts = append(pts, opts.ScatterData{Name: in.InstanceID, Value: []any{t.UTC().Format(time.RFC3339), round(v*100, 2)}})
	}
	if len(pts) == 0 {
		ch.Empty = "Needs per-instance results and instance creation dates, which this dataset does not publish."
		return ch
	}
	sc.AddSeries("instances", pts)
	ch.Options = sc.JSON()
	return ch
}

func barBase(xName, yName string, categories []string) *charts.Bar {
	bar := charts.NewBar()
	bar.SetGlobalOptions(
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Bottom: "0"}),
		charts.WithXAxisOpts(opts.XAxis{Name: xName, Type: "category", AxisLabel: &opts.AxisLabel{Rotate: 30, Interval: "0"}}),
		charts.WithYAxisOpts(opts.YAxis{Name: yName}),
		charts.WithGridOpts(opts.Grid{Bottom: "120", Left: "60", Right: "30"}),
		charts.WithAnimation(false),
	)
	bar.SetXAxis(categories)
	return bar
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
	var cats []string
	var vals []opts.BarData
	for _, c := range counts {
		cats = append(cats, c.Label)
		vals = append(vals, opts.BarData{Value: c.N})
	}
	bar := barBase("error type", "count", cats)
	bar.AddSeries("failures", vals)
	ch.Options = barJSON(bar)
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
	for _, r := range repos {
		l1 = append(l1, opts.BarData{Value: count[r][0]})
		l2 = append(l2, opts.BarData{Value: count[r][1]})
	}
	bar := barBase("repository", "instances", repos)
	bar.AddSeries("L1", l1, charts.WithBarChartOpts(opts.BarChart{Stack: "level"}))
	bar.AddSeries("L2", l2, charts.WithBarChartOpts(opts.BarChart{Stack: "level"}))
	ch.Options = barJSON(bar)
	return ch
}

// byLevel is % resolved by level per system; passedByLevel the same for
// % passed (paper Table 8 gives both). Both list the systems of the default
// split in leaderboard order.
func (b *builder) byLevel(ds *bench.Dataset) templates.Chart {
	split := b.repoSplit(ds)
	return b.levelChart(ds, split, templates.Chart{ID: "chart-levels", Title: "Resolved rate by level",
		Caption: "% resolved on L1 (extend a codebase) and L2 (build from scratch) instances, per system on the " + split + " split."},
		"% resolved", func(r templates.Row) (l1, l2 templates.Cell) { return r.L1Resolved, r.L2Resolved })
}

func (b *builder) passedByLevel(ds *bench.Dataset) templates.Chart {
	split := b.repoSplit(ds)
	return b.levelChart(ds, split, templates.Chart{ID: "chart-levels-passed", Title: "Passed rate by level",
		Caption: "% of fail-to-pass tests passed on L1 (extend a codebase) and L2 (build from scratch) instances, per system on the " + split + " split."},
		"% passed", func(r templates.Row) (l1, l2 templates.Cell) { return r.L1Passed, r.L2Passed })
}

func (b *builder) levelChart(ds *bench.Dataset, split string, ch templates.Chart, yName string, pick func(templates.Row) (l1, l2 templates.Cell)) templates.Chart {
	var cats []string
	var l1, l2 []opts.BarData
	for _, e := range b.m.board(ds, split).entries {
		c1, c2 := pick(e.row)
		if c1.Missing && c2.Missing {
			continue
		}
		cats = append(cats, e.row.Name)
		l1 = append(l1, barValue(c1))
		l2 = append(l2, barValue(c2))
	}
	if len(cats) == 0 {
		ch.Empty = "No system on this split has " + yName + " by level."
		return ch
	}
	bar := barBase("system", yName, cats)
	bar.AddSeries("L1", l1)
	bar.AddSeries("L2", l2)
	ch.Options = barJSON(bar)
	return ch
}

// barJSON is a bar chart's options. Validate puts the categories set with
// SetXAxis into the x axis: JSON alone leaves them out, and the bars would
// have no labels.
func barJSON(bar *charts.Bar) map[string]any {
	bar.Validate()
	return bar.JSON()
}

func barValue(c templates.Cell) opts.BarData {
	if c.Missing {
		return opts.BarData{Value: "-"}
	}
	return opts.BarData{Value: c.Sort}
}
