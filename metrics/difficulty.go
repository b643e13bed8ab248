package metrics

// Solved is how many of the systems evaluated on an instance resolved it.
type Solved struct{ By, Of int }

// Share is the share of the evaluated systems that resolved the instance;
// ok is false when none was evaluated on it.
func (s Solved) Share() (share float64, ok bool) {
	if s.Of == 0 {
		return 0, false
	}
	return float64(s.By) / float64(s.Of), true
}

// Unsolved reports whether systems were evaluated on the instance and
// none resolved it.
func (s Solved) Unsolved() bool { return s.Of > 0 && s.By == 0 }

// Difficulty counts a set of instances by how many systems solve them.
type Difficulty struct {
	Instances int // in the set
	Evaluated int // with at least one system evaluated on them
	// Of the evaluated: solved by no system, by some but not every one,
	// by every one.
	None, Some, All int
	// MeanShare is the mean over the evaluated instances of the share of
	// systems that solved each; 0 when none was evaluated.
	MeanShare float64
}

// Difficulties summarises the instances' counts.
func Difficulties(solved []Solved) Difficulty {
	d := Difficulty{Instances: len(solved)}
	var sum float64
	for _, s := range solved {
		share, ok := s.Share()
		if !ok {
			continue
		}
		d.Evaluated++
		sum += share
		switch s.By {
		case 0:
			d.None++
		case s.Of:
			d.All++
		default:
			d.Some++
		}
	}
	if d.Evaluated > 0 {
		d.MeanShare = sum / float64(d.Evaluated)
	}
	return d
}
