package evaluate_test

import (
	"slices"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
)

// TestAttemptsAndRunReport works the run report and the results of three
// attempts per instance by hand: pass@k, the mean over attempts, which
// attempt a result comes from, and SWE-bench's counts.
func TestAttemptsAndRunReport(t *testing.T) {
	ds := &bench.Dataset{}
	ins := []*bench.Instance{
		{InstanceID: "a", FailToPass: []string{"f"}, PassToPass: []string{"p"}},
		{InstanceID: "b", FailToPass: []string{"f"}},
		{InstanceID: "c", FailToPass: []string{"f"}},
		{InstanceID: "d", FailToPass: []string{"f"}},
	}
	lookup := map[string]*bench.Instance{}
	for _, in := range ins {
		lookup[in.InstanceID] = in
	}
	meta := evaluate.Meta{Attempts: 3, Instances: []string{"a", "b", "c", "d"}}
	pass := func(id string, attempt int, resolved bool) *evaluate.Report {
		in := lookup[id]
		r := &evaluate.Report{InstanceID: id, Attempt: attempt, PatchApplied: true, Tests: map[string]evaluate.TestResult{},
			Resolved: resolved, FV: resolved, RT: true, Seconds: 2, PytestSeconds: 0.5}
		for _, f := range in.FailToPass {
			r.Tests[f] = evaluate.TestResult{Kind: "F2P", Passed: resolved, Status: map[bool]string{true: "passed", false: "failed"}[resolved], ExcType: map[bool]string{false: "AssertionError"}[resolved]}
		}
		for _, p := range in.PassToPass {
			r.Tests[p] = evaluate.TestResult{Kind: "P2P", Passed: true, Status: "passed"}
		}
		if resolved {
			r.PassedRate = 1
		} else {
			r.FailureModes = []string{"AssertionError"}
		}
		return r
	}
	reports := map[string][]*evaluate.Report{
		// Resolved at the second attempt.
		"a": {pass("a", 1, false), pass("a", 2, true), pass("a", 3, false)},
		// Resolved at the first and third.
		"b": {pass("b", 1, true), pass("b", 2, false), pass("b", 3, true)},
		// Never.
		"c": {pass("c", 1, false), pass("c", 2, false), pass("c", 3, false)},
		// "d": no prediction.
	}
	rr := evaluate.Summarise(ds, meta, reports)
	if rr.TotalInstances != 4 || rr.SubmittedInstances != 3 || rr.CompletedInstances != 3 || rr.ResolvedInstances != 2 ||
		rr.UnresolvedInstances != 1 || len(rr.IncompleteIDs) != 1 || rr.IncompleteIDs[0] != "d" {
		t.Errorf("counts: %+v", rr)
	}
	for k, want := range map[string]float64{"1": 1.0 / 4, "2": 2.0 / 4, "3": 2.0 / 4} {
		if got := rr.PassAtK[k]; got != want {
			t.Errorf("pass@%s = %v, want %v", k, got, want)
		}
	}
	if want := 3.0 / 12; rr.MeanResolved != want {
		t.Errorf("mean over attempts = %v, want %v", rr.MeanResolved, want)
	}
	if rr.FailureModes["AssertionError"] != 6 {
		t.Errorf("failure modes = %v, want 6 failing tests of AssertionError", rr.FailureModes)
	}
	if rr.Overhead != 9*1.5 {
		t.Errorf("overhead = %v, want 13.5 s (9 attempts, 1.5 s each beyond pytest)", rr.Overhead)
	}
	// A result comes from the first resolved attempt, with the counts.
	dsWith := datasetOf(t, ins)
	res, ok := evaluate.Result(dsWith, meta, reports["a"])
	if !ok || !res.Resolved || res.Attempts != 3 || res.AttemptsResolved != 1 || len(res.F2PPassed) != 1 {
		t.Errorf("result of a: %+v", res)
	}
	// Each attempt's fail-to-pass count, for % passed as a mean over
	// attempts: only the second passed its one test.
	if !slices.Equal(res.AttemptsPassed, []int{0, 1, 0}) {
		t.Errorf("attempts_passed of a = %v, want [0 1 0]", res.AttemptsPassed)
	}
	res, ok = evaluate.Result(dsWith, meta, reports["c"])
	if !ok || res.Resolved || res.AttemptsResolved != 0 || len(res.F2PFailed) != 1 || res.FailureModes[0] != "AssertionError" {
		t.Errorf("result of c: %+v", res)
	}
	// An attempt missing: no result.
	if _, ok := evaluate.Result(dsWith, meta, reports["a"][:2]); ok {
		t.Error("a result from two of three attempts")
	}
}

// datasetOf is a loaded dataset of the instances, so that Instance works.
func datasetOf(t *testing.T, ins []*bench.Instance) *bench.Dataset {
	t.Helper()
	var raw []map[string]any
	for _, in := range ins {
		p2p := in.PassToPass
		if p2p == nil {
			p2p = []string{}
		}
		raw = append(raw, map[string]any{"instance_id": in.InstanceID, "repo": "featbench/textkit", "level": 1,
			"problem_statement": "x", "FAIL_TO_PASS": in.FailToPass, "PASS_TO_PASS": p2p})
	}
	return layoutDataset(t, "", raw)
}

// TestRunReportFileRate: File% is a mean over the instances with gold files
// to find, as the site computes it (metrics.Score.FileRate): a level 2
// instance, built from scratch, gives no figure and is left out, where
// counting it as 0 halved the gold patch's File% on the example's lite
// split.
func TestRunReportFileRate(t *testing.T) {
	raw := []map[string]any{
		{"instance_id": "one", "repo": "featbench/textkit", "level": 1, "problem_statement": "x", "FAIL_TO_PASS": []string{"f"}, "PASS_TO_PASS": []string{}},
		{"instance_id": "two", "repo": "featbench/textkit", "level": 1, "problem_statement": "x", "FAIL_TO_PASS": []string{"f"}, "PASS_TO_PASS": []string{}},
		{"instance_id": "three", "repo": "featbench/textkit", "level": 2, "problem_statement": "x", "FAIL_TO_PASS": []string{"f"}, "PASS_TO_PASS": []string{}},
	}
	ds := layoutDataset(t, "", raw)
	one, half := 1.0, 0.5
	rep := func(id string, recall *float64) []*evaluate.Report {
		return []*evaluate.Report{{InstanceID: id, Attempt: 1, PatchApplied: true, FileRecall: recall, Tests: map[string]evaluate.TestResult{}}}
	}
	meta := evaluate.Meta{Attempts: 1, Instances: []string{"one", "two", "three"}}
	rr := evaluate.Summarise(ds, meta, map[string][]*evaluate.Report{"one": rep("one", &one), "two": rep("two", &half), "three": rep("three", nil)})
	if want := 0.75; rr.FileRate != want {
		t.Errorf("file_rate = %v, want %v (level 1 only)", rr.FileRate, want)
	}
	// A level 1 instance without a prediction still counts, as 0.
	rr = evaluate.Summarise(ds, meta, map[string][]*evaluate.Report{"one": rep("one", &one), "three": rep("three", nil)})
	if want := 0.5; rr.FileRate != want {
		t.Errorf("file_rate with a missing level 1 prediction = %v, want %v", rr.FileRate, want)
	}
}
