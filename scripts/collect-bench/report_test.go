// Package collectbench tests the helpers of scripts/collect-bench.sh.
package collectbench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// table is what collect prints at the end of a collection of one
// repository (its funnel), as report.py reads it.
const table = `
                          repository  test files  passing  candidates  traced  classified  with P2P  masked  verified  kept
  grantjenks/python-sortedcontainers           9        9           9       9           9         9      12         7     5

grantjenks/python-sortedcontainers: env 0.0 s, discover 0.8 s, run 9.1 s
`

// report runs report.py on a collection that took 108 s and returns what
// it prints.
func report(t *testing.T, code string, collection *string, stdout, stderr string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("python3: %v", err)
	}
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cpath := filepath.Join(dir, "collection.json") // absent unless given
	if collection != nil {
		write("collection.json", *collection)
	}
	cmd := exec.Command(py, "report.py", "grantjenks/python-sortedcontainers", "1000.5", "1108.5", code, cpath,
		write("collect.txt", stdout), write("collect.log", stderr))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("report.py: %v\n%s", err, out)
	}
	return string(out)
}

// TestReportWritten: a written dataset's instances, an hour's worth.
func TestReportWritten(t *testing.T) {
	c := `{"dataset": "bench/x", "instances": 5}`
	out := report(t, "0", &c, table, "")
	if want := "  5 instances in 108 s: 167 instances an hour\n"; out != want {
		t.Errorf("report = %q, want %q", out, want)
	}
}

// TestReportWriteFailed: a collection whose funnel kept 5 but whose
// dataset was not written (no release date) was reported as "0 instances
// in 108 s: 0 instances an hour". It says what failed and what was kept.
func TestReportWriteFailed(t *testing.T) {
	out := report(t, "1", nil, table, "collect: something\ncollect: no release date: set release_date in [collect]\n")
	for _, want := range []string{
		"no dataset written: collect exited 1 after 108 s: collect: no release date: set release_date in [collect]",
		"the funnel kept 5 instances (7 verified) in 108 s: 167 an hour",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0 instances") {
		t.Errorf("report counts no instances:\n%s", out)
	}
}

// TestReportNoFunnel: a collection that failed before printing its table.
func TestReportNoFunnel(t *testing.T) {
	out := report(t, "1", nil, "", "collect: cannot reach the Docker engine\n")
	for _, want := range []string{"collect exited 1 after 108 s: collect: cannot reach the Docker engine", "no row in collect's table"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
