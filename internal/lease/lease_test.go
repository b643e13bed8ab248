package lease

import (
	"strconv"
	"testing"
	"time"
)

// TestLeftover: the one rule that says a container belongs to no live
// run, for each kind of labels a container may carry.
func TestLeftover(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tab := Table{Now: now, Leases: map[string]Record{
		"fresh":  {ID: "fresh", Renewed: now.Add(-Every)},
		"edge":   {ID: "edge", Renewed: now.Add(-Grace)},
		"stale":  {ID: "stale", Renewed: now.Add(-Grace - time.Second)},
		"future": {ID: "future", Renewed: now.Add(time.Minute)}, // a clock ahead: live
	}}
	unix := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	for _, c := range []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{Label: "fresh"}, false},
		{map[string]string{Label: "edge"}, false},
		{map[string]string{Label: "stale"}, true},
		{map[string]string{Label: "future"}, false},
		{map[string]string{Label: "gone"}, true},
		// A lease wins over an expiry: a renewed run may outlive it.
		{map[string]string{Label: "fresh", LabelExpires: unix(-time.Hour)}, false},
		{map[string]string{Label: "stale", LabelExpires: unix(time.Hour)}, true},
		{map[string]string{LabelExpires: unix(-time.Second)}, true},
		{map[string]string{LabelExpires: unix(0)}, false},
		{map[string]string{LabelExpires: unix(time.Hour)}, false},
		{map[string]string{LabelExpires: "soon"}, false},
		{map[string]string{}, false},
		{map[string]string{LabelProject: "1", LabelKind: "collect"}, false},
	} {
		if got := tab.Leftover(c.labels); got != c.want {
			t.Errorf("Leftover(%v) = %v, want %v", c.labels, got, c.want)
		}
	}
}
