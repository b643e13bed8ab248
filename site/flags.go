package site

import (
	"slices"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/templates"
)

// flagViews are a result's integrity flags, then what its prediction's
// code did at run time that the gold patch's did not (its audit kinds),
// with their explanations; nil for none, so that the thousands of clean
// rows allocate nothing.
func flagViews(r *bench.Result) []templates.Flag {
	if len(r.Flags) == 0 && len(r.Audit) == 0 {
		return nil
	}
	out := make([]templates.Flag, 0, len(r.Flags)+len(r.Audit))
	for _, n := range r.Flags {
		out = append(out, templates.Flag{Name: n, Explanation: bench.FlagExplanation(n)})
	}
	for _, k := range r.Audit {
		out = append(out, auditFlag(k))
	}
	return out
}

// auditPrefix names an audit kind shown among the flags.
const auditPrefix = "runtime:"

// auditFlag is an audit kind as a flag.
func auditFlag(kind string) templates.Flag {
	return templates.Flag{Name: auditPrefix + kind,
		Explanation: "at run time the prediction's code " + bench.AuditExplanation(kind) + ", which the gold patch's runs did not"}
}

// allFlags are the integrity flags, then the audit kinds as flags, in
// their canonical order.
func allFlags() []templates.Flag {
	var out []templates.Flag
	for _, f := range bench.IntegrityFlags() {
		out = append(out, templates.Flag{Name: f.Name, Explanation: f.Explanation})
	}
	for _, k := range bench.AuditKinds() {
		out = append(out, auditFlag(k.Name))
	}
	return out
}

// hasFlag says whether the result carries the flag (an audit kind with
// its prefix).
func hasFlag(r *bench.Result, name string) bool {
	if k, ok := strings.CutPrefix(name, auditPrefix); ok {
		return slices.Contains(r.Audit, k)
	}
	return r.HasFlag(name)
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
	for _, f := range allFlags() {
		if seen[f.Name] {
			out = append(out, f)
		}
	}
	return out
}

// flagCounts counts, per flag and split, the results of a system's
// per-instance submissions that carry it; flags no result carries are
// left out.
func flagCounts(subs []*bench.Submission) []templates.FlagCount {
	var out []templates.FlagCount
	for _, f := range allFlags() {
		fc := templates.FlagCount{Flag: f}
		seen := false
		for _, s := range subs {
			if !s.PerInstance() {
				continue
			}
			n := 0
			for i := range s.Results {
				if hasFlag(&s.Results[i], f.Name) {
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
