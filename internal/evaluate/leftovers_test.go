package evaluate_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
)

// TestInterruptedRunLeavesNothing: a run interrupted while a task's
// container is being staged ahead of its turn, another task runs and
// others are being removed in the background returns with none of its
// containers left.
func TestInterruptedRunLeavesNothing(t *testing.T) {
	ds := example(t)
	eng, img := envImage(t)
	ids := splitIDs(ds, "full")[:4]
	repos := map[string]string{}
	for _, id := range ids {
		repos[ds.Instance(id).Repo] = img
	}
	runID := "interrupted-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Interrupt as soon as the third task's container exists: it is
		// staged while the second runs.
		third := map[string]string{evaluate.LabelRun: runID, evaluate.LabelTask: ids[2] + "#1"}
		for ctx.Err() == nil {
			if list, err := eng.Containers(ctx, third); err == nil && len(list) > 0 {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	_, err := evaluate.Run(ctx, evaluate.Config{
		Meta:    evaluate.Meta{RunID: runID, Dataset: ds.Key(), Split: "full", Predictions: "gold", Attempts: 1, Instances: ids},
		Dataset: ds, Gold: true, Images: repos, Dir: t.TempDir(), Workers: 1, Limits: testLimits, Engine: executor.Local(eng),
		Predictions: func(id string, _ int) (evaluate.Prediction, bool) {
			return evaluate.Prediction{Model: "gold", Patch: []byte(ds.Instance(id).Patch)}, true
		},
	})
	if err == nil {
		t.Fatal("the interrupted run returned no error")
	}
	list, err := eng.Containers(context.Background(), map[string]string{evaluate.LabelProject: "1", evaluate.LabelRun: runID})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		t.Errorf("left behind: %s (%s)", c.Name, c.State)
	}
}
