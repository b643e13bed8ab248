package pytest

import (
	"encoding/json"
	"strings"
	"testing"
)

// endLine is the runner's last line after a stream of n bytes.
func endLine(n int, exit, signal any) string {
	e := map[string]any{"event": "end", "stream_bytes": n, "exit": exit, "signal": signal, "left": 0, "disk_full": false}
	b, _ := json.Marshal(e)
	return "\n" + string(b) + "\n"
}

// TestUnverified: a run of the ending runner is unverified when its
// channels say what an honest run never says; an honest run, and a log
// of the runner before it ended its stream, are not held to it.
func TestUnverified(t *testing.T) {
	const junit = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="1" time="0.01"><testcase classname="t" name="test_a" time="0.001"><properties><property name="featbench_nodeid" value="t.py::test_a"/></properties></testcase></testsuite></testsuites>`
	const summary = "============ short test summary info ============\nPASSED t.py::test_a\n============ 1 passed in 0.01s ============\n"
	honest := `{"event": "sessionstart", "pytest": "7.2.1"}
{"event": "start", "nodeid": "t.py::test_a"}
{"event": "report", "nodeid": "t.py::test_a", "when": "setup", "outcome": "passed"}
{"event": "report", "nodeid": "t.py::test_a", "when": "call", "outcome": "passed"}
{"event": "report", "nodeid": "t.py::test_a", "when": "teardown", "outcome": "passed"}
{"event": "check", "ok": true, "problems": []}
{"event": "sessionfinish", "exitstatus": 0}
{"event": "check", "ok": true, "problems": []}
`
	ended := func(stream string, exit, signal any) string { return stream + endLine(len(stream), exit, signal) }
	cases := []struct {
		name          string
		jsonl, stdout string
		junit         string
		exit          int
		timedOut      bool
		want          string // "" for a verified run
	}{
		{"honest", ended(honest, 0, nil), summary, junit, 0, false, ""},
		{"the runner before it ended its stream", honest + `{"event": "limits", "disk_full": false}` + "\n", summary, "", 0, false, ""},
		{"a line the tests wrote that looks like the end", honest + endLine(len(honest), 0, nil)[1:] + ended("", 0, nil)[1:], summary, junit, 0, false, "not the runner's end alone"},
		{"an end whose count is not its place", honest + endLine(len(honest)-5, 0, nil), summary, junit, 0, false, "not the runner's end alone"},
		{"a line after the end", ended(honest, 0, nil) + `{"event": "check", "ok": true}` + "\n", summary, junit, 0, false, "not the runner's end alone"},
		{"a report twice", ended(honest+`{"event": "report", "nodeid": "t.py::test_a", "when": "call", "outcome": "passed"}`+"\n", 0, nil), summary, junit, 0, false, "t.py::test_a (call) reported twice"},
		{"a report after the session's end", ended(honest+`{"event": "report", "nodeid": "t.py::test_b", "when": "call", "outcome": "passed"}`+"\n", 0, nil), summary, junit, 0, false, "a line after the session's end: report t.py::test_b"},
		{"a second summary block", ended(honest, 0, nil), summary + summary, junit, 0, false, "2 short test summary blocks"},
		{"a signal the harness did not send", ended(strings.SplitAfter(honest, "\n")[0], nil, 9), "", "", 137, false, "killed by signal 9, which the harness did not send"},
		{"the harness's own timeout", ended(strings.SplitAfter(honest, "\n")[0], nil, 9), "", "", 137, true, ""},
		{"no JUnit XML", ended(honest, 0, nil), summary, "", 0, false, "no JUnit XML, although the session started"},
		{"a JUnit XML cut short", ended(honest, 0, nil), summary, junit[:200], 0, false, "the JUnit XML is cut short"},
		{"an exit status pytest's session did not end with", ended(honest, 1, nil), summary, junit, 1, false, "pytest's session ended with status 0, its process with 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := Input{JSONL: []byte(c.jsonl), Stdout: []byte(c.stdout), ExitCode: c.exit, TimedOut: c.timedOut, Expected: []string{"t.py::test_a"}}
			if c.junit != "" {
				in.JUnitXML = []byte(c.junit)
			}
			rep, err := Parse(in)
			if err != nil {
				t.Fatal(err)
			}
			g := Verify(in, rep)
			got := strings.Join(g.Unverified, "; ")
			switch {
			case c.want == "" && got != "":
				t.Errorf("unverified: %s", got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("unverified %q, want %q", got, c.want)
			}
		})
	}
}

// TestAuditRecords: the audit hook's lines are read into the run's
// integrity, and are not lines out of place after the session's end.
func TestAuditRecords(t *testing.T) {
	stream := `{"event": "sessionstart", "pytest": "7.2.1"}
{"event": "audit", "kind": "frames", "what": "sys._getframe", "at": "pkg/mod.py:3"}
{"event": "sessionfinish", "exitstatus": 5}
{"event": "audit", "kind": "code-swap", "what": "object.__setattr__", "at": "pkg/mod.py:9", "target": "test tests.test_x.test_a"}
`
	in := Input{JSONL: []byte(stream + endLine(len(stream), 5, nil)), ExitCode: 5,
		JUnitXML: []byte(`<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0" time="0.01"></testsuite></testsuites>`)}
	rep, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	g := Verify(in, rep)
	if len(g.Audit) != 2 || g.Audit[1].Target != "test tests.test_x.test_a" || g.Audit[0].Kind != "frames" {
		t.Errorf("audit %+v", g.Audit)
	}
	if len(g.Unverified) != 0 {
		t.Errorf("unverified %q", g.Unverified)
	}
}
