package markup

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

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
// shipped patches: pyPatch colours most of what chroma colours, and
// nothing otherwise.
func TestPyPatchOnRepositoryCode(t *testing.T) {
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
	coloured, want := 0, 0
	for i, src := range texts {
		c, w := checkPyPatch(t, p, fmt.Sprintf("text %d", i), src, true)
		coloured, want = coloured+c, want+w
	}
	if coloured*10 < want*9 {
		t.Errorf("pyPatch coloured %d of the %d bytes chroma colours, want nearly all", coloured, want)
	}
	t.Logf("pyPatch coloured %d of the %d bytes chroma colours in %d texts", coloured, want, len(texts))
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

// Whatever the input, pyPatch's tokens are the input.
func FuzzPyPatch(f *testing.F) {
	// Seeds of a few kilobytes at most: chroma takes seconds on the long
	// ones, and the fuzzer would spend its time there.
	for _, seeds := range []map[string]string{pyFastAccepts, pyFastDeclines} {
		for _, src := range seeds {
			if len(src) <= 4096 {
				f.Add(src)
			}
		}
	}
	p := newPyFast(lexers.Get("python"))
	f.Fuzz(func(t *testing.T, src string) {
		checkPyPatch(t, p, "input", src, false)
	})
}
