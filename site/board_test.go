package site_test

import (
	"testing"
)

// TestFilePercentLeavesOutLevelTwo: on the example's lite board the gold
// patch touches every gold file of its level 1 instances; its level 2
// results give no file_recall (nothing to localise when building from
// scratch) and must not count as 0 (the board showed 50.0).
func TestFilePercentLeavesOutLevelTwo(t *testing.T) {
	out, _ := buildShipped(t)
	page := read(t, out, "leaderboard/example/v2/lite/index.html")
	if got := boardCells(t, page, "Gold patch")["file"][0]; got != "100.0" {
		t.Errorf("the gold patch's File %% on the example lite board is %q, want 100.0", got)
	}
}
