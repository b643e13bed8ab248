package collect

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/history"
	"github.com/featbench/featbench/internal/llm"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/pydefs"
)

func TestHasCode(t *testing.T) {
	for _, c := range []struct {
		text string
		code bool
	}{
		{"I want to scale the area by a factor I pass as scale.", false},
		{"I want the area function to take a scale parameter, and perimeter() to stay as it is.", false},
		{"I want to call `area` with `scale`.", false},
		{"I want to call `area(2, 3, scale=2)` and get 12.", true},
		{"I want area(2, 3, scale=2) to give 12.", true},
		{"I want this:\n```python\narea(1, 2)\n```", true},
		{"I want this:\n    x = area(1)\n    y = x", true},
		{"I want\n>>> area(1, 2)\n2", true},
		{"I want it to work.\ndef area(w, h, scale=1):", true},
		{"I want the result == 12 when scaled.", true},
		{"I want a method that returns -> a list", true},
		{"I want it to accept many (or few) items, in order: first, then last.", false},
	} {
		if got := hasCode(c.text) != ""; got != c.code {
			t.Errorf("hasCode(%q) = %q, want code %v", c.text, hasCode(c.text), c.code)
		}
	}
}

func TestLeaks(t *testing.T) {
	code := "diff --git a/g.py b/g.py\n--- a/g.py\n+++ b/g.py\n@@ -1 +1 @@\n-    return w * h\n+    return w * h * scale_factor\n+    pass\n"
	test := "diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1 +1,2 @@\n x\n+    assert area(2, 3, scale=2) == 12\n"
	for _, c := range []struct {
		text, want string
	}{
		{"I want a scale factor.", ""},
		{"I want it to return w * h * scale_factor in the end.", "a line of the code patch"},
		{"Check that assert   area(2, 3, scale=2) == 12 holds.", "a line of the test patch"},
		{"I want to pass.", ""},               // "pass" is too short to count
		{"It used to return w * h only.", ""}, // a removed line is the old code
	} {
		got := leaks(c.text, code, test)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("leaks(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestProseOf(t *testing.T) {
	body := "<!-- Thanks for contributing! -->\nThis adds a `scale` option to `area()`.\n\n```python\narea(1, 2, scale=3)\n```\n\n" +
		"- [x] tests added\nFixes #12\n\nUsage: call `area(1, 2, scale=3)` to scale.\n    indented = code\n\nSee https://example.invalid/docs for more.\n"
	got := proseOf(body)
	want := "This adds a scale option to area().\n\nUsage: call to scale.\n\nSee for more."
	if got != want {
		t.Errorf("proseOf:\n got %q\nwant %q", got, want)
	}
	if hasCode(got) != "" {
		t.Errorf("the prose holds code: %s", hasCode(got))
	}
}

func defsOf(names ...string) []pydefs.Def {
	var out []pydefs.Def
	for _, n := range names {
		name, hash, _ := strings.Cut(n, "@")
		out = append(out, pydefs.Def{Name: name, Kind: "function", Hash: hash})
	}
	return out
}

func TestOnlyModifies(t *testing.T) {
	mk := func(files map[string][2][]pydefs.Def) *prCandidate {
		pc := &prCandidate{Defs: map[string]fileDefs{}}
		for f, ba := range files {
			pc.Defs[f] = fileDefs{Before: ba[0], After: ba[1], Changes: pydefs.Compare(ba[0], ba[1])}
		}
		return pc
	}
	for _, c := range []struct {
		name  string
		files map[string][2][]pydefs.Def
		want  string
	}{
		{"modifies one", map[string][2][]pydefs.Def{"a.py": {defsOf("f@1", "g@1"), defsOf("f@2", "g@1")}}, ""},
		{"adds one", map[string][2][]pydefs.Def{"a.py": {defsOf("f@1"), defsOf("f@2", "h@1")}}, "the code patch adds definitions: h (a.py)"},
		{"removes one", map[string][2][]pydefs.Def{"a.py": {defsOf("f@1", "g@1"), defsOf("f@2")}}, "the code patch removes definitions: g (a.py)"},
		{"a new file of definitions", map[string][2][]pydefs.Def{"a.py": {defsOf("f@1"), defsOf("f@2")}, "b.py": {nil, defsOf("x@1", "y@1", "z@1", "w@1")}},
			"the code patch adds definitions: 4 of them, w (b.py), x (b.py), y (b.py) and 1 more"},
		{"module code only", map[string][2][]pydefs.Def{"a.py": {defsOf("f@1"), defsOf("f@1")}}, "the code patch modifies no existing function"},
		{"a file Python cannot read", map[string][2][]pydefs.Def{}, ""},
	} {
		pc := mk(c.files)
		if c.name == "a file Python cannot read" {
			pc.Defs["c.py"] = fileDefs{Error: "c.py cannot be read by Python 3.13 (before): line 3: invalid syntax"}
			c.want = pc.Defs["c.py"].Error
		}
		if got := onlyModifies(pc); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// testCode is the test-driven method's rule and the harness's guard's,
// together.
func TestTestCodeRule(t *testing.T) {
	for p, want := range map[string]bool{
		"tests/test_a.py": true, "pkg/testing/helpers.py": true, "conftest.py": true, "tox.ini": true, "pytest.ini": true,
		"src/x_test.py": true, "pkg/core.py": false, "docs/testing.rst": false, "setup.py": false, "pkg/sitecustomize.py": true,
	} {
		if testCode(p) != want {
			t.Errorf("testCode(%q) = %v", p, !want)
		}
	}
}

// releaseRun is a historyRun for the release method's LLM parts, with the
// LLM at llmdouble's scripted server.
func releaseRun(t *testing.T, script llmdouble.Script) (*historyRun, *llmdouble.Server) {
	t.Helper()
	dbl, err := llmdouble.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dbl.Close() })
	c, err := llm.New(llm.Config{Endpoint: dbl.URL + "/v1", Model: "double", Timeout: 10 * time.Second, Retries: -1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rc := config.Repo{Repository: "acme/geom", Method: config.MethodRelease, ReleaseKinds: []string{"feature"}}
	return &historyRun{o: Options{LLM: c, Log: &strings.Builder{}}, rc: rc, w: work{dir: t.TempDir()}, res: &repoResult{report: &RepoReport{}}}, dbl
}

func TestSortNotesWithLLMTestDouble(t *testing.T) {
	rel := history.ReleaseNotes{Release: history.Release{Tag: "v2.0", Date: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}, Pulls: []int{4, 7},
		Notes: history.Notes{Source: history.NotesChangelog, File: "CHANGES.md", Entries: []history.Entry{
			{Text: "Grids can be rotated", Kind: history.Other},
			{Text: "Crash on empty input (#7)", Kind: history.Fix, PRs: []int{7}},
		}, Links: [][]history.Link{nil, {{Number: 7, How: history.LinkNamed}}}}}
	byNum := map[int]history.Change{4: {PullRequest: history.PullRequest{Number: 4, Title: "Rotate grids"}}, 7: {PullRequest: history.PullRequest{Number: 7, Title: "Fix empty"}}}
	answer := `Sorted:
` + "```json\n" + `{"notes": [{"note": 1, "category": "new_features", "pull_requests": [4]}, {"note": 2, "category": "bug_fixes", "pull_requests": [7]}]}` + "\n```"
	r, dbl := releaseRun(t, func(req llmdouble.Request) llmdouble.Reply {
		if !strings.Contains(req.Text, "1. Grids can be rotated") || !strings.Contains(req.Text, "#4: Rotate grids") || !strings.Contains(req.Text, "README") {
			return llmdouble.Reply{Text: "the prompt lacks the notes or the pull requests"}
		}
		return llmdouble.Reply{Text: answer}
	})
	m := newReleaseMethod(r.rc).(*releaseMethod)
	notes, err := m.sortNotesLLM(context.Background(), r, rel, "README: geometry", byNum)
	if err != nil {
		t.Fatal(err)
	}
	if notes.Entries[0].Kind != history.Feature || len(notes.Links[0]) != 1 || notes.Links[0][0] != (history.Link{Number: 4, How: history.LinkMatched}) {
		t.Errorf("entry 1: %+v %+v", notes.Entries[0], notes.Links[0])
	}
	if notes.Links[1][0].How != history.LinkNamed {
		t.Errorf("entry 2's link %+v: it names #7", notes.Links[1])
	}
	// Answers the method must not take: a pull request the release did
	// not bring, a note left out, a category that is not one.
	for _, bad := range []string{
		`{"notes": [{"note": 1, "category": "new_features", "pull_requests": [99]}, {"note": 2, "category": "bug_fixes", "pull_requests": []}]}`,
		`{"notes": [{"note": 1, "category": "new_features", "pull_requests": []}]}`,
		`{"notes": [{"note": 1, "category": "features", "pull_requests": []}, {"note": 2, "category": "bug_fixes", "pull_requests": []}]}`,
		`I would rather not.`,
	} {
		answer = bad
		if _, err := m.sortNotesLLM(context.Background(), r, rel, "", byNum); err == nil {
			t.Errorf("answer %s was taken", bad)
		}
	}
	if dbl.Served().Requests != 5 {
		t.Errorf("%d requests", dbl.Served().Requests)
	}
}

func TestRequestWithLLMTestDouble(t *testing.T) {
	code := "diff --git a/geom/core.py b/geom/core.py\n--- a/geom/core.py\n+++ b/geom/core.py\n@@ -1,2 +1,2 @@\n-def area(w, h):\n-    return w * h\n+def area(w, h, scale=1):\n+    return w * h * scale\n"
	pc := &prCandidate{Change: history.Change{PullRequest: history.PullRequest{Number: 2, Title: "Add a scale to area", Body: "Lets users scale areas.\n\n```python\narea(1, 2, scale=3)\n```"},
		Patches: history.Patches{Code: code}}, Entry: "`area` takes a `scale` (#2)."}
	pc.verify.FailToPass = []string{"tests/test_core.py::test_area_scaled"}
	reply := "I want to scale the areas I compute: the area function should take a scale factor, one by default, that multiplies the result."
	r, _ := releaseRun(t, func(req llmdouble.Request) llmdouble.Reply {
		if !strings.Contains(req.Text, "test_area_scaled") || !strings.Contains(req.Text, "+    return w * h * scale") {
			return llmdouble.Reply{Text: "the prompt lacks the tests or the change"}
		}
		return llmdouble.Reply{Text: reply}
	})
	m := newReleaseMethod(r.rc).(*releaseMethod)
	text, why, err := m.Statement(context.Background(), r, pc)
	if err != nil || why != "" || text != reply {
		t.Fatalf("the LLM's request: %q, %q, %v", text, why, err)
	}
	// A request with code, or one copying a line of the patch, is not
	// used: the rules write it instead, without the description's code.
	for _, bad := range []string{
		"I want area(2, 3, scale=2) to return 12.",
		"I want to have def area(w, h, scale=1): in the library.",
		"Please add a scale factor.",
	} {
		reply = bad
		text, why, err := m.Statement(context.Background(), r, pc)
		if err != nil || why != "" {
			t.Fatalf("%q: %q, %v", bad, why, err)
		}
		if text == bad || !strings.HasPrefix(text, "I want to have this change in acme/geom: area takes a scale.") || strings.Contains(text, "area(1, 2") {
			t.Errorf("after %q the request is:\n%s", bad, text)
		}
	}
}

// A pull request whose entry and title are code cannot get a request by
// the rules: it is dropped with the reason.
func TestRequestRulesRefuseCode(t *testing.T) {
	pc := &prCandidate{Change: history.Change{PullRequest: history.PullRequest{Number: 3, Title: "x = area(1) == 2"},
		Patches: history.Patches{Code: "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"}}}
	m := newReleaseMethod(config.Repo{ReleaseKinds: []string{"feature"}})
	r := &historyRun{o: Options{Log: &strings.Builder{}}, rc: config.Repo{Repository: "o/r"}}
	text, why, err := m.Statement(context.Background(), r, pc)
	if err != nil || text != "" || !strings.Contains(why, "says anything but code") {
		t.Errorf("statement %q, reason %q, %v", text, why, err)
	}
}
