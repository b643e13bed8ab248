package site_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/site"
)

// headlineOf is the home page's headline board, as its heading links it.
func headlineOf(t *testing.T, out string) string {
	t.Helper()
	h := byID(parse(t, read(t, out, "index.html")), "headline")
	if h == nil {
		t.Fatal("the home page has no headline board")
	}
	links := find(h, func(n *html.Node) bool { return n.Data == "a" })
	if len(links) == 0 {
		t.Fatal("the headline has no link")
	}
	href, _ := attr(links[0], "href")
	return href
}

// navLeaderboard is the navigation's Leaderboard link of a page.
func navLeaderboard(t *testing.T, out, rel string) string {
	t.Helper()
	for _, a := range find(parse(t, read(t, out, rel)), func(n *html.Node) bool { return n.Data == "a" && text(n) == "Leaderboard" }) {
		href, _ := attr(a, "href")
		return href
	}
	t.Fatalf("%s has no Leaderboard link", rel)
	return ""
}

// The home page opens on the board with the most recent ranked
// submission, or on the split featbench.toml's [site.boards] gives the
// dataset; the dataset's Leaderboard link opens on the same split.
// Before, the shipped site opened on FeatureBench's full board, where
// its newest systems (on lite only) are absent.
func TestHomeOpensOnLatestBoard(t *testing.T) {
	out, _ := buildShipped(t)
	if got := headlineOf(t, out); !strings.HasSuffix(got, "leaderboard/featurebench/v1.0/lite/") {
		t.Errorf("the shipped home page opens on %s, want FeatureBench's lite board", got)
	}
	if got := navLeaderboard(t, out, "datasets/featurebench/v1.0/index.html"); !strings.HasSuffix(got, "leaderboard/featurebench/v1.0/lite/") {
		t.Errorf("FeatureBench's Leaderboard link opens %s, want lite", got)
	}

	// The statistics project: systems on full only, dated 2026-03-01.
	opts := statsProject(t)
	rep, err := site.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := headlineOf(t, rep.Output); !strings.HasSuffix(got, "leaderboard/demo/v1/full/") {
		t.Errorf("home page opens on %s, want full, the only board with systems", got)
	}
	// A newer system on lite: the home page and the link follow it.
	dir := filepath.Join(opts.Root, "data/submissions/demo/v1/lite/20260402_newer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("metadata.toml", "name = \"Newer\"\nscaffold = \"S\"\nmodel = \"M\"\ndate = 2026-04-02\n")
	write("results.jsonl", `{"instance_id": "demo__pkg-0", "resolved": false, "patch_applied": false, "f2p_passed": [], "f2p_failed": ["tests/test_a.py::test_new"], "p2p_passed": [], "p2p_failed": ["tests/test_b.py::test_old"]}`+"\n")
	rep, err = site.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := headlineOf(t, rep.Output); !strings.HasSuffix(got, "leaderboard/demo/v1/lite/") {
		t.Errorf("with a newer system on lite the home page opens on %s, want lite", got)
	}
	if got := navLeaderboard(t, rep.Output, "datasets/demo/v1/index.html"); !strings.HasSuffix(got, "leaderboard/demo/v1/lite/") {
		t.Errorf("with a newer system on lite the Leaderboard link opens %s, want lite", got)
	}
	// Configured: the dataset's boards open on full again.
	opts.Config.Boards = map[string]config.Board{"demo": {DefaultSplit: "full"}}
	rep, err = site.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := headlineOf(t, rep.Output); !strings.HasSuffix(got, "leaderboard/demo/v1/full/") {
		t.Errorf("with [site.boards.demo] default_split = \"full\" the home page opens on %s", got)
	}
}

// A [site.boards] entry that names no dataset, or a split the dataset
// lacks, fails the build and --check with featbench.toml's line.
func TestBoardsConfigChecked(t *testing.T) {
	for _, c := range []struct {
		name, toml string
		want       []string
	}{
		{"no such dataset", "[site]\ntitle = \"x\"\n\n[site.boards.\"nope\"]\ndefault_split = \"full\"\n",
			[]string{"featbench.toml:4:", `"site.boards.nope"`, "names no dataset"}},
		{"no such split", "[site.boards.\"demo/v1\"]\nfilter_tags = [\"a\"]\ndefault_split = \"verified\"\n",
			[]string{"featbench.toml:3:", `"site.boards.demo/v1.default_split"`, `is "verified" but demo/v1 has no such split (its splits: full, lite)`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := statsProject(t)
			path := filepath.Join(opts.Root, config.FileName)
			if err := os.WriteFile(path, []byte(c.toml), 0o644); err != nil {
				t.Fatal(err)
			}
			loaded, err := site.LoadOptions(opts.Root, "")
			if err != nil {
				t.Fatalf("featbench.toml does not load: %v", err)
			}
			opts.Config.Boards, opts.ConfigBytes, opts.ConfigPath = loaded.Config.Boards, loaded.ConfigBytes, loaded.ConfigPath
			for what, err := range map[string]error{
				"build": func() error { _, err := site.Build(t.Context(), opts); return err }(),
				"check": func() error { _, err := site.Check(t.Context(), opts); return err }(),
			} {
				if err == nil {
					t.Fatalf("%s accepted %q", what, c.toml)
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: error %q does not say %q", what, err, w)
					}
				}
			}
			if _, err := os.Stat(filepath.Join(opts.Root, "public")); err == nil {
				t.Error("a build that failed on its configuration wrote public/")
			}
		})
	}
}
