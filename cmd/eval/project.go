package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/images"
)

// project is what every command reads: the project root, featbench.toml
// and, when asked for, data/.
type project struct {
	root string
	cfg  config.Config
	data *bench.Data
}

// projectFlags are the flags every command shares.
type projectFlags struct {
	root, config string
}

func (p *projectFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.root, "root", ".", "project `DIR` holding featbench.toml and data/")
	fs.StringVar(&p.config, "config", "", "configuration `FILE` (default DIR/featbench.toml)")
}

// What of data/ a command loads: nothing, the datasets alone (evaluating
// needs no submission, and a broken one elsewhere must not stop it), or
// everything, as build --check does.
const (
	noData = iota
	datasetsOnly
	allData
)

// open reads featbench.toml and loads and validates what of data/ it asks.
func (p projectFlags) open(ctx context.Context, data int) (*project, error) {
	path := p.config
	if path == "" {
		path = filepath.Join(p.root, config.FileName)
	}
	cfg, err := config.LoadRoot(path, p.root)
	if err != nil {
		return nil, err
	}
	pr := &project{root: p.root, cfg: cfg}
	switch data {
	case datasetsOnly:
		pr.data, err = bench.LoadDatasets(ctx, pr.dataDir())
	case allData:
		pr.data, err = bench.Load(ctx, pr.dataDir())
	}
	if err != nil {
		return nil, err
	}
	return pr, nil
}

// dataDir is the data folder.
func (p *project) dataDir() string {
	if filepath.IsAbs(p.cfg.Site.Data) {
		return p.cfg.Site.Data
	}
	return filepath.Join(p.root, p.cfg.Site.Data)
}

// runsDir is the folder runs are written to.
func (p *project) runsDir() string {
	if filepath.IsAbs(p.cfg.Eval.Runs) {
		return p.cfg.Eval.Runs
	}
	return filepath.Join(p.root, p.cfg.Eval.Runs)
}

// engine connects to the Docker engine featbench.toml names.
func (p *project) engine(ctx context.Context) (*container.Engine, error) {
	return container.Connect(ctx, p.cfg.Eval.DockerHost)
}

// limits are the [eval] limits, with the instance timeout overridden when
// given.
func (p *project) limits(instance time.Duration) (evaluate.Limits, error) {
	lim, err := evaluate.ConfigLimits(p.cfg.Eval)
	if instance > 0 {
		lim.Instance = instance
	}
	return lim, err
}

// buildImages builds (or finds, cached by content) the environment image
// of every repository the instances come from, and of every history-based
// instance (its base commit with its patches), and returns them by
// evaluate.ImageKey.
// Each is built on the base image of the Python its dataset.toml names,
// so that grading runs on the base collection verified the instances on.
func (p *project) buildImages(ctx context.Context, eng images.Engine, ds *bench.Dataset, ins []*bench.Instance, log io.Writer) (map[string]string, error) {
	out := map[string]string{}
	for _, in := range ins {
		if out[evaluate.ImageKey(in)] != "" {
			continue
		}
		repo := ds.Repository(in.Repo)
		if repo == nil || repo.Source == nil {
			return nil, fmt.Errorf("repository %s of %s has no [repositories.source] in its dataset.toml: its environment cannot be built", in.Repo, ds.Key())
		}
		spec := images.EnvSpec{Name: repo.Name, Prefix: p.cfg.Eval.ImagePrefix}
		if repo.Source.Path != "" {
			spec.Source.Dir = filepath.Join(p.root, filepath.FromSlash(repo.Source.Path))
		} else {
			spec.Source.GitURL, spec.Source.Commit = repo.Source.Git, repo.Source.Commit
			if g := filepath.FromSlash(repo.Source.Git); !strings.Contains(g, "://") && !filepath.IsAbs(g) {
				// A git repository in the project (as collection reads it).
				if fi, err := os.Stat(filepath.Join(p.root, g)); err == nil && fi.IsDir() {
					spec.Source.GitURL = filepath.Join(p.root, g)
				}
			}
		}
		bs := images.BaseSpec{Prefix: p.cfg.Eval.ImagePrefix}
		if env := repo.Environment; env != nil {
			spec.PreInstall, spec.Install = env.PreInstall, env.Install
			bs.Python, bs.Packages = env.Python, env.Packages
		}
		base, err := images.EnsureBase(ctx, eng, bs, log)
		if err != nil {
			return nil, fmt.Errorf("base image: %w", err)
		}
		spec.Base = base
		if evaluate.History(in) && spec.Source.GitURL == "" {
			return nil, fmt.Errorf("%s comes from %s's history, whose [repositories.source] in %s's dataset.toml is no git repository: its environment cannot be built", in.InstanceID, repo.Name, ds.Key())
		}
		ref, err := images.EnsureEnv(ctx, eng, evaluate.HistoryEnv(spec, in), log)
		if err != nil {
			return nil, fmt.Errorf("environment of %s: %w", evaluate.ImageKey(in), err)
		}
		out[evaluate.ImageKey(in)] = ref
	}
	return out, nil
}

// pick finds a dataset, its split (default: site.default_split, else the
// dataset's first) and the instances of the split to work on (only: these
// of them).
func (pr *project) pick(dataset, split string, only []string) (*bench.Dataset, string, []*bench.Instance, error) {
	ds := pr.data.Dataset(dataset)
	if ds == nil {
		var keys []string
		for _, d := range pr.data.Datasets {
			keys = append(keys, d.Key())
		}
		return nil, "", nil, fmt.Errorf("no dataset %s under %s (there are: %s)", dataset, pr.dataDir(), strings.Join(keys, ", "))
	}
	if !ds.HasInstances() {
		return nil, "", nil, fmt.Errorf("%s publishes no instances (only figures): nothing to evaluate", ds.DisplayName())
	}
	sp := split
	if sp == "" {
		sp = ds.Splits[0].Name
		if ds.Split(pr.cfg.Site.DefaultSplit) != nil {
			sp = pr.cfg.Site.DefaultSplit
		}
	}
	if ds.Split(sp) == nil {
		var names []string
		for _, s := range ds.Splits {
			names = append(names, s.Name)
		}
		return nil, "", nil, fmt.Errorf("%s has no split %q (it has %s)", ds.DisplayName(), sp, strings.Join(names, ", "))
	}
	ins := ds.SplitInstances(sp)
	if len(only) > 0 {
		var picked []*bench.Instance
		for _, want := range only {
			in := ds.Instance(want)
			if in == nil || !ds.InSplit(sp, in) {
				return nil, "", nil, fmt.Errorf("--instance %s: no such instance in %s %s", want, ds.DisplayName(), sp)
			}
			picked = append(picked, in)
		}
		ins = picked
	}
	return ds, sp, ins, nil
}
