package metrics

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/featbench/featbench/bench"
)

// Outcomes is a system's results on a list of instances: the instances
// it made a prediction for, and those it resolved, as bit vectors; and,
// for a system with several attempts per instance, the share of attempts
// that resolved each (its pass@1 there).
type Outcomes struct {
	n                   int
	predicted, resolved []uint64
	share               []float64 // nil while every outcome is 0 or 1
}

// NewOutcomes makes the outcomes of n instances, none predicted.
func NewOutcomes(n int) Outcomes {
	w := (n + 63) / 64
	return Outcomes{n: n, predicted: make([]uint64, w), resolved: make([]uint64, w)}
}

// Set records instance i: predicted or not, resolved or not (a resolved
// instance was predicted).
func (o Outcomes) Set(i int, predicted, resolved bool) {
	m := uint64(1) << (i % 64)
	if predicted || resolved {
		o.predicted[i/64] |= m
	}
	if resolved {
		o.resolved[i/64] |= m
	}
}

// SetShare records a predicted instance i that a share of the system's
// attempts resolved (c/n, in [0, 1]).
func (o *Outcomes) SetShare(i int, share float64) {
	o.Set(i, true, share > 0)
	if share == 0 || share == 1 {
		if o.share != nil {
			o.share[i] = share
		}
		return
	}
	if o.share == nil {
		o.share = make([]float64, o.n)
		for j := range o.n {
			if o.resolved[j/64]&(1<<(j%64)) != 0 {
				o.share[j] = 1
			}
		}
	}
	o.share[i] = share
}

// at is instance i's share resolved.
func (o Outcomes) at(i int) float64 {
	if o.share != nil {
		return o.share[i]
	}
	if o.resolved[i/64]&(1<<(i%64)) != 0 {
		return 1
	}
	return 0
}

// Pair counts two systems' shared instances (both made a prediction) by
// who resolved them. With one attempt each, Both, OnlyA, OnlyB and Neither
// are McNemar's four cells. With several attempts an instance's outcome
// is the share of attempts that resolved it (pass@1), and the same cells
// compare the shares: OnlyA counts the instances where A's share is the
// higher, OnlyB where B's is, Both where they are equal and above 0,
// Neither where both are 0; Attempts is then true. With 0-or-1 shares
// the two readings are one.
type Pair struct {
	Both, OnlyA, OnlyB, Neither int
	Attempts                    bool
}

// Shared is the instances both systems made a prediction for.
func (p Pair) Shared() int { return p.Both + p.OnlyA + p.OnlyB + p.Neither }

// PValue is the two-sided p-value of the exact test on the instances
// where the two differ: McNemar's with one attempt each, and with several
// the sign test on the instances' shares (which is what McNemar's exact
// test is when the shares are 0 or 1): with no difference between the
// systems, either is as likely to be the higher where they differ.
func (p Pair) PValue() float64 { return McNemarExact(p.OnlyA, p.OnlyB) }

// Paired counts a and b's shared instances. Both must be of the same
// instances.
func Paired(a, b Outcomes) (Pair, error) {
	if a.n != b.n {
		return Pair{}, fmt.Errorf("pairing outcomes of %d and %d instances", a.n, b.n)
	}
	var p Pair
	if a.share != nil || b.share != nil {
		p.Attempts = true
		for w := range a.predicted {
			for shared := a.predicted[w] & b.predicted[w]; shared != 0; shared &= shared - 1 {
				i := 64*w + bits.TrailingZeros64(shared)
				x, y := a.at(i), b.at(i)
				switch {
				case x > y:
					p.OnlyA++
				case y > x:
					p.OnlyB++
				case x > 0:
					p.Both++
				default:
					p.Neither++
				}
			}
		}
		return p, nil
	}
	for w := range a.predicted {
		shared := a.predicted[w] & b.predicted[w]
		ra, rb := a.resolved[w]&shared, b.resolved[w]&shared
		p.Both += bits.OnesCount64(ra & rb)
		p.OnlyA += bits.OnesCount64(ra &^ rb)
		p.OnlyB += bits.OnesCount64(rb &^ ra)
		p.Neither += bits.OnesCount64(shared &^ (ra | rb))
	}
	return p, nil
}

// McNemarExact is the two-sided p-value of the exact McNemar test for b
// pairs where only the first resolved and c where only the second did:
// with no difference between the two, the b+c discordant pairs split as
// a Binomial(b+c, 1/2), and p = min(1, 2·P(X ≤ min(b, c))). The tail is
// summed from its largest term down, each term the one above times
// i/(n-i+1), and scaled by that term, from log-gamma: no 2^-n underflows
// and no binomial coefficient overflows at any n, and the relative error
// stays near 1e-10 at n = 4,000 (TestMcNemarExact checks it against
// exact rationals).
func McNemarExact(b, c int) float64 {
	n, m := b+c, min(b, c)
	if n == 0 || 2*m >= n {
		return 1
	}
	// P(X = m), then the terms below it relative to it.
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	top := lg(n) - lg(m) - lg(n-m) - float64(n)*math.Ln2
	sum, t := 1.0, 1.0
	for i := m; i > 0; i-- {
		t *= float64(i) / float64(n-i+1)
		sum += t
		if t < sum*1e-17 {
			break // the remaining terms shrink faster still
		}
	}
	return min(1, 2*math.Exp(top)*sum)
}

// PassAtK is the unbiased estimator of pass@k from n attempts of which c
// passed (Chen et al. 2021): 1 - C(n-c, k)/C(n, k), the ratio taken as
// the product of 1 - k/j for j from n-c+1 to n, as their code does, so
// that no binomial coefficient is formed.
func PassAtK(n, c, k int) (float64, error) {
	if k < 1 || k > n || c < 0 || c > n {
		return 0, fmt.Errorf("pass@%d of %d attempts with %d passed: want 1 <= k <= n and 0 <= c <= n", k, n, c)
	}
	if n-c < k {
		return 1, nil
	}
	q := 1.0
	for j := n - c + 1; j <= n; j++ {
		q *= 1 - float64(k)/float64(j)
	}
	return 1 - q, nil
}

// AttemptStats is a system's several attempts per instance on a set of
// instances.
type AttemptStats struct {
	Instances int
	// K is the attempts every result of the system has: pass@k is
	// estimated for k up to it.
	K int
	// PassAt[k-1] is the mean over the instances of pass@k's unbiased
	// estimate; a missing prediction counts as 0.
	PassAt []float64
	// Instances resolved by every attempt, by some but not every, by
	// none (a missing prediction among them).
	All, Some, None int
	// SD is the standard deviation of one attempt's resolved share
	// across attempts: the square root of the sum over instances of
	// c(n-c)/(n(n-1)), the unbiased estimate of each instance's
	// Bernoulli variance, over the instance count.
	SD float64
}

// Attempts computes a system's attempt statistics; K is 0 (and nothing
// else set but Instances) when some result has a single attempt.
func Attempts(instances []*bench.Instance, result Lookup) (AttemptStats, error) {
	st := AttemptStats{Instances: len(instances)}
	type tries struct{ n, c int }
	all := make([]tries, len(instances))
	k := 0
	for i, in := range instances {
		r := result(in)
		if r == nil {
			continue
		}
		n, c := r.Attempts, r.AttemptsResolved
		if n <= 1 {
			n, c = 1, 0
			if r.Resolved {
				c = 1
			}
		}
		all[i] = tries{n, c}
		if k == 0 || n < k {
			k = n
		}
	}
	if k < 2 || len(instances) == 0 {
		return st, nil
	}
	st.K = k
	st.PassAt = make([]float64, k)
	var variance float64
	for _, t := range all {
		if t.n == 0 {
			st.None++
			continue
		}
		switch t.c {
		case t.n:
			st.All++
		case 0:
			st.None++
		default:
			st.Some++
		}
		for j := 1; j <= k; j++ {
			p, err := PassAtK(t.n, t.c, j)
			if err != nil {
				return st, err
			}
			st.PassAt[j-1] += p
		}
		variance += float64(t.c*(t.n-t.c)) / float64(t.n*(t.n-1))
	}
	for j := range st.PassAt {
		st.PassAt[j] /= float64(len(instances))
	}
	st.SD = math.Sqrt(variance) / float64(len(instances))
	return st, nil
}
