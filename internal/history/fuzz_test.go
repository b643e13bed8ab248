package history

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Whatever a changelog holds, reading it ends, and what it gives is
// bounded, clean text every later step can show.
func FuzzParseChangelog(f *testing.F) {
	for _, s := range []string{keepAChangelog, towncrierRST, towncrierMarkdown, overlinedRST, plainText,
		"## 1.0\n- a\n  - b\n    - c:\n      - d\n", "1.0\n===\n\n* x:\n\n  * y\n", "```\n## 1.0\n", "- \x1b[31m#1\u202e\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		cl := ParseChangelog("CHANGELOG.md", []byte(src))
		for _, sec := range cl.Sections {
			if len(sec.Entries) > MaxEntries {
				t.Fatalf("%d entries", len(sec.Entries))
			}
			for _, e := range sec.Entries {
				if len(e.Text) > maxEntry || !utf8.ValidString(e.Text) || strings.ContainsAny(e.Text, "\x1b\r\u202e") {
					t.Fatalf("entry %q", e.Text)
				}
				if Classify(e.Group, e.Text) != e.Kind {
					t.Fatalf("kind of %q", e.Text)
				}
				for _, n := range e.PRs {
					if n < 1 || n > maxNumber {
						t.Fatalf("reference %d", n)
					}
				}
			}
		}
	})
}

// Whatever a diff holds, Split either refuses it or gives patches the
// harness's patch check accepts, with no section lost.
func FuzzSplit(f *testing.F) {
	f.Add("diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1 +1,2 @@\n x\n+y\n")
	f.Add("diff --git a/logo.png b/logo.png\nindex 1..2 100644\nBinary files a/logo.png and b/logo.png differ\n")
	f.Add("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n")
	f.Fuzz(func(t *testing.T, diff string) {
		p, err := Split([]byte(diff), func(path string) bool { return strings.HasPrefix(path, "tests/") })
		if err != nil {
			return
		}
		for _, part := range []string{p.Code, p.Test} {
			if part == "" {
				continue
			}
			if _, err := Split([]byte(part), func(string) bool { return false }); err != nil {
				t.Fatalf("a split patch does not read again: %v\n%q", err, part)
			}
		}
	})
}

// Whatever a commit message holds, a pull request read from it has a
// one-line title and a clean, bounded body.
func FuzzFromCommit(f *testing.F) {
	f.Add("Add x (#12)\n\nbody")
	f.Add("Merge pull request #3 from a/b\n\nTitle\n\nBody")
	f.Add("x (#1) (#2)")
	f.Fuzz(func(t *testing.T, msg string) {
		for _, parents := range [][]string{{"p"}, {"p", "q"}} {
			c := Commit{Hash: "h", Parents: parents, Message: Bound(Clean(msg), MaxMessage)}
			pr, ok, _ := FromCommit(c)
			if !ok {
				continue
			}
			if strings.Contains(pr.Title, "\n") || len(pr.Title) > MaxTitle+len("…") || pr.Number < 1 || !utf8.ValidString(pr.Body) {
				t.Fatalf("%+v", pr)
			}
		}
	})
}
