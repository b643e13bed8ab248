package site_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/testenv"
	"github.com/featbench/featbench/markup"
	"github.com/featbench/featbench/site"
)

// The browser test serves the site under the subpath GitHub Pages uses, so
// every link and script must carry the base path.
const (
	browserBase      = "/featbench/"
	liteBoard        = browserBase + "leaderboard/featurebench/v1.0/lite/"
	liteBoardSystems = 20
	fbCharts         = browserBase + "datasets/featurebench/v1.0/charts/"
	exampleDataset   = browserBase + "datasets/example/v2/"
	exampleCharts    = exampleDataset + "charts/"
	exampleCompare   = exampleDataset + "compare/lite/"
	chartWait        = 10 * time.Second
	fixtureBase      = "/sub/" // fixtureOptions' base path
	statsBase        = "/stats/"
	statsCompare     = statsBase + "datasets/demo/v1/compare/full/"
)

// TestBrowserLeaderboard builds the site from the shipped data/, serves it
// and drives it in headless Chromium: sorting and filtering the leaderboard
// with the state kept in the URL, the search box, the charts, links to
// instance and system pages, the choice of systems on the compare page and
// the theme toggle. Any console error, uncaught
// exception or failed resource load fails the test.
func TestBrowserLeaderboard(t *testing.T) {
	chromium := testenv.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)

	dir := buildSiteForBrowser(t, ctx)
	// The hostile fixture beside the shipped data, under its own base path.
	fixture := fixtureRoot(t, map[string]string{
		"data/submissions/demo/v1/full/20260301_agent-a/metadata.toml": `name = "Agent A"
scaffold = "S"
model = "M"
date = 2026-03-01
tags = ["a|b", "<img src=x onerror=alert(1)>"]
`,
		"data/submissions/demo/v1/full/20260302_sys-b/metadata.toml": `name = "System B"
scaffold = "S"
model = "N"
date = 2026-03-02
tags = ["a"]

[reported]
source = "a paper"
resolved = "50.0"
`,
	})
	fopts := fixtureOptions(t, fixture)
	fopts.RequireLocalCharts = true
	// Its tag vocabulary: the tags with "|" and a prefix filter; the
	// hostile one shows as text.
	fopts.Config.Boards = map[string]config.Board{"demo": {FilterTags: []string{"a|b", "a"}}}
	if _, err := site.Build(ctx, fopts); err != nil {
		t.Fatalf("building the fixture: %v", err)
	}
	// The statistics project, whose pairs have known counts.
	sopts := statsProject(t)
	sopts.Config.BaseURL = statsBase
	sopts.RequireLocalCharts = true
	srep, err := site.Build(ctx, sopts)
	if err != nil {
		t.Fatalf("building the statistics project: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle(browserBase, site.Handler(dir, browserBase))
	mux.Handle(fixtureBase, site.Handler(filepath.Join(fixture, "public"), fixtureBase))
	mux.Handle(statsBase, site.Handler(srep.Output, statsBase))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := startBrowser(t, ctx, chromium, srv.URL)

	t.Run("Sort", func(t *testing.T) { testBoardSort(t, b) })
	t.Run("FilterInURL", func(t *testing.T) { testBoardFilter(t, b) })
	t.Run("Search", func(t *testing.T) { testBoardSearch(t, b) })
	t.Run("TagWithBar", func(t *testing.T) { testTagWithBar(t, b) })
	t.Run("BoardFits", func(t *testing.T) { testBoardFits(t, b) })
	t.Run("Charts", func(t *testing.T) { testCharts(t, b) })
	t.Run("ChartsWithoutScript", func(t *testing.T) { testChartsWithoutScript(t, b) })
	t.Run("Links", func(t *testing.T) { testLinks(t, b) })
	t.Run("Nav", func(t *testing.T) { testNav(t, b) })
	t.Run("Compare", func(t *testing.T) { testCompare(t, b) })
	t.Run("Paired", func(t *testing.T) { testPaired(t, b) })
	t.Run("Cite", func(t *testing.T) { testCite(t, b) })
	t.Run("Theme", func(t *testing.T) { testTheme(t, b) })
	t.Run("CodeContrast", func(t *testing.T) { testCodeContrast(t, b) })

	b.checkNoErrors(t)
}

// buildSiteForBrowser builds the shipped data/ with the local copy of the
// chart library (the test runs offline) and returns the output folder.
func buildSiteForBrowser(t *testing.T, ctx context.Context) string {
	t.Helper()
	opts, err := site.LoadOptions("..", "")
	if err != nil {
		t.Fatalf("loading featbench.toml: %v", err)
	}
	out := t.TempDir() // absolute: Build writes there, not under Root
	opts.Config.BaseURL = browserBase
	opts.Config.Output = out
	opts.RequireLocalCharts = true
	rep, err := site.Build(ctx, opts)
	if err != nil {
		t.Fatalf("building the site from the shipped data: %v", err)
	}
	if rep.Output != out {
		t.Fatalf("Build wrote to %s, want the absolute output folder %s", rep.Output, out)
	}
	t.Logf("built %d pages into %s", rep.Pages, out)
	return out
}

// browserTab is one headless Chromium tab on the test server. It records the
// console errors, uncaught exceptions and browser log errors of every page.
type browserTab struct {
	ctx    context.Context
	origin string // the test server, http://127.0.0.1:port

	mu     sync.Mutex
	page   string   // the page being tested, for the error messages
	errors []string // console errors, exceptions and failed loads
}

func startBrowser(t testing.TB, ctx context.Context, chromium, origin string) *browserTab {
	t.Helper()
	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, allocCancel := chromedp.NewExecAllocator(ctx, opts...)
	b := &browserTab{origin: origin}
	tabCtx, _ := chromedp.NewContext(allocCtx, chromedp.WithListener(b.listen))
	// Registered after t.TempDir, so the browser is gone before its
	// profile folder is removed.
	t.Cleanup(func() {
		_ = chromedp.Cancel(tabCtx)
		allocCancel()
	})
	if err := chromedp.Do(tabCtx); err != nil {
		t.Fatalf("starting Chromium %s: %v", chromium, err)
	}
	b.ctx = tabCtx
	return b
}

// listen runs in the tab's event loop: it must only record.
func (b *browserTab) listen(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		msg = "console." + string(ev.Type) + ": " + argsText(ev.Args)
	case *runtime.EventExceptionThrown:
		msg = "uncaught exception: " + exceptionText(ev.ExceptionDetails)
	case *log.EventEntryAdded:
		if ev.Entry == nil || ev.Entry.Level != log.EntryLevelError {
			return
		}
		msg = "browser log (" + string(ev.Entry.Source) + "): " + ev.Entry.Text
		if ev.Entry.URL != "" {
			msg += " [" + ev.Entry.URL + "]"
		}
	default:
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, msg+" (on "+b.page+")")
}

func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		var s string
		if len(a.Value) > 0 && json.Unmarshal(a.Value, &s) == nil {
			parts = append(parts, s)
		} else if len(a.Value) > 0 {
			parts = append(parts, string(a.Value))
		} else {
			parts = append(parts, a.Description)
		}
	}
	return strings.Join(parts, " ")
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	s := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		// The description's first line is the error; the rest is the stack.
		s += " " + strings.SplitN(d.Exception.Description, "\n", 2)[0]
	}
	return fmt.Sprintf("%s at %s:%d:%d", s, d.URL, d.LineNumber+1, d.ColumnNumber+1)
}

func (b *browserTab) checkNoErrors(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 {
		t.Errorf("the pages logged %d errors, want none:\n  %s", len(b.errors), strings.Join(b.errors, "\n  "))
	}
}

func (b *browserTab) setPage(p string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.page = p
}

// open loads a site path (with its query, if any) and requires HTTP 200.
func (b *browserTab) open(t testing.TB, path string) {
	t.Helper()
	b.setPage(path)
	resp, err := chromedp.Run(b.ctx, chromedp.NavigateResponse(b.origin+path))
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	if resp.Status != http.StatusOK {
		t.Fatalf("opening %s: HTTP status %d, want 200", path, resp.Status)
	}
}

// exists says whether the server has a page, without loading it in the
// browser (a 404 would log a failed load).
func (b *browserTab) exists(t testing.TB, path string) bool {
	t.Helper()
	resp, err := http.Get(b.origin + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return true
	case http.StatusNotFound:
		return false
	}
	t.Fatalf("GET %s: HTTP status %d, want 200 or 404", path, resp.StatusCode)
	return false
}

func (b *browserTab) do(t testing.TB, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval runs a JavaScript expression in the page and decodes its value.
func eval[T any](t testing.TB, b *browserTab, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// query returns the parameters of the page's current URL.
func (b *browserTab) query(t *testing.T) url.Values {
	t.Helper()
	q, err := url.ParseQuery(strings.TrimPrefix(eval[string](t, b, `location.search`), "?"))
	if err != nil {
		t.Fatalf("parsing the page's query: %v", err)
	}
	return q
}

// ---- leaderboard ---------------------------------------------------------

type boardRow struct {
	Name        string `json:"name"`
	Hidden      bool   `json:"hidden"`
	Visible     bool   `json:"visible"`
	OpenWeights string `json:"openWeights"`
	Search      string `json:"search"`
}

const boardRowsJS = `Array.from(document.getElementById("board").tBodies[0].rows, r => ({
	name: (r.querySelector("th a") || {textContent: ""}).textContent.trim(),
	hidden: r.hidden,
	visible: r.getClientRects().length > 0,
	openWeights: r.getAttribute("data-open-weights") || "",
	search: r.getAttribute("data-search") || ""
}))`

// boardRows reads the rows of table#board in their current order.
func (b *browserTab) boardRows(t *testing.T) []boardRow {
	t.Helper()
	rows := eval[[]boardRow](t, b, boardRowsJS)
	var wrong []string
	for _, r := range rows {
		if r.Hidden == r.Visible {
			wrong = append(wrong, fmt.Sprintf("%q (hidden=%v, visible=%v)", r.Name, r.Hidden, r.Visible))
		}
	}
	if len(wrong) > 0 {
		t.Errorf("rows laid out against their hidden attribute, want hidden rows invisible and the others shown: %s", strings.Join(wrong, ", "))
	}
	return rows
}

func visibleNames(rows []boardRow) []string {
	var names []string
	for _, r := range rows {
		if r.Visible {
			names = append(names, r.Name)
		}
	}
	return names
}

// column returns the data-sort values of the visible rows of table#board
// in the column whose header has data-key=key.
func (b *browserTab) column(t *testing.T, key string) []string {
	t.Helper()
	vals := eval[[]string](t, b, `(key => {
		const t = document.getElementById("board");
		const i = Array.from(t.tHead.rows[0].cells).findIndex(th => th.getAttribute("data-key") === key);
		if (i < 0) return [];
		return Array.from(t.tBodies[0].rows).filter(r => !r.hidden).map(r => r.cells[i].getAttribute("data-sort") || "");
	})(`+jsString(key)+`)`)
	if len(vals) == 0 {
		t.Fatalf("table#board has no visible values in the column th[data-key=%q]", key)
	}
	return vals
}

// sortBy clicks a header of table#board and returns the URL parameters.
func (b *browserTab) sortBy(t *testing.T, key string) url.Values {
	t.Helper()
	b.do(t, "clicking the "+key+" header", chromedp.Click(chromedp.CSS(`#board thead th[data-key="`+key+`"]`)))
	return b.query(t)
}

// checkSortState checks the URL, the header's aria-sort and the order of
// the column's values after sorting by key in direction dir.
func (b *browserTab) checkSortState(t *testing.T, q url.Values, key, dir string) {
	t.Helper()
	if q.Get("sort") != key || q.Get("dir") != dir {
		t.Errorf("URL query after sorting by %s: sort=%q dir=%q, want sort=%s&dir=%s", key, q.Get("sort"), q.Get("dir"), key, dir)
	}
	want := map[string]string{"asc": "ascending", "desc": "descending"}[dir]
	got := eval[string](t, b, `document.querySelector('#board th[data-key="`+key+`"]').getAttribute("aria-sort") || ""`)
	if got != want {
		t.Errorf("th[data-key=%q] has aria-sort=%q, want %q", key, got, want)
	}
	checkOrder(t, key, dir, b.column(t, key))
}

// checkOrder checks numeric data-sort values: in order for dir, with the
// missing (empty) values last.
func checkOrder(t *testing.T, key, dir string, vals []string) {
	t.Helper()
	var prev float64
	have, missing := false, false
	for i, v := range vals {
		if v == "" {
			missing = true
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Errorf("%s row %d: data-sort %q is not a number", key, i+1, v)
			continue
		}
		if missing {
			t.Errorf("%s sorted %s: row %d has %s after a missing value, want missing values last: %v", key, dir, i+1, v, vals)
			return
		}
		if have && (dir == "desc" && f > prev || dir == "asc" && f < prev) {
			t.Errorf("%s sorted %s: row %d has %s after %g, out of order: %v", key, dir, i+1, v, prev, vals)
			return
		}
		prev, have = f, true
	}
}

func testBoardSort(t *testing.T, b *browserTab) {
	b.open(t, liteBoard)
	rows := b.boardRows(t)
	if len(rows) != liteBoardSystems || len(visibleNames(rows)) != liteBoardSystems {
		t.Fatalf("table#board has %d body rows (%d visible), want %d", len(rows), len(visibleNames(rows)), liteBoardSystems)
	}
	// FeatureBench ranks by % passed: the board is served sorted by it.
	if got := eval[string](t, b, `document.querySelector('#board th[data-key="passed"]').getAttribute("aria-sort") || ""`); got != "descending" {
		t.Errorf("FeatureBench ranks by %% passed, but its passed column has aria-sort=%q, want \"descending\"", got)
	}
	checkOrder(t, "passed", "desc", b.column(t, "passed"))
	// Sorting by a header's button: a new column sorts numbers
	// descending first, the sorted column flips.
	b.checkSortState(t, b.sortBy(t, "resolved"), "resolved", "desc")
	b.checkSortState(t, b.sortBy(t, "resolved"), "resolved", "asc")
	b.checkSortState(t, b.sortBy(t, "passed"), "passed", "desc")
	b.checkSortState(t, b.sortBy(t, "passed"), "passed", "asc")
	// Token I/O is missing for some systems: those sort last both ways.
	b.checkSortState(t, b.sortBy(t, "tokens"), "tokens", "desc")
	b.checkSortState(t, b.sortBy(t, "tokens"), "tokens", "asc")
	if n := len(b.boardRows(t)); n != liteBoardSystems {
		t.Errorf("after sorting table#board has %d rows, want %d", n, liteBoardSystems)
	}
	// The headers sort from the keyboard: they are buttons.
	if n := eval[int](t, b, `document.querySelectorAll('#board thead th[data-key]:not(:has(> button))').length`); n > 0 {
		t.Errorf("%d sortable headers of table#board hold no button", n)
	}
}

// chooseOption sets a select of the filter form as a reader would: the
// value changes, then a change event bubbles to the form.
func (b *browserTab) chooseOption(t *testing.T, name, value string) {
	t.Helper()
	sel := `form.filters select[name="` + name + `"]`
	b.do(t, "choosing "+name+"="+value,
		chromedp.SetValue(chromedp.CSS(sel), value),
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+jsString(sel)+`).dispatchEvent(new Event("change", {bubbles: true}))`))
}

// checkWeightsFilter checks that exactly the open-weights rows are visible.
func checkWeightsFilter(t *testing.T, rows []boardRow) {
	t.Helper()
	hidden := 0
	var wrong []string
	for _, r := range rows {
		if r.Visible != (r.OpenWeights == "yes") {
			wrong = append(wrong, fmt.Sprintf("%q (data-open-weights=%q, visible=%v)", r.Name, r.OpenWeights, r.Visible))
		}
		if !r.Visible {
			hidden++
		}
	}
	if len(wrong) > 0 {
		t.Errorf("weights=open: want exactly the rows with data-open-weights=\"yes\" visible, but: %s", strings.Join(wrong, ", "))
	}
	if hidden == 0 || hidden == len(rows) {
		t.Errorf("weights=open hid %d of %d rows, want some but not all hidden", hidden, len(rows))
	}
}

func testBoardFilter(t *testing.T, b *browserTab) {
	b.open(t, liteBoard)
	b.sortBy(t, "resolved")
	b.chooseOption(t, "weights", "open")
	rows := b.boardRows(t)
	checkWeightsFilter(t, rows)
	q := b.query(t)
	if q.Get("weights") != "open" || q.Get("sort") != "resolved" || q.Get("dir") != "desc" {
		t.Errorf("URL query after filtering: %q, want weights=open with sort=resolved&dir=desc kept", q.Encode())
	}
	shown := len(visibleNames(rows))
	if got, want := eval[string](t, b, `document.querySelector("form.filters output").textContent`),
		fmt.Sprintf("%d of %d ranked systems shown", shown, len(rows)); got != want {
		t.Errorf("filter count says %q, want %q", got, want)
	}

	// A fresh load of the URL alone must restore the filter and the sort.
	href := eval[string](t, b, `location.pathname + location.search`)
	b.do(t, "leaving the page", chromedp.Navigate("about:blank"))
	b.open(t, href)
	if v, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS(`form.filters select[name="weights"]`))); err != nil || v != "open" {
		t.Errorf("after loading %s the weights select shows %q (err %v), want \"open\"", href, v, err)
	}
	restored := b.boardRows(t)
	checkWeightsFilter(t, restored)
	if got, want := visibleNames(restored), visibleNames(rows); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after loading %s the visible rows are\n  %q\nwant the same rows in the same order as before\n  %q", href, got, want)
	}
	b.checkSortState(t, b.query(t), "resolved", "desc")

	// A tag filters: the rows that carry it, whatever it holds (data-tags
	// is a JSON list, so a tag with "|" in it matches too).
	b.chooseOption(t, "weights", "")
	b.do(t, "ticking a tag", chromedp.Click(chromedp.CSS(`form.filters input[name="tag"]`)))
	tag := eval[string](t, b, `document.querySelector('form.filters input[name="tag"]').value`)
	tagged := eval[[]string](t, b, `Array.from(document.getElementById("board").tBodies[0].rows).filter(r => !r.hidden).map(r => r.getAttribute("data-tags"))`)
	for _, tags := range tagged {
		var list []string
		if err := json.Unmarshal([]byte(tags), &list); err != nil || !slices.Contains(list, tag) {
			t.Errorf("tag filter %q shows a row with tags %s", tag, tags)
		}
	}
	if len(tagged) == 0 {
		t.Errorf("tag filter %q shows no row", tag)
	}
	b.do(t, "unticking the tag", chromedp.Click(chromedp.CSS(`form.filters input[name="tag"]`)))

	// Model, scaffold and organisation: exactly the rows that have the
	// value chosen, kept in the URL.
	for _, f := range []struct{ name, attr, value string }{
		{"model", "data-model", "Claude Opus 4.5"},
		{"scaffold_name", "data-scaffold", "Mini-SWE-Agent"},
		{"org", "data-orgs", "OpenHands"},
	} {
		b.chooseOption(t, f.name, f.value)
		got := eval[[]string](t, b, `Array.from(document.getElementById("board").tBodies[0].rows).filter(r => !r.hidden).map(r => r.getAttribute(`+jsString(f.attr)+`))`)
		if len(got) == 0 {
			t.Errorf("%s=%s shows no row", f.name, f.value)
		}
		for _, v := range got {
			if v != f.value && !strings.Contains(v, jsString(f.value)) {
				t.Errorf("%s=%s shows a row with %s=%q", f.name, f.value, f.attr, v)
			}
		}
		if q := b.query(t); q.Get(f.name) != f.value {
			t.Errorf("%s=%s is not in the URL: %q", f.name, f.value, q.Encode())
		}
		b.chooseOption(t, f.name, "")
	}
}

// testTagWithBar filters the fixture's board by tags that hold "|" or
// are a prefix of another: each matches exactly its own rows.
func testTagWithBar(t *testing.T, b *browserTab) {
	b.open(t, fixtureBase+"leaderboard/demo/v1/full/")
	for tag, want := range map[string]string{"a|b": "Agent A", "a": "System B"} {
		b.do(t, "ticking the tag "+tag, chromedp.Click(chromedp.CSS(`form.filters input[name="tag"][value=`+jsString(tag)+`]`)))
		if got := visibleNames(b.boardRows(t)); len(got) != 1 || got[0] != want {
			t.Errorf("filtering by the tag %q shows %q, want only %q", tag, got, want)
		}
		b.do(t, "unticking the tag "+tag, chromedp.Click(chromedp.CSS(`form.filters input[name="tag"][value=`+jsString(tag)+`]`)))
	}
}

// uniqueSystem returns the name of a system that no other row's search
// text contains, so a search for it matches exactly one row.
func uniqueSystem(t *testing.T, rows []boardRow) string {
	t.Helper()
	for _, r := range rows {
		n := 0
		for _, o := range rows {
			if strings.Contains(o.Search, strings.ToLower(r.Name)) {
				n++
			}
		}
		if n == 1 && r.Name != "" {
			return r.Name
		}
	}
	t.Fatal("no system name matches exactly one row of table#board")
	return ""
}

func testBoardSearch(t *testing.T, b *browserTab) {
	b.open(t, liteBoard)
	name := uniqueSystem(t, b.boardRows(t))
	b.do(t, "typing in the search box", chromedp.SendKeys(chromedp.CSS(`form.filters input[name="q"]`), name))
	got := visibleNames(b.boardRows(t))
	if len(got) != 1 || got[0] != name {
		t.Errorf("searching %q shows rows %q, want only %q", name, got, name)
	}
	if q := b.query(t); q.Get("q") != name {
		t.Errorf("URL query after searching: q=%q, want q=%q", q.Get("q"), name)
	}
}

// ---- charts ----------------------------------------------------------------

// undrawnChartsJS lists the charts that have not finished drawing in an
// SVG of non-zero size (site.js draws SVG, whose texts can be measured).
const undrawnChartsJS = `Array.from(document.querySelectorAll("div.chart[data-chart]")).filter(c => {
	const svg = c.querySelector("svg");
	const r = svg && svg.getBoundingClientRect();
	return c.getAttribute("data-drawn") !== "1" || !svg || r.width === 0 || r.height === 0;
}).map(c => c.id)`

// checkCharts loads a charts page and waits until every chart is drawn.
func (b *browserTab) checkCharts(t *testing.T, path string, atLeast int) {
	t.Helper()
	b.open(t, path)
	n := eval[int](t, b, `document.querySelectorAll("div.chart[data-chart]").length`)
	empty := eval[int](t, b, `document.querySelectorAll(".chart-figure p.empty").length`)
	t.Logf("%s: %d charts, %d without data", path, n, empty)
	if n < atLeast {
		t.Errorf("%s has %d div.chart[data-chart], want at least %d", path, n, atLeast)
	}
	b.waitChartsDrawn(t, path)
}

// waitChartsDrawn waits until the page's charts are drawn and says
// whether they were.
func (b *browserTab) waitChartsDrawn(t *testing.T, path string) bool {
	t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.Poll[chromedp.Void](`(`+undrawnChartsJS+`).length === 0`,
		chromedp.WithPollingTimeout(chartWait)))
	if err == nil {
		return true
	}
	if !errors.Is(err, chromedp.ErrPollingTimeout) {
		t.Fatalf("%s: waiting for the charts: %v", path, err)
	}
	t.Errorf("%s: charts %v not drawn within %s (want data-drawn=\"1\" and an SVG); window.echarts loaded: %v",
		path, eval[[]string](t, b, undrawnChartsJS), chartWait, eval[bool](t, b, `!!window.echarts`))
	return false
}

func testCharts(t *testing.T, b *browserTab) {
	// FeatureBench publishes figures for the per-patch-size, token and
	// level charts; the others render a p.empty.
	b.checkCharts(t, fbCharts, 3)
	if !b.exists(t, exampleCharts) {
		t.Logf("%s is not in the site (no example dataset in data/): skipping its charts", exampleCharts)
		return
	}
	b.checkCharts(t, exampleCharts, 1)
}

// ---- links -----------------------------------------------------------------

// follow clicks the first element matching sel, a link, and returns its
// text once the linked page has loaded.
func (b *browserTab) follow(t *testing.T, sel string) string {
	t.Helper()
	text := eval[string](t, b, `document.querySelector(`+jsString(sel)+`).textContent.trim()`)
	href := eval[string](t, b, `new URL(document.querySelector(`+jsString(sel)+`).href).pathname`)
	b.setPage(href)
	resp, err := chromedp.RunResponse(b.ctx, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("following the link %q (%s): %v", text, sel, err)
	}
	if resp.Status != http.StatusOK {
		t.Fatalf("following the link %q to %s: HTTP status %d, want 200", text, href, resp.Status)
	}
	if got := eval[string](t, b, `location.pathname`); got != href {
		t.Fatalf("after clicking the link %q the page is %s, want %s", text, got, href)
	}
	return text
}

func (b *browserTab) checkH1(t *testing.T, want string) {
	t.Helper()
	if got := eval[string](t, b, `(document.querySelector("h1") || {textContent: ""}).textContent.trim()`); got != want {
		t.Errorf("page %s has h1 %q, want %q", eval[string](t, b, `location.pathname`), got, want)
	}
}

func testLinks(t *testing.T, b *browserTab) {
	b.open(t, liteBoard)
	b.checkH1(t, b.follow(t, "#board tbody tr th a"))

	if !b.exists(t, exampleDataset) {
		t.Logf("%s is not in the site (no example dataset in data/): skipping the instance link", exampleDataset)
		return
	}
	b.open(t, exampleDataset)
	id := b.follow(t, "table#instances tbody a")
	b.checkH1(t, id)
	for _, sel := range []string{".statement", ".diff"} {
		if !eval[bool](t, b, `document.querySelector(`+jsString(sel)+`) !== null`) {
			t.Errorf("instance page %s has no %s element", id, sel)
		}
	}
}

// ---- compare ---------------------------------------------------------------

// compareState is what the reader sees of the compare page's choice of
// systems.
type compareState struct {
	Systems []string `json:"systems"` // every system checkbox, in page order
	Ticked  []string `json:"ticked"`  // the ticked ones
	Columns []string `json:"columns"` // the system columns laid out, in order
	Table   bool     `json:"table"`   // whether table#compare is laid out
	Hint    string   `json:"hint"`    // the text of a laid-out .compare-hint, if any
	// RowCells counts each body row's cells not hidden.
	RowCells []int `json:"rowCells"`
}

const compareStateJS = `(() => {
	const shown = el => el.getClientRects().length > 0;
	const boxes = Array.from(document.querySelectorAll('form.compare-pick input[name="s"]'));
	const hint = Array.from(document.querySelectorAll(".compare-hint")).filter(shown);
	return {
		systems: boxes.map(b => b.value),
		ticked: boxes.filter(b => b.checked).map(b => b.value),
		columns: Array.from(document.querySelectorAll("#compare thead th[data-system]")).filter(shown).map(th => th.getAttribute("data-system")),
		// Every body row shows the instance, repository and level, then
		// one cell per shown system.
		rowCells: Array.from(document.querySelectorAll("#compare tbody tr")).map(r => Array.from(r.cells).filter(c => !c.hidden).length),
		table: shown(document.getElementById("compare")),
		hint: hint.map(h => h.textContent.trim()).join(" ")
	};
})()`

// checkCompare checks that exactly the systems want are ticked and shown
// as columns, and that with fewer than two the page asks for more (with
// none, in place of the table).
func (b *browserTab) checkCompare(t *testing.T, when string, want []string) {
	t.Helper()
	s := eval[compareState](t, b, compareStateJS)
	if !slices.Equal(s.Ticked, want) {
		t.Errorf("%s the ticked systems are %q, want %q", when, s.Ticked, want)
	}
	switch {
	case len(want) == 0:
		if s.Table {
			t.Errorf("%s with no system chosen table#compare is shown (columns %q), want it replaced by a message", when, s.Columns)
		}
	case !slices.Equal(s.Columns, want):
		t.Errorf("%s the system columns shown are %q (table shown: %v), want %q", when, s.Columns, s.Table, want)
	default:
		for i, n := range s.RowCells {
			if n != 3+len(want) {
				t.Errorf("%s body row %d shows %d cells, want instance, repository, level and %d systems", when, i+1, n, len(want))
				break
			}
		}
	}
	if len(want) < 2 {
		if !strings.Contains(s.Hint, "two or more systems") {
			t.Errorf("%s with %d systems chosen the page shows the message %q, want one asking for two or more systems", when, len(want), s.Hint)
		}
	} else if s.Hint != "" {
		t.Errorf("%s with %d systems chosen the page still shows the message %q", when, len(want), s.Hint)
	}
}

// checkSystemsParam checks the URL's s parameter: absent when want is nil
// (the default, every system), else exactly want.
func (b *browserTab) checkSystemsParam(t *testing.T, when string, want []string) {
	t.Helper()
	got, ok := b.query(t)["s"]
	switch {
	case want == nil && ok:
		t.Errorf("%s the URL has s=%q, want no s parameter (every system is the default)", when, got)
	case want != nil && !slices.Equal(got, want):
		t.Errorf("%s the URL has s=%q (present: %v), want %q", when, got, ok, want)
	}
}

// toggleSystem clicks a system's checkbox on the compare page.
func (b *browserTab) toggleSystem(t *testing.T, key string) {
	t.Helper()
	b.do(t, "clicking the checkbox of "+key,
		chromedp.Click(chromedp.CSS(`form.compare-pick input[name="s"][value=`+jsString(key)+`]`)))
}

// checkReloads checks that the page's URL alone reproduces the view, both
// on a reload and on a fresh load as from a shared link.
func (b *browserTab) checkReloads(t *testing.T, want []string) {
	t.Helper()
	href := eval[string](t, b, `location.pathname + location.search`)
	b.do(t, "reloading "+href, chromedp.Reload())
	b.checkCompare(t, "after reloading "+href, want)
	b.do(t, "leaving the page", chromedp.Navigate("about:blank"))
	b.open(t, href)
	b.checkCompare(t, "after loading "+href, want)
}

func testCompare(t *testing.T, b *browserTab) {
	if !b.exists(t, exampleCompare) {
		t.Logf("%s is not in the site (no example dataset in data/): skipping the compare page", exampleCompare)
		return
	}
	b.open(t, exampleCompare)
	all := eval[compareState](t, b, compareStateJS).Systems
	// Two systems must be neither none nor all of them.
	if len(all) < 3 {
		t.Fatalf("%s has %d system checkboxes %q, want at least 3", exampleCompare, len(all), all)
	}
	b.checkCompare(t, "on first load", all)
	b.checkSystemsParam(t, "on first load", nil)
	// Each step clicks from the state the last one left: after a wrong
	// state the next clicks would only pile up confusing errors.
	if t.Failed() {
		return
	}

	// Unticking every system is a choice of its own, not the default.
	for _, s := range all {
		b.toggleSystem(t, s)
	}
	b.checkCompare(t, "after unticking every system", nil)
	b.checkSystemsParam(t, "after unticking every system", []string{""})
	b.checkReloads(t, nil)
	if t.Failed() {
		return
	}

	two := []string{all[0], all[2]}
	for _, s := range two {
		b.toggleSystem(t, s)
	}
	b.checkCompare(t, "after ticking two systems", two)
	b.checkSystemsParam(t, "after ticking two systems", two)
	b.checkReloads(t, two)
	if t.Failed() {
		return
	}

	// "Only where they disagree" keeps exactly the rows whose two shown
	// cells differ (resolved against anything else).
	b.do(t, "ticking only-disagreements", chromedp.Click(chromedp.CSS(`form.compare-pick input[name="diff"]`)))
	diff := eval[struct {
		Shown, Wrong int
	}](t, b, `(() => {
		let shown = 0, wrong = 0;
		for (const r of document.querySelectorAll("#compare tbody tr")) {
			const v = Array.from(r.cells).filter(c => c.classList.contains("cmp") && !c.hidden).map(c => c.classList.contains("yes"));
			const differ = v.some(x => x !== v[0]);
			if (!r.hidden) shown++;
			if (r.hidden === differ) wrong++;
		}
		return {Shown: shown, Wrong: wrong};
	})()`)
	if diff.Wrong > 0 || diff.Shown == 0 {
		t.Errorf("only-disagreements: %d rows shown, %d rows shown or hidden wrongly", diff.Shown, diff.Wrong)
	}
	b.do(t, "unticking only-disagreements", chromedp.Click(chromedp.CSS(`form.compare-pick input[name="diff"]`)))

	// Only one: the column stays, with the message.
	b.toggleSystem(t, two[1])
	b.checkCompare(t, "after unticking one of two systems", two[:1])
	b.checkSystemsParam(t, "after unticking one of two systems", two[:1])
	if t.Failed() {
		return
	}

	// Every system again is the default: the parameter goes.
	for _, s := range all {
		if s != two[0] {
			b.toggleSystem(t, s)
		}
	}
	b.checkCompare(t, "after ticking every system again", all)
	b.checkSystemsParam(t, "after ticking every system again", nil)
	b.checkReloads(t, all)
}

// ---- theme -----------------------------------------------------------------

type themeState struct {
	Theme  string `json:"theme"`  // <html data-theme>
	Stored string `json:"stored"` // what localStorage keeps
	Choice string `json:"choice"` // the select's value
	BG     string `json:"bg"`
}

const themeJS = `({theme: document.documentElement.getAttribute("data-theme") || "",
	stored: localStorage.getItem("featbench-theme") || "",
	choice: document.getElementById("theme-select").value,
	bg: getComputedStyle(document.body).backgroundColor})`

// chooseTheme picks system, light or dark in the header's select.
func (b *browserTab) chooseTheme(t *testing.T, choice string) themeState {
	t.Helper()
	b.do(t, "choosing the "+choice+" theme",
		chromedp.SetValue(chromedp.CSS("#theme-select"), choice),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("theme-select").dispatchEvent(new Event("change", {bubbles: true}))`))
	return eval[themeState](t, b, themeJS)
}

func testTheme(t *testing.T, b *browserTab) {
	// On a charts page the choice also redraws the charts in the new theme.
	b.open(t, fbCharts)
	if !b.waitChartsDrawn(t, fbCharts) {
		return
	}
	if !eval[bool](t, b, `!document.querySelector(".theme-choice").hidden`) {
		t.Fatal("the theme choice is hidden: site.js should show it")
	}
	before := eval[themeState](t, b, themeJS)
	if before.Choice != "system" || before.Theme != "" {
		t.Errorf("on first load the theme choice is %+v, want the system setting", before)
	}
	dark := b.chooseTheme(t, "dark")
	if dark.Theme != "dark" || dark.Stored != "dark" {
		t.Errorf("after choosing dark: %+v, want data-theme and storage dark", dark)
	}
	b.waitChartsDrawn(t, fbCharts)
	light := b.chooseTheme(t, "light")
	if light.Theme != "light" || light.BG == dark.BG {
		t.Errorf("after choosing light: %+v (dark was %+v), want another background", light, dark)
	}
	b.open(t, fbCharts)
	if got := eval[themeState](t, b, themeJS); got.Theme != "light" || got.Choice != "light" {
		t.Errorf("after a reload the theme is %+v, want the chosen light kept and shown in the select", got)
	}
	// Back to the system setting: nothing stored, no data-theme.
	sys := b.chooseTheme(t, "system")
	if sys.Theme != "" || sys.Stored != "" {
		t.Errorf("after choosing system: %+v, want no data-theme and nothing stored", sys)
	}
	b.open(t, fbCharts)
	if got := eval[themeState](t, b, themeJS); got.Choice != "system" || got.Theme != "" {
		t.Errorf("after a reload with the system setting: %+v", got)
	}
}

// testCodeContrast checks, in both themes, that every token class of the
// highlighter has a colour with WCAG contrast of at least 4.5:1 against
// the background of the code block it sits in, as the browser computes
// them, and that code blocks and diffs keep a background of their own.
func testCodeContrast(t *testing.T, b *browserTab) {
	if !b.exists(t, exampleDataset) {
		t.Logf("%s is not in the site: skipping", exampleDataset)
		return
	}
	b.open(t, exampleDataset)
	inst := b.follow(t, "table#instances tbody a")
	classes, _ := json.Marshal(markup.Classes())
	for _, theme := range []string{"light", "dark"} {
		b.chooseTheme(t, theme)
		res := eval[struct {
			Low        []string
			PageBG     string
			CodeBG     string
			DiffBG     string
			Checked    int
			Background bool
		}](t, b, `((classes) => {
			const lum = c => {
				const m = c.match(/rgba?\(([\d.]+), ([\d.]+), ([\d.]+)/);
				return [m[1], m[2], m[3]].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); })
					.reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
			};
			const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
			const bg = el => { for (; el; el = el.parentElement) { const c = getComputedStyle(el).backgroundColor; if (c !== "rgba(0, 0, 0, 0)" && c !== "transparent") return c; } return "rgb(255, 255, 255)"; };
			const host = document.querySelector(".statement");
			const pre = document.createElement("pre");
			pre.className = "chroma";
			const code = document.createElement("code");
			pre.appendChild(code);
			for (const cls of classes) {
				const s = document.createElement("span");
				s.className = cls;
				s.textContent = cls + " ";
				code.appendChild(s);
			}
			host.appendChild(pre);
			const low = [];
			for (const s of code.children) {
				const r = ratio(getComputedStyle(s).color, bg(s));
				if (r < 4.5) low.push(s.className + " " + r.toFixed(2) + ":1 (" + getComputedStyle(s).color + " on " + bg(s) + ")");
			}
			const diff = document.querySelector(".diff pre");
			const out = {Low: low, PageBG: getComputedStyle(document.body).backgroundColor, CodeBG: bg(code),
				DiffBG: diff ? bg(diff) : "", Checked: code.children.length};
			host.removeChild(pre);
			return out;
		})(`+string(classes)+`)`)
		if res.Checked != len(markup.Classes()) || res.Checked < 50 {
			t.Errorf("%s theme: checked %d token classes, want all %d", theme, res.Checked, len(markup.Classes()))
		}
		if len(res.Low) > 0 {
			t.Errorf("%s theme on %s: token classes below 4.5:1 contrast:\n  %s", theme, inst, strings.Join(res.Low, "\n  "))
		}
		if res.CodeBG == res.PageBG || res.DiffBG == res.PageBG {
			t.Errorf("%s theme: code blocks (%s) or diffs (%s) have the page's background %s, want their own", theme, res.CodeBG, res.DiffBG, res.PageBG)
		}
	}
	b.chooseTheme(t, "system")
}

// ---- layout ----------------------------------------------------------------

// testBoardFits checks, in a 1366 px wide window (the most common laptop
// screen), that every leaderboard fits without horizontal scrolling, that
// its tag pills stay on one line, and that "all columns" shows the
// secondary columns.
func testBoardFits(t *testing.T, b *browserTab) {
	b.do(t, "sizing the window to 1366×768", chromedp.EmulateViewport(1366, 768))
	defer b.do(t, "restoring the window", chromedp.EmulateViewport(1280, 900))
	pages := []string{browserBase, liteBoard, browserBase + "leaderboard/featurebench/v1.0/full/"}
	if b.exists(t, browserBase+"leaderboard/example/v2/full/") {
		pages = append(pages, browserBase+"leaderboard/example/v2/full/")
	}
	for _, p := range pages {
		b.open(t, p)
		fit := eval[struct {
			Table, Wrap, Page, Window int
			Wrapped                   []string
		}](t, b, `(() => {
			const t = document.querySelector("table.board");
			const wrapped = Array.from(t.querySelectorAll("td.tags")).filter(td => {
				const tops = new Set(Array.from(td.querySelectorAll(".tag")).map(s => Math.round(s.getBoundingClientRect().top)));
				return tops.size > 1;
			}).map(td => td.parentNode.querySelector("th").textContent.trim());
			return {Table: t.scrollWidth, Wrap: t.closest(".table-wrap").clientWidth,
				Page: document.documentElement.scrollWidth, Window: window.innerWidth, Wrapped: wrapped};
		})()`)
		if fit.Table > fit.Wrap || fit.Page > fit.Window {
			t.Errorf("%s at 1366 px: the board is %d px wide in a %d px box (page %d px in a %d px window), want no horizontal scrolling",
				p, fit.Table, fit.Wrap, fit.Page, fit.Window)
		}
		if len(fit.Wrapped) > 0 {
			t.Errorf("%s at 1366 px: the tag pills of %q wrap onto a second line", p, fit.Wrapped)
		}
		hidden := eval[int](t, b, `Array.from(document.querySelectorAll("table.board th.more")).filter(th => th.getClientRects().length > 0).length`)
		if hidden != 0 {
			t.Errorf("%s: %d secondary columns are shown before asking for them", p, hidden)
		}
		total := eval[int](t, b, `document.querySelectorAll("table.board thead th.more").length`)
		b.do(t, "ticking all columns", chromedp.Click(chromedp.CSS(`input[name="cols"]`)))
		if shown := eval[int](t, b, `Array.from(document.querySelectorAll("table.board thead th.more")).filter(th => th.getClientRects().length > 0).length`); shown != total || total == 0 {
			t.Errorf("%s: after ticking all columns %d of %d secondary columns show, want all (and some)", p, shown, total)
		}
	}
}

// testNav checks that the navigation follows the dataset being viewed and
// marks the current page.
func testNav(t *testing.T, b *browserTab) {
	if !b.exists(t, exampleDataset) {
		t.Logf("%s is not in the site: skipping", exampleDataset)
		return
	}
	b.open(t, exampleDataset)
	charts := eval[string](t, b, `Array.from(document.querySelectorAll("header nav a")).find(a => a.textContent.trim() === "Charts").getAttribute("href")`)
	if charts != exampleCharts {
		t.Errorf("on %s the navigation's Charts goes to %s, want the example's %s", exampleDataset, charts, exampleCharts)
	}
	b.open(t, exampleCharts)
	cur := eval[[]string](t, b, `Array.from(document.querySelectorAll('header nav a[aria-current="page"]')).map(a => a.textContent.trim())`)
	if len(cur) != 1 || cur[0] != "Charts" {
		t.Errorf("on %s the navigation marks %q as the current page, want only Charts", exampleCharts, cur)
	}
}

// testChartsWithoutScript loads a charts page with JavaScript off: every
// chart's data is readable as a table, and no empty chart box shows.
func testChartsWithoutScript(t *testing.T, b *browserTab) {
	b.do(t, "turning JavaScript off", scriptDisabled(true))
	defer b.do(t, "turning JavaScript on", scriptDisabled(false))
	b.open(t, fbCharts)
	s := eval[struct {
		Charts, Tables, OpenTables, ShownBoxes int
	}](t, b, `({Charts: document.querySelectorAll("div.chart[data-chart]").length,
		Tables: document.querySelectorAll("details.chart-data table").length,
		OpenTables: Array.from(document.querySelectorAll("details.chart-data")).filter(d => d.open && d.getClientRects().length > 0).length,
		ShownBoxes: Array.from(document.querySelectorAll("div.chart")).filter(c => c.getClientRects().length > 0).length})`)
	if s.Charts == 0 || s.Tables != s.Charts || s.OpenTables != s.Charts || s.ShownBoxes != 0 {
		t.Errorf("charts page without JavaScript: %d charts, %d data tables, %d of them open, %d empty chart boxes shown; want a readable table per chart and no empty box", s.Charts, s.Tables, s.OpenTables, s.ShownBoxes)
	}
}

// scriptDisabled turns JavaScript off or on in the tab.
func scriptDisabled(off bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off})
		return err
	})
}

// testCite checks the dataset page's citation and its copy button.
func testCite(t *testing.T, b *browserTab) {
	b.open(t, browserBase+"datasets/featurebench/v1.0/")
	bib := eval[string](t, b, `(document.getElementById("bibtex") || {textContent: ""}).textContent`)
	if !strings.HasPrefix(bib, "@") || !strings.Contains(bib, "FeatureBench") {
		t.Errorf("the dataset page's BibTeX is %q", bib)
	}
	if !eval[bool](t, b, `!document.querySelector('button[data-copy="bibtex"]').hidden`) {
		t.Errorf("the Copy BibTeX button is hidden")
	}
}

// ---- paired comparison ---------------------------------------------------

type pairView struct {
	Shown   bool                `json:"shown"`
	A       string              `json:"a"`
	B       string              `json:"b"`
	Cells   map[string]string   `json:"cells"`
	Test    string              `json:"test"`
	Lists   map[string][]string `json:"lists"`
	Summary map[string]string   `json:"summary"`
}

const pairViewJS = `(() => {
	const f = document.querySelector("form[data-pair]");
	const cells = {}, lists = {}, summary = {};
	document.querySelectorAll("#pair-counts [data-cell]").forEach(td => { cells[td.getAttribute("data-cell")] = td.textContent; });
	document.querySelectorAll("#pair-result details[data-list]").forEach(d => {
		const k = d.getAttribute("data-list");
		lists[k] = Array.from(d.querySelectorAll("a"), a => a.getAttribute("href"));
		summary[k] = d.querySelector("summary").textContent;
	});
	const t = document.querySelector("#pair-result .pair-test");
	return {shown: !!f && !f.hidden && f.getClientRects().length > 0, a: f ? f.elements.a.value : "", b: f ? f.elements.b.value : "",
		cells: cells, test: t ? t.textContent : "", lists: lists, summary: summary};
})()`

func (b *browserTab) checkPair(t *testing.T, when, a, bb string, cells map[string]string, p string, onlyA, onlyB []int) {
	t.Helper()
	v := eval[pairView](t, b, pairViewJS)
	if !v.Shown {
		t.Fatalf("%s the pair picker is not shown", when)
	}
	if v.A != a || v.B != bb {
		t.Errorf("%s the picker shows %s and %s, want %s and %s", when, v.A, v.B, a, bb)
	}
	if fmt.Sprint(v.Cells) != fmt.Sprint(cells) {
		t.Errorf("%s the pair's cells are %v, want %v", when, v.Cells, cells)
	}
	if !strings.Contains(v.Test, p) {
		t.Errorf("%s the test reads %q, want it to give %q", when, v.Test, p)
	}
	for key, want := range map[string][]int{"only-a": onlyA, "only-b": onlyB} {
		var hrefs []string
		for _, i := range want {
			hrefs = append(hrefs, statsBase+"datasets/demo/v1/instances/"+statsID(i)+"/")
		}
		if fmt.Sprint(v.Lists[key]) != fmt.Sprint(hrefs) {
			t.Errorf("%s the %s list links %q, want %q", when, key, v.Lists[key], hrefs)
		}
	}
}

// testPaired picks pairs on the statistics project's compare page: the
// two best ranked first, then any two from the selects, kept in the URL;
// counts, p-value and the linked lists of instances where they differ.
func testPaired(t *testing.T, b *browserTab) {
	b.open(t, statsCompare)
	// The two best ranked: Top and Twin A (Tries, four attempts, is
	// ranked on its mean over attempts, 25%, below the twins' 33%).
	var topOnly []int
	for i := 0; i < 50; i++ {
		if i >= 40 || i%2 == 1 {
			topOnly = append(topOnly, i)
		}
	}
	b.checkPair(t, "on first load", "top", "twin-a",
		map[string]string{"both": "20", "only-a": "30", "only-b": "0", "neither": "10"}, "p < 0.0001", topOnly, nil)
	if t.Failed() {
		return
	}
	pick := func(name, slug string) {
		b.do(t, "choosing "+slug+" as "+name, chromedp.SetValue(chromedp.CSS(`form[data-pair] select[name="`+name+`"]`), slug))
		eval[bool](t, b, `document.querySelector("form[data-pair]").dispatchEvent(new Event("change", {bubbles: true}))`)
	}
	// Tries against a twin, per attempt: Tries' share i%5/4 on 0-29
	// against the twin's 1 on the evens. Tries is higher on the odd
	// instances not multiples of 5, the twin on the evens where Tries'
	// share is below 1 (not 4, 14, 24).
	pick("a", "tries")
	pick("b", "twin-b")
	var triesHigher, twinHigher []int
	for i := 0; i < 30; i++ {
		switch {
		case i%2 == 1 && i%5 != 0:
			triesHigher = append(triesHigher, i)
		case i%2 == 0 && i%5 != 4:
			twinHigher = append(twinHigher, i)
		}
	}
	b.checkPair(t, "after choosing tries and twin-b", "tries", "twin-b",
		map[string]string{"both": "3", "only-a": "12", "only-b": "12", "neither": "3"}, "Compared per attempt", triesHigher, twinHigher)
	if v := eval[pairView](t, b, pairViewJS); !strings.Contains(v.Test, "sign test") || !strings.HasPrefix(v.Summary["only-a"], "Higher for Tries") {
		t.Errorf("a pair with a system of several attempts reads %q, %q; want the sign test and \"Higher for Tries\"", v.Test, v.Summary["only-a"])
	}
	pick("a", "low")
	pick("b", "twin-b")
	cells := map[string]string{"both": "2", "only-a": "1", "only-b": "18", "neither": "34"}
	var twinOnly []int
	for i := 4; i < 40; i += 2 {
		twinOnly = append(twinOnly, i)
	}
	b.checkPair(t, "after choosing low and twin-b", "low", "twin-b", cells, "p < 0.0001", []int{1}, twinOnly)
	if q := b.query(t); q.Get("a") != "low" || q.Get("b") != "twin-b" {
		t.Errorf("after choosing low and twin-b the URL has a=%q b=%q", q.Get("a"), q.Get("b"))
	}
	b.do(t, "reloading", chromedp.Reload())
	b.checkPair(t, "after reloading", "low", "twin-b", cells, "p < 0.0001", []int{1}, twinOnly)
	// The same system twice is no pair.
	pick("b", "low")
	if got := eval[string](t, b, `document.getElementById("pair-result").textContent`); !strings.Contains(got, "two different systems") {
		t.Errorf("with one system chosen twice the pair reads %q, want a request for two different systems", got)
	}
}
