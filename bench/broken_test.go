package bench_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
)

// A mutation changes one thing in a copy of the good tree.
type mutation func(t *testing.T, root string)

func abspath(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

func readText(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeText(t testing.TB, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replace replaces the first occurrence of old in the file; old must be there.
func replace(rel, old, new string) mutation {
	return func(t *testing.T, root string) {
		t.Helper()
		p := abspath(root, rel)
		s := readText(t, p)
		if !strings.Contains(s, old) {
			t.Fatalf("mutation: %q not found in %s", old, rel)
		}
		writeText(t, p, strings.Replace(s, old, new, 1))
	}
}

// replaceLine replaces old in line n (from 1) of the file.
func replaceLine(rel string, n int, old, new string) mutation {
	return func(t *testing.T, root string) {
		t.Helper()
		p := abspath(root, rel)
		lines := strings.Split(readText(t, p), "\n")
		if n < 1 || n > len(lines) || !strings.Contains(lines[n-1], old) {
			t.Fatalf("mutation: %q not found on line %d of %s", old, n, rel)
		}
		lines[n-1] = strings.Replace(lines[n-1], old, new, 1)
		writeText(t, p, strings.Join(lines, "\n"))
	}
}

// appendText adds text, then a newline, at the end of the file.
func appendText(rel, text string) mutation {
	return func(t *testing.T, root string) {
		t.Helper()
		p := abspath(root, rel)
		s := readText(t, p)
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		writeText(t, p, s+text+"\n")
	}
}

func writeFile(rel, content string) mutation {
	return func(t *testing.T, root string) { t.Helper(); writeText(t, abspath(root, rel), content) }
}

func removeFile(rel string) mutation {
	return func(t *testing.T, root string) {
		t.Helper()
		if err := os.Remove(abspath(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
}

func rename(from, to string) mutation {
	return func(t *testing.T, root string) {
		t.Helper()
		dst := abspath(root, to)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(abspath(root, from), dst); err != nil {
			t.Fatal(err)
		}
	}
}

func chain(ms ...mutation) mutation {
	return func(t *testing.T, root string) {
		t.Helper()
		for _, m := range ms {
			m(t, root)
		}
	}
}

// copyGood copies the good tree into a fresh temporary folder.
func copyGood(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(root, os.DirFS(goodRoot)); err != nil {
		t.Fatal(err)
	}
	return root
}

// want is a problem expected from Load: File ends with file (forward
// slashes), Line and Field are equal, Msg contains msg. Line -1 and Field
// "*" match anything; they are used only where the loader leaves the line
// or field out today (see the cases).
type want struct {
	file  string
	line  int
	field string
	msg   string
}

func (w want) matches(p bench.Problem) bool {
	return strings.HasSuffix(filepath.ToSlash(p.File), w.file) && (w.line == -1 || p.Line == w.line) &&
		(w.field == "*" || p.Field == w.field) &&
		strings.Contains(p.Msg, w.msg)
}

// checkMutation loads a copy of the good data with mutate applied and fails
// the test unless one of its problems matches w, listing them all.
func checkMutation(t *testing.T, mutate mutation, w want) {
	t.Helper()
	root := copyGood(t)
	mutate(t, root)
	ps := loadProblems(t, root)
	for _, p := range ps {
		if w.matches(p) {
			return
		}
	}
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
		b.WriteString(" [line " + strconv.Itoa(p.Line) + " field " + p.Field + "]")
	}
	t.Errorf("no problem with file *%s line %d field %q msg ~%q; got:%s", w.file, w.line, w.field, w.msg, b.String())
}

// loadProblems loads root and returns its problems, failing the test when
// Load succeeds, returns data, or fails with anything but Problems.
func loadProblems(t *testing.T, root string) bench.Problems {
	t.Helper()
	data, err := bench.Load(context.Background(), root)
	if err == nil {
		t.Fatal("Load succeeded on broken data")
	}
	if data != nil {
		t.Errorf("Load returned data along with the error %v", err)
	}
	var ps bench.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Load error is %T (%v), want bench.Problems", err, err)
	}
	if len(ps) == 0 {
		t.Fatal("Load returned empty Problems")
	}
	return ps
}

func TestLoadBroken(t *testing.T) {
	const (
		// alpha-3 is on line 4 of instances.jsonl: line 3 is blank.
		a3 = 4
		// Rows appended to results.jsonl of the full submission land on line 3.
		r3 = 3
	)
	cases := []struct {
		name   string
		mutate mutation
		want   want
	}{
		// instances.jsonl
		{"malformed JSON line at the end",
			appendText(a1Instances, `{"instance_id": "alpha-4", "repo": `),
			want{a1Instances, 5, "repo", "malformed JSON: the line ends inside a value"}},
		{"malformed JSON line after a blank line",
			replaceLine(a1Instances, a3, `"level": 2,`, `"level": 2,,`),
			want{a1Instances, a3, "", "malformed JSON"}},
		{"wrong type for level",
			replaceLine(a1Instances, a3, `"level": 2`, `"level": "two"`),
			want{a1Instances, a3, "level", "is a JSON string, want an integer"}},
		{"wrong type inside a FAIL_TO_PASS string",
			replaceLine(a1Instances, 2, `"[\"tests/test_c.py::test_new\"]"`, `"[1]"`),
			want{a1Instances, 2, "FAIL_TO_PASS[0]", "is a JSON number, want a string"}},
		{"wrong type for PASS_TO_PASS",
			replaceLine(a1Instances, 1, `"PASS_TO_PASS": ["tests/test_b.py::test_keep"]`, `"PASS_TO_PASS": 7`),
			want{a1Instances, 1, "PASS_TO_PASS", "is a JSON number"}},
		{"duplicate instance id names the first line",
			appendText(a1Instances, `{"instance_id": "alpha-1", "repo": "acme/widgets", "level": 1, "problem_statement": "Again.", "FAIL_TO_PASS": ["t"]}`),
			want{a1Instances, 5, "instance_id", `duplicate instance id "alpha-1" (first on line 1)`}},
		{"duplicate of an instance after the blank line",
			appendText(a1Instances, `{"instance_id": "alpha-3", "repo": "acme/widgets", "level": 1, "problem_statement": "Again.", "FAIL_TO_PASS": ["t"]}`),
			want{a1Instances, 5, "instance_id", "first on line 4"}},
		{"instance id with a space",
			replaceLine(a1Instances, a3, `"alpha-3"`, `"alpha 3"`),
			want{a1Instances, a3, "instance_id", "may hold only"}},
		// SWE-bench writes test lists as a JSON string holding a list.
		{"FAIL_TO_PASS string that is not JSON",
			replaceLine(a1Instances, 2, `"[\"tests/test_c.py::test_new\"]"`, `"tests/test_c.py::test_new"`),
			want{a1Instances, 2, "FAIL_TO_PASS", "not a JSON list"}},
		{"missing instance id",
			replaceLine(a1Instances, a3, `"instance_id": "alpha-3", `, ``),
			want{a1Instances, a3, "instance_id", "is empty"}},
		{"repo not in the manifest",
			replaceLine(a1Instances, 1, `"repo": "acme/widgets"`, `"repo": "acme/gizmos"`),
			want{a1Instances, 1, "repo", `repository "acme/gizmos" is not listed`}},
		{"level 3",
			replaceLine(a1Instances, 1, `"level": 1`, `"level": 3`),
			want{a1Instances, 1, "level", "is 3"}},
		{"a mask patch at level 1",
			replaceLine(a1Instances, 1, `"level": 1`, `"level": 1, "mask_patch": "diff --git a/x b/x"`),
			want{a1Instances, 1, "mask_patch", "is for level 2 only"}},
		{"an unknown collection method",
			replaceLine(a1Instances, 1, `"level": 1`, `"level": 1, "method": "scraped"`),
			want{a1Instances, 1, "method", `is "scraped"; want one of test-driven, release, new-components`}},
		{"a pull request number on a test-driven instance",
			replaceLine(a1Instances, 1, `"level": 1`, `"level": 1, "pull_number": 12`),
			want{a1Instances, 1, "pull_number", "is for the history-based methods"}},
		{"a negative pull request number",
			replaceLine(a1Instances, 1, `"level": 1`, `"level": 1, "method": "release", "pull_number": -3`),
			want{a1Instances, 1, "pull_number", "is -3"}},
		{"a release with a line break",
			replaceLine(a1Instances, 1, `"level": 1`, `"level": 1, "method": "release", "release": "v1\nv2"`),
			want{a1Instances, 1, "release", ""}},
		{"components on a release instance",
			replaceLine(a1Instances, 1, `"level": 1`, `"level": 1, "method": "release", "components": [{"file": "a.py", "name": "f", "kind": "function", "signature": "def f()"}]`),
			want{a1Instances, 1, "components", "are for the new-components method"}},
		{"a component of an unknown kind",
			replaceLine(a1Instances, 1, `"level": 1`, `"level": 1, "method": "new-components", "components": [{"file": "a.py", "name": "f", "kind": "lambda", "signature": "f = lambda: 1"}]`),
			want{a1Instances, 1, "components[0].kind", `is "lambda"`}},
		{"a component without a signature",
			replaceLine(a1Instances, 1, `"level": 1`, `"level": 1, "method": "new-components", "components": [{"file": "a.py", "name": "f", "kind": "function", "signature": ""}]`),
			want{a1Instances, 1, "components[0].signature", "is required"}},
		{"no fail-to-pass test",
			replaceLine(a1Instances, a3, `"FAIL_TO_PASS": ["tests/test_d.py::test_x"]`, `"FAIL_TO_PASS": []`),
			want{a1Instances, a3, "FAIL_TO_PASS", "at least one fail-to-pass test"}},
		{"no problem statement",
			replaceLine(a1Instances, 2, `"problem_statement": "Build gadgets from scratch.", `, ``),
			want{a1Instances, 2, "problem_statement", "is required"}},
		{"bad created_at",
			replaceLine(a1Instances, a3, `2026-01-01T12:00:00Z`, `yesterday`),
			want{a1Instances, a3, "created_at", "is not a date"}},

		// dataset.toml
		{"unknown instance id in a split",
			replace(a1Manifest, `instances = ["alpha-2", "alpha-1"]`, `instances = ["alpha-2", "alpha-9"]`),
			want{a1Manifest, 24, "splits[1].instances", `unknown instance id "alpha-9" in split "lite"`}},
		{"split size mismatch",
			replace(a1Manifest, "size = 2", "size = 3"),
			want{a1Manifest, 23, "splits[1].size", "is 3 but the split lists 2 instances"}},
		{"instance listed twice in a split",
			replace(a1Manifest, `instances = ["alpha-2", "alpha-1"]`, `instances = ["alpha-2", "alpha-2"]`),
			want{a1Manifest, 24, "splits[1].instances", `instance "alpha-2" is listed twice in split "lite"`}},
		{"split defined twice",
			replace(a1Manifest, `name = "lite"`, `name = "full"`),
			want{a1Manifest, 21, "splits[1].name", `split "full" is defined twice`}},
		{"bad split name",
			replace(a1Manifest, `name = "lite"`, `name = "../lite"`),
			want{a1Manifest, 21, "splits[1].name", "path separator"}},
		{"split without ids next to instances.jsonl",
			replace(a1Manifest, "size = 2\ninstances = [\"alpha-2\", \"alpha-1\"]\n", "size = 2\n"),
			want{a1Manifest, 20, "splits[1].instances", "must list its instance ids"}},
		{"dataset without splits",
			replace(a2Manifest, "[[splits]]\nname = \"full\"\ninstances = [\"alpha-v2-1\"]\n", ""),
			want{a2Manifest, 0, "splits", "at least one split"}},
		{"dataset folder name differs from the manifest name",
			replace(a1Manifest, `name = "alpha"`, `name = "alfa"`),
			want{a1Manifest, 2, "name", `is "alfa" but the folder is data/datasets/alpha/`}},
		{"version folder differs from the manifest version",
			replace(a1Manifest, `version = "v1"`, `version = "v1.1"`),
			want{a1Manifest, 4, "version", `is "v1.1" but the folder is v1/`}},
		{"missing release date",
			replace(a1Manifest, "release_date = 2026-01-01\n", ""),
			want{a1Manifest, 0, "release_date", "is required"}},
		{"unknown key in dataset.toml",
			replace(a1Manifest, `license = "MIT"`, `licence = "MIT"`),
			want{a1Manifest, 13, "repositories[0].licence", `unknown key "licence"; did you mean "repositories[0].license"?`}},
		{"TOML syntax error in dataset.toml",
			replace(a1Manifest, `title = "Alpha"`, `title = "Alpha`),
			want{a1Manifest, 3, "title", "newlines"}},
		{"javascript: paper_url",
			replace(a1Manifest, `paper_url = "https://example.org/alpha-paper"`, `paper_url = "javascript:alert(1)"`),
			want{a1Manifest, 7, "paper_url", "only http and https"}},
		{"repository URL without host",
			replace(a1Manifest, `url = "https://example.org/acme/widgets"`, `url = "https:///acme"`),
			want{a1Manifest, 12, "repositories[0].url", "has no host"}},
		{"repository listed twice",
			replace(descManifest, `name = "small/repo"`, `name = "big/repo"`),
			want{descManifest, 28, "repositories[1].name", `repository "big/repo" is listed twice`}},
		{"repository without a name",
			replace(descManifest, `name = "small/repo"`, `license = "MIT"`),
			want{descManifest, 27, "repositories[1].name", "is required"}},
		{"described split without a size",
			replace(descManifest, "size = 30\n", ""),
			want{descManifest, 12, "splits[1]", `split "lite" lists no instances and gives no size`}},
		{"described split listing ids",
			replace(descManifest, "size = 30\n", "instances = [\"x-1\"]\n"),
			want{descManifest, 14, "splits[1].instances", "instances.jsonl is missing"}},
		{"bad reported repository figure",
			replace(descManifest, `lines = "765.40"`, `lines = "many"`),
			want{descManifest, 22, "repositories[0].reported.lines", `"many" is not a number`}},
		{"manifest missing",
			removeFile(a2Manifest),
			want{a2Manifest, 0, "", "cannot read the dataset manifest: the file is missing"}},

		// results.jsonl
		{"results row for an unknown instance",
			appendText(tinyResults, `{"instance_id": "alpha-404", "resolved": false}`),
			want{tinyResults, r3, "instance_id", `unknown instance id "alpha-404" in Alpha v1`}},
		{"results row for an instance of another version",
			appendText(tinyResults, `{"instance_id": "alpha-v2-1", "resolved": false}`),
			want{tinyResults, r3, "instance_id", "it belongs to Alpha v2: results for another dataset version"}},
		{"results row naming another dataset",
			replaceLine(tinyResults, 1, `"dataset": "alpha/v1"`, `"dataset": "alpha/v2"`),
			want{tinyResults, 1, "dataset", `result is for "alpha/v2" but the folder is for alpha/v1`}},
		{"result for an instance not in the split",
			appendText(liteResults, `{"instance_id": "alpha-3", "resolved": false, "patch_applied": true, "f2p_failed": ["tests/test_d.py::test_x"]}`),
			want{liteResults, 2, "instance_id", `instance "alpha-3" is not in split "lite"`}},
		{"duplicate result names the first line",
			appendText(tinyResults, `{"instance_id": "alpha-2", "resolved": false}`),
			want{tinyResults, r3, "instance_id", `duplicate result for "alpha-2" (first on line 2)`}},
		{"resolved with a failed test",
			appendText(tinyResults, `{"instance_id": "alpha-3", "resolved": true, "patch_applied": true, "f2p_passed": [], "f2p_failed": ["tests/test_d.py::test_x"]}`),
			want{tinyResults, r3, "resolved", "is true but not every"}},
		{"resolved with a failed pass-to-pass test",
			replaceLine(tinyResults, 1, `"p2p_passed": ["tests/test_b.py::test_keep"], "p2p_failed": []`, `"p2p_passed": [], "p2p_failed": ["tests/test_b.py::test_keep"]`),
			want{tinyResults, 1, "resolved", "is true but not every"}},
		{"resolved with a fail-to-pass test missing",
			replaceLine(tinyResults, 1, `"f2p_passed": ["tests/test_a.py::test_one", "tests/test_a.py::test_two"]`, `"f2p_passed": ["tests/test_a.py::test_one", "tests/test_a.py::test_one"]`),
			want{tinyResults, 1, "resolved", "is true but not every"}},
		{"resolved without the patch applied",
			appendText(tinyResults, `{"instance_id": "alpha-3", "resolved": true, "patch_applied": false, "f2p_passed": ["tests/test_d.py::test_x"]}`),
			want{tinyResults, r3, "resolved", "is true but"}},
		{"unresolved although everything passed",
			appendText(tinyResults, `{"instance_id": "alpha-3", "resolved": false, "patch_applied": true, "f2p_passed": ["tests/test_d.py::test_x"]}`),
			want{tinyResults, r3, "resolved", "is false but the patch applied and every test passed"}},
		{"test not in the instance",
			appendText(tinyResults, `{"instance_id": "alpha-3", "resolved": false, "patch_applied": true, "f2p_failed": ["tests/test_zzz.py::nope"]}`),
			want{tinyResults, r3, "f2p_failed", `test "tests/test_zzz.py::nope" is not in the instance's FAIL_TO_PASS`}},
		{"pass-to-pass test not in the instance",
			appendText(tinyResults, `{"instance_id": "alpha-3", "resolved": false, "patch_applied": true, "p2p_passed": ["tests/test_d.py::test_x"]}`),
			want{tinyResults, r3, "p2p_passed", "is not in the instance's PASS_TO_PASS"}},
		{"unknown field in results.jsonl",
			appendText(tinyResults, `{"instance_id": "alpha-3", "resovled": true}`),
			want{tinyResults, r3, "resovled", "unknown field"}},
		{"wrong type in results.jsonl",
			appendText(tinyResults, `{"instance_id": "alpha-3", "resolved": "yes"}`),
			want{tinyResults, r3, "resolved", "is a JSON string, want true or false"}},
		{"malformed results line",
			appendText(tinyResults, `{"instance_id": alpha-3, "resolved": false}`),
			want{tinyResults, r3, "instance_id", "malformed JSON at column 17: invalid character 'a'"}},
		{"truncated results line",
			appendText(tinyResults, `{"instance_id": "alpha-3", "resolved": false`),
			want{tinyResults, r3, "", "malformed JSON: the line ends inside a value"}},
		{"two results on one line",
			appendText(tinyResults, `{"instance_id": "alpha-3", "resolved": false} {"instance_id": "alpha-1", "resolved": false}`),
			want{tinyResults, r3, "", "more than one JSON value"}},
		{"negative tokens",
			appendText(tinyResults, `{"instance_id": "alpha-3", "resolved": false, "tokens_in": -5}`),
			want{tinyResults, r3, "tokens_in", "is -5; it cannot be negative"}},
		{"negative cost",
			appendText(tinyResults, `{"instance_id": "alpha-3", "resolved": false, "cost": -0.1}`),
			want{tinyResults, r3, "cost", "is -0.1; it cannot be negative"}},
		{"per-instance results for a described dataset",
			chain(
				writeFile("submissions/described/v1.0/lite/20260121_x/metadata.toml",
					"name = \"X\"\nscaffold = \"S\"\nmodel = \"M\"\ndate = 2026-01-21\n"),
				writeFile("submissions/described/v1.0/lite/20260121_x/results.jsonl", `{"instance_id": "d-1", "resolved": false}`+"\n")),
			want{"submissions/described/v1.0/lite/20260121_x/results.jsonl", 0, "", "per-instance results need the instances of Described v1.0"}},

		// metadata.toml
		{"unknown key in metadata.toml",
			appendText(tinyMeta, `resovled = true`),
			want{tinyMeta, 12, "resovled", `unknown key "resovled"; did you mean "reported.resolved"?`}},
		{"unknown key in [reported]",
			replace(bigMeta, `source = "Paper, Table 3"`, `sauce = "Paper, Table 3"`),
			want{bigMeta, 10, "reported.sauce", "unknown key"}},
		{"TOML syntax error in metadata.toml",
			replace(tinyMeta, `model = "Model X"`, `model = Model X`),
			want{tinyMeta, 4, "model", "expected value"}},
		{"bad reported figure",
			replace(bigMeta, `tokens_out = "16k"`, `tokens_out = "lots"`),
			want{bigMeta, 14, "reported.tokens_out", `"lots" is not a number`}},
		{"wrong TOML type in metadata.toml",
			appendText(tinyMeta, `attempts = "three"`),
			want{tinyMeta, 12, "attempts", `is a string ("three"); want an integer`}},
		{"wrong TOML type in dataset.toml",
			replace(a1Manifest, `size = 2`, `size = "2"`),
			want{a1Manifest, 23, "splits[1].size", `is a string ("2"); want an integer`}},
		{"missing name",
			replace(tinyMeta, "name = \"Tiny Agent + Model X\"\n", ""),
			want{tinyMeta, 0, "name", "is required"}},
		{"blank model",
			replace(tinyMeta, `model = "Model X"`, `model = "  "`),
			want{tinyMeta, 4, "model", "is required"}},
		{"missing date",
			replace(tinyMeta, "date = 2026-01-15\n", ""),
			want{tinyMeta, 0, "date", "is required"}},
		{"metadata date differs from the folder date",
			replace(tinyMeta, "date = 2026-01-15", "date = 2026-01-16"),
			want{tinyMeta, 6, "date", "is 2026-01-16 but the folder name says 2026-01-15"}},
		{"javascript: site_url",
			replace(tinyMeta, `site_url = "https://example.org/tiny"`, `site_url = "javascript:alert(1)"`),
			want{tinyMeta, 7, "site_url", "only http and https"}},
		{"relative report_url",
			replace(tinyMeta, `report_url = "https://example.org/tiny/report"`, `report_url = "/tiny/report"`),
			want{tinyMeta, 8, "report_url", "only http and https"}},
		{"negative attempts",
			appendText(tinyMeta, `attempts = -1`),
			want{tinyMeta, 12, "attempts", "is -1; want 1 to 100"}},
		{"both results.jsonl and [reported]",
			appendText(tinyMeta, "[reported]\nresolved = \"10\""),
			want{tinyMeta, 12, "reported", "either results.jsonl or a [reported] block, not both"}},
		{"neither results.jsonl nor [reported]",
			removeFile(tinyResults),
			want{tinyDir, 0, "", "needs results.jsonl"}},
		{"metadata.toml missing",
			removeFile(tinyMeta),
			want{tinyMeta, 0, "", "cannot read: the file is missing"}},
		{"[reported] without resolved",
			replace(bigMeta, "resolved = \"26.30\"\n", ""),
			want{bigMeta, 9, "reported.resolved", "is required"}},
		{"unknown reported level",
			replace(bigMeta, "[reported.levels.L2]", "[reported.levels.L3]"),
			want{bigMeta, 21, "reported.levels.L3", "unknown level"}},
		{"unknown reported repository",
			replace(bigMeta, `[reported.repos."big/repo"]`, `[reported.repos."huge/repo"]`),
			want{bigMeta, 24, "reported.repos.huge/repo", `repository "huge/repo" is not listed in described/v1.0`}},

		// submission folders
		{"submission for an unknown split",
			rename(tinyDir, "submissions/alpha/v1/medium/20260115_tiny-agent"),
			want{"submissions/alpha/v1/medium/20260115_tiny-agent", 0, "", `unknown split "medium": Alpha v1 has splits full, lite`}},
		{"submission for an unknown dataset version",
			rename(tinyDir, "submissions/alpha/v9/full/20260115_tiny-agent"),
			want{"submissions/alpha/v9/full/20260115_tiny-agent", 0, "", "no dataset alpha/v9"}},
		{"submission folder without a date",
			rename(tinyDir, "submissions/alpha/v1/full/tiny-agent"),
			want{"submissions/alpha/v1/full/tiny-agent", 0, "", `folder name "tiny-agent" must be <YYYYMMDD>_<slug>`}},
		{"submission folder with a short date",
			rename(tinyDir, "submissions/alpha/v1/full/2026015_tiny-agent"),
			want{"submissions/alpha/v1/full/2026015_tiny-agent", 0, "", "must be <YYYYMMDD>_<slug>"}},
		{"submission folder with an impossible date",
			rename(tinyDir, "submissions/alpha/v1/full/20261399_tiny-agent"),
			want{"submissions/alpha/v1/full/20261399_tiny-agent", 0, "", "20261399 is not a date"}},
		{"slug with a space",
			rename(tinyDir, "submissions/alpha/v1/full/20260115_bad slug"),
			want{"submissions/alpha/v1/full/20260115_bad slug", 0, "", `slug "bad slug" may hold only`}},
		{"slug ..",
			rename(tinyDir, "submissions/alpha/v1/full/20260115_.."),
			want{"submissions/alpha/v1/full/20260115_..", 0, "", `contains ".."`}},
		{"slug with .. inside",
			rename(tinyDir, "submissions/alpha/v1/full/20260115_a..b"),
			want{"submissions/alpha/v1/full/20260115_a..b", 0, "", `contains ".."`}},
		{"slug starting with a dot",
			rename(tinyDir, "submissions/alpha/v1/full/20260115_.hidden"),
			want{"submissions/alpha/v1/full/20260115_.hidden", 0, "", "starting with a letter or digit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkMutation(t, c.mutate, c.want)
		})
	}
}

// TestLoadBrokenCopyIsGood makes sure the copy the broken cases start from
// loads: a failure in TestLoadBroken is then due to its one mutation.
func TestLoadBrokenCopyIsGood(t *testing.T) {
	root := copyGood(t)
	if _, err := bench.Load(context.Background(), root); err != nil {
		t.Fatalf("unmutated copy: %v", err)
	}
}

// TestLoadListsAllProblems: one pass reports problems in several files,
// sorted by file then line.
func TestLoadListsAllProblems(t *testing.T) {
	root := copyGood(t)
	chain(
		appendText(a1Instances, `{"instance_id": "alpha-1", "repo": "acme/widgets", "level": 1, "problem_statement": "x", "FAIL_TO_PASS": ["t"]}`),
		appendText(a1Instances, `not json`),
		replace(a2Manifest, "release_date = 2026-02-01\n", ""),
		replace(bigMeta, `site_url = "https://example.org/big"`, `site_url = "javascript:void(0)"`),
		replace(bigMeta, "[reported.levels.L2]", "[reported.levels.L9]"),
	)(t, root)
	ps := loadProblems(t, root)
	for _, w := range []want{
		{a1Instances, 5, "instance_id", "duplicate"},
		{a1Instances, 6, "", "malformed JSON"},
		{a2Manifest, 0, "release_date", "is required"},
		{bigMeta, 7, "site_url", "only http"},
		{bigMeta, 21, "reported.levels.L9", "unknown level"},
	} {
		found := false
		for _, p := range ps {
			found = found || w.matches(p)
		}
		if !found {
			t.Errorf("missing problem %+v in %v", w, ps)
		}
	}
	for i := 1; i < len(ps); i++ {
		a, b := ps[i-1], ps[i]
		if a.File > b.File || (a.File == b.File && a.Line > b.Line) {
			t.Errorf("problems not sorted: %v before %v", a, b)
		}
	}
	if msg := ps.Error(); !strings.HasPrefix(msg, strconv.Itoa(len(ps))+" problems in data:") {
		t.Errorf("Problems.Error() = %q", msg)
	}
}

func TestProblemError(t *testing.T) {
	for _, c := range []struct {
		p    bench.Problem
		want string
	}{
		{bench.Problem{File: "a/b.jsonl", Line: 3, Field: "level", Msg: "is 3"}, `a/b.jsonl:3: field "level": is 3`},
		{bench.Problem{File: "a/m.toml", Field: "name", Msg: "is required"}, `a/m.toml: field "name": is required`},
		{bench.Problem{File: "dir", Msg: "bad"}, `dir: bad`},
	} {
		if got := c.p.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	one := bench.Problems{{File: "f", Msg: "m"}}
	if got := one.Error(); got != "f: m" {
		t.Errorf("one problem: %q", got)
	}
	if err := (bench.Problems{}).Err(); err != nil {
		t.Errorf("empty Problems.Err() = %v, want nil", err)
	}
	ps := bench.Problems{{File: "b", Line: 2}, {File: "a", Line: 9}, {File: "b", Line: 1}}
	err := ps.Err()
	var got bench.Problems
	if !errors.As(err, &got) || len(got) != 3 || got[0].File != "a" || got[1].Line != 1 || got[2].Line != 2 {
		t.Errorf("Err() = %v, want sorted by file then line", err)
	}
}
