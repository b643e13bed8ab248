package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomScores is S systems on n instances: resolved (0 or 1) at a rate
// of its own each, or, with frac, a share of tests passed part of the time.
func randomScores(rng *rand.Rand, S, n int, frac bool) [][]float64 {
	out := make([][]float64, S)
	for s := range out {
		rate := rng.Float64()
		out[s] = make([]float64, n)
		for i := range out[s] {
			switch {
			case frac && rng.IntN(3) == 0:
				out[s][i] = float64(rng.IntN(7)+1) / 8
			case rng.Float64() < rate:
				out[s][i] = 1
			}
		}
	}
	return out
}

// Property: systems with the same score on every instance cannot be told
// apart, so each one's range spans every rank.
func TestRankRangesIdenticalSystemsSpanAllRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 60 {
		S, n := 2+rng.IntN(12), 1+rng.IntN(300)
		one := randomScores(rng, 1, n, trial%2 == 1)[0]
		scores := make([][]float64, S)
		for s := range scores {
			scores[s] = slices.Clone(one)
		}
		got, err := RankRanges(scores, 200, uint64(trial), RankLevel)
		if err != nil {
			t.Fatal(err)
		}
		for s, r := range got {
			if r != (RankRange{1, S}) {
				t.Fatalf("trial %d: %d identical systems on %d instances: system %d ranges over %v, want [1, %d]", trial, S, n, s, r, S)
			}
		}
	}
}

// Property: a system at least as good as every other on every instance,
// and strictly better on many, is first in every resample.
func TestRankRangesDominantSystemIsFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 60 {
		S, n := 2+rng.IntN(12), 200+rng.IntN(800)
		scores := randomScores(rng, S, n, trial%2 == 1)
		// The dominant system: every other's best on each instance, and
		// 1 on a random tenth of the instances or more besides.
		dom := make([]float64, n)
		for i := range dom {
			for _, row := range scores {
				dom[i] = max(dom[i], row[i])
			}
		}
		better := 0
		for i := range dom {
			if dom[i] < 1 && rng.IntN(5) == 0 {
				dom[i] = 1
				better++
			}
		}
		if better < 30 {
			continue // not "many": a resample could miss them all
		}
		at := rng.IntN(S + 1)
		scores = slices.Insert(scores, at, dom)
		got, err := RankRanges(scores, 300, uint64(trial), RankLevel)
		if err != nil {
			t.Fatal(err)
		}
		if got[at] != (RankRange{1, 1}) {
			t.Fatalf("trial %d: a system better on %d of %d instances and never worse ranges over %v, want [1, 1]", trial, better, n, got[at])
		}
	}
}

// Systems far apart get single ranks; two close ones share theirs.
func TestRankRangesSeparateAndClose(t *testing.T) {
	const n = 1000
	rates := []float64{0.9, 0.5, 0.502, 0.1}
	scores := make([][]float64, len(rates))
	for s, rate := range rates {
		scores[s] = make([]float64, n)
		for i := range int(rate * n) {
			scores[s][i] = 1
		}
	}
	// The two close systems resolve different instances: the even ones,
	// and the odd ones with two even ones besides.
	for i := range n {
		scores[1][i], scores[2][i] = float64(1-i%2), float64(i%2)
	}
	scores[2][0], scores[2][2] = 1, 1
	got, err := RankRanges(scores, RankResamples, RankSeed, RankLevel)
	if err != nil {
		t.Fatal(err)
	}
	want := []RankRange{{1, 1}, {2, 3}, {2, 3}, {4, 4}}
	if !slices.Equal(got, want) {
		t.Errorf("ranges %v, want %v", got, want)
	}
	if !got[1].Overlaps(got[2]) || got[0].Overlaps(got[1]) || got[2].Overlaps(got[3]) {
		t.Errorf("Overlaps disagrees with the ranges %v", got)
	}
}

// The same data and seed give the same ranges; the range always holds
// the rank on the data as they are.
func TestRankRangesReproducibleAndHoldObserved(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 30 {
		S, n := 1+rng.IntN(10), 1+rng.IntN(200)
		scores := randomScores(rng, S, n, trial%2 == 0)
		a, err := RankRanges(scores, 100, 7, RankLevel)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := RankRanges(scores, 100, 7, RankLevel)
		if !slices.Equal(a, b) {
			t.Fatalf("trial %d: two runs with one seed gave %v and %v", trial, a, b)
		}
		totals := make([]float64, S)
		for s, row := range scores {
			for _, v := range row {
				totals[s] += v
			}
		}
		for s, r := range a {
			above, atOrAbove := 0, 0
			for _, u := range totals {
				if u > totals[s]+1e-9 {
					above++
				}
				if u >= totals[s]-1e-9 {
					atOrAbove++
				}
			}
			if r.Lo < 1 || r.Hi > S || r.Lo > above+1 || r.Hi < atOrAbove {
				t.Fatalf("trial %d: system %d (total %v) ranges over %v, which does not hold its ranks %d–%d on the data", trial, s, totals[s], r, above+1, atOrAbove)
			}
		}
	}
}

// A resample's totals, from bit planes and popcounts, are the plain sums
// of count × score; the planes are cleared between resamples.
func TestRankTotalsMatchPlainSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for trial := range 40 {
		S, n := 1+rng.IntN(6), 1+rng.IntN(400)
		scores := randomScores(rng, S, n, true)
		systems := make([]bootSystem, S)
		for s, row := range scores {
			var err error
			if systems[s], err = newBootSystem(row); err != nil {
				t.Fatal(err)
			}
		}
		r := newResample(n)
		r.reset()
		counts := make([]uint32, n)
		add := func(i int) {
			counts[i]++
			r.add(i)
		}
		for range n {
			add(rng.IntN(n))
		}
		for range 40 + 256*(trial%3) { // counts of six bits, and beyond a byte
			add(n / 2)
		}
		totals, sorted := make([]float64, S), make([]float64, S)
		r.tally(systems, scores, totals, sorted, func(int, int, int) {})
		for s, row := range scores {
			want := 0.0
			for i, v := range row {
				want += float64(counts[i]) * v
			}
			if math.Abs(totals[s]-want) > 1e-9 {
				t.Fatalf("trial %d: system %d totals %v, want %v", trial, s, totals[s], want)
			}
		}
		r.reset()
		clear(counts)
		add(0)
		r.tally(systems, scores, totals, sorted, func(int, int, int) {})
		for s, row := range scores {
			if totals[s] != row[0] {
				t.Fatalf("trial %d: after a reset, system %d totals %v over instance 0 alone, want %v", trial, s, totals[s], row[0])
			}
		}
	}
}

// Draws cover [0, n) evenly: every instance about as often, none beyond.
func TestDrawUniform(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 1000, 4000} {
		const per = 100 // counts stay below a byte's 256
		r := newResample(n)
		newDraw(42, n).into(r, n*per)
		for i, c := range r.counts {
			switch {
			case i >= n && c != 0:
				t.Errorf("n=%d: drew instance %d", n, i)
			case i < n && math.Abs(float64(c)-per) > 6*math.Sqrt(per):
				// Binomial(n·per, 1/n): within 6 standard deviations.
				t.Errorf("n=%d: instance %d drawn %d times, want about %d", n, i, c, per)
			}
		}
		if len(r.carries) != 0 {
			t.Errorf("n=%d: %d counts passed 255", n, len(r.carries))
		}
	}
}

func TestRankRangesEdges(t *testing.T) {
	if got, err := RankRanges(nil, 10, 1, RankLevel); err != nil || got != nil {
		t.Errorf("no systems: %v, %v", got, err)
	}
	got, err := RankRanges([][]float64{{1}, {0}}, 10, 1, RankLevel)
	if err != nil || !slices.Equal(got, []RankRange{{1, 1}, {2, 2}}) {
		t.Errorf("one instance, one resolved: %v, %v; want [1 1] [2 2]", got, err)
	}
	got, err = RankRanges([][]float64{{}, {}}, 10, 1, RankLevel)
	if err != nil || !slices.Equal(got, []RankRange{{1, 2}, {1, 2}}) {
		t.Errorf("no instances: %v, %v; want both [1 2]", got, err)
	}
	for _, bad := range [][][]float64{{{1, 0}, {1}}, {{1.5}}, {{-0.1}}, {{math.NaN()}}} {
		if _, err := RankRanges(bad, 10, 1, RankLevel); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, err := RankRanges([][]float64{{1}}, 0, 1, RankLevel); err == nil {
		t.Error("no resamples: no error")
	}
	if _, err := RankRanges([][]float64{{1}}, 10, 1, 1); err == nil {
		t.Error("level 1: no error")
	}
}

// BenchmarkRankRanges is the bootstrap at the build benchmark's size:
// 4,000 instances, 50 systems resolving 5–60% of them, 1,000 resamples.
//
//	go test ./metrics -run '^$' -bench RankRanges
func BenchmarkRankRanges(b *testing.B) {
	for _, frac := range []bool{false, true} {
		name := "resolved"
		if frac {
			name = "passed"
		}
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(10, 11))
			scores := make([][]float64, 50)
			for s := range scores {
				rate := 0.05 + 0.55*float64(s)/50
				scores[s] = make([]float64, 4000)
				for i := range scores[s] {
					switch {
					case rng.Float64() < rate:
						scores[s][i] = 1
					case frac && rng.IntN(2) == 0:
						scores[s][i] = float64(rng.IntN(9)+1) / 10
					}
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := RankRanges(scores, RankResamples, RankSeed, RankLevel); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
