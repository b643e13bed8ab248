package tokens

import "testing"

func TestEstimate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		// def(1) " parse"(2: the space joins) _(1) header(2) ((1) x(1) )(1) :(1) \n(1) "    "(1) return(2) " x"(1)
		{"def parse_header(x):\n    return x", 15},
		{"", 0},
		{"12345", 2},             // 123, 45
		{"a  b", 3},              // a, two spaces, b
		{"héllo wörld", 4},       // 2 + 2
		{"\n\n\n", 1},            // one run of newlines
		{"!= <= ...", 2 + 2 + 3}, // each punctuation character alone; single spaces join
	} {
		if got := Estimate(tc.s); got != tc.want {
			t.Errorf("Estimate(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}
