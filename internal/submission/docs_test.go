package submission_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
)

// TestDocsNameWhatTheGateNeeds: CONTRIBUTING's submission to copy and the
// pull-request template name every file the gate (validate) needs, and the
// folder CONTRIBUTING says to copy holds them all; a submitter following
// either must not be refused for a file they were not told about.
func TestDocsNameWhatTheGateNeeds(t *testing.T) {
	root := filepath.Join("..", "..")
	read := func(p string) string {
		raw, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	contributing := read("CONTRIBUTING.md")
	i := strings.Index(contributing, "## A complete submission to copy\n")
	if i < 0 {
		t.Fatal(`CONTRIBUTING.md has no "A complete submission to copy" section`)
	}
	section := contributing[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	template := read(".github/pull_request_template.md")
	needed := []string{bench.MetadataFile, bench.ResultsFile, bench.PredictionsFile, bench.LogsFile}
	for _, f := range needed {
		if !strings.Contains(section, "`"+f+"`") {
			t.Errorf("CONTRIBUTING's submission to copy does not name %s", f)
		}
		if !strings.Contains(template, "`"+f+"`") {
			t.Errorf("the pull-request template does not name %s", f)
		}
	}
	m := regexp.MustCompile("Copy the layout of\\s+`([^`]+)`").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("CONTRIBUTING's submission to copy names no folder to copy")
	}
	for _, f := range needed {
		if _, err := os.Stat(filepath.Join(root, m[1], f)); err != nil {
			t.Errorf("the folder to copy, %s, lacks %s", m[1], f)
		}
	}
}
