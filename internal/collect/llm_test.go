package collect

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/llm"
	"github.com/featbench/featbench/internal/mask"
	"github.com/featbench/featbench/internal/trace"
)

// stubChatter stands in for an LLM API, which tests cannot reach: it
// answers from a function and records the prompts.
type stubChatter struct {
	answer  func(prompt string) (string, error)
	prompts []string
}

func (s *stubChatter) Chat(_ context.Context, msgs []llm.Message) (llm.Reply, error) {
	p := msgs[len(msgs)-1].Content
	s.prompts = append(s.prompts, p)
	a, err := s.answer(p)
	return llm.Reply{Content: a}, err
}

func stubRun(ch Chatter, files map[string]string) *repoRun {
	r := &repoRun{o: Options{LLM: ch, Log: &strings.Builder{}}, rc: config.Repo{Repository: "o/pkg", ImportName: "pkg"}}
	r.src.files = files
	return r
}

func TestClassifyLLMStubChatter(t *testing.T) {
	g, err := trace.Decode(strings.NewReader(`{"version":1,"nodes":[
		{"id":"pkg/a.py::f::1","file":"pkg/a.py","qualname":"f","line":1,"start":1,"end":2,"kind":"function"},
		{"id":"pkg/b.py::g::1","file":"pkg/b.py","qualname":"g","line":1,"start":1,"end":2,"kind":"function"}],
		"imports":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	rules := classifyOut{Method: "rules", Tops: []string{"pkg/a.py::f::1", "pkg/b.py::g::1"}, Decisions: []decision{
		{ID: "pkg/a.py::f::1", Name: "f", Called: true, Top: true},
		{ID: "pkg/b.py::g::1", Name: "g", Called: true, Top: true},
	}}
	files := map[string]string{"tests/test_a.py": "from pkg.a import f\n", "pkg/a.py": "def f():\n    return 1\n", "pkg/b.py": "def g():\n    return 2\n"}
	ch := &stubChatter{answer: func(string) (string, error) {
		return "## Analysis\nf is tested.\n## Final Answer\n```json\n{\"tested_object_ids\": [\"pkg/a.py::f::1\"], \"reasoning\": \"f\"}\n```", nil
	}}
	r := stubRun(ch, files)
	out, err := r.classifyLLM(context.Background(), "tests/test_a.py", g, rules)
	if err != nil {
		t.Fatal(err)
	}
	if out.Method != "llm" || len(out.Tops) != 1 || out.Tops[0] != "pkg/a.py::f::1" || out.Decisions[1].Top {
		t.Errorf("classifyLLM = %+v", out)
	}
	// The prompt holds the test file and each candidate's source.
	if p := ch.prompts[0]; !strings.Contains(p, "from pkg.a import f") || !strings.Contains(p, "def g():\n    return 2") || !strings.Contains(p, "- id: pkg/b.py::g::1") {
		t.Errorf("prompt:\n%s", p)
	}
	// An id that is not a candidate is an error, not a top.
	ch.answer = func(string) (string, error) {
		return "```json\n{\"tested_object_ids\": [\"pkg/c.py::h::9\"]}\n```", nil
	}
	if _, err := r.classifyLLM(context.Background(), "tests/test_a.py", g, rules); err == nil || !strings.Contains(err.Error(), "not a candidate") {
		t.Errorf("unknown id: %v", err)
	}
	ch.answer = func(string) (string, error) { return "I cannot tell.", nil }
	if _, err := r.classifyLLM(context.Background(), "tests/test_a.py", g, rules); err == nil {
		t.Error("an answer without JSON was accepted")
	}
}

func TestStatementsStubChatter(t *testing.T) {
	doc := "Has one."
	c := &candidate{File: "tests/test_a.py", mask: maskOut{Interfaces: []mask.Interface{
		{ID: "pkg/a.py::f::1", Path: "pkg/a.py", Kind: "function", Qualname: "f", Described: true, Code: "def f(x):\n    # <your code>\n", DocLine: 1, Indent: "    "},
		{ID: "pkg/a.py::g::5", Path: "pkg/a.py", Kind: "function", Qualname: "g", Described: true, Docstring: &doc, Code: "def g():\n    \"\"\"Has one.\"\"\"\n    # <your code>\n", DocLine: 1, Indent: "    "},
	}}}
	ch := &stubChatter{answer: func(p string) (string, error) {
		if strings.Contains(p, "docstring") {
			return "Double x.", nil
		}
		return "Add doubling to pkg.", nil
	}}
	r := stubRun(ch, map[string]string{"pkg/a.py": "def f(x):\n    return 2 * x\n"})
	r.rc.Levels = []int{1}
	out, store, err := r.statements(context.Background(), c)
	if err != nil || !store || !out.LLM {
		t.Fatalf("statements: %v, store %v, %+v", err, store, out)
	}
	// Only the missing docstring was asked for.
	if len(ch.prompts) != 2 {
		t.Errorf("%d prompts, want one docstring and one task statement", len(ch.prompts))
	}
	if !strings.Contains(out.L1, "## Task\n\nAdd doubling to pkg.") || !strings.Contains(out.L1, "def f(x):\n    \"\"\"Double x.\"\"\"\n    # <your code>") {
		t.Errorf("statement:\n%s", out.L1)
	}
	// A failing LLM leaves the plain statement, not stored: the next run
	// asks again.
	ch.answer = func(string) (string, error) { return "", errors.New("503") }
	out, store, err = r.statements(context.Background(), c)
	if err != nil || store || out.LLM || !strings.Contains(out.L1, "Implement 2 interfaces of `pkg`") {
		t.Errorf("with a failing LLM: %v, store %v\n%s", err, store, out.L1)
	}
}

// TestStatementsFollowLevels: the stored statements are made for the
// levels verification passed. boltons' test_cacheutils lost level 1 in
// one run and passed it in the next (its pass-to-pass files changed); the
// statements stored by the first run, without level 1, were reused, and
// the instance was neither kept nor dropped.
func TestStatementsFollowLevels(t *testing.T) {
	r := stubRun(nil, map[string]string{"pkg/a.py": "def f(x):\n    return 2 * x\n"})
	r.w = work_(t.TempDir())
	r.cur = StageStatements
	r.res = &repoResult{report: &RepoReport{}}
	r.rc.Levels = []int{1, 2}
	c := &candidate{File: "tests/test_a.py", lost: map[int]bool{1: true}, mask: maskOut{
		Interfaces: []mask.Interface{{ID: "pkg/a.py::f::1", Path: "pkg/a.py", Kind: "function", Qualname: "f", Described: true, Code: "def f(x):\n    # <your code>\n", DocLine: 1, Indent: "    "}},
		Result:     &mask.Result{Level2Interfaces: []mask.Interface{{ID: "pkg/a.py::f::1", Kind: "function", Qualname: "f", Described: true, Code: "def f(x):\n    # <your code>\n"}}},
	}}
	r.cands = []*candidate{c}
	if err := r.stageStatements(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.stmt.L1 != "" || c.stmt.L2 == "" {
		t.Fatalf("first run: level 1 %q, level 2 %q; want level 2 only", c.stmt.L1, c.stmt.L2)
	}
	c.lost, c.stmt = nil, statementsOut{}
	if err := r.stageStatements(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.stmt.L1 == "" {
		t.Fatal("level 1 passed verification, and its statement is the stored one without it")
	}
	r.gather()
	if len(r.res.instances) != 2 {
		t.Errorf("%d instances gathered, want 2", len(r.res.instances))
	}
	// A level without a statement is dropped with a reason, never lost.
	c.stmt.L1, r.res = "", &repoResult{report: &RepoReport{}}
	r.gather()
	if len(r.res.instances) != 1 || len(r.res.report.Drops) != 1 || r.res.report.Drops[0].Stage != StageStatements {
		t.Errorf("a level without a statement: %d instances, drops %+v", len(r.res.instances), r.res.report.Drops)
	}
}

// TestStatementsGiveVerbatimMessages: a statement must give the messages
// the tests compare verbatim that the feature's code makes (issue 26: a
// TOML parser's "(at line L, column C)", found unsolvable and not flagged).
// The instance is dropped with that reason, at every level whose statement
// lacks it; a statement whose docstring shows the format is kept.
func TestStatementsGiveVerbatimMessages(t *testing.T) {
	code := "class DecodeError(ValueError):\n    def __init__(self, msg, doc, pos):\n        super().__init__(f\"{msg} (at line {doc.count(chr(10), 0, pos) + 1}, column {pos})\")\n\n\ndef loads(s):\n    raise DecodeError(\"Unclosed array\", s, len(s))\n"
	gold := "diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,0 +1,7 @@\n+" + strings.ReplaceAll(strings.TrimSuffix(code, "\n"), "\n", "\n+") + "\n"
	test := "diff --git a/tests/test_a.py b/tests/test_a.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test_a.py\n@@ -0,0 +1,6 @@\n+import pytest\n+from pkg.a import loads, DecodeError\n+def test_unclosed():\n+    with pytest.raises(DecodeError) as e:\n+        loads(\"a = [1,\")\n+    assert str(e.value) == \"Unclosed array (at line 1, column 7)\"\n"
	for _, tc := range []struct {
		name, doc string
		kept      int
	}{
		{"format not given", "Parse a document.", 0},
		{"format given", "Parse a document; DecodeError's message ends \"(at line L, column C)\". An unclosed array is \"Unclosed array\".", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := stubRun(nil, map[string]string{"pkg/a.py": code})
			r.w = work_(t.TempDir())
			r.cur = StageStatements
			r.res = &repoResult{report: &RepoReport{}}
			r.rc.Levels = []int{1, 2}
			doc := tc.doc
			ifs := []mask.Interface{{ID: "pkg/a.py::loads::6", Path: "pkg/a.py", Kind: "function", Qualname: "loads", Described: true, Docstring: &doc,
				Code: "def loads(s):\n    \"\"\"" + doc + "\"\"\"\n    # <your code>\n", DocLine: 1, Indent: "    "}}
			c := &candidate{File: "tests/test_a.py", mask: maskOut{Patch: gold, TestPatch: test, Interfaces: ifs,
				Result: &mask.Result{Level2Interfaces: ifs}}}
			r.cands = []*candidate{c}
			if err := r.stageStatements(context.Background()); err != nil {
				t.Fatal(err)
			}
			r.gather()
			if len(r.res.instances) != tc.kept {
				t.Fatalf("%d instances kept, want %d; drops %+v", len(r.res.instances), tc.kept, r.res.report.Drops)
			}
			if tc.kept == 0 {
				if len(r.res.report.Drops) != 2 {
					t.Fatalf("drops %+v, want one per level", r.res.report.Drops)
				}
				for _, d := range r.res.report.Drops {
					if d.Stage != StageStatements || !strings.Contains(d.Reason, `statement incomplete: the tests compare "Unclosed array (at line 1, column 7)" verbatim`) {
						t.Errorf("drop %+v", d)
					}
				}
			}
		})
	}
}
