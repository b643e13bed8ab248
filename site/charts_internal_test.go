package site

import (
	"fmt"
	"testing"
)

// A log axis ticks at 1, 2 and 5 times powers of ten, or finer, so that
// a chart spanning less than a decade has at least four ticks (ECharts'
// own log axis gave two: 1M and 10M).
func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{2.1e6, 9e6, "[2e+06 3e+06 5e+06 7e+06 1e+07]"},
		{12e3, 45e3, "[10000 15000 20000 30000 50000]"},
		{1e4, 1e7, "[10000 100000 1e+06 1e+07]"},
		{3, 3, "[3]"},
	} {
		got := fmt.Sprint(logTicks(c.lo, c.hi))
		if c.lo == c.hi {
			if len(logTicks(c.lo, c.hi)) < 1 {
				t.Errorf("logTicks(%v, %v) = %s", c.lo, c.hi, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("logTicks(%v, %v) = %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}
