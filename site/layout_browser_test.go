package site_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/featbench/featbench/internal/testenv"
	"github.com/featbench/featbench/site"
)

// The layout the issue found broken, checked in headless Chromium at a
// phone's width (390 px) and a laptop's (1366 px), and axe-core's
// accessibility rules on every page type.

// widths are the viewports the layout is checked at.
var widths = []int64{390, 1366}

// Pages of the shipped site, one or more of each type.
const (
	fbFull        = browserBase + "leaderboard/featurebench/v1.0/full/"
	exampleLite   = browserBase + "leaderboard/example/v2/lite/"
	fbSystem      = browserBase + "datasets/featurebench/v1.0/systems/openhands_claude-opus-4.5/"
	exampleSystem = exampleDataset + "systems/tiny-agent/"
	exampleInst   = exampleDataset + "instances/featbench__textkit.test_markdown.c9d46312.lv1/"
	fbRepos       = browserBase + "datasets/featurebench/v1.0/repos/"
	exampleRepos  = exampleDataset + "repos/"
	// The fixture with a trajectory (trajectoryFixture), under its own
	// base path: the shipped data has none.
	fixtureTraj     = fixtureBase + trajPage
	fixtureTrajInst = fixtureBase + trajInstance
)

// pageTypes are the pages axe-core checks, by type.
var pageTypes = []struct{ kind, path string }{
	{"home", browserBase},
	{"board", liteBoard},
	{"board", exampleLite},
	{"system", fbSystem},
	{"system", exampleSystem},
	{"instance", exampleInst},
	{"dataset", exampleDataset},
	{"dataset", browserBase + "datasets/featurebench/v1.0/"},
	{"datasets", browserBase + "datasets/"},
	{"repository", fbRepos},
	{"repository", exampleRepos},
	{"charts", fbCharts},
	{"charts", exampleCharts},
	{"compare", exampleCompare},
	{"trajectory", fixtureTraj},
	{"instance", fixtureTrajInst},
	{"not-found", browserBase + "404.html"},
	// A dataset whose statements are private: ids as text, no task pages.
	{"dataset", privateBase + "datasets/demo/v1/"},
	{"system", privateBase + "datasets/demo/v1/systems/agent-a/"},
}

// privateBase serves the fixture whose dataset.toml says statements =
// "private".
const privateBase = "/private/"

func TestBrowserLayout(t *testing.T) {
	chromium := testenv.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	dir := buildSiteForBrowser(t, ctx)
	traj := trajectoryFixture(t, ctx)
	popts := statementsProject(t, "private")
	popts.Config.BaseURL = privateBase
	prep, err := site.Build(ctx, popts)
	if err != nil {
		t.Fatalf("building the fixture with private statements: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle(browserBase, site.Handler(dir, browserBase))
	mux.Handle(fixtureBase, site.Handler(traj, fixtureBase))
	mux.Handle(privateBase, site.Handler(prep.Output, privateBase))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := startBrowser(t, ctx, chromium, srv.URL)
	axe := axeSource(t, ctx)

	for _, w := range widths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			b.do(t, fmt.Sprintf("sizing the window to %d px", w), chromedp.EmulateViewport(w, 900))
			t.Run("RankingColumnInView", func(t *testing.T) { testRankingColumn(t, b) })
			t.Run("StickyNames", func(t *testing.T) { testStickyNames(t, b) })
			t.Run("SystemSplitsFit", func(t *testing.T) { testSystemSplits(t, b, w) })
			t.Run("CompareShowsSystems", func(t *testing.T) { testCompareColumns(t, b) })
			t.Run("ChartTexts", func(t *testing.T) { testChartTexts(t, b) })
			t.Run("TrajectoryFits", func(t *testing.T) { testTrajectoryFits(t, b) })
			t.Run("Axe", func(t *testing.T) { testAxe(t, b, axe) })
			if dir := os.Getenv("FEATBENCH_SCREENSHOTS"); dir != "" {
				t.Run("Screenshots", func(t *testing.T) { screenshots(t, b, dir, w) })
			}
		})
	}
	b.do(t, "restoring the window", chromedp.EmulateViewport(1280, 900))
	b.checkNoErrors(t)
}

// trajectoryFixture builds the fixture project with a trajectory whose
// texts are long, one an unbroken line of thousands of characters, and
// returns its output folder.
func trajectoryFixture(t *testing.T, ctx context.Context) string {
	t.Helper()
	long := strings.Repeat("averylongtokenwithoutanyspace", 120) + ` ` + strings.Repeat("words that wrap ", 400)
	root := fixtureRoot(t, map[string]string{trajSub + "trajectories.tar.gz": string(packTrajectory(t, trajectoryLines(t, long)))})
	opts := fixtureOptions(t, root)
	opts.RequireLocalCharts = true
	rep, err := site.Build(ctx, opts)
	if err != nil {
		t.Fatalf("building the fixture with a trajectory: %v", err)
	}
	return rep.Output
}

// testTrajectoryFits: a trajectory page, every body open, and the
// instance page linking it do not scroll sideways; a body that scrolls in
// its box can take the keyboard's focus.
func testTrajectoryFits(t *testing.T, b *browserTab) {
	b.open(t, fixtureTraj)
	got := eval[struct {
		Over, Bodies int
		Unfocusable  []string
	}](t, b, `(() => {
		document.querySelectorAll("details").forEach(d => d.open = true);
		const bodies = Array.from(document.querySelectorAll("pre.body"));
		const bad = bodies.filter(p => (p.scrollWidth > p.clientWidth + 1 || p.scrollHeight > p.clientHeight + 1) && p.tabIndex < 0)
			.map(p => p.textContent.slice(0, 40));
		return {Over: document.documentElement.scrollWidth - window.innerWidth, Bodies: bodies.length, Unfocusable: bad};
	})()`)
	if got.Bodies == 0 {
		t.Fatalf("%s: no bodies shown", fixtureTraj)
	}
	if got.Over > 0 {
		t.Errorf("%s: the page is %d px wider than the window", fixtureTraj, got.Over)
	}
	// The instance page's row links the trajectory, with visually hidden
	// words in a table that scrolls: they widened the page to 897 px at
	// 390 px until the scroll box held them.
	b.open(t, fixtureTrajInst)
	if over := eval[int](t, b, `document.documentElement.scrollWidth - window.innerWidth`); over > 0 {
		t.Errorf("%s: the page is %d px wider than the window", fixtureTrajInst, over)
	}
	if len(got.Unfocusable) > 0 {
		t.Errorf("%s: bodies that scroll but cannot take the focus: %q", fixtureTraj, got.Unfocusable)
	}
}

// axeSource is axe-core's script, from the npm packages package-lock.json
// pins (scripts/provision-browser.sh installs them; a build installs them
// too where npm is).
func axeSource(t *testing.T, ctx context.Context) string {
	t.Helper()
	opts, err := site.LoadOptions("..", "")
	if err != nil {
		t.Fatal(err)
	}
	path, err := site.NPMFile(ctx, opts, "axe-core/axe.min.js", io.Discard)
	if err != nil {
		if os.Getenv("FEATBENCH_REQUIRE_BROWSER") == "1" {
			t.Fatalf("FEATBENCH_REQUIRE_BROWSER=1 but axe-core is not installed (%v): run bash scripts/provision-browser.sh", err)
		}
		t.Skipf("axe-core is not installed (%v): run bash scripts/provision-browser.sh", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// overflowJS is how far the page scrolls sideways: 0 when nothing sticks
// out of the window.
const overflowJS = `document.documentElement.scrollWidth - window.innerWidth`

// testRankingColumn: on every board the column it ranks by is in the
// window without scrolling sideways, beside the names, and the page
// itself does not scroll sideways (at 390 px the FeatureBench board's
// ranking column was off screen).
func testRankingColumn(t *testing.T, b *browserTab) {
	for _, p := range []string{browserBase, liteBoard, fbFull, exampleLite} {
		b.open(t, p)
		if over := eval[int](t, b, overflowJS); over > 0 {
			t.Errorf("%s: the page is %d px wider than the window", p, over)
		}
		got := eval[struct {
			Found          bool
			Right, Visible float64
			Cells, InView  int
		}](t, b, `(() => {
			const th = document.querySelector("table.board th.rank-by");
			if (!th) return {Found: false};
			const wrap = th.closest(".table-wrap").getBoundingClientRect();
			const visible = Math.min(wrap.right, window.innerWidth);
			const i = Array.from(th.parentNode.cells).indexOf(th);
			const cells = Array.from(th.closest("table").tBodies[0].rows).map(r => r.cells[i]);
			return {Found: true, Right: th.getBoundingClientRect().right, Visible: visible, Cells: cells.length,
				InView: cells.filter(c => c.getBoundingClientRect().right <= visible + 0.5).length};
		})()`)
		if !got.Found {
			t.Errorf("%s: no header marks the column the board ranks by (th.rank-by)", p)
			continue
		}
		if got.Right > got.Visible+0.5 || got.InView != got.Cells {
			t.Errorf("%s: the ranking column ends at %.0f px, beyond the %.0f px in view (%d of %d cells in view)", p, got.Right, got.Visible, got.InView, got.Cells)
		}
	}
}

// stickyJS scrolls every wide table's box to its right end and lists the
// row names that are then out of the box, for each table that scrolls.
const stickyJS = `(() => {
	const out = [];
	for (const wrap of document.querySelectorAll(".table-wrap")) {
		if (wrap.scrollWidth <= wrap.clientWidth + 1 || wrap.getClientRects().length === 0) continue;
		wrap.scrollLeft = wrap.scrollWidth;
		const box = wrap.getBoundingClientRect();
		const table = wrap.querySelector("table");
		const heads = Array.from(table.querySelectorAll("tbody th[scope=row]")).filter(th => th.getClientRects().length > 0);
		const lost = heads.filter(th => { const r = th.getBoundingClientRect(); return r.left < box.left - 1 || r.right > box.right + 1; });
		out.push({table: table.id || (table.caption ? table.caption.textContent.trim().slice(0, 60) : table.className), names: heads.length,
			lost: lost.map(th => th.textContent.trim().slice(0, 40)).slice(0, 3)});
		wrap.scrollLeft = 0;
	}
	return out;
})()`

// testStickyNames: wherever a table is wider than its box, the names stay
// in view when it is scrolled to its other end.
func testStickyNames(t *testing.T, b *browserTab) {
	for _, p := range []string{liteBoard, fbFull, exampleLite, fbSystem, exampleSystem, exampleDataset, exampleInst, fbRepos, exampleCompare} {
		b.open(t, p)
		if p == exampleCompare {
			b.waitCompare(t)
		}
		for _, r := range eval[[]struct {
			Table string
			Names int
			Lost  []string
		}](t, b, stickyJS) {
			if r.Names == 0 || len(r.Lost) > 0 {
				t.Errorf("%s: table %q scrolled to its right end loses its names from view: %d names, out of view %q", p, r.Table, r.Names, r.Lost)
			}
		}
	}
}

// waitCompare waits until site.js has drawn the compare view's table.
func (b *browserTab) waitCompare(t *testing.T) {
	t.Helper()
	var err error
	// A poll started while the new page's context is being made can find
	// none: it is tried again.
	for range 3 {
		_, err = chromedp.Run(b.ctx, chromedp.Poll[chromedp.Void](`document.querySelectorAll("#compare td.cmp").length > 0`,
			chromedp.WithPollingTimeout(10*time.Second)))
		if err == nil || !strings.Contains(err.Error(), "Cannot find context") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the compare view's table was not drawn: %v", err)
	}
}

// testSystemSplits: a system page's results by split fit a laptop's width
// (at 1366 px the table overflowed, the date was clipped, the source
// column hidden and rows were about 115 px tall): no sideways scrolling
// there, rows of one or two lines, each date on one line.
func testSystemSplits(t *testing.T, b *browserTab, width int64) {
	for _, p := range []string{fbSystem, exampleSystem} {
		b.open(t, p)
		got := eval[struct {
			Scroll, Box float64
			Tallest     float64
			Dates       []string
		}](t, b, `(() => {
			const t = document.querySelector("table.splits");
			const wrap = t.closest(".table-wrap");
			const dates = Array.from(t.querySelectorAll("td.date")).filter(td => {
				const range = document.createRange();
				range.selectNodeContents(td);
				return range.getClientRects().length > 1 || td.scrollWidth > td.clientWidth + 1;
			}).map(td => td.textContent);
			return {Scroll: t.scrollWidth, Box: wrap.clientWidth, Dates: dates,
				Tallest: Math.max(...Array.from(t.tBodies[0].rows, r => r.getBoundingClientRect().height))};
		})()`)
		if width >= 1366 && got.Scroll > got.Box+1 {
			t.Errorf("%s at %d px: the splits table is %.0f px wide in a %.0f px box", p, width, got.Scroll, got.Box)
		}
		if len(got.Dates) > 0 {
			t.Errorf("%s at %d px: dates wrapped or clipped: %q", p, width, got.Dates)
		}
		if width >= 1366 && got.Tallest > 60 {
			t.Errorf("%s at %d px: a row of the splits table is %.0f px tall, want at most two lines", p, width, got.Tallest)
		}
	}
}

// testCompareColumns: the compare view shows the systems' columns, not
// only the instance ids (at 390 px the ids filled the screen).
func testCompareColumns(t *testing.T, b *browserTab) {
	b.open(t, exampleCompare)
	b.waitCompare(t)
	got := eval[struct {
		Columns, InView, Marks int
	}](t, b, `(() => {
		const wrap = document.querySelector("#compare").closest(".table-wrap").getBoundingClientRect();
		const right = Math.min(wrap.right, window.innerWidth);
		const cols = Array.from(document.querySelectorAll("#compare thead th[data-system]"));
		const marks = Array.from(document.querySelectorAll("#compare td.cmp")).filter(td => td.getBoundingClientRect().right <= right + 0.5);
		return {Columns: cols.length, InView: cols.filter(th => th.getBoundingClientRect().right <= right + 0.5).length, Marks: marks.length};
	})()`)
	if got.Columns < 2 || got.InView < 2 || got.Marks == 0 {
		t.Errorf("the compare view shows %d of its %d system columns in view (%d marks), want at least two without scrolling", got.InView, got.Columns, got.Marks)
	}
	if over := eval[int](t, b, overflowJS); over > 0 {
		t.Errorf("the compare page is %d px wider than the window", over)
	}
}

// chartTextsJS measures every drawn chart's texts: those that stick out of
// the chart's box (a clipped axis title), pairs whose boxes overlap, and
// labels the Pareto line runs through.
const chartTextsJS = `(() => {
	const out = [];
	const inter = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) * Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
	for (const el of document.querySelectorAll("div.chart[data-drawn='1']")) {
		const box = el.getBoundingClientRect();
		const texts = Array.from(el.querySelectorAll("svg text")).filter(x => {
			const s = getComputedStyle(x);
			return s.display !== "none" && s.visibility !== "hidden" && s.opacity !== "0" && x.textContent.trim() !== "";
		}).map(x => ({t: x.textContent.trim(), r: x.getBoundingClientRect()})).filter(x => x.r.width > 0 && x.r.height > 0);
		const clipped = texts.filter(x => x.r.left < box.left - 0.5 || x.r.right > box.right + 0.5 || x.r.top < box.top - 0.5 || x.r.bottom > box.bottom + 0.5).map(x => x.t);
		const overlaps = [];
		for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
			if (inter(texts[i].r, texts[j].r) > 1) overlaps.push(texts[i].t + " / " + texts[j].t);
		}
		// The Pareto line: its step segments, in the page's pixels.
		const crossed = [];
		const chart = window.echarts.getInstanceByDom(el);
		const opt = chart.getOption();
		opt.series.forEach((s, i) => {
			if (s.type !== "line") return;
			const pts = s.data.map(d => chart.convertToPixel({seriesIndex: i}, d.value || d));
			const segs = [];
			for (let k = 0; k + 1 < pts.length; k++) {
				segs.push([pts[k], [pts[k + 1][0], pts[k][1]]], [[pts[k + 1][0], pts[k][1]], pts[k + 1]]);
			}
			for (const x of texts) {
				const r = {left: x.r.left - box.left + 1, right: x.r.right - box.left - 1, top: x.r.top - box.top + 1, bottom: x.r.bottom - box.top - 1};
				for (const [a, b] of segs) {
					const sr = {left: Math.min(a[0], b[0]), right: Math.max(a[0], b[0]), top: Math.min(a[1], b[1]), bottom: Math.max(a[1], b[1])};
					if (sr.left <= r.right && sr.right >= r.left && sr.top <= r.bottom && sr.bottom >= r.top) { crossed.push(x.t); break; }
				}
			}
		});
		out.push({id: el.id, texts: texts.length, clipped: clipped, overlaps: overlaps.slice(0, 5), crossed: crossed});
	}
	return out;
})()`

// testChartTexts: on the charts pages and a system page's failure chart,
// every chart is drawn, no text sticks out of its box (y-axis titles were
// half cut on the left, the first rotated x labels cut), no two texts
// overlap (point labels ran into each other) and no label sits on the
// Pareto line.
func testChartTexts(t *testing.T, b *browserTab) {
	for _, p := range []string{fbCharts, exampleCharts, exampleSystem} {
		b.open(t, p)
		if !b.waitChartsDrawn(t, p) {
			continue
		}
		charts := eval[[]struct {
			ID                         string
			Texts                      int
			Clipped, Overlaps, Crossed []string
		}](t, b, chartTextsJS)
		if len(charts) == 0 {
			t.Errorf("%s: no chart drawn", p)
		}
		for _, c := range charts {
			if c.Texts == 0 {
				t.Errorf("%s: chart %s has no text to read", p, c.ID)
			}
			if len(c.Clipped) > 0 {
				t.Errorf("%s: chart %s: texts stick out of its box: %q", p, c.ID, c.Clipped)
			}
			if len(c.Overlaps) > 0 {
				t.Errorf("%s: chart %s: texts overlap: %q", p, c.ID, c.Overlaps)
			}
			if len(c.Crossed) > 0 {
				t.Errorf("%s: chart %s: the Pareto line runs through %q", p, c.ID, c.Crossed)
			}
		}
	}
}

// axeRunJS runs axe-core on the page and returns its violations.
const axeRunJS = `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.map(v => ({
	ID: v.id, Impact: v.impact || "", Help: v.help,
	Nodes: v.nodes.slice(0, 4).map(n => n.target.join(" ")), Count: v.nodes.length})))`

type axeViolation struct {
	ID, Impact, Help string
	Nodes            []string
	Count            int
}

// testAxe runs axe-core (4.14, the lockfile's) on every page type: no
// serious or critical violation; the others are logged.
func testAxe(t *testing.T, b *browserTab, axe string) { axePages(t, b, axe, pageTypes) }

// axePages runs axe-core on the pages.
func axePages(t *testing.T, b *browserTab, axe string, pages []struct{ kind, path string }) {
	for _, pt := range pages {
		b.open(t, pt.path)
		if pt.kind == "charts" {
			b.waitChartsDrawn(t, pt.path)
		}
		if pt.kind == "compare" {
			b.waitCompare(t)
		}
		b.do(t, "loading axe-core", chromedp.Evaluate[chromedp.Void](axe))
		vs, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]axeViolation](axeRunJS, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: running axe-core: %v", pt.path, err)
		}
		var bad, minor []string
		for _, v := range vs {
			s := fmt.Sprintf("%s (%s, %d elements: %s): %s", v.ID, v.Impact, v.Count, strings.Join(v.Nodes, "; "), v.Help)
			if v.Impact == "serious" || v.Impact == "critical" {
				bad = append(bad, s)
			} else {
				minor = append(minor, s)
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s page %s: axe-core finds serious or critical violations:\n  %s", pt.kind, pt.path, strings.Join(bad, "\n  "))
		}
		t.Logf("axe-core, %s page %s: %d serious or critical, %d other violations %q", pt.kind, pt.path, len(bad), len(minor), minor)
	}
}

// screenshots saves whole-page screenshots of the boards, a system page,
// the charts and the compare view into dir (FEATBENCH_SCREENSHOTS), for
// a person to look at.
func screenshots(t *testing.T, b *browserTab, dir string, width int64) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Every page type (pageTypes), each page under its type's name.
	seen := map[string]int{}
	for _, pt := range pageTypes {
		seen[pt.kind]++
		s := struct{ name, path string }{fmt.Sprintf("%s-%d", pt.kind, seen[pt.kind]), pt.path}
		b.open(t, s.path)
		switch pt.kind {
		case "charts":
			b.waitChartsDrawn(t, s.path)
		case "compare":
			b.waitCompare(t)
		}
		png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot of %s: %v", s.path, err)
		}
		file := filepath.Join(dir, fmt.Sprintf("%s-%d.png", s.name, width))
		if err := os.WriteFile(file, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("saved %s", file)
	}
}
