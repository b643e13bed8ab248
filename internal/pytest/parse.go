package pytest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Input is what one pytest run over one test file left behind.
type Input struct {
	// JUnitXML is the --junitxml file; nil or cut short when pytest was
	// killed (it writes the file only when the session ends).
	JUnitXML []byte
	// JSONL is the plugin's stream.
	JSONL []byte
	// Stdout and Stderr are pytest's output; the -rA summary is in Stdout.
	Stdout, Stderr []byte
	// ExitCode is the process's exit status as the harness saw it.
	ExitCode int
	// TimedOut is set when the harness stopped the run at its deadline.
	TimedOut bool
	// Expected are the test ids to report on: node ids, or test files (ids
	// without "::") standing for every test in them.
	Expected []string
}

// Outcome is the result of one expected id, or of one test.
type Outcome struct {
	ID      string  `json:"id"`
	Status  Status  `json:"status"`
	ExcType string  `json:"exc_type,omitempty"`
	Message string  `json:"message,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
	// Tests is, for a file or class id, how many of its tests reported.
	Tests int `json:"tests,omitempty"`
}

// Disagreement is a test on which the JUnit XML and the -rA summary differ;
// a side that has no result for the test is "".
type Disagreement struct {
	ID      string `json:"id"`
	JUnit   Status `json:"junit"`
	Summary Status `json:"summary"`
}

// JUnitCounts is what the XML's <testsuite> says.
type JUnitCounts struct {
	Present  bool    `json:"present"`
	Complete bool    `json:"complete"`
	Tests    int     `json:"tests"`
	Failures int     `json:"failures"`
	Errors   int     `json:"errors"`
	Skipped  int     `json:"skipped"`
	Seconds  float64 `json:"seconds"`
}

// Report is the parsed result of one run.
type Report struct {
	// Outcomes has one entry per expected id, in the order given.
	Outcomes []Outcome `json:"outcomes"`
	// Tests is every test the run reported, in the order it reported them.
	Tests []Outcome `json:"tests"`
	// Collectors are the files (or other collectors) whose collection
	// failed or was skipped.
	Collectors []Outcome `json:"collectors,omitempty"`
	// Unexpected are the ids of Tests that no expected id covers.
	Unexpected []string `json:"unexpected,omitempty"`
	// Disagreements between the JUnit XML and the -rA summary (JUnit wins).
	Disagreements []Disagreement `json:"disagreements,omitempty"`
	ExitCode      int            `json:"exit_code"`
	TimedOut      bool           `json:"timed_out,omitempty"`
	// Finished is set when pytest reached the end of its session.
	Finished bool `json:"finished"`
	// Seconds is the duration pytest itself reported (<testsuite time>,
	// else the summary's "in 1.23s"); 0 when it reported none.
	Seconds float64     `json:"seconds"`
	JUnit   JUnitCounts `json:"junit"`
	// Counts is the summary's last line: "passed", "failed", "error",
	// "skipped", "xfailed", "xpassed", "deselected", "warnings".
	Counts map[string]int `json:"counts,omitempty"`
	// Pytest is pytest's version, from the plugin's stream.
	Pytest string `json:"pytest,omitempty"`
	// Sources name what the results came from: junit, jsonl, summary.
	Sources []string `json:"sources"`
	// Notes say what was odd about the run: no or truncated XML, a crash,
	// an exit status that does not fit the results.
	Notes []string `json:"notes,omitempty"`
}

// Outcome returns the outcome of the expected id.
func (r *Report) Outcome(id string) (Outcome, bool) {
	for _, o := range r.Outcomes {
		if o.ID == id {
			return o, true
		}
	}
	return Outcome{}, false
}

// result is one test's combined result while parsing.
type result struct {
	status  Status
	exc     string
	msg     string
	seconds float64
	source  string
	key     junitKey // set when the id is not known (XML without the plugin)
}

// merge combines two results for one test: the higher rank wins, times add.
func (r *result) merge(o result) {
	secs := r.seconds + o.seconds
	if rank(o.status) > rank(r.status) {
		*r = o
	}
	r.seconds = secs
}

// results keeps results by id in first-seen order.
type results struct {
	order []string
	byID  map[string]*result
}

func newResults() *results { return &results{byID: map[string]*result{}} }

// rename gives a result found under a stand-in id its real id.
func (rs *results) rename(from, to string) {
	r := rs.byID[from]
	delete(rs.byID, from)
	rs.byID[to] = r
	for i, id := range rs.order {
		if id == from {
			rs.order[i] = to
		}
	}
}

func (rs *results) add(id string, r result) {
	if old, ok := rs.byID[id]; ok {
		old.merge(r)
		return
	}
	rs.order = append(rs.order, id)
	rs.byID[id] = &r
}

const maxMessage = 1000

// Parse turns a run's files into outcomes for in.Expected. It fails only on
// a bad expected list; everything a run can leave behind, including nothing,
// gives a report.
func Parse(in Input) (*Report, error) {
	seen := map[string]bool{}
	for _, id := range in.Expected {
		if strings.TrimSpace(id) == "" {
			return nil, fmt.Errorf("pytest: an expected test id is empty")
		}
		if seen[id] {
			return nil, fmt.Errorf("pytest: expected test id %q is listed twice", id)
		}
		seen[id] = true
	}
	p := &parser{
		in:         in,
		rep:        &Report{ExitCode: in.ExitCode, TimedOut: in.TimedOut, Sources: []string{}},
		tests:      newResults(),
		collectors: newResults(),
		junit:      parseJUnit(in.JUnitXML),
		stream:     parseStream(in.JSONL),
		term:       parseSummary(in.Stdout),
	}
	p.fromJUnit()
	p.fromStream()
	p.fromSummary()
	p.fromStderr()
	p.expected()
	p.finish()
	return p.rep, nil
}

type parser struct {
	in         Input
	rep        *Report
	tests      *results
	collectors *results
	junit      junitSuite
	stream     stream
	term       termSummary
	sources    map[string]bool
}

func (p *parser) note(format string, args ...any) {
	p.rep.Notes = append(p.rep.Notes, fmt.Sprintf(format, args...))
}

func (p *parser) used(source string) {
	if p.sources == nil {
		p.sources = map[string]bool{}
	}
	if !p.sources[source] {
		p.sources[source] = true
		p.rep.Sources = append(p.rep.Sources, source)
	}
}

// fromJUnit reads the testcases. Ids come from the plugin's property; a
// testcase without it takes the id of a testcase with the same (classname,
// name) that has it, else the expected id that mangles to that pair.
func (p *parser) fromJUnit() {
	j := p.junit
	p.rep.JUnit = JUnitCounts{Present: j.present, Complete: j.complete, Tests: j.tests,
		Failures: j.failures, Errors: j.errors, Skipped: j.skipped, Seconds: j.seconds}
	if !j.present {
		p.note("no JUnit XML")
		return
	}
	if j.err != nil {
		p.note("JUnit XML unreadable after %d testcases: %v", len(j.cases), j.err)
	}
	byKey := map[junitKey]string{}
	for i := range j.cases {
		c := &j.cases[i]
		if id, ok := c.prop(propNodeID); ok {
			byKey[junitKey{c.Classname, c.Name}] = id
		}
	}
	expected := map[junitKey][]string{}
	for _, id := range p.in.Expected {
		if strings.Contains(id, "::") {
			k := keyOf(id)
			expected[k] = append(expected[k], id)
		}
	}
	for i := range j.cases {
		c := &j.cases[i]
		r, collector := caseResult(c)
		r.source = "junit"
		p.used("junit")
		if collector {
			p.collectors.add(p.collectorID(c), r)
			continue
		}
		key := junitKey{c.Classname, c.Name}
		id, ok := c.prop(propNodeID)
		if !ok {
			id, ok = byKey[key]
		}
		if !ok {
			id, ok = pickExpected(expected[key], c.File)
		}
		if !ok {
			// No way back to the node id: keep the pair, so that a file
			// or class id can still claim the test by its classname.
			id, r.key = c.Classname+"::"+c.Name, key
		}
		p.tests.add(id, r)
	}
}

// pickExpected chooses among the expected ids that mangle to one testcase:
// with xunit1's file attribute, the one in that file.
func pickExpected(ids []string, file string) (string, bool) {
	if len(ids) == 1 {
		return ids[0], true
	}
	var match []string
	for _, id := range ids {
		if path, _, _ := strings.Cut(id, "::"); file != "" && path == file {
			match = append(match, id)
		}
	}
	if len(match) == 1 {
		return match[0], true
	}
	return "", false
}

// collectorID names a collection-error testcase: xunit1's file attribute is
// the collector's path; without it, an expected file or a collector the
// stream names that mangles to the testcase's name.
func (p *parser) collectorID(c *junitCase) string {
	if c.File != "" {
		return c.File
	}
	var cands []string
	for _, id := range p.in.Expected {
		path, _, _ := strings.Cut(id, "::")
		cands = append(cands, path)
	}
	for _, ev := range p.stream.collect {
		cands = append(cands, ev.NodeID)
	}
	for _, id := range cands {
		if k := keyOf(id); k.classname == c.Classname && k.name == c.Name {
			return id
		}
	}
	return c.Name
}

var (
	reTimeout  = regexp.MustCompile(`^(?:Failed: )?Timeout >[0-9]+(?:\.[0-9]+)?s$`)
	reExcName  = regexp.MustCompile(`^((?:[A-Za-z_]\w*\.)*)([A-Za-z_]\w*)(?::|$)`)
	reFileLine = regexp.MustCompile(`^\S.*:\d+: ([A-Za-z_]\w*)$`)
)

func isTimeoutMessage(msg string) bool { return reTimeout.MatchString(strings.TrimSpace(msg)) }

// caseResult reads one testcase. collector is set for the testcases pytest
// writes for a collection error or skip.
func caseResult(c *junitCase) (r result, collector bool) {
	r.seconds, _ = strconv.ParseFloat(c.Time, 64)
	exc := func(when string) string { v, _ := c.prop(propExc + when); return v }
	switch {
	case len(c.Errors) > 0 && c.Errors[0].Message == "collection failure":
		r.status, r.msg = StatusCollectionError, errorLine(c.Errors[0].Text)
		r.exc = guessExcType(r.msg, c.Errors[0].Text)
		return r, true
	case len(c.Skipped) > 0 && c.Skipped[0].Message == "collection skipped":
		r.status, r.msg = StatusSkipped, collectSkipReason(c.Skipped[0].Text)
		return r, true
	case len(c.Errors) > 0:
		e := c.Errors[0]
		when, msg := unwrapErrorMessage(e.Message)
		r.status, r.msg, r.exc = StatusError, msg, exc(when)
		if r.exc == "" {
			r.exc = guessExcType(msg, e.Text)
		}
	case len(c.Failures) > 0:
		f := c.Failures[0]
		r.status, r.msg, r.exc = StatusFailed, f.Message, exc("call")
		switch {
		case strings.HasPrefix(f.Message, "[XPASS(strict)]"):
			r.exc = "XPASS(strict)"
		case r.exc == "Timeout" || isTimeoutMessage(f.Message):
			r.status, r.exc = StatusTimeout, "Timeout"
		case r.exc == "":
			r.exc = guessExcType(f.Message, f.Text)
		}
	case len(c.Skipped) > 0:
		s := c.Skipped[0]
		switch {
		case s.Type == "pytest.xfail":
			r.status, r.msg = StatusXFailed, s.Message
			if r.exc = exc("call"); r.exc == "" {
				r.exc = exc("setup")
			}
		case s.Message == "xfail-marked test passes unexpectedly":
			r.status, r.msg = StatusXPassed, s.Message
		default:
			r.status, r.msg = StatusSkipped, s.Message
		}
	default:
		r.status = StatusPassed
		if reason, ok := c.prop(propWasXFail); ok {
			r.status, r.msg = StatusXPassed, reason
		}
	}
	return r, false
}

// unwrapErrorMessage takes `failed on setup with "X"` apart.
func unwrapErrorMessage(m string) (when, msg string) {
	for _, w := range []string{"setup", "teardown"} {
		prefix := "failed on " + w + ` with "`
		if strings.HasPrefix(m, prefix) && strings.HasSuffix(m, `"`) {
			return w, m[len(prefix) : len(m)-1]
		}
	}
	return "setup", m
}

// collectSkipReason takes the reason out of a skipped collector's text,
// pytest's repr of (path, line, "Skipped: reason").
func collectSkipReason(text string) string {
	if i := strings.LastIndex(text, "Skipped: "); i >= 0 {
		return strings.TrimRight(text[i+len("Skipped: "):], "')\"\n")
	}
	return strings.TrimSpace(text)
}

// errorLine is the first line of the last block of "E   " lines in a
// traceback (the exception pytest shows), else the text's first line.
func errorLine(text string) string {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if !isELine(lines[i]) {
			continue
		}
		for i > 0 && isELine(lines[i-1]) {
			i--
		}
		return strings.TrimSpace(lines[i][1:])
	}
	return strings.TrimSpace(lines[0])
}

func isELine(l string) bool { return strings.HasPrefix(l, "E ") }

// guessExcType names the exception behind a failure when the plugin did
// not: from the message ("NameError: ...", "assert ..." for a rewritten
// assert, "Failed: Timeout >1.0s"), else from the traceback ("path:12:
// NameError", or an "E   NameError: ..." line).
func guessExcType(msg, text string) string {
	msg = strings.TrimSpace(msg)
	if isTimeoutMessage(msg) {
		return "Timeout"
	}
	if msg == "assert" || strings.HasPrefix(msg, "assert ") {
		return "AssertionError"
	}
	if name := excName(msg); name != "" {
		return name
	}
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if m := reFileLine.FindStringSubmatch(strings.TrimSpace(lines[i])); m != nil && excLike(m[1]) {
			return m[1]
		}
	}
	if text != "" {
		if l := errorLine(text); l != "" {
			if l == "assert" || strings.HasPrefix(l, "assert ") {
				return "AssertionError"
			}
			return excName(l)
		}
	}
	return ""
}

// excName is the class name at the start of "pkg.mod.Name: message".
func excName(line string) string {
	m := reExcName.FindStringSubmatch(line)
	if m == nil || !excLike(m[2]) {
		return ""
	}
	return m[2]
}

// excLike keeps capitalised names: exception classes are, and words such as
// "file" or "fixture" that start pytest's other messages are not.
func excLike(name string) bool {
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.IsUpper(r)
}

// fromStream adds the tests the XML does not hold, and fills in the
// collectors' exception types, which JUnit does not carry.
func (p *parser) fromStream() {
	s := p.stream
	if !s.present {
		p.note("no JSON stream from the plugin")
		return
	}
	p.rep.Pytest = s.pytest
	if s.bad > 0 {
		p.note("%d lines of the JSON stream are not JSON", s.bad)
	}
	for _, id := range s.order {
		if _, ok := p.tests.byID[id]; ok {
			continue
		}
		r, ok := s.tests[id].result()
		if !ok {
			continue
		}
		if p.junit.complete {
			p.note("%s: in the JSON stream but not in the complete JUnit XML", id)
		}
		r.source = "jsonl"
		p.used("jsonl")
		p.tests.add(id, r)
	}
	for _, ev := range s.collect {
		status := StatusCollectionError
		if ev.Outcome == "skipped" {
			status = StatusSkipped
		}
		if c, ok := p.collectors.byID[ev.NodeID]; ok {
			if c.exc == "" || ev.ExcType != "" {
				c.exc = ev.ExcType
			}
			if ev.Message != "" {
				c.msg = strings.TrimPrefix(ev.Message, "Skipped: ")
			}
			continue
		}
		p.used("jsonl")
		p.collectors.add(ev.NodeID, result{status: status, exc: ev.ExcType,
			msg: strings.TrimPrefix(ev.Message, "Skipped: "), source: "jsonl"})
	}
}

// fromSummary cross-checks the -rA summary against the XML and, for tests
// no other source holds, takes its word.
func (p *parser) fromSummary() {
	t := p.term
	if t.final {
		p.rep.Counts = t.counts
	}
	if !t.found {
		if p.junit.present || p.stream.present {
			p.note("no -rA short test summary in the output")
		}
		return
	}
	known := map[string]bool{}
	for _, id := range p.in.Expected {
		known[id] = true
	}
	for _, id := range p.tests.order {
		known[id] = true
	}
	for _, id := range p.collectors.order {
		known[id] = true
	}
	said := newResults()
	for _, e := range t.entries {
		id, msg := e.resolve(known)
		status := summaryWords[e.word]
		if status == StatusError && !strings.Contains(id, "::") {
			status = StatusCollectionError
		}
		r := result{status: status, msg: msg, source: "summary"}
		switch status {
		case StatusXFailed, StatusXPassed:
			r.msg = strings.TrimPrefix(msg, "reason: ")
		case StatusFailed, StatusError, StatusCollectionError:
			r.exc = guessExcType(msg, "")
			if status == StatusFailed && r.exc == "Timeout" {
				r.status = StatusTimeout
			}
		}
		said.add(id, r)
	}
	// A testcase the XML could not name (no plugin) takes the id of the
	// summary line that mangles to its (classname, name).
	unnamed := map[junitKey][]string{}
	for _, id := range p.tests.order {
		if r := p.tests.byID[id]; r.key != (junitKey{}) {
			unnamed[r.key] = append(unnamed[r.key], id)
		}
	}
	for _, id := range said.order {
		if _, ok := p.tests.byID[id]; ok || said.byID[id].status == StatusCollectionError {
			continue
		}
		if ids := unnamed[keyOf(id)]; len(ids) == 1 {
			p.tests.rename(ids[0], id)
			p.tests.byID[id].key = junitKey{}
		}
	}
	for _, id := range said.order {
		s := said.byID[id]
		var have *result
		if s.status == StatusCollectionError {
			have = p.collectors.byID[id]
		} else {
			have = p.tests.byID[id]
		}
		switch {
		case have != nil && have.source == "junit" && have.status == StatusPassed && s.status == StatusXPassed:
			// JUnit writes a non-strict XPASS as a plain pass; the
			// plugin's property tells them apart, the summary too.
			have.status, have.msg = StatusXPassed, s.msg
		case have != nil && have.source == "junit":
			if summaryWord(have.status) != summaryWord(s.status) {
				p.disagree(id, have.status, s.status)
			}
		case have != nil:
			// From the stream: the XML is missing or cut, nothing to check.
		case p.junit.complete:
			p.disagree(id, "", s.status)
		case s.status == StatusCollectionError:
			p.used("summary")
			p.collectors.add(id, *s)
		default:
			p.used("summary")
			p.tests.add(id, *s)
		}
	}
	for _, id := range p.tests.order {
		r := p.tests.byID[id]
		if r.source == "junit" && r.key == (junitKey{}) && r.status != StatusSkipped && said.byID[id] == nil {
			p.disagree(id, r.status, "")
		}
	}
}

func (p *parser) disagree(id string, junit, summary Status) {
	p.rep.Disagreements = append(p.rep.Disagreements, Disagreement{ID: id, JUnit: junit, Summary: summary})
}

var reStderrError = regexp.MustCompile(`(?m)^ERROR: .*$`)

// fromStderr recognises runs pytest stopped before collecting: a conftest.py
// that does not import is a collection error of everything under it.
func (p *parser) fromStderr() {
	if len(p.tests.order) > 0 || len(p.collectors.order) > 0 {
		return
	}
	stderr := string(p.in.Stderr)
	if i := strings.Index(stderr, "ImportError while loading conftest"); i >= 0 {
		first, _, _ := strings.Cut(stderr[i:], "\n")
		msg := errorLine(stderr[i:])
		exc := excName(msg)
		if exc == "" {
			exc = "ImportError"
		}
		p.used("stderr")
		// The empty id stands for every collector: nothing was collected.
		p.collectors.add("", result{status: StatusCollectionError, exc: exc,
			msg: strings.TrimSpace(first) + " " + msg, source: "stderr"})
		return
	}
	if m := reStderrError.FindString(stderr); m != "" {
		p.note("pytest stopped before running tests (exit %d): %s", p.in.ExitCode, m)
	}
}

// expected gives every expected id its outcome.
func (p *parser) expected() {
	covered := map[string]bool{}
	var firstCollErr string
	hasCollErr := false
	for _, id := range p.collectors.order {
		if p.collectors.byID[id].status == StatusCollectionError && !hasCollErr {
			firstCollErr, hasCollErr = id, true
		}
	}
	unresolved := map[string][]int{} // file -> indexes into Outcomes, for the summary's skip counts
	for _, id := range p.in.Expected {
		o, members := p.outcome(id)
		for _, m := range members {
			covered[m] = true
		}
		if o.Status == "" {
			switch {
			case hasCollErr && !p.fileRan(id):
				// The run stopped at the collection error, or this test's
				// file is the one that did not collect. A file that did
				// collect and ran (--continue-on-collection-errors) has no
				// such test: another file's error does not explain that.
				c := p.collectors.byID[firstCollErr]
				o.Status, o.ExcType = StatusCollectionError, c.exc
				o.Message = cut("not run: collection failed: " + c.msg)
				if firstCollErr != "" {
					o.Message = cut("not run: collecting " + firstCollErr + " failed: " + c.msg)
				}
			case p.in.TimedOut:
				o.Status, o.Message = StatusTimeout, p.whyNoResult(id, "the run timed out")
			default:
				o.Status, o.Message = StatusMissing, p.whyNoResult(id, "")
				if strings.Contains(id, "::") {
					path, _, _ := strings.Cut(id, "::")
					unresolved[path] = append(unresolved[path], len(p.rep.Outcomes))
				}
			}
		}
		p.rep.Outcomes = append(p.rep.Outcomes, o)
	}
	// Without the stream and a whole XML, skipped tests may be known only
	// from the summary, which counts them per file without ids. Take the
	// count when it accounts for exactly the tests of that file left.
	if !p.junit.complete && !p.stream.present {
		for path, idx := range unresolved {
			n := p.term.skipped[path]
			for _, id := range p.tests.order {
				if strings.HasPrefix(id, path+"::") && p.tests.byID[id].status == StatusSkipped {
					n--
				}
			}
			if n > 0 && n == len(idx) {
				for _, i := range idx {
					o := &p.rep.Outcomes[i]
					o.Status, o.Message = StatusSkipped, "skipped (by the summary's count for "+path+")"
				}
			}
		}
	}
	for _, id := range p.tests.order {
		r := p.tests.byID[id]
		p.rep.Tests = append(p.rep.Tests, r.outcome(id))
		if !covered[id] {
			p.rep.Unexpected = append(p.rep.Unexpected, id)
		}
	}
	for _, id := range p.collectors.order {
		p.rep.Collectors = append(p.rep.Collectors, p.collectors.byID[id].outcome(id))
	}
}

// fileRan says whether a test of id's file reported an outcome other
// than a collection error: its file collected.
func (p *parser) fileRan(id string) bool {
	file, _, ok := strings.Cut(id, "::")
	if !ok {
		return false
	}
	for _, tid := range p.tests.order {
		if strings.HasPrefix(tid, file+"::") && p.tests.byID[tid].status != StatusCollectionError {
			return true
		}
	}
	return false
}

func (r *result) outcome(id string) Outcome {
	return Outcome{ID: id, Status: r.status, ExcType: r.exc, Message: cut(r.msg), Seconds: r.seconds}
}

// outcome finds the result of one expected id: the test of exactly that id,
// else the group of tests under it (a file, or a class), else the collector
// it belongs to. Status is "" when nothing speaks for it.
func (p *parser) outcome(id string) (Outcome, []string) {
	if r, ok := p.tests.byID[id]; ok && strings.Contains(id, "::") {
		return r.outcome(id), []string{id}
	}
	var members []string
	prefix, dotted := id+"::", groupPrefix(id)
	for _, tid := range p.tests.order {
		r := p.tests.byID[tid]
		if strings.HasPrefix(tid, prefix) ||
			(r.key != (junitKey{}) && (r.key.classname == dotted || strings.HasPrefix(r.key.classname, dotted+"."))) {
			members = append(members, tid)
		}
	}
	var coll *result
	var collID string
	for _, cid := range p.collectors.order {
		if cid == "" || cid == id || strings.HasPrefix(id, cid+"::") || strings.HasPrefix(id, cid+"/") ||
			strings.HasPrefix(cid, prefix) {
			coll, collID = p.collectors.byID[cid], cid
			break
		}
	}
	if len(members) == 0 {
		if coll == nil {
			return Outcome{ID: id}, nil
		}
		o := coll.outcome(id)
		o.Seconds = 0
		if collID != id && collID != "" {
			o.Message = cut(collID + ": " + coll.msg)
		}
		return o, nil
	}
	return p.group(id, members, coll, collID), members
}

// group combines the tests under a file or class id (see the package doc).
func (p *parser) group(id string, members []string, coll *result, collID string) Outcome {
	o := Outcome{ID: id, Tests: len(members)}
	var worst *result
	var worstID string
	ran := false
	for _, m := range members {
		r := p.tests.byID[m]
		o.Seconds += r.seconds
		if r.status == StatusPassed || r.status == StatusXPassed {
			ran = true
		}
		if worst == nil || rank(r.status) > rank(worst.status) {
			worst, worstID = r, m
		}
	}
	if coll != nil && coll.status == StatusCollectionError {
		worst, worstID = coll, collID
	}
	if status, why := p.unfinished(id); rank(status) > rank(worst.status) {
		// Some of the file's tests may never have reported.
		worst, worstID = &result{status: status, msg: why}, ""
	}
	switch worst.status {
	case StatusPassed, StatusXPassed, StatusXFailed, StatusSkipped:
		if ran {
			o.Status = StatusPassed
			return o
		}
	}
	o.Status, o.ExcType = worst.status, worst.exc
	o.Message = cut(worst.msg)
	if worstID != "" {
		o.Message = cut(worstID + ": " + worst.msg)
	}
	return o
}

// unfinished says whether the run stopped before its end, and how that
// counts for the tests under id that have no result: timeout, or missing.
func (p *parser) unfinished(id string) (Status, string) {
	switch {
	case p.in.TimedOut:
		return StatusTimeout, p.whyNoResult(id, "the run timed out")
	case !p.junit.complete && !p.stream.finished && !p.term.final:
		return StatusMissing, p.whyNoResult(id, "")
	}
	return "", ""
}

// whyNoResult says why an id has no result.
func (p *parser) whyNoResult(id, cause string) string {
	s := p.stream
	running := s.present && s.running != "" && (s.running == id || strings.HasPrefix(s.running, id+"::"))
	what := "this test"
	if s.running != id {
		what = s.running // a test of the file or class id
	}
	switch {
	case cause != "" && running:
		return cause + " while " + what + " ran"
	case cause != "":
		return cause + " before this test reported"
	case s.present && !s.finished && running:
		return fmt.Sprintf("pytest died while %s ran (exit %d)", what, p.in.ExitCode)
	case s.present && !s.finished:
		return fmt.Sprintf("pytest died before this test reported (exit %d)", p.in.ExitCode)
	case len(p.tests.order) == 0 && reStderrError.MatchString(string(p.in.Stderr)):
		m := reStderrError.FindString(string(p.in.Stderr))
		return fmt.Sprintf("pytest ran no tests (exit %d): %s", p.in.ExitCode, m)
	case !p.junit.present && !s.present && !p.term.final:
		return fmt.Sprintf("pytest left no results (exit %d)", p.in.ExitCode)
	}
	return "not reported by pytest: no such test, or not selected"
}

// finish fills in the run-level fields and checks the exit status.
func (p *parser) finish() {
	r := p.rep
	r.Finished = p.stream.finished || p.term.final || p.junit.complete
	switch {
	case p.junit.complete:
		r.Seconds = p.junit.seconds
	case p.term.final:
		r.Seconds = p.term.seconds
	}
	if p.stream.present && !p.stream.finished && !p.in.TimedOut {
		p.note("pytest did not finish its session: it crashed or was killed (exit %d)", p.in.ExitCode)
	}
	if p.stream.finished && p.stream.exit != p.in.ExitCode && !p.in.TimedOut {
		p.note("pytest's exit status was %d, the process's %d", p.stream.exit, p.in.ExitCode)
	}
	unnamed := 0
	for _, id := range p.tests.order {
		if p.tests.byID[id].key != (junitKey{}) {
			unnamed++
		}
	}
	if unnamed > 0 {
		p.note("%d JUnit testcases match no node id; they are listed as classname::name", unnamed)
	}
	if !r.Finished || p.in.TimedOut {
		return
	}
	bad := false
	for _, o := range r.Tests {
		switch o.Status {
		case StatusFailed, StatusError, StatusTimeout:
			bad = true
		}
	}
	for _, o := range r.Collectors {
		if o.Status == StatusCollectionError {
			bad = true
		}
	}
	switch {
	case p.in.ExitCode == 0 && bad:
		p.note("exit status 0, but tests failed")
	case p.in.ExitCode == 1 && !bad:
		p.note("exit status 1 (tests failed), but no test failed")
	case p.in.ExitCode == 2 && !bad:
		p.note("exit status 2 (interrupted), but no collection error")
	}
}

// cut shortens a message for reports; the run's logs keep it whole.
func cut(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	i := maxMessage
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
