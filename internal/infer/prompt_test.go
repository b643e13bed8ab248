package infer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/tokens"
)

func TestAnswerDiffs(t *testing.T) {
	d1 := "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
	d2 := "--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-c\n+d\n"
	ans := "Here is the change.\n\n```diff\n" + d1 + "```\n\nAnd one more:\n\n```\n" + d2 + "```\n\n```python\nprint('not a diff')\n```\n"
	if got := AnswerDiffs(ans); got != d1+d2 {
		t.Errorf("diffs:\n%s\nwant:\n%s", got, d1+d2)
	}
	if got := AnswerDiffs(d1); got != d1 {
		t.Errorf("a bare diff: %q", got)
	}
	if got := AnswerDiffs("I cannot do this."); got != "" {
		t.Errorf("no diff: %q", got)
	}
	// An answer cut off at the token limit: its block runs to the end.
	if got := AnswerDiffs("```diff\n" + d1); got != d1 {
		t.Errorf("unterminated: %q", got)
	}
}

func TestAnswerFilesOf(t *testing.T) {
	ans := "Two files.\n\nFile: `pkg/a.py`\n```python\ndef a():\n    return 1\n```\n\n**File: pkg/new.py**\n\n```\nX = 2\n```\n\n```python\norphan = True\n```\n"
	got, err := AnswerFilesOf(ans)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["pkg/a.py"] != "def a():\n    return 1\n" || got["pkg/new.py"] != "X = 2\n" {
		t.Errorf("files %q", got)
	}
	// A path out of the repository or into .git is refused.
	for _, p := range []string{"../etc/passwd", "/etc/passwd", ".git/hooks/pre-commit", "pkg/../../x.py", "a\\b.py"} {
		if _, err := AnswerFilesOf("File: " + p + "\n```\nx\n```\n"); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
}

func TestPickContext(t *testing.T) {
	files := map[string]string{
		"README.md":         "Cachekit: caches for Python.",
		"cachekit/lru.py":   "class LRUCache:\n    def evict(self):\n        pass\n",
		"cachekit/ttl.py":   "class TTLCache:\n    def expire(self, ttl):\n        return ttl\n",
		"cachekit/util.py":  "def helper():\n    return expire_all()\n",
		"tests/test_ttl.py": "def test_ttl_expire_ttl_ttl():\n    pass\n",
		"cachekit/big.py":   strings.Repeat("ttl expire ", 2000),
		"docs/notes.rst":    "ttl ttl ttl",
		"cachekit/fresh.py": "def fresh():\n    pass\n",
	}
	in := &bench.Instance{InstanceID: "x", ProblemStatement: "Add expire(ttl) to TTLCache so entries older than ttl go.",
		Patch:      "diff --git a/cachekit/ttl.py b/cachekit/ttl.py\n--- a/cachekit/ttl.py\n+++ b/cachekit/ttl.py\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/cachekit/gone.py b/cachekit/gone.py\nnew file mode 100644\n--- /dev/null\n+++ b/cachekit/gone.py\n@@ -0,0 +1 @@\n+x\n",
		TestPatch:  "diff --git a/tests/test_ttl.py b/tests/test_ttl.py\n--- a/tests/test_ttl.py\n+++ b/tests/test_ttl.py\n@@ -1 +1 @@\n-a\n+b\n",
		Components: []bench.Component{{File: "cachekit/fresh.py", Name: "fresh", Kind: "function", Signature: "def fresh():"}},
	}
	paths := func(fs []ContextFile) string { return strings.Join(contextPaths(fs), " ") }

	got, err := pickContext(&Prompt{Context: ContextOracle, Budget: 27000}, in, files)
	if err != nil || paths(got) != "cachekit/ttl.py" {
		t.Errorf("oracle: %q %v; want the gold patch's file that exists", paths(got), err)
	}
	// BM25: the README and the components' file first, then by rank; the
	// big file does not fit the budget and is skipped, a test file and a
	// file that shares no term are not taken.
	budget := tokens.Estimate(BuildPrompt(&Prompt{}, in, nil)) + 40
	for _, p := range []string{"README.md", "cachekit/fresh.py", "cachekit/ttl.py", "cachekit/util.py"} {
		budget += tokens.Estimate(fileBlock(p, files[p]))
	}
	got, err = pickContext(&Prompt{Context: ContextBM25, Budget: budget}, in, files)
	if err != nil || paths(got) != "README.md cachekit/fresh.py cachekit/ttl.py cachekit/util.py" {
		t.Errorf("bm25: %q %v", paths(got), err)
	}
	if p := BuildPrompt(&Prompt{}, in, got); tokens.Estimate(p) > budget {
		t.Errorf("the prompt takes %d tokens, over the budget of %d", tokens.Estimate(p), budget)
	}
	if _, err := pickContext(&Prompt{Context: "grep"}, in, files); err == nil {
		t.Error("an unknown context was accepted")
	}
}

// TestPromptWithinBudget: whatever the budget, the prompt BM25 fills stays
// within it (a real run's prompt once took 27,012 tokens of 27,000: the
// files' header was longer than what the count started from).
func TestPromptWithinBudget(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("pkg/m%02d.py", i)] = strings.Repeat(fmt.Sprintf("def cache_%d(ttl):\n    return expire(ttl) + %d\n", i, i), 1+i%7)
	}
	in := &bench.Instance{InstanceID: "x", ProblemStatement: "Add expire(ttl) to the cache."}
	base := tokens.Estimate(BuildPrompt(&Prompt{}, in, nil))
	for budget := base; budget < base+3000; budget += 37 {
		p := &Prompt{Context: ContextBM25, Budget: budget}
		got, err := pickContext(p, in, files)
		if err != nil {
			t.Fatal(err)
		}
		if n := tokens.Estimate(BuildPrompt(p, in, got)); n > budget {
			t.Errorf("budget %d: the prompt of %d files takes %d tokens", budget, len(got), n)
		}
	}
}
