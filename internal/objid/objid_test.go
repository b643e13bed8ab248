package objid_test

import (
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/objid"
)

func TestParseID(t *testing.T) {
	good := []struct {
		id, path, qual string
		line           int
	}{
		{"textkit/slug.py::unique_slug::28", "textkit/slug.py", "unique_slug", 28},
		{"textkit/table.py::Table.render::40", "textkit/table.py", "Table.render", 40},
		{"a.py::outer.inner::3", "a.py", "outer.inner", 3},
		{"src/pkg/m.py::_Private.__init__::1", "src/pkg/m.py", "_Private.__init__", 1},
		{"pkg/m.py::café::7", "pkg/m.py", "café", 7},
		{"pkg/m.py::<module>::0", "pkg/m.py", "<module>", 0},
	}
	for _, g := range good {
		p, q, l, err := objid.Parse(g.id)
		if err != nil || p != g.path || q != g.qual || l != g.line {
			t.Errorf("ParseID(%q) = %q, %q, %d, %v; want %q, %q, %d", g.id, p, q, l, err, g.path, g.qual, g.line)
		}
		if back := objid.Format(p, q, l); err == nil && back != g.id {
			t.Errorf("FormatID(ParseID(%q)) = %q", g.id, back)
		}
	}
	if got := objid.Module("pkg/m.py"); got != "pkg/m.py::<module>::0" {
		t.Errorf("ModuleID = %q", got)
	}
	bad := []string{
		"", "a.py", "a.py::f", "a.py::f::1::2", "::f::1", "a.py::::1", "a.py::f::",
		"a.py::f::0", "a.py::f::-1", "a.py::f::01", "a.py::f::x", "a.py::<module>::3",
		"/abs/a.py::f::1", "../a.py::f::1", "a/../b.py::f::1", "./a.py::f::1", `a\b.py::f::1`,
		"a.py::f.::1", "a.py::.f::1", "a.py::f g::1", "a.py::1f::1", "a.py::<locals>.f::1", "a.py::f-g::1",
	}
	for _, id := range bad {
		if p, q, l, err := objid.Parse(id); err == nil {
			t.Errorf("ParseID(%q) = %q, %q, %d; want an error", id, p, q, l)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"textkit/slug.py::unique_slug::28", "a.py::A.b::1", "a.py::<module>::0", "a::b::c", "x.py::f::01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		p, q, l, err := objid.Parse(id)
		if err != nil {
			return
		}
		if back := objid.Format(p, q, l); back != id {
			t.Errorf("FormatID(ParseID(%q)) = %q", id, back)
		}
		if l < 0 || (q == objid.ModuleQualname) != (l == 0) || strings.Contains(p, "::") {
			t.Errorf("ParseID(%q) accepted %q, %q, %d", id, p, q, l)
		}
	})
}
