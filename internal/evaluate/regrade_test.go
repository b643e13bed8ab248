package evaluate_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
)

// TestRegradeTakesFlowFromDataset regrades the shipped gold logs of the
// example dataset, then the same reports claiming another flow or level:
// a level 1 report that claims agent_code would skip the pass-to-pass
// tests, and must be refused rather than believed.
func TestRegradeTakesFlowFromDataset(t *testing.T) {
	data, err := bench.LoadDatasets(context.Background(), filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Dataset("example/v2")
	logs, err := evaluate.UnpackLogs(context.Background(), filepath.Join(root, "data", "submissions", "example", "v2", "full", "20261123_gold", bench.LogsFile), evaluate.DefaultLogLimits())
	if err != nil {
		t.Fatal(err)
	}
	levels := map[int]bool{}
	for id, byAttempt := range logs.Attempts {
		in := ds.Instance(id)
		al := byAttempt[1]
		if in == nil || al == nil || al.Report == nil {
			t.Fatalf("%s: not an instance with a report of attempt 1", id)
		}
		// The shipped logs regrade (whether as resolved is the grading's
		// business, not this test's).
		if _, err := evaluate.Regrade(ds, in, *al.Report, al.Files); err != nil {
			t.Errorf("%s: the gold logs do not regrade: %v", id, err)
		}
		levels[in.Level] = true
		lie := *al.Report
		other := map[string]string{"repo": "agent_code", "agent_code": "repo"}[evaluate.FlowOf(ds, in)]
		lie.Flow = other
		if _, err := evaluate.Regrade(ds, in, lie, al.Files); err == nil || !strings.Contains(err.Error(), `claims the "`+other+`" flow`) {
			t.Errorf("%s: a report claiming the %s flow: %v; want it refused", id, other, err)
		}
		lie = *al.Report
		lie.Level = 3 - in.Level
		if _, err := evaluate.Regrade(ds, in, lie, al.Files); err == nil || !strings.Contains(err.Error(), "claims level") {
			t.Errorf("%s: a report claiming level %d: %v; want it refused", id, lie.Level, err)
		}
	}
	if !levels[1] || !levels[2] || ds.Level2OrDefault() != bench.Level2AgentCode {
		t.Fatalf("the example's gold logs cover levels %v (level2 %q); the test needs both levels and agent_code", levels, ds.Level2OrDefault())
	}
}
