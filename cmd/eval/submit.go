package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/submission"
)

func cmdSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("submit", "RUN --slug SLUG (--name NAME --scaffold S --model M | --metadata FILE) [flags]",
		"Makes the submission folder data/submissions/<name>/<version>/<split>/<YYYYMMDD>_<slug>/ of a finished\n"+
			"run (RUN: its id, or its folder) for the run's split and for every smaller split of the dataset it covers:\n"+
			"metadata.toml, results.jsonl, predictions.jsonl and logs.tar.gz (the test logs and the run's manifest of\n"+
			"their hashes, which `eval validate` checks). Then it checks data/ as `build --check` does, and writes\n"+
			"nothing when anything is wrong.", stderr)
	var pf projectFlags
	pf.register(fs)
	slug := fs.String("slug", "", "the system's `SLUG`: letters, digits, '.', '_', '-'; the same on every split")
	metaFile := fs.String("metadata", "", "take the metadata from this metadata.toml `FILE` (the flags below override it)")
	name := fs.String("name", "", "display `NAME`, e.g. \"OpenHands + Claude Opus 4.5\"")
	scaffold := fs.String("scaffold", "", "the agent `SCAFFOLD`")
	model := fs.String("model", "", "the `MODEL`")
	day := fs.String("date", "", "the run's `DATE`, YYYY-MM-DD (default: the day the run started)")
	var orgs, tags multi
	fs.Var(&orgs, "org", "an `ORGANISATION` behind the system (repeatable)")
	fs.Var(&tags, "tag", "a `TAG` (repeatable)")
	openWeights := fs.Bool("open-weights", false, "the model's weights are public")
	openScaffold := fs.Bool("open-scaffold", false, "the scaffold's code is public")
	reference := fs.Bool("reference", false, "a baseline (gold or empty patches): shown apart, not ranked")
	siteURL := fs.String("site-url", "", "http(s) `URL` of the system")
	reportURL := fs.String("report-url", "", "http(s) `URL` of a paper or report")
	notes := fs.String("notes", "", "plain `TEXT` for the system page")
	force := fs.Bool("force", false, "replace submission folders that exist")
	var only multi
	fs.Var(&only, "split", "write only this `SPLIT` (repeatable; default: the run's split and every smaller split it covers)")
	rest, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageErr("give the run: eval submit RUN --slug SLUG ...")
	}
	if err := bench.CheckName(*slug); err != nil {
		return usageErr("--slug %q: %v", *slug, err)
	}
	pr, err := pf.open(ctx, datasetsOnly)
	if err != nil {
		return err
	}
	dir := rest[0]
	if _, err := os.Stat(filepath.Join(dir, evaluate.RunMetaFile)); err != nil {
		dir = filepath.Join(pr.runsDir(), rest[0])
	}
	meta, err := evaluate.ReadMeta(dir)
	if err != nil {
		return err
	}
	ds := pr.data.Dataset(meta.Dataset)
	if ds == nil {
		return fmt.Errorf("the run evaluated %s, which is not under %s", meta.Dataset, pr.dataDir())
	}
	var m submission.Metadata
	if *metaFile != "" {
		if m, err = submission.ReadMetadata(*metaFile); err != nil {
			return err
		}
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&m.Name, *name)
	set(&m.Scaffold, *scaffold)
	set(&m.Model, *model)
	set(&m.SiteURL, *siteURL)
	set(&m.ReportURL, *reportURL)
	set(&m.Notes, *notes)
	if len(orgs) > 0 {
		m.Organisations = orgs
	}
	if len(tags) > 0 {
		m.Tags = tags
	}
	m.OpenWeights = m.OpenWeights || *openWeights
	m.OpenScaffold = m.OpenScaffold || *openScaffold
	m.Reference = m.Reference || *reference
	switch {
	case *day != "":
		if m.Date.Time, err = time.Parse("2006-01-02", *day); err != nil {
			return usageErr("--date %q: want YYYY-MM-DD", *day)
		}
	case m.Date.IsZero():
		m.Date.Time = meta.Created.UTC()
	}
	if m.Name == "" || m.Scaffold == "" || m.Model == "" {
		return usageErr("give --name, --scaffold and --model (or a --metadata file with them)")
	}
	written, warnings, err := submission.Pack(ctx, submission.PackOptions{
		DataDir: pr.dataDir(), Dataset: ds, RunDir: dir, Run: meta, Metadata: m, Slug: *slug, Splits: only, Force: *force,
	})
	if err != nil {
		return err
	}
	for _, w := range written {
		fmt.Fprintln(stdout, "wrote", w)
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if len(written) > 0 {
		// The next step, so a submitter does not have to look it up.
		fmt.Fprintf(stdout, "\nnext: check it as the pull-request gate will, then open a pull request adding the folder(s) above:\n  go run ./cmd/eval validate %s\n  go run ./cmd/build --check\n(see CONTRIBUTING.md)\n", written[0])
	}
	return nil
}
