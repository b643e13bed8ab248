package verbatim

import (
	"strings"
	"testing"
)

func texts(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.How+" "+m.Text())
	}
	return out
}

func TestCompared(t *testing.T) {
	src := `import re
import unittest

import pytest

from parsekit import loads, ParseError, search, ArityError


def test_position():
    with pytest.raises(ParseError) as exc_info:
        loads("a = [1,")
    assert str(exc_info.value) == "Unclosed array (at line 1, column 8)"


def test_match():
    with pytest.raises(ValueError, match=r"Invalid key \(at line \d+, column 3\)"):
        loads("=")
    with pytest.raises(ValueError, match=re.escape("bad (thing)")):
        loads("x")
    with pytest.warns(DeprecationWarning, match=f"use {NEW} instead"):
        loads("y")


def test_not_a_message():
    assert loads("a = 1") == {"a": 1}
    assert loads("b = 'x y'")["b"] == "x y"
    assert "no message here" == "no message here"


class TestArity(unittest.TestCase):
    def test_arity(self):
        with self.assertRaises(ArityError) as cm:
            search("sort_by(@)", {})
        self.assertEqual(
            str(cm.exception),
            "Expected 2 arguments for function sort_by(), "
            "received 1")

    def test_regex(self):
        with self.assertRaisesRegex(ArityError, "Expected \\d+ arguments"):
            search("sort_by(@)", {})

    def test_in(self):
        try:
            search("x(", {})
        except ParseError as e:
            assert "Unexpected end of expression" in str(e)
            self.assertIn("column 2", e.args[0])

    def test_reversed(self):
        e = ParseError("x")
        assert "Invalid" != repr(e) and e.args == ("x",)
`
	got := texts(Compared(src))
	want := []string{
		"== Unclosed array (at line 1, column 8)",
		"match= Invalid key (at line …, column 3)",
		"match= bad (thing)",
		"match= use … instead",
		"assertEqual Expected 2 arguments for function sort_by(), received 1",
		"assertRaisesRegex Expected … arguments",
		"in Unexpected end of expression",
		"assertIn column 2",
		"!= Invalid",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("compared messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTemplates(t *testing.T) {
	code := `class ParseError(ValueError):
    def __init__(self, msg, doc, pos):
        lineno = doc.count("\n", 0, pos) + 1
        colno = pos - doc.rfind("\n", 0, pos)
        super().__init__(f"{msg} (at line {lineno}, column {colno})")


def arity(name, want, got):
    raise ArityError("Expected %s arguments for function %s(), "
                     "received %d" % (want, name, got))


KEYS = {"name": 1, "sep": ", "}
fmt = "{0!r} is not a valid {kind}".format(x, kind="key")
pct = "100%% of %(what)s done"
`
	var got []string
	for _, tm := range Templates(code) {
		got = append(got, tm.Text())
	}
	want := []string{
		"… (at line …, column …)",
		"Expected … arguments for function …(), received …",
		"… is not a valid …",
		"100% of … done",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("templates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The two cases issue 26 found on libraries never seen before: a message
// with its position (a TOML parser's "(at line L, column C)") and an
// arity message (a query language's sort_by), compared verbatim by the
// tests, made by the feature's code, and given by no statement.
const positionTest = `def test_unclosed():
    with pytest.raises(TOMLDecodeError) as exc_info:
        loads("a = [1,")
    assert str(exc_info.value) == "Unclosed array (at line 1, column 8)"
`

const positionCode = `+class TOMLDecodeError(ValueError):
+    def __init__(self, msg, doc, pos):
+        lineno = doc.count("\n", 0, pos) + 1
+        colno = pos - doc.rfind("\n", 0, pos)
+        super().__init__(f"{msg} (at line {lineno}, column {colno})")
`

const arityTest = `    def test_arity(self):
        with self.assertRaises(exceptions.ArityError) as cm:
            jmespath.search("sort_by(@)", {})
        self.assertEqual(str(cm.exception), "Expected 2 arguments for function sort_by(), received 1")
`

const arityCode = `class ArityError(ParseError):
    def __str__(self):
        return ("Expected %s %s for function %s(), "
                "received %s" % (self.expected_arity, self._pluralize("argument", self.expected_arity),
                                 self.function_name, self.actual_arity))
`

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		name, statement, tests, code string
		missing                      string // the message missing, "" for none
	}{
		{"position not given", "Implement `loads`: parse a TOML document; raise TOMLDecodeError on bad input.", positionTest, positionCode,
			"Unclosed array (at line 1, column 8)"},
		{"position format given", "Errors are TOMLDecodeError, whose message ends with \"(at line L, column C)\".", positionTest, positionCode, ""},
		{"message quoted", "For example `Unclosed array (at line 1, column 8)`.", positionTest, positionCode, ""},
		{"arity not given", "Add sort_by(array, expr) to the functions.", arityTest, arityCode,
			"Expected 2 arguments for function sort_by(), received 1"},
		{"arity format given", "A wrong number of arguments raises ArityError: \"Expected N arguments for function NAME(), received M\".", arityTest, arityCode, ""},
		// A message the feature's code does not make (Python's own, or
		// code that stays) is not the statement's to give.
		{"message from elsewhere", "Add loads.", positionTest, "+def loads(s):\n+    return parse(s)\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Missing(tc.statement, tc.tests, tc.code)
			switch {
			case tc.missing == "" && len(got) > 0:
				t.Errorf("missing %v, want none", got[0])
			case tc.missing != "" && len(got) != 1:
				t.Errorf("missing %d findings, want %q", len(got), tc.missing)
			case tc.missing != "" && got[0].Message.Text() != tc.missing:
				t.Errorf("missing %q, want %q", got[0].Message.Text(), tc.missing)
			}
			if len(got) > 0 && !strings.Contains(got[0].String(), "verbatim") {
				t.Errorf("reason %q", got[0].String())
			}
		})
	}
}

func TestLexTolerant(t *testing.T) {
	// A hunk may start inside a triple-quoted string or end in one.
	for _, src := range []string{`"""unterminated`, "x = '\n", `f"{a{b}"`, "\\", "b'\\xff' u'\\N{DASH}'", "'\\x4'", "\xff\xfe = 1"} {
		lex(src)
		Compared(src)
		Templates(src)
	}
}

func FuzzMissing(f *testing.F) {
	f.Add("s", positionTest, positionCode)
	f.Add("s", arityTest, arityCode)
	f.Fuzz(func(t *testing.T, statement, tests, code string) {
		for _, fd := range Missing(statement, tests, code) {
			_ = fd.String()
		}
	})
}
