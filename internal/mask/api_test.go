package mask_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/mask"
)

func TestRequestValidate(t *testing.T) {
	ok := mask.Request{
		Remove: []string{"a.py::f::1"}, Describe: []string{"a.py::f::1"}, ProtectFiles: []string{"tests/test_a.py"},
		Level2: &mask.Level2{TestFile: "tests/test_a.py", Package: "pkg.sub", Names: []string{"f"}},
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	bad := mask.Request{
		Remove: []string{"a.py::f"}, Describe: []string{"a.py::<module>::0"}, ProtectFiles: []string{"/etc/x"},
		Level2: &mask.Level2{TestFile: "../t.py", Package: "pkg-x", Names: []string{"a.b"}},
	}
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate() accepted a bad request")
	}
	for _, w := range []string{"remove", "describe", "protect_files", "level2.test_file", "level2.package", "level2.names"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Validate() = %v; does not mention %s", err, w)
		}
	}
}

func TestParseResult(t *testing.T) {
	res, err := mask.ParseResult([]byte(`{"files": [{"path": "a.py", "removed": [{"id": "a.py::f::2", "start": 1, "end": 3}],
		"imports_removed": ["import os"], "all_removed": []}], "lines": 4, "functions": 1, "interfaces": []}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Removed[0].Start != 1 || res.Lines != 4 || res.Level2Test != nil {
		t.Errorf("ParseResult = %+v", res)
	}
	for _, bad := range []string{`{"files": [], "surprise": 1}`, `{"files": []} {}`, `[`} {
		if _, err := mask.ParseResult([]byte(bad)); err == nil {
			t.Errorf("ParseResult(%s) accepted it", bad)
		}
	}
}

// TestWithDocstringsEscapes checks with Python that an inserted docstring's
// value is the text given, whatever quotes and backslashes it holds.
func TestWithDocstringsEscapes(t *testing.T) {
	py := needPython(t)
	texts := []string{
		`Plain.`,
		`Says "hi"`,
		`Has """triple""" quotes and a \n backslash \`,
		"Two lines.\n\n    Indented detail with a trailing quote\"",
	}
	for _, text := range texts {
		in := mask.Interface{ID: "a.py::f::1", Code: "def f(x):\n    # <your code>\n", DocLine: 1, Indent: "    "}
		code := in.WithDocstrings(map[string]string{in.ID: text})
		file := filepath.Join(t.TempDir(), "stub.py")
		if err := os.WriteFile(file, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		// The docstring, cleaned as Python cleans docstrings, must be the
		// text cleaned the same way.
		out, err := exec.Command(py, "-c", `import ast, inspect, sys
t = ast.parse(open(sys.argv[1]).read())
got, want = ast.get_docstring(t.body[0], clean=True), inspect.cleandoc(sys.argv[2])
if got != want:
    sys.exit("docstring %r, want %r" % (got, want))`, file, text).CombinedOutput()
		if err != nil {
			t.Errorf("docstring %q: %v\n%s\n%s", text, err, code, out)
		}
	}
}
