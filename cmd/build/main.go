// Command build renders data/ into the static benchmark site.
//
//	go run ./cmd/build                 build into the output folder (default public/)
//	go run ./cmd/build --check         validate data/ and write nothing
//	go run ./cmd/build --serve :8080   serve the site and rebuild on changes
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/featbench/featbench/site"
)

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	check := fs.Bool("check", false, "validate data/ and featbench.toml without writing anything")
	serve := fs.String("serve", "", "serve the site on `ADDR` (e.g. localhost:8080) and rebuild when data/, templates or config change")
	root := fs.String("root", ".", "project `DIR` holding featbench.toml and data/")
	cfgPath := fs.String("config", "", "configuration `FILE` (default DIR/featbench.toml)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the build to `FILE` (read it with go tool pprof)")
	memProfile := fs.String("memprofile", "", "write a memory profile of the build to `FILE` when it ends (go tool pprof -sample_index=alloc_space)")
	requireLocal := fs.Bool("require-local-charts", false, "fail instead of falling back to the CDN copy of the chart library when npm is missing")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: build [--check] [--serve ADDR] [--root DIR] [--config FILE]\n\nRenders data/ into the static site.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "build:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "build: cpu profile:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	opts, err := site.LoadOptions(*root, *cfgPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		return 1
	}
	opts.Log = os.Stderr
	opts.RequireLocalCharts = *requireLocal

	switch {
	case *check:
		data, err := site.Check(ctx, opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "build --check:", err)
			return 1
		}
		fmt.Printf("data/ is valid: %d dataset versions, %d submissions\n", len(data.Datasets), len(data.Submissions))
		return 0
	case *serve != "":
		if err := site.Serve(ctx, opts, *serve); err != nil {
			fmt.Fprintln(os.Stderr, "build --serve:", err)
			return 1
		}
		return 0
	}
	rep, err := site.Build(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		return 1
	}
	fmt.Println(rep)
	if *memProfile != "" {
		if err := writeMemProfile(*memProfile); err != nil {
			fmt.Fprintln(os.Stderr, "build: memory profile:", err)
			return 1
		}
	}
	return 0
}

func writeMemProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
