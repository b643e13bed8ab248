package submission

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/predictions"
)

// Rerun evaluates a seeded random sample of a submission's instances
// again, in containers, and compares the new results with results.jsonl.
// The same seed and sample size pick the same instances on any machine, so
// the gate is reproducible; the seed must be one the submitter could not
// choose or foresee (RandomSeed), or a forger makes only the instances it
// picks honest.
type Rerun struct {
	RunsDir string // the new run's folder goes here
	Sample  int    // instances to evaluate again; 0 (or more than there are): every one
	// WholeMax: a ranked row (not a reference row) of a dataset of at most
	// this many instances is evaluated again whole, whatever Sample says;
	// 0 never.
	WholeMax int
	Seed     uint64
	// Evaluate runs cfg as `eval run` does; Validate fills in the meta,
	// dataset, folder and predictions, the caller the images, engine,
	// limits, workers and progress.
	Evaluate func(ctx context.Context, cfg evaluate.Config) (*evaluate.RunReport, error)
}

// RerunReport is what a re-run did.
type RerunReport struct {
	Dir       string   // the new run's folder
	Seed      uint64   // the seed the sample was drawn with
	Instances []string // the instances evaluated again, in the dataset's order
	Of        int      // out of how many results
	Whole     bool     // every one, the row being ranked on a small dataset (WholeMax)
	Problems  []string
}

// RandomSeed is a seed nobody chose: 64 bits from the system's random
// source. Printed with the re-run, it lets anyone draw the same sample
// again (--seed).
func RandomSeed() (uint64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("drawing a seed: %w", err)
	}
	return binary.BigEndian.Uint64(b[:]), nil
}

// sampleOf is what a re-run of sub evaluates again among ids: the whole
// row when it is ranked on a dataset of at most WholeMax instances, else
// the seeded sample.
func (r *Rerun) sampleOf(sub *bench.Submission, ids []string) (picked []string, whole bool) {
	if !sub.Reference && r.WholeMax > 0 && len(sub.Dataset.Instances) <= r.WholeMax {
		return slices.Clone(ids), true
	}
	return Sample(ids, r.Sample, r.Seed), false
}

// Sample picks n of ids with the seed, keeping their order: the n whose
// SHA-256 with the seed is smallest. It depends on nothing but its
// arguments (not on a random generator's version), and a larger n picks
// a superset. n <= 0, or n >= len(ids), picks every one.
func Sample(ids []string, n int, seed uint64) []string {
	if n <= 0 || n >= len(ids) {
		return slices.Clone(ids)
	}
	rank := make(map[string][32]byte, len(ids))
	for _, id := range ids {
		rank[id] = sha256.Sum256([]byte(strconv.FormatUint(seed, 10) + "\x00" + id))
	}
	byRank := slices.Clone(ids)
	slices.SortFunc(byRank, func(a, b string) int {
		ra, rb := rank[a], rank[b]
		return slices.Compare(ra[:], rb[:])
	})
	picked := map[string]bool{}
	for _, id := range byRank[:n] {
		picked[id] = true
	}
	var out []string
	for _, id := range ids {
		if picked[id] {
			out = append(out, id)
		}
	}
	return out
}

// run evaluates the sample's predictions in a run of its own and compares.
func (r *Rerun) run(ctx context.Context, sub *bench.Submission, preds map[predKey]predictions.Prediction, sum string) (*RerunReport, error) {
	if r.Evaluate == nil {
		return nil, fmt.Errorf("re-running %s: no way to evaluate was given", sub.ID())
	}
	var ids []string
	for _, in := range sub.Dataset.SplitInstances(sub.Split) {
		if sub.ResultOf(in) != nil {
			ids = append(ids, in.InstanceID)
		}
	}
	rr := &RerunReport{Seed: r.Seed, Of: len(ids)}
	rr.Instances, rr.Whole = r.sampleOf(sub, ids)
	attempts := max(sub.Attempts, 1)
	models := map[string]bool{}
	for _, p := range preds {
		if p.Model != "" {
			models[p.Model] = true
		}
	}
	model := strings.Join(slices.Sorted(maps.Keys(models)), ", ")
	pf := sub.File(bench.PredictionsFile)
	runID := "validate-" + sub.Folder + "-" + sum[:12]
	rr.Dir = filepath.Join(r.RunsDir, runID)
	meta := evaluate.Meta{RunID: runID, Dataset: sub.Dataset.Key(), Split: sub.Split, Attempts: attempts,
		Predictions: pf.Path + " sha256:" + sum, Model: model, Instances: rr.Instances, Created: time.Now().UTC()}
	_, err := r.Evaluate(ctx, evaluate.Config{
		Meta: meta, Dataset: sub.Dataset, Dir: rr.Dir,
		Predictions: func(id string, a int) (evaluate.Prediction, bool) {
			p, ok := preds[predKey{id, a}]
			if !ok {
				return evaluate.Prediction{}, false
			}
			return evaluate.Prediction{Model: p.Model, Patch: []byte(p.Patch), TokensIn: p.TokensIn, TokensOut: p.TokensOut,
				Cost: p.Cost, Trajectory: p.Trajectory, Measured: p.Measured, Turns: p.Turns, FailureMode: p.FailureMode}, true
		},
	})
	if err != nil {
		return nil, fmt.Errorf("re-running %s: %w", sub.ID(), err)
	}
	fresh, err := ReadRunResults(rr.Dir)
	if err != nil {
		return nil, err
	}
	for _, id := range rr.Instances {
		res := sub.ResultFor(id)
		line, ok := fresh[id]
		if !ok {
			rr.Problems = append(rr.Problems, fmt.Sprintf("%s:%d: instance %s: the new evaluation gave no result (%s)",
				filepath.Join(sub.Dir, bench.ResultsFile), res.Line, id, rr.Dir))
			continue
		}
		var want bench.Result
		if err := json.Unmarshal(line, &want); err != nil {
			return nil, fmt.Errorf("%s: instance %s: %w", filepath.Join(rr.Dir, evaluate.ResultsFile), id, err)
		}
		compare(res, &want, false, func(field, format string, args ...any) {
			rr.Problems = append(rr.Problems, fmt.Sprintf("%s:%d: instance %s: field %q: %s (in a new evaluation, %s)",
				filepath.Join(sub.Dir, bench.ResultsFile), res.Line, id, field, fmt.Sprintf(format, args...), rr.Dir))
		})
	}
	return rr, nil
}
