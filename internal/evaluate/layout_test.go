package evaluate_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
)

// git runs git in dir with a fixed identity and no user configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", "-c", "core.autocrlf=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// textkitRepo is a git repository of the complete example project.
func textkitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "examples", "textkit"))); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "complete")
	return dir
}

// diffOf is the diff a change to the repository makes, then undone.
func diffOf(t *testing.T, repo string, change func()) string {
	t.Helper()
	change()
	git(t, repo, "add", "-A")
	d := git(t, repo, "diff", "--cached", "HEAD")
	git(t, repo, "reset", "-q", "--hard", "HEAD")
	return d
}

// layoutDataset writes a dataset of the given manifest settings and
// instances into a fresh data/ and loads it.
func layoutDataset(t *testing.T, settings string, instances []map[string]any) *bench.Dataset {
	t.Helper()
	data := t.TempDir()
	dir := filepath.Join(data, "datasets", "layout", "v1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var ids, lines []string
	for _, in := range instances {
		ids = append(ids, `"`+in["instance_id"].(string)+`"`)
		b, _ := json.Marshal(in)
		lines = append(lines, string(b))
	}
	manifest := `name = "layout"
version = "v1"
release_date = 2026-11-23
` + settings + `

[[repositories]]
name = "featbench/textkit"

[[splits]]
name = "full"
instances = [` + strings.Join(ids, ", ") + `]
`
	if err := os.WriteFile(filepath.Join(dir, bench.ManifestFile), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bench.InstancesFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := bench.LoadDatasets(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	return d.Dataset("layout/v1")
}

// otherTestFiles are the example's test files but those given.
func otherTestFiles(t *testing.T, but ...string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(root, "examples", "textkit", "tests", "test_*.py"))
	var out []string
	for _, f := range m {
		rel := "tests/" + filepath.Base(f)
		if !slices.Contains(but, rel) {
			out = append(out, rel)
		}
	}
	return out
}

// TestMaskedLayout evaluates FeatureBench's published layout on an image
// of that layout built from the example: the environment holds the
// complete project, the instance's patch is the masking diff (here: the
// fuzzy-matching module removed), its test patch deletes the fail-to-pass
// test file, and tests are named by file. The gold solution (the mask
// undone) resolves it; an empty prediction does not.
func TestMaskedLayout(t *testing.T) {
	repo := textkitRepo(t)
	mask := diffOf(t, repo, func() { os.Remove(filepath.Join(repo, "textkit", "fuzzy.py")) })
	testPatch := diffOf(t, repo, func() { os.Remove(filepath.Join(repo, "tests", "test_fuzzy.py")) })
	ds := layoutDataset(t, `layout = "masked"`, []map[string]any{{
		"instance_id": "textkit-fuzzy-masked.lv1", "repo": "featbench/textkit", "level": 1,
		"problem_statement": "Add fuzzy matching.", "patch": mask, "test_patch": testPatch,
		// test_pipeline.py and test_package.py use the module too: not pass-to-pass files.
		"FAIL_TO_PASS": []string{"tests/test_fuzzy.py"}, "PASS_TO_PASS": otherTestFiles(t, "tests/test_fuzzy.py", "tests/test_pipeline.py", "tests/test_package.py"),
	}})
	eng, img := envImage(t)
	id := "textkit-fuzzy-masked.lv1"
	_, reps, _ := run(t, eng, img, ds, []string{id}, true, nil, testLimits)
	if r := reps[id]; r == nil || !r.Resolved || !r.FV || !r.RT {
		t.Errorf("masked layout, gold: %+v, want resolved", r)
	}
	_, reps, _ = run(t, eng, img, ds, []string{id}, false, map[string]evaluate.Prediction{id: {}}, testLimits)
	if r := reps[id]; r == nil || r.Resolved || r.FV || !r.RT {
		t.Errorf("masked layout, empty: %+v, want the fail-to-pass file failing and the others passing", r)
	}
	// A prediction that rewrites the fail-to-pass test file to pass gains
	// nothing: the file is put back before grading.
	// The masked base has neither fuzzy.py nor the test file.
	cheat := "diff --git a/tests/test_fuzzy.py b/tests/test_fuzzy.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test_fuzzy.py\n@@ -0,0 +1,2 @@\n+def test_levenshtein():\n+    pass\n"
	_, reps, _ = run(t, eng, img, ds, []string{id}, false, map[string]evaluate.Prediction{id: {Patch: []byte(cheat)}}, testLimits)
	if r := reps[id]; r == nil || !r.PatchApplied || r.Resolved {
		t.Errorf("masked layout, a prediction writing its own test file: %+v, want applied and unresolved", r)
	}
}

// TestLevel2AgentCode evaluates FeatureBench's from-scratch setting: the
// prediction builds the package agent_code in an empty folder, it is
// installed, the repository is restored, and the level 2 test patch makes
// the tests import agent_code.
func TestLevel2AgentCode(t *testing.T) {
	repo := textkitRepo(t)
	roman, err := os.ReadFile(filepath.Join(repo, "textkit", "roman.py"))
	if err != nil {
		t.Fatal(err)
	}
	testPatch := diffOf(t, repo, func() {
		p := filepath.Join(repo, "tests", "test_roman.py")
		src, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(strings.Replace(string(src), "from textkit import roman", "import agent_code as roman", 1)), 0o644)
	})
	if !strings.Contains(testPatch, "import agent_code as roman") {
		t.Fatalf("the test patch does not import agent_code:\n%s", testPatch)
	}
	// The agent's folder starts empty: the gold solution adds every file.
	scratch := t.TempDir()
	git(t, scratch, "init", "-q")
	git(t, scratch, "commit", "-q", "--allow-empty", "-m", "start")
	gold := diffOf(t, scratch, func() {
		os.MkdirAll(filepath.Join(scratch, "agent_code"), 0o755)
		os.WriteFile(filepath.Join(scratch, "agent_code", "__init__.py"), roman, 0o644)
		os.WriteFile(filepath.Join(scratch, "setup.py"), []byte("from setuptools import setup, find_packages\n\nsetup(name=\"agent_code\", version=\"0.1\", packages=find_packages())\n"), 0o644)
	})
	var f2p []string
	for _, fn := range []string{"test_to_roman", "test_from_roman"} {
		f2p = append(f2p, "tests/test_roman.py::"+fn)
	}
	ds := layoutDataset(t, `level2 = "agent_code"`, []map[string]any{{
		"instance_id": "textkit-roman-scratch.lv2", "repo": "featbench/textkit", "level": 2,
		"problem_statement": "Build Roman numerals as agent_code.", "patch": gold, "test_patch": testPatch,
		"FAIL_TO_PASS": f2p, "PASS_TO_PASS": []string{"tests/test_slug.py::test_slugify"},
	}})
	eng, img := envImage(t)
	id := "textkit-roman-scratch.lv2"
	_, reps, _ := run(t, eng, img, ds, []string{id}, true, nil, testLimits)
	r := reps[id]
	if r == nil || !r.Resolved || r.Flow != "agent_code" || r.InstallOK == nil || !*r.InstallOK {
		t.Errorf("agent_code, gold: %+v, want resolved with the package installed", r)
	}
	// Half the package: to_roman only.
	half := strings.Replace(gold, "+def from_roman(", "+def _from_roman(", 1)
	_, reps, _ = run(t, eng, img, ds, []string{id}, false, map[string]evaluate.Prediction{id: {Patch: []byte(half)}}, testLimits)
	if r := reps[id]; r == nil || r.Resolved || r.PassedRate != 0.5 {
		t.Errorf("agent_code, half the package: %+v, want one of two fail-to-pass tests passing", r)
	}
	_, reps, _ = run(t, eng, img, ds, []string{id}, false, map[string]evaluate.Prediction{id: {}}, testLimits)
	if r := reps[id]; r == nil || r.Resolved || r.PatchApplied {
		t.Errorf("agent_code, empty: %+v, want nothing applied and unresolved", r)
	}
}
