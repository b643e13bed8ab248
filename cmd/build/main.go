// Command build renders data/ into the static benchmark site.
//
//	go run ./cmd/build                          build into the output folder (default public/)
//	go run ./cmd/build --check                  validate data/ and write nothing
//	go run ./cmd/build --serve localhost:8080   serve the site and rebuild on changes
//	go run ./cmd/build --attest ID              print the data/checked.toml entry of a submission
//	go run ./cmd/build --lock NAME/VERSION      print the data/datasets.lock.toml entry of a dataset version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/site"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageLine names every flag: TestUsageNamesEveryFlag keeps it so.
const usageLine = "usage: build [--check] [--serve ADDR] [--root DIR] [--config FILE] [--require-local-charts]\n" +
	"             [--cpuprofile FILE] [--memprofile FILE] [--attest SUBMISSION-ID]\n" +
	"             [--lock NAME/VERSION]"

type flags struct {
	check, requireLocal                                        bool
	serve, root, cfgPath, cpuProfile, memProfile, attest, lock string
}

func newFlagSet(f *flags) *flag.FlagSet {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.BoolVar(&f.check, "check", false, "validate data/ and featbench.toml without writing anything")
	fs.StringVar(&f.serve, "serve", "", "serve the site on `ADDR` and rebuild when data/, templates or config change;\n"+
		"a missing host means this machine only (:8080 is 127.0.0.1:8080); 0.0.0.0:8080 serves every interface")
	fs.StringVar(&f.root, "root", ".", "project `DIR` holding featbench.toml and data/")
	fs.StringVar(&f.cfgPath, "config", "", "configuration `FILE` (default DIR/featbench.toml)")
	fs.BoolVar(&f.requireLocal, "require-local-charts", false, "fail instead of falling back to the CDN copy of the chart library when npm is missing")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the build to `FILE` (read it with go tool pprof)")
	fs.StringVar(&f.memProfile, "memprofile", "", "write a memory profile of the build to `FILE` when it ends (go tool pprof -sample_index=alloc_space)")
	fs.StringVar(&f.attest, "attest", "", "print the data/checked.toml entry attesting the submission `SUBMISSION-ID`\n"+
		"(name/version/split/folder) as its files are now, and write nothing")
	fs.StringVar(&f.lock, "lock", "", "print the data/datasets.lock.toml entry publishing the dataset version `NAME/VERSION`\n"+
		"as its files are now, and write nothing")
	return fs
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nRenders data/ into the static site.\n\n", usageLine)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

func run(args []string, stdout, stderr io.Writer) int {
	var f flags
	fs := newFlagSet(&f)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, to stdout for --help
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs)
			return 0
		}
		usage(stderr, fs)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "build: unexpected argument %q\n", fs.Arg(0))
		usage(stderr, fs)
		return 2
	}
	if f.cpuProfile != "" {
		file, err := os.Create(f.cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "build: cpu profile:", err)
			return 1
		}
		defer file.Close()
		if err := pprof.StartCPUProfile(file); err != nil {
			fmt.Fprintln(stderr, "build: cpu profile:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	opts, err := site.LoadOptions(f.root, f.cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, "build:", err)
		return 1
	}
	opts.Log = stderr
	opts.RequireLocalCharts = f.requireLocal

	switch {
	case f.attest != "":
		return attest(opts, f.attest, stdout, stderr)
	case f.lock != "":
		return lock(opts, f.lock, stdout, stderr)
	case f.check:
		data, err := site.Check(ctx, opts)
		if err != nil {
			fmt.Fprintln(stderr, "build --check:", err)
			return 1
		}
		// An unpublished version may still change: said, not refused, so
		// that a new dataset can be previewed before a maintainer locks it.
		for _, key := range data.Unlocked {
			fmt.Fprintf(stderr, "warning: dataset %s is not in data/%s: unpublished, its files may still change (`go run ./cmd/build --lock %s` prints its entry)\n", key, bench.LockFile, key)
		}
		for _, w := range site.Warnings(opts) {
			fmt.Fprintln(stderr, "warning:", w)
		}
		fmt.Fprintf(stdout, "data/ is valid: %d dataset versions, %d submissions\n", len(data.Datasets), len(data.Submissions))
		return 0
	case f.serve != "":
		if err := site.Serve(ctx, opts, f.serve); err != nil {
			fmt.Fprintln(stderr, "build --serve:", err)
			return 1
		}
		return 0
	}
	// One build, then the process ends: nothing else runs beside it.
	opts.PauseGCWhileLoading = true
	rep, err := site.Build(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "build:", err)
		return 1
	}
	fmt.Fprintln(stdout, rep)
	if f.memProfile != "" {
		if err := writeMemProfile(f.memProfile); err != nil {
			fmt.Fprintln(stderr, "build: memory profile:", err)
			return 1
		}
	}
	// Opened from disk the pages would lack their styles and links under
	// a base path: point to the server instead.
	extra := ""
	if f.root != "." {
		extra += " --root " + f.root
	}
	if f.cfgPath != "" {
		extra += " --config " + f.cfgPath
	}
	fmt.Fprintf(stdout, "to view it: go run ./cmd/build --serve localhost:8080%s, then open http://localhost:8080%s\n", extra, rep.Base)
	return 0
}

// attest prints the data/checked.toml entry for a submission, dated today,
// for a maintainer who re-ran it to add.
func attest(opts site.Options, id string, stdout, stderr io.Writer) int {
	sum, err := bench.SubmissionHash(opts.DataDir(), id)
	if err != nil {
		fmt.Fprintln(stderr, "build --attest:", err)
		return 1
	}
	a := bench.Attestation{Submission: id, SHA256: sum, By: "FeatBench maintainers", Date: time.Now()}
	fmt.Fprintf(stderr, "add this to data/checked.toml once you have re-run %s (set by and note):\n", id)
	fmt.Fprint(stdout, a.TOML())
	return 0
}

// lock prints the data/datasets.lock.toml entry of a dataset version, for
// a maintainer publishing a version written by hand.
func lock(opts site.Options, key string, stdout, stderr io.Writer) int {
	e, err := bench.DatasetLock(opts.DataDir(), key)
	if err != nil {
		fmt.Fprintln(stderr, "build --lock:", err)
		return 1
	}
	fmt.Fprintf(stderr, "add this to data/%s to publish %s; its files may not change afterwards:\n", bench.LockFile, key)
	fmt.Fprint(stdout, e.TOML())
	return 0
}

func writeMemProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
