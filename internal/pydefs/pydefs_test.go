package pydefs

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The tests run the embedded script with Debian's Python (the
// repositories' containers' interpreter), as internal/mask's do.
const hostPython = "/usr/bin/python3"

func run(t *testing.T, req Request) *Result {
	t.Helper()
	if _, err := os.Stat(hostPython); err != nil {
		t.Skipf("%s (Debian's Python, as in the repositories' containers) is missing: %v", hostPython, err)
	}
	dir := t.TempDir()
	raw, _ := json.Marshal(req)
	reqPath := filepath.Join(dir, "req.json")
	scriptPath := filepath.Join(dir, ScriptName)
	if err := os.WriteFile(reqPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scriptPath, Script(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(hostPython, "-I", scriptPath, reqPath).Output()
	if err != nil {
		t.Fatalf("%s: %v", ScriptName, err)
	}
	res, err := ParseResult(out, req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const before = `import os

class Cache:
    """A cache."""

    def get(self, key, default=None):
        return self._data.get(key, default)

    @property
    def size(self):
        return len(self._data)

    @size.setter
    def size(self, n):
        self._limit = n

def clear(cache):
    def helper():
        pass
    cache._data = {}

if os.name == "nt":
    def sep():
        return "\\"
else:
    def sep():
        return "/"
`

func TestDefs(t *testing.T) {
	res := run(t, Request{Files: []Source{{Key: "old", Source: before}, {Key: "bad", Source: "def (:\n"}}})
	var got []string
	for _, d := range res.Files[0].Defs {
		got = append(got, d.Kind+" "+d.Name+" "+d.Signature)
	}
	want := []string{
		"class Cache class Cache",
		"method Cache.get def get(self, key, default=None)",
		"method Cache.size def size(self)",
		"method Cache.size def size(self, n)",
		"function clear def clear(cache)",
		"function sep def sep()",
		"function sep def sep()",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defs:\n got %q\nwant %q (a function's own inner defs are its body)", got, want)
	}
	if d := res.Files[0].Defs[2]; d.Start != 9 || d.Line != 10 || d.End != 11 {
		t.Errorf("the property's span %d-%d, def at %d; want 9-11, 10", d.Start, d.End, d.Line)
	}
	if doc := res.Files[0].Defs[0].Docstring; doc == nil || *doc != "A cache." {
		t.Errorf("docstring %v", doc)
	}
	if res.Files[1].Error != "line 1: invalid syntax" {
		t.Errorf("a syntax error gave no error: %+v", res.Files[1])
	}
}

func TestCompare(t *testing.T) {
	after := before + "\ndef flush(cache):\n    pass\n"
	// get changes its body; clear's inner helper changes (part of clear);
	// the setter goes; flush comes.
	after = replace(after, "return self._data.get(key, default)", "return self._data.get(key, default) or default")
	after = replace(after, "    @size.setter\n    def size(self, n):\n        self._limit = n\n", "")
	after = replace(after, "def helper():\n        pass", "def helper():\n        return 1")
	res := run(t, Request{Files: []Source{{Key: "old", Source: before}, {Key: "new", Source: after}}})
	c := Compare(res.Files[0].Defs, res.Files[1].Defs)
	names := func(ds []Def) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Name)
		}
		return out
	}
	if got := names(c.Added); !reflect.DeepEqual(got, []string{"flush"}) {
		t.Errorf("added %v", got)
	}
	if got := names(c.Removed); !reflect.DeepEqual(got, []string{"Cache.size"}) {
		t.Errorf("removed %v (the setter)", got)
	}
	if got := names(c.Modified); !reflect.DeepEqual(got, []string{"Cache", "Cache.get", "clear"}) {
		t.Errorf("modified %v", got)
	}
	if c := Compare(res.Files[0].Defs, res.Files[0].Defs); c.Added != nil || c.Removed != nil || c.Modified != nil {
		t.Errorf("a file compared with itself: %+v", c)
	}
}

func replace(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic("no " + old)
	}
	return strings.Replace(s, old, new, 1)
}
