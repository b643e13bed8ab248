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
	Instances int // instances in the set: the denominator
	Predicted int // instances with a result
	// Resolved is the instances resolved by at least one attempt (with
	// one attempt, the instances resolved): pass@k's count, where k is
	// the attempts made. Boards rank by ResolvedRate, the mean over
	// attempts, not by it.
	Resolved int
	// resolved1 sums over instances the share of attempts that resolved
	// each (c/n; 0 or 1 with one attempt), passedSum the mean over
	// attempts of the F2P fraction passed.
	resolved1, passedSum float64
	// Multi counts results with several attempts; passedUnknown those of
	// them that do not give each attempt's F2P count (older files), for
	// which % passed is not defined per attempt.
	Multi, passedUnknown int

	tokensIn, tokensOut float64
	nIn, nOut           int // results that report input, output tokens
	cost                float64
	Costs               int // results that report a cost
	turns               float64
	Turns               int // results that report turns

	// FeatBench's figures (paper 003, section 3.2): instances whose patch
	// applied, whose every F2P test passed (feature validation), whose
	// every P2P test passed (regression tests).
	Applied, FeatureValid, RegressionFree int
	// RTInstances are the instances RT% is over: level 1 instances with
	// pass-to-pass tests (level 2 builds from scratch, and the
	// repository's tests are not run there).
	RTInstances   int
	fileRecall    float64
	FileRecalls   int // results that report file_recall
	fileInstances int // instances File% is a mean over

}

// rate is n over the instances of the set.
func (s Score) rate(n int) float64 {
	if s.Instances == 0 {
		return 0
	}
	return float64(n) / float64(s.Instances)
}

// AppliedRate and FVRate are FeatBench's Applied% and FV% as fractions:
// shares of all the set's instances (a missing prediction counts as
// failing each). RTRate is over fewer instances.
func (s Score) AppliedRate() float64 { return s.rate(s.Applied) }

// FVRate: see AppliedRate.
func (s Score) FVRate() float64 { return s.rate(s.FeatureValid) }

// RTRate is FeatBench's RT%, regression tests: the share of the
// instances whose pass-to-pass tests are run (RTInstances) where the patch
// applied and every one of them passed. ok is false when the set has no
// such instance: level 2 runs none, and counting its instances as passing
// made an empty patch score 50%.
func (s Score) RTRate() (rate float64, ok bool) {
	if s.RTInstances == 0 {
		return 0, false
	}
	return float64(s.RegressionFree) / float64(s.RTInstances), true
}

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

// ResolvedRate is the figure boards rank by: the mean over the set's
// instances of the share of attempts that resolved each, a missing
// prediction counting as unresolved. That share is pass@1's unbiased
// estimate from n attempts of which c resolved (c/n, Chen et al. 2021),
// so a system that made five attempts is ranked on what one attempt
// achieves, as a system that made one is; with one attempt it is the
// share of instances resolved.
func (s Score) ResolvedRate() float64 {
	if s.Instances == 0 {
		return 0
	}
	return s.resolved1 / float64(s.Instances)
}

// AnyResolvedRate is the share of instances resolved by at least one
// attempt: pass@k for k the attempts made, shown beside ResolvedRate,
// which it equals with one attempt.
func (s Score) AnyResolvedRate() float64 {
	if s.Instances == 0 {
		return 0
	}
	return float64(s.Resolved) / float64(s.Instances)
}

// PassedRate is the mean over the set's instances of the fraction of F2P
// tests passed, per attempt where there are several (the mean over the
// attempts); a missing prediction counts as none passed. ok is false when
// a result with several attempts does not give each one's count: the
// line's own lists are one attempt's, which would not be a mean.
func (s Score) PassedRate() (rate float64, ok bool) {
	if s.passedUnknown > 0 {
		return 0, false
	}
	if s.Instances == 0 {
		return 0, true
	}
	return s.passedSum / float64(s.Instances), true
}

// Interval is the 95% Wilson score interval of ResolvedRate over the
// set's instances. With several attempts an instance's outcome is the
// share of its attempts that resolved it, and the interval is Wilson's
// for that mean over n instances (WilsonRate): an instance's share varies
// no more than one 0-or-1 outcome of the same mean, so the interval is
// at least as wide as the per-attempt figure needs.
func (s Score) Interval() (lo, hi float64) { return WilsonRate(s.ResolvedRate(), s.Instances, Z95) }

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

// MeanTurns is the mean number of model requests per instance over the
// results that report it; ok is false when none do.
func (s Score) MeanTurns() (mean float64, ok bool) {
	if s.Turns == 0 {
		return 0, false
	}
	return s.turns / float64(s.Turns), true
}

// Wilson returns the Wilson score interval for k successes in n trials.
// Unlike the normal approximation it stays inside [0, 1] and behaves at
// k = 0 and k = n, which small splits such as lite (30) need.
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 0
	}
	k = min(max(k, 0), n)
	return WilsonRate(float64(k)/float64(n), n, z)
}

// WilsonRate is Wilson's score interval for an observed rate p over n
// trials: Wilson(k, n) for p = k/n, and the same formula for a rate that
// is not a whole number of successes (a mean over attempts, or a
// published rate rounded to a decimal).
func WilsonRate(p float64, n int, z float64) (lo, hi float64) {
	if n <= 0 || math.IsNaN(p) {
		return 0, 0
	}
	p = min(max(p, 0), 1)
	nf := float64(n)
	z2 := z * z
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	// Exact at the edges, where rounding would leave 1e-17 or 0.999…
	if p == 0 {
		lo = 0
	}
	if p == 1 {
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
		rt := in.Level != 2 && len(in.PassToPass) > 0
		if rt {
			s.RTInstances++
		}
		if r == nil {
			continue
		}
		s.Predicted++
		if r.Resolved {
			s.Resolved++
		}
		s.resolved1 += ResolvedShare(r)
		if p, ok := PassedShare(in, r); ok {
			s.passedSum += p
		} else {
			s.passedUnknown++
		}
		if r.Attempts > 1 {
			s.Multi++
		}
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
		if r.Turns != nil {
			s.Turns++
			s.turns += float64(*r.Turns)
		}
		if r.PatchApplied {
			s.Applied++
			if len(r.F2PPassed) == len(in.FailToPass) && len(r.F2PFailed) == 0 {
				s.FeatureValid++
			}
			if rt && len(r.P2PPassed) == len(in.PassToPass) && len(r.P2PFailed) == 0 {
				s.RegressionFree++
			}
		}
		if r.FileRecall != nil {
			s.FileRecalls++
			s.fileRecall += *r.FileRecall
		}
	}
	return s
}

// ResolvedShare is the share of a result's attempts that resolved its
// instance, pass@1's unbiased estimate for it (c/n); with one attempt, 1
// or 0. nil, no prediction, is 0.
func ResolvedShare(r *bench.Result) float64 {
	if r == nil {
		return 0
	}
	if r.Attempts > 1 {
		return float64(r.AttemptsResolved) / float64(r.Attempts)
	}
	if r.Resolved {
		return 1
	}
	return 0
}

// PassedShare is a result's fraction of the instance's F2P tests passed,
// the mean over its attempts where it has several; ok is false when it
// has several but does not give each one's count. nil is 0.
func PassedShare(in *bench.Instance, r *bench.Result) (share float64, ok bool) {
	if r == nil {
		return 0, true
	}
	if r.Attempts <= 1 {
		return PassedFraction(in, r), true
	}
	if len(r.AttemptsPassed) != r.Attempts {
		return 0, false
	}
	if len(in.FailToPass) == 0 {
		return 0, true
	}
	sum := 0
	for _, n := range r.AttemptsPassed {
		sum += min(n, len(in.FailToPass))
	}
	return float64(sum) / float64(r.Attempts*len(in.FailToPass)), true
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
