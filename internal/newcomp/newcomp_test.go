package newcomp

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/llm"
	"github.com/featbench/featbench/internal/llmdouble"
)

func TestRulesIntent(t *testing.T) {
	for _, tc := range []struct {
		title, body string
		feature     bool
	}{
		{"Add `chunked_even` to more", "", true},
		{"New function: partial_product", "", true},
		{"Implement LFUCache.popitem", "", true},
		{"Support for Python 3.13 in the TTL cache", "", true},
		{"Fix off-by-one in windowed", "Adds a test.", false},
		{"fixes #123: crash on empty input", "", false},
		{"Revert \"Add frob\"", "", false},
		{"Docs: describe the new option", "", false},
		{"Bump version to 2.1", "", false},
		{"Refactor the cache internals", "Adds helper functions.", false},
		{"Add regression test for the broken parser", "", false},
		{"sliding window iterator", "This adds a new `sliding` function.\n\nFixes nothing.", true},
		{"sliding window iterator", "Some words.", false},
		{"Deprecate old_name in favour of new_name", "", false},
	} {
		got := RulesIntent(tc.title, tc.body)
		if got.Feature != tc.feature || got.By != "rules" || got.Reason == "" {
			t.Errorf("RulesIntent(%q, %q) = %+v, want feature %v", tc.title, tc.body, got, tc.feature)
		}
	}
}

func TestClassifyIntentWithLLMTestDouble(t *testing.T) {
	answers := map[string]string{
		"Add frob":       "```json\n{\"label\": \"new feature\", \"reason\": \"adds frob\"}\n```",
		"Rename helpers": `The answer: {"label": "Refactoring", "reason": "only renames"}`,
		"Odd":            `{"label": "feature-ish", "reason": "?"}`,
	}
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		for title, a := range answers {
			if strings.Contains(r.Text, "Title: "+title+"\n") {
				return llmdouble.Reply{Text: a}
			}
		}
		return llmdouble.Reply{Status: 500}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	client, err := llm.New(llm.Config{Endpoint: dbl.URL, Model: "double", Retries: -1}, func(string) string { return "" }, &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := ClassifyIntent(ctx, client, "pkg", "Add frob", "Adds frob.", []string{"frob"})
	if err != nil || !got.Feature || got.By != "llm" || got.Label != LabelFeature {
		t.Errorf("Add frob: %+v %v", got, err)
	}
	got, err = ClassifyIntent(ctx, client, "pkg", "Rename helpers", "", []string{"new_helper"})
	if err != nil || got.Feature || got.Label != LabelRefactor {
		t.Errorf("Rename helpers: %+v %v", got, err)
	}
	if _, err := ClassifyIntent(ctx, client, "pkg", "Odd", "", nil); err == nil || !strings.Contains(err.Error(), "feature-ish") {
		t.Errorf("an unknown label: %v", err)
	}
	if _, err := ClassifyIntent(ctx, client, "pkg", "Server down", "", nil); err == nil {
		t.Error("a failing model gave no error")
	}
	// The prompt names what the pull request adds.
	if got, _ := ClassifyIntent(ctx, nil, "pkg", "Add frob", "", nil); got.By != "rules" || !got.Feature {
		t.Errorf("without a model: %+v", got)
	}
}

const goldPatch = `diff --git a/CHANGES.md b/CHANGES.md
index 1cb5c759f429b2a7e0cfaacf03653bf9387be7c6..23165a0b9a9cd97667f42a6ca519da5d3e27c5b4 100644
--- a/CHANGES.md
+++ b/CHANGES.md
@@ -1,2 +1,4 @@
 # Changes
+
+- New: ` + "`sliding(iterable, n)`" + ` yields overlapping windows.
diff --git a/pkg/more.py b/pkg/more.py
--- a/pkg/more.py
+++ b/pkg/more.py
@@ -10,0 +11,9 @@
+def sliding(iterable, n):
+    """Yield overlapping windows of *n* items.
+
+    >>> list(sliding([1, 2, 3], 2))
+    [(1, 2), (2, 3)]
+    """
+    window = collections.deque(maxlen=n)
+    for item in iterable:
+        window.append(item)
`

const testPatch = `diff --git a/tests/test_more.py b/tests/test_more.py
--- a/tests/test_more.py
+++ b/tests/test_more.py
@@ -1,0 +2,2 @@
+def test_sliding():
+    assert list(sliding("abc", 2)) == [("a", "b"), ("b", "c")]
`

func input(body, hint string) Input {
	return Input{Project: "pkg", Title: "Add sliding windows", Body: body, Hint: hint, CodePatch: goldPatch, TestPatch: testPatch,
		Components: []bench.Component{{File: "pkg/more.py", Name: "sliding", Kind: "function", Signature: "def sliding(iterable, n):",
			Docstring: "Yield overlapping windows of *n* items.\n\n>>> list(sliding([1, 2, 3], 2))\n[(1, 2), (2, 3)]"}}}
}

func TestStatementHints(t *testing.T) {
	brief, err := Statement(input("This adds `sliding`.", HintBrief))
	if err != nil {
		t.Fatal(err)
	}
	detailed, err := Statement(input("This adds `sliding`.", ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Feature request", "**Add sliding windows**", "This adds `sliding`.", "### `pkg/more.py`", "- `sliding` (function):", "  def sliding(iterable, n):\n      ...\n"} {
		if !strings.Contains(brief, want) {
			t.Errorf("the brief statement lacks %q:\n%s", want, brief)
		}
	}
	for _, bad := range []string{"Yield overlapping", "CHANGES.md"} {
		if strings.Contains(brief, bad) {
			t.Errorf("the brief statement gives %q", bad)
		}
	}
	for _, want := range []string{"  def sliding(iterable, n):\n      \"\"\"Yield overlapping windows of *n* items.\n\n      >>> list(sliding([1, 2, 3], 2))", "## Other changes of the pull request", "+- New: `sliding(iterable, n)` yields overlapping windows."} {
		if !strings.Contains(detailed, want) {
			t.Errorf("the detailed statement lacks %q:\n%s", want, detailed)
		}
	}
	if strings.Contains(detailed, "1cb5c759f4") {
		t.Error("the non-Python changes show the blobs' hashes")
	}
	if strings.Contains(detailed, "collections.deque") {
		t.Error("the statement gives the component's body")
	}
	if _, err := Statement(input("", "verbose")); err == nil {
		t.Error("an unknown hint was accepted")
	}
	if l := Leaks(input("This adds `sliding`.", "")); len(l) != 0 {
		t.Errorf("the statement's own signature and docstring count as leaks: %q", l)
	}
}

func TestLeaks(t *testing.T) {
	// The docstring's example is given by design, even where a test has
	// the same line (toolz' EqualityHashKey, boltons' SpooledBytesIO).
	in := input("Windows, please.", "")
	in.Components[0].Docstring += "\n>>> assert list(sliding(\"abc\", 2)) == [(\"a\", \"b\"), (\"b\", \"c\")]"
	if got := Leaks(in); len(got) != 0 {
		t.Errorf("a docstring's doctest counts as a leak: %q", got)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"a body line", "Like this:\n\n```python\nwindow = collections.deque(maxlen=n)\n```", "a line of the gold patch \"window = collections.deque(maxlen=n)\""},
		{"a test line", "Test: `assert list(sliding(\"abc\", 2)) == [(\"a\", \"b\"), (\"b\", \"c\")]`", "a line of the test patch"},
		{"nothing", "Windows, please.", ""},
	} {
		got := Leaks(input(tc.body, HintBrief))
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: leaks %q", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)):
			t.Errorf("%s: leaks %q, want %q", tc.name, got, tc.want)
		}
	}
}
