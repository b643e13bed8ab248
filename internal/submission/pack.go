// Package submission turns a run of cmd/eval into leaderboard submission
// folders (Pack), and checks a submission folder against its logs and the
// dataset (Validate), optionally evaluating a seeded sample of its
// predictions again in containers. It is the pull-request gate's logic;
// cmd/eval parses the flags and prints.
package submission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/atomicfile"
	"github.com/featbench/featbench/internal/evaluate"
)

// Date is a bare TOML date: date = 2026-11-01, as CONTRIBUTING.md asks.
type Date struct{ time.Time }

// MarshalTOML writes the date without a time.
func (d Date) MarshalTOML() ([]byte, error) { return []byte(d.Format("2006-01-02")), nil }

// UnmarshalTOML reads a date, or a date and time, from a --metadata file.
func (d *Date) UnmarshalTOML(v any) error {
	t, ok := v.(time.Time)
	if !ok {
		return fmt.Errorf("date is %T; want a bare date such as 2026-11-01", v)
	}
	d.Time = t
	return nil
}

// Metadata is metadata.toml as Pack writes it: bench.Metadata's keys,
// empty ones left out.
type Metadata struct {
	Name            string   `toml:"name"`
	Scaffold        string   `toml:"scaffold"`
	Model           string   `toml:"model"`
	Organisations   []string `toml:"organisations,omitempty"`
	Date            Date     `toml:"date"`
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

// ReadMetadata reads a --metadata file.
func ReadMetadata(path string) (Metadata, error) {
	var m Metadata
	if _, err := toml.DecodeFile(path, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// PackOptions say which run to pack, where and as what.
type PackOptions struct {
	DataDir  string         // data/
	Dataset  *bench.Dataset // the dataset the run evaluated
	RunDir   string         // runs/<run-id>
	Run      evaluate.Meta  // the run's run.json
	Metadata Metadata       // metadata.toml; Attempts is taken from the run
	Slug     string
	Splits   []string // write only these splits; none: every split the run covers
	Force    bool     // replace submission folders that exist
}

// Pack writes the run's submission folders, for its split and every
// smaller split it covers (metadata.toml, results.jsonl, predictions.jsonl
// and logs.tar.gz with the run's manifest), staged beside data/ and checked
// by loading data/ with them before they are moved into place; nothing is
// written when anything is wrong. warnings are maintainers' attestations
// the new folders make stale.
func Pack(ctx context.Context, o PackOptions) (written, warnings []string, err error) {
	ds, meta := o.Dataset, o.Run
	if meta.Dataset != ds.Key() {
		return nil, nil, fmt.Errorf("the run evaluated %s, not %s", meta.Dataset, ds.Key())
	}
	if err := bench.CheckName(o.Slug); err != nil {
		return nil, nil, fmt.Errorf("slug %q: %w", o.Slug, err)
	}
	m := o.Metadata
	m.Attempts = meta.Attempts
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
		if covered && (sp.Name == meta.Split || len(ins) <= len(meta.Instances)) && (len(o.Splits) == 0 || slices.Contains(o.Splits, sp.Name)) {
			splits = append(splits, sp.Name)
		}
	}
	for _, s := range o.Splits {
		if !slices.Contains(splits, s) {
			return nil, nil, fmt.Errorf("--split %s: the run does not cover that split of %s whole", s, ds.DisplayName())
		}
	}
	if len(splits) == 0 {
		return nil, nil, fmt.Errorf("the run covers no split of %s whole (it evaluated %d instances of %s)", ds.DisplayName(), len(meta.Instances), meta.Split)
	}
	results, err := ReadRunResults(o.RunDir)
	if err != nil {
		return nil, nil, err
	}
	man, err := evaluate.ReadManifest(o.RunDir)
	if err != nil {
		return nil, nil, err
	}
	if man.Dataset != ds.Key() || man.Attempts != meta.Attempts {
		return nil, nil, fmt.Errorf("%s: the manifest is of %s with %d attempts; the run is %s with %d",
			filepath.Join(o.RunDir, evaluate.ManifestFile), man.Dataset, man.Attempts, ds.Key(), meta.Attempts)
	}
	folder := m.Date.Format("20060102") + "_" + o.Slug
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
		final := filepath.Join(o.DataDir, "submissions", ds.Name, ds.Version, sp, folder)
		if _, err := os.Stat(final); err == nil && !o.Force {
			return nil, nil, fmt.Errorf("%s exists: give --force to replace it", final)
		}
		if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
			return nil, nil, fmt.Errorf("making the submission folder: %w", err)
		}
		tmp, err := os.MkdirTemp(filepath.Dir(final), "."+folder+".tmp-")
		if err == nil {
			// MkdirTemp makes it 0700: the folder is committed and
			// published, readable by all like the rest of data/.
			err = os.Chmod(tmp, 0o755)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("making the submission folder: %w", err)
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
		preds, err := predictionLines(o.RunDir, ids, meta)
		if err != nil {
			return nil, nil, err
		}
		// The split's share of the manifest, with the hash of the
		// predictions.jsonl it goes with.
		sm := man.Only(ids)
		sm.SubmissionPredictions = evaluate.Sum(preds)
		logs, err := evaluate.PackLogs(o.RunDir, ids, meta.Attempts, sm)
		if err != nil {
			return nil, nil, err
		}
		files := map[string][]byte{
			bench.MetadataFile: metaTOML, bench.ResultsFile: res.Bytes(), bench.PredictionsFile: preds, bench.LogsFile: logs,
		}
		// Measured predictions carry the trajectories their figures were
		// counted from (eval infer's proxy recorded them).
		traj, err := evaluate.PackTrajectories(o.RunDir, ids, meta.Attempts)
		if err != nil {
			return nil, nil, err
		}
		if traj != nil {
			files[bench.TrajectoriesFile] = traj
		}
		for name, data := range files {
			if err := atomicfile.Write(filepath.Join(tmp, name), data); err != nil {
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
				return nil, nil, fmt.Errorf("moving the old submission aside: %w", err)
			}
			defer os.RemoveAll(old)
		}
		if err := os.Rename(s.tmp, s.final); err != nil {
			undo()
			return nil, nil, fmt.Errorf("moving the submission into place: %w", err)
		}
		moved = append(moved, s)
	}
	if _, err := bench.Load(ctx, o.DataDir); err != nil {
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

// ReadRunResults reads a run's results.jsonl, lines by instance.
func ReadRunResults(dir string) (map[string][]byte, error) {
	path := filepath.Join(dir, evaluate.ResultsFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the run has no results (did it finish?): %w", err)
	}
	out := map[string][]byte{}
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r struct {
			ID string `json:"instance_id"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		out[r.ID] = line
	}
	return out, nil
}

// attemptPath is an attempt's folder in the submission's archives.
func attemptPath(id string, attempt int) string { return fmt.Sprintf("%s/attempt-%d/", id, attempt) }

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
			if rep.Measured {
				line["measured"] = true
				line["trajectory"] = attemptPath(id, a) + evaluate.TrajectoryFile
			}
			if rep.Turns != nil {
				line["turns"] = *rep.Turns
			}
			if rep.AgentFailure != "" {
				line["failure_mode"] = rep.AgentFailure
			}
			raw, err := json.Marshal(line)
			if err != nil {
				return nil, fmt.Errorf("encoding the prediction of %s: %w", id, err)
			}
			b.Write(raw)
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), nil
}
