package patch_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/patch"
)

// why a hostile patch is refused, as git_test.go verifies with real git in
// a sandbox.
type why int

const (
	// gitRefuses: `git apply --check` refuses it; it is unsupported.
	gitRefuses why = iota + 1
	// harmful: running the apply chain in a sandbox does harm (writes or
	// reads outside the repository, writes into .git, creates a link or
	// a file name with a backslash or control character).
	harmful
	// contradictory: git applies it, but to other files than the refused
	// header names: its headers contradict each other, which no diff tool
	// writes, and another reader (GNU patch picks among ---, +++ and
	// Index: names) could take the refused name.
	contradictory
	// inert: git accepts it and changes no file (a submodule, which the
	// container cannot fetch, becomes an empty folder).
	inert
	// notAPath: refused for its form (size, NUL, binary, format), not a
	// path: not run through git.
	notAPath
)

// hunk is a hunk that applies to the sandbox's x.py ("a\nb\n").
const hunk = "@@ -1,2 +1,2 @@\n a\n-b\n+c\n"

// hostile are patches Check must refuse, with a word of the reason and
// the path it names (what git_test.go looks for). ROOT stands for an
// absolute folder.
var hostile = []struct {
	name, diff, reason string
	why                why
	path               string
}{
	// ".." in every kind of header line.
	{"../ in diff --git, ---, +++ (a new file)",
		"diff --git a/../evil.py b/../evil.py\nnew file mode 100644\n--- /dev/null\n+++ b/../evil.py\n@@ -0,0 +1 @@\n+x\n",
		`".." component`, gitRefuses, "../evil.py"},
	{"../ in the diff --git line only",
		"diff --git a/../outside.py b/../outside.py\nindex 1111111..2222222 100644\n--- a/x.py\n+++ b/x.py\n" + hunk,
		`".." component`, contradictory, "../outside.py"},
	{"../ in --- only",
		"diff --git a/x.py b/x.py\nindex 1111111..2222222 100644\n--- a/../outside.py\n+++ b/x.py\n" + hunk,
		`".." component`, gitRefuses, "../outside.py"},
	{"../ in +++ only",
		"diff --git a/x.py b/x.py\nindex 1111111..2222222 100644\n--- a/x.py\n+++ b/../outside.py\n" + hunk,
		`".." component`, gitRefuses, "../outside.py"},
	{"../ in a plain diff",
		"--- a/../outside.py\n+++ b/../outside.py\n@@ -1 +1 @@\n-old\n+new\n",
		`".." component`, gitRefuses, "../outside.py"},
	{"../ in the --- line of a plain diff",
		"--- a/../outside.py\n+++ b/x.py\n" + hunk,
		`".." component`, contradictory, "../outside.py"},
	{"../ in rename from",
		"diff --git a/x.py b/y.py\nsimilarity index 100%\nrename from ../outside.py\nrename to y.py\n",
		`".." component`, gitRefuses, "../outside.py"},
	{"../ in rename to",
		"diff --git a/x.py b/y.py\nsimilarity index 100%\nrename from x.py\nrename to ../y.py\n",
		`".." component`, gitRefuses, "../y.py"},
	{"../ in copy from: git copies a file from outside the repository",
		"diff --git a/y.py b/y.py\nsimilarity index 100%\ncopy from ../outside.py\ncopy to y.py\n",
		`".." component`, harmful, "../outside.py"},
	{"../ in copy to",
		"diff --git a/x.py b/y.py\nsimilarity index 100%\ncopy from x.py\ncopy to ../y.py\n",
		`".." component`, gitRefuses, "../y.py"},
	{"../ in an Index: line",
		"Index: ../outside.py\n--- a/x.py\n+++ b/x.py\n" + hunk,
		`".." component`, contradictory, "../outside.py"},
	{"../ in a *** line before the diff",
		"*** a/../outside.py\n--- a/x.py\n+++ b/x.py\n" + hunk,
		`".." component`, contradictory, "../outside.py"},
	{"../ hidden in a quoted name with octal escapes",
		"diff --git \"a/\\056\\056/outside.py\" \"b/\\056\\056/outside.py\"\nindex 1111111..2222222 100644\n" +
			"--- \"a/\\056\\056/outside.py\"\n+++ \"b/\\056\\056/outside.py\"\n@@ -1 +1 @@\n-old\n+new\n",
		`".." component`, gitRefuses, "../outside.py"},
	{"../ in a header after a hunk its counts end early",
		"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+c\n--- a/../outside.py\n+++ b/../outside.py\n@@ -1 +1 @@\n-old\n+new\n",
		`".." component`, gitRefuses, "../outside.py"},
	// Absolute paths.
	// ROOT is the sandbox's folder (git_test.go), so that a tool that
	// wrote there would be seen writing outside the repository.
	{"an absolute path in a plain diff",
		"--- /dev/null\n+++ ROOT/evil.py\n@@ -0,0 +1 @@\n+x\n",
		"is absolute", contradictory, "ROOT/evil.py"},
	{"an absolute path after the a/ prefix",
		"diff --git a/ROOT/evil.py b/ROOT/evil.py\nnew file mode 100644\n--- /dev/null\n+++ b/ROOT/evil.py\n@@ -0,0 +1 @@\n+x\n",
		"absolute once", gitRefuses, "ROOT/evil.py"},
	// The repository itself.
	{".git/hooks: git refuses it, GNU patch writes the hook",
		"diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n" +
			"@@ -0,0 +1,2 @@\n+#!/bin/sh\n+echo owned\n",
		"inside a .git folder", harmful, ".git/hooks/pre-commit"},
	{".GIT/config, another case",
		"diff --git a/.GIT/config b/.GIT/config\nnew file mode 100644\n--- /dev/null\n+++ b/.GIT/config\n@@ -0,0 +1 @@\n+x\n",
		"inside a .git folder", gitRefuses, ".GIT/config"},
	{"a nested .git folder",
		"diff --git a/sub/.git/config b/sub/.git/config\nnew file mode 100644\n--- /dev/null\n+++ b/sub/.git/config\n@@ -0,0 +1 @@\n+x\n",
		"inside a .git folder", gitRefuses, "sub/.git/config"},
	// Names no repository should hold.
	{"a backslash",
		"diff --git a/..\\evil.py b/..\\evil.py\nnew file mode 100644\n--- /dev/null\n+++ b/..\\evil.py\n@@ -0,0 +1 @@\n+x\n",
		"backslash", harmful, `..\evil.py`},
	{"a newline in a quoted name",
		"diff --git \"a/evil\\nPASSED.py\" \"b/evil\\nPASSED.py\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/evil\\nPASSED.py\"\n@@ -0,0 +1 @@\n+x\n",
		"control character", harmful, "evil\nPASSED.py"},
	{"an escape character in a name",
		"diff --git a/evil\x1b[2J.py b/evil\x1b[2J.py\nnew file mode 100644\n--- /dev/null\n+++ b/evil\x1b[2J.py\n@@ -0,0 +1 @@\n+x\n",
		"control character", harmful, "evil\x1b[2J.py"},
	// Modes.
	{"a new symbolic link",
		"diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n",
		"symbolic link", harmful, "link"},
	{"a file turned into a symbolic link",
		"diff --git a/x.py b/x.py\nold mode 100644\nnew mode 120000\n",
		"symbolic link", gitRefuses, "x.py"},
	{"a change to a symbolic link",
		"diff --git a/x.py b/x.py\nindex 1111111..2222222 120000\n--- a/x.py\n+++ b/x.py\n" + hunk,
		"symbolic link", gitRefuses, "x.py"},
	{"a submodule",
		"diff --git a/m b/m\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n+++ b/m\n@@ -0,0 +1 @@\n" +
			"+Subproject commit 1234567890123456789012345678901234567890\n",
		"submodule", inert, "m"},
	// Forms that never reach git.
	{"binary files differ",
		"diff --git a/logo.png b/logo.png\nindex 1111111..2222222 100644\nBinary files a/logo.png and b/logo.png differ\n",
		"binary patch", notAPath, ""},
	{"a GIT binary patch",
		"diff --git a/icon.png b/icon.png\nnew file mode 100644\nindex 0000000..45a21f1\nGIT binary patch\nliteral 10\nRcmeAS@N?(olHy`u000e}0jdB1\n\nliteral 0\nHcmV?d00001\n\n",
		"binary patch", notAPath, ""},
	{"a NUL byte",
		"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\x00\n",
		"NUL byte", notAPath, ""},
	{"a context diff",
		"*** a/x.py\n--- b/x.py\n***************\n*** 1,2 ****\n  a\n! b\n--- 1,2 ----\n  a\n! c\n",
		"not a unified diff", notAPath, ""},
	{"a context diff after a unified one",
		"--- a/x.py\n+++ b/x.py\n" + hunk + "*** a/y.py\n--- b/y.py\n***************\n*** 1 ****\n! b\n--- 1 ----\n! c\n",
		"context diff", notAPath, ""},
	{"an ed script after a unified diff",
		"--- a/x.py\n+++ b/x.py\n" + hunk + "1a\n!touch /tmp/owned\n.\n",
		"ed-style", notAPath, ""},
	{"an agent's apology",
		"I am sorry, I could not implement the feature.\n",
		"not a unified diff", notAPath, ""},
	{"a badly quoted name",
		"diff --git a/x.py b/x.py\nindex 1111111..2222222 100644\n--- \"a/x.py\n+++ b/x.py\n" + hunk,
		"badly quoted", notAPath, ""},
}

func TestCheckRefuses(t *testing.T) {
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			err := patch.Check([]byte(strings.ReplaceAll(tc.diff, "ROOT", "/tmp/x")), patch.Limits{})
			var r *patch.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("Check = %v, want a *Refusal", err)
			}
			if !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("reason %q, want it to say %q", r.Reason, tc.reason)
			}
			if r.Line < 1 && tc.why != notAPath {
				t.Errorf("refusal %v names no line", err)
			}
			if strings.Contains(r.Error(), "\n") || strings.Contains(r.Error(), "\x1b") {
				t.Errorf("the message %q holds a control character; it is shown on a terminal and in logs", r.Error())
			}
		})
	}
}

func TestCheckLimits(t *testing.T) {
	diff := []byte("--- a/x.py\n+++ b/x.py\n" + hunk)
	if err := patch.Check(diff, patch.Limits{MaxBytes: len(diff)}); err != nil {
		t.Errorf("a patch at the limit: %v", err)
	}
	err := patch.Check(diff, patch.Limits{MaxBytes: len(diff) - 1})
	if err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a patch over the limit: %v", err)
	}
	big := make([]byte, patch.DefaultMaxBytes+1)
	if err := patch.Check(big, patch.Limits{}); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a patch over the default limit: %v", err)
	}
}

// Patches that look alarming but are not: Check must let them through.
func TestCheckAccepts(t *testing.T) {
	for _, tc := range []struct{ name, diff string }{
		{"empty", ""},
		{"whitespace", " \n\t\n"},
		{"removed and added lines that look like hostile headers",
			"diff --git a/notes.sql b/notes.sql\nindex 1111111..2222222 100644\n--- a/notes.sql\n+++ b/notes.sql\n" +
				"@@ -1,3 +1,3 @@\n select 1;\n--- a/../../etc/passwd\n+++ b/.git/hooks/pre-commit\n select 2;\n"},
		{"a removed line that looks like a symlink mode",
			"--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,1 @@\n-new file mode 120000\n-deleted file mode 160000\n+ok\n"},
		{"paths with spaces and dots that are not components",
			"diff --git a/my dir/a..b.py b/my dir/a..b.py\nnew file mode 100644\n--- /dev/null\n+++ b/my dir/a..b.py\n@@ -0,0 +1 @@\n+x\n" +
				"diff --git a/...py b/...py\nnew file mode 100644\n--- /dev/null\n+++ b/...py\n@@ -0,0 +1 @@\n+x\n"},
		{"dotfiles that are not .git",
			"diff --git a/.gitignore b/.gitignore\nindex 1111111..2222222 100644\n--- a/.gitignore\n+++ b/.gitignore\n@@ -1 +1,2 @@\n a\n+b\n" +
				"diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\nnew file mode 100644\n--- /dev/null\n+++ b/.github/workflows/ci.yml\n@@ -0,0 +1 @@\n+on: push\n" +
				"diff --git a/pkg/.gitkeep b/pkg/.gitkeep\nnew file mode 100644\nindex 0000000..e69de29\n"},
		{"a quoted UTF-8 name",
			"diff --git \"a/caf\\303\\251.py\" \"b/caf\\303\\251.py\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/caf\\303\\251.py\"\n@@ -0,0 +1 @@\n+x\n"},
		{"CRLF line endings",
			"diff --git a/x.py b/x.py\r\nindex 1111111..2222222 100644\r\n--- a/x.py\r\n+++ b/x.py\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n"},
		{"a rename, a copy and an executable bit",
			"diff --git a/a.py b/b.py\nsimilarity index 100%\nrename from a.py\nrename to b.py\n" +
				"diff --git a/b.py b/c.py\nsimilarity index 100%\ncopy from b.py\ncopy to c.py\n" +
				"diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"},
		{"a deletion",
			"diff --git a/gone.py b/gone.py\ndeleted file mode 100644\nindex 1111111..0000000\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"},
		{"plain diff -u output with timestamps",
			"--- x.py.orig\t2024-05-01 10:00:00.000000000 +0200\n+++ x.py\t2024-05-01 10:01:00.000000000 +0200\n@@ -1 +1 @@\n-a\n+b\n"},
		{"text around the diff",
			"I implemented the feature.\n\n```diff\n--- a/x.py\n+++ b/x.py\n" + hunk + "```\n\nThe tests pass.\n"},
		{"a missing final newline", "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := patch.Check([]byte(tc.diff), patch.Limits{}); err != nil {
				t.Fatal(err)
			}
			if _, err := patch.Parse([]byte(tc.diff)); err != nil {
				t.Errorf("Check accepts what Parse refuses: %v", err)
			}
		})
	}
}

func TestCheckExamples(t *testing.T) {
	for _, e := range readExamples(t) {
		for _, raw := range []string{e.Patch, e.TestPatch} {
			if err := patch.Check([]byte(raw), patch.Limits{}); err != nil {
				t.Errorf("%s: %v", e.ID, err)
			}
		}
	}
	for _, e := range examplePredictions(t) {
		if err := patch.Check(e.patch, patch.Limits{}); err != nil {
			t.Errorf("%s: %v", e.name, err)
		}
	}
}

func TestRefusalMessage(t *testing.T) {
	err := patch.Check([]byte("--- a/../x.py\n+++ b/../x.py\n"+hunk), patch.Limits{})
	want := `patch refused (line 1): path "a/../x.py" has a ".." component, which would reach outside the repository`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	err = patch.Check([]byte("@@ -1 +1 @@\n-a\n+b\n"), patch.Limits{})
	var se *patch.SyntaxError
	if !errors.As(err, &se) || se.Line != 1 {
		t.Errorf("a refusal for a parse error does not unwrap to it: %v", err)
	}
}
