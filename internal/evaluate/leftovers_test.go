package evaluate_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
)

// TestLeftoversOfConcurrentRuns: two runs on one engine, even with the same
// host name and process id (PID namespaces), never remove each other's
// live containers; a killed run's are removed once they expire.
func TestLeftoversOfConcurrentRuns(t *testing.T) {
	eng, img := envImage(t)
	ctx := context.Background()
	start := func(owner string, expires time.Time) *container.Container {
		box, err := eng.Start(ctx, container.Spec{Image: img, Name: "featbench-leftover", Labels: map[string]string{
			evaluate.LabelProject: "1", evaluate.LabelKind: "eval", evaluate.LabelRun: "t", evaluate.LabelOwner: owner,
			evaluate.LabelExpires: strconv.FormatInt(expires.Unix(), 10),
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { box.Remove() })
		return box
	}
	now := time.Now()
	live := start("a-live-run", now.Add(time.Hour))
	dead := start("a-killed-run", now.Add(-time.Minute))
	if err := evaluate.RemoveLeftovers(ctx, eng, now); err != nil {
		t.Fatal(err)
	}
	list, err := eng.Containers(ctx, map[string]string{evaluate.LabelProject: "1", evaluate.LabelRun: "t"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range list {
		seen[c.ID] = true
	}
	if !seen[live.ID] {
		t.Error("another run's live container was removed")
	}
	if seen[dead.ID] {
		t.Error("the expired container of a killed run was kept")
	}
}
