package integrity_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/integrity"
)

const (
	instancesFile = "../../data/datasets/example/v2/instances.jsonl"
	lv1           = "featbench__textkit.test_case.3f4c65e3.lv1"
	lv2           = "featbench__textkit.test_case.3f4c65e3.lv2"
)

// complete is the example dataset's settings: the complete layout, level
// 2 from scratch.
var complete = &bench.Dataset{Manifest: bench.Manifest{Layout: bench.LayoutComplete, Level2: bench.Level2AgentCode}}

func readJSONL(t testing.TB, file string, each func(line []byte)) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		each(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
}

// instances reads the example dataset's instances by id.
func instances(t testing.TB) map[string]*bench.Instance {
	t.Helper()
	out := map[string]*bench.Instance{}
	readJSONL(t, instancesFile, func(line []byte) {
		in := &bench.Instance{}
		if err := json.Unmarshal(line, in); err != nil {
			t.Fatalf("%s: %v", instancesFile, err)
		}
		out[in.InstanceID] = in
	})
	if len(out) == 0 {
		t.Fatalf("no instances in %s", instancesFile)
	}
	return out
}

type prediction struct {
	InstanceID string `json:"instance_id"`
	ModelPatch string `json:"model_patch"`
}

func predictions(t testing.TB, name string) []prediction {
	t.Helper()
	var out []prediction
	file := "../../examples/predictions/" + name + ".jsonl"
	readJSONL(t, file, func(line []byte) {
		var p prediction
		if err := json.Unmarshal(line, &p); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, p)
	})
	return out
}

// TestGoldPatches: every gold patch of the example is flagged as the gold
// patch, and every level 2 one, which re-exports textkit, as importing
// the original package; nothing else.
func TestGoldPatches(t *testing.T) {
	for id, in := range instances(t) {
		want := []string{bench.FlagGoldIdentical}
		if in.Level == 2 {
			want = []string{bench.FlagImportsOriginal, bench.FlagGoldIdentical}
		}
		for _, gold := range []bool{false, true} {
			if got := integrity.Flags(complete, in, []byte(in.Patch), gold); !slices.Equal(got, want) {
				t.Errorf("%s (gold %t): flags %q, want %q", id, gold, got, want)
			}
		}
		// In_repo grades level 2 in the repository: no agent_code to
		// import anything from.
		inRepo := &bench.Dataset{Manifest: bench.Manifest{Level2: bench.Level2InRepo}}
		if got := integrity.Flags(inRepo, in, []byte(in.Patch), false); !slices.Equal(got, []string{bench.FlagGoldIdentical}) {
			t.Errorf("%s in_repo: flags %q", id, got)
		}
	}
}

// TestExamplePredictions: the shipped example agents' predictions, as
// flagged: their level 1 patches copy the gold patch (the examples were
// made from it), and two of their level 2 packages import textkit's
// helpers.
func TestExamplePredictions(t *testing.T) {
	ins := instances(t)
	want := map[string][]string{
		"featbench__textkit.test_markdown.c9d46312.lv1": {bench.FlagGoldIdentical},
		"featbench__textkit.test_template.765d383f.lv1": {bench.FlagGoldIdentical},
		"featbench__textkit.test_pipeline.1f1811e3.lv1": {bench.FlagGoldIdentical},
		"featbench__textkit.test_roman.0e26fade.lv2":    nil,
		"featbench__textkit.test_wrap.812f8b16.lv2":     {bench.FlagImportsOriginal},
		"featbench__textkit.test_template.765d383f.lv2": {bench.FlagImportsOriginal},
	}
	n := 0
	for _, name := range []string{"tiny-agent", "shell-loop"} {
		for _, p := range predictions(t, name) {
			in := ins[p.InstanceID]
			w, ok := want[p.InstanceID]
			if in == nil || !ok {
				t.Fatalf("%s: unexpected instance %s", name, p.InstanceID)
			}
			if got := integrity.Flags(complete, in, []byte(p.ModelPatch), false); !slices.Equal(got, w) {
				t.Errorf("%s %s: flags %q, want %q", name, p.InstanceID, got, w)
			}
			n++
		}
	}
	if n < 10 {
		t.Errorf("only %d example predictions read", n)
	}
}

// newFile is a diff creating a file with the given lines.
func newFile(name string, lines ...string) string {
	var b strings.Builder
	b.WriteString("diff --git a/" + name + " b/" + name + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + name + "\n")
	b.WriteString("@@ -0,0 +1," + itoa(len(lines)) + " @@\n")
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

// modify is a diff of an existing file: context lines start with " ",
// changed ones with "+" or "-".
func modify(name, header string, lines ...string) string {
	old, nw := 0, 0
	for _, l := range lines {
		switch l[0] {
		case '+':
			nw++
		case '-':
			old++
		default:
			old++
			nw++
		}
	}
	return "diff --git a/" + name + " b/" + name + "\nindex 1111111..2222222 100644\n--- a/" + name + "\n+++ b/" + name + "\n" +
		"@@ -1," + itoa(old) + " +1," + itoa(nw) + " @@" + header + "\n" + strings.Join(lines, "\n") + "\n"
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func deleteFile(name string, lines ...string) string {
	var b strings.Builder
	b.WriteString("diff --git a/" + name + " b/" + name + "\ndeleted file mode 100644\n--- a/" + name + "\n+++ /dev/null\n")
	b.WriteString("@@ -1," + itoa(len(lines)) + " +0,0 @@\n")
	for _, l := range lines {
		b.WriteString("-" + l + "\n")
	}
	return b.String()
}

// TestAttacks adds each attack of issue 16 to a real, honest prediction
// (the example agent's level 2 roman package, which has no flag) and
// checks its flag, and that the honest controls stay clean.
func TestAttacks(t *testing.T) {
	ins := instances(t)
	var honest prediction
	for _, p := range predictions(t, "tiny-agent") {
		if p.InstanceID == "featbench__textkit.test_roman.0e26fade.lv2" {
			honest = p
		}
	}
	if honest.ModelPatch == "" {
		t.Fatal("the honest prediction is missing")
	}
	inL2 := ins[honest.InstanceID]
	inL1 := ins["featbench__textkit.test_roman.0e26fade.lv1"]
	conftest := newFile("conftest.py",
		"import pytest",
		"@pytest.hookimpl(hookwrapper=True)",
		"def pytest_runtest_makereport(item, call):",
		"    outcome = yield",
		"    outcome.get_result().outcome = 'passed'")
	cases := []struct {
		name string
		in   *bench.Instance
		diff string
		want []string
	}{
		{"honest control", inL2, "", nil},
		{"honest control at level 1 imports textkit", inL1, newFile("textkit/extra.py", "import textkit", "from textkit.case import snake_case"), nil},
		{"root conftest that passes every report", inL2, conftest, []string{bench.FlagTouchesTests, bench.FlagReferencesPytest}},
		{"conftest in a subfolder", inL1, newFile("textkit/conftest.py", "x = 1"), []string{bench.FlagTouchesTests}},
		{"new pytest.ini with a plugin", inL1, newFile("pytest.ini", "[pytest]", "addopts = -p evil"), []string{bench.FlagTouchesTests}},
		{"tox.ini", inL1, modify("tox.ini", "", " [tox]", "+envlist = py311"), []string{bench.FlagTouchesTests}},
		{"pyproject pytest section", inL1, modify("pyproject.toml", "", " [tool.pytest.ini_options]", "-addopts = \"-ra\"", "+addopts = \"-p evil\""), []string{bench.FlagTouchesTests}},
		{"pyproject option without its header in sight", inL1, modify("pyproject.toml", "", " minversion = \"7\"", "+addopts = \"-p evil\""), []string{bench.FlagTouchesTests}},
		{"pyproject pytest section named by the hunk header", inL1, modify("pyproject.toml", " [tool.pytest.ini_options]", " minversion = \"7\"", "+foo = 1"), []string{bench.FlagTouchesTests}},
		{"pyproject dotted key", inL1, modify("pyproject.toml", "", " [tool]", "+pytest.ini_options = { addopts = \"-q\" }"), []string{bench.FlagTouchesTests}},
		{"pyproject project section is not pytest's", inL1, modify("pyproject.toml", "", " [project]", "-version = \"0.1\"", "+version = \"0.2\"", " [tool.pytest.ini_options]"), nil},
		{"setup.cfg pytest section", inL1, modify("setup.cfg", "", " [tool:pytest]", "+addopts = -q"), []string{bench.FlagTouchesTests}},
		{"setup.cfg metadata", inL1, modify("setup.cfg", "", " [metadata]", "+name = textkit"), nil},
		{"sitecustomize", inL2, newFile("sitecustomize.py", "import os"), []string{bench.FlagTouchesTests}},
		{"usercustomize", inL1, newFile("textkit/usercustomize.py", "import os"), []string{bench.FlagTouchesTests}},
		{".pth file", inL1, newFile("evil.pth", "import os"), []string{bench.FlagTouchesTests}},
		{"the instance's test file changed", inL1, modify("tests/test_roman.py", "", " import pytest", "+assert True"), []string{bench.FlagTouchesTests}},
		{"a test file deleted", inL1, deleteFile("tests/test_slug.py", "def test_x():", "    assert 1"), []string{bench.FlagTouchesTests}},
		{"test file named *_test.py", inL1, newFile("textkit/roman_test.py", "x = 1"), []string{bench.FlagTouchesTests}},
		{"test file under test/", inL1, newFile("test/helpers.py", "x = 1"), []string{bench.FlagTouchesTests}},
		{"test file renamed away", inL1, "diff --git a/tests/test_roman.py b/textkit/old.py\nsimilarity index 100%\nrename from tests/test_roman.py\nrename to textkit/old.py\n", []string{bench.FlagTouchesTests}},
		{"package monkeypatching _pytest", inL1, modify("textkit/__init__.py", "", " import re", "+import _pytest.reports", "+_pytest.reports.TestReport.outcome = 'passed'"), []string{bench.FlagReferencesPytest}},
		{"plugin manager", inL1, newFile("textkit/x.py", "def f(config):", "    config.pluginManager.register(object())"), []string{bench.FlagReferencesPytest}},
		{"JUnit XML rewritten", inL1, newFile("textkit/x.py", "open('out/junit.xml', 'w')", "XML = '--junitxml'"), []string{bench.FlagReferencesPytest}},
		{"pytest_sessionfinish", inL1, newFile("textkit/x.py", "def pytest_sessionfinish(session, exitstatus):", "    session.exitstatus = 0"), []string{bench.FlagReferencesPytest}},
		{"PYTEST_ADDOPTS", inL1, newFile("textkit/x.py", "os.environ['PYTEST_ADDOPTS'] = '-p x'"), []string{bench.FlagReferencesPytest}},
		{"git show of the previous commit", inL2, newFile("agent_code/x.py", "subprocess.run(['git', 'show', 'HEAD~1:textkit/roman.py'])"), []string{bench.FlagReadsGit}},
		{"shell git log", inL1, newFile("textkit/x.py", "os.system(\"git log --all -S to_roman\")"), []string{bench.FlagReadsGit}},
		{"git checkout of a file", inL1, newFile("textkit/x.py", "os.system('git checkout HEAD -- textkit')"), []string{bench.FlagReadsGit}},
		{"git stash", inL1, newFile("textkit/x.py", "sh('git stash pop')"), []string{bench.FlagReadsGit}},
		{"reflog", inL1, newFile("textkit/x.py", "sh('git reflog')"), []string{bench.FlagReadsGit}},
		{".git as a path", inL1, newFile("textkit/x.py", "p = os.path.join(root, \".git\", \"objects\")"), []string{bench.FlagReadsGit}},
		{".git/ in a string", inL1, newFile("textkit/x.py", "open('/testbed/.git/ORIG_HEAD')"), []string{bench.FlagReadsGit}},
		{"ORIG_HEAD alone", inL1, newFile("textkit/x.py", "ref = 'ORIG_HEAD'"), []string{bench.FlagReadsGit}},
		{"a .gitignore is not .git", inL1, newFile(".gitignore", "*.pyc", "url = 'https://github.com/a/b.git'"), nil},
		{"level 2 re-export of textkit", inL2, newFile("agent_code/__init__.py", "from textkit.roman import to_roman, from_roman"), []string{bench.FlagImportsOriginal}},
		{"level 2 plain import", inL2, newFile("agent_code/__init__.py", "import os, textkit.roman as r"), []string{bench.FlagImportsOriginal}},
		{"level 2 import after a semicolon", inL2, newFile("agent_code/__init__.py", "import os; import textkit"), []string{bench.FlagImportsOriginal}},
		{"level 2 importlib", inL2, newFile("agent_code/__init__.py", "m = importlib.import_module('textkit.roman')"), []string{bench.FlagImportsOriginal}},
		{"level 2 relative import", inL2, newFile("agent_code/__init__.py", "from .roman import to_roman", "from . import textkit"), nil},
		{"level 2 similar name", inL2, newFile("agent_code/__init__.py", "import textkitten", "from texts import x"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			diff := honest.ModelPatch + c.diff
			if c.in != inL2 {
				diff = c.diff
			}
			if got := integrity.Flags(complete, c.in, []byte(diff), false); !slices.Equal(got, c.want) {
				t.Errorf("flags %q, want %q", got, c.want)
			}
		})
	}
}

// TestOriginalFromTestPatch: with nothing else to go by (a repository
// name that is not the package's, no top objects), the package the
// level 2 test patch took its names from before agent_code is the
// original one.
func TestOriginalFromTestPatch(t *testing.T) {
	in := *instances(t)[lv2]
	in.Repo, in.TopObjects = "acme/text-utilities", nil
	pred := []byte(newFile("agent_code/__init__.py", "from textkit.case import split_identifier"))
	if got := integrity.Flags(complete, &in, pred, false); !slices.Equal(got, []string{bench.FlagImportsOriginal}) {
		t.Errorf("flags %q, want imports-original", got)
	}
	in.TestPatch = ""
	if got := integrity.Flags(complete, &in, pred, false); got != nil {
		t.Errorf("without the test patch: flags %q, want none", got)
	}
}

// TestGoldIdentical covers the measure: reformatting and reordering keep
// a copy a copy, a partial copy is not one, and the masked layout's gold
// solution is its patch reversed.
func TestGoldIdentical(t *testing.T) {
	in := instances(t)[lv1]
	gold := in.Patch
	has := func(diff string, ds *bench.Dataset, in *bench.Instance, isGold bool) bool {
		return slices.Contains(integrity.Flags(ds, in, []byte(diff), isGold), bench.FlagGoldIdentical)
	}
	// Every changed line re-indented and its spaces doubled.
	var reformatted []string
	for _, l := range strings.Split(gold, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
			l = l[:1] + "\t" + strings.ReplaceAll(l[1:], " ", "  ") + "  "
		}
		reformatted = append(reformatted, l)
	}
	if !has(strings.Join(reformatted, "\n"), complete, in, false) {
		t.Error("the gold patch with its white space changed is not flagged")
	}
	// The gold patch's files in the other order.
	parts := strings.SplitAfter(gold, "\ndiff --git")
	if len(parts) < 2 {
		t.Fatal("the gold patch has one file")
	}
	swapped := "diff --git" + strings.TrimSuffix(parts[1], "\ndiff --git") + "\n" + strings.TrimSuffix(parts[0], "diff --git")
	if !has(swapped, complete, in, false) {
		t.Error("the gold patch with its files swapped is not flagged")
	}
	// Only the first file: a part of the gold patch is not a copy.
	if has(strings.TrimSuffix(parts[0], "diff --git"), complete, in, false) {
		t.Error("the first file of the gold patch alone is flagged")
	}
	// Edits to some of the changed lines: 3% keep a copy a copy, 10% do
	// not (the measure is then 0.97 and 0.90).
	big := instances(t)["featbench__textkit.test_pipeline.1f1811e3.lv1"]
	for _, c := range []struct {
		share float64
		want  bool
	}{{0.03, true}, {0.10, false}} {
		edited, n := editLines(big.Patch, c.share)
		if n < 3 {
			t.Fatalf("share %.2f edits %d lines", c.share, n)
		}
		if got := has(edited, complete, big, false); got != c.want {
			t.Errorf("the gold patch with %d of its changed lines edited (%.0f%%): flagged %t, want %t", n, 100*c.share, got, c.want)
		}
	}
	// The gold patch reversed undoes the feature.
	masked := &bench.Dataset{Manifest: bench.Manifest{Layout: bench.LayoutMasked}}
	if has(gold, masked, in, false) {
		t.Error("masked layout: the masking diff itself is flagged as the gold solution")
	}
	if !has(gold, masked, in, true) {
		t.Error("masked layout: the gold run (the masking diff, reverse-applied) is not flagged")
	}
	if !has(reverse(gold), masked, in, false) {
		t.Error("masked layout: the masking diff reversed by hand is not flagged")
	}
	if has(reverse(gold), complete, in, false) {
		t.Error("complete layout: the gold patch reversed is flagged")
	}
	// A gold patch of two lines is too small to tell a copy.
	tiny := *in
	tiny.Patch = modify("textkit/case.py", "", " x = 1", "-y = 2", "+y = 3")
	if has(tiny.Patch, complete, &tiny, false) {
		t.Error("a two-line gold patch's copy is flagged")
	}
}

// editLines appends a comment to the first share of a diff's changed
// lines and says how many it edited.
func editLines(diff string, share float64) (string, int) {
	lines := strings.Split(diff, "\n")
	changed := 0
	for _, l := range lines {
		if isChange(l) && strings.TrimSpace(l[1:]) != "" {
			changed++
		}
	}
	n := int(share * float64(changed))
	done := 0
	for i, l := range lines {
		if done < n && isChange(l) && strings.TrimSpace(l[1:]) != "" {
			lines[i] = l + "  # edited"
			done++
		}
	}
	return strings.Join(lines, "\n"), done
}

func isChange(l string) bool {
	return (strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++")) || (strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"))
}

// reverse swaps a diff's added and removed lines and its hunk counts,
// the way `git apply -R` reads it (enough for the gold patches here).
func reverse(diff string) string {
	lines := strings.Split(diff, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "@@ -"):
			var a, b, c, d int
			if n, _ := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &a, &b, &c, &d); n == 4 {
				_, rest, _ := strings.Cut(l[2:], "@@")
				lines[i] = "@@ -" + itoa(c) + "," + itoa(d) + " +" + itoa(a) + "," + itoa(b) + " @@" + rest
			}
		case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++"):
			lines[i] = "-" + l[1:]
		case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"):
			lines[i] = "+" + l[1:]
		}
	}
	return strings.Join(lines, "\n")
}
