package metrics

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
)

// The bootstrap of ranks the leaderboards show: 1,000 resamples from a
// fixed seed, so that every build of the same data gives the same ranges.
const (
	RankResamples = 1000
	RankSeed      = 18 // any fixed value; 18 is the issue that asked for ranges
	RankLevel     = 0.95
)

// RankRange is the range of ranks a system's results are consistent with:
// 1 is first. Two systems whose ranges overlap cannot be ordered by the
// data.
type RankRange struct{ Lo, Hi int }

// Overlaps reports whether the two ranges share a rank.
func (r RankRange) Overlaps(o RankRange) bool { return r.Lo <= o.Hi && o.Lo <= r.Hi }

// RankRanges bootstraps the systems' ranks over instances. scores[s][i]
// is system s's figure on instance i, in [0, 1]: 1 or 0 for resolved, the
// share of fail-to-pass tests passed for % passed; every system is scored
// on the same instances. Each resample draws len(scores[0]) instances with
// replacement from a PCG seeded with seed, totals each system's figure
// over them and ranks the totals: a system is ranked as high as one more
// than the systems strictly above it and as low as the systems at or
// above it, so tied totals count as every rank they share (identical
// systems span every rank). A system's range runs from the (1-level)/2
// quantile of its best ranks to the (1+level)/2 quantile of its worst,
// widened to hold its rank on the data as they are.
func RankRanges(scores [][]float64, resamples int, seed uint64, level float64) ([]RankRange, error) {
	S := len(scores)
	if S == 0 {
		return nil, nil
	}
	n := len(scores[0])
	if resamples < 1 || !(level > 0 && level < 1) {
		return nil, fmt.Errorf("rank bootstrap: %d resamples at level %v: want at least one, level in (0, 1)", resamples, level)
	}
	systems := make([]bootSystem, S)
	for s, row := range scores {
		if len(row) != n {
			return nil, fmt.Errorf("rank bootstrap: system %d has %d instances, system 0 has %d", s, len(row), n)
		}
		sys, err := newBootSystem(row)
		if err != nil {
			return nil, fmt.Errorf("rank bootstrap: system %d: %w", s, err)
		}
		systems[s] = sys
	}
	ranges := make([]RankRange, S)
	if n == 0 {
		// No instances: every system's total is 0, all tied.
		for s := range ranges {
			ranges[s] = RankRange{1, S}
		}
		return ranges, nil
	}

	r := newResample(n)
	totals := make([]float64, S)
	sorted := make([]float64, S)
	// best[s][r-1] and worst[s][r-1] count the resamples that ranked s
	// at best, at worst r.
	best, worst := make([]int, S*S), make([]int, S*S)

	// The data as they are: every instance once.
	r.reset()
	for i := range n {
		r.add(i)
	}
	observed := make([]RankRange, S)
	r.tally(systems, scores, totals, sorted, func(s, hi, lo int) { observed[s] = RankRange{hi, lo} })

	draw := newDraw(seed, n)
	for range resamples {
		r.reset()
		draw.into(r, n)
		r.tally(systems, scores, totals, sorted, func(s, hi, lo int) {
			best[s*S+hi-1]++
			worst[s*S+lo-1]++
		})
	}

	// At most cut resamples are left out at each end.
	cut := int(math.Floor((1-level)/2*float64(resamples) + 1e-9)) // 25 of 1,000 at 95%, not 24 by rounding
	for s := range ranges {
		lo, hi := 1, S
		for r, seen := 1, 0; r <= S; r++ {
			if seen += best[s*S+r-1]; seen > cut {
				lo = r
				break
			}
		}
		for r, seen := S, 0; r >= 1; r-- {
			if seen += worst[s*S+r-1]; seen > cut {
				hi = r
				break
			}
		}
		ranges[s] = RankRange{min(lo, observed[s].Lo), max(hi, observed[s].Hi)}
	}
	return ranges, nil
}

// bootSystem is one system's scores as the bootstrap reads them: the
// instances it scored 1 on as a bit vector, so that a total is a few
// AND-and-popcounts a word, and the rare fractional scores apart.
type bootSystem struct {
	ones []uint64
	frac []fracScore
}

type fracScore struct {
	i int
	v float64
}

func newBootSystem(row []float64) (bootSystem, error) {
	sys := bootSystem{ones: make([]uint64, (len(row)+63)/64)}
	for i, v := range row {
		switch {
		case v == 1:
			sys.ones[i/64] |= 1 << (i % 64)
		case v == 0:
		case v > 0 && v < 1:
			sys.frac = append(sys.frac, fracScore{i, v})
		default:
			return sys, fmt.Errorf("instance %d: score %v outside [0, 1]", i, v)
		}
	}
	return sys, nil
}

// resample is how often one resample drew each instance. counts holds
// the low byte of each count (room for 64 instances a word), and carries
// every instance whose count passed a multiple of 256, once each time
// (no real resample of more than a few instances has one). The counts
// are read as bit planes, plane b holding the instances whose count has
// bit b set, so that a system's total over the instances it scored 1 on
// is the sum over planes of popcount(plane & ones) << b.
type resample struct {
	counts  []byte // len: a multiple of 64
	carries []int
	planes  [8][]uint64
	used    int // planes[:used] hold the counts
}

func newResample(n int) *resample {
	words := (n + 63) / 64
	r := &resample{counts: make([]byte, 64*words)}
	for b := range r.planes {
		r.planes[b] = make([]uint64, words)
	}
	return r
}

func (r *resample) reset() {
	clear(r.counts)
	r.carries = r.carries[:0]
}

// add counts instance i once more.
func (r *resample) add(i int) {
	r.counts[i]++
	if r.counts[i] == 0 {
		r.carries = append(r.carries, i)
	}
}

// split writes the counts' bit planes: for each word, bit b of each of
// its 64 bytes gathered by a multiply (bit k of the product's top byte
// is bit 0 of byte k).
func (r *resample) split() {
	var top uint64
	for k := 0; k < len(r.counts); k += 8 {
		top |= binary.LittleEndian.Uint64(r.counts[k:])
	}
	used := 0
	for b := range 8 {
		if top&(0x0101010101010101<<b) != 0 {
			used = b + 1
		}
	}
	r.used = used
	for w := range r.planes[0] {
		c := r.counts[64*w : 64*w+64]
		for b := range used {
			var plane uint64
			for k := range 8 {
				x := binary.LittleEndian.Uint64(c[8*k:]) >> b & 0x0101010101010101
				plane |= x * 0x0102040810204080 >> 56 << (8 * k)
			}
			r.planes[b][w] = plane
		}
	}
}

// tally totals every system over the resample and reports each one's best
// and worst rank among them. scores are the systems' scores as given, for
// the carries.
func (r *resample) tally(systems []bootSystem, scores [][]float64, totals, sorted []float64, rank func(s, best, worst int)) {
	r.split()
	for s, sys := range systems {
		var whole uint64
		for b, p := range r.planes[:r.used] {
			p = p[:len(sys.ones)]
			var c int
			for w, x := range sys.ones {
				c += bits.OnesCount64(x & p[w])
			}
			whole += uint64(c) << b
		}
		t := float64(whole)
		for _, f := range sys.frac {
			t += float64(r.counts[f.i]) * f.v
		}
		for _, i := range r.carries {
			t += 256 * scores[s][i]
		}
		totals[s] = t
	}
	copy(sorted, totals)
	slices.Sort(sorted) // ascending
	S := len(totals)
	for s, t := range totals {
		// Systems at or below t, and strictly below it.
		atOrBelow := sort.SearchFloat64s(sorted, math.Nextafter(t, math.Inf(1)))
		below := sort.SearchFloat64s(sorted, t)
		rank(s, S-atOrBelow+1, S-below)
	}
}

// draw picks instances uniformly, with replacement: both 32-bit halves
// of each ChaCha8 word, each mapped to [0, n) by Lemire's
// multiply-and-shift with its rejection step, so that no instance is
// favoured.
type draw struct {
	rng    *rand.ChaCha8
	n      uint32
	thresh uint32 // products whose low half is below it are redrawn
}

func newDraw(seed uint64, n int) *draw {
	var key [32]byte
	for i := range 4 {
		binary.LittleEndian.PutUint64(key[8*i:], seed+uint64(i)*0x9e3779b97f4a7c15)
	}
	return &draw{rng: rand.NewChaCha8(key), n: uint32(n), thresh: -uint32(n) % uint32(n)}
}

// index maps 32 random bits to [0, n), or reports that they must be drawn
// again.
func (d *draw) index(x uint32) (int, bool) {
	m := uint64(x) * uint64(d.n)
	return int(m >> 32), uint32(m) >= d.thresh
}

// into adds n draws to r.
func (d *draw) into(r *resample, n int) {
	for k := 0; k < n; {
		x := d.rng.Uint64()
		if i, ok := d.index(uint32(x)); ok {
			r.add(i)
			k++
		}
		if i, ok := d.index(uint32(x >> 32)); ok && k < n {
			r.add(i)
			k++
		}
	}
}
