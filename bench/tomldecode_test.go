package bench

import (
	"reflect"
	"strings"
	"testing"
)

func TestTOMLKeyLines(t *testing.T) {
	src := `# comment with key = "x"
name = "a"
notes = """
title = "not a key"
"""
tags = [
  "x", # a comment
  "y",
]
inline = { a = 1, b = { c = "}" } }
'quoted key' = 1
"dotted.name".x = 2

[[splits]]
name = "full"

[[splits]]
name = "lite"
description = '''
multi'''
size = 3

[repositories.reported]
lines = "1"

[[repositories]]
name = "r"

[repositories.reported]
lines = "2"
`
	got := tomlKeyLines(src)
	for path, line := range map[string]int{
		"name": 2, "notes": 3, "tags": 6, "inline": 10, "inline.a": 10, "inline.b.c": 10,
		"quoted key": 11, "dotted.name.x": 12,
		"splits[0]": 14, "splits[0].name": 15, "splits[1]": 17, "splits[1].name": 18, "splits[1].description": 19, "splits[1].size": 21,
		"repositories.reported.lines": 24, "repositories[0]": 26, "repositories[0].name": 27,
		"repositories[0].reported": 29, "repositories[0].reported.lines": 30,
	} {
		if got[path] != line {
			t.Errorf("line of %s = %d, want %d", path, got[path], line)
		}
	}
	if _, ok := got["title"]; ok {
		t.Error("a line inside a multi-line string was taken for a key")
	}
	for field, line := range map[string]int{"splits[1].instances": 17, "tags[1]": 6, "nope": 0, "repositories[0].reported.files": 29} {
		if n := got.line(field); n != line {
			t.Errorf("line(%s) = %d, want %d", field, n, line)
		}
	}
}

func TestTOMLDepth(t *testing.T) {
	for _, c := range []struct {
		src         string
		depth, line int
	}{
		{"a = 1\n", 0, 0},
		{"a = [[1], [2]]\n", 2, 1},
		{"[[s]]\nx = 1\n", 2, 1},
		{"a = \"[[[[\"\n# [[[[\nb = '{{{'\nc = \"\"\"\n[[[\n\"\"\"\nd = [\n[\n]]\n", 2, 8},
		{"a = " + strings.Repeat("{b = ", 40) + "1" + strings.Repeat("}", 40) + "\n", 40, 1},
	} {
		depth, line := tomlDepth([]byte(c.src))
		if depth != c.depth || line != c.line {
			t.Errorf("tomlDepth(%q) = %d at line %d, want %d at %d", c.src, depth, line, c.depth, c.line)
		}
	}
}

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

func TestClosestKey(t *testing.T) {
	known := tomlFields(reflect.TypeFor[Metadata]())
	for in, want := range map[string]string{
		"orgnisations": "organisations", "organizations": "organisations", "Name": "name", "sit_url": "site_url",
		"resovled": "", "x": "", "checked": "",
	} {
		if got := closest(in, known); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
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
