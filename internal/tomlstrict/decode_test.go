package tomlstrict

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// figure reads a number written as a number or as a string, as bench's
// figures do: a model's own toml.Unmarshaler.
type figure struct{ text string }

func (f *figure) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return errors.New("want a quoted figure such as \"12.5\"")
	}
	f.text = s
	return nil
}

type repo struct {
	Name   string   `toml:"name"`
	Python string   `toml:"python"`
	Levels []int    `toml:"levels"`
	Tags   []string `toml:"tags"`
}

// SetDefaults gives each [[repos]] table its own defaults.
func (r *repo) SetDefaults() { *r = repo{Python: "3.11", Levels: []int{1, 2}} }

type score struct {
	Passed int     `toml:"passed"`
	Rate   float64 `toml:"rate"`
}

type model struct {
	Name     string            `toml:"name"`
	Date     time.Time         `toml:"date"`
	Open     bool              `toml:"open"`
	Attempts int8              `toml:"attempts"`
	Cost     float64           `toml:"cost"`
	Figure   figure            `toml:"figure"`
	Repos    []repo            `toml:"repos"`
	Levels   map[string]*score `toml:"levels"`
	Extra    map[string]any    `toml:"extra"`
	Site     *site             `toml:"site"`
	Ignored  string            `toml:"-"`
	Untagged string
}

type site struct {
	Title  string `toml:"title"`
	Output string `toml:"output"`
}

func TestDecode(t *testing.T) {
	src := `name = "x"
date = 2026-01-21
open = true
attempts = 3
cost = 2
figure = "12.5"
extra = { any = [1, "two"] }

[[repos]]
name = "a"
levels = [2]

[[repos]]
name = "b"

[levels.L1]
passed = 4
rate = 0.5

[site]
title = "T"
`
	var m model
	lines, ps := Decode("m.toml", []byte(src), &m, Options{})
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	want := model{
		Name: "x", Date: time.Date(2026, 1, 21, 0, 0, 0, 0, time.Local), Open: true, Attempts: 3, Cost: 2,
		Figure: figure{"12.5"},
		// Each table of the array starts from its own defaults.
		Repos:  []repo{{Name: "a", Python: "3.11", Levels: []int{2}}, {Name: "b", Python: "3.11", Levels: []int{1, 2}}},
		Levels: map[string]*score{"L1": {Passed: 4, Rate: 0.5}},
		Extra:  map[string]any{"any": []any{int64(1), "two"}},
		Site:   &site{Title: "T"},
	}
	if !m.Date.Equal(want.Date) {
		t.Errorf("date = %v, want %v", m.Date, want.Date)
	}
	m.Date = want.Date
	if !reflect.DeepEqual(m, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", m, want)
	}
	for field, line := range map[string]int{"name": 1, "repos[1].name": 14, "levels.L1.rate": 18, "site.title": 21, "site.output": 20} {
		if got := lines.Line(field); got != line {
			t.Errorf("Line(%s) = %d, want %d", field, got, line)
		}
	}
}

// Decode lists every problem of a file in one run, each at its line.
func TestDecodeProblems(t *testing.T) {
	src := `name = 3
date = "2026-01-21"
open = "yes"
attempts = 300
cost = "lots"
figure = 12
Name = "x"
checked = true
zzz = 1
repos = "a"

[[site]]
title = "T"

[levels.L1]
pased = 4
rate = [1]

[extra]
k = 1
`
	var m model
	_, ps := Decode("m.toml", []byte(src), &m, Options{Reserved: map[string]string{"checked": "is the maintainers' to set"}, KeysDoc: "KEYS.md"})
	want := []Problem{
		{"m.toml", 7, "Name", `unknown key "Name"; did you mean "name"?`},
		{"m.toml", 4, "attempts", "is 300, too large"},
		{"m.toml", 8, "checked", "is the maintainers' to set"},
		{"m.toml", 5, "cost", `is a string ("lots"); want a number`},
		{"m.toml", 2, "date", "is a string; write the date without quotes: date = 2026-01-21"},
		{"m.toml", 6, "figure", `want a quoted figure such as "12.5"`},
		{"m.toml", 16, "levels.L1.pased", `unknown key "pased"; did you mean "levels.L1.passed"?`},
		{"m.toml", 17, "levels.L1.rate", "is an array; want a number"},
		{"m.toml", 1, "name", "is an integer (3); want a string"},
		{"m.toml", 3, "open", `is a string ("yes"); want true or false`},
		{"m.toml", 10, "repos", `is a string ("a"); want an array`},
		{"m.toml", 12, "site", "is an array of tables; want a table"},
		{"m.toml", 9, "zzz", `unknown key "zzz" (check the spelling against KEYS.md)`},
	}
	if !reflect.DeepEqual(ps, Problems(want)) {
		t.Errorf("problems:\n%v\nwant:\n%v", ps, Problems(want))
	}
}

// The file's encoding and nesting are checked before the TOML library
// sees it, each as one problem of the file as a whole.
func TestDecodeRefusesFile(t *testing.T) {
	for _, c := range []struct {
		src  string
		line int
		msg  string
	}{
		{"\ufeffname = \"x\"\n", 1, "starts with a byte-order mark (U+FEFF); save the file as UTF-8 without one"},
		{"\xff\xfen\x00", 1, "is UTF-16; save the file as UTF-8"},
		{"\xfe\xff\x00n", 1, "is UTF-16; save the file as UTF-8"},
		{"name = \"x\"\nsite = \"\xc3\"\n", 2, "is not valid UTF-8"},
		{"\n\nextra = " + strings.Repeat("[", 33) + strings.Repeat("]", 33) + "\n", 3, "nests arrays and inline tables more than 32 deep"},
		{"name = \"x\"\n\nname = \"y\"\n", 3, "Key 'name' has already been defined."},
		{"[site]\ntitle = \"x\n", 2, "strings cannot contain newlines"},
	} {
		var m model
		lines, ps := Decode("m.toml", []byte(c.src), &m, Options{})
		if lines != nil || len(ps) != 1 || ps[0].File != "m.toml" || ps[0].Line != c.line || !strings.Contains(ps[0].Msg, c.msg) {
			t.Errorf("%q: %v (lines %v), want one problem on line %d: %s", c.src, ps, lines, c.line, c.msg)
		}
	}
	if _, ps := Decode("m.toml", []byte("name = \"x\"\n"), model{}, Options{}); len(ps) != 1 || !strings.Contains(ps[0].Msg, "a bug") {
		t.Errorf("decoding into a value, not a pointer: %v", ps)
	}
}

func TestSuggest(t *testing.T) {
	long := strings.Repeat("n", 1<<16)
	for _, c := range []struct{ src, want string }{
		{"nmae = 1", `; did you mean "name"?`},         // a swap is one edit
		{"NAME = 1", `; did you mean "name"?`},         // case
		{"title = 1", `; did you mean "site.title"?`},  // a key written above its table
		{"[site]\nopen = 1", `; did you mean "open"?`}, // the same name in another table
		{"[[repos]]\npyton = 1", `; did you mean "repos[0].python"?`},
		{"[site]\ntitel = 1\n[[repos]]", `; did you mean "site.title"?`},
		{"nam = 1", `; did you mean "name"?`},
		{"opn = 1", `; did you mean "open"?`}, // one edit from a short name
		{"op = 1", ""},                        // two are too many
		{long + " = 1", ""},
	} {
		var m model
		_, ps := Decode("m.toml", []byte(c.src), &m, Options{})
		if len(ps) != 1 || !strings.HasPrefix(ps[0].Msg, "unknown key ") {
			t.Errorf("%.40q: %v, want one unknown key", c.src, ps)
			continue
		}
		if c.want == "" && strings.Contains(ps[0].Msg, "did you mean") || !strings.HasSuffix(ps[0].Msg, c.want) {
			t.Errorf("%.40q: %.200q, want it to end %q", c.src, ps[0].Msg, c.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "ab", 2}, {"title", "titel", 1}, {"base_ulr", "base_url", 1},
		{"kitten", "sitting", 3}, {"ca", "abc", 3}, {"日本語", "日語本", 1},
	} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

func TestProblemsError(t *testing.T) {
	for _, c := range []struct {
		ps   Problems
		want string
	}{
		{Problems{{File: "a/b.toml", Line: 3, Field: "level", Msg: "is 3"}}, `a/b.toml:3: field "level": is 3`},
		{Problems{{File: "a/m.toml", Field: "name", Msg: "is required"}}, `a/m.toml: field "name": is required`},
		{Problems{{File: "dir", Msg: "bad"}}, "dir: bad"},
		{Problems{{File: "f", Line: 1, Msg: "x"}, {File: "f", Line: 2, Field: "k", Msg: "y"}},
			"f: 2 problems:\n  f:1: x\n  f:2: field \"k\": y"},
		{Problems{{File: "f", Msg: "x"}, {File: "g", Msg: "y"}}, "2 problems in data:\n  f: x\n  g: y"},
	} {
		if got := c.ps.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	if err := (Problems{}).Err(); err != nil {
		t.Errorf("empty Problems.Err() = %v, want nil", err)
	}
	ps := Problems{{File: "b", Line: 2}, {File: "a", Line: 9}, {File: "b", Line: 1}, {File: "b"}}
	var got Problems
	if !errors.As(ps.Err(), &got) || got[0].File != "a" || got[1].Line != 0 || got[2].Line != 1 || got[3].Line != 2 {
		t.Errorf("Err() = %v, want sorted by file then line", got)
	}
}
