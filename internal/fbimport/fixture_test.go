package fbimport_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
)

var update = flag.Bool("update", false, "write examples/featurebench/textkit.jsonl from example/v4")

// Paths of the repository, from this package's folder.
var (
	root     = filepath.Join("..", "..")
	fixture  = filepath.Join(root, "examples", "featurebench", "textkit.jsonl")
	textkit  = filepath.Join(root, "examples", "textkit")
	exampleV = filepath.Join(root, "data", "datasets", "example", "v4")
)

// FixtureImage is the name the fixture's instances give their image, as
// FeatureBench names its images on Docker Hub (imagestest builds it in
// FeatureBench's layout and pushes it to the local registry).
const FixtureImage = "featbench/featurebench-specs_textkit-instance_v4"

// fbInstance is one instance in FeatureBench's published fields, in the
// order its dataset gives them.
type fbInstance struct {
	InstanceID       string   `json:"instance_id"`
	Patch            string   `json:"patch"`
	TestPatch        string   `json:"test_patch"`
	FailToPass       []string `json:"FAIL_TO_PASS"`
	PassToPass       []string `json:"PASS_TO_PASS"`
	ImageName        string   `json:"image_name"`
	Repo             string   `json:"repo"`
	BaseCommit       string   `json:"base_commit"`
	ProblemStatement string   `json:"problem_statement"`
	RepoSettings     string   `json:"repo_settings"`
}

// git runs git in dir and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "core.quotepath=false", "-c", "diff.noprefix=false", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// files are the distinct test files of test ids.
func files(ids []string) []string {
	var out []string
	for _, id := range ids {
		f, _, _ := strings.Cut(id, "::")
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// textkitFixture writes example/v4's level 1 instances as FeatureBench
// publishes its own: the image holds the complete project, patch is the
// diff that masks the feature (the gold patch reversed, as git makes it on
// the complete project), test_patch the diff that deletes the fail-to-pass
// test file (reverse-applied to grade), and the test lists name files.
func textkitFixture(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(exampleV, bench.InstancesFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(textkit)); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "complete")
	settings, _ := json.Marshal(map[string]any{
		"repository": "featbench/textkit", "install": "pip install -e .",
		"test_cmd": "pytest -rA -p no:cacheprovider --color=no", "timeout_run": 600, "timeout_one": 10,
	})
	// The diff that reverse-applying p to the complete project makes.
	reversed := func(p string) string {
		f := filepath.Join(t.TempDir(), "p.diff")
		os.WriteFile(f, []byte(p), 0o644)
		git(t, dir, "apply", "-R", f)
		git(t, dir, "add", "-A")
		d := git(t, dir, "diff", "--cached", "--no-color")
		git(t, dir, "reset", "-q", "--hard")
		return d
	}
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var in bench.Instance
		if err := json.Unmarshal(line, &in); err != nil {
			t.Fatal(err)
		}
		if in.Level != 1 {
			continue // FeatureBench publishes no gold patch of level 2
		}
		fb := fbInstance{
			InstanceID: in.InstanceID, Patch: reversed(in.Patch), TestPatch: reversed(in.TestPatch),
			FailToPass: files(in.FailToPass), PassToPass: files(in.PassToPass),
			ImageName: FixtureImage, Repo: in.Repo, BaseCommit: in.BaseCommit, ProblemStatement: in.ProblemStatement,
			RepoSettings: string(settings),
		}
		enc := json.NewEncoder(&out) // a line each
		enc.SetEscapeHTML(false)
		if err := enc.Encode(fb); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// TestTextkitFixture: examples/featurebench/textkit.jsonl is example/v4's
// level 1 instances in FeatureBench's format, made by textkitFixture
// (go test ./internal/fbimport -run TestTextkitFixture -update writes it).
func TestTextkitFixture(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	want := textkitFixture(t)
	if *update {
		if err := os.MkdirAll(filepath.Dir(fixture), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fixture, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not example/v4's level 1 instances in FeatureBench's format: run this test with -update", fixture)
	}
	// Each masks a feature: it deletes code the complete project has,
	// and its test patch deletes exactly its fail-to-pass file.
	for _, line := range bytes.Split(bytes.TrimSpace(got), []byte("\n")) {
		var fb fbInstance
		if err := json.Unmarshal(line, &fb); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(fb.Patch, "\n-def ") && !strings.Contains(fb.Patch, "\n-    def ") && !strings.Contains(fb.Patch, "\n-class ") {
			t.Errorf("%s: the patch removes no definition:\n%s", fb.InstanceID, fb.Patch)
		}
		if len(fb.FailToPass) != 1 || !strings.HasPrefix(fb.TestPatch, "diff --git a/"+fb.FailToPass[0]+" b/"+fb.FailToPass[0]+"\ndeleted file mode") {
			t.Errorf("%s: test patch %.80q for %v", fb.InstanceID, fb.TestPatch, fb.FailToPass)
		}
	}
}
