package bench_test

import (
	"testing"

	"github.com/featbench/featbench/bench"
)

// TestMeasuredTokens: a submission's figures are measured when every
// result with tokens or cost says so.
func TestMeasuredTokens(t *testing.T) {
	n := int64(5)
	for _, c := range []struct {
		results []bench.Result
		want    bool
	}{
		{nil, false},
		{[]bench.Result{{InstanceID: "a"}}, false},
		{[]bench.Result{{InstanceID: "a", TokensIn: &n, TokensOut: &n, Measured: true}, {InstanceID: "b"}}, true},
		{[]bench.Result{{InstanceID: "a", TokensIn: &n, TokensOut: &n, Measured: true}, {InstanceID: "b", TokensIn: &n}}, false},
	} {
		s := &bench.Submission{Results: c.results}
		if got := s.MeasuredTokens(); got != c.want {
			t.Errorf("%+v: measured %v, want %v", c.results, got, c.want)
		}
	}
}
