package site_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/featbench/featbench/internal/testenv"
	"github.com/featbench/featbench/site"
)

const methodsBase = "/methods/"

// TestBrowserMethods: on a dataset that mixes collection methods, the
// board's method filter shows the chosen method's column alone and keeps
// its URL state; the dataset page's filter shows that method's instances;
// axe-core finds no serious violation on the board, the dataset page and
// a new-components instance page.
func TestBrowserMethods(t *testing.T) {
	chromium := testenv.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	root := methodsFixture(t)
	if err := os.WriteFile(filepath.Join(root, "data/datasets/demo/v1/collection.json"), []byte(mixedCollection), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := fixtureOptions(t, root)
	opts.Config.BaseURL = methodsBase
	opts.RequireLocalCharts = true
	rep, err := site.Build(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(methodsBase, site.Handler(rep.Output, methodsBase))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := startBrowser(t, ctx, chromium, srv.URL)
	axe := axeSource(t, ctx)
	board := methodsBase + "leaderboard/demo/v1/full/"
	dataset := methodsBase + "datasets/demo/v1/"
	b.do(t, "sizing the window", chromedp.EmulateViewport(1366, 900))

	shownCols := `Array.from(document.querySelectorAll("#board thead th.method-col")).filter(th => getComputedStyle(th).display !== "none").map(th => th.getAttribute("data-key"))`
	b.open(t, board)
	if got := eval[[]string](t, b, shownCols); len(got) != 3 {
		t.Errorf("without a method chosen the board shows the method columns %q, want all three", got)
	}
	b.chooseOption(t, "method", "release")
	if got := eval[[]string](t, b, shownCols); len(got) != 1 || got[0] != "m-release" {
		t.Errorf("method=release shows the method columns %q, want m-release alone", got)
	}
	if q := b.query(t); q.Get("method") != "release" {
		t.Errorf("the URL does not keep the method: %q", q.Encode())
	}
	b.open(t, board+"?method=new-components")
	if got := eval[[]string](t, b, shownCols); len(got) != 1 || got[0] != "m-new-components" {
		t.Errorf("loading ?method=new-components shows the method columns %q", got)
	}

	b.open(t, dataset)
	b.chooseOption(t, "method", "release")
	visible := eval[[]string](t, b, `Array.from(document.getElementById("instances").tBodies[0].rows).filter(r => !r.hidden).map(r => r.getAttribute("data-search"))`)
	if len(visible) != 1 || visible[0] != "demo__pkg-3" {
		t.Errorf("method=release on the dataset page shows %q, want demo__pkg-3 alone", visible)
	}

	axePages(t, b, axe, []struct{ kind, path string }{
		{"board", board}, {"dataset", dataset}, {"instance", dataset + "instances/demo__pkg-2/"}, {"instance", dataset + "instances/demo__pkg-3/"},
	})
	b.checkNoErrors(t)
}
