package evaluate

import (
	"context"
	"io"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/executor"
)

// Prepared starts t's container and takes it through the flow up to the
// moment pytest would start (set-up, the prediction applied, the tests in
// place), for tests that look inside. The caller removes the container.
func Prepared(ctx context.Context, eng executor.Starter, t Task, lim Limits) (executor.Box, error) {
	box, err := eng.Start(ctx, container.Spec{Image: t.Image, Name: "featbench-test", Labels: t.Labels, WorkDir: repoDir, Limits: containerLimits(lim)})
	if err != nil {
		return nil, err
	}
	f := newFlow(t, lim, io.Discard)
	f.box = box
	if err := f.copyIn(ctx); err != nil {
		box.Remove()
		return nil, err
	}
	if err := f.setUp(ctx); err != nil {
		box.Remove()
		return nil, err
	}
	f.apply(ctx)
	if err := f.addTests(ctx); err != nil {
		box.Remove()
		return nil, err
	}
	return box, nil
}
