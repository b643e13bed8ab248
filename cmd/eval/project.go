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
	"github.com/featbench/featbench/internal/pyindex"
	"github.com/featbench/featbench/internal/registry"
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
	root, config, data string
}

func (p *projectFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.root, "root", ".", "project `DIR` holding featbench.toml and data/")
	fs.StringVar(&p.config, "config", "", "configuration `FILE` (default DIR/featbench.toml)")
	fs.StringVar(&p.data, "data", "", "the data `DIR` holding datasets/ and submissions/ (default: [site] data), such as one collect --data wrote")
}

// What of data/ a command loads: nothing, or the datasets alone
// (evaluating needs no submission, and a broken one elsewhere must not
// stop it; validate loads its one submission itself).
const (
	noData = iota
	datasetsOnly
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
	if p.data != "" {
		// The caller's folder, relative to the working directory.
		if cfg.Site.Data, err = filepath.Abs(p.data); err != nil {
			return nil, err
		}
	}
	pr := &project{root: p.root, cfg: cfg}
	switch data {
	case datasetsOnly:
		pr.data, err = bench.LoadDatasets(ctx, pr.dataDir())
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
	if ds.ImagesOrDefault() == bench.ImagesInstance {
		return pullImages(ctx, eng, ds, ins, log)
	}
	out := map[string]string{}
	for _, in := range ins {
		if out[evaluate.ImageKey(ds, in)] != "" {
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
			// A path is the project's, as collect read it (a clone beside
			// featbench.toml), not the working directory's.
			if g := repo.Source.Git; !filepath.IsAbs(g) && !strings.Contains(g, "://") && !strings.Contains(g, "@") {
				spec.Source.GitURL = filepath.Join(p.root, filepath.FromSlash(g))
			}
		}
		bs := images.BaseSpec{Prefix: p.cfg.Eval.ImagePrefix}
		fromRegistry := ""
		if env := repo.Environment; env != nil {
			spec.PreInstall, spec.Install = env.PreInstall, env.Install
			bs.Python, bs.Packages = env.Python, env.Packages
			if env.Network == bench.NetworkBuild {
				spec.Index = &images.Index{URLs: p.indexes(env), Labels: map[string]string{evaluate.LabelProject: "1"}}
				spec.Lock = env.Lock
			}
			fromRegistry = env.BaseImage
		}
		var base string
		var err error
		if fromRegistry != "" {
			// Pinned by digest in the dataset: the engine checks that
			// what the registry sends is what collection used.
			base, err = images.EnsurePulled(ctx, eng, fromRegistry, registry.Keychain{}, log)
		} else {
			base, err = images.EnsureBase(ctx, eng, bs, log)
		}
		if err != nil {
			return nil, fmt.Errorf("base image of %s: %w", repo.Name, err)
		}
		spec.Base, spec.RegistryBase = base, fromRegistry != ""
		if evaluate.History(in) && spec.Source.GitURL == "" {
			return nil, fmt.Errorf("%s comes from %s's history, whose [repositories.source] in %s's dataset.toml is no git repository: its environment cannot be built", in.InstanceID, repo.Name, ds.Key())
		}
		ref, err := images.EnsureEnv(ctx, eng, evaluate.HistoryEnv(spec, in), log)
		if err != nil {
			return nil, fmt.Errorf("environment of %s: %w", evaluate.ImageKey(ds, in), err)
		}
		out[evaluate.ImageKey(ds, in)] = ref
	}
	return out, nil
}

// indexes are where a networked environment's locked packages come from:
// [eval] index_url when set (a mirror, a local index: the lock's hashes
// hold whatever the index), else the dataset's, else pip's own
// configuration here, else PyPI.
func (p *project) indexes(env *bench.Environment) []string {
	switch {
	case p.cfg.Eval.IndexURL != "":
		return append([]string{p.cfg.Eval.IndexURL}, p.cfg.Eval.ExtraIndexURL...)
	case env.IndexURL != "":
		return append([]string{env.IndexURL}, env.ExtraIndexURL...)
	}
	home, _ := os.UserHomeDir()
	index, extra, _ := pyindex.PipIndexes(os.Getenv, home)
	return append([]string{index}, extra...)
}

// pullImages takes, for a dataset whose instances bring their images
// (FeatureBench's), each instance's image_name from its registry, pinned by
// digest, and returns them by instance id (evaluate.ImageKey). Credentials
// are the user's docker configuration's.
func pullImages(ctx context.Context, eng images.Engine, ds *bench.Dataset, ins []*bench.Instance, log io.Writer) (map[string]string, error) {
	out := map[string]string{}
	pinned := map[string]string{} // image_name -> pinned, pulled once
	for _, in := range ins {
		ref := pinned[in.ImageName]
		if ref == "" {
			var err error
			ref, err = images.EnsurePulled(ctx, eng, in.ImageName, registry.Keychain{}, log)
			if err != nil {
				return nil, fmt.Errorf("the image of %s: %w", in.InstanceID, err)
			}
			pinned[in.ImageName] = ref
		}
		out[evaluate.ImageKey(ds, in)] = ref
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
