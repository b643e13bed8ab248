package pytest

import (
	"bytes"
	"fmt"
	"strings"
)

// Integrity is whether a run's outcomes can be believed. The code under
// test shares pytest's process, so it can change how outcomes are made and
// reported; what it changes is seen here, from the plugin's checks (see
// plugin.py's _Guard) and from the channels that report outcomes
// disagreeing: the plugin's stream (through a pipe the tests cannot
// rewrite, when the harness's runner started pytest), the JUnit XML, the
// -rA summary and the exit status.
type Integrity struct {
	// Checked says the plugin checked pytest's machinery at least once.
	Checked bool `json:"checked"`
	// Problems is the tampering seen; empty when none was.
	Problems []string `json:"problems,omitempty"`
	// DiskFull says the tests filled a folder they may write to (the
	// runner's last word, written as root after pytest ended).
	DiskFull bool `json:"disk_full,omitempty"`
	// Unverified says why the run's channels cannot be believed although
	// no check saw pytest's machinery change: a stream whose end is not
	// the runner's, a report twice, a line after the session's end, a
	// second summary, a JUnit XML missing or cut short, a death by a
	// signal the harness did not send, an exit status that contradicts the
	// outcomes. The harness runs such a file again in a fresh container.
	// Only runs of a runner that ends its stream (runner.py's "end") are
	// held to this; earlier logs are read as they were.
	Unverified []string `json:"unverified,omitempty"`
	// Audit is what the audit hook recorded of the code under test.
	Audit   []AuditRecord `json:"audit,omitempty"`
	trusted map[string]bool
	tests   []string // every test id of the stream, in order
}

// Trusted reports whether the outcome of id (a node id, or a file or class
// id standing for the tests under it) was reported with pytest's machinery
// intact: an intact check followed every report of it. A run killed before
// its next check leaves its last outcomes untrusted.
func (g Integrity) Trusted(id string) bool {
	if g.trusted[id] {
		return true
	}
	n := 0
	for _, t := range g.tests {
		if t == id || strings.HasPrefix(t, id+"::") {
			if !g.trusted[t] {
				return false
			}
			n++
		}
	}
	return n > 0
}

// Verify reads in's channels for tampering. rep is Parse's report of in.
func Verify(in Input, rep *Report) Integrity {
	s := parseStream(in.JSONL)
	g := Integrity{Checked: s.checks > 0, DiskFull: s.diskFull, trusted: s.trusted, tests: s.order, Audit: s.audit}
	if s.end != nil {
		g.Unverified = unverified(in, rep, &s)
	}
	bad := func(format string, args ...any) {
		if len(g.Problems) < 20 {
			g.Problems = append(g.Problems, fmt.Sprintf(format, args...))
		}
	}
	for _, p := range s.problems {
		bad("pytest's machinery changed: %s", p)
	}
	for _, d := range rep.Disagreements {
		bad("%s: the JUnit XML says %s, the -rA summary %s", d.ID, orNone(d.JUnit), orNone(d.Summary))
	}
	// The stream against the JUnit XML, test by test.
	j := parseJUnit(in.JUnitXML)
	inXML := map[string]bool{}
	for i := range j.cases {
		c := &j.cases[i]
		id, ok := c.prop(propNodeID)
		if !ok {
			continue
		}
		r, collector := caseResult(c)
		if collector {
			continue
		}
		inXML[id] = true
		st := s.tests[id]
		if st == nil {
			if s.present {
				bad("%s: in the JUnit XML (%s) but not in the plugin's stream", id, r.status)
			}
			continue
		}
		sr, ok := st.result()
		if ok && failing(sr.status) != failing(r.status) {
			bad("%s: the JUnit XML says %s, the plugin's stream %s", id, r.status, sr.status)
		}
	}
	if j.complete {
		for _, id := range s.order {
			if r, ok := s.tests[id].result(); ok && !inXML[id] {
				bad("%s: in the plugin's stream (%s) but not in the complete JUnit XML", id, r.status)
			}
		}
	}
	if in.ExitCode == ExitHarnessChanged && bytes.Contains(in.Stderr, []byte(bootChanged)) {
		// Root refused to start the runner: someone else had written the
		// harness's files (boot.py says which).
		bad("%s", firstLineWith(in.Stderr, bootChanged))
	}
	// pytest exits 0 only at the end of a session in which nothing failed.
	if in.ExitCode == 0 && !in.TimedOut {
		if !s.finished || s.checks == 0 {
			bad("pytest exited 0, but its session did not reach the end the plugin reports")
		}
		for _, id := range s.order {
			if r, ok := s.tests[id].result(); ok && failing(r.status) {
				bad("pytest exited 0, but %s %s", id, r.status)
				break
			}
		}
		for _, c := range s.collect {
			if c.Outcome == "failed" {
				bad("pytest exited 0, but collecting %s failed", c.NodeID)
				break
			}
		}
	}
	return g
}

// failing is what every channel agrees on when nothing was tampered with:
// whether a test failed, whatever the words for it.
func failing(s Status) bool {
	switch s {
	case StatusFailed, StatusError, StatusTimeout, StatusCollectionError:
		return true
	}
	return false
}

func orNone(s Status) string {
	if s == "" {
		return "nothing"
	}
	return string(s)
}

// bootChanged starts boot.py's line when the harness's files were changed.
const bootChanged = "featbench_boot: the harness's files were changed: "

// firstLineWith is the first line of out that holds s, cut to 500 bytes.
func firstLineWith(out []byte, s string) string {
	i := bytes.Index(out, []byte(s))
	line := out[i:]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	if len(line) > 500 {
		line = line[:500]
	}
	return strings.ToValidUTF8(string(line), "\uFFFD")
}

// unverified lists what in a run of the ending runner cannot be believed
// (see Integrity.Unverified).
func unverified(in Input, rep *Report, s *stream) []string {
	var out []string
	add := func(format string, args ...any) {
		if len(out) < 20 {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	e := s.end
	if !e.last || e.streamBytes+1 != e.at || s.ends > 1 {
		add("the stream's last line is not the runner's end alone (%d end lines; the last counts %d bytes before it and stands at byte %d)", s.ends, e.streamBytes, e.at)
	}
	for _, d := range s.dups {
		add("%s reported twice", d)
	}
	for _, l := range s.late {
		add("a line after the session's end: %s", strings.TrimSpace(l))
	}
	if n := bytes.Count(in.Stdout, []byte(" short test summary info ")); n > 1 {
		add("%d short test summary blocks in pytest's output", n)
	}
	if in.TimedOut {
		// The harness stopped the run itself: a cut-short stream and XML
		// are its doing.
		return out
	}
	if e.signal != nil {
		add("pytest was killed by signal %d, which the harness did not send", *e.signal)
	}
	j := parseJUnit(in.JUnitXML)
	if s.started && !j.complete && !s.diskFull {
		// (A full disk leaves no room for the XML: the run is DiskLimit,
		// unresolved, whatever it says.)
		if j.present {
			add("the JUnit XML is cut short")
		} else {
			add("no JUnit XML, although the session started")
		}
	}
	if e.exit != nil && s.finished && s.exit != *e.exit {
		add("pytest's session ended with status %d, its process with %d", s.exit, *e.exit)
	}
	if e.exit != nil && *e.exit == 1 && rep.Finished {
		failed := false
		for _, o := range rep.Tests {
			failed = failed || failing(o.Status)
		}
		for _, o := range rep.Collectors {
			failed = failed || o.Status == StatusCollectionError
		}
		if !failed {
			add("exit status 1 (tests failed), but no test failed")
		}
	}
	return out
}
