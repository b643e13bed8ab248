package evaluate

import (
	"fmt"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/container"
)

// ConfigLimits are the [eval] table's limits: evaluation's, and those of
// collection's containers, which share them.
func ConfigLimits(e config.Eval) (Limits, error) {
	testFile, test, inst := e.Durations()
	mem, err := config.ParseBytes(e.Memory)
	if err != nil {
		return Limits{}, fmt.Errorf("[eval] memory: %w", err)
	}
	return Limits{
		TestFile: testFile, Test: test, Instance: inst,
		Container: container.Limits{Memory: mem, NanoCPUs: int64(e.CPUs * 1e9), Pids: int64(e.Pids)},
	}, nil
}
