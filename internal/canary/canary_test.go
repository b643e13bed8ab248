package canary_test

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/canary"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images/imagestest"
)

// A small project: a correct implementation and tests of every shape the
// script meets. The tests of bad.py do not parse.
const (
	modSource = `"""A correct implementation."""


class ParseError(ValueError):
    pass


def add(a, b):
    return a + b


def shout(s):
    return s.upper() + "!"


def parse(s):
    if not s.isdigit():
        raise ParseError("not a number: %r (at column 1)" % s)
    return int(s)


def pair(a):
    return (a, [a, a * 2])
`
	testSource = `import pytest

from mod import ParseError, add, pair, parse, shout

HELPER = 3


def test_add():
    assert add(1, 2) == 3
    assert 7 == add(3, 4)
    assert add(-1, -1) == -2


@pytest.mark.parametrize("a, b, total", [(1, 1, 2), (2, 3, 5)])
def test_add_many(a, b, total):
    assert add(a, b) == total
    assert add(a, 0) == a


def test_shout():
    assert shout("hi") == "HI!"
    assert shout('x') == 'X!'
    assert shout("""a
b""") == """A
B!"""


def test_parse_errors():
    with pytest.raises(ParseError, match=r"not a number: 'x' \(at column 1\)"):
        parse("x")
    with pytest.raises(ValueError):
        parse("")


def test_pair():
    assert pair(2) == (2, [2, 4])


def test_no_literal():
    expected = add(1, 1)
    assert add(1, 1) == expected


class TestGroup:
    def test_in_class(self):
        assert add(10, 5) == 15

    def test_other(self):
        assert shout("a") == "A!"


def test_uses_helper():
    def inner():
        assert add(1, 1) == 99  # never called: not a place
    assert add(HELPER, 0) == 3
`
)

// runIn runs argv in box, failing the test on an error.
func runIn(t *testing.T, ctx context.Context, box *container.Container, argv ...string) container.ExecResult {
	t.Helper()
	res, err := box.Exec(ctx, argv, container.ExecOptions{Timeout: 2 * time.Minute, WorkDir: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// outcomes reads pytest -rA's summary: test id -> PASSED, FAILED, ERROR.
func outcomes(out []byte) map[string]string {
	m := map[string]string{}
	for _, l := range regexp.MustCompile(`(?m)^(PASSED|FAILED|ERROR) (\S+)`).FindAllSubmatch(out, -1) {
		m[string(l[2])] = string(l[1])
	}
	return m
}

// TestScript runs the script in a container on the project above: it
// derives, and then grades with the places the derivation found sound.
// The dataset's tests, renamed, pass with a correct implementation; every
// canary fails with it; the mapping says which is which; what cannot be
// parsed is skipped with a reason; the same seed writes the same files.
func TestScript(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dataset := []string{
		"tests/test_m.py::test_add", "tests/test_m.py::test_add_many[1-1-2]", "tests/test_m.py::test_add_many[2-3-5]",
		"tests/test_m.py::test_shout", "tests/test_m.py::test_parse_errors", "tests/test_m.py::test_pair",
		"tests/test_m.py::test_no_literal", "tests/test_m.py::TestGroup::test_in_class", "tests/test_m.py::TestGroup::test_other",
		"tests/test_m.py::test_uses_helper", "tests/test_bad.py::test_x",
	}
	start := func(t *testing.T) *container.Container {
		box, err := eng.Start(ctx, container.Spec{Image: base, Name: "featbench-canary-test", WorkDir: "/p"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { box.Remove() })
		if err := box.CopyIn(ctx, "/p", []container.File{
			{Path: "mod.py", Data: []byte(modSource)},
			{Path: "tests/test_m.py", Data: []byte(testSource)},
			{Path: "tests/test_bad.py", Data: []byte("def test_x(:\n")},
			{Path: canary.File, Data: canary.Source()},
		}); err != nil {
			t.Fatal(err)
		}
		return box
	}
	script := func(t *testing.T, box *container.Container, sp canary.Spec) *canary.Mapping {
		t.Helper()
		raw, _ := json.Marshal(sp)
		if err := box.CopyIn(ctx, "/p", []container.File{{Path: "spec.json", Data: raw}}); err != nil {
			t.Fatal(err)
		}
		if res := runIn(t, ctx, box, "python3", "-I", canary.File, "spec.json", "/p/out.json"); res.ExitCode != 0 {
			t.Fatalf("the script exited %d: %s", res.ExitCode, res.Stderr)
		}
		if res := runIn(t, ctx, box, "stat", "-c", "%a", "/p/out.json"); strings.TrimSpace(string(res.Stdout)) != "600" {
			t.Errorf("the mapping's mode is %s, want 600 (the tests' user must not read it)", res.Stdout)
		}
		res := runIn(t, ctx, box, "cat", "/p/out.json")
		m, err := canary.ParseMapping(res.Stdout)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	pytest := func(t *testing.T, box *container.Container) (map[string]string, string) {
		t.Helper()
		res := runIn(t, ctx, box, "python3", "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests/test_m.py")
		file := runIn(t, ctx, box, "cat", "tests/test_m.py")
		return outcomes(res.Stdout), string(file.Stdout)
	}
	funcs := canary.Functions(dataset)

	// Derive: every place gets canaries.
	box := start(t)
	m := script(t, box, canary.Spec{Root: "/p", Seed: 1, Tests: funcs})
	if why := m.Skipped["tests/test_bad.py::test_x"]; !strings.Contains(why, "SyntaxError") {
		t.Errorf("the test of a file that does not parse: skipped for %q, want a SyntaxError", why)
	}
	got, text := pytest(t, box)
	run := m.Ids(dataset[:len(dataset)-1])
	for renamed, orig := range run.Back {
		if got[renamed] != "PASSED" {
			t.Errorf("%s, renamed %s: %s, want PASSED\n%s", orig, renamed, got[renamed], text)
		}
	}
	kinds := map[string]int{}
	for cid := range run.Canaries {
		if got[cid] != "FAILED" {
			t.Errorf("canary %s: %s, want FAILED with a correct implementation", cid, got[cid])
		}
		kinds[run.Entries[cid].Site.Kind]++
	}
	if kinds["eq"] == 0 || kinds["match"] == 0 || kinds["raises"] == 0 {
		t.Errorf("canaries by kind %v: want each of eq, match, raises", kinds)
	}
	for _, bad := range []string{"'HI!", "def test_uses_helper(", "def test_add(", "== 99 "} {
		if bad == "== 99 " {
			// The inner function's assert is no place: its line is as it was.
			if strings.Count(text, "assert add(1, 1) == 99") < 1 {
				t.Errorf("the inner function's assert changed:\n%s", text)
			}
			continue
		}
		if strings.Contains(text, bad) {
			t.Errorf("the file still shows %q: a name or a quote gives away which test is which\n%s", bad, text)
		}
	}
	if strings.Contains(text, "\n\ndef ") && regexp.MustCompile(`[^\n]\n\ndef test`).MatchString(text) {
		t.Errorf("a module-level test follows one blank line only, where the file has two:\n%s", text)
	}
	renamed := map[string]string{}
	for to, from := range run.Back {
		renamed[from] = to
	}
	sound := canary.Sound(run, func(id string) bool { return got[renamed[id]] == "PASSED" },
		func(id string) bool { return got[id] == "FAILED" })
	if len(sound) == 0 {
		t.Fatal("no sound place")
	}
	for _, c := range sound {
		if c.Test == "tests/test_m.py::test_no_literal" {
			t.Errorf("a place in test_no_literal, which compares with no literal: %+v", c)
		}
	}

	// Grade: the sound places, drawn with a seed; again with the same
	// seed gives the same file, another seed other names.
	var files []string
	for _, seed := range []uint64{7, 7, 8} {
		box := start(t)
		m := script(t, box, canary.Spec{Root: "/p", Seed: seed, Tests: funcs, Sites: sound, Max: 5})
		if len(m.Canaries) != min(5, len(sound)) {
			t.Errorf("seed %d: %d canaries, want %d", seed, len(m.Canaries), min(5, len(sound)))
		}
		got, text := pytest(t, box)
		run := m.Ids(dataset[:len(dataset)-1])
		for renamed := range run.Back {
			if got[renamed] != "PASSED" {
				t.Errorf("seed %d: %s: %s, want PASSED", seed, renamed, got[renamed])
			}
		}
		for cid := range run.Canaries {
			if got[cid] != "FAILED" {
				t.Errorf("seed %d: canary %s: %s, want FAILED", seed, cid, got[cid])
			}
		}
		files = append(files, text)
	}
	if files[0] != files[1] {
		t.Error("the same seed gave two different files")
	}
	if files[0] == files[2] {
		t.Error("two seeds gave the same file")
	}
}

// TestIds: dataset ids are renamed by function, parameters kept; each
// canary gets the parameters of each of its twin's ids.
func TestIds(t *testing.T) {
	m := &canary.Mapping{
		Tests: map[string]string{"t.py::test_a": "t.py::test_x", "t.py::C::test_b": "t.py::C::test_y"},
		Canaries: []canary.Entry{{ID: "t.py::test_q", Twin: "t.py::test_a", Site: bench.Canary{Test: "t.py::test_a", N: 0, Kind: "eq"}},
			{ID: "t.py::C::test_r", Twin: "t.py::C::test_b", Site: bench.Canary{Test: "t.py::C::test_b", N: 1, Kind: "eq"}}},
	}
	r := m.Ids([]string{"t.py::test_a[1-2]", "t.py::test_a[3-4]", "t.py::C::test_b", "t.py::test_c", "t.py"})
	want := []string{"t.py::test_x[1-2]", "t.py::test_x[3-4]", "t.py::C::test_y", "t.py::test_c", "t.py",
		"t.py::test_q[1-2]", "t.py::test_q[3-4]", "t.py::C::test_r"}
	if !reflect.DeepEqual(r.Expected, want) {
		t.Errorf("expected %q, want %q", r.Expected, want)
	}
	if r.Back["t.py::test_x[3-4]"] != "t.py::test_a[3-4]" || r.Canaries["t.py::test_q[3-4]"] != "t.py::test_a[3-4]" || r.Back["t.py"] != "t.py" {
		t.Errorf("back %v, canaries %v", r.Back, r.Canaries)
	}
	var none *canary.Mapping
	if r := none.Ids([]string{"a::b"}); !reflect.DeepEqual(r.Expected, []string{"a::b"}) || len(r.Canaries) != 0 {
		t.Errorf("no mapping: %+v", r)
	}
	if got := canary.Functions([]string{"f.py::t[1]", "f.py::t[2]", "f.py", "g.py::C::t"}); !reflect.DeepEqual(got, []string{"f.py::t", "g.py::C::t"}) {
		t.Errorf("Functions = %q", got)
	}
}

// TestParseMappingRefuses what would move a test to another file or class.
func TestParseMappingRefuses(t *testing.T) {
	for _, raw := range []string{
		`{"tests": {"a.py::test_x": "b.py::test_y"}, "canaries": []}`,
		`{"tests": {"a.py::C::test_x": "a.py::test_y"}, "canaries": []}`,
		`{"tests": {"a.py::test_x": "a.py::test_y"}, "canaries": [{"id": "b.py::test_z", "twin": "a.py::test_x"}]}`,
		`{"tests": {}, "canaries": [{"id": "a.py::test_z", "twin": "a.py::test_x"}]}`,
		`not json`,
	} {
		if _, err := canary.ParseMapping([]byte(raw)); err == nil {
			t.Errorf("accepted %s", raw)
		}
	}
}
