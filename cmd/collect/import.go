package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/featbench/featbench/internal/collect"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/fbimport"
	"github.com/featbench/featbench/internal/registry"
)

const importUsage = `usage: collect import --featurebench FILE --dataset NAME/VERSION [flags]

Turns a file of FeatureBench's task instances (its Hugging Face dataset's
fields, as JSON Lines or a JSON array) into a dataset version in
data/datasets/NAME/VERSION/, graded as FeatureBench lays its tasks out:
patch masks the feature, and each instance's image_name, pulled from its
registry, is its environment. Each image is pinned by the digest its
registry gives now (--pin=false keeps the names as they are); credentials
are the user's docker configuration's (docker login), never
featbench.toml's. Then:

  eval run --dataset NAME/VERSION --gold     # or --predictions output.jsonl

Flags:
`

func cmdImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("collect import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, importUsage); fs.PrintDefaults() }
	var pf projectFlags
	pf.register(fs)
	file := fs.String("featurebench", "", "FeatureBench's instances `FILE` (JSON Lines or a JSON array)")
	dataset := fs.String("dataset", "", "the dataset version to write, `NAME/VERSION` (never overwritten)")
	release := fs.String("release-date", "", "the version's release `DATE` (YYYY-MM-DD; default today, UTC)")
	title := fs.String("title", "", "the dataset's `TITLE` (default \"FeatureBench (imported)\")")
	split := fs.String("split", "full", "the `NAME` of the split holding every instance")
	reg := fs.String("registry", "", "take the images from this registry `HOST[:PORT]` (a mirror) instead of the one image_name names")
	interp := fs.String("interpreter", fbimport.DefaultInterpreter, "the `PATH` of the Python in the images")
	pin := fs.Bool("pin", true, "pin each image_name by the digest its registry gives now (needs the registry)")
	dataDir := fs.String("data", "", "the data `DIR` the dataset is written into (default: site.data)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 || *file == "" || *dataset == "" {
		fmt.Fprintln(stderr, "collect import: --featurebench FILE and --dataset NAME/VERSION are required")
		fs.Usage()
		return errUsage
	}
	name, version, ok := strings.Cut(*dataset, "/")
	if !ok || name == "" || version == "" {
		fmt.Fprintf(stderr, "collect import: --dataset %q: want NAME/VERSION\n", *dataset)
		return errUsage
	}
	date := time.Now().UTC().Truncate(24 * time.Hour)
	if *release != "" {
		d, err := time.Parse(time.DateOnly, *release)
		if err != nil {
			fmt.Fprintf(stderr, "collect import: --release-date %q: want YYYY-MM-DD\n", *release)
			return errUsage
		}
		date = d
	}
	cfg, err := pf.load()
	if err != nil {
		return err
	}
	data := cfg.Site.Data
	if *dataDir != "" {
		if data, err = filepath.Abs(*dataDir); err != nil {
			return err
		}
	} else if !filepath.IsAbs(data) {
		data = filepath.Join(pf.root, data)
	}
	raw, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	o := fbimport.Options{Name: name, Version: version, Title: *title, ReleaseDate: date, Split: *split,
		Registry: *reg, Interpreter: *interp}
	if *pin {
		eng, err := container.Connect(ctx, cfg.Eval.DockerHost)
		if err != nil {
			return err
		}
		defer eng.Close()
		keys := registry.Keychain{}
		o.Pin = func(ctx context.Context, ref string) (string, error) {
			r, err := registry.Parse(ref)
			if err != nil {
				return "", err
			}
			auth, err := keys.AuthHeader(ctx, r)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(stderr, "collect import: asking %s for the digest of %s\n", r.Domain(), ref)
			return eng.RemoteDigest(ctx, ref, auth)
		}
	}
	files, err := fbimport.Convert(ctx, *file, raw, o)
	if err != nil {
		return err
	}
	if err := collect.Publish(data, *dataset, files); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(data, "datasets", name, version))
	return nil
}
