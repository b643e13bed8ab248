package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
)

// date is a bare TOML date: date = 2026-11-01, as CONTRIBUTING.md asks.
type date struct{ time.Time }

func (d date) MarshalTOML() ([]byte, error) { return []byte(d.Format("2006-01-02")), nil }

// UnmarshalTOML reads a date, or a date and time, from a --metadata file.
func (d *date) UnmarshalTOML(v any) error {
	t, ok := v.(time.Time)
	if !ok {
		return fmt.Errorf("date is %T; want a bare date such as 2026-11-01", v)
	}
	d.Time = t
	return nil
}

// metadata is metadata.toml as submit writes it: bench.Metadata's keys,
// empty ones left out.
type metadata struct {
	Name            string   `toml:"name"`
	Scaffold        string   `toml:"scaffold"`
	Model           string   `toml:"model"`
	Organisations   []string `toml:"organisations,omitempty"`
	Date            date     `toml:"date"`
	SiteURL         string   `toml:"site_url,omitempty"`
	ReportURL       string   `toml:"report_url,omitempty"`
	LogsURL         string   `toml:"logs_url,omitempty"`
	TrajectoriesURL string   `toml:"trajectories_url,omitempty"`
	PredictionsURL  string   `toml:"predictions_url,omitempty"`
	OpenWeights     bool     `toml:"open_weights"`
	OpenScaffold    bool     `toml:"open_scaffold"`
	Attempts        int      `toml:"attempts"`
	Reference       bool     `toml:"reference,omitempty"`
	Tags            []string `toml:"tags,omitempty"`
	Notes           string   `toml:"notes,omitempty"`
}

func cmdSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("submit", "RUN --slug SLUG (--name NAME --scaffold S --model M | --metadata FILE) [flags]",
		"Makes the submission folder data/submissions/<name>/<version>/<split>/<YYYYMMDD>_<slug>/ of a finished\n"+
			"run (RUN: its id, or its folder) for the run's split and for every smaller split of the dataset it covers:\n"+
			"metadata.toml, results.jsonl, predictions.jsonl and logs.tar.gz (the test logs, which `eval validate`\n"+
			"re-grades). Then it checks data/ as `build --check` does, and writes nothing when anything is wrong.", stderr)
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
	var m metadata
	if *metaFile != "" {
		if _, err := toml.DecodeFile(*metaFile, &m); err != nil {
			return fmt.Errorf("%s: %w", *metaFile, err)
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
	m.Attempts = meta.Attempts
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
	written, warnings, err := writeSubmissions(pr, ds, dir, meta, m, *slug, only, *force)
	if err != nil {
		return err
	}
	for _, w := range written {
		fmt.Fprintln(stdout, "wrote", w)
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	return nil
}

// writeSubmissions writes the run's submission folders, for its split and
// every smaller split it covers, staged beside data/ and checked by loading
// data/ with them before they are moved into place.
func writeSubmissions(pr *project, ds *bench.Dataset, dir string, meta evaluate.Meta, m metadata, slug string, only []string, force bool) (written, warnings []string, err error) {
	run := map[string]bool{}
	for _, id := range meta.Instances {
		run[id] = true
	}
	var splits []string
	for _, sp := range ds.Splits {
		ins := ds.SplitInstances(sp.Name)
		covered := len(ins) > 0
		for _, in := range ins {
			covered = covered && run[in.InstanceID]
		}
		if covered && (sp.Name == meta.Split || len(ins) <= len(meta.Instances)) && (len(only) == 0 || slices.Contains(only, sp.Name)) {
			splits = append(splits, sp.Name)
		}
	}
	for _, o := range only {
		if !slices.Contains(splits, o) {
			return nil, nil, fmt.Errorf("--split %s: the run does not cover that split of %s whole", o, ds.DisplayName())
		}
	}
	if len(splits) == 0 {
		return nil, nil, fmt.Errorf("the run covers no split of %s whole (it evaluated %d instances of %s)", ds.DisplayName(), len(meta.Instances), meta.Split)
	}
	results, err := readRunResults(dir)
	if err != nil {
		return nil, nil, err
	}
	folder := m.Date.Format("20060102") + "_" + slug
	var buf bytes.Buffer
	enc := toml.NewEncoder(&buf)
	enc.Indent = ""
	if err := enc.Encode(m); err != nil {
		return nil, nil, fmt.Errorf("encoding metadata.toml: %w", err)
	}
	metaTOML := buf.Bytes()
	type staged struct{ tmp, final string }
	var done []staged
	defer func() {
		for _, s := range done {
			os.RemoveAll(s.tmp)
		}
	}()
	for _, sp := range splits {
		final := filepath.Join(pr.dataDir(), "submissions", ds.Name, ds.Version, sp, folder)
		if _, err := os.Stat(final); err == nil && !force {
			return nil, nil, fmt.Errorf("%s exists: give --force to replace it", final)
		}
		if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
			return nil, nil, err
		}
		tmp, err := os.MkdirTemp(filepath.Dir(final), "."+folder+".tmp-")
		if err != nil {
			return nil, nil, err
		}
		done = append(done, staged{tmp, final})
		var ids []string
		for _, in := range ds.SplitInstances(sp) {
			ids = append(ids, in.InstanceID)
		}
		var res bytes.Buffer
		for _, id := range ids {
			if line, ok := results[id]; ok {
				res.Write(line)
				res.WriteByte('\n')
			}
		}
		preds, err := predictionLines(dir, ids, meta)
		if err != nil {
			return nil, nil, err
		}
		logs, err := evaluate.PackLogs(dir, ids, meta.Attempts)
		if err != nil {
			return nil, nil, err
		}
		for name, data := range map[string][]byte{
			bench.MetadataFile: metaTOML, bench.ResultsFile: res.Bytes(), bench.PredictionsFile: preds, bench.LogsFile: logs,
		} {
			if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
				return nil, nil, err
			}
		}
	}
	// Move the new folders in, check data/ as a whole (slugs, splits,
	// results against instances), and move them out again if it fails.
	var moved []staged
	undo := func() {
		for _, s := range moved {
			os.RemoveAll(s.final)
		}
	}
	for _, s := range done {
		old := s.final + ".old"
		os.RemoveAll(old)
		if _, err := os.Stat(s.final); err == nil {
			if err := os.Rename(s.final, old); err != nil {
				undo()
				return nil, nil, err
			}
			defer os.RemoveAll(old)
		}
		if err := os.Rename(s.tmp, s.final); err != nil {
			undo()
			return nil, nil, err
		}
		moved = append(moved, s)
	}
	if _, err := bench.Load(context.Background(), pr.dataDir()); err != nil {
		// A maintainers' attestation of a submission this replaces no
		// longer matches: theirs to renew, not a reason to refuse.
		var ps bench.Problems
		if errors.As(err, &ps) {
			var rest bench.Problems
			for _, p := range ps {
				if filepath.Base(p.File) == bench.CheckedFile {
					warnings = append(warnings, p.Error())
				} else if !strings.Contains(p.Msg, "not checked: ") {
					rest = append(rest, p)
				}
			}
			if len(rest) == 0 {
				err = nil
			} else {
				err = rest
			}
		}
		if err != nil {
			undo()
			for _, s := range done {
				if _, e := os.Stat(s.final + ".old"); e == nil {
					os.Rename(s.final+".old", s.final)
				}
			}
			return nil, nil, fmt.Errorf("the new submission does not pass the checks, nothing written: %w", err)
		}
	}
	for _, s := range done {
		written = append(written, s.final)
	}
	return written, warnings, nil
}

// readRunResults reads a run's results.jsonl, lines by instance.
func readRunResults(dir string) (map[string][]byte, error) {
	raw, err := os.ReadFile(filepath.Join(dir, evaluate.ResultsFile))
	if err != nil {
		return nil, fmt.Errorf("the run has no results (did it finish?): %w", err)
	}
	out := map[string][]byte{}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r struct {
			ID string `json:"instance_id"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, evaluate.ResultsFile), err)
		}
		out[r.ID] = line
	}
	return out, nil
}

// predictionLines is predictions.jsonl of the instances: each attempt's
// prediction as it was applied, in SWE-bench's format.
func predictionLines(dir string, ids []string, meta evaluate.Meta) ([]byte, error) {
	var b bytes.Buffer
	for _, id := range ids {
		for a := 1; a <= meta.Attempts; a++ {
			adir := filepath.Join(dir, id, fmt.Sprintf("attempt-%d", a))
			rep, err := evaluate.ReadReport(adir)
			if err != nil {
				continue
			}
			patch, err := os.ReadFile(filepath.Join(adir, evaluate.PredFile))
			if err != nil {
				return nil, fmt.Errorf("the prediction of %s: %w", id, err)
			}
			line := map[string]any{"instance_id": id, "model_name_or_path": rep.Model, "model_patch": string(patch)}
			if meta.Attempts > 1 {
				line["attempt"] = a
			}
			if rep.TokensIn != nil {
				line["tokens_in"] = *rep.TokensIn
			}
			if rep.TokensOut != nil {
				line["tokens_out"] = *rep.TokensOut
			}
			if rep.Cost != nil {
				line["cost"] = *rep.Cost
			}
			raw, err := json.Marshal(line)
			if err != nil {
				return nil, err
			}
			b.Write(raw)
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), nil
}
