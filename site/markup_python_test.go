package site

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// merged joins adjacent tokens of one type, undoing chroma.Coalesce's cuts
// at 8 KB, so that token lists of long texts compare.
func merged(toks []chroma.Token) []chroma.Token {
	var out []chroma.Token
	for _, t := range toks {
		if t.Value == "" {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Type == t.Type {
			out[n-1].Value += t.Value
			continue
		}
		out = append(out, t)
	}
	return out
}

// checkPySegments fails when pySegments takes src but its tokens differ
// from chroma's, and reports whether it took it.
func checkPySegments(t testing.TB, p *pyFast, name, src string) bool {
	t.Helper()
	got, ok := pySegments(p, src)
	if !ok {
		return false
	}
	if len(src) < pySegmentsExactBelow {
		if want := chromaPython(t, src); !slices.Equal(got, want) {
			t.Errorf("%s: pySegments tokens differ from chroma's below 8 KB:\n got %q\nwant %q", name, got, want)
		}
		return true
	}
	want := merged(chromaPython(t, src))
	if got := merged(got); !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Errorf("%s: token %d: pySegments %s %q, chroma %s %q", name, i, got[i].Type, got[i].Value, want[i].Type, want[i].Value)
				return true
			}
		}
		t.Errorf("%s: pySegments gave %d tokens, chroma %d", name, len(got), len(want))
	}
	return true
}

var pySegmentsTakes = map[string]string{
	"import":             "import os\n",
	"import dotted":      "import os.path\nx = os.path.join(a, b)\n",
	"import as":          "import numpy as np, os.path as osp\n",
	"import commas":      "import a,b , c\n",
	"from import":        "from a.b import c as d\n",
	"from relative":      "from . import x\nfrom ..pkg import y, z\n",
	"from parenthesis":   "from a import (\n    b,\n    c,\n)\n",
	"indented imports":   "def f():\n    import json\n    from os import path\n    return json, path\n",
	"import comment":     "import os  # the os\n",
	"import semicolon":   "import os; x = 1\n",
	"tab indentation":    "if x:\n\timport os\n",
	"test file":          "import pytest\n\nfrom pkg.mod import fn\n\n\ndef test_fn():\n    assert fn([1]) == [\"1\"]\n",
	"from then builtin":  "from a import open, len\n",
	"import keyword":     "import a as b\nas_x = 1\n",
	"import in a string": "x = \"\"\"\nfrom a import b\n\"\"\"\n",
}

var pySegmentsDeclines = map[string]string{
	"raise from":               "raise X from e\n",
	"import continued":         "import a, \\\n    b\n",
	"from None":                "from None import x\n",
	"import on next line":      "from a\nimport b\n",
	"from alone":               "from\nx\n",
	"non-ASCII module":         "import café\n",
	"import across a comma":    "import a\n, b\n",
	"no final newline":         "import os",
	"yield from":               "def f():\n    yield from g()\n",
	"import at line end":       "import\nos\n",
	"as on the next line":      "import a\n  as b\n",
	"f-string after an import": "import os\nx = f\"{os}\"\n",
}

func TestPySegmentsMatchesChroma(t *testing.T) {
	p := newPyFast(lexers.Get("python"))
	for name, src := range pySegmentsTakes {
		if !checkPySegments(t, p, name, src) {
			t.Errorf("%s: pySegments declined code it should take:\n%s", name, src)
		}
	}
	for name, src := range pySegmentsDeclines {
		if checkPySegments(t, p, name, src) {
			t.Errorf("%s: pySegments took code it should leave to chroma:\n%s", name, src)
		}
	}
	// Patches: longer texts in pieces under 8 KB, at line ends, exactly
	// as chroma where pyFast takes every piece.
	long := strings.Repeat(pySegmentsTakes["test file"]+pyFastAccepts["class and methods"], 200)
	if got, want := merged(pyPatch(p, long)), merged(chromaPython(t, long)); !slices.Equal(got, want) {
		t.Errorf("pyPatch differs from chroma on %d bytes of code pyFast takes in pieces", len(long))
	}
}

// checkPyPatch fails when pyPatch's tokens are not src, or, in valid
// Python, colour a byte otherwise than chroma does (pyPatch may leave code
// plain), and returns how many bytes it colours of those chroma colours.
func checkPyPatch(t testing.TB, p *pyFast, name, src string, valid bool) (coloured, want int) {
	t.Helper()
	got := pyPatch(p, src)
	var b strings.Builder
	for _, tok := range got {
		b.WriteString(tok.Value)
	}
	if b.String() != src {
		t.Errorf("%s: pyPatch's tokens are not the text", name)
		return 0, 0
	}
	types := func(toks []chroma.Token) []chroma.TokenType {
		out := make([]chroma.TokenType, 0, len(src))
		for _, tok := range toks {
			for range len(tok.Value) {
				out = append(out, tok.Type)
			}
		}
		return out
	}
	if !valid {
		return 0, 0
	}
	g, w := types(got), types(chromaPython(t, src))
	if len(w) != len(g) {
		return 0, 0 // chroma rewrote the text (carriage returns, invalid UTF-8)
	}
	for i := range g {
		if w[i] != chroma.Text {
			want++
		}
		if g[i] == chroma.Text {
			continue
		}
		coloured++
		if g[i] != w[i] {
			t.Errorf("%s: byte %d (%q...) is %s, chroma says %s", name, i, src[i:min(i+20, len(src))], g[i], w[i])
			return 0, 0
		}
	}
	return coloured, want
}

// The repository's Python files and every side of every hunk of the
// shipped patches: pySegments declines them or agrees with chroma, and
// takes most.
func TestPySegmentsOnRepositoryCode(t *testing.T) {
	p := newPyFast(lexers.Get("python"))
	var texts []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".cache" || d.Name() == "node_modules" || d.Name() == "public") {
			return filepath.SkipDir
		}
		switch {
		case !d.IsDir() && strings.HasSuffix(path, ".py"):
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			texts = append(texts, string(raw))
		case !d.IsDir() && d.Name() == "instances.jsonl":
			texts = append(texts, patchSides(t, path)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	taken, coloured, want := 0, 0, 0
	for i, src := range texts {
		name := fmt.Sprintf("text %d", i)
		if checkPySegments(t, p, name, src) {
			taken++
		}
		c, w := checkPyPatch(t, p, name, src, true)
		coloured, want = coloured+c, want+w
	}
	// pyPatch colours most of what chroma colours, pyFast declining the
	// rest (escapes and f-strings).
	if coloured*2 < want {
		t.Errorf("pyPatch coloured %d of the %d bytes chroma colours, want most", coloured, want)
	}
	t.Logf("pySegments took %d of %d texts; pyPatch coloured %d of the %d bytes chroma colours", taken, len(texts), coloured, want)
}

// patchSides returns the old and new side of every Python hunk of the
// patches in an instances.jsonl.
func patchSides(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sides []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var in struct {
			Patch     string `json:"patch"`
			TestPatch string `json:"test_patch"`
		}
		if json.Unmarshal(sc.Bytes(), &in) != nil {
			continue
		}
		for _, patch := range []string{in.Patch, in.TestPatch} {
			lines, files := parseDiff(patch, true)
			for _, f := range files {
				if !strings.HasSuffix(f.path(), ".py") {
					continue
				}
				for _, r := range f.hunks {
					for _, side := range []diffKind{diffRemoved, diffAdded} {
						var b strings.Builder
						for _, l := range lines[r[0]:r[1]] {
							if l.kind == side || l.kind == diffContext {
								b.WriteString(l.text[min(len(l.text), 1):])
								b.WriteByte('\n')
							}
						}
						if b.Len() > 0 {
							sides = append(sides, b.String())
						}
					}
				}
			}
		}
	}
	return sides
}

// Whatever the input, pySegments either declines it or agrees with
// chroma, and pyPatch's tokens are the input.
func FuzzPySegments(f *testing.F) {
	for _, src := range pySegmentsTakes {
		f.Add(src)
	}
	for _, src := range pySegmentsDeclines {
		f.Add(src)
	}
	p := newPyFast(lexers.Get("python"))
	f.Fuzz(func(t *testing.T, src string) {
		checkPySegments(t, p, "input", src)
		checkPyPatch(t, p, "input", src, false)
	})
}
