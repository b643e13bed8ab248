// Package metrics computes the figures a leaderboard shows from
// per-instance results: resolved rate with its Wilson interval, passed rate,
// token I/O and cost.
package metrics

import (
	"math"
	"sort"

	"github.com/featbench/featbench/bench"
)

// Z95 is the normal quantile for a two-sided 95% interval.
const Z95 = 1.959963984540054

// Score is what a system achieved on a set of instances.
type Score struct {
	Instances int     // instances in the set: the denominator
	Predicted int     // instances with a result
	Resolved  int     // instances with every F2P and P2P test passing
	passedSum float64 // sum over instances of the F2P fraction passed

	tokensIn, tokensOut float64
	nIn, nOut           int // results that report input, output tokens
	cost                float64
	Costs               int // results that report a cost
}

// ResolvedRate is resolved instances over all instances in the set; a
// missing prediction counts as unresolved.
func (s Score) ResolvedRate() float64 {
	if s.Instances == 0 {
		return 0
	}
	return float64(s.Resolved) / float64(s.Instances)
}

// PassedRate is the mean over the set's instances of the fraction of F2P
// tests passed; a missing prediction counts as none passed.
func (s Score) PassedRate() float64 {
	if s.Instances == 0 {
		return 0
	}
	return s.passedSum / float64(s.Instances)
}

// Interval is the 95% Wilson score interval of the resolved rate.
func (s Score) Interval() (lo, hi float64) { return Wilson(s.Resolved, s.Instances, Z95) }

// TokensIn and TokensOut are mean tokens per instance over the results that
// report them; ok is false when none do.
func (s Score) TokensIn() (mean float64, ok bool) {
	if s.nIn == 0 {
		return 0, false
	}
	return s.tokensIn / float64(s.nIn), true
}

// TokensOut: see TokensIn.
func (s Score) TokensOut() (mean float64, ok bool) {
	if s.nOut == 0 {
		return 0, false
	}
	return s.tokensOut / float64(s.nOut), true
}

// TokenResults is how many results report input tokens: the number of
// instances the mean input tokens are taken over.
func (s Score) TokenResults() int { return s.nIn }

// Cost is the mean cost per instance over the results that report one.
func (s Score) Cost() (mean float64, ok bool) {
	if s.Costs == 0 {
		return 0, false
	}
	return s.cost / float64(s.Costs), true
}

// Wilson returns the Wilson score interval for k successes in n trials.
// Unlike the normal approximation it stays inside [0, 1] and behaves at
// k = 0 and k = n, which small splits such as lite (30) need.
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 0
	}
	k = min(max(k, 0), n)
	p := float64(k) / float64(n)
	nf := float64(n)
	z2 := z * z
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	// Exact at the edges, where rounding would leave 1e-17 or 0.999…
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi
}

// Lookup finds a system's result for an instance; nil when the system
// made no prediction.
type Lookup func(in *bench.Instance) *bench.Result

// Compute scores a system on a set of instances.
func Compute(instances []*bench.Instance, result Lookup) Score {
	s := Score{Instances: len(instances)}
	for _, in := range instances {
		r := result(in)
		if r == nil {
			continue
		}
		s.Predicted++
		if r.Resolved {
			s.Resolved++
		}
		s.passedSum += PassedFraction(in, r)
		if r.TokensIn != nil {
			s.nIn++
			s.tokensIn += float64(*r.TokensIn)
		}
		if r.TokensOut != nil {
			s.nOut++
			s.tokensOut += float64(*r.TokensOut)
		}
		if r.Cost != nil {
			s.Costs++
			s.cost += *r.Cost
		}
	}
	return s
}

// PassedFraction is the fraction of the instance's F2P tests the result
// passed. Loading has checked that every id is one of the instance's tests.
func PassedFraction(in *bench.Instance, r *bench.Result) float64 {
	if len(in.FailToPass) == 0 || !r.PatchApplied {
		return 0
	}
	n := len(r.F2PPassed)
	if n > len(in.FailToPass) {
		n = len(in.FailToPass)
	}
	return float64(n) / float64(len(in.FailToPass))
}

// Count is a label with how often it occurred.
type Count struct {
	Label string
	N     int
}

// FailureModes counts the failure modes (error types) over one or more
// sets of results, most frequent first.
func FailureModes(sets ...[]bench.Result) []Count {
	m := map[string]int{}
	for _, results := range sets {
		for _, r := range results {
			for _, f := range r.FailureModes {
				m[f]++
			}
		}
	}
	return sortCounts(m)
}

func sortCounts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Label < out[j].Label
	})
	return out
}
