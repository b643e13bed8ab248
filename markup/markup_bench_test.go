package markup

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/featbench/featbench/internal/synth"
)

// BenchmarkInstanceMarkup renders what an instance page takes from markup
// (the statement, the gold and test patches and their file lists) for the
// build benchmark's 4,000 synthetic instances, without the rest of a
// build's work and its file system's noise:
//
//	go test ./markup -run '^$' -bench InstanceMarkup -benchtime 5x
func BenchmarkInstanceMarkup(b *testing.B) {
	type instance struct {
		Statement string `json:"problem_statement"`
		Patch     string `json:"patch"`
		TestPatch string `json:"test_patch"`
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := synth.Generate(dir, synth.Config{RepoRoot: repo, Instances: 4000, Submissions: 1}); err != nil {
		b.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "data", "datasets", "*", "*", "instances.jsonl"))
	var instances []instance
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			var in instance
			if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
				b.Fatal(err)
			}
			instances = append(instances, in)
		}
		f.Close()
	}
	if len(instances) == 0 {
		b.Fatal("no instances generated")
	}
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range instances {
			if _, err := m.Markdown(in.Statement); err != nil {
				b.Fatal(err)
			}
			m.Diff(in.Patch)
			m.Diff(in.TestPatch)
			DiffFiles(in.Patch)
			DiffFiles(in.TestPatch)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(instances)), "ns/instance")
}
