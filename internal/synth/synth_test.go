package synth_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/synth"
	"github.com/featbench/featbench/site"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestGenerateLoads checks that the generated tree passes the loader's full
// validation in both test id shapes, so benchmarks measure a build of
// valid data.
func TestGenerateLoads(t *testing.T) {
	for _, shape := range []struct {
		ids      string
		f2pRange [2]int // fail-to-pass tests per instance
		p2pRange [2]int
	}{
		{synth.TestFiles, [2]int{1, 2}, [2]int{5, 5}},
		{synth.TestFunctions, [2]int{3, 15}, [2]int{5, 30}},
	} {
		t.Run(shape.ids, func(t *testing.T) {
			testGenerateLoads(t, shape.ids, shape.f2pRange, shape.p2pRange)
		})
	}
	if err := synth.Generate(t.TempDir(), synth.Config{RepoRoot: repoRoot(t), TestIDs: "lines"}); err == nil {
		t.Error("an unknown TestIDs shape was accepted")
	}
}

func testGenerateLoads(t *testing.T, ids string, f2pRange, p2pRange [2]int) {
	dir := t.TempDir()
	const nInst, nSubs = 50, 3
	if err := synth.Generate(dir, synth.Config{RepoRoot: repoRoot(t), Instances: nInst, Submissions: nSubs, LiteSize: 20, TestIDs: ids}); err != nil {
		t.Fatal(err)
	}
	data, err := bench.Load(context.Background(), filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	if len(data.Datasets) != 1 {
		t.Fatalf("got %d datasets, want 1", len(data.Datasets))
	}
	ds := data.Datasets[0]
	if ds.Key() != "synthetic/v1" {
		t.Errorf("dataset key %q, want synthetic/v1", ds.Key())
	}
	if len(ds.Instances) != nInst {
		t.Errorf("got %d instances, want %d", len(ds.Instances), nInst)
	}
	if n := ds.SplitSize("full"); n != nInst {
		t.Errorf("full split has %d instances, want %d", n, nInst)
	}
	if n := ds.SplitSize("lite"); n != 20 {
		t.Errorf("lite split has %d instances, want 20", n)
	}
	if len(data.Submissions) != nSubs {
		t.Fatalf("got %d submissions, want %d", len(data.Submissions), nSubs)
	}
	levels := map[int]int{}
	for _, in := range ds.Instances {
		levels[in.Level]++
		if n := len(in.FailToPass); n < f2pRange[0] || n > f2pRange[1] {
			t.Errorf("%s: %d FAIL_TO_PASS tests, want %d-%d", in.InstanceID, n, f2pRange[0], f2pRange[1])
		}
		if n := len(in.PassToPass); n < p2pRange[0] || n > p2pRange[1] {
			t.Errorf("%s: %d PASS_TO_PASS tests, want %d-%d", in.InstanceID, n, p2pRange[0], p2pRange[1])
		}
	}
	if levels[1] == 0 || levels[2] == 0 {
		t.Errorf("levels %v: want both 1 and 2", levels)
	}
	for _, s := range data.Submissions {
		if s.Split != "full" || !s.PerInstance() {
			t.Errorf("%s: split %q, per-instance %v", s.ID(), s.Split, s.PerInstance())
		}
		if n := len(s.Results); n < nInst*8/10 || n > nInst {
			t.Errorf("%s: %d results for %d instances, want about 97%%", s.ID(), n, nInst)
		}
	}

	// The project root is complete: the site's own option loader accepts it.
	opts, err := site.LoadOptions(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Config.DefaultDataset != "synthetic/v1" || opts.Config.Output != "public" {
		t.Errorf("config %+v", opts.Config)
	}
}

// TestGenerateDeterministic checks that one seed always gives the same
// bytes, so benchmark runs compare like with like.
func TestGenerateDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	cfg := synth.Config{RepoRoot: repoRoot(t), Instances: 20, Submissions: 2}
	for _, d := range []string{a, b} {
		if err := synth.Generate(d, cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"data/datasets/synthetic/v1/instances.jsonl", "data/datasets/synthetic/v1/dataset.toml"} {
		x, err := os.ReadFile(filepath.Join(a, rel))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", rel)
		}
	}
	ra, _ := filepath.Glob(filepath.Join(a, "data/submissions/*/*/*/*/results.jsonl"))
	rb, _ := filepath.Glob(filepath.Join(b, "data/submissions/*/*/*/*/results.jsonl"))
	if len(ra) != 2 || len(rb) != 2 {
		t.Fatalf("results files: %v, %v", ra, rb)
	}
	for i := range ra {
		x, _ := os.ReadFile(ra[i])
		y, _ := os.ReadFile(rb[i])
		if filepath.Base(filepath.Dir(ra[i])) != filepath.Base(filepath.Dir(rb[i])) || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", ra[i])
		}
	}
}

// Real-shaped statements come out shaped like FeatureBench's 200
// published ones: 27 KB on average and at most 123 KB, about 4.8 fenced
// code blocks each, four in five of them Python, a fifth of those 8 KB or
// more and most of those with imports, about 5.6 headings, and lists.
// Small ones are about 1.5 KB; every other field is the same in both
// shapes.
func TestStatementShapes(t *testing.T) {
	const n = 400
	load := func(statements string) []*bench.Instance {
		dir := t.TempDir()
		if err := synth.Generate(dir, synth.Config{RepoRoot: repoRoot(t), Instances: n, Submissions: 1, Statements: statements}); err != nil {
			t.Fatal(err)
		}
		data, err := bench.Load(context.Background(), filepath.Join(dir, "data"))
		if err != nil {
			t.Fatal(err)
		}
		return data.Datasets[0].Instances
	}
	real, small := load(synth.StatementsReal), load(synth.StatementsSmall)
	fence := regexp.MustCompile("(?ms)^```(\\w*)\\n(.*?)^```")
	heading := regexp.MustCompile(`(?m)^#{1,6} `)
	imports := regexp.MustCompile(`(?m)^\s*(import|from) \S`)
	var total, largest, blocks, python, big, bigImports, headings, lists int
	for i, in := range real {
		s := in.ProblemStatement
		total += len(s)
		largest = max(largest, len(s))
		for _, m := range fence.FindAllStringSubmatch(s, -1) {
			blocks++
			if m[1] == "python" {
				python++
				if len(m[2]) >= 8<<10 {
					big++
					if imports.MatchString(m[2]) {
						bigImports++
					}
				}
			}
		}
		prose := fence.ReplaceAllString(s, "")
		headings += len(heading.FindAllString(prose, -1))
		if strings.Contains(prose, "\n- ") && strings.Contains(prose, "\n1. ") {
			lists++
		}
		if len(small[i].ProblemStatement) > 3<<10 {
			t.Errorf("%s: a small statement of %d bytes", in.InstanceID, len(small[i].ProblemStatement))
		}
		// The shape changes the statement alone.
		a, b := *in, *small[i]
		a.ProblemStatement, b.ProblemStatement = "", ""
		x, _ := a.MarshalJSON()
		y, _ := b.MarshalJSON()
		if !bytes.Equal(x, y) {
			t.Errorf("%s: the statements' shape changed another field", in.InstanceID)
		}
	}
	perStatement := func(k int) float64 { return float64(k) / n }
	for _, c := range []struct {
		what      string
		got       float64
		low, high float64
	}{
		{"mean statement KB", float64(total) / n / 1024, 23, 31},
		{"largest statement KB", float64(largest) / 1024, 60, 123},
		{"code blocks a statement", perStatement(blocks), 4.3, 5.3},
		{"share of Python blocks", float64(python) / float64(blocks), 0.72, 0.86},
		{"share of Python blocks of 8 KB or more", float64(big) / float64(python), 0.14, 0.27},
		{"share of those with imports", float64(bigImports) / float64(max(big, 1)), 0.6, 1},
		{"headings a statement", perStatement(headings), 5.1, 6.1},
		{"statements with lists", perStatement(lists), 0.99, 1},
	} {
		if c.got < c.low || c.got > c.high {
			t.Errorf("%s: %.2f, want %.2f to %.2f", c.what, c.got, c.low, c.high)
		}
		t.Logf("%s: %.2f", c.what, c.got)
	}
}

// The Hugo project holds a page per instance with its statement as it is
// and a row per system of the split.
func TestWriteHugo(t *testing.T) {
	dir, hugo := t.TempDir(), t.TempDir()
	if err := synth.Generate(dir, synth.Config{RepoRoot: repoRoot(t), Instances: 5, Submissions: 3}); err != nil {
		t.Fatal(err)
	}
	if err := synth.WriteHugo(dir, hugo); err != nil {
		t.Fatal(err)
	}
	data, err := bench.Load(context.Background(), filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hugo.toml", "layouts/_default/single.html", "content/instances/_index.md"} {
		if _, err := os.Stat(filepath.Join(hugo, name)); err != nil {
			t.Error(err)
		}
	}
	ins := data.Datasets[0].Instances
	for _, in := range ins {
		raw, err := os.ReadFile(filepath.Join(hugo, "content", "instances", in.InstanceID+".md"))
		if err != nil {
			t.Fatal(err)
		}
		page := string(raw)
		if !strings.Contains(page, in.ProblemStatement) {
			t.Errorf("%s: the page does not hold the statement", in.InstanceID)
		}
		_, table, ok := strings.Cut(page, "## Results\n")
		if rows := strings.Count(table, "\n|") - 2; !ok || rows != 3 { // after the header and its rule
			t.Errorf("%s: %d result rows, want 3", in.InstanceID, rows)
		}
	}
	if len(ins) != 5 {
		t.Errorf("%d instances, want 5", len(ins))
	}
}
