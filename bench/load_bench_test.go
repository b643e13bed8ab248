package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/synth"
)

// BenchmarkLoad loads a synthetic data/ at the scale: 4,000
// instances and 50 submissions with per-instance results, about 100 MB.
// Loading is a third of a full site build.
//
//	go test ./bench -run '^$' -bench Load -benchtime 5x
func BenchmarkLoad(b *testing.B) {
	repo, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	cfg := synth.Config{RepoRoot: repo, Instances: 4000, Submissions: 50}
	if v := os.Getenv("FEATBENCH_BENCH_INSTANCES"); v != "" {
		if cfg.Instances, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	if err := synth.Generate(dir, cfg); err != nil {
		b.Fatal(err)
	}
	var results int
	for b.Loop() {
		data, err := bench.Load(context.Background(), filepath.Join(dir, "data"))
		if err != nil {
			b.Fatal(err)
		}
		results = 0
		for _, s := range data.Submissions {
			results += len(s.Results)
		}
	}
	b.ReportMetric(float64(results), "results")
}
