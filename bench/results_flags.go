package bench

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/featbench/featbench/internal/tomlstrict"
)

// Integrity flags: what cmd/eval noticed in a prediction that a reader of
// its score should know (internal/integrity computes them). A flag is a
// signal, not a verdict: the grade stands, and the site shows the flag
// beside it. Each is a short stable string, written in a result's
// "flags" list in this order.
const (
	FlagTouchesTests     = "touches-tests"
	FlagReferencesPytest = "references-pytest"
	FlagReadsGit         = "reads-git"
	FlagImportsOriginal  = "imports-original"
	FlagGoldIdentical    = "gold-identical"
)

// FlagInfo is an integrity flag and what it means, in one line.
type FlagInfo struct {
	Name, Explanation string
}

// IntegrityFlags lists every integrity flag in its canonical order, with
// its explanation. A new slice each call: callers may keep or change it.
func IntegrityFlags() []FlagInfo {
	return []FlagInfo{
		{FlagTouchesTests, "the prediction adds, changes or deletes a test file or pytest's configuration (conftest.py, pytest.ini, tox.ini, sitecustomize, .pth, ...)"},
		{FlagReferencesPytest, "the prediction's added lines reference pytest's internals: _pytest, hook functions, the plugin manager, test reports or JUnit XML"},
		{FlagReadsGit, "the prediction's added lines reach for the repository's git history (.git, git show, git log, ORIG_HEAD, HEAD~, ...)"},
		{FlagImportsOriginal, "the level 2 package imports the original project's package instead of implementing the feature"},
		{FlagGoldIdentical, "the prediction's changed lines are (near-)identical to the gold patch's"},
	}
}

// FlagExplanation returns the one-line explanation of a flag, or "" for
// a name that is not an integrity flag.
func FlagExplanation(name string) string {
	for _, f := range IntegrityFlags() {
		if f.Name == name {
			return f.Explanation
		}
	}
	return ""
}

// flagRank is a flag's place in the canonical order, -1 when unknown.
func flagRank(name string) int {
	for i, f := range IntegrityFlags() {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// internFlag shares the flags' strings between results.
func internFlag(b []byte) string {
	for _, f := range IntegrityFlags() {
		if string(b) == f.Name {
			return f.Name
		}
	}
	return ""
}

// HasFlag reports whether the result carries the integrity flag.
func (r *Result) HasFlag(name string) bool { return slices.Contains(r.Flags, name) }

// checkFlags checks a result's flags: known names, each once, in the
// canonical order (so that one set of flags is written one way).
func checkFlags(path string, line int, res *Result, ps Problems) Problems {
	prev := -1
	for i, f := range res.Flags {
		field := fmt.Sprintf("flags[%d]", i)
		r := flagRank(f)
		switch {
		case r < 0:
			names := make([]string, 0, 5)
			for _, k := range IntegrityFlags() {
				names = append(names, k.Name)
			}
			ps.Add(path, line, field, "is %s; want one of %s", tomlstrict.Quote(f), strings.Join(quoteAll(names), ", "))
			return ps
		case r == prev:
			ps.Add(path, line, field, "%s is listed twice", tomlstrict.Quote(f))
			return ps
		case r < prev:
			ps.Add(path, line, field, "%s comes after %s: list flags in the order %s", tomlstrict.Quote(f), tomlstrict.Quote(res.Flags[i-1]), strings.Join(flagNames(), ", "))
			return ps
		}
		prev = r
	}
	return ps
}

func flagNames() []string {
	var out []string
	for _, f := range IntegrityFlags() {
		out = append(out, f.Name)
	}
	return out
}

// goldShareNum/goldShareDen is the share of a submission's predictions
// above which a submission whose results say they are the gold patch must
// be a reference row: more than two thirds. Not "every one", so that a few
// edited predictions cannot slip a copy of the gold patches onto the
// leaderboard; not lower, because on small features a system can write
// the gold patch near verbatim (the example's tiny-agent does on 3 of its
// 5): those instances carry the flag on the site, each one.
const goldShareNum, goldShareDen = 2, 3

// checkGoldCopies refuses a ranked submission whose predictions are the
// gold patches: more than two thirds of its results with a prediction (every
// result but those of an empty patch) carry FlagGoldIdentical. Such a
// submission is the gold baseline and can only be shown as a reference.
func checkGoldCopies(s *Submission, ps Problems) Problems {
	if s.Reference || len(s.Results) == 0 {
		return ps
	}
	predicted, gold := 0, 0
	for i := range s.Results {
		r := &s.Results[i]
		if slices.Contains(r.FailureModes, emptyPatchMode) {
			continue
		}
		predicted++
		if r.HasFlag(FlagGoldIdentical) {
			gold++
		}
	}
	if predicted == 0 || gold*goldShareDen <= predicted*goldShareNum {
		return ps
	}
	mf := filepath.Join(s.Dir, MetadataFile)
	s.metaLines.Add(&ps, mf, "reference",
		"is false but %d of the %d predictions in %s are flagged %s (near-identical to the gold patch): a submission of the gold patches is a baseline, not a ranked system; set reference = true",
		gold, predicted, ResultsFile, tomlstrict.Quote(FlagGoldIdentical))
	return ps
}

// emptyPatchMode is the failure mode cmd/eval records for an empty
// prediction: such a result has no prediction to compare with the gold.
const emptyPatchMode = "EmptyPatch"

// AuditKinds are the kinds of what a prediction's code may do at run
// time that cmd/eval's audit hook records (internal/pytest's audit.py),
// with what each means, in sorted order. A result's "audit" lists those
// its prediction did and the gold patch's code did not: like a flag, a
// signal for a reader, not a verdict (opening a test file or replacing a
// test's code is graded as tampering on its own).
func AuditKinds() []FlagInfo {
	return []FlagInfo{
		{"code", "made code objects, or functions from code, at run time"},
		{"code-swap", "replaced a function's code or default arguments"},
		{"ctypes", "used ctypes: raw memory and C functions"},
		{"frames", "reached stack frames: sys._getframe, a traceback's or generator's frame, other threads' frames"},
		{"gc", "listed the garbage collector's objects, referrers or referents"},
		{"process", "started a process: fork, exec, spawn, subprocess"},
		{"signal", "sent a signal"},
		{"test-file", "opened a test file"},
		{"tracing", "set a trace or profile function: sys.settrace, sys.setprofile, sys.monitoring"},
	}
}

// AuditExplanation returns what an audit kind means, or "" for a name
// that is not one.
func AuditExplanation(kind string) string {
	for _, k := range AuditKinds() {
		if k.Name == kind {
			return k.Explanation
		}
	}
	return ""
}

// internAudit shares the audit kinds' strings between results.
func internAudit(b []byte) string {
	for _, k := range AuditKinds() {
		if string(b) == k.Name {
			return k.Name
		}
	}
	return ""
}

// checkAudit checks a result's audit kinds: known names, each once, sorted.
func checkAudit(path string, line int, res *Result, ps Problems) Problems {
	for i, k := range res.Audit {
		field := fmt.Sprintf("audit[%d]", i)
		switch {
		case AuditExplanation(k) == "":
			var names []string
			for _, a := range AuditKinds() {
				names = append(names, a.Name)
			}
			ps.Add(path, line, field, "is %s; want one of %s", tomlstrict.Quote(k), strings.Join(quoteAll(names), ", "))
			return ps
		case i > 0 && k <= res.Audit[i-1]:
			ps.Add(path, line, field, "%s comes after %s: list audit kinds sorted, each once", tomlstrict.Quote(k), tomlstrict.Quote(res.Audit[i-1]))
			return ps
		}
	}
	return ps
}
