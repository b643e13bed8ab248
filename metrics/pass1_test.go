package metrics_test

import (
	"math"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/metrics"
)

// A system with five attempts per instance is ranked on what one attempt
// achieves (pass@1, the mean over attempts), not on "resolved by any
// attempt", against a system with one attempt; its interval, the
// bootstrap's per-instance scores and the paired test are on the same
// basis. Before, ResolvedRate was the any-of-k rate: the five-attempt
// system below (any 0.6, pass@1 0.28) outranked the one-attempt system
// (0.5).
func TestRankedOnPassAt1(t *testing.T) {
	const n = 10
	ins := make([]*bench.Instance, n)
	for i := range ins {
		ins[i] = &bench.Instance{InstanceID: string(rune('a' + i)), FailToPass: []string{"f1", "f2"}}
	}
	// Five attempts: instances 0-5 resolved by some attempt, by 3, 2, 2,
	// 1, 1, 1 of the five; each attempt's F2P count given.
	resolvedBy := []int{3, 2, 2, 1, 1, 1, 0, 0, 0, 0}
	five := map[string]*bench.Result{}
	for i, in := range ins {
		c := resolvedBy[i]
		passed := make([]int, 5)
		for k := range passed {
			if k < c {
				passed[k] = 2
			} else if k == c {
				passed[k] = 1
			}
		}
		five[in.InstanceID] = &bench.Result{InstanceID: in.InstanceID, Resolved: c > 0, PatchApplied: true,
			F2PPassed: []string{"f1", "f2"}, Attempts: 5, AttemptsResolved: c, AttemptsPassed: passed}
	}
	// One attempt: instances 0-4 resolved, the rest pass one test of two.
	one := map[string]*bench.Result{}
	for i, in := range ins {
		r := &bench.Result{InstanceID: in.InstanceID, PatchApplied: true, F2PPassed: []string{"f1"}}
		if i < 5 {
			r.Resolved, r.F2PPassed = true, []string{"f1", "f2"}
		}
		one[in.InstanceID] = r
	}
	look := func(m map[string]*bench.Result) metrics.Lookup {
		return func(in *bench.Instance) *bench.Result { return m[in.InstanceID] }
	}
	s5, s1 := metrics.Compute(ins, look(five)), metrics.Compute(ins, look(one))

	pass1 := (3.0 + 2 + 2 + 1 + 1 + 1) / 5 / n
	if got := s5.ResolvedRate(); math.Abs(got-pass1) > 1e-12 {
		t.Errorf("five attempts: ResolvedRate = %v, want pass@1 %v", got, pass1)
	}
	if got := s5.AnyResolvedRate(); got != 0.6 {
		t.Errorf("five attempts: AnyResolvedRate = %v, want pass@5 0.6", got)
	}
	if s5.ResolvedRate() >= s1.ResolvedRate() {
		t.Errorf("the five-attempt system (pass@1 %v) ranks at or above the one-attempt system (%v)", s5.ResolvedRate(), s1.ResolvedRate())
	}
	// pass@1 is also the unbiased estimator's k = 1 term, as the compare
	// view's table gives it.
	st, err := metrics.Attempts(ins, look(five))
	if err != nil || math.Abs(st.PassAt[0]-pass1) > 1e-12 || math.Abs(st.PassAt[4]-0.6) > 1e-12 {
		t.Errorf("Attempts pass@1, pass@5 = %v, %v (%v); want %v, 0.6", st.PassAt[0], st.PassAt[4], err, pass1)
	}

	// % passed: the mean over attempts of each attempt's F2P share.
	var sum float64
	for _, c := range resolvedBy {
		k := 2 * c
		if c < 5 {
			k++
		}
		sum += float64(k) / 10
	}
	if got, ok := s5.PassedRate(); !ok || math.Abs(got-sum/n) > 1e-12 {
		t.Errorf("five attempts: PassedRate = %v (ok %v), want %v", got, ok, sum/n)
	}
	// Without each attempt's count, % passed is not defined per attempt.
	for _, r := range five {
		r.AttemptsPassed = nil
	}
	if got, ok := metrics.Compute(ins, look(five)).PassedRate(); ok {
		t.Errorf("PassedRate without attempts_passed = %v, ok; want not ok", got)
	}

	// The interval is Wilson's for the pass@1 rate over the instances.
	lo, hi := s5.Interval()
	wlo, whi := metrics.WilsonRate(pass1, n, metrics.Z95)
	if math.Abs(lo-wlo) > 1e-12 || math.Abs(hi-whi) > 1e-12 || lo > pass1 || hi < pass1 {
		t.Errorf("Interval = [%v, %v], want WilsonRate(%v) = [%v, %v]", lo, hi, pass1, wlo, whi)
	}
	if alo, ahi := metrics.Wilson(6, n, metrics.Z95); math.Abs(lo-alo) < 1e-6 && math.Abs(hi-ahi) < 1e-6 {
		t.Error("the interval is the any-of-5 rate's")
	}
	// WilsonRate agrees with Wilson at whole counts.
	for k := 0; k <= n; k++ {
		a, b := metrics.Wilson(k, n, metrics.Z95)
		c, d := metrics.WilsonRate(float64(k)/n, n, metrics.Z95)
		if math.Abs(a-c) > 1e-15 || math.Abs(b-d) > 1e-15 {
			t.Errorf("k=%d: Wilson [%v, %v], WilsonRate [%v, %v]", k, a, b, c, d)
		}
	}

	// Paired on the same basis: instance by instance, the share of
	// attempts resolving it. The one-attempt system is higher on 0-5
	// where it resolves (1 against 0.6, 0.4, 0.4, 0.2, 0.2) and equal
	// on none of them; the five-attempt system is higher on 5 (0.2 > 0);
	// 6-9 neither.
	oa, ob := metrics.NewOutcomes(n), metrics.NewOutcomes(n)
	for i, in := range ins {
		oa.SetShare(i, metrics.ResolvedShare(five[in.InstanceID]))
		ob.SetShare(i, metrics.ResolvedShare(one[in.InstanceID]))
	}
	p, err := metrics.Paired(oa, ob)
	if err != nil || !p.Attempts || p.OnlyA != 1 || p.OnlyB != 5 || p.Both != 0 || p.Neither != 4 {
		t.Errorf("Paired = %+v (%v); want only A 1, only B 5, neither 4, on attempts", p, err)
	}
	if p.PValue() != metrics.McNemarExact(1, 5) {
		t.Errorf("PValue = %v, want the sign test's %v", p.PValue(), metrics.McNemarExact(1, 5))
	}
	// Two one-attempt systems through SetShare pair as Set does.
	oc := metrics.NewOutcomes(n)
	for i, in := range ins {
		r := one[in.InstanceID]
		oc.Set(i, true, r.Resolved)
	}
	if p1, _ := metrics.Paired(ob, oc); p1.Attempts || p1.Both != 5 || p1.Neither != 5 {
		t.Errorf("one attempt each: %+v, want McNemar's cells (both 5, neither 5)", p1)
	}
}
