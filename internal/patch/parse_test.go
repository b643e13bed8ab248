package patch_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/patch"
)

// repoRoot is the module's root, from this package's folder.
const repoRoot = "../.."

// example is one instance of the example dataset.
type example struct {
	ID        string `json:"instance_id"`
	Patch     string `json:"patch"`
	TestPatch string `json:"test_patch"`
}

func readExamples(t testing.TB) []example {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "data/datasets/example/v2/instances.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []example
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e example
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no example instances")
	}
	return out
}

// examplePrediction is one of the hand-written example predictions.
type examplePrediction struct {
	name, id string // name says where it comes from
	patch    []byte
}

// examplePredictions reads the hand-written example predictions: JSONL
// files in SWE-bench's format under examples/predictions/, and any
// <slug>/<instance_id>.diff files, the form they had before.
func examplePredictions(t testing.TB) []examplePrediction {
	t.Helper()
	dir := filepath.Join(repoRoot, "examples/predictions")
	var out []examplePrediction
	jsonl, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, f := range jsonl {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			var p struct {
				ID    string `json:"instance_id"`
				Patch string `json:"model_patch"`
			}
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				t.Fatalf("%s:%d: %v", f, i+1, err)
			}
			out = append(out, examplePrediction{name: fmt.Sprintf("%s:%d", filepath.Base(f), i+1), id: p.ID, patch: []byte(p.Patch)})
		}
	}
	diffs, _ := filepath.Glob(filepath.Join(dir, "*", "*.diff"))
	for _, f := range diffs {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, examplePrediction{name: f, id: strings.TrimSuffix(filepath.Base(f), ".diff"), patch: raw})
	}
	if len(out) == 0 {
		t.Fatalf("no example predictions in %s", dir)
	}
	return out
}

// diffGitFiles is the paths a diff's "diff --git" lines name, read
// without the parser, to check it against.
func diffGitFiles(raw string) []string {
	var out []string
	for _, l := range strings.Split(raw, "\n") {
		if rest, ok := strings.CutPrefix(l, "diff --git a/"); ok {
			out = append(out, rest[:strings.Index(rest, " b/")])
		}
	}
	sort.Strings(out)
	return out
}

// The example dataset's patches and predictions touch what their "diff
// --git" lines name, in the shapes cmd/collect gives them: a level 1 gold
// patch edits the library, a level 2 one creates the agent_code package,
// and a test patch touches the instance's own test file only.
func TestParseExamples(t *testing.T) {
	level2 := []string{"agent_code/__init__.py", "pyproject.toml"}
	levels := map[string]bool{}
	for _, e := range readExamples(t) {
		lv2 := strings.HasSuffix(e.ID, ".lv2")
		levels[e.ID] = lv2
		testFile := "tests/" + strings.Split(e.ID, ".")[1] + ".py" // featbench__textkit.test_x.<hash>.lvN
		for i, raw := range []string{e.Patch, e.TestPatch} {
			p, err := patch.Parse([]byte(raw))
			if err != nil {
				t.Errorf("%s: %v", e.ID, err)
				continue
			}
			got := patch.Files(p)
			sort.Strings(got)
			if want := diffGitFiles(raw); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: files %q, want %q", e.ID, got, want)
			}
			added := 0
			for _, f := range p.Files {
				added += f.Added
			}
			switch {
			case added == 0:
				t.Errorf("%s: the patch adds no line", e.ID)
			case i == 1 && !reflect.DeepEqual(got, []string{testFile}):
				t.Errorf("%s: the test patch touches %q, want %q", e.ID, got, testFile)
			case i == 0 && lv2 && (!reflect.DeepEqual(got, level2) || !p.Files[0].New || !p.Files[1].New):
				t.Errorf("%s: the level 2 patch gives %q (new: %v), want the new files %q", e.ID, got, p.Files[0].New, level2)
			case i == 0 && !lv2:
				for _, f := range got {
					if !strings.HasPrefix(f, "textkit/") {
						t.Errorf("%s: the gold patch touches %q, outside the library", e.ID, f)
					}
				}
			}
		}
	}
	for _, e := range examplePredictions(t) {
		p, err := patch.Parse(e.patch)
		if err != nil {
			t.Errorf("%s: %v", e.name, err)
			continue
		}
		lv2, ok := levels[e.id]
		if !ok {
			t.Errorf("%s: no instance %s", e.name, e.id)
		}
		got := patch.Files(p)
		sort.Strings(got)
		if want := diffGitFiles(string(e.patch)); !reflect.DeepEqual(got, want) || len(got) == 0 {
			t.Errorf("%s: files %q, want %q", e.name, got, want)
		}
		if lv2 && !reflect.DeepEqual(got, level2) {
			t.Errorf("%s: a level 2 prediction gives %q, want %q", e.name, got, level2)
		}
	}
}

// parseCases are diffs of every shape Parse reads, with what it reads;
// git_test.go checks them against `git apply --numstat`.
var parseCases = []struct {
	name string
	diff string
	want []patch.File
	// git says why `git apply --numstat` reads the diff otherwise.
	git string
}{
	{
		name: "removed and added lines that look like headers",
		diff: "diff --git a/x.sql b/x.sql\nindex 1111111..2222222 100644\n--- a/x.sql\n+++ b/x.sql\n" +
			"@@ -1,3 +1,3 @@\n select 1;\n--- old comment\n+++ new comment\n select 2;\n",
		want: []patch.File{{OldPath: "x.sql", NewPath: "x.sql", OldMode: "100644", NewMode: "100644", Added: 1, Removed: 1, Line: 1}},
	},
	{
		name: "a removed line that looks like a whole traditional header",
		diff: "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1 @@\n--- a/y.py\n-+++ b/y.py\n-@@ -1 +1 @@\n+z\n",
		want: []patch.File{{OldPath: "x.py", NewPath: "x.py", Added: 1, Removed: 3, Line: 1}},
	},
	{
		name: "quoted paths with C escapes",
		diff: "diff --git \"a/t\\303\\251st\\tx.py\" \"b/t\\303\\251st\\tx.py\"\nindex 1111111..2222222 100644\n" +
			"--- \"a/t\\303\\251st\\tx.py\"\n+++ \"b/t\\303\\251st\\tx.py\"\n@@ -1 +1 @@\n-a\n+b\n",
		want: []patch.File{{OldPath: "tést\tx.py", NewPath: "tést\tx.py", OldMode: "100644", NewMode: "100644", Added: 1, Removed: 1, Line: 1}},
	},
	{
		name: "a path with spaces, an empty new file named only by the diff --git line",
		diff: "diff --git a/my dir/my file.py b/my dir/my file.py\nnew file mode 100644\nindex 0000000..e69de29\n",
		want: []patch.File{{NewPath: "my dir/my file.py", New: true, NewMode: "100644", Line: 1}},
	},
	{
		name: "a path with spaces in ---/+++ lines",
		diff: "diff --git a/my file.py b/my file.py\n--- a/my file.py\n+++ b/my file.py\n@@ -1 +1,2 @@\n a\n+b\n",
		want: []patch.File{{OldPath: "my file.py", NewPath: "my file.py", Added: 1, Line: 1}},
	},
	{
		name: "a pure rename",
		diff: "diff --git a/old name.py b/new name.py\nsimilarity index 100%\nrename from old name.py\nrename to new name.py\n",
		want: []patch.File{{OldPath: "old name.py", NewPath: "new name.py", Renamed: true, Line: 1}},
	},
	{
		name: "a rename with changes",
		diff: "diff --git a/a.py b/b.py\nsimilarity index 90%\nrename from a.py\nrename to b.py\nindex 1111111..2222222 100644\n" +
			"--- a/a.py\n+++ b/b.py\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n",
		want: []patch.File{{OldPath: "a.py", NewPath: "b.py", Renamed: true, OldMode: "100644", NewMode: "100644", Added: 1, Removed: 1, Line: 1}},
	},
	{
		name: "a copy",
		diff: "diff --git a/a.py b/c.py\nsimilarity index 100%\ncopy from a.py\ncopy to c.py\n",
		want: []patch.File{{OldPath: "a.py", NewPath: "c.py", Copied: true, Line: 1}},
	},
	{
		name: "a deleted file and a mode change",
		diff: "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\nindex 1111111..0000000\n--- a/gone.py\n+++ /dev/null\n" +
			"@@ -1,2 +0,0 @@\n-a\n-b\n" +
			"diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
		want: []patch.File{
			{OldPath: "gone.py", Deleted: true, OldMode: "100644", Removed: 2, Line: 1},
			{OldPath: "run.sh", NewPath: "run.sh", OldMode: "100644", NewMode: "100755", Line: 9},
		},
	},
	{
		name: "binary files, both forms",
		diff: "diff --git a/logo.png b/logo.png\nindex 1111111..2222222 100644\nBinary files a/logo.png and b/logo.png differ\n" +
			"diff --git a/icon.png b/icon.png\nnew file mode 100644\nindex 0000000..45a21f1\nGIT binary patch\nliteral 10\n" +
			"RcmeAS@N?(olHy`u000e}0jdB1\n\nliteral 0\nHcmV?d00001\n\n" +
			"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n",
		want: []patch.File{
			{OldPath: "logo.png", NewPath: "logo.png", Binary: true, OldMode: "100644", NewMode: "100644", Line: 1},
			{NewPath: "icon.png", New: true, Binary: true, NewMode: "100644", Line: 4},
			{OldPath: "x.py", NewPath: "x.py", Added: 1, Removed: 1, Line: 14},
		},
	},
	{
		name: "plain diff -u of two files: git takes the shorter name, without stripping",
		diff: "--- x.py.orig\t2024-05-01 10:00:00.000000000 +0200\n+++ x.py\t2024-05-01 10:01:00.000000000 +0200\n" +
			"@@ -1 +1 @@\n-a\n+b\n",
		want: []patch.File{{OldPath: "x.py", NewPath: "x.py", Added: 1, Removed: 1, Line: 1}},
	},
	{
		name: "diff -ruN: epoch timestamps mark created and deleted files",
		diff: "diff -ruN a/new.py b/new.py\n--- a/new.py\t1970-01-01 00:00:00.000000000 +0000\n+++ b/new.py\t2024-05-01 10:01:00.000000000 +0000\n" +
			"@@ -0,0 +1 @@\n+x\n" +
			"diff -ruN a/old.py b/old.py\n--- a/old.py\t2024-05-01 10:00:00.000000000 +0000\n+++ b/old.py\t1970-01-01 01:00:00.000000000 +0100\n" +
			"@@ -1 +0,0 @@\n-x\n",
		want: []patch.File{
			{NewPath: "new.py", New: true, Added: 1, Line: 2},
			{OldPath: "old.py", Deleted: true, Removed: 1, Line: 7},
		},
	},
	{
		name: "a timestamp after spaces",
		diff: "--- a/x.py  2024-05-01 10:00:00\n+++ b/x.py  2024-05-01 10:01:00\n@@ -1 +1 @@\n-a\n+b\n",
		want: []patch.File{{OldPath: "x.py", NewPath: "x.py", Added: 1, Removed: 1, Line: 1}},
	},
	{
		name: "CRLF line endings: git ends names at the CR",
		diff: "diff --git a/x.py b/x.py\r\nindex 1111111..2222222 100644\r\n--- a/x.py\r\n+++ b/x.py\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n",
		want: []patch.File{{OldPath: "x.py", NewPath: "x.py", OldMode: "100644", NewMode: "100644", Added: 1, Removed: 1, Line: 1}},
	},
	{
		name: "CRLF line endings with an empty context line (GNU patch strips the CRs)",
		diff: "diff --git a/e.py b/e.py\r\n--- a/e.py\r\n+++ b/e.py\r\n@@ -1,3 +1,3 @@\r\n a\r\n\r\n-b\r\n+c\r\n",
		want: []patch.File{{OldPath: "e.py", NewPath: "e.py", Added: 1, Removed: 1, Line: 1}},
	},
	{
		name: "text around the diff: an explanation, a format-patch mail and its signature",
		diff: "Here is my change:\n\nFrom 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] fix\n---\n x.py | 2 +-\n\n" +
			"diff --git a/x.py b/x.py\nindex 1111111..2222222 100644\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n-- \n2.39.5\n\nThat is all.\n",
		want: []patch.File{{OldPath: "x.py", NewPath: "x.py", OldMode: "100644", NewMode: "100644", Added: 1, Removed: 1, Line: 8}},
	},
	{
		name: "several hunks, an empty context line and no newline at the end of files",
		diff: "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n@@ -10,2 +10,2 @@\n y\n-z\n\\ No newline at end of file\n+Z\n\\ No newline at end of file\n",
		want: []patch.File{{OldPath: "x.py", NewPath: "x.py", Added: 2, Removed: 2, Line: 1}},
	},
	{
		name: "a hunk cut short by the end of the input (GNU patch applies it)",
		diff: "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n c",
		want: []patch.File{{OldPath: "x.py", NewPath: "x.py", Added: 1, Removed: 1, Line: 1}},
	},
	{
		name: "a context line whose space was eaten into a tab",
		diff: "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n\tc\n",
		want: []patch.File{{OldPath: "x.py", NewPath: "x.py", Added: 1, Removed: 1, Line: 1}},
	},
	{
		name: "git's p guess: a traditional diff without directories sets -p0 for the rest",
		diff: "--- x.py\n+++ x.py\n@@ -1 +1 @@\n-a\n+b\n--- a/y.py\n+++ a/y.py\n@@ -1 +1 @@\n-a\n+b\n",
		want: []patch.File{
			{OldPath: "x.py", NewPath: "x.py", Added: 1, Removed: 1, Line: 1},
			{OldPath: "a/y.py", NewPath: "a/y.py", Added: 1, Removed: 1, Line: 6},
		},
	},
	{
		name: "an index line alone changes nothing and is not a file",
		diff: "diff --git a/x.py b/x.py\nindex 1111111..2222222 100644\ndiff --git a/y.py b/y.py\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n",
		want: []patch.File{{OldPath: "y.py", NewPath: "y.py", Added: 1, Removed: 1, Line: 3}},
		git:  "--numstat lists x.py with 0 changes; git apply refuses the whole patch (\"patch with only garbage\")",
	},
	{
		name: "a --- line without a following hunk is text",
		diff: "--- not a header\n+++ either\nwords\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n",
		want: []patch.File{{OldPath: "x.py", NewPath: "x.py", Added: 1, Removed: 1, Line: 4}},
	},
	{
		name: "--no-prefix diffs strip the first directory, as git apply -p1 does",
		diff: "diff --git textkit/x.py textkit/x.py\n--- textkit/x.py\n+++ textkit/x.py\n@@ -1 +1 @@\n-a\n+b\n",
		want: []patch.File{{OldPath: "x.py", NewPath: "x.py", Added: 1, Removed: 1, Line: 1}},
	},
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := patch.Parse([]byte(tc.diff))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Files, tc.want) {
				t.Errorf("got  %+v\nwant %+v", p.Files, tc.want)
			}
		})
	}
}

func TestParseEmpty(t *testing.T) {
	for _, s := range []string{"", "\n", "  \n\t\r\n"} {
		p, err := patch.Parse([]byte(s))
		if err != nil || p == nil || len(p.Files) != 0 {
			t.Errorf("Parse(%q) = %+v, %v; want an empty patch", s, p, err)
		}
		if !patch.Empty([]byte(s)) {
			t.Errorf("Empty(%q) = false", s)
		}
	}
	if patch.Empty([]byte("x")) {
		t.Error(`Empty("x") = true`)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, diff, msg string
		line            int
	}{
		{"not a diff", "I could not finish the task.\n", "no unified diff found", 1},
		{"a hunk without a header", "@@ -1 +1 @@\n-a\n+b\n", "without a file header", 1},
		{"a diff --git line directly followed by a hunk", "diff --git a/x.py b/x.py\n@@ -1 +1 @@\n-a\n+b\n", "without a file header", 2},
		{"a hunk cut short by the next file", "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n" +
			"diff --git a/y.py b/y.py\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n", "short of its @@ header's counts", 8},
		{"a hunk longer than its counts", "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n-b\n+c\n", "more lines than its @@ header counts", 5},
		{"a malformed hunk header", "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n@@ -x +1 @@\n+c\n", "malformed hunk header", 6},
		{"names git cannot tell", "diff --git a/x.py b/y.py\nold mode 100644\nnew mode 100755\n", "cannot tell which file", 1},
		{"a file both created and deleted", "diff --git a/x.py b/x.py\nnew file mode 100644\ndeleted file mode 100644\n", "both creates and deletes", 1},
		{"a lone diff --git line with two names", "diff --git a/x.py b/y.py\ntext\n", "cannot tell which file", 1},
		{"no name in ---/+++ lines", "--- \t2024-01-01\n+++ \t2024-01-01\n@@ -1 +1 @@\n-a\n+b\n", "cannot find a file name", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := patch.Parse([]byte(tc.diff))
			var se *patch.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SyntaxError", err)
			}
			if !strings.Contains(se.Msg, tc.msg) || se.Line != tc.line {
				t.Errorf("err = %v, want line %d and %q", err, tc.line, tc.msg)
			}
		})
	}
}
