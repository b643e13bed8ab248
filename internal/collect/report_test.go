package collect

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
)

func TestSummary(t *testing.T) {
	long := strings.Repeat("é", maxReason) // two bytes each
	for _, c := range []struct {
		in, want string
		whole    bool
	}{
		{"no pass-to-pass file qualifies", "no pass-to-pass file qualifies", true},
		{"trailing newline\n", "trailing newline", true},
		{"exit 1:\n\nE   ImportError: no module x\n=== 1 error ===", "exit 1:", false},
		{"\n  \r\n first words\tand a tab\n", "first words and a tab", true},
		{"colour \x1b[31mred\x1b[0m and \u202eoverride", "colour [31mred [0m and override", true},
		{"one\u2028two", "one", false},
		{"", "no reason given", true},
		{" \n\t", "no reason given", true},
		{long, strings.Repeat("é", maxReason/2) + "…", false},
	} {
		got, whole := summary(c.in)
		if got != c.want || whole != c.whole {
			t.Errorf("summary(%q) = %q, %v; want %q, %v", c.in, got, whole, c.want, c.whole)
		}
		if strings.ContainsAny(got, "\n\r\x1b") || len(got) > maxReason+len("…") {
			t.Errorf("summary(%q) = %q is not one short line", c.in, got)
		}
	}
}

// TestDropReasonOneLine: whatever text a stage gives, the drop's reason
// is one line; the whole text goes to the stage's log in the work folder,
// which the reason names, relative to the work folder.
func TestDropReasonOneLine(t *testing.T) {
	work := t.TempDir()
	r := &repoRun{rc: config.Repo{Repository: "o/r"}, w: work_(work), o: Options{Log: &bytes.Buffer{}}}
	c := &candidate{File: "tests/test_x.py"}
	out := "exit 2: ============================= ERRORS =============================\n" +
		"_____________ ERROR collecting tests/test_x.py _____________\n" +
		"E   ModuleNotFoundError: No module named 'yaml'\n" +
		"see " + filepath.Join(work, "trace.log") + "\n"
	r.drop(c, StageTrace, 0, "the traced run failed: "+out)
	r.drop(c, StageVerify, 2, "flaky: the gold patch made every test pass in 2 of 3 runs")
	if !c.dead || !c.lost[2] || len(c.Drops) != 2 {
		t.Fatalf("candidate %+v", c)
	}
	got := c.Drops[0].Reason
	if want := "the traced run failed: exit 2: ============================= ERRORS ============================= (whole text: trace.log in the work folder)"; got != want {
		t.Errorf("reason %q\nwant %q", got, want)
	}
	log, err := os.ReadFile(filepath.Join(work, "trace.log"))
	if err != nil || !strings.Contains(string(log), "=== tests/test_x.py dropped at stage trace:\n") ||
		!strings.Contains(string(log), "E   ModuleNotFoundError: No module named 'yaml'\nsee trace.log\n") {
		t.Errorf("trace.log (%v):\n%s", err, log)
	}
	if got := c.Drops[1].Reason; got != "flaky: the gold patch made every test pass in 2 of 3 runs" || c.Drops[1].Level != 2 {
		t.Errorf("a one-line reason became %q", got)
	}
	if _, err := os.Stat(filepath.Join(work, "verify.log")); !os.IsNotExist(err) {
		t.Errorf("a one-line reason was logged (%v)", err)
	}
}

func work_(dir string) work { return work{dir: dir} }

// TestFailedRepositoriesReported: a repository that fails does not stop
// the others, and the report holds every one with the stage it failed at
// and a one-line reason; the error names each.
func TestFailedRepositoriesReported(t *testing.T) {
	root, cfg := project(t, `
[[collect.repo]]
repository = "featbench/gone"
source = "gone"
install = ["pip install ."]
import_name = "gone"
`)
	cfg.Collect.Repos[0].Source = "also-gone"
	var log bytes.Buffer
	rep, err := Run(context.Background(), Options{Root: root, Config: cfg, Dataset: "mini/v1", Log: &log})
	if err == nil || !strings.Contains(err.Error(), "featbench/minilib: stage env") || !strings.Contains(err.Error(), "featbench/gone: stage env") ||
		!strings.Contains(err.Error(), "nothing to write") {
		t.Errorf("error: %v", err)
	}
	if rep == nil || len(rep.Repos) != 2 {
		t.Fatalf("report %+v", rep)
	}
	for i, name := range []string{"featbench/minilib", "featbench/gone"} {
		r := rep.Repos[i]
		if r.Repository != name || r.Failure == nil || r.Failure.Stage != StageEnv || !strings.Contains(r.Failure.Reason, "is not a folder") {
			t.Errorf("repository %d: %+v, failure %+v", i, r, r.Failure)
		}
	}
	var table bytes.Buffer
	WriteTable(&table, rep)
	for _, want := range []string{"featbench/gone: failed at stage env: source \"gone\" is not a folder", "  failed\n"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "data")); !os.IsNotExist(err) {
		t.Errorf("a run that kept nothing made %s (%v)", filepath.Join(root, "data"), err)
	}
}

// TestReportSeveralMethods: one repository collected by three methods
// keeps three reports (collection.json lost the test-driven one to the
// last method's), and the table prints each method's funnel, drops and
// stage times once.
func TestReportSeveralMethods(t *testing.T) {
	rep := &Report{}
	td := &RepoReport{Repository: "acme/lib", TestFiles: 3, Verified: 2}
	rel := &RepoReport{Repository: "acme/lib", Method: config.MethodRelease, Funnel: []bench.CollectionStep{{Step: "releases", Count: 4}}, Drops: []Drop{{Stage: "filter", Reason: "the code patch adds definitions", Pull: 2}}}
	nc := &RepoReport{Repository: "acme/lib", Method: config.MethodNewComponents, Funnel: []bench.CollectionStep{{Step: "pull requests", Count: 5}}}
	rep.Repos = []*RepoReport{td, rel, nc}
	rep.addStage(stagesKey("acme/lib", ""), "env", time.Second, false)
	rep.addStage(stagesKey("acme/lib", config.MethodRelease), "history", time.Second, false)
	rep.addStage(stagesKey("acme/lib", config.MethodNewComponents), "history", 2*time.Second, false)
	for _, r := range []*RepoReport{td, rel, nc} {
		rep.Repos = replaceRepo(rep.Repos, r)
	}
	if len(rep.Repos) != 3 || rep.Repos[0] != td || rep.Repos[1] != rel || rep.Repos[2] != nc {
		t.Fatalf("reports after replaceRepo: %+v", rep.Repos)
	}
	var b strings.Builder
	WriteTable(&b, rep)
	out := b.String()
	for _, want := range []string{"acme/lib (method release): releases 4", "acme/lib (method new-components): pull requests 5",
		"acme/lib (method release): 1 dropped", "acme/lib: env 1.0 s", "acme/lib (method release): history 1.0 s", "acme/lib (method new-components): history 2.0 s"} {
		if n := strings.Count(out, want); n != 1 {
			t.Errorf("%q printed %d times in\n%s", want, n, out)
		}
	}
}
