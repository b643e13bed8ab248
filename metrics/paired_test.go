package metrics

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/featbench/featbench/bench"
)

// exactMcNemar is min(1, 2·Σ_{i≤min(b,c)} C(b+c, i) / 2^(b+c)) in exact
// rationals.
func exactMcNemar(b, c int) float64 {
	n, m := b+c, min(b, c)
	sum := new(big.Int)
	coef := big.NewInt(1)
	for i := 0; i <= m; i++ {
		sum.Add(sum, coef)
		coef.Mul(coef, big.NewInt(int64(n-i)))
		coef.Quo(coef, big.NewInt(int64(i+1)))
	}
	r := new(big.Rat).SetFrac(new(big.Int).Lsh(sum, 1), new(big.Int).Lsh(big.NewInt(1), uint(n)))
	p, _ := r.Float64()
	return min(1, p)
}

func TestMcNemarExact(t *testing.T) {
	// Known values: the exact binomial test's (R: binom.test(b, b+c)).
	for _, c := range []struct {
		b, c int
		want float64
	}{
		{0, 0, 1}, {3, 3, 1}, {4, 5, 1}, {1, 5, 14.0 / 64}, {5, 1, 14.0 / 64},
		{0, 10, 2.0 / 1024}, {2, 8, 112.0 / 1024}, {0, 1, 1}, {0, 5, 2.0 / 32},
		{10, 20, 0.09873714670538902}, {0, 30, 1.862645149230957e-09},
	} {
		got := McNemarExact(c.b, c.c)
		if math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("McNemarExact(%d, %d) = %v, want %v", c.b, c.c, got, c.want)
		}
	}
	// Against exact rationals, up to the sizes a 4,000-instance split
	// gives, far into the tail where 2^-n underflows a float.
	rng := rand.New(rand.NewPCG(1, 1))
	cases := [][2]int{{1000, 1200}, {1900, 2100}, {0, 1100}, {300, 3700}, {1999, 2001}}
	for range 40 {
		n := 1 + rng.IntN(4000)
		b := rng.IntN(n + 1)
		cases = append(cases, [2]int{b, n - b})
	}
	for _, c := range cases {
		got, want := McNemarExact(c[0], c[1]), exactMcNemar(c[0], c[1])
		if want == 0 {
			if got > 1e-300 {
				t.Errorf("McNemarExact(%d, %d) = %v, want 0 (below a float)", c[0], c[1], got)
			}
			continue
		}
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("McNemarExact(%d, %d) = %v, exact %v: relative error %.1e", c[0], c[1], got, want, math.Abs(got-want)/want)
		}
		if got != McNemarExact(c[1], c[0]) {
			t.Errorf("McNemarExact(%d, %d) differs from McNemarExact(%d, %d)", c[0], c[1], c[1], c[0])
		}
	}
}

func TestPaired(t *testing.T) {
	const n = 130 // three words, the last partial
	a, b := NewOutcomes(n), NewOutcomes(n)
	var want Pair
	rng := rand.New(rand.NewPCG(2, 2))
	for i := range n {
		pa, pb := rng.IntN(5) > 0, rng.IntN(5) > 0
		ra, rb := pa && rng.IntN(2) == 0, pb && rng.IntN(2) == 0
		a.Set(i, pa, ra)
		b.Set(i, pb, rb)
		if !pa || !pb {
			continue // not shared
		}
		switch {
		case ra && rb:
			want.Both++
		case ra:
			want.OnlyA++
		case rb:
			want.OnlyB++
		default:
			want.Neither++
		}
	}
	got, err := Paired(a, b)
	if err != nil || got != want {
		t.Fatalf("Paired = %+v, %v; want %+v", got, err, want)
	}
	if back, _ := Paired(b, a); back != (Pair{Both: want.Both, OnlyA: want.OnlyB, OnlyB: want.OnlyA, Neither: want.Neither}) {
		t.Errorf("Paired(b, a) = %+v, want a and b swapped in %+v", back, want)
	}
	if got.PValue() != McNemarExact(want.OnlyA, want.OnlyB) {
		t.Error("PValue is not McNemarExact of the discordant counts")
	}
	if _, err := Paired(a, NewOutcomes(n+1)); err == nil {
		t.Error("pairing outcomes of different lengths: no error")
	}
}

// exactPassAtK is 1 - C(n-c, k)/C(n, k) in exact rationals.
func exactPassAtK(n, c, k int) float64 {
	num := new(big.Int).Binomial(int64(n-c), int64(k))
	den := new(big.Int).Binomial(int64(n), int64(k))
	r := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).SetFrac(num, den))
	f, _ := r.Float64()
	return f
}

func TestPassAtK(t *testing.T) {
	for _, c := range []struct {
		n, c, k int
		want    float64
	}{
		{1, 1, 1, 1}, {1, 0, 1, 0}, {10, 0, 5, 0}, {10, 1, 1, 0.1}, {10, 3, 2, 24.0 / 45}, {5, 2, 5, 1}, {4, 2, 1, 0.5}, {4, 2, 3, 1},
	} {
		got, err := PassAtK(c.n, c.c, c.k)
		if err != nil || math.Abs(got-c.want) > 1e-15 {
			t.Errorf("PassAtK(%d, %d, %d) = %v, %v; want %v", c.n, c.c, c.k, got, err, c.want)
		}
	}
	// Against exact rationals, where the coefficients overflow a float
	// (C(1000, 500) is about 1e299) and the ratio is far below one.
	rng := rand.New(rand.NewPCG(3, 3))
	for range 300 {
		n := 1 + rng.IntN(1000)
		c, k := rng.IntN(n+1), 1+rng.IntN(n)
		got, err := PassAtK(n, c, k)
		if err != nil {
			t.Fatal(err)
		}
		if want := exactPassAtK(n, c, k); math.Abs(got-want) > 1e-12 {
			t.Errorf("PassAtK(%d, %d, %d) = %v, exact %v", n, c, k, got, want)
		}
	}
	for _, bad := range [][3]int{{5, 1, 0}, {5, 1, 6}, {5, 6, 1}, {5, -1, 1}} {
		if _, err := PassAtK(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("PassAtK%v: no error", bad)
		}
	}
}

func TestAttempts(t *testing.T) {
	ins := make([]*bench.Instance, 5)
	for i := range ins {
		ins[i] = &bench.Instance{InstanceID: string(rune('a' + i))}
	}
	results := map[*bench.Instance]*bench.Result{
		ins[0]: {Resolved: true, Attempts: 4, AttemptsResolved: 4},
		ins[1]: {Resolved: true, Attempts: 4, AttemptsResolved: 2},
		ins[2]: {Resolved: false, Attempts: 4, AttemptsResolved: 0},
		ins[3]: {Resolved: true, Attempts: 5, AttemptsResolved: 1},
		// ins[4]: no prediction
	}
	st, err := Attempts(ins, func(in *bench.Instance) *bench.Result { return results[in] })
	if err != nil {
		t.Fatal(err)
	}
	if st.K != 4 || st.All != 1 || st.Some != 2 || st.None != 2 || st.Instances != 5 {
		t.Fatalf("Attempts = %+v; want K 4, all 1, some 2, none 2 of 5", st)
	}
	// pass@1: (1 + 1/2 + 0 + 1/5 + 0) / 5; pass@4: (1 + 1 + 0 + (1 - C(4,4)/C(5,4)) + 0) / 5.
	want := []float64{(1 + 0.5 + 0.2) / 5, 0, 0, (2 + 0.8) / 5}
	for _, k := range []int{1, 4} {
		if math.Abs(st.PassAt[k-1]-want[k-1]) > 1e-12 {
			t.Errorf("pass@%d = %v, want %v", k, st.PassAt[k-1], want[k-1])
		}
	}
	for k := 1; k < st.K; k++ {
		if st.PassAt[k] < st.PassAt[k-1] {
			t.Errorf("pass@%d = %v is below pass@%d = %v", k+1, st.PassAt[k], k, st.PassAt[k-1])
		}
	}
	// Variances: 0, 2·2/(4·3), 0, 1·4/(5·4), and none without a prediction.
	if wantSD := math.Sqrt(1.0/3+0.2) / 5; math.Abs(st.SD-wantSD) > 1e-12 {
		t.Errorf("SD = %v, want %v", st.SD, wantSD)
	}
	// One attempt somewhere: no pass@k beyond the board's % resolved.
	results[ins[4]] = &bench.Result{Resolved: true}
	if st, _ := Attempts(ins, func(in *bench.Instance) *bench.Result { return results[in] }); st.K != 0 || st.PassAt != nil {
		t.Errorf("with a single-attempt result: %+v, want no attempt statistics", st)
	}
}
