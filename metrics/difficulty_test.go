package metrics

import (
	"math"
	"testing"
)

func TestDifficulties(t *testing.T) {
	got := Difficulties([]Solved{{0, 4}, {2, 4}, {4, 4}, {0, 0}, {1, 2}, {0, 2}})
	want := Difficulty{Instances: 6, Evaluated: 5, None: 2, Some: 2, All: 1}
	mean := (0 + 0.5 + 1 + 0.5 + 0) / 5
	if math.Abs(got.MeanShare-mean) > 1e-15 {
		t.Errorf("MeanShare = %v, want %v", got.MeanShare, mean)
	}
	got.MeanShare = 0
	if got != want {
		t.Errorf("Difficulties = %+v, want %+v", got, want)
	}
	if d := Difficulties([]Solved{{0, 0}}); d.Evaluated != 0 || d.None != 0 || d.MeanShare != 0 {
		t.Errorf("an instance no system was evaluated on: %+v, want it neither evaluated nor unsolved", d)
	}
	if !(Solved{0, 3}).Unsolved() || (Solved{0, 0}).Unsolved() || (Solved{1, 3}).Unsolved() {
		t.Error("Unsolved: want true only for evaluated instances no system resolved")
	}
}
