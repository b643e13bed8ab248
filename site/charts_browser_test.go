package site_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/featbench/featbench/internal/testenv"
	"github.com/featbench/featbench/site"
)

// chartReadingJS reports, for each drawn chart, what a reader can read
// of it: the named series' points whose name is on the chart nor in its
// key, the names drawn over another point, the x axis's tick labels of a
// log axis, category names cut short, and the ranked systems a by-level
// chart neither shows nor names as left out.
const chartReadingJS = `(() => {
	const out = [];
	for (const el of document.querySelectorAll("div.chart[data-drawn='1']")) {
		const chart = window.echarts.getInstanceByDom(el);
		const opt = chart.getOption();
		const box = el.getBoundingClientRect();
		const texts = Array.from(el.querySelectorAll("svg text")).filter(x => getComputedStyle(x).display !== "none" && x.textContent.trim() !== "")
			.map(x => ({t: x.textContent.trim(), r: x.getBoundingClientRect()})).filter(x => x.r.width > 0);
		const shown = new Set(texts.map(x => x.t));
		const key = (el.parentNode.querySelector("p.chart-key[data-for='" + el.id + "']") || {textContent: ""}).textContent;
		const unnamed = [], onPoint = [];
		const points = [];
		opt.series.forEach((s, si) => (s.data || []).forEach(d => {
			const v = d && d.value !== undefined ? d.value : d;
			const p = chart.convertToPixel({seriesIndex: si}, v);
			if (p) points.push({x: p[0] + box.left, y: p[1] + box.top, name: d && d.name});
		}));
		opt.series.forEach(s => {
			if (s.type !== "scatter" || !(s.data || []).some(d => d && d.label && d.label.show) && !(s.label && s.label.show)) return;
			for (const d of s.data || []) {
				if (d && d.name && !shown.has(d.name) && !key.includes(d.name)) unnamed.push(s.name + ": " + d.name);
			}
		});
		for (const x of texts) {
			for (const p of points) {
				if (p.x > x.r.left + 1 && p.x < x.r.right - 1 && p.y > x.r.top + 1 && p.y < x.r.bottom - 1) { onPoint.push(x.t + " on " + p.name); break; }
			}
		}
		const xa = [].concat(opt.xAxis || [])[0] || {};
		const ticks = texts.filter(x => x.r.top > box.top + box.height - 60 && /^[0-9.,]+[kM]?$/.test(x.t)).map(x => x.t);
		// Every label of the bottom axis, left to right, with its extent.
		const bottom = texts.filter(x => x.r.top > box.top + box.height - 60 && x.t !== xa.name).sort((a, b) => a.r.left - b.r.left)
			.map(x => ({t: x.t, l: x.r.left, r: x.r.right}));
		const cut = texts.filter(x => x.t.endsWith("...") || x.t.endsWith("…")).map(x => x.t);
		const cats = ([].concat(opt.yAxis || [])[0] || {}).data || [];
		const without = (el.closest("figure").querySelector("p.chart-without") || {textContent: ""}).textContent;
		out.push({id: el.id, unnamed: unnamed, onPoint: onPoint.slice(0, 5), log: !!(xa.type === "log" || (xa.axisLabel && xa.axisLabel.customValues)),
			ticks: ticks, bottom: bottom, cut: cut, cats: cats.map(c => typeof c === "object" ? c.value : c), without: without});
	}
	return out;
})()`

type chartReading struct {
	ID      string
	Unnamed []string
	OnPoint []string
	Log     bool
	Ticks   []string
	Bottom  []struct {
		T    string
		L, R float64
	}
	Cut     []string
	Cats    []string
	Without string
}

// TestBrowserChartReading: FeatureBench's charts read as the issue asks,
// at a phone's width and a laptop's. The Pareto front's systems and both
// series of the token charts are named (on the chart, or numbered with a
// key under it where no place is free), no name sits on another point,
// a log axis has at least three ticks (it had two), the gold-patch-size
// scatter names its points, and the by-level charts show every ranked
// system or say which they leave out, their names whole. Before, one
// front system was unlabelled, the token charts named one series, names
// covered other points, the log axes ticked at 1M and 10M alone, the
// scatter named nothing and the by-level charts cut names and dropped a
// system silently.
func TestBrowserChartReading(t *testing.T) {
	chromium := testenv.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	dir := buildSiteForBrowser(t, ctx)
	mux := http.NewServeMux()
	mux.Handle(browserBase, site.Handler(dir, browserBase))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := startBrowser(t, ctx, chromium, srv.URL)
	ranked := map[string]int{"full": 8, "lite": 20, "fast": 8}
	for _, w := range widths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			b.do(t, "sizing the window", chromedp.EmulateViewport(w, 900))
			b.open(t, fbCharts)
			if !b.waitChartsDrawn(t, fbCharts) {
				return
			}
			got := map[string]chartReading{}
			for _, c := range eval[[]chartReading](t, b, chartReadingJS) {
				got[c.ID] = c
			}
			for _, id := range []string{"chart-pass-lines", "split-full-tokens-in", "split-full-tokens-out", "split-full-pareto", "split-lite-pareto", "split-lite-tokens-in", "split-lite-time", "split-full-time"} {
				c, ok := got[id]
				if !ok {
					t.Errorf("at %d px: chart %s not drawn", w, id)
					continue
				}
				if len(c.Unnamed) > 0 {
					t.Errorf("at %d px: chart %s leaves points unnamed: %q", w, id, c.Unnamed)
				}
				if len(c.OnPoint) > 0 {
					t.Errorf("at %d px: chart %s writes names over other points: %q", w, id, c.OnPoint)
				}
			}
			for _, id := range []string{"split-full-tokens-in", "split-full-tokens-out", "split-full-pareto"} {
				if c := got[id]; len(c.Ticks) < 3 {
					t.Errorf("at %d px: chart %s's log axis has %d tick labels %q, want at least three", w, id, len(c.Ticks), c.Ticks)
				}
			}
			// The time charts' axis: dates, not hours (a split whose
			// systems share one date had 06:00, 12:00, 18:00), labels
			// apart (at 390 px they ran together).
			for _, id := range []string{"split-full-time", "split-lite-time", "split-fast-time"} {
				c := got[id]
				var labels []string
				for i, x := range c.Bottom {
					labels = append(labels, x.T)
					if i > 0 && x.L < c.Bottom[i-1].R+4 {
						t.Errorf("at %d px: chart %s's date labels %q and %q run together", w, id, c.Bottom[i-1].T, x.T)
					}
				}
				if len(labels) < 2 || strings.Contains(strings.Join(labels, " "), ":") {
					t.Errorf("at %d px: chart %s's date axis reads %q", w, id, labels)
				}
			}
			// Named series: both of a token chart's, the scatter's one.
			for id, want := range map[string]int{"split-full-tokens-in": 2, "split-full-tokens-out": 2, "chart-pass-lines": 1, "split-full-pareto": 1} {
				n := eval[int](t, b, `window.echarts.getInstanceByDom(document.getElementById(`+jsString(id)+`)).getOption().series.filter(s => s.type === "scatter" && ((s.data || []).some(d => d && d.label && d.label.show) || (s.label && s.label.show))).length`)
				if n != want {
					t.Errorf("at %d px: chart %s names the points of %d series, want %d", w, id, n, want)
				}
			}
			for split, n := range ranked {
				for _, id := range []string{"split-" + split + "-levels", "split-" + split + "-levels-passed"} {
					c, ok := got[id]
					if !ok {
						continue
					}
					if len(c.Cut) > 0 {
						t.Errorf("at %d px: chart %s cuts names: %q", w, id, c.Cut)
					}
					left := n - len(c.Cats)
					if left > 0 && !strings.Contains(c.Without, fmt.Sprintf("(%d of the %d ranked systems)", left, n)) {
						t.Errorf("at %d px: chart %s shows %d of %d ranked systems and says %q", w, id, len(c.Cats), n, c.Without)
					}
				}
			}
		})
	}
	b.do(t, "restoring the window", chromedp.EmulateViewport(1280, 900))
	b.checkNoErrors(t)
}
