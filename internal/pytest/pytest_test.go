package pytest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCommand(t *testing.T) {
	o := RunOptions{
		Root: "/testbed", File: "tests/test_x.py", JUnitXML: "/fb/out/1.xml", JSONL: "/fb/out/1.jsonl",
		Timeout: 10 * time.Second, Classic: true, PluginDir: "/opt/featbench", PythonPath: []string{"/testbed/src"},
		IDs: []string{"tests/test_x.py::test_a[x - y]"},
	}
	got := Command(o)
	want := []string{"python3", "-m", "pytest", "-rA", "--color=no", "-p", "no:cacheprovider",
		"--rootdir=/testbed", "-o", "junit_family=xunit1", "--junitxml=/fb/out/1.xml", "-p", "featbench_pytest",
		"--featbench-jsonl=/fb/out/1.jsonl", "--timeout=10", "-o", "console_output_style=classic",
		"--featbench-id=tests/test_x.py::test_a[x - y]", "tests/test_x.py"}
	if !slices.Equal(got, want) {
		t.Errorf("Command\n got %q\nwant %q", got, want)
	}
	env := Env(o)
	wantEnv := []string{"CI=1", "COLUMNS=200", "PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8",
		"PYTHONPATH=/opt/featbench:/testbed/src"}
	if !slices.Equal(env, wantEnv) {
		t.Errorf("Env\n got %q\nwant %q", env, wantEnv)
	}
	got = Command(RunOptions{Python: "/usr/bin/python3", File: "t.py", Timeout: 1500 * time.Millisecond})
	want = []string{"/usr/bin/python3", "-m", "pytest", "-rA", "--color=no", "-p", "no:cacheprovider",
		"-o", "junit_family=xunit1", "-p", "featbench_pytest", "--timeout=1.5", "t.py"}
	if !slices.Equal(got, want) {
		t.Errorf("Command\n got %q\nwant %q", got, want)
	}
}

func TestWritePlugin(t *testing.T) {
	dir := t.TempDir()
	p, err := WritePlugin(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p) != "featbench_pytest.py" || !bytes.Equal(b, PluginSource()) {
		t.Errorf("wrote %s, %d bytes", p, len(b))
	}
	// The Go side and the plugin must agree on the property names.
	for _, name := range []string{propNodeID, propExc, propWasXFail} {
		if !bytes.Contains(b, []byte(`"`+name+`"`)) {
			t.Errorf("plugin.py does not name %q", name)
		}
	}
}

func TestMangle(t *testing.T) {
	for _, c := range []struct{ id, classname, name string }{
		{"tests/test_x.py::test_f", "tests.test_x", "test_f"},
		{"tests/test_x.py::TestC::test_m[param-1]", "tests.test_x.TestC", "test_m[param-1]"},
		{"tests/test_x.py::test_f[a b - c::d/e]", "tests.test_x", "test_f[a b - c::d/e]"},
		{"a/b/test_y.py::A::B::t", "a.b.test_y.A.B", "t"},
		{"test_top.py::t[x.py]", "test_top", "t[x.py]"},
		{"tests/test_x.py", "", "tests.test_x"}, // a collector
		{"tests/test_x.py::test_f[\x01\U0001F600é]", "tests.test_x", "test_f[#x01#x1F600é]"},
	} {
		c1, n1 := mangle(c.id)
		if c1 != c.classname || n1 != c.name {
			t.Errorf("mangle(%q) = %q, %q; want %q, %q", c.id, c1, n1, c.classname, c.name)
		}
	}
}

// TestMangleCaptured checks mangle against pytest itself: every testcase
// of every captured XML that carries the plugin's node id.
func TestMangleCaptured(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(capturedDir, "*", "junit.xml"))
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := parseJUnit(data)
		if !s.complete || s.err != nil {
			t.Errorf("%s: complete %v, %v", f, s.complete, s.err)
		}
		for _, c := range s.cases {
			id, ok := c.prop(propNodeID)
			if !ok {
				continue
			}
			n++
			if cn, nm := mangle(id); cn != c.Classname || nm != c.Name {
				t.Errorf("%s: mangle(%q) = %q, %q; pytest wrote %q, %q", f, id, cn, nm, c.Classname, c.Name)
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d testcases with node ids", n)
	}
}

func TestSummaryResolve(t *testing.T) {
	known := map[string]bool{
		"t.py::f[x - y]":   true,
		"t.py::f[x]":       true,
		"t.py::g":          true,
		"t.py::g - h":      true, // cannot be a real id, but must win by length
		"t.py::f[a b]":     true,
		"t.py::f[a::b c]":  true,
		"t.py::f[p - q] z": true,
	}
	for _, c := range []struct{ word, line, id, msg string }{
		{"FAILED", "t.py::f[x - y] - AssertionError: a - b", "t.py::f[x - y]", "AssertionError: a - b"},
		{"FAILED", "t.py::f[x] - boom", "t.py::f[x]", "boom"},
		{"PASSED", "t.py::f[x - y]", "t.py::f[x - y]", ""},
		{"ERROR", "t.py::g - h - NameError: n", "t.py::g - h", "NameError: n"},
		{"XPASS", "t.py::f[a b] reason here", "t.py::f[a b]", "reason here"},
		{"XPASS", "t.py::f[a b] - reason (pytest 8)", "t.py::f[a b]", "reason (pytest 8)"},
		{"XFAIL", "t.py::f[a::b c] - reason: r", "t.py::f[a::b c]", "reason: r"},
		// Unknown ids: cut at the first separator outside brackets.
		{"FAILED", "u.py::k[m - n] - ValueError: v", "u.py::k[m - n]", "ValueError: v"},
		{"XPASS", "u.py::k[m n] why", "u.py::k[m n]", "why"},
		{"ERROR", "u.py - NameError: x", "u.py", "NameError: x"},
		{"PASSED", "u.py::plain", "u.py::plain", ""},
	} {
		id, msg := summaryEntry{word: c.word, first: c.line}.resolve(known)
		if id != c.id || msg != c.msg {
			t.Errorf("%s %s: %q, %q; want %q, %q", c.word, c.line, id, msg, c.id, c.msg)
		}
	}
	e := summaryEntry{word: "FAILED", first: "t.py::g - first", more: []string{"second", "third"}}
	if id, msg := e.resolve(known); id != "t.py::g" || msg != "first\nsecond\nthird" {
		t.Errorf("multi-line: %q, %q", id, msg)
	}
}

func TestSummaryCounts(t *testing.T) {
	s := parseSummary([]byte("== 3 failed, 1 passed, 2 errors, 1 warning, 5 deselected in 65.20s (0:01:05) ==\n"))
	want := map[string]int{"failed": 3, "passed": 1, "error": 2, "warnings": 1, "deselected": 5}
	if !s.final || s.seconds != 65.2 || !mapsEqual(s.counts, want) {
		t.Errorf("final %v, %vs, %v", s.final, s.seconds, s.counts)
	}
	s = parseSummary([]byte("=== no tests ran in 0.01s ===\n"))
	if !s.final || len(s.counts) != 0 {
		t.Errorf("no tests ran: %+v", s)
	}
}

func TestGuessExcType(t *testing.T) {
	for _, c := range []struct{ msg, text, want string }{
		{"assert 1 == 2", "", "AssertionError"},
		{"AssertionError: total", "", "AssertionError"},
		{"Failed: DID NOT RAISE <class 'ValueError'>", "", "Failed"},
		{"Failed: Timeout >10.0s", "", "Timeout"},
		{"pkg.mod.CustomError: x", "", "CustomError"},
		{"KeyError", "", "KeyError"},
		{"file /x.py, line 3", "E       fixture 'nope' not found\n\n/x.py:3", ""},
		{"collection failure", "ImportError while importing test module\nE   ModuleNotFoundError: No module named 'x'", "ModuleNotFoundError"},
		{"something", "def f():\n>   g()\n\nt.py:12: ZeroDivisionError", "ZeroDivisionError"},
	} {
		if got := guessExcType(c.msg, c.text); got != c.want {
			t.Errorf("guessExcType(%q, %q) = %q, want %q", c.msg, c.text, got, c.want)
		}
	}
}

func TestParseJUnitTruncated(t *testing.T) {
	doc := `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="2" time="0.5">` +
		`<testcase classname="t" name="a" time="0.1"/>` +
		`<testcase classname="t" name="b" time="0.2"><failure message="assert 0">text</failure></testcase>` +
		`</testsuite></testsuites>`
	s := parseJUnit([]byte(doc))
	if !s.complete || s.err != nil || len(s.cases) != 2 || s.seconds != 0.5 || s.failures != 1 {
		t.Fatalf("whole: %+v", s)
	}
	cut := strings.Index(doc, `<failure`) + 5
	s = parseJUnit([]byte(doc[:cut]))
	if s.complete || s.err == nil || len(s.cases) != 1 || s.cases[0].Name != "a" {
		t.Errorf("cut: complete %v, err %v, %d cases", s.complete, s.err, len(s.cases))
	}
	s = parseJUnit([]byte(doc[:strings.Index(doc, "</testsuites>")]))
	if s.complete || len(s.cases) != 2 {
		t.Errorf("without the root's end: complete %v, %d cases", s.complete, len(s.cases))
	}
}

func TestStatusRules(t *testing.T) {
	all := []Status{StatusPassed, StatusFailed, StatusError, StatusSkipped, StatusXFailed, StatusXPassed,
		StatusMissing, StatusTimeout, StatusCollectionError}
	for _, s := range all {
		if got, want := Passed(s), s == StatusPassed; got != want {
			t.Errorf("Passed(%s) = %v", s, got)
		}
		want := s == StatusPassed || s == StatusXFailed || s == StatusXPassed
		if got := Maintained(s); got != want {
			t.Errorf("Maintained(%s) = %v", s, got)
		}
	}
	for _, c := range []struct {
		o    Outcome
		want string
	}{
		{Outcome{Status: StatusPassed}, ""},
		{Outcome{Status: StatusFailed, ExcType: "NameError"}, "NameError"},
		{Outcome{Status: StatusFailed}, "Failed"},
		{Outcome{Status: StatusError, ExcType: "RuntimeError"}, "RuntimeError"},
		{Outcome{Status: StatusError}, "Error"},
		{Outcome{Status: StatusTimeout, ExcType: "Timeout"}, "Timeout"},
		{Outcome{Status: StatusTimeout}, "Timeout"},
		{Outcome{Status: StatusCollectionError, ExcType: "ImportError"}, "ImportError"},
		{Outcome{Status: StatusCollectionError}, "CollectionError"},
		{Outcome{Status: StatusSkipped}, "Skipped"},
		{Outcome{Status: StatusMissing}, "Missing"},
		{Outcome{Status: StatusXFailed, ExcType: "AssertionError"}, "AssertionError"},
		{Outcome{Status: StatusXFailed}, "XFailed"},
		{Outcome{Status: StatusXPassed}, "XPassed"},
	} {
		if got := FailureMode(c.o); got != c.want {
			t.Errorf("FailureMode(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
}
