package metrics_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/metrics"
)

const tol = 1e-4

// wilsonRef is the Wilson score interval in its other closed form,
// (2k + z² ± z·sqrt(z² + 4k(n-k)/n)) / (2(n + z²)), written independently
// of the package's centre/half-width form.
func wilsonRef(k, n int, z float64) (lo, hi float64) {
	kf, nf := float64(k), float64(n)
	root := z * math.Sqrt(z*z+4*kf*(nf-kf)/nf)
	den := 2 * (nf + z*z)
	return (2*kf + z*z - root) / den, (2*kf + z*z + root) / den
}

func TestWilson(t *testing.T) {
	if math.Abs(metrics.Z95-1.959963984540054) > 1e-12 {
		t.Fatalf("Z95 = %v", metrics.Z95)
	}
	// Published values (z = 1.96: Newcombe, Statistics in Medicine 17,
	// 1998, method 3) and values worked out by hand. 15/30 is
	// [0.3315, 0.6685]: centre 0.5, half-width
	// 1.96·sqrt(0.25/30 + 1.96²/3600) / (1 + 1.96²/30) = 0.16846.
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 30, 0, 0.1135},
		{15, 30, 0.3315, 0.6685},
		{30, 30, 0.8865, 1},
		{0, 0, 0, 0},
		{0, -1, 0, 0},
		{1, 1, 0.2065, 1},
		{0, 1, 0, 0.7935},
		{81, 263, 0.2553, 0.3662},  // Newcombe (1998), example: 81/263
		{15, 148, 0.0624, 0.1605},  // Newcombe (1998): 15/148
		{0, 10, 0, 0.2775},         // 0/10
		{1, 29, 0.0061, 0.1718},    // Newcombe (1998): 1/29
		{100, 200, 0.4314, 0.5686}, // half of 200
	} {
		lo, hi := metrics.Wilson(c.k, c.n, metrics.Z95)
		if math.Abs(lo-c.lo) > tol || math.Abs(hi-c.hi) > tol {
			t.Errorf("Wilson(%d, %d) = [%.5f, %.5f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
		if c.n > 0 {
			rlo, rhi := wilsonRef(c.k, c.n, metrics.Z95)
			if math.Abs(lo-rlo) > 1e-9 || math.Abs(hi-rhi) > 1e-9 {
				t.Errorf("Wilson(%d, %d) = [%v, %v], closed form [%v, %v]", c.k, c.n, lo, hi, rlo, rhi)
			}
		}
	}
	// Exact edges: never outside [0, 1], exactly 0 and 1 at k = 0 and k = n.
	for n := 1; n <= 250; n++ {
		for _, k := range []int{0, n / 3, n / 2, n} {
			lo, hi := metrics.Wilson(k, n, metrics.Z95)
			p := float64(k) / float64(n)
			if lo < 0 || hi > 1 || lo > p+1e-12 || hi < p-1e-12 {
				t.Fatalf("Wilson(%d, %d) = [%v, %v] does not bracket %v inside [0, 1]", k, n, lo, hi, p)
			}
			rlo, rhi := wilsonRef(k, n, metrics.Z95)
			if math.Abs(lo-math.Max(0, rlo)) > 1e-9 || math.Abs(hi-math.Min(1, rhi)) > 1e-9 {
				t.Fatalf("Wilson(%d, %d) = [%v, %v], closed form [%v, %v]", k, n, lo, hi, rlo, rhi)
			}
		}
		// k = 0 and k = n give 0 and 1 up to rounding (the code computes
		// centre - half, which can leave ~1e-17: see the report).
		if lo, _ := metrics.Wilson(0, n, metrics.Z95); lo > 1e-12 {
			t.Fatalf("Wilson(0, %d) lo = %v, want 0", n, lo)
		}
		if _, hi := metrics.Wilson(n, n, metrics.Z95); hi < 1-1e-12 {
			t.Fatalf("Wilson(%d, %d) hi = %v, want 1", n, n, hi)
		}
	}
	// z = 0 collapses to the point estimate.
	if lo, hi := metrics.Wilson(3, 12, 0); lo != 0.25 || hi != 0.25 {
		t.Errorf("Wilson(3, 12, z=0) = [%v, %v], want [0.25, 0.25]", lo, hi)
	}
}

func i64(v int64) *int64       { return &v }
func f64(v float64) *float64   { return &v }
func ids(s ...string) []string { return s }

func inst(id string, f2p ...string) *bench.Instance {
	return &bench.Instance{InstanceID: id, Level: 1, FailToPass: f2p, PassToPass: ids("p")}
}

func lookup(rs ...bench.Result) metrics.Lookup {
	m := map[string]*bench.Result{}
	for i := range rs {
		m[rs[i].InstanceID] = &rs[i]
	}
	return func(in *bench.Instance) *bench.Result { return m[in.InstanceID] }
}

func TestCompute(t *testing.T) {
	// Four instances: a (2 F2P tests), b (4), c (1), d (1).
	set := []*bench.Instance{
		inst("a", "a1", "a2"),
		inst("b", "b1", "b2", "b3", "b4"),
		inst("c", "c1"),
		inst("d", "d1"),
	}
	type means struct {
		in, out, cost     float64
		tokOK, costOK     bool
		tokens, costCount int
	}
	for _, c := range []struct {
		name      string
		instances []*bench.Instance
		results   metrics.Lookup
		predicted int
		resolved  int
		rate      float64
		passed    float64
		m         means
	}{
		{
			name:      "no predictions at all",
			instances: set, results: lookup(),
			predicted: 0, resolved: 0, rate: 0, passed: 0,
		},
		{
			name:      "empty set",
			instances: nil, results: lookup(bench.Result{InstanceID: "a", Resolved: true}),
		},
		{
			name:      "everything resolved",
			instances: set,
			results: lookup(
				bench.Result{InstanceID: "a", Resolved: true, PatchApplied: true, F2PPassed: ids("a1", "a2"), P2PPassed: ids("p")},
				bench.Result{InstanceID: "b", Resolved: true, PatchApplied: true, F2PPassed: ids("b1", "b2", "b3", "b4"), P2PPassed: ids("p")},
				bench.Result{InstanceID: "c", Resolved: true, PatchApplied: true, F2PPassed: ids("c1"), P2PPassed: ids("p")},
				bench.Result{InstanceID: "d", Resolved: true, PatchApplied: true, F2PPassed: ids("d1"), P2PPassed: ids("p")},
			),
			predicted: 4, resolved: 4, rate: 1, passed: 1,
		},
		{
			// a: resolved; b: half the F2P tests; c: not applied (counts as
			// none passed whatever it claims); d: no prediction.
			name:      "missing predictions count as unresolved and none passed",
			instances: set,
			results: lookup(
				bench.Result{InstanceID: "a", Resolved: true, PatchApplied: true, F2PPassed: ids("a1", "a2"),
					TokensIn: i64(1000), TokensOut: i64(100), Cost: f64(0.5)},
				bench.Result{InstanceID: "b", PatchApplied: true, F2PPassed: ids("b1", "b3"), F2PFailed: ids("b2", "b4"),
					TokensIn: i64(3000), TokensOut: i64(300), Cost: f64(1.5)},
				bench.Result{InstanceID: "c", PatchApplied: false, F2PPassed: ids("c1")},
				bench.Result{InstanceID: "zzz", Resolved: true}, // not in the set: ignored
			),
			predicted: 3, resolved: 1, rate: 0.25,
			passed: (1 + 0.5 + 0 + 0) / 4,
			m:      means{in: 2000, out: 200, cost: 1, tokOK: true, costOK: true, tokens: 2, costCount: 2},
		},
		{
			name:      "tokens and cost reported by some results only",
			instances: set,
			results: lookup(
				bench.Result{InstanceID: "a", PatchApplied: true, F2PPassed: ids("a1"), TokensIn: i64(500), TokensOut: i64(50)},
				bench.Result{InstanceID: "b", PatchApplied: true, Cost: f64(2)},
				bench.Result{InstanceID: "c", PatchApplied: true, TokensIn: i64(1500), TokensOut: i64(150), Cost: f64(4)},
				bench.Result{InstanceID: "d", PatchApplied: true, F2PPassed: ids("d1"), Resolved: true},
			),
			predicted: 4, resolved: 1, rate: 0.25,
			passed: (0.5 + 0 + 0 + 1) / 4,
			m:      means{in: 1000, out: 100, cost: 3, tokOK: true, costOK: true, tokens: 2, costCount: 2},
		},
		{
			name:      "subset of instances (a split or a level)",
			instances: set[2:],
			results: lookup(
				bench.Result{InstanceID: "a", Resolved: true, PatchApplied: true, F2PPassed: ids("a1", "a2")},
				bench.Result{InstanceID: "d", Resolved: true, PatchApplied: true, F2PPassed: ids("d1"), Cost: f64(0)},
			),
			predicted: 1, resolved: 1, rate: 0.5, passed: 0.5,
			m: means{cost: 0, costOK: true, costCount: 1},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := metrics.Compute(c.instances, c.results)
			if s.Instances != len(c.instances) || s.Predicted != c.predicted || s.Resolved != c.resolved {
				t.Errorf("instances/predicted/resolved = %d/%d/%d, want %d/%d/%d",
					s.Instances, s.Predicted, s.Resolved, len(c.instances), c.predicted, c.resolved)
			}
			if got := s.ResolvedRate(); math.Abs(got-c.rate) > 1e-12 {
				t.Errorf("ResolvedRate = %v, want %v", got, c.rate)
			}
			if got, ok := s.PassedRate(); !ok || math.Abs(got-c.passed) > 1e-12 {
				t.Errorf("PassedRate = %v (ok %v), want %v", got, ok, c.passed)
			}
			lo, hi := s.Interval()
			wlo, whi := metrics.Wilson(c.resolved, len(c.instances), metrics.Z95)
			if lo != wlo || hi != whi {
				t.Errorf("Interval = [%v, %v], want Wilson [%v, %v]", lo, hi, wlo, whi)
			}
			if len(c.instances) > 0 && (lo > c.rate || hi < c.rate) {
				t.Errorf("Interval [%v, %v] does not contain %v", lo, hi, c.rate)
			}
			in, okIn := s.TokensIn()
			out, okOut := s.TokensOut()
			cost, okCost := s.Cost()
			if okIn != c.m.tokOK || okOut != c.m.tokOK || math.Abs(in-c.m.in) > 1e-9 || math.Abs(out-c.m.out) > 1e-9 {
				t.Errorf("TokensIn = %v,%v TokensOut = %v,%v; want %v,%v and %v,%v",
					in, okIn, out, okOut, c.m.in, c.m.tokOK, c.m.out, c.m.tokOK)
			}
			if okCost != c.m.costOK || math.Abs(cost-c.m.cost) > 1e-9 {
				t.Errorf("Cost = %v,%v; want %v,%v", cost, okCost, c.m.cost, c.m.costOK)
			}
			if s.Costs != c.m.costCount {
				t.Errorf("Costs count = %d, want %d", s.Costs, c.m.costCount)
			}
		})
	}
}

func TestZeroScore(t *testing.T) {
	var s metrics.Score
	if p, ok := s.PassedRate(); s.ResolvedRate() != 0 || p != 0 || !ok {
		t.Errorf("zero Score rates = %v, %v (ok %v)", s.ResolvedRate(), p, ok)
	}
	if lo, hi := s.Interval(); lo != 0 || hi != 0 {
		t.Errorf("zero Score interval = [%v, %v]", lo, hi)
	}
	if _, ok := s.TokensIn(); ok {
		t.Error("zero Score TokensIn ok")
	}
	if _, ok := s.TokensOut(); ok {
		t.Error("zero Score TokensOut ok")
	}
	if _, ok := s.Cost(); ok {
		t.Error("zero Score Cost ok")
	}
}

func TestPassedFraction(t *testing.T) {
	in := inst("x", "t1", "t2", "t3", "t4")
	for _, c := range []struct {
		name string
		in   *bench.Instance
		r    bench.Result
		want float64
	}{
		{"none", in, bench.Result{PatchApplied: true}, 0},
		{"one of four", in, bench.Result{PatchApplied: true, F2PPassed: ids("t2")}, 0.25},
		{"three of four", in, bench.Result{PatchApplied: true, F2PPassed: ids("t1", "t2", "t4")}, 0.75},
		{"all", in, bench.Result{PatchApplied: true, F2PPassed: ids("t1", "t2", "t3", "t4")}, 1},
		{"patch not applied", in, bench.Result{PatchApplied: false, F2PPassed: ids("t1", "t2")}, 0},
		{"instance without F2P tests", inst("y"), bench.Result{PatchApplied: true, F2PPassed: ids("t1")}, 0},
		{"capped at 1", inst("z", "t1"), bench.Result{PatchApplied: true, F2PPassed: ids("t1", "t9")}, 1},
	} {
		r := c.r
		if got := metrics.PassedFraction(c.in, &r); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: PassedFraction = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFailureModes(t *testing.T) {
	for _, c := range []struct {
		name    string
		results []bench.Result
		want    []metrics.Count
	}{
		{"none", nil, []metrics.Count{}},
		{"no modes", []bench.Result{{InstanceID: "a"}}, []metrics.Count{}},
		{
			"most frequent first, ties by label",
			[]bench.Result{
				{FailureModes: ids("TypeError", "AssertionError")},
				{FailureModes: ids("AssertionError")},
				{FailureModes: ids("ImportError", "AssertionError")},
				{FailureModes: ids("Timeout", "TypeError")},
				{FailureModes: ids("AttributeError")},
				{},
			},
			[]metrics.Count{
				{Label: "AssertionError", N: 3},
				{Label: "TypeError", N: 2},
				{Label: "AttributeError", N: 1},
				{Label: "ImportError", N: 1},
				{Label: "Timeout", N: 1},
			},
		},
		{
			"a mode repeated within one result counts each time",
			[]bench.Result{{FailureModes: ids("X", "X")}, {FailureModes: ids("Y")}},
			[]metrics.Count{{Label: "X", N: 2}, {Label: "Y", N: 1}},
		},
	} {
		got := metrics.FailureModes(c.results)
		if len(got) == 0 && len(c.want) == 0 {
			if got == nil {
				t.Errorf("%s: FailureModes = nil, want an empty slice", c.name)
			}
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: FailureModes = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestFeatBenchFigures checks Applied%, FV%, RT% and File% (FeatBench,
// paper 003 section 3.2) and the mean over attempts, worked by hand.
func TestFeatBenchFigures(t *testing.T) {
	ins := []*bench.Instance{
		{InstanceID: "a", FailToPass: []string{"f1", "f2"}, PassToPass: []string{"p1"}},
		{InstanceID: "b", FailToPass: []string{"f1"}, PassToPass: []string{"p1", "p2"}},
		{InstanceID: "c", FailToPass: []string{"f1"}},
		{InstanceID: "d", FailToPass: []string{"f1"}}, // no prediction
		// Level 2: cmd/eval gives no file_recall there, so File% leaves
		// them out, resolved or not (the example's gold patch showed 50%).
		{InstanceID: "e", Level: 2, FailToPass: []string{"f1"}},
		{InstanceID: "f", Level: 2, FailToPass: []string{"f1"}},
	}
	half, one := 0.5, 1.0
	results := map[string]*bench.Result{
		// Every F2P passed, the P2P broke: FV, not RT.
		"a": {PatchApplied: true, F2PPassed: []string{"f1", "f2"}, P2PFailed: []string{"p1"}, FileRecall: &half, Attempts: 3, AttemptsResolved: 0},
		// Resolved: FV and RT.
		"b": {Resolved: true, PatchApplied: true, F2PPassed: []string{"f1"}, P2PPassed: []string{"p1", "p2"}, FileRecall: &one, Attempts: 3, AttemptsResolved: 2},
		// Did not apply: nothing.
		"c": {F2PFailed: []string{"f1"}, Attempts: 3},
		"e": {Resolved: true, PatchApplied: true, F2PPassed: []string{"f1"}, Attempts: 3, AttemptsResolved: 3},
	}
	s := metrics.Compute(ins, func(in *bench.Instance) *bench.Result { return results[in.InstanceID] })
	file, ok := s.FileRate()
	rt, rtOK := s.RTRate()
	if !rtOK || s.RTInstances != 2 {
		t.Errorf("RT is over %d instances (ok %v), want a and b: level 2 and instances without pass-to-pass tests run none", s.RTInstances, rtOK)
	}
	// Level 2 alone, or no pass-to-pass tests: RT says nothing.
	if r, ok := metrics.Compute(ins[4:], func(in *bench.Instance) *bench.Result { return results[in.InstanceID] }).RTRate(); ok {
		t.Errorf("RT over level 2 instances = %v, ok; want not defined", r)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"applied", s.AppliedRate(), 3.0 / 6},
		{"FV", s.FVRate(), 3.0 / 6},
		{"RT over the level 1 instances with pass-to-pass tests (a, b)", rt, 1.0 / 2},
		{"File", file, 1.5 / 4},
		{"resolved by any attempt (pass@3)", s.AnyResolvedRate(), 2.0 / 6},
		{"resolved, mean over 3 attempts (pass@1)", s.ResolvedRate(), 5.0 / 18},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !ok {
		t.Error("FileRate reports no file_recall although two results give it")
	}
	// A level 2 result that gives file_recall counts.
	three := 0.25
	l2 := metrics.Compute(ins[4:], func(in *bench.Instance) *bench.Result {
		if in.InstanceID == "f" {
			return &bench.Result{PatchApplied: true, FileRecall: &three}
		}
		return results[in.InstanceID]
	})
	if got, ok := l2.FileRate(); !ok || math.Abs(got-0.25) > 1e-12 {
		t.Errorf("File over a level 2 result giving file_recall = %v (ok %v), want 0.25 over that one instance", got, ok)
	}
	none := metrics.Compute(ins[2:4], func(in *bench.Instance) *bench.Result { return results[in.InstanceID] })
	if _, ok := none.FileRate(); ok {
		t.Error("FileRate is ok without any file_recall")
	}
}
