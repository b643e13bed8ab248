package site_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/synth"
	"github.com/featbench/featbench/site"
)

// The build benchmarks measure the targets on a synthetic project:
// by default 4,000 instances and 50 submissions with per-instance results.
//
//	go test ./site -run '^$' -bench Build -benchtime 3x
//	FEATBENCH_BENCH_INSTANCES=500 FEATBENCH_BENCH_SUBMISSIONS=10 go test ./site -run '^$' -bench .
//
// Each benchmark generates its own tree under b.TempDir before its b.Loop,
// which runs the function once per measurement and starts the timer only at
// the loop: generation is not measured, the rebuild benchmarks can change
// their tree freely, and the testing package removes it afterwards.

// benchEnvInt reads a size from the environment.
func benchEnvInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// benchProject generates the synthetic project and returns build options
// for it.
func benchProject(b *testing.B) site.Options {
	b.Helper()
	repo, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	cfg := synth.Config{
		RepoRoot:    repo,
		Instances:   benchEnvInt(b, "FEATBENCH_BENCH_INSTANCES", 4000),
		Submissions: benchEnvInt(b, "FEATBENCH_BENCH_SUBMISSIONS", 50),
	}
	if err := synth.Generate(dir, cfg); err != nil {
		b.Fatal(err)
	}
	opts, err := site.LoadOptions(dir, "")
	if err != nil {
		b.Fatal(err)
	}
	// The npm install of the chart library is shared with the checkout, so
	// npm runs at most once, not in every temp dir.
	opts.CacheDir = filepath.Join(repo, ".cache", "npm")
	// A fixed date keeps the input fingerprint stable across midnight.
	opts.Now = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	return opts
}

func benchBuild(b *testing.B, opts site.Options) site.Report {
	b.Helper()
	rep, err := site.Build(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	return rep
}

// BenchmarkBuildFull is a full build: no output folder, no build state.
func BenchmarkBuildFull(b *testing.B) {
	benchFull(b, benchProject(b))
}

func benchFull(b *testing.B, opts site.Options) {
	b.ReportAllocs()
	var rep site.Report
	n := 0
	for b.Loop() {
		// A new output folder each time, and so no build state (kept
		// per output folder): deleting the last one would load the file
		// system with the deletion while the next build runs. b.TempDir
		// removes them all.
		n++
		opts.Config.Output = "public-" + strconv.Itoa(n)
		rep = benchBuild(b, opts)
		if rep.UpToDate || rep.Written != rep.Files {
			b.Fatalf("full build: %+v; want every file written", rep)
		}
	}
	b.ReportMetric(float64(rep.Pages), "pages")
	b.ReportMetric(float64(rep.Files), "files")
}

// BenchmarkRebuildUnchanged is a rebuild with no input changed, which must
// return early.
func BenchmarkRebuildUnchanged(b *testing.B) {
	opts := benchProject(b)
	benchBuild(b, opts)
	b.ReportAllocs()
	for b.Loop() {
		if rep := benchBuild(b, opts); !rep.UpToDate {
			b.Fatalf("rebuild with nothing changed: %+v; want UpToDate", rep)
		}
	}
}

// BenchmarkRebuildOneSubmissionChanged is a rebuild after one submission's
// results.jsonl changed: only the pages whose view changed are rendered
// again (the split's pages, the system's, the instance's), and only files
// whose content changed are written.
func BenchmarkRebuildOneSubmissionChanged(b *testing.B) {
	opts := benchProject(b)
	benchBuild(b, opts)
	files, err := filepath.Glob(filepath.Join(opts.Root, opts.Config.Data, "submissions", "*", "*", "*", "*", "results.jsonl"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no results.jsonl in the synthetic tree (%v)", err)
	}
	sort.Strings(files)
	path := files[0]
	orig, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	// Dropping the last result (a missing prediction is valid) changes the
	// submission's figures; iterations alternate between the two versions
	// so every rebuild sees a change.
	trimmed := bytes.TrimRight(orig, "\n")
	trimmed = trimmed[:bytes.LastIndexByte(trimmed, '\n')+1]
	versions := [][]byte{trimmed, orig}
	b.ReportAllocs()
	written, rendered, n := 0, 0, 0
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(path, versions[n%2], 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep := benchBuild(b, opts)
		if rep.UpToDate {
			b.Fatal("rebuild after a results.jsonl changed reported UpToDate")
		}
		written += rep.Written
		rendered += rep.Pages - rep.Kept
		n++
	}
	b.ReportMetric(float64(written)/float64(n), "written/op")
	b.ReportMetric(float64(rendered)/float64(n), "rendered/op")
}
