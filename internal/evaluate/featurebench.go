package evaluate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/atomicfile"
	"github.com/featbench/featbench/internal/pytest"
)

// FeatureBenchDir is where a run folder holds its grades in FeatureBench's
// formats (its harness's runs/<time>/ layout), so that the two graders can
// be compared instance by instance (CompareFeatureBench, `eval compare`):
//
//	_featurebench/report.json                                 FBSummary by attempt ("attempt_1", ...)
//	_featurebench/eval_outputs/<instance>/attempt-<n>/report.json  {instance: FBReport}
//
// Both are made from this run's test outputs, graded with FeatureBench's
// rules (FBReportOf), not this harness's. The leading underscore keeps the
// folder apart from the instances' (an instance id starts with a letter or
// a digit).
const FeatureBenchDir = "_featurebench"

// FBTests are the tests of one kind as FeatureBench lists them: the node
// ids pytest reported, passed (or xfailed) and failed (or errored).
type FBTests struct {
	Success []string `json:"success"`
	Failure []string `json:"failure"`
}

// FBReport is one instance and attempt graded with FeatureBench's rules,
// in its harness's report.json fields.
type FBReport struct {
	NAttempt     int     `json:"n_attempt"`
	PatchIsNone  bool    `json:"patch_is_None"`
	PatchExists  bool    `json:"patch_exists"`
	PatchApplied bool    `json:"patch_successfully_applied"`
	Resolved     bool    `json:"resolved"`
	PassRate     float64 `json:"pass_rate"`
	Error        string  `json:"error,omitempty"`
	TestsStatus  struct {
		FailToPass FBTests `json:"FAIL_TO_PASS"`
		PassToPass FBTests `json:"PASS_TO_PASS"`
	} `json:"tests_status"`
}

// FBSummary is one attempt's summary in FeatureBench's report.json. Its
// id lists name instances (FeatureBench's name the agents' logs).
type FBSummary struct {
	NAttempt                      int      `json:"n_attempt"`
	TotalInstances                int      `json:"total_instances"`
	SubmittedInstances            int      `json:"submitted_instances"`
	CompletedInstances            int      `json:"completed_instances"`
	ResolvedInstances             int      `json:"resolved_instances"`
	UnresolvedInstances           int      `json:"unresolved_instances"`
	NotAppliedPatchEmptyInstances int      `json:"not_applied_patch_empty_instances"`
	NotAppliedPatchOtherInstances int      `json:"not_applied_patch_other_instances"`
	ErrorInstances                int      `json:"error_instances"`
	ResolvedRate                  float64  `json:"resolved_rate"`
	PassRate                      float64  `json:"pass_rate"`
	SubmittedIDs                  []string `json:"submitted_ids"`
	CompletedIDs                  []string `json:"completed_ids"`
	IncompleteIDs                 []string `json:"incomplete_ids"`
	ResolvedIDs                   []string `json:"resolved_ids"`
	UnresolvedIDs                 []string `json:"unresolved_ids"`
	NotAppliedPatchEmptyIDs       []string `json:"not_applied_patch_empty_ids"`
	NotAppliedPatchOtherIDs       []string `json:"not_applied_patch_other_ids"`
	ErrorIDs                      []string `json:"error_ids"`
}

// fbOK are the outcomes of a test file's tests with which pytest exits 0,
// which is what FeatureBench grades a file by.
var fbOK = map[string]bool{
	string(pytest.StatusPassed): true, string(pytest.StatusSkipped): true,
	string(pytest.StatusXFailed): true, string(pytest.StatusXPassed): true,
}

// FBReportOf grades one attempt with FeatureBench's rules (its harness's
// grading.py and report.py), from the attempt's report and raw test
// outputs (files, by the names the run saved them under):
//
//   - an empty prediction is not applied, and nothing runs;
//   - resolved: each fail-to-pass test file (and at level 1 each
//     pass-to-pass one) ran with pytest exiting 0, which is: tests
//     reported, none failed or errored, none cut short;
//   - tests_status lists the node ids pytest reported in those files,
//     passed or xfailed as success, failed or errored as failure (skipped
//     in neither); pass_rate is the fail-to-pass successes' share, to 4
//     decimals.
//
// A harness failure (rep.Error) is FeatureBench's error report.
func FBReportOf(ds *bench.Dataset, in *bench.Instance, rep *Report, patch []byte, files map[string][]byte) (FBReport, error) {
	fb := FBReport{NAttempt: rep.Attempt, PatchExists: len(bytes.TrimSpace(patch)) > 0}
	fb.TestsStatus.FailToPass = FBTests{Success: []string{}, Failure: []string{}}
	fb.TestsStatus.PassToPass = FBTests{Success: []string{}, Failure: []string{}}
	if rep.Error != "" {
		fb.Error = rep.Error
		return fb, nil
	}
	if !fb.PatchExists || !rep.PatchApplied {
		return fb, nil
	}
	fb.PatchApplied = true
	agent := rep.Flow == "agent_code"
	f2p, p2p := map[string]bool{}, map[string]bool{}
	for _, id := range in.FailToPass {
		f2p[testFileOf(id)] = true
	}
	if !agent {
		for _, id := range in.PassToPass {
			p2p[testFileOf(id)] = true
		}
	}
	byFile, _, _ := expected(in, agent)
	add := func(file, id string, st pytest.Status) {
		var t *FBTests
		switch {
		case f2p[file]:
			t = &fb.TestsStatus.FailToPass
		case p2p[file]:
			t = &fb.TestsStatus.PassToPass
		default:
			return
		}
		switch st {
		case pytest.StatusPassed, pytest.StatusXFailed:
			t.Success = append(t.Success, id)
		case pytest.StatusFailed, pytest.StatusError, pytest.StatusTimeout, pytest.StatusCollectionError:
			t.Failure = append(t.Failure, id)
		}
	}
	for _, run := range rep.Runs {
		var ids []string
		for _, file := range run.Files {
			ids = append(ids, byFile[file]...)
		}
		report, err := pytest.Parse(pytest.Input{
			JUnitXML: files[run.Log+".xml"], JSONL: files[run.Log+".jsonl"],
			Stdout: files[run.Log+".stdout"], Stderr: files[run.Log+".stderr"],
			ExitCode: run.ExitCode, TimedOut: run.TimedOut, Expected: ids,
		})
		if err != nil {
			return fb, fmt.Errorf("reading the outcomes of %v: %w", run.Files, err)
		}
		for _, o := range report.Tests {
			add(testFileOf(o.ID), o.ID, o.Status)
		}
		for _, c := range report.Collectors {
			add(testFileOf(c.ID), c.ID, c.Status)
		}
	}
	f := fb.TestsStatus.FailToPass
	if n := len(f.Success) + len(f.Failure); n > 0 {
		fb.PassRate = math.Round(float64(len(f.Success))/float64(n)*1e4) / 1e4
	}
	// Resolved: every graded file as pytest's exit status would have it.
	fb.Resolved = len(rep.Tampering) == 0 && !rep.TimedOut
	for _, ids := range [][]string{in.FailToPass, map[bool][]string{false: in.PassToPass}[agent]} {
		for _, id := range ids {
			if !fbOK[rep.Tests[id].Status] {
				fb.Resolved = false
			}
		}
	}
	return fb, nil
}

// writeFeatureBench writes a run folder's FeatureBench-format grades
// (FeatureBenchDir) from its attempts' reports and test outputs.
func writeFeatureBench(dir string, ds *bench.Dataset, meta Meta) error {
	summaries := map[string]*FBSummary{}
	var passSum = map[int]float64{}
	for a := 1; a <= meta.Attempts; a++ {
		summaries["attempt_"+strconv.Itoa(a)] = &FBSummary{NAttempt: a, SubmittedIDs: []string{}, CompletedIDs: []string{}, IncompleteIDs: []string{},
			ResolvedIDs: []string{}, UnresolvedIDs: []string{}, NotAppliedPatchEmptyIDs: []string{}, NotAppliedPatchOtherIDs: []string{}, ErrorIDs: []string{}}
	}
	for _, id := range meta.Instances {
		in := ds.Instance(id)
		if in == nil {
			continue
		}
		for a := 1; a <= meta.Attempts; a++ {
			s := summaries["attempt_"+strconv.Itoa(a)]
			adir := attemptDir(dir, id, a)
			rep, err := ReadReport(adir)
			if err != nil {
				continue // not evaluated (yet): FeatureBench lists only what it ran
			}
			patch, _ := os.ReadFile(filepath.Join(adir, PredFile))
			files := map[string][]byte{}
			entries, _ := os.ReadDir(filepath.Join(adir, TestsDir))
			for _, e := range entries {
				if b, err := os.ReadFile(filepath.Join(adir, TestsDir, e.Name())); err == nil {
					files[e.Name()] = b
				}
			}
			fb, err := FBReportOf(ds, in, rep, patch, files)
			if err != nil {
				return fmt.Errorf("%s attempt %d in FeatureBench's format: %w", id, a, err)
			}
			out := filepath.Join(dir, FeatureBenchDir, "eval_outputs", id, "attempt-"+strconv.Itoa(a), ReportFile)
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			if err := atomicfile.WriteJSON(out, map[string]FBReport{id: fb}); err != nil {
				return err
			}
			s.TotalInstances++
			s.SubmittedIDs = append(s.SubmittedIDs, id)
			s.CompletedIDs = append(s.CompletedIDs, id)
			passSum[a] += fb.PassRate
			switch {
			case fb.Error != "":
				s.ErrorIDs = append(s.ErrorIDs, id)
			case fb.Resolved:
				s.ResolvedIDs = append(s.ResolvedIDs, id)
			default:
				s.UnresolvedIDs = append(s.UnresolvedIDs, id)
			}
			if !fb.PatchApplied {
				if fb.PatchExists {
					s.NotAppliedPatchOtherIDs = append(s.NotAppliedPatchOtherIDs, id)
				} else {
					s.NotAppliedPatchEmptyIDs = append(s.NotAppliedPatchEmptyIDs, id)
				}
			}
		}
	}
	for a := 1; a <= meta.Attempts; a++ {
		s := summaries["attempt_"+strconv.Itoa(a)]
		s.SubmittedInstances, s.CompletedInstances = len(s.SubmittedIDs), len(s.CompletedIDs)
		s.ResolvedInstances, s.ErrorInstances = len(s.ResolvedIDs), len(s.ErrorIDs)
		// FeatureBench counts an errored instance as completed and not
		// resolved: unresolved is completed minus resolved.
		s.UnresolvedInstances = s.CompletedInstances - s.ResolvedInstances
		s.NotAppliedPatchEmptyInstances, s.NotAppliedPatchOtherInstances = len(s.NotAppliedPatchEmptyIDs), len(s.NotAppliedPatchOtherIDs)
		if s.TotalInstances > 0 {
			s.ResolvedRate = math.Round(float64(s.ResolvedInstances)/float64(s.TotalInstances)*1e4) / 1e4
			s.PassRate = math.Round(passSum[a]/float64(s.TotalInstances)*1e4) / 1e4
		}
	}
	raw, err := json.MarshalIndent(summaries, "", "    ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, FeatureBenchDir), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, FeatureBenchDir, RunReportFile), append(raw, '\n'))
}

// Comparison is one instance and attempt as this harness and
// FeatureBench's grade it.
type Comparison struct {
	InstanceID string
	Attempt    int
	Ours       *Report   // nil when this run has no report of it
	Theirs     *FBReport // nil when the FeatureBench folder has none
}

// Agree says whether both graded it, with the same verdict.
func (c Comparison) Agree() bool {
	return c.Ours != nil && c.Theirs != nil && c.Ours.Resolved == c.Theirs.Resolved
}

// CompareFeatureBench pairs the attempts of the run folder dir with the
// reports of a FeatureBench harness's output folder fbDir (its
// runs/<time>/, holding eval_outputs/<instance>/attempt-<n>/report.json;
// or this run's own FeatureBenchDir), instance by instance, in the order
// of the run's instances; attempts only FeatureBench graded follow.
func CompareFeatureBench(dir, fbDir string, meta Meta) ([]Comparison, error) {
	theirs := map[string]*FBReport{}
	var extra []string
	outs := filepath.Join(fbDir, "eval_outputs")
	entries, err := os.ReadDir(outs)
	if err != nil {
		return nil, fmt.Errorf("FeatureBench's output folder: %w", err)
	}
	for _, e := range entries {
		attempts, _ := filepath.Glob(filepath.Join(outs, e.Name(), "attempt-*"))
		for _, a := range attempts {
			n, err := strconv.Atoi(filepath.Base(a)[len("attempt-"):])
			if err != nil {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(a, ReportFile))
			if err != nil {
				continue // not graded
			}
			var m map[string]FBReport
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("%s: not FeatureBench's report: %w", filepath.Join(a, ReportFile), err)
			}
			r, ok := m[e.Name()]
			if !ok {
				return nil, fmt.Errorf("%s: no report of %s in it", filepath.Join(a, ReportFile), e.Name())
			}
			k := e.Name() + "#" + strconv.Itoa(n)
			theirs[k] = &r
			extra = append(extra, k)
		}
	}
	var out []Comparison
	seen := map[string]bool{}
	for _, id := range meta.Instances {
		for a := 1; a <= meta.Attempts; a++ {
			k := id + "#" + strconv.Itoa(a)
			c := Comparison{InstanceID: id, Attempt: a, Theirs: theirs[k]}
			if rep, err := ReadReport(attemptDir(dir, id, a)); err == nil {
				c.Ours = rep
			}
			if c.Ours == nil && c.Theirs == nil {
				continue
			}
			seen[k] = true
			out = append(out, c)
		}
	}
	for _, k := range extra {
		if !seen[k] {
			id, a, _ := strings.Cut(k, "#")
			n, _ := strconv.Atoi(a)
			out = append(out, Comparison{InstanceID: id, Attempt: n, Theirs: theirs[k]})
		}
	}
	return out, nil
}
