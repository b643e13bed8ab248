// Command synth writes a synthetic featbench project for build benchmarks:
//
//	go run ./internal/synth/cmd/synth -out DIR -instances 4000 -submissions 50 [-statements small] [-hugo HUGODIR]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/featbench/featbench/internal/synth"
)

func main() {
	out := flag.String("out", "", "project `DIR` to write (featbench.toml, package files, data/)")
	repo := flag.String("repo", ".", "featbench checkout to copy package.json and package-lock.json from")
	instances := flag.Int("instances", 4000, "number of instances")
	submissions := flag.Int("submissions", 50, "number of per-instance submissions on the full split")
	tests := flag.String("tests", synth.TestFiles, "test id granularity: `files` (FeatureBench) or functions (SWE-bench, about 4x larger results)")
	statements := flag.String("statements", synth.StatementsReal, "problem statements: `real` (FeatureBench-sized, 27 KB on average) or small (about 1.5 KB)")
	seed := flag.Uint64("seed", 0, "random seed (0: the fixed default)")
	hugo := flag.String("hugo", "", "also write into `DIR` a Hugo project of the same statements, with each instance's results as a table (scripts/bench-hugo.sh)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	cfg := synth.Config{RepoRoot: *repo, Instances: *instances, Submissions: *submissions, Seed: *seed, TestIDs: *tests, Statements: *statements}
	if err := synth.Generate(*out, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "synth:", err)
		os.Exit(1)
	}
	if *hugo != "" {
		if err := synth.WriteHugo(*out, *hugo); err != nil {
			fmt.Fprintln(os.Stderr, "synth: writing the Hugo project:", err)
			os.Exit(1)
		}
	}
}
