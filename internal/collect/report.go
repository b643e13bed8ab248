package collect

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
)

// Report is a collection's report: what the data model's collection.json
// holds, written next to the dataset, and the time each stage took, which
// is printed but not written there (the same inputs give the same
// dataset, byte for byte).
type Report struct {
	bench.Collection
	Stages map[string][]StageTime `json:"stages"` // by repository (and method, see stagesKey)
	// filtered: the full-set filters ran, so Kept counts are known (a
	// stage run alone writes no dataset, and knows none).
	filtered bool
}

// Failed lists the repositories that failed, with the stage.
func (rep *Report) Failed() []string {
	var out []string
	for _, r := range rep.Repos {
		if r.Failure != nil {
			out = append(out, r.Repository+" (stage "+r.Failure.Stage+")")
		}
	}
	return out
}

// The parts of a collection.json.
type (
	RepoReport = bench.CollectionRepo
	Drop       = bench.CollectionDrop
	Failure    = bench.CollectionFailure
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

// stagesKey is the key of a repository's stage times in Report.Stages:
// its name, and the method when one repository is collected by a
// history-based method too (a table each).
func stagesKey(repo, method string) string {
	if method == "" || method == config.MethodTestDriven {
		return repo
	}
	return repo + " (method " + method + ")"
}

func roundTo(x float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(x*p+0.5)) / p
}

// drop records why a candidate (level 0) or one level of its instances
// (1 or 2) stopped at a stage. The reason is made one line here, whatever
// the stage gave (see reason), so that no stage can put a log into the
// report.
func (r *repoRun) drop(c *candidate, stage string, level int, text string) {
	subject := c.File
	if level > 0 {
		subject += fmt.Sprintf(" (level %d)", level)
	}
	c.Drops = append(c.Drops, Drop{File: c.File, Level: level, Stage: stage, Reason: r.reason(stage, subject+" dropped", text)})
	if level == 0 {
		c.dead = true
		return
	}
	if c.lost == nil {
		c.lost = map[int]bool{}
	}
	c.lost[level] = true
}

// fail records why the repository stopped at a stage: collection goes on
// with the other repositories, and the report says where this one
// stopped and why, in one line.
func (r *repoRun) fail(stage string, err error) {
	r.res.report.Failure = &Failure{Stage: stage, Reason: r.reason(stage, r.rc.Repository+" failed", err.Error())}
}

// maxReason bounds a reason, in bytes: a line of the report, not a log.
const maxReason = 300

// reason turns what a stage says about a drop or a failure into its
// reason: one line (see summary). When the line is not all of the text
// (pytest's output, an install's), the whole text is appended to the
// stage's log in the work folder, and the line says so. Paths in the work
// folder are given relative to it, so that the same inputs give the same
// report on any machine.
func (r *repoRun) reason(stage, subject, text string) string {
	return r.w.reason(stage, subject, text, r.logf)
}

// reason is repoRun.reason for any method's run in this work folder.
func (w work) reason(stage, subject, text string, logf func(string, ...any)) string {
	text = strings.ReplaceAll(text, w.dir+string(filepath.Separator), "")
	line, whole := summary(text)
	if whole {
		return line
	}
	log := stage + ".log"
	entry := fmt.Sprintf("=== %s at stage %s:\n%s\n\n", subject, stage, strings.TrimRight(text, "\n"))
	if err := appendText(w.file(log), entry); err != nil {
		logf("the whole reason could not be kept: %v", err)
		return line
	}
	return line + " (whole text: " + log + " in the work folder)"
}

// appendText appends text to a file in one write.
func appendText(path string, text string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// summary is text as one line of at most maxReason bytes: its first line
// that holds anything, with control and bidirectional formatting
// characters made spaces and runs of spaces one. whole reports whether
// that line is all the text says.
func summary(text string) (line string, whole bool) {
	text = strings.ToValidUTF8(text, "\uFFFD")
	var lines []string
	for _, l := range strings.FieldsFunc(text, lineBreak) {
		words := strings.Fields(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || unicode.In(r, unicode.Bidi_Control, unicode.Zl, unicode.Zp) {
				return ' '
			}
			return r
		}, l))
		if len(words) > 0 {
			lines = append(lines, strings.Join(words, " "))
		}
	}
	if len(lines) == 0 {
		return "no reason given", true // nothing more to keep
	}
	line, whole = lines[0], len(lines) == 1
	if len(line) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line, whole = line[:cut]+"…", false
	}
	return line, whole
}

// lineBreak reports the characters that end a line, for summary.
func lineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// alive reports whether a candidate is still going.
func (c *candidate) alive() bool { return !c.dead }

// has reports whether the candidate still gives an instance of a level.
func (c *candidate) has(level int) bool { return !c.dead && !c.lost[level] }

// WriteTable prints the report as the table the command ends with: per
// repository the funnel, then the reasons for each drop.
func WriteTable(w io.Writer, rep *Report) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	if slices.ContainsFunc(rep.Repos, func(r *RepoReport) bool { return r.Method == "" }) {
		fmt.Fprintln(tw, "repository\ttest files\tpassing\tcandidates\ttraced\tclassified\twith P2P\tmasked\tverified\tkept\t")
	}
	for _, r := range rep.Repos {
		if r.Method != "" {
			continue // a history-based method's funnel, below
		}
		// Kept is a count only once the filters ran on what the
		// repository gave; a failed one gave nothing.
		kept := "-"
		switch {
		case r.Failure != nil:
			kept = "failed"
		case rep.filtered:
			kept = fmt.Sprint(r.Kept)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", r.Repository, r.TestFiles, r.Passing, r.Candidates,
			r.Traced, r.Classified, r.WithP2P, r.Masked, r.Verified, kept)
	}
	tw.Flush()
	for _, r := range rep.Repos {
		if r.Method == "" {
			continue
		}
		fmt.Fprintf(w, "\n%s (method %s):", r.Repository, r.Method)
		for i, s := range r.Funnel {
			sep := " "
			if i > 0 {
				sep = ", "
			}
			fmt.Fprintf(w, "%s%s %d", sep, s.Step, s.Count)
		}
		if r.Failure != nil {
			fmt.Fprint(w, ", failed")
		}
		fmt.Fprintln(w)
	}
	if len(rep.Failed()) > 0 {
		fmt.Fprintln(w)
		for _, r := range rep.Repos {
			if f := r.Failure; f != nil {
				fmt.Fprintf(w, "%s: failed at stage %s: %s\n", r.Repository, f.Stage, f.Reason)
			}
		}
	}
	for _, r := range rep.Repos {
		if len(r.Drops) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: %d dropped\n", stagesKey(r.Repository, r.Method), len(r.Drops))
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
		if st := rep.Stages[stagesKey(r.Repository, r.Method)]; len(st) > 0 {
			fmt.Fprintf(w, "\n%s: ", stagesKey(r.Repository, r.Method))
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
