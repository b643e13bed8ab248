package container_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images/imagestest"
)

// BenchmarkLifecycle measures one container's life as the harness lives
// it: start, a first (no-op) exec, and removal, each reported as a metric.
func BenchmarkLifecycle(b *testing.B) {
	eng, base := imagestest.Base(b)
	ctx := context.Background()
	var starts, firsts, removes []time.Duration
	for b.Loop() {
		t0 := time.Now()
		c, err := eng.Start(ctx, container.Spec{Image: base, Name: "featbench-bench", Labels: testLabel,
			Limits: container.Limits{Memory: 1 << 30, NanoCPUs: 1e9, Pids: 512}})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := c.Exec(ctx, []string{"true"}, container.ExecOptions{Timeout: time.Minute}); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := c.Remove(); err != nil {
			b.Fatal(err)
		}
		starts, firsts, removes = append(starts, t1.Sub(t0)), append(firsts, t2.Sub(t1)), append(removes, time.Since(t2))
	}
	b.ReportMetric(median(starts), "start-ms")
	b.ReportMetric(median(firsts), "first-exec-ms")
	b.ReportMetric(median(removes), "remove-ms")
}

// BenchmarkExec measures the overhead of one no-op exec in a running
// container, with and without the timeout wrapper.
func BenchmarkExec(b *testing.B) {
	eng, base := imagestest.Base(b)
	ctx := context.Background()
	c, err := eng.Start(ctx, container.Spec{Image: base, Name: "featbench-bench", Labels: testLabel})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Remove()
	for _, timeout := range []time.Duration{0, time.Minute} {
		name := "plain"
		if timeout > 0 {
			name = "timeout"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				res, err := c.Exec(ctx, []string{"true"}, container.ExecOptions{Timeout: timeout})
				if err != nil || res.ExitCode != 0 {
					b.Fatal(res, err)
				}
			}
		})
	}
}

func median(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}
