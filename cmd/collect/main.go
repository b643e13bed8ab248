// Command collect turns Python repositories into verified feature-level
// task instances with FeatureBench's test-driven method, and writes them
// as a new dataset version into data/.
//
//	collect --dataset NAME/VERSION [--repo OWNER/NAME] [--stage NAME] [--seed N]
//	collect graph --repo OWNER/NAME --file TEST_FILE [--format text|json|dot]
//	collect index --dir WHEELS [--addr HOST:PORT]
//	collect import --featurebench FILE --dataset NAME/VERSION [--registry HOST]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/collect"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/llm"
	"github.com/featbench/featbench/internal/trace"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: collect --dataset NAME/VERSION [flags]
       collect graph --repo OWNER/NAME --file TEST_FILE [--format text|json|dot]
       collect index --dir WHEELS [--addr HOST:PORT]
       collect import --featurebench FILE --dataset NAME/VERSION [flags]

Turns the repositories of featbench.toml's [[collect.repo]] tables into
verified task instances (FeatureBench's method: run the tests, trace them,
classify the tested objects, choose pass-to-pass files, walk the graph,
mask, verify in containers, write the problem statements) and writes a new
dataset version into data/datasets/NAME/VERSION/. Each stage keeps its
output in the work folder ([collect] work); a run that stopped resumes.
The containers run where [eval] backend says: on the engine at [eval]
docker_host, or on a Docker Swarm (docs/executors.md); the images are
built on that engine either way.

Stages: ` + "env, discover, run, trace, classify, p2p, walk, mask, verify, statements, dataset" + `
A repository with method = "release" (FeatBench's method: releases, their
notes and pull requests, read from the git source's history) or
method = "new-components" (FEA-Bench's: pull requests that add functions,
classes or methods) has the stages
` + "env, history, select, filter, verify, statements, dataset" + `.

Flags:
`

func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case len(args) > 0 && args[0] == "graph":
		err = cmdGraph(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "index":
		err = cmdIndex(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "import":
		err = cmdImport(ctx, args[1:], stdout, stderr)
	default:
		err = cmdCollect(ctx, args, stdout, stderr)
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintln(stderr, "collect:", err)
	return 1
}

var errUsage = errors.New("usage")

type repoList []string

func (l *repoList) String() string     { return strings.Join(*l, ",") }
func (l *repoList) Set(s string) error { *l = append(*l, s); return nil }

// project flags shared by the commands.
type projectFlags struct{ root, config string }

func (p *projectFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.root, "root", ".", "project `DIR` holding featbench.toml and data/")
	fs.StringVar(&p.config, "config", "", "configuration `FILE` (default DIR/featbench.toml)")
}

func (p projectFlags) load() (config.Config, error) {
	path := p.config
	if path == "" {
		path = filepath.Join(p.root, config.FileName)
	}
	return config.LoadRoot(path, p.root)
}

func cmdCollect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("collect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	var pf projectFlags
	pf.register(fs)
	dataset := fs.String("dataset", "", "the dataset version to write, `NAME/VERSION` (never overwritten)")
	var repos repoList
	fs.Var(&repos, "repo", "collect from this `OWNER/NAME` only (repeatable; default: every [[collect.repo]])")
	stage := fs.String("stage", "", "run this `STAGE` alone, from the stored outputs of the ones before it")
	seed := fs.Uint64("seed", 0, "random `SEED` of the line budgets, pass-to-pass draws and split samples")
	force := fs.Bool("force", false, "make again the outputs of the stages that run, even when stored")
	verbose := fs.Bool("v", false, "a line per test file run and traced")
	workDir := fs.String("work", "", "the work `DIR` (default: [collect] work)")
	dataDir := fs.String("data", "", "the data `DIR` the dataset is written into (default: site.data)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "collect: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	if *dataset == "" && *stage == "" {
		fmt.Fprintln(stderr, "collect: --dataset NAME/VERSION is required")
		fs.Usage()
		return errUsage
	}
	if *dataset == "" {
		*dataset = "scratch/stage" // a stage alone writes no dataset
	}
	cfg, err := pf.load()
	if err != nil {
		return err
	}
	// Folders given on the command line are the caller's, not the
	// project's: relative to the working directory.
	for _, f := range []struct {
		flag string
		dst  *string
	}{{*workDir, &cfg.Collect.Work}, {*dataDir, &cfg.Site.Data}} {
		if f.flag != "" {
			abs, err := filepath.Abs(f.flag)
			if err != nil {
				return err
			}
			*f.dst = abs
		}
	}
	eng, err := container.Connect(ctx, cfg.Eval.DockerHost)
	if err != nil {
		return err
	}
	defer eng.Close()
	// The containers run where evaluation's do ([eval] backend), as they
	// have its limits: verification is an evaluation.
	x, err := executor.Open(ctx, cfg.Eval, eng, stderr)
	if err != nil {
		return err
	}
	defer x.Close()
	if cfg.Eval.Backend == "swarm" {
		fmt.Fprintf(stderr, "collect: the containers run on %s (images built here, pushed to %s)\n", x.Where, cfg.Eval.Swarm.Registry)
	}
	opts := collect.Options{
		Root: pf.root, Config: cfg, Dataset: *dataset, Repos: repos, Stage: *stage, Seed: *seed, Force: *force,
		Engine: eng, Executor: x.Executor, Log: stderr, Verbose: *verbose,
	}
	if cfg.LLM.Endpoint != "" {
		c, err := newLLM(pf.root, cfg)
		if err != nil {
			return err
		}
		opts.LLM = c
	}
	start := time.Now()
	rep, err := collect.Run(ctx, opts)
	if rep != nil && len(rep.Repos) > 0 {
		fmt.Fprintln(stdout)
		collect.WriteTable(stdout, rep)
	}
	if err != nil {
		return err
	}
	if *stage == "" || *stage == collect.StageDataset {
		fmt.Fprintf(stdout, "\nwrote %s in %s\n", filepath.Join(cfg.Site.Data, "datasets", *dataset), time.Since(start).Round(time.Second))
		if failed := rep.Failed(); len(failed) > 0 {
			// Written from the others; collection.json says so too.
			fmt.Fprintf(stdout, "without %s, which failed (see above): the dataset holds the other repositories' instances\n", strings.Join(failed, ", "))
		}
	}
	return nil
}

// newLLM is the [llm] table's client, caching answers in the work folder
// so that a re-run asks nothing twice.
func newLLM(root string, cfg config.Config) (*llm.Client, error) {
	l := cfg.LLM
	timeout, _ := time.ParseDuration(l.Timeout)
	work := cfg.Collect.Work
	if !filepath.IsAbs(work) {
		work = filepath.Join(root, work)
	}
	seed := int64(l.Seed)
	return llm.New(llm.Config{
		Endpoint: l.Endpoint, Model: l.Model, APIKeyEnv: l.APIKeyEnv, Temperature: l.Temperature,
		MaxTokens: l.MaxTokens, Seed: &seed, Timeout: timeout, CacheDir: filepath.Join(work, "llm-cache"),
	}, os.Getenv, nil)
}

func cmdGraph(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("collect graph", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var pf projectFlags
	pf.register(fs)
	repo := fs.String("repo", "", "the repository, `OWNER/NAME`")
	file := fs.String("file", "", "the test `FILE`, relative to the repository")
	format := fs.String("format", "text", "`text` (a node per line), json (the stored graph) or dot (Graphviz)")
	workDir := fs.String("work", "", "the work `DIR` (default: [collect] work)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if *repo == "" || *file == "" {
		fmt.Fprintln(stderr, "collect graph: --repo and --file are required")
		return errUsage
	}
	cfg, err := pf.load()
	if err != nil {
		return err
	}
	if *workDir != "" {
		if cfg.Collect.Work, err = filepath.Abs(*workDir); err != nil {
			return err
		}
	}
	sg, err := collect.LoadGraph(pf.root, cfg, *repo, *file)
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sg.Graph)
	case "dot":
		return trace.WriteDOT(stdout, sg.Graph, sg.Style)
	case "text":
		for _, n := range sg.Graph.Nodes {
			role := sg.Style(&n)
			if role == "" {
				role = "-"
			}
			calls := fmt.Sprintf("%5d", n.Calls)
			if sg.Graph.Bounded() {
				calls = fmt.Sprintf(">=%d", n.Calls)
			}
			fmt.Fprintf(stdout, "%-9s %5s calls %4d lines  %s\n", role, calls, n.Lines(), n.ID)
			for _, c := range n.Callees {
				fmt.Fprintf(stdout, "          -> %s\n", c)
			}
		}
		return nil
	}
	fmt.Fprintf(stderr, "collect graph: unknown format %q (text, json or dot)\n", *format)
	return errUsage
}
