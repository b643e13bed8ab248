package collect

import (
	"encoding/json"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/mask"
	"github.com/featbench/featbench/internal/trace"
)

func TestParseCollection(t *testing.T) {
	out := `tests/test_a.py::test_one
tests/test_a.py::TestX::test_two[a::b - c]
tests/sub/test_b.py::test_three
ERROR tests/test_broken.py - ImportError: no module named x

3 tests collected, 1 error in 0.05s
`
	files, errs := parseCollection(out)
	want := map[string][]string{
		"tests/test_a.py":     {"tests/test_a.py::test_one", "tests/test_a.py::TestX::test_two[a::b - c]"},
		"tests/sub/test_b.py": {"tests/sub/test_b.py::test_three"},
	}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("files = %v, want %v", files, want)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "tests/test_broken.py") {
		t.Errorf("errors = %v", errs)
	}
}

func TestExcluded(t *testing.T) {
	for _, c := range []struct {
		file     string
		patterns []string
		want     bool
	}{
		{"bench/test_x.py", []string{"bench/*"}, true},
		{"bench/test_x.py", []string{"bench/"}, true},
		{"tests/test_slow.py", []string{"test_slow.py"}, true},
		{"tests/test_fast.py", []string{"test_slow.py", "bench/*"}, false},
	} {
		if got := excluded(c.file, c.patterns); got != c.want {
			t.Errorf("excluded(%q, %v) = %v", c.file, c.patterns, got)
		}
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[string][]string{
		"test_unique_slug":  {"unique", "slug"},
		"parseHTTPResponse": {"parse", "http", "response"},
		"TableOfContents":   {"table", "of", "content"},
		"test_dates":        {"date"},
		"class":             {"class"},
	} {
		if got := words(in); !reflect.DeepEqual(got, want) {
			t.Errorf("words(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestIsUtility(t *testing.T) {
	for f, want := range map[string]bool{
		"textkit/_text.py":      true,
		"pkg/utils/io.py":       true,
		"pkg/helpers.py":        true,
		"tests/helpers.py":      true,
		"pkg/__init__.py":       false,
		"textkit/slug.py":       false,
		"pkg/testing/assert.py": true,
	} {
		if got := isUtility(f); got != want {
			t.Errorf("isUtility(%q) = %v", f, got)
		}
	}
}

// TestClassifyRules follows the guideline's criteria on a made-up test
// file's imports and trace.
func TestClassifyRules(t *testing.T) {
	g := &trace.Graph{Version: trace.Version, Nodes: []trace.Node{
		{ID: "pkg/_util.py::norm::3", File: "pkg/_util.py", Qualname: "norm", Kind: "function"},
		{ID: "pkg/slug.py::Slugger.make::12", File: "pkg/slug.py", Qualname: "Slugger.make", Kind: "method"},
		{ID: "pkg/slug.py::Slugger::10", File: "pkg/slug.py", Qualname: "Slugger", Kind: "class"},
		{ID: "pkg/slug.py::slugify::30", File: "pkg/slug.py", Qualname: "slugify", Kind: "function"},
		{ID: "pkg/table.py::render::5", File: "pkg/table.py", Qualname: "render", Kind: "function"},
		{ID: "tests/helpers.py::block::1", File: "tests/helpers.py", Qualname: "block", Kind: "function"},
		{ID: "tests/test_slug.py::test_make::8", File: "tests/test_slug.py", Qualname: "test_make", Kind: "function",
			Callees: []string{"pkg/slug.py::Slugger.make::12", "pkg/slug.py::Slugger::10"}},
	}}
	if _, err := trace.Decode(strings.NewReader(mustJSON(t, g))); err != nil {
		t.Fatal(err)
	}
	imports := []trace.Import{
		// Module and name correspond, used in asserts: top.
		{Module: "pkg.slug", Name: "slugify", Kind: "repo-object", ID: "pkg/slug.py::slugify::30", File: "pkg/slug.py", Uses: 3, AssertUses: 3},
		// A class of the tested module: top, with the methods the tests call.
		{Module: "pkg", Name: "slug", Kind: "repo-module", File: "pkg/slug.py", Attrs: []trace.Attr{
			{Name: "Slugger", Kind: "repo-object", ID: "pkg/slug.py::Slugger::10", File: "pkg/slug.py", Uses: 1},
		}},
		// A utility used in an assertion only: one criterion, a utility, rare.
		{Module: "pkg._util", Name: "norm", Kind: "repo-object", ID: "pkg/_util.py::norm::3", File: "pkg/_util.py", Uses: 1, AssertUses: 1},
		// Used a lot, but by nothing else: a frequent non-utility with no
		// primary criterion is top only when frequent.
		{Module: "pkg.table", Name: "render", Kind: "repo-object", ID: "pkg/table.py::render::5", File: "pkg/table.py", Uses: 1},
		// Test helpers are never tested objects.
		{Module: "helpers", Name: "block", Kind: "repo-object", ID: "tests/helpers.py::block::1", File: "tests/helpers.py", Uses: 9, AssertUses: 9},
		// Imported, never run: cannot start a walk.
		{Module: "pkg.slug", Name: "unused", Kind: "repo-object", ID: "pkg/slug.py::unused::50", File: "pkg/slug.py", Uses: 1, AssertUses: 1},
		{Module: "pytest", Kind: "external-module"},
	}
	g2, _ := trace.Decode(strings.NewReader(mustJSON(t, g)))
	out := classifyRules("tests/test_slug.py", imports, g2)
	want := []string{"pkg/slug.py::Slugger.make::12", "pkg/slug.py::Slugger::10", "pkg/slug.py::slugify::30"}
	if !reflect.DeepEqual(out.Tops, want) {
		t.Errorf("tops = %v, want %v", out.Tops, want)
	}
	top := map[string]bool{}
	for _, d := range out.Decisions {
		top[d.ID] = d.Top
		if d.ID == "pkg/_util.py::norm::3" && (!d.Assert || !d.Utility || d.Frequent) {
			t.Errorf("norm judged %+v", d)
		}
	}
	if top["pkg/_util.py::norm::3"] || top["tests/helpers.py::block::1"] || top["pkg/slug.py::unused::50"] || top["pkg/table.py::render::5"] {
		t.Errorf("decisions: %+v", out.Decisions)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := jsonMarshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestChooseP2P(t *testing.T) {
	set := func(ids ...string) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	pool := map[string]map[string]bool{
		"t1.py": set("A", "B"),
		"t2.py": set("A"),
		"t3.py": set("A", "C"),
		"t4.py": set("B"),
	}
	// Every file reaches A or B: A, used by three files, is given up,
	// then t2 and t3 qualify.
	out, ok := chooseP2P([]string{"A", "B"}, pool, 2, 5, rand.New(rand.NewPCG(1, 2)))
	if !ok || !reflect.DeepEqual(out.Files, []string{"t2.py", "t3.py"}) || !reflect.DeepEqual(out.Tops, []string{"B"}) || !reflect.DeepEqual(out.Pruned, []string{"A"}) {
		t.Errorf("chooseP2P = %+v, %v", out, ok)
	}
	// Nothing qualifies until every top is given up: no choice.
	if out, ok := chooseP2P([]string{"A"}, map[string]map[string]bool{"t.py": set("A")}, 1, 5, rand.New(rand.NewPCG(1, 2))); ok {
		t.Errorf("chooseP2P found %+v with every file sharing the only top", out)
	}
	// At most `most` files, drawn by the seed: the same seed, the same draw.
	big := map[string]map[string]bool{}
	for _, f := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		big[f] = set("Z")
	}
	o1, _ := chooseP2P([]string{"A"}, big, 1, 3, rand.New(rand.NewPCG(7, 7)))
	o2, _ := chooseP2P([]string{"A"}, big, 1, 3, rand.New(rand.NewPCG(7, 7)))
	if len(o1.Files) != 3 || !reflect.DeepEqual(o1, o2) {
		t.Errorf("draws %v and %v", o1.Files, o2.Files)
	}
}

func TestItemRandIndependentOfOrder(t *testing.T) {
	a := itemRand(42, "budget", "o/r", "tests/test_a.py").IntN(1 << 30)
	_ = itemRand(42, "budget", "o/r", "tests/test_b.py").IntN(1 << 30)
	if b := itemRand(42, "budget", "o/r", "tests/test_a.py").IntN(1 << 30); a != b {
		t.Errorf("the same item drew %d and %d", a, b)
	}
	if c := itemRand(43, "budget", "o/r", "tests/test_a.py").IntN(1 << 30); a == c {
		t.Errorf("seeds 42 and 43 drew the same %d", a)
	}
}

func TestFilterInstance(t *testing.T) {
	ci := func(lines, f2p int, created string) *candidateInstance {
		in := instanceFixture()
		in.Lines = &lines
		in.FailToPass = make([]string, f2p)
		in.CreatedAt = created
		return &candidateInstance{in: in}
	}
	for _, c := range []struct {
		ci       *candidateInstance
		earliest string
		want     string
	}{
		{ci(150, 12, ""), "", ""},
		{ci(99, 12, ""), "", "the gold patch adds 99 lines (min_lines 100)"},
		{ci(150, 9, ""), "", "9 fail-to-pass tests (min_f2p_points 10)"},
		{ci(150, 12, "2022-04-30T10:00:00Z"), "2022-05-01", "the test file was first committed on 2022-04-30 (earliest_test_date 2022-05-01)"},
		{ci(150, 12, "2022-05-01T00:00:00+02:00"), "2022-05-01", ""},
		{ci(150, 12, ""), "2022-05-01", "the test file's first commit is not known (earliest_test_date is set)"},
	} {
		if got := filterInstance(c.ci, 100, 10, c.earliest); got != c.want {
			t.Errorf("filterInstance = %q, want %q", got, c.want)
		}
	}
}

func TestSample(t *testing.T) {
	ids := []string{"e", "a", "d", "b", "c"}
	s1 := sample(ids, 3, itemRand(1, "split", "lite"))
	s2 := sample(ids, 3, itemRand(1, "split", "lite"))
	if len(s1) != 3 || !reflect.DeepEqual(s1, s2) || !sortedStrings(s1) {
		t.Errorf("samples %v, %v", s1, s2)
	}
	if all := sample(ids, 10, itemRand(1, "x")); !reflect.DeepEqual(all, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("sample of more than there are = %v", all)
	}
}

func sortedStrings(xs []string) bool {
	for i := 1; i < len(xs); i++ {
		if xs[i-1] > xs[i] {
			return false
		}
	}
	return true
}

func TestStatements(t *testing.T) {
	doc := "Return a slug for *text* that is new.\n\nMore detail here."
	ifs := []mask.Interface{
		{ID: "pkg/slug.py::unique_slug::10", Path: "pkg/slug.py", Kind: "function", Qualname: "unique_slug", Described: true,
			Docstring: &doc, Code: "def unique_slug(text: str) -> str:\n    \"\"\"Return a slug.\"\"\"\n    # <your code>\n"},
		{ID: "pkg/table.py::render::3", Path: "pkg/table.py", Kind: "function", Qualname: "render", Described: true,
			Code: "def render(rows):\n    # <your code>\n"},
	}
	st := taskStatement("pkg", ifs, true)
	if st2 := taskStatement("pkg", ifs, false); !strings.Contains(st2, "`unique_slug` and `render`.") || strings.Contains(st2, "pkg/") {
		t.Errorf("level 2's task statement names paths or lacks the names:\n%s", st2)
	}
	for _, want := range []string{"Implement 2 interfaces of `pkg`: `unique_slug` and `render`, in `pkg/slug.py` and `pkg/table.py`.",
		"- `unique_slug`: Return a slug for *text* that is new."} {
		if !strings.Contains(st, want) {
			t.Errorf("task statement lacks %q:\n%s", want, st)
		}
	}
	d := statementData{Statement: st, Library: "pkg", Forbidden: []string{"https://github.com/o/pkg"}, Interfaces: ifs}
	l1, err := renderStatement(1, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Task\n\n" + st, "### Interface 1\n\nPath: `/testbed/pkg/slug.py`\n\n```python\ndef unique_slug(text: str) -> str:",
		"    # <your code>\n```\n\n### Interface 2", "  - https://github.com/o/pkg", "/testbed/"} {
		if !strings.Contains(l1, want) {
			t.Errorf("level 1 statement lacks %q:\n%s", want, l1)
		}
	}
	l2, err := renderStatement(2, d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(l2, "Path:") || !strings.Contains(l2, "`agent_code`") || !strings.Contains(l2, "Do not import `pkg`") || strings.Contains(l2, "Given code") {
		t.Errorf("level 2 statement:\n%s", l2)
	}
	d.Given = givenCode([]mask.Given{
		{Module: "pkg._text", Imports: []string{"import re"}, Code: []string{"def norm(s):\n    return re.sub('x', '', s)"}},
		{Module: "pkg.slug", Imports: []string{"import re", "import os"}, Code: []string{"SEP = '-'", "def slugify(s):\n    return norm(s)"}},
	})
	l2, err = renderStatement(2, d)
	if err != nil {
		t.Fatal(err)
	}
	if want := "## Given code\n\nThe tests also use these parts of `pkg`, which are not the feature. Put them in `agent_code` as they are; they call the interfaces above by name.\n\n```python\nimport re\nimport os\n\n\ndef norm(s):\n    return re.sub('x', '', s)\n\n\nSEP = '-'\n\n\ndef slugify(s):\n    return norm(s)\n```\n"; !strings.Contains(l2, want) {
		t.Errorf("level 2 statement with given code:\n%s\nwant a part:\n%s", l2, want)
	}
	d.Forbidden = nil
	if l1, _ := renderStatement(1, d); strings.Contains(l1, "off limits") {
		t.Errorf("no forbidden links, yet:\n%s", l1)
	}
}

// TestAgentCodePackage applies the level 2 package patch with git, as
// grading does, and reads the files back.
func TestAgentCodePackage(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	files := []mask.VendoredFile{
		{Path: "agent_code/__init__.py", Text: "from agent_code.slug import slugify\n"},
		{Path: "agent_code/slug.py", Text: "def slugify(s):\n    return s"},
		{Path: "agent_code/empty.py"},
	}
	for _, tc := range []struct {
		name  string
		files []mask.VendoredFile
		want  map[string]string
	}{
		{"vendored", files, map[string]string{"agent_code/__init__.py": files[0].Text, "agent_code/slug.py": files[1].Text, "agent_code/empty.py": ""}},
		{"empty", nil, map[string]string{"agent_code/__init__.py": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			patch := filepath.Join(t.TempDir(), "p.diff")
			if err := os.WriteFile(patch, []byte(agentCodePackage(tc.files)), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, argv := range [][]string{{"init", "-q"}, {"apply", patch}} {
				if out, err := exec.Command("git", append([]string{"-C", dir}, argv...)...).CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", argv, err, out)
				}
			}
			for name, want := range tc.want {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != want {
					t.Errorf("%s = %q (%v), want %q", name, got, err, want)
				}
			}
			if toml, err := os.ReadFile(filepath.Join(dir, "pyproject.toml")); err != nil || !strings.Contains(string(toml), `name = "agent_code"`) {
				t.Errorf("pyproject.toml: %q (%v)", toml, err)
			}
		})
	}
}

func TestFileKey(t *testing.T) {
	seen := map[string]string{}
	for _, s := range []string{"tests/test_a.py", "tests_test_a.py", "tests/test a.py", "..", ".hidden", strings.Repeat("x", 300)} {
		k := fileKey(s)
		if strings.ContainsAny(k, "/ ") || strings.HasPrefix(k, ".") || len(k) > 140 {
			t.Errorf("fileKey(%q) = %q", s, k)
		}
		if prev, dup := seen[k]; dup {
			t.Errorf("fileKey(%q) = fileKey(%q) = %q", s, prev, k)
		}
		seen[k] = s
	}
	if k1, k2 := fileKey("tests/test_a.py"), fileKey("tests/test_a.py"); k1 != k2 {
		t.Error("fileKey is not stable")
	}
}

func TestPatchStats(t *testing.T) {
	p := "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,4 @@\n a\n+b\n+c\n-d\ndiff --git a/y.py b/y.py\n--- a/y.py\n+++ b/y.py\n@@ -1 +1,2 @@\n+e\n"
	if l, f := patchStats(p); l != 3 || f != 2 {
		t.Errorf("patchStats = %d lines, %d files; want 3, 2", l, f)
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func instanceFixture() *bench.Instance {
	return &bench.Instance{InstanceID: "o__r.test_x.00000000.lv1"}
}

// TestTemplateDigestStable: the statements stage's digest of its templates
// does not depend on the order Go lists them in (a map's), or a stored
// stage would run again at random.
func TestTemplateDigestStable(t *testing.T) {
	if n := len(statementTemplates.Templates()); n < 2 {
		t.Fatalf("%d templates: the test needs two or more", n)
	}
	first := templateDigest()
	for range 50 {
		if d := templateDigest(); d != first {
			t.Fatalf("templateDigest gave %s, then %s", first, d)
		}
	}
}

// TestErrorNames: the names masking keeps on a retry, from an import
// error, a collection error, or the masker's own refusal.
func TestErrorNames(t *testing.T) {
	for text, want := range map[string]string{
		"ImportError: cannot import name 'slugify' from 'textkit'":           "slugify",
		"AttributeError: type object 'SortedList' has no attribute 'islice'": "islice",
		"NameError: name 'union' is not defined":                             "union",
		"masker: v.py:4: removing __lt__ leaves the functools.total_ordering class Version with" + " no ordering method, and its import would fail: keep '__lt__'": "__lt__",
	} {
		var got []string
		for _, m := range errorNames.FindAllStringSubmatch(text, -1) {
			for _, g := range m[1:] {
				if g != "" {
					got = append(got, g)
				}
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("names in %q = %v, want %s", text, got, want)
		}
	}
}

// TestFailureText: a verification drop says what the harness saw, not
// only "GraderTampering" (boltons' pass-to-pass test_tbutils replaced
// sys.excepthook, and four reasons named nothing).
func TestFailureText(t *testing.T) {
	for _, tc := range []struct {
		rep  evaluate.Report
		want string
	}{
		{evaluate.Report{FailureModes: []string{"GraderTampering"}, Tampering: []string{"pytest's machinery changed: sys.excepthook replaced", "x"}},
			"GraderTampering (pytest's machinery changed: sys.excepthook replaced)"},
		{evaluate.Report{FailureModes: []string{"AssertionError", "Timeout"}}, "AssertionError, Timeout"},
		{evaluate.Report{}, "no failure mode given"},
	} {
		if got := failureText(&tc.rep); got != tc.want {
			t.Errorf("failureText(%+v) = %q, want %q", tc.rep, got, tc.want)
		}
	}
}
