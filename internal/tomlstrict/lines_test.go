package tomlstrict

import (
	"strings"
	"testing"
)

func TestScanLines(t *testing.T) {
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
	got := scanLines(src)
	for path, line := range map[string]int{
		"name": 2, "notes": 3, "tags": 6, "inline": 10, "inline.a": 10, "inline.b.c": 10,
		"quoted key": 11, "dotted.name.x": 12,
		"splits": 14, "splits[0]": 14, "splits[0].name": 15, "splits[1]": 17, "splits[1].name": 18, "splits[1].description": 19, "splits[1].size": 21,
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
		if n := got.Line(field); n != line {
			t.Errorf("Line(%s) = %d, want %d", field, n, line)
		}
	}
}

func TestNesting(t *testing.T) {
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
		depth, line := nesting([]byte(c.src))
		if depth != c.depth || line != c.line {
			t.Errorf("nesting(%q) = %d at line %d, want %d at %d", c.src, depth, line, c.depth, c.line)
		}
	}
}
