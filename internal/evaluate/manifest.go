package evaluate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/featbench/featbench/internal/atomicfile"
)

// ManifestFile is the run's manifest, in the run folder and at the root of
// a submission's logs.tar.gz.
const ManifestFile = "manifest.json"

// Manifest records what a run graded and wrote: the predictions it read
// and the SHA-256 of every log file of every instance attempt. `eval
// submit` packs it into logs.tar.gz and `eval validate` checks every file
// against it, so that a log, report or prediction edited after the run, or
// copied in from another run, is caught. It is not a signature: whoever
// edits a log can edit the manifest too; re-running (validate --rerun) is
// what a forger cannot get past.
type Manifest struct {
	Schema   int    `json:"schema"`
	RunID    string `json:"run_id"`
	Dataset  string `json:"dataset"` // name/version
	Split    string `json:"split"`
	Attempts int    `json:"attempts"`
	// Predictions is "gold", "empty", or "sha256:<hex>" of the predictions
	// file the run read.
	Predictions string `json:"predictions"`
	// Files are the SHA-256 of each attempt's files, by their path in
	// logs.tar.gz: <instance>/attempt-<k>/report.json, prediction.diff,
	// container.log and tests/<name>.
	Files map[string]string `json:"files"`
	// SubmissionPredictions is the SHA-256 of the submission's
	// predictions.jsonl; `eval submit` sets it in the copy it packs.
	SubmissionPredictions string `json:"submission_predictions,omitempty"`
}

// ManifestSchema is the manifest's format version.
const ManifestSchema = 1

// attemptFiles lists the files of an attempt folder that are logged and
// hashed, by their path under the folder ("report.json", "tests/01-all.xml").
func attemptFiles(adir string) ([]string, error) {
	names := []string{ReportFile, PredFile, LogFile}
	entries, err := os.ReadDir(filepath.Join(adir, TestsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("listing %s: %w", filepath.Join(adir, TestsDir), err)
	}
	var tests []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			tests = append(tests, TestsDir+"/"+e.Name())
		}
	}
	sort.Strings(tests)
	return append(names, tests...), nil
}

// attemptPrefix is an attempt's folder in logs.tar.gz.
func attemptPrefix(id string, attempt int) string {
	return id + "/attempt-" + strconv.Itoa(attempt) + "/"
}

// predictionsDigest is the manifest's Predictions of a run's meta: its
// Predictions field is "gold", "empty" or "<file> sha256:<hex>", and the
// file's path says nothing about its content.
func predictionsDigest(meta Meta) string {
	if i := strings.LastIndex(meta.Predictions, " sha256:"); i >= 0 {
		return meta.Predictions[i+1:]
	}
	return meta.Predictions
}

// MakeManifest hashes the files of every finished attempt (one with a
// report) of the run's instances.
func MakeManifest(dir string, meta Meta) (*Manifest, error) {
	m := &Manifest{Schema: ManifestSchema, RunID: meta.RunID, Dataset: meta.Dataset, Split: meta.Split,
		Attempts: meta.Attempts, Predictions: predictionsDigest(meta), Files: map[string]string{}}
	for _, id := range meta.Instances {
		for a := 1; a <= meta.Attempts; a++ {
			adir := attemptDir(dir, id, a)
			if _, err := os.Stat(filepath.Join(adir, ReportFile)); err != nil {
				continue
			}
			names, err := attemptFiles(adir)
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				sum, err := hashFile(filepath.Join(adir, filepath.FromSlash(n)))
				if err != nil {
					return nil, fmt.Errorf("the manifest of %s: %w", dir, err)
				}
				m.Files[attemptPrefix(id, a)+n] = sum
			}
		}
	}
	return m, nil
}

// WriteManifest writes the run folder's manifest.json.
func WriteManifest(dir string, meta Meta) error {
	m, err := MakeManifest(dir, meta)
	if err != nil {
		return err
	}
	return atomicfile.WriteJSON(filepath.Join(dir, ManifestFile), m)
}

// ReadManifest reads a run folder's manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s has no %s (the run did not finish, or finished before runs had manifests): "+
			"run `eval run` with the same flags again to finish it", dir, ManifestFile)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the run's manifest: %w", err)
	}
	m, err := ParseManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ParseManifest reads a manifest strictly: unknown fields, a second value
// or an unknown schema are errors.
func ParseManifest(raw []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a manifest: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a manifest: more than one JSON value")
	}
	if m.Schema != ManifestSchema {
		return nil, fmt.Errorf("field \"schema\": is %d; this eval reads schema %d", m.Schema, ManifestSchema)
	}
	for name, sum := range m.Files {
		if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("field \"files\": %s: %q is not a SHA-256 in hex", name, sum)
		}
	}
	return &m, nil
}

// Only is the manifest of the given instances alone: what a submission of
// a smaller split packs.
func (m *Manifest) Only(ids []string) *Manifest {
	keep := map[string]bool{}
	for _, id := range ids {
		keep[id] = true
	}
	out := *m
	out.Files = map[string]string{}
	for name, sum := range m.Files {
		if id, _, ok := strings.Cut(name, "/"); ok && keep[id] {
			out.Files[name] = sum
		}
	}
	return &out
}

// Sum is the SHA-256 of data in hex, as the manifest writes it.
func Sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
