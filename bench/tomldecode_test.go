package bench

import (
	"strconv"
	"strings"
	"testing"
)

func TestCheckText(t *testing.T) {
	for _, c := range []struct {
		s    string
		max  int
		kind textKind
		want string
	}{
		{"OpenHands + Claude", 100, oneLine, ""},
		{"清华大学", 4, oneLine, ""},
		{"清华大学", 3, oneLine, "is 4 characters; at most 3"},
		{"a\nb", 10, oneLine, "holds a line break"},
		{"a\nb\tc\r\n", 10, multiLine, ""},
		{"a\u2028b", 10, multiLine, "holds the control character U+2028"},
		{"a\u2066b", 10, oneLine, "holds the control character U+2066"},
		{"a\x7fb", 10, multiLine, "holds the control character U+007F"},
		{"a\xffb", 10, oneLine, "is not valid UTF-8"},
	} {
		if got := checkText(c.s, c.max, c.kind); !strings.Contains(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("checkText(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
}

// Unknown keys of metadata.toml are matched against the real model: a
// misspelling gets the key meant, as a path, and a key close to none gets
// the file that lists them.
func TestUnknownKeySuggestions(t *testing.T) {
	for in, want := range map[string]string{
		"orgnisations":  `; did you mean "organisations"?`,
		"organizations": `; did you mean "organisations"?`,
		"Name":          `; did you mean "name"?`,
		"sit_url":       `; did you mean "site_url"?`,
		"resovled":      `; did you mean "reported.resolved"?`,
		"x":             ` (check the spelling against CONTRIBUTING.md)`,
	} {
		var m Metadata
		_, ps := decodeTOML("metadata.toml", []byte(in+" = 1\n"), &m, nil)
		if len(ps) != 1 || ps[0].Msg != "unknown key "+strconv.Quote(in)+want {
			t.Errorf("%s: %v, want one problem ending %q", in, ps, want)
		}
	}
	var m Metadata
	_, ps := decodeTOML("metadata.toml", []byte("checked = true\n"), &m, map[string]string{"checked": checkedKeyMsg})
	if len(ps) != 1 || ps[0].Msg != checkedKeyMsg || ps[0].Line != 1 {
		t.Errorf("checked = true: %v, want %q on line 1", ps, checkedKeyMsg)
	}
}

// decodeTOML must not panic on anything, and whatever it decodes without
// a problem must have come from a file that parses.
func FuzzDecodeTOML(f *testing.F) {
	for _, seed := range []string{
		"name = \"x\"\ndate = 2026-01-01\n[reported]\nresolved = \"1\"\n[reported.levels.L1]\npassed = 2\n",
		"tags = [\"a\", \"b\"]\norganisations = [[1]]\n",
		"a = {b = {c = [1, {d = 2}]}}\n",
		"date = \"2026-01-01\"\nattempts = 1.5\n",
		"[[x]]\n[x.y]\n[[x]]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Metadata
		lines, ps := decodeTOML("metadata.toml", data, &m, map[string]string{"checked": "no"})
		n := strings.Count(string(data), "\n") + 1
		for _, p := range ps {
			if p.Line < 0 || p.Line > n {
				t.Errorf("problem on line %d of %d: %v", p.Line, n, p)
			}
		}
		for k, l := range lines {
			if l < 1 || l > n {
				t.Errorf("key %q on line %d of %d", k, l, n)
			}
		}
	})
}
