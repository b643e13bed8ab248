package evaluate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/atomicfile"
)

// RunReport is a run's report.json: SWE-bench's fields (schema 2 of its
// harness) over the run's instances, then the figures the site shows.
type RunReport struct {
	TotalInstances      int `json:"total_instances"`      // instances of the run
	SubmittedInstances  int `json:"submitted_instances"`  // with a prediction
	CompletedInstances  int `json:"completed_instances"`  // evaluated: every attempt has a report
	ResolvedInstances   int `json:"resolved_instances"`   // resolved (in any attempt)
	UnresolvedInstances int `json:"unresolved_instances"` // evaluated, not resolved
	EmptyPatchInstances int `json:"empty_patch_instances"`
	ErrorInstances      int `json:"error_instances"` // the harness could not evaluate them

	CompletedIDs  []string `json:"completed_ids"`
	IncompleteIDs []string `json:"incomplete_ids"` // without a prediction
	EmptyPatchIDs []string `json:"empty_patch_ids"`
	SubmittedIDs  []string `json:"submitted_ids"`
	ResolvedIDs   []string `json:"resolved_ids"`
	UnresolvedIDs []string `json:"unresolved_ids"`
	ErrorIDs      []string `json:"error_ids"`
	NotAppliedIDs []string `json:"not_applied_ids"`
	TimeoutIDs    []string `json:"timeout_ids"`

	// The figures, as fractions of TotalInstances (a missing prediction
	// counts as failing each), computed as the site computes them.
	ResolvedRate float64 `json:"resolved_rate"`
	PassedRate   float64 `json:"passed_rate"`
	AppliedRate  float64 `json:"applied_rate"`
	FVRate       float64 `json:"fv_rate"`
	RTRate       float64 `json:"rt_rate"`
	FileRate     float64 `json:"file_rate"`
	Attempts     int     `json:"attempts"`
	// PassAtK is resolved in at least one of the first k attempts, by k;
	// MeanResolved the share of all attempts that resolved.
	PassAtK      map[string]float64 `json:"pass_at_k"`
	MeanResolved float64            `json:"mean_resolved"`
	FailureModes map[string]int     `json:"failure_modes"` // failing tests by exception type
	Seconds      float64            `json:"seconds"`       // summed over the attempts
	Overhead     float64            `json:"overhead_seconds"`

	SchemaVersion int `json:"schema_version"`
}

// Finish reads every attempt report of a run folder and writes the run's
// results.jsonl, report.json and manifest.json (the hashes of what every
// attempt wrote, which `eval validate` checks a submission against), and
// the same grades in FeatureBench's formats (FeatureBenchDir); it is
// what `eval run` does last, and it can be run again on a folder at any
// time.
func Finish(dir string, ds *bench.Dataset, meta Meta) (*RunReport, error) {
	reports := map[string][]*Report{}
	for _, id := range meta.Instances {
		for a := 1; a <= meta.Attempts; a++ {
			rep, err := ReadReport(attemptDir(dir, id, a))
			if err != nil {
				continue
			}
			reports[id] = append(reports[id], rep)
		}
	}
	rr := Summarise(ds, meta, reports)
	var lines bytes.Buffer
	for _, id := range meta.Instances {
		res, ok := Result(ds, meta, reports[id])
		if !ok {
			continue
		}
		raw, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("encoding the result of %s: %w", id, err)
		}
		lines.Write(raw)
		lines.WriteByte('\n')
	}
	if err := atomicfile.Write(filepath.Join(dir, ResultsFile), lines.Bytes()); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteJSON(filepath.Join(dir, RunReportFile), rr); err != nil {
		return nil, err
	}
	if err := WriteManifest(dir, meta); err != nil {
		return nil, err
	}
	if err := writeFeatureBench(dir, ds, meta); err != nil {
		return nil, fmt.Errorf("writing the run's grades in FeatureBench's format: %w", err)
	}
	return rr, nil
}

// complete reports whether an instance's attempts were all evaluated.
func complete(meta Meta, reps []*Report) bool {
	if len(reps) < meta.Attempts {
		return false
	}
	for _, r := range reps {
		if r.Error != "" {
			return false
		}
	}
	return true
}

// best is the attempt an instance's result is taken from: the first that
// resolved it, else the first.
func best(reps []*Report) *Report {
	for _, r := range reps {
		if r.Resolved {
			return r
		}
	}
	return reps[0]
}

// Result is an instance's line of results.jsonl, from its attempts' reports;
// false when the instance has no complete evaluation.
func Result(ds *bench.Dataset, meta Meta, reps []*Report) (bench.Result, bool) {
	if len(reps) == 0 || !complete(meta, reps) {
		return bench.Result{}, false
	}
	r := best(reps)
	in := ds.Instance(r.InstanceID)
	res := bench.Result{
		InstanceID: r.InstanceID, Resolved: r.Resolved, PatchApplied: r.PatchApplied,
		F2PPassed: []string{}, F2PFailed: []string{}, P2PPassed: []string{}, P2PFailed: []string{},
		FilesChanged: r.FilesChanged, TokensIn: r.TokensIn, TokensOut: r.TokensOut, Cost: r.Cost,
		FailureModes: r.FailureModes, ApplyMethod: r.ApplyMethod, FileRecall: r.FileRecall,
		Flags: r.Flags, Measured: r.Measured, Audit: r.AuditFlags, Turns: r.Turns,
	}
	d := math.Round(r.Seconds*100) / 100
	res.Duration = &d
	if r.PatchApplied {
		for _, id := range in.FailToPass {
			if t, ok := r.Tests[id]; ok && t.Passed {
				res.F2PPassed = append(res.F2PPassed, id)
			} else {
				res.F2PFailed = append(res.F2PFailed, id)
			}
		}
		if r.Flow != "agent_code" {
			for _, id := range in.PassToPass {
				if t, ok := r.Tests[id]; ok && t.Passed {
					res.P2PPassed = append(res.P2PPassed, id)
				} else {
					res.P2PFailed = append(res.P2PFailed, id)
				}
			}
		} else {
			// From scratch, the pass-to-pass tests are not run (as in
			// FeatureBench): they are the repository's, not the agent's.
			res.P2PPassed = append(res.P2PPassed, in.PassToPass...)
		}
	}
	if meta.Attempts > 1 {
		res.Attempts = len(reps)
		res.AttemptsPassed = make([]int, len(reps))
		for i, a := range reps {
			if a.Resolved {
				res.AttemptsResolved++
			}
			if a.PatchApplied {
				for _, id := range in.FailToPass {
					if t, ok := a.Tests[id]; ok && t.Passed {
						res.AttemptsPassed[i]++
					}
				}
			}
		}
	}
	return res, true
}

// Summarise computes a run's report from its attempts' reports.
func Summarise(ds *bench.Dataset, meta Meta, reports map[string][]*Report) *RunReport {
	rr := &RunReport{SchemaVersion: 2, Attempts: meta.Attempts, PassAtK: map[string]float64{}, FailureModes: map[string]int{}}
	n := len(meta.Instances)
	rr.TotalInstances = n
	var passed, fileSum float64
	var applied, fv, rt, attemptsResolved, fileN int
	passAt := make([]int, meta.Attempts+1)
	for _, id := range meta.Instances {
		reps := reports[id]
		// File% is a mean over the instances that have gold files to
		// find, as the site computes it: level 2 builds from scratch and
		// counts only where its result gives the figure (below).
		in := ds.Instance(id)
		level2 := in != nil && in.Level == 2
		if !level2 {
			fileN++
		}
		if len(reps) == 0 {
			rr.IncompleteIDs = append(rr.IncompleteIDs, id)
			continue
		}
		rr.SubmittedIDs = append(rr.SubmittedIDs, id)
		for _, r := range reps {
			rr.Seconds += r.Seconds
			rr.Overhead += r.Seconds - r.PytestSeconds
		}
		if !complete(meta, reps) {
			rr.ErrorIDs = append(rr.ErrorIDs, id)
			continue
		}
		rr.CompletedIDs = append(rr.CompletedIDs, id)
		b := best(reps)
		if b.PatchEmpty {
			rr.EmptyPatchIDs = append(rr.EmptyPatchIDs, id)
		}
		if !b.PatchApplied {
			rr.NotAppliedIDs = append(rr.NotAppliedIDs, id)
		}
		if b.TimedOut {
			rr.TimeoutIDs = append(rr.TimeoutIDs, id)
		}
		if b.Resolved {
			rr.ResolvedIDs = append(rr.ResolvedIDs, id)
		} else {
			rr.UnresolvedIDs = append(rr.UnresolvedIDs, id)
		}
		passed += b.PassedRate
		if b.PatchApplied {
			applied++
		}
		if b.PatchApplied && b.FV {
			fv++
		}
		if b.PatchApplied && b.RT {
			rt++
		}
		if b.FileRecall != nil {
			fileSum += *b.FileRecall
			if level2 {
				fileN++
			}
		}
		first := 0
		for i, r := range reps {
			if r.Resolved {
				attemptsResolved++
				if first == 0 {
					first = i + 1
				}
			}
		}
		if first > 0 {
			passAt[first]++
		}
		for _, r := range reps {
			for _, t := range r.Tests {
				if !t.Passed && r.PatchApplied {
					rr.FailureModes[orUnknown(t.ExcType)]++
				}
			}
		}
	}
	for _, l := range [][]string{rr.CompletedIDs, rr.IncompleteIDs, rr.EmptyPatchIDs, rr.SubmittedIDs, rr.ResolvedIDs,
		rr.UnresolvedIDs, rr.ErrorIDs, rr.NotAppliedIDs, rr.TimeoutIDs} {
		sort.Strings(l)
	}
	nz := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	rr.CompletedIDs, rr.IncompleteIDs, rr.EmptyPatchIDs = nz(rr.CompletedIDs), nz(rr.IncompleteIDs), nz(rr.EmptyPatchIDs)
	rr.SubmittedIDs, rr.ResolvedIDs, rr.UnresolvedIDs = nz(rr.SubmittedIDs), nz(rr.ResolvedIDs), nz(rr.UnresolvedIDs)
	rr.ErrorIDs, rr.NotAppliedIDs, rr.TimeoutIDs = nz(rr.ErrorIDs), nz(rr.NotAppliedIDs), nz(rr.TimeoutIDs)
	rr.SubmittedInstances = len(rr.SubmittedIDs)
	rr.CompletedInstances = len(rr.CompletedIDs)
	rr.ResolvedInstances = len(rr.ResolvedIDs)
	rr.UnresolvedInstances = len(rr.UnresolvedIDs)
	rr.EmptyPatchInstances = len(rr.EmptyPatchIDs)
	rr.ErrorInstances = len(rr.ErrorIDs)
	if n > 0 {
		f := float64(n)
		rr.ResolvedRate = float64(rr.ResolvedInstances) / f
		rr.PassedRate = passed / f
		rr.AppliedRate = float64(applied) / f
		rr.FVRate = float64(fv) / f
		rr.RTRate = float64(rt) / f
		if fileN > 0 {
			rr.FileRate = fileSum / float64(fileN)
		}
		cum := 0
		for k := 1; k <= meta.Attempts; k++ {
			cum += passAt[k]
			rr.PassAtK[fmt.Sprint(k)] = float64(cum) / f
		}
		if meta.Attempts > 0 {
			rr.MeanResolved = float64(attemptsResolved) / (f * float64(meta.Attempts))
		}
	}
	return rr
}
