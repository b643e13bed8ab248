package site_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/synth"
	"github.com/featbench/featbench/internal/testenv"
	"github.com/featbench/featbench/site"
)

// BenchmarkCompareView measures the compare view of a split with 4,000
// instances and 50 systems in headless Chromium: how long after navigation
// the first page of rows is ready (load-ms), and how long ticking a system
// off and back on takes, script, style and layout included (toggle-ms).
//
//	go test ./site -run '^$' -bench CompareView -benchtime 5x
func BenchmarkCompareView(b *testing.B) {
	chromium := testenv.Chromium(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root := b.TempDir()
	if err := synth.Generate(root, synth.Config{RepoRoot: "..", Instances: 4000, Submissions: 50}); err != nil {
		b.Fatal(err)
	}
	opts, err := site.LoadOptions(root, "")
	if err != nil {
		b.Fatal(err)
	}
	opts.Config.BaseURL = browserBase
	opts.Config.Output = filepath.Join(root, "public")
	opts.CacheDir = filepath.Join("..", ".cache", "npm")
	opts.RequireLocalCharts = true
	if _, err := site.Build(ctx, opts); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(site.Handler(opts.Config.Output, browserBase))
	defer srv.Close()
	tab := startBrowser(b, ctx, chromium, srv.URL)
	page := browserBase + "datasets/synthetic/v1/compare/full/"
	var load, toggle float64
	b.ResetTimer()
	for range b.N {
		tab.open(b, page)
		load += eval[float64](b, tab, `performance.getEntriesByName("filters-ready")[0].startTime`)
		toggle += eval[float64](b, tab, `(() => {
			const box = document.querySelector('form.compare-pick input[name="s"]');
			const t0 = performance.now();
			box.click();
			document.body.offsetHeight;
			box.click();
			document.body.offsetHeight;
			return (performance.now() - t0) / 2;
		})()`)
		if n := eval[int](b, tab, `document.querySelectorAll("#compare tbody tr").length`); n != 100 {
			b.Fatalf("the compare view shows %d rows, want a page of 100", n)
		}
	}
	b.ReportMetric(load/float64(b.N), "load-ms")
	b.ReportMetric(toggle/float64(b.N), "toggle-ms")
}
