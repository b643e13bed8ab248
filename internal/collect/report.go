package collect

import (
	"fmt"
	"github.com/featbench/featbench/bench"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is a collection's report: what the data model's collection.json
// holds, written next to the dataset, and the time each stage took, which
// is printed but not written there (the same inputs give the same
// dataset, byte for byte).
type Report struct {
	bench.Collection
	Stages map[string][]StageTime `json:"stages"` // by repository
}

// The parts of a collection.json.
type (
	RepoReport = bench.CollectionRepo
	Drop       = bench.CollectionDrop
)

// StageTime is how long a stage took, and whether its output came from
// the work folder.
type StageTime struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"seconds"`
	Reused  bool    `json:"reused,omitempty"`
}

func (rep *Report) addStage(repo, name string, d time.Duration, reused bool) {
	if rep.Stages == nil {
		rep.Stages = map[string][]StageTime{}
	}
	rep.Stages[repo] = append(rep.Stages[repo], StageTime{Stage: name, Seconds: roundTo(d.Seconds(), 2), Reused: reused})
}

func roundTo(x float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(x*p+0.5)) / p
}

// drop records why a candidate stopped: both levels.
func (c *candidate) drop(stage string, level int, reason string) {
	c.Drops = append(c.Drops, Drop{File: c.File, Level: level, Stage: stage, Reason: reason})
	if level == 0 {
		c.dead = true
	}
}

// dropLevel records why one level of a candidate's instances stopped.
func (c *candidate) dropLevel(stage string, level int, reason string) {
	if c.lost == nil {
		c.lost = map[int]bool{}
	}
	c.lost[level] = true
	c.Drops = append(c.Drops, Drop{File: c.File, Level: level, Stage: stage, Reason: reason})
}

// alive reports whether a candidate is still going.
func (c *candidate) alive() bool { return !c.dead }

// has reports whether the candidate still gives an instance of a level.
func (c *candidate) has(level int) bool { return !c.dead && !c.lost[level] }

// WriteTable prints the report as the table the command ends with: per
// repository the funnel, then the reasons for each drop.
func WriteTable(w io.Writer, rep *Report) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "repository\ttest files\tpassing\tcandidates\ttraced\tclassified\twith P2P\tmasked\tverified\tkept\t")
	for _, r := range rep.Repos {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", r.Repository, r.TestFiles, r.Passing, r.Candidates,
			r.Traced, r.Classified, r.WithP2P, r.Masked, r.Verified, r.Kept)
	}
	tw.Flush()
	for _, r := range rep.Repos {
		if len(r.Drops) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: %d dropped\n", r.Repository, len(r.Drops))
		counts := map[string]int{}
		for _, d := range r.Drops {
			counts[d.Stage+": "+reasonKind(d.Reason)]++
		}
		keys := slices.Sorted(maps.Keys(counts))
		sort.SliceStable(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
		for _, k := range keys {
			fmt.Fprintf(w, "  %4d  %s\n", counts[k], k)
		}
	}
	for _, r := range rep.Repos {
		if st := rep.Stages[r.Repository]; len(st) > 0 {
			fmt.Fprintf(w, "\n%s: ", r.Repository)
			for i, s := range st {
				if i > 0 {
					fmt.Fprint(w, ", ")
				}
				fmt.Fprintf(w, "%s %.1f s", s.Stage, s.Seconds)
				if s.Reused {
					fmt.Fprint(w, " (stored)")
				}
			}
			fmt.Fprintln(w)
		}
	}
	if rep.Instances > 0 {
		fmt.Fprintf(w, "\n%d instances", rep.Instances)
		for _, s := range slices.Sorted(maps.Keys(rep.Splits)) {
			fmt.Fprintf(w, "; %s: %d", s, rep.Splits[s])
		}
		fmt.Fprintln(w)
	}
}

// reasonKind is a drop reason without its particulars (after a colon), to
// count drops by kind.
func reasonKind(s string) string {
	k, _, _ := strings.Cut(s, ": ")
	return k
}
