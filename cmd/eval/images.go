package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/pybase"
)

func cmdImages(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("images", "[--build --dataset NAME/VERSION | --bases] [flags]",
		"Lists the images eval built (the Python base images and an environment image per repository and\n"+
			"source), builds those a dataset needs (--build), or builds the base image of every Python a\n"+
			"repository may name (--bases, as root: about a minute each), which are\n"+
			"  "+strings.Join(pythons(), ", ")+".\n"+
			"Images are built offline, cached by content, and built again only when their inputs change.", stderr)
	var pf projectFlags
	pf.register(fs)
	build := fs.Bool("build", false, "build the images the dataset's repositories need")
	dataset := fs.String("dataset", "", "with --build: the dataset `NAME/VERSION`")
	bases := fs.Bool("bases", false, "build the base image of every Python a repository may name")
	scan := fs.Bool("scan", false, "with --build: scan each image, and each instance's starting point, for the instances' solutions (exit 1 when a starting point holds some)")
	var only multi
	fs.Var(&only, "instance", "with --build: this instance `ID` only (repeatable)")
	rest, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr("unexpected arguments %q", rest)
	}
	if *build && *bases {
		return usageErr("--build and --bases are two commands: give one")
	}
	if (*scan || len(only) > 0) && !*build {
		return usageErr("--scan and --instance go with --build --dataset NAME/VERSION")
	}
	mode := noData
	if *build {
		mode = datasetsOnly
	}
	pr, err := pf.open(ctx, mode)
	if err != nil {
		return err
	}
	eng, err := pr.engine(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	if *bases {
		// A machine provisioned once (scripts/provision-images.sh) finds
		// them later, whoever runs: building needs root, finding does not.
		for _, b := range pybase.All() {
			ref, err := images.EnsureBase(ctx, eng, images.BaseSpec{Python: b.Python, Prefix: pr.cfg.Eval.ImagePrefix}, stderr)
			if err != nil {
				return fmt.Errorf("base image of Python %s: %w", b.Python, err)
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", b.Python, b.Suite, ref)
		}
		return nil
	}
	if *build {
		ds := pr.data.Dataset(*dataset)
		if ds == nil {
			return usageErr("--build needs --dataset NAME/VERSION of a dataset under %s", pr.dataDir())
		}
		ins := ds.Instances
		if len(only) > 0 {
			ins = nil
			for _, id := range only {
				in := ds.Instance(id)
				if in == nil {
					return usageErr("--instance %s: no such instance in %s", id, ds.DisplayName())
				}
				ins = append(ins, in)
			}
		}
		imgs, err := pr.buildImages(ctx, eng, ds, ins, stderr)
		if err != nil {
			return err
		}
		if *scan {
			return scanDataset(ctx, eng, ds, ins, imgs, stdout, stderr)
		}
		repos := make([]string, 0, len(imgs))
		for r := range imgs {
			repos = append(repos, r)
		}
		sort.Strings(repos)
		for _, r := range repos {
			fmt.Fprintf(stdout, "%s\t%s\n", r, imgs[r])
		}
		return nil
	}
	list, err := eng.Images(ctx, map[string]string{evaluate.LabelProject: "1"})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tKIND\tREPOSITORY\tCREATED\tSIZE")
	for _, im := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f MB\n", im.Ref, im.Labels[evaluate.LabelKind], im.Labels["featbench.repo"],
			im.Created.Format(time.DateTime), float64(im.Size)/(1<<20))
	}
	return tw.Flush()
}

// pythons lists the Pythons there are base images of, with their suites.
func pythons() []string {
	var out []string
	for _, b := range pybase.All() {
		out = append(out, b.Python+" (Debian "+b.Suite+")")
	}
	return out
}

func cmdClean(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("clean", "[--images] [flags]",
		"Removes the containers eval and collect started that no live run holds (a killed run's, whose lease is no longer renewed; with [eval] backend = \"swarm\" the swarm's services too), and with --images its images too.", stderr)
	var pf projectFlags
	pf.register(fs)
	withImages := fs.Bool("images", false, "also remove the base, environment and agent images")
	rest, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr("unexpected arguments %q", rest)
	}
	pr, err := pf.open(ctx, noData)
	if err != nil {
		return err
	}
	eng, err := pr.engine(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	n, live, err := executor.Clean(ctx, executor.Local(eng), nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %d containers%s\n", n, keptFor(live))
	if err := cleanSwarm(ctx, pr, eng, stdout, stderr); err != nil {
		return err
	}
	if *withImages {
		list, err := eng.Images(ctx, map[string]string{evaluate.LabelProject: "1"})
		if err != nil {
			return err
		}
		// Children before parents: agent layers are built on environment
		// images, environment images on the base image or on a layer of
		// Debian packages on it.
		rank := map[string]int{"agent": 0, "env": 1, "layer": 2, "base": 3}
		sort.SliceStable(list, func(i, j int) bool {
			return rank[list[i].Labels[evaluate.LabelKind]] < rank[list[j].Labels[evaluate.LabelKind]]
		})
		for _, im := range list {
			if err := eng.RemoveImage(ctx, im.Ref); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "removed %d images\n", len(list))
	}
	return nil
}

// keptFor says whose containers clean kept: the live runs'.
func keptFor(holders []string) string {
	if len(holders) == 0 {
		return ""
	}
	return "; kept those of runs under way: " + strings.Join(holders, ", ")
}

// cleanSwarm removes, with backend = "swarm", the services of eval and
// collect on the swarm that no live run holds.
func cleanSwarm(ctx context.Context, pr *project, eng *container.Engine, stdout, stderr io.Writer) error {
	if pr.cfg.Eval.Backend != "swarm" {
		return nil
	}
	b, err := executor.Open(ctx, pr.cfg.Eval, eng, stderr)
	if err != nil {
		return err
	}
	defer b.Close()
	n, live, err := executor.Clean(ctx, b.Executor, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %d services from the swarm at %s%s\n", n, pr.cfg.Eval.Swarm.Manager, keptFor(live))
	return nil
}

// scanDataset scans the images of the instances and each instance's
// starting point, and fails when a starting point holds some of its
// solution.
func scanDataset(ctx context.Context, eng *container.Engine, ds *bench.Dataset, ins []*bench.Instance, imgs map[string]string, stdout, stderr io.Writer) error {
	reps, err := scanImages(ctx, eng, ds, ins, imgs, stderr)
	if err != nil {
		return err
	}
	for _, img := range slicesSorted(reps) {
		printLeaks(stdout, "image "+img, reps[img])
	}
	sps, err := scanStartingPoints(ctx, eng, ds, ins, imgs)
	if err != nil {
		return err
	}
	bad := 0
	for _, id := range slicesSorted(sps) {
		if printLeaks(stdout, "the starting point of "+id, sps[id]) > 0 {
			bad++
		}
	}
	if bad > 0 {
		return exitError{code: 1, err: fmt.Errorf("%d of %d starting points hold some of their solution", bad, len(sps))}
	}
	return nil
}
