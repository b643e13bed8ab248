package tomlstrict_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/tomlstrict"
)

// A bench file and featbench.toml, read through each package's own entry
// point: datasets.lock.toml by bench.AddToLock, featbench.toml by
// config.Load. Each is an array of tables with a string key, so the same
// text can be written in either.
var files = []struct {
	name       string
	table      string // the array of tables
	key        string // a string key of its tables
	doc        string // where an unknown key is sent
	problemsOf func(t *testing.T, src string) (path string, ps tomlstrict.Problems)
}{
	{"datasets.lock.toml", "locked", "dataset", "CONTRIBUTING.md", func(t *testing.T, src string) (string, tomlstrict.Problems) {
		root := t.TempDir()
		path := write(t, filepath.Join(root, bench.LockFile), src)
		_, err := bench.AddToLock(root, bench.LockEntry{Dataset: "new/v1"})
		return path, problems(t, err)
	}},
	{config.FileName, "site.links", "url", "the featbench.toml reference in README.md", func(t *testing.T, src string) (string, tomlstrict.Problems) {
		path := write(t, filepath.Join(t.TempDir(), config.FileName), src)
		_, err := config.Load(path)
		return path, problems(t, err)
	}},
}

func write(t *testing.T, path, src string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func problems(t *testing.T, err error) tomlstrict.Problems {
	t.Helper()
	var ps tomlstrict.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v, want Problems", err)
	}
	return ps
}

// The same problem in a bench file and in featbench.toml gets the same
// message, naming the file, the line and the field. In the cases, TABLE,
// KEY and Key stand for the file's array, its key and that key
// capitalised, and DOC for where its keys are listed.
func TestSameProblemSameMessage(t *testing.T) {
	for _, c := range []struct {
		name, src  string
		line       int
		field, msg string
	}{
		{"a wrong type", "[[TABLE]]\nKEY = 3\n",
			2, "TABLE[0].KEY", "is an integer (3); want a string"},
		{"an unknown key", "[[TABLE]]\nzzz = \"x\"\n",
			2, "TABLE[0].zzz", `unknown key "zzz" (check the spelling against DOC)`},
		{"a key differing only in case", "[[TABLE]]\n\nKey = \"x\"\n",
			3, "TABLE[0].Key", `unknown key "Key"; did you mean "TABLE[0].KEY"?`},
		{"a byte-order mark", "\ufeff[[TABLE]]\nKEY = \"x\"\n",
			1, "", "starts with a byte-order mark (U+FEFF); save the file as UTF-8 without one"},
		{"a syntax error", "[[TABLE]]\nKEY = \"x\"\n\nKEY = \n",
			4, "TABLE.KEY", "expected value but found '\\n' instead"},
	} {
		for _, f := range files {
			t.Run(c.name+" in "+f.name, func(t *testing.T) {
				fill := strings.NewReplacer("TABLE", f.table, "KEY", f.key, "Key", strings.ToUpper(f.key[:1])+f.key[1:], "DOC", f.doc).Replace
				path, ps := f.problemsOf(t, fill(c.src))
				want := tomlstrict.Problem{File: path, Line: c.line, Field: fill(c.field), Msg: fill(c.msg)}
				if len(ps) != 1 || ps[0] != want {
					t.Fatalf("problems:\n%v\nwant:\n%v", ps, want)
				}
				text := path + ":" + strconv.Itoa(c.line) + ": "
				if c.field != "" {
					text += "field " + strconv.Quote(want.Field) + ": "
				}
				if got := ps.Error(); got != text+want.Msg {
					t.Errorf("Error() = %q, want %q", got, text+want.Msg)
				}
			})
		}
	}
}
