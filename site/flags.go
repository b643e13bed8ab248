package site

import (
	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/templates"
)

// flagViews are a result's integrity flags with their explanations; nil
// for none, so that the thousands of clean rows allocate nothing.
func flagViews(names []string) []templates.Flag {
	if len(names) == 0 {
		return nil
	}
	out := make([]templates.Flag, 0, len(names))
	for _, n := range names {
		out = append(out, templates.Flag{Name: n, Explanation: bench.FlagExplanation(n)})
	}
	return out
}

// flagLegend is the legend of a table whose rows show these flag lists:
// every flag that appears, once, in the canonical order.
func flagLegend(lists ...[]templates.Flag) []templates.Flag {
	seen := map[string]bool{}
	for _, l := range lists {
		for _, f := range l {
			seen[f.Name] = true
		}
	}
	var out []templates.Flag
	for _, f := range bench.IntegrityFlags() {
		if seen[f.Name] {
			out = append(out, templates.Flag{Name: f.Name, Explanation: f.Explanation})
		}
	}
	return out
}

// flagCounts counts, per flag and split, the results of a system's
// per-instance submissions that carry it; flags no result carries are
// left out.
func flagCounts(subs []*bench.Submission) []templates.FlagCount {
	var out []templates.FlagCount
	for _, f := range bench.IntegrityFlags() {
		fc := templates.FlagCount{Flag: templates.Flag{Name: f.Name, Explanation: f.Explanation}}
		seen := false
		for _, s := range subs {
			if !s.PerInstance() {
				continue
			}
			n := 0
			for i := range s.Results {
				if s.Results[i].HasFlag(f.Name) {
					n++
				}
			}
			seen = seen || n > 0
			fc.Splits = append(fc.Splits, templates.SplitCount{Split: s.Split, N: n, Of: len(s.Results)})
		}
		if seen {
			out = append(out, fc)
		}
	}
	return out
}
