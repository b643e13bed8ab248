package mask_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/mask"
)

func TestMaskErrors(t *testing.T) {
	r := repo{
		"m.py": `def f():
    return 1


def g():
    return 2
`,
		"bad.py":           "def broken(:\n",
		"tests/test_m.py":  "from m import f\n",
		"other/ok_user.py": "from m import g\n",
	}
	tests := []struct {
		name string
		req  mask.Request
		// want are substrings of the message on stderr.
		want []string
	}{
		{"unknown id", mask.Request{Remove: []string{"m.py::f::1", "m.py::g::4"}},
			[]string{"m.py:4:", "m.py::g::4", "not found", "defined at line 5"}},
		{"unknown name", mask.Request{Remove: []string{"m.py::nope::1"}},
			[]string{"m.py:1:", "m.py::nope::1", "not found"}},
		{"missing file", mask.Request{Remove: []string{"gone.py::f::1"}},
			[]string{"gone.py", "cannot read"}},
		{"unparseable file", mask.Request{Remove: []string{"bad.py::broken::1"}},
			[]string{"bad.py:1:", "does not parse"}},
		{"protected file", mask.Request{Remove: []string{"tests/test_m.py::x::1"}, ProtectFiles: []string{"tests/test_m.py"}},
			[]string{"tests/test_m.py", "protected"}},
		{"malformed id", mask.Request{Remove: []string{"m.py::f"}},
			[]string{"m.py::f", "malformed"}},
		{"module code", mask.Request{Remove: []string{"m.py::<module>::0"}},
			[]string{"m.py", "module-level"}},
		{"unknown described id", mask.Request{Describe: []string{"m.py::h::1"}},
			[]string{"m.py:1:", "m.py::h::1", "not found"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := r.write(t)
			out := runMasker(t, dir, tc.req)
			if out.err == nil {
				t.Fatalf("the masker succeeded; want an error\n%s", out.stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.stderr, w) {
					t.Errorf("stderr %q does not mention %q", out.stderr, w)
				}
			}
			if strings.Contains(out.stderr, "Traceback") {
				t.Errorf("a request error should not print a traceback:\n%s", out.stderr)
			}
			if len(out.stdout) != 0 {
				t.Errorf("stdout = %q, want nothing", out.stdout)
			}
			// Nothing is written when one id fails, even after others worked.
			if got := snapshot(t, dir); !reflect.DeepEqual(got, map[string]string(r)) {
				t.Errorf("the repository changed: %v", got)
			}
		})
	}
}

// TestDeterministic runs the same request on two copies of a repository:
// the output and the masked trees must be the same, byte for byte.
func TestDeterministic(t *testing.T) {
	r := repo{}
	for k, v := range textkit {
		r[k] = v
	}
	r["textkit/__init__.py"] = `"""textkit."""

from .slug import slugify, unique_slug
from .table import Table

__all__ = ["Table", "slugify", "unique_slug"]
`
	r["textkit/table.py"] = `from typing import Any, Sequence


class Table:
    rows: Sequence[Any] = ()

    def render(self) -> str:
        return str(self.rows)

    def width(self):
        return 0
`
	req := func() mask.Request {
		ids := []string{
			objID(t, r, "textkit/table.py", "Table.width", "def width"),
			objID(t, r, "textkit/slug.py", "unique_slug", "def unique_slug"),
			objID(t, r, "textkit/table.py", "Table.render", "def render"),
		}
		return mask.Request{
			Remove: ids, Describe: ids,
			ProtectFiles: []string{"tests/test_slug.py"},
			Level2:       &mask.Level2{TestFile: "tests/test_slug.py", Package: "textkit", Names: []string{"unique_slug", "Table"}},
		}
	}
	var outs [][]byte
	var trees []map[string]string
	for range 2 {
		dir := r.write(t)
		out := runMasker(t, dir, req())
		if out.err != nil {
			t.Fatalf("masker: %v\n%s", out.err, out.stderr)
		}
		outs = append(outs, out.stdout)
		trees = append(trees, snapshot(t, dir))
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("two runs printed different results:\n%s\n%s", outs[0], outs[1])
	}
	if !reflect.DeepEqual(trees[0], trees[1]) {
		t.Errorf("two runs left different trees")
	}
	res, err := mask.ParseResult(outs[0])
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range res.Files {
		paths = append(paths, f.Path)
	}
	wantStrings(t, "files", paths, []string{"textkit/__init__.py", "textkit/slug.py", "textkit/table.py"})
	var ifaces []string
	for _, in := range res.Interfaces {
		ifaces = append(ifaces, in.ID)
	}
	wantStrings(t, "interfaces", ifaces, []string{
		objID(t, r, "textkit/slug.py", "unique_slug", "def unique_slug"),
		objID(t, r, "textkit/table.py", "Table", "class Table"),
	})
}
