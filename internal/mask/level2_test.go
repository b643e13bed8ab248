package mask_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/featbench/featbench/internal/mask"
)

var textkit = repo{
	"textkit/__init__.py": `"""textkit."""
`,
	"textkit/slug.py": `def slugify(text):
    return text.lower()


def unique_slug(text, taken):
    return slugify(text)
`,
	"textkit/table.py": `class Table:
    pass
`,
	"tests/test_slug.py": `"""Slug tests."""

from __future__ import annotations

import pytest

import textkit.slug
import textkit.slug as s
from textkit import slug
from textkit.slug import unique_slug, slugify
from textkit.table import Table as T


def test_it():
    assert unique_slug("a", set()) == "a"
    assert slug.unique_slug("a", set()) == s.unique_slug("a", set())
    assert textkit.slug.unique_slug("b", set()) == "b"
    assert slug.slugify("A") == "a"
    assert T


def test_local():
    from textkit.slug import unique_slug as us

    assert us("x", set()) == "x"
`,
	"tests/test_plain.py": `import textkit.slug as s


def test_plain():
    assert s.unique_slug("a", set())
`,
}

func TestLevel2(t *testing.T) {
	r := textkit
	tests := []struct {
		file, want string
	}{
		{"tests/test_slug.py", `"""Slug tests."""

from __future__ import annotations

import agent_code
import pytest

import textkit.slug
import textkit.slug as s
from textkit import slug
from agent_code import unique_slug
from textkit.slug import slugify
from agent_code import Table as T


def test_it():
    assert unique_slug("a", set()) == "a"
    assert agent_code.unique_slug("a", set()) == agent_code.unique_slug("a", set())
    assert agent_code.unique_slug("b", set()) == "b"
    assert slug.slugify("A") == "a"
    assert T


def test_local():
    from agent_code import unique_slug as us

    assert us("x", set()) == "x"
`},
		// No docstring and no __future__ import: agent_code comes first.
		{"tests/test_plain.py", `import agent_code
import textkit.slug as s


def test_plain():
    assert agent_code.unique_slug("a", set())
`},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			dir := r.write(t)
			res := mustMask(t, dir, mask.Request{
				Remove:       []string{objID(t, r, "textkit/slug.py", "unique_slug", "def unique_slug")},
				ProtectFiles: []string{tc.file},
				Level2:       &mask.Level2{TestFile: tc.file, Package: "textkit", Names: []string{"unique_slug", "Table"}},
			})
			if res.Level2Test == nil {
				t.Fatal("no level2_test in the result")
			}
			if *res.Level2Test != tc.want {
				t.Errorf("level 2 test:\n%s\nwant:\n%s", *res.Level2Test, tc.want)
			}
			scratch := t.TempDir()
			if err := os.WriteFile(filepath.Join(scratch, "level2.py"), []byte(*res.Level2Test), 0o644); err != nil {
				t.Fatal(err)
			}
			checkParses(t, scratch, "level2.py")
			// The test file itself is not written.
			if got := read(t, dir, tc.file); got != r[tc.file] {
				t.Errorf("%s was changed on disk:\n%s", tc.file, got)
			}
		})
	}
}
