// Package metrics computes the figures a leaderboard shows from
// per-instance results: resolved rate with its Wilson interval, passed rate,
// token I/O and cost, and the bootstrap range of a system's rank.
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

	// FeatBench's figures (paper 003, section 3.2): instances whose patch
	// applied, whose every F2P test passed (feature validation), whose
	// every P2P test passed (regression tests).
	Applied, FeatureValid, RegressionFree int
	fileRecall                            float64
	FileRecalls                           int // results that report file_recall
	fileInstances                         int // instances File% is a mean over

	// Attempts: evaluated and resolved, summed over the results.
	attempts, attemptsResolved int
}

// rate is n over the instances of the set.
func (s Score) rate(n int) float64 {
	if s.Instances == 0 {
		return 0
	}
	return float64(n) / float64(s.Instances)
}

// AppliedRate, FVRate and RTRate are FeatBench's Applied%, FV% and RT%
// as fractions: shares of all the set's instances (a missing prediction
// counts as failing each).
func (s Score) AppliedRate() float64 { return s.rate(s.Applied) }

// FVRate: see AppliedRate.
func (s Score) FVRate() float64 { return s.rate(s.FeatureValid) }

// RTRate: see AppliedRate.
func (s Score) RTRate() float64 { return s.rate(s.RegressionFree) }

// FileRate is FeatBench's File%, file-level localisation: the mean over
// the set's instances of the share of the gold patch's files the
// prediction touched (a missing prediction or figure counts as 0); ok is
// false when no result reports it. Level 2 instances are left out unless
// their result gives the figure: built from scratch, a prediction has no
// gold files to find, and cmd/eval gives none there.
func (s Score) FileRate() (rate float64, ok bool) {
	if s.FileRecalls == 0 || s.fileInstances == 0 {
		return 0, false
	}
	return s.fileRecall / float64(s.fileInstances), true
}

// MeanResolved is the share of attempts that resolved their instance, over
// every attempt of every instance of the set (k per instance; a missing
// prediction counts as k unresolved attempts): pass@1 estimated from k
// attempts, beside pass@k, which is ResolvedRate.
func (s Score) MeanResolved(k int) float64 {
	if s.Instances == 0 || k < 1 {
		return 0
	}
	return float64(s.attemptsResolved) / float64(s.Instances*k)
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
		if in.Level != 2 || (r != nil && r.FileRecall != nil) {
			s.fileInstances++
		}
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
		if r.PatchApplied {
			s.Applied++
			if len(r.F2PPassed) == len(in.FailToPass) && len(r.F2PFailed) == 0 {
				s.FeatureValid++
			}
			if len(r.P2PPassed) == len(in.PassToPass) && len(r.P2PFailed) == 0 {
				s.RegressionFree++
			}
		}
		if r.FileRecall != nil {
			s.FileRecalls++
			s.fileRecall += *r.FileRecall
		}
		n, c := r.Attempts, r.AttemptsResolved
		if n == 0 { // files from before attempts were recorded: one
			n, c = 1, 0
			if r.Resolved {
				c = 1
			}
		}
		s.attempts += n
		s.attemptsResolved += c
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
