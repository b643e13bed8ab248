package collect

import (
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/components"
	"github.com/featbench/featbench/internal/history"
	"github.com/featbench/featbench/internal/newcomp"
	"github.com/featbench/featbench/internal/pytest"
)

func doc(s string) *string { return &s }

// TestNewComponentsFilters: each filter of the new-components method on
// the candidates that reach it, hostile ones included.
func TestNewComponentsFilters(t *testing.T) {
	comp := func(name, sig string, d *string, lines int, same string) components.Component {
		return components.Component{Name: name, Kind: "function", Signature: sig, Docstring: d, Line: 1, Spans: [][]int{{1, lines}}, Lines: lines, SameAs: same}
	}
	file := func(added, removed, compLines int, cs ...components.Component) components.FileResult {
		return components.FileResult{Path: "pkg/a.py", Added: added, Removed: removed, ComponentLines: compLines, Components: cs}
	}
	for _, tc := range []struct {
		name string
		c    components.ChangeResult
		code string
		want string // the first drop's start; "" when every filter passes
	}{
		{"new function", components.ChangeResult{Files: []components.FileResult{file(10, 2, 8, comp("f", "def f():", doc("Doc."), 8, ""))}}, "", ""},
		{"nothing new", components.ChangeResult{Files: []components.FileResult{file(3, 3, 0)}}, "", "the code patch adds no function, class or method"},
		{"only renamed", components.ChangeResult{Files: []components.FileResult{file(5, 5, 0, comp("g", "def g():", nil, 5, "pkg/a.py::f"))}}, "",
			"the code patch adds no new function, class or method: what it adds is moved or renamed (g was pkg/a.py::f)"},
		{"a file that does not parse", components.ChangeResult{Files: []components.FileResult{file(10, 0, 8, comp("f", "def f():", nil, 8, "")), {Path: "pkg/b.py", Error: "after the change: does not parse: invalid syntax (line 3)"}}}, "",
			"pkg/b.py: after the change: does not parse"},
		{"a control character in a docstring", components.ChangeResult{Files: []components.FileResult{file(10, 0, 8, comp("f", "def f():", doc("Bell\x07."), 8, ""))}}, "",
			"the new component f cannot be published: docstring: holds the control character U+0007"},
		{"a quarter exactly", components.ChangeResult{Files: []components.FileResult{file(6, 2, 2, comp("f", "def f():", nil, 2, ""))}}, "",
			"new components are 2 of the 8 edited lines (25%), not more than 25%"},
		{"other files count", components.ChangeResult{Files: []components.FileResult{file(4, 0, 4, comp("f", "def f():", nil, 4, ""))}},
			"diff --git a/docs/x.rst b/docs/x.rst\n--- a/docs/x.rst\n+++ b/docs/x.rst\n@@ -1,0 +1,12 @@\n" + strings.Repeat("+doc\n", 12) +
				"diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,0 +1,4 @@\n" + strings.Repeat("+x\n", 4),
			"new components are 4 of the 16 edited lines (25%)"},
		{"a huge gold patch", components.ChangeResult{Files: []components.FileResult{file(10, 0, 10, comp("f", "def f():", nil, 10, ""))}},
			"diff --git a/pkg/a.py b/pkg/a.py\n" + strings.Repeat("+ some_words and_more words_here\n", 4000), "the gold patch is about"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc := &prCandidate{Change: history.Change{Patches: history.Patches{Code: tc.code}}}
			c := tc.c
			pc.Components = &c
			it := newcomp.RulesIntent("Add f", "")
			pc.Intent = &it
			got := ""
			for _, f := range (&newComponentsMethod{}).Filters() {
				if got = f.Drop(pc); got != "" {
					break
				}
			}
			if tc.want == "" && got != "" || tc.want != "" && !strings.HasPrefix(got, tc.want) {
				t.Errorf("drop %q, want %q", got, tc.want)
			}
		})
	}
	pc := &prCandidate{}
	it := newcomp.RulesIntent("Fix the parser", "")
	pc.Intent = &it
	if got := featureIntent(pc); !strings.HasPrefix(got, "not a new feature (not a feature, by the rules: the title starts with \"Fix\")") {
		t.Errorf("intent drop %q", got)
	}
}

// TestNewComponentsAccept: a test of the test patch that fails before and
// passes after is wanted, and no test of the test patch's files may fail
// after (another folder file's failure does not count).
func TestNewComponentsAccept(t *testing.T) {
	m := &newComponentsMethod{}
	pc := &prCandidate{Change: history.Change{Patches: history.Patches{TestFiles: []string{"tests/test_a.py"}}}}
	pc.verify = prVerify{Files: []string{"tests/test_a.py", "tests/test_b.py"}, After: map[string]runOut{
		"tests/test_a.py": {Passed: []string{"tests/test_a.py::test_new"}},
		"tests/test_b.py": {Failing: []pytest.Outcome{{ID: "tests/test_b.py::test_old", Status: pytest.StatusFailed}}},
	}, FailToPass: []string{"tests/test_a.py::test_new"}}
	if got := m.Accept(pc); got != "" {
		t.Errorf("accepted runs refused: %q", got)
	}
	a := pc.verify.After["tests/test_a.py"]
	a.Failing = []pytest.Outcome{{ID: "tests/test_a.py::test_other", Status: pytest.StatusError}}
	pc.verify.After["tests/test_a.py"] = a
	if got := m.Accept(pc); got != "1 tests of the test patch's files do not pass after the patch (tests/test_a.py::test_other)" {
		t.Errorf("a failing test after the patch: %q", got)
	}
	delete(pc.verify.After, "tests/test_a.py")
	if got := m.Accept(pc); !strings.HasPrefix(got, "pytest collects no test of the test patch's files after the patch") {
		t.Errorf("a test file that collects nothing: %q", got)
	}
	pc.verify.After["tests/test_a.py"] = runOut{Passed: []string{"tests/test_a.py::test_new"}}
	pc.verify.FailToPass = nil
	if got := m.Accept(pc); got != "no test of the test patch fails or errors before the patch" {
		t.Errorf("no fail-to-pass test: %q", got)
	}
}

// TestHistoryInstanceLists: an instance with no pass-to-pass test has an
// empty list, not null.
func TestHistoryInstanceLists(t *testing.T) {
	r := &historyRun{m: &newComponentsMethod{}}
	r.rc.Repository = "o/r"
	in := r.instanceOf(&prCandidate{Change: history.Change{PullRequest: history.PullRequest{Number: 3}}}, &prVerify{FailToPass: []string{"t.py::a"}})
	if in.PassToPass == nil || len(in.PassToPass) != 0 || len(in.FailToPass) != 1 {
		t.Errorf("FAIL_TO_PASS %#v, PASS_TO_PASS %#v", in.FailToPass, in.PassToPass)
	}
}
