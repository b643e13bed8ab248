package bench_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
)

// Pull requests come from strangers: these cases are data written to hurt
// the build or mislead its readers. Each is one mutation of the good tree.

func symlink(target, rel string) mutation {
	return func(t *testing.T, root string) {
		t.Helper()
		p := abspath(root, rel)
		_ = os.Remove(p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
}

// outside writes a file beside the data root, where a link can point.
func outside(t *testing.T, root, name, content string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(root), name)
	writeText(t, p, content)
	return p
}

// truncate makes a sparse file of size bytes: large on paper, nothing on
// disk, so a test can offer a file far over its limit cheaply.
func truncate(rel string, size int64) mutation {
	return func(t *testing.T, root string) {
		t.Helper()
		p := abspath(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// expect runs cases of one mutation and one wanted problem.
type hostileCase struct {
	name   string
	mutate mutation
	want   want
}

func runCases(t *testing.T, cases []hostileCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkMutation(t, c.mutate, c.want)
		})
	}
}

// secret is what a linked file outside data/ holds: no message may quote it.
const secret = "FEATBENCH_TOKEN=ghp_s3cr3tvalue"

func TestLoadRefusesLinks(t *testing.T) {
	t.Run("linked metadata.toml to a secret", func(t *testing.T) {
		root := copyGood(t)
		env := outside(t, root, ".env", secret+"\n")
		symlink(env, tinyMeta)(t, root)
		ps := loadProblems(t, root)
		wantProblem(t, ps, want{tinyMeta, 0, "", "is a symbolic link: data/ may hold only regular files and folders"})
		for _, p := range ps {
			if strings.Contains(p.Error(), "s3cr3t") || strings.Contains(p.Error(), "FEATBENCH_TOKEN") {
				t.Errorf("a message quotes the linked file: %v", p)
			}
		}
	})
	t.Run("linked results.jsonl to /dev/zero", func(t *testing.T) {
		if _, err := os.Stat("/dev/zero"); err != nil {
			t.Skip("no /dev/zero")
		}
		root := copyGood(t)
		symlink("/dev/zero", tinyResults)(t, root)
		done := make(chan bench.Problems, 1)
		go func() { done <- loadProblems(t, root) }()
		select {
		case ps := <-done:
			wantProblem(t, ps, want{tinyResults, 0, "", "is a symbolic link"})
		case <-time.After(20 * time.Second):
			t.Fatal("Load is still reading /dev/zero")
		}
	})
	t.Run("linked instances.jsonl", func(t *testing.T) {
		root := copyGood(t)
		good := outside(t, root, "instances.jsonl", readText(t, abspath(root, a1Instances)))
		symlink(good, a1Instances)(t, root)
		ps := loadProblems(t, root)
		wantProblem(t, ps, want{a1Instances, 0, "", "is a symbolic link"})
	})
	t.Run("linked data root", func(t *testing.T) {
		root := copyGood(t)
		link := filepath.Join(t.TempDir(), "data")
		if err := os.Symlink(root, link); err != nil {
			t.Fatal(err)
		}
		ps := loadProblems(t, link)
		if len(ps) != 1 || ps[0].File != link || !strings.Contains(ps[0].Msg, "is a symbolic link") {
			t.Errorf("problems = %v, want one: the root is a symbolic link", ps)
		}
	})
	runCases(t, []hostileCase{
		{"linked submission folder",
			func(t *testing.T, root string) {
				symlink(abspath(root, tinyDir), "submissions/alpha/v1/full/20260301_copy")(t, root)
			},
			want{"submissions/alpha/v1/full/20260301_copy", 0, "", "is a symbolic link"}},
		{"linked dataset folder",
			func(t *testing.T, root string) {
				symlink(abspath(root, "datasets/alpha/v1"), "datasets/alpha/v3")(t, root)
			},
			want{"datasets/alpha/v3", 0, "", "is a symbolic link"}},
		{"link where nothing belongs",
			symlink("/etc/passwd", "passwd"),
			want{"data/passwd", 0, "", "is a symbolic link"}},
		{"dangling link",
			symlink("/nonexistent/featbench", "datasets/alpha/v1/README.md"),
			want{"datasets/alpha/v1/README.md", 0, "", "is a symbolic link"}},
		{"linked checked.toml",
			symlink("/etc/hostname", bench.CheckedFile),
			want{bench.CheckedFile, 0, "", "is a symbolic link"}},
		{"named pipe",
			func(t *testing.T, root string) {
				if err := syscall.Mkfifo(abspath(root, tinyDir+"/logs.tar.gz"), 0o644); err != nil {
					t.Skip("no named pipes here:", err)
				}
			},
			want{tinyDir + "/logs.tar.gz", 0, "", "is a named pipe: data/ may hold only regular files and folders"}},
	})
}

func wantProblem(t *testing.T, ps bench.Problems, w want) {
	t.Helper()
	for _, p := range ps {
		if w.matches(p) {
			return
		}
	}
	t.Errorf("no problem like %+v in %v", w, ps)
}

// Only the files the layout names may stand under data/, each in its
// place; README.md may stand in any folder.
func TestLoadUnexpectedFiles(t *testing.T) {
	runCases(t, []hostileCase{
		{"file at the top", writeFile("notes.txt", "x"),
			want{"data/notes.txt", 0, "", "unexpected file: data/ holds only datasets/, submissions/, logos/, checked.toml, datasets.lock.toml and README.md"}},
		{"script in a submission folder", writeFile(tinyDir+"/run.sh", "#!/bin/sh"),
			want{tinyDir + "/run.sh", 0, "", "unexpected file: a submission folder holds only metadata.toml, results.jsonl"}},
		{"file in a dataset folder", writeFile("datasets/alpha/v1/instances.json", "{}"),
			want{"datasets/alpha/v1/instances.json", 0, "", "unexpected file: a dataset folder holds only"}},
		{"folder in a submission folder", writeFile(tinyDir+"/extra/results.jsonl", ""),
			want{tinyDir + "/extra", 0, "", "unexpected folder"}},
		{"hidden file", writeFile("submissions/alpha/.DS_Store", "x"),
			want{"submissions/alpha/.DS_Store", 0, "", "unexpected file"}},
		{"misplaced dataset.toml", writeFile("datasets/alpha/dataset.toml", "name = \"alpha\"\n"),
			want{"datasets/alpha/dataset.toml", 0, "", "misplaced: dataset.toml belongs in data/datasets/<name>/<version>/"}},
		{"misplaced metadata.toml", writeFile("submissions/alpha/v1/full/metadata.toml", ""),
			want{"submissions/alpha/v1/full/metadata.toml", 0, "", "misplaced: metadata.toml belongs in data/submissions/"}},
		{"unknown top folder", writeFile("scripts/x.py", ""),
			want{"data/scripts", 0, "", "unexpected folder"}},
		{"folder in logos", writeFile("logos/old/acme.png", ""),
			want{"logos/old", 0, "", "unexpected folder"}},
		{"huge README", truncate("datasets/README.md", 1<<20),
			want{"datasets/README.md", 0, "", "is 1048576 bytes; at most 262144"}},
		{"huge README in a submission folder", truncate(tinyDir+"/README.md", 1<<20),
			want{tinyDir + "/README.md", 0, "", "is 1048576 bytes; at most 262144"}},
	})
	t.Run("README.md anywhere", func(t *testing.T) {
		root := copyGood(t)
		for _, dir := range []string{"", "datasets", "datasets/alpha", "datasets/alpha/v1", "submissions", "submissions/alpha/v1/full", tinyDir, "logos"} {
			writeText(t, abspath(root, filepath.Join(dir, "README.md")), "# Notes\n")
		}
		data, err := bench.Load(context.Background(), root)
		if err != nil {
			t.Fatal(err)
		}
		s := data.SubmissionsFor(data.Dataset("alpha/v1"), "full")[0]
		if f := s.File("README.md"); f == nil || f.Size != 8 {
			t.Errorf("README.md of the submission = %+v, want it listed in Files", f)
		}
	})
}

// Every file and field has a limit, and its message states it.
func TestLoadLimits(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	runCases(t, []hostileCase{
		// Files, by their size on disk: never read whole.
		{"results.jsonl over 256 MiB", truncate(tinyResults, 300<<20),
			want{tinyResults, 0, "", "is 314572800 bytes; at most 268435456"}},
		{"instances.jsonl over 1 GiB", truncate(a1Instances, 1<<30+1),
			want{a1Instances, 0, "", "is 1073741825 bytes; at most 1073741824"}},
		{"dataset.toml over 4 MiB", truncate(a1Manifest, 5<<20),
			want{a1Manifest, 0, "", "is 5242880 bytes; at most 4194304"}},
		{"metadata.toml over 256 KiB", truncate(tinyMeta, 300<<10),
			want{tinyMeta, 0, "", "is 307200 bytes; at most 262144"}},
		{"50 MB of notes", appendText(tinyMeta, `notes = "`+long(50<<20)+`"`),
			want{tinyMeta, 0, "", "at most 262144"}},
		{"checked.toml over 1 MiB", truncate(bench.CheckedFile, 2<<20),
			want{bench.CheckedFile, 0, "", "is 2097152 bytes; at most 1048576"}},
		{"predictions.jsonl over 100 MiB", truncate(tinyDir+"/predictions.jsonl", 101<<20),
			want{tinyDir + "/predictions.jsonl", 0, "", "at most 104857600"}},
		{"logs over 100 MiB", truncate(tinyDir+"/logs.tar.gz", 101<<20),
			want{tinyDir + "/logs.tar.gz", 0, "", "is 105906176 bytes; at most 104857600"}},

		// instances.jsonl
		{"problem statement over 1 MiB",
			replaceLine(a1Instances, 1, `"problem_statement": "Add widgets."`, `"problem_statement": "`+long(1<<20+1)+`"`),
			want{a1Instances, 1, "problem_statement", "is 1048577 bytes; at most 1048576"}},
		{"patch over 8 MiB",
			replaceLine(a1Instances, 1, `"lines": 12`, `"lines": 12, "patch": "`+long(8<<20+1)+`"`),
			want{a1Instances, 1, "patch", "is 8388609 bytes; at most 8388608"}},
		{"test id over 1 KiB",
			replaceLine(a1Instances, 4, `"tests/test_d.py::test_x"`, `"tests/test_d.py::test_`+long(1024)+`"`),
			want{a1Instances, 4, "FAIL_TO_PASS[0]", "is 1046 bytes; at most 1024"}},
		{"test id with a newline",
			replaceLine(a1Instances, 4, `"tests/test_d.py::test_x"`, `"tests/test_d.py::test_x\n[evil]"`),
			want{a1Instances, 4, "FAIL_TO_PASS[0]", "holds a line break"}},
		{"too many tests",
			replaceLine(a1Instances, 4, `"PASS_TO_PASS": []`, `"PASS_TO_PASS": [`+strings.Repeat(`"t",`, 50_000)+`"t"]`),
			want{a1Instances, 4, "PASS_TO_PASS", "lists 50001 entries; at most 50000"}},
		{"repo name too long",
			replaceLine(a1Instances, 4, `"repo": "acme/widgets"`, `"repo": "`+long(201)+`"`),
			want{a1Instances, 4, "repo", "is 201 bytes; at most 200"}},
		{"base_commit too long",
			replaceLine(a1Instances, 4, `"level": 2`, `"level": 2, "base_commit": "`+long(101)+`"`),
			want{a1Instances, 4, "base_commit", "is 101 bytes; at most 100"}},
		{"image_name too long",
			replaceLine(a1Instances, 4, `"level": 2`, `"level": 2, "image_name": "`+long(301)+`"`),
			want{a1Instances, 4, "image_name", "is 301 bytes; at most 300"}},
		{"created_at too long",
			replaceLine(a1Instances, 4, `"2026-01-01T12:00:00Z"`, `"`+long(65)+`"`),
			want{a1Instances, 4, "created_at", "is 65 bytes; at most 64"}},
		{"repo_settings over 64 KiB",
			replaceLine(a1Instances, 4, `"level": 2`, `"level": 2, "repo_settings": {"x": "`+long(64<<10)+`"}`),
			want{a1Instances, 4, "repo_settings", "at most 65536"}},
		{"too many top objects",
			replaceLine(a1Instances, 4, `"level": 2`, `"level": 2, "top_objects": [`+strings.Repeat(`"o",`, 1000)+`"o"]`),
			want{a1Instances, 4, "top_objects", "lists 1001 entries; at most 1000"}},
		{"top object too long",
			replaceLine(a1Instances, 4, `"level": 2`, `"level": 2, "top_objects": ["`+long(501)+`"]`),
			want{a1Instances, 4, "top_objects[0]", "is 501 bytes; at most 500"}},

		// metadata.toml
		{"name over 100 characters", replace(tinyMeta, `name = "Tiny Agent + Model X"`, `name = "`+strings.Repeat("é", 101)+`"`),
			want{tinyMeta, 2, "name", "is 101 characters; at most 100"}},
		{"name with a newline", replace(tinyMeta, `name = "Tiny Agent + Model X"`, `name = "Tiny Agent\nModel X"`),
			want{tinyMeta, 2, "name", "holds a line break; it must be one line"}},
		{"model with a bidirectional override", replace(tinyMeta, `model = "Model X"`, `model = "Model \u202eX"`),
			want{tinyMeta, 4, "model", "holds the control character U+202E"}},
		{"scaffold with an escape", replace(tinyMeta, `scaffold = "Tiny Agent"`, `scaffold = "Tiny \u001b[31mAgent"`),
			want{tinyMeta, 3, "scaffold", "holds the control character U+001B"}},
		{"eleven organisations", replace(tinyMeta, `organisations = ["Acme"]`, `organisations = [`+strings.Repeat(`"O", `, 10)+`"O"]`),
			want{tinyMeta, 5, "organisations", "lists 11; at most 10"}},
		{"organisation too long", replace(tinyMeta, `organisations = ["Acme"]`, `organisations = ["`+long(101)+`"]`),
			want{tinyMeta, 5, "organisations[0]", "is 101 characters; at most 100"}},
		{"21 tags", replace(tinyMeta, `tags = ["test"]`, `tags = [`+strings.Repeat(`"t", `, 20)+`"t"]`),
			want{tinyMeta, 11, "tags", "lists 21; at most 20"}},
		{"tag too long", replace(tinyMeta, `tags = ["test"]`, `tags = ["`+long(41)+`"]`),
			want{tinyMeta, 11, "tags[0]", "is 41 characters; at most 40"}},
		{"notes too long", appendText(tinyMeta, `notes = "`+long(4001)+`"`),
			want{tinyMeta, 12, "notes", "is 4001 characters; at most 4000"}},
		{"notes with a NUL", appendText(tinyMeta, `notes = "a\u0000b"`),
			want{tinyMeta, 12, "notes", "holds the control character U+0000"}},
		{"URL too long", replace(tinyMeta, `site_url = "https://example.org/tiny"`, `site_url = "https://example.org/`+long(2000)+`"`),
			want{tinyMeta, 7, "site_url", "is 2020 bytes; at most 2000"}},
		{"reported source too long", replace(bigMeta, `source = "Paper, Table 3"`, `source = "`+long(201)+`"`),
			want{bigMeta, 10, "reported.source", "is 201 characters; at most 200"}},
		{"figure too long", replace(bigMeta, `resolved = "26.30"`, `resolved = "0.`+long(40)+`"`),
			want{bigMeta, 11, "reported.resolved", "a figure such as 12.5, 2.6M or 16k is at most 32"}},
		{"figure float too long to show", replace(bigMeta, `cost = 1.5`, `cost = 1e-40`),
			want{bigMeta, 15, "reported.cost", "write the figure as a string"}},

		// dataset.toml
		{"title too long", replace(a1Manifest, `title = "Alpha"`, `title = "`+long(201)+`"`),
			want{a1Manifest, 3, "title", "is 201 characters; at most 200"}},
		{"description too long", replace(a1Manifest, `description = "Three instances cut from one repository."`, `description = "`+long(10_001)+`"`),
			want{a1Manifest, 6, "description", "is 10001 characters; at most 10000"}},
		{"split description too long", replace(a1Manifest, `description = "Two instances."`, `description = "`+long(2001)+`"`),
			want{a1Manifest, 22, "splits[1].description", "is 2001 characters; at most 2000"}},
		{"license too long", replace(a1Manifest, `license = "MIT"`, `license = "`+long(101)+`"`),
			want{a1Manifest, 13, "repositories[0].license", "is 101 characters; at most 100"}},

		// results.jsonl
		{"failure mode too long",
			replaceLine(tinyResults, 2, `["AssertionError"]`, `["`+long(101)+`"]`),
			want{tinyResults, 2, "failure_modes[0]", "is 101 characters; at most 100"}},
		{"too many failure modes",
			replaceLine(tinyResults, 2, `["AssertionError"]`, `[`+strings.Repeat(`"E", `, 50)+`"E"]`),
			want{tinyResults, 2, "failure_modes", "lists 51; at most 50"}},
		{"unknown instance id of 1 MB is cut short in the message",
			appendText(tinyResults, `{"instance_id": "`+long(1<<20)+`"}`),
			want{tinyResults, 3, "instance_id", `… (1048576 bytes) in Alpha v1`}},
	})
	t.Run("an instance line over 16 MiB", func(t *testing.T) {
		root := copyGood(t)
		line := `{"instance_id": "alpha-9", "hints_text": "` + long(16<<20) + `"}`
		appendText(a1Instances, line)(t, root)
		wantProblem(t, loadProblems(t, root), want{a1Instances, 5, "", fmt.Sprintf("the line is %d bytes; an instance is at most 16777216", len(line))})
	})
}

// Figures must be finite and in range.
func TestLoadRanges(t *testing.T) {
	runCases(t, []hostileCase{
		{"resolved over 100", replace(bigMeta, `resolved = "26.30"`, `resolved = "126.30"`),
			want{bigMeta, 11, "reported.resolved", `is "126.30"; want 0 to 100`}},
		{"negative passed", replace(bigMeta, `passed = "43.49"`, `passed = "-1"`),
			want{bigMeta, 12, "reported.passed", `is "-1"; it cannot be negative`}},
		{"level over 100", replace(bigMeta, "[reported.levels.L2]\nresolved = 5", "[reported.levels.L2]\nresolved = 500"),
			want{bigMeta, 22, "reported.levels.L2.resolved", `is "500"; want 0 to 100`}},
		{"repository resolved over 100", replace(bigMeta, `resolved = "12.5"`, `resolved = "112.5%"`),
			want{bigMeta, 26, "reported.repos.big/repo.resolved", `want 0 to 100`}},
		{"negative tokens", replace(bigMeta, `tokens_in = "2.6M"`, `tokens_in = "-2.6M"`),
			want{bigMeta, 13, "reported.tokens_in", "cannot be negative"}},
		{"negative cost", replace(bigMeta, `cost = 1.5`, `cost = -1.5`),
			want{bigMeta, 15, "reported.cost", "cannot be negative"}},
		{"tokens past a trillion", replace(bigMeta, `tokens_out = "16k"`, `tokens_out = "2000000M"`),
			want{bigMeta, 14, "reported.tokens_out", "want 0 to 1000000000000"}},
		{"bare inf", replace(bigMeta, `cost = 1.5`, `cost = inf`),
			want{bigMeta, 15, "reported.cost", "want a finite number"}},
		{"bare nan", replace(bigMeta, `passed = "43.49"`, `passed = nan`),
			want{bigMeta, 12, "reported.passed", "want a finite number"}},
		{"figure that overflows", replace(bigMeta, `tokens_in = "2.6M"`, `tokens_in = "1e308M"`),
			want{bigMeta, 13, "reported.tokens_in", `"1e308M" is not a number`}},
		{"negative repository statistic", replace(descManifest, `files = 24`, `files = -24`),
			want{descManifest, 23, "repositories[0].reported.files", "cannot be negative"}},
		{"attempts over 100", appendText(tinyMeta, "attempts = 101"),
			want{tinyMeta, 12, "attempts", "is 101; want 1 to 100"}},
		{"negative gold statistic", replaceLine(a1Instances, 1, `"lines": 12`, `"lines": -12`),
			want{a1Instances, 1, "lines", "is -12; it cannot be negative"}},
		{"negative files changed", replaceLine(tinyResults, 2, `"files_changed": 1`, `"files_changed": -1`),
			want{tinyResults, 2, "files_changed", "is -1; it cannot be negative"}},
		{"tokens past a trillion in a result", replaceLine(tinyResults, 1, `"tokens_in": 1000`, `"tokens_in": 1000000000001`),
			want{tinyResults, 1, "tokens_in", "is 1000000000001; want 0 to 1000000000000"}},
		{"cost past a million", replaceLine(tinyResults, 1, `"cost": 0.5`, `"cost": 1e7`),
			want{tinyResults, 1, "cost", "is 10000000; want 0 to 1000000"}},
		{"cost that overflows", replaceLine(tinyResults, 1, `"cost": 0.5`, `"cost": 1e400`),
			want{tinyResults, 1, "cost", "is a number out of range for a number"}},
	})
}

// JSONL is strict: one object per line, each key once and exactly as
// documented, valid UTF-8.
func TestLoadStrictJSON(t *testing.T) {
	runCases(t, []hostileCase{
		{"upper-case key beside the real one",
			replaceLine(tinyResults, 2, `"resolved": false`, `"resolved": false, "RESOLVED": true`),
			want{tinyResults, 2, "RESOLVED", "unknown field"}},
		{"key in another case alone",
			replaceLine(tinyResults, 2, `"resolved": false`, `"Resolved": false`),
			want{tinyResults, 2, "Resolved", "unknown field"}},
		{"duplicate key in a result",
			replaceLine(tinyResults, 2, `"resolved": false`, `"resolved": false, "resolved": true`),
			want{tinyResults, 2, "resolved", "is given twice in one object"}},
		{"duplicate key written with an escape",
			replaceLine(tinyResults, 2, `"resolved": false`, `"resolve\u0064": true, "resolved": false`),
			want{tinyResults, 2, "resolved", "is given twice in one object"}},
		{"duplicate key in an instance",
			replaceLine(a1Instances, 4, `"level": 2`, `"level": 2, "level": 1`),
			want{a1Instances, 4, "level", "is given twice in one object"}},
		{"duplicate unknown key in an instance",
			replaceLine(a1Instances, 4, `"hints_text": ""`, `"hints_text": "", "hints_text": "x"`),
			want{a1Instances, 4, "hints_text", "is given twice in one object"}},
		{"instance key in another case",
			replaceLine(a1Instances, 4, `"level": 2`, `"level": 2, "PROBLEM_STATEMENT": "Something else."`),
			want{a1Instances, 4, "PROBLEM_STATEMENT", `differs from the field "problem_statement" only in case`}},
		{"invalid UTF-8 in a result",
			replaceLine(tinyResults, 2, `"AssertionError"`, "\"Assertion\xffError\""),
			want{tinyResults, 2, "failure_modes[0]", "holds invalid UTF-8"}},
		{"invalid UTF-8 in an instance",
			replaceLine(a1Instances, 4, `"Build sprockets."`, "\"Build \xc3 sprockets.\""),
			want{a1Instances, 4, "problem_statement", "holds invalid UTF-8"}},
		{"byte-order mark on results.jsonl",
			func(t *testing.T, root string) {
				writeText(t, abspath(root, tinyResults), "\ufeff"+readText(t, abspath(root, tinyResults)))
			},
			want{tinyResults, 1, "", "starts with a byte-order mark (U+FEFF); save the file as UTF-8 without one"}},
		{"byte-order mark on instances.jsonl",
			func(t *testing.T, root string) {
				writeText(t, abspath(root, a1Instances), "\ufeff"+readText(t, abspath(root, a1Instances)))
			},
			want{a1Instances, 1, "", "starts with a byte-order mark"}},
		{"null result line", appendText(tinyResults, "null"),
			want{tinyResults, 3, "", "is null; want a JSON object"}},
		{"null instance line", appendText(a1Instances, "null"),
			want{a1Instances, 5, "", "is null; want a JSON object"}},
		{"array line", appendText(tinyResults, `["alpha-3", false]`),
			want{tinyResults, 3, "", "is a JSON array; want a JSON object"}},
		{"string line", appendText(a1Instances, `"alpha-4"`),
			want{a1Instances, 5, "", "is a JSON string; want a JSON object"}},
		{"empty results.jsonl", writeFile(tinyResults, "\n\n"),
			want{tinyResults, 0, "", "holds no results"}},
		{"empty instances.jsonl", writeFile("datasets/alpha/v2/instances.jsonl", ""),
			want{"datasets/alpha/v2/instances.jsonl", 0, "", "holds no instances; leave the file out for a dataset published only as figures"}},
		{"non-breaking space before a line", appendText(tinyResults, "\u00a0{\"instance_id\": \"alpha-3\"}"),
			want{tinyResults, 3, "", "malformed JSON at column 1"}},
	})
}

func TestLoadStrictTOML(t *testing.T) {
	runCases(t, []hostileCase{
		{"quoted date", replace(tinyMeta, "date = 2026-01-15", `date = "2026-01-15"`),
			want{tinyMeta, 6, "date", "is a string; write the date without quotes: date = 2026-01-15"}},
		{"quoted release date", replace(a1Manifest, "release_date = 2026-01-01", `release_date = "2026-01-01"`),
			want{a1Manifest, 5, "release_date", "write the date without quotes: release_date = 2026-01-01"}},
		{"misspelt key", replace(tinyMeta, "organisations =", "orgnisations ="),
			want{tinyMeta, 5, "orgnisations", `unknown key "orgnisations"; did you mean "organisations"?`}},
		{"American spelling", replace(tinyMeta, "organisations =", "organizations ="),
			want{tinyMeta, 5, "organizations", `did you mean "organisations"?`}},
		{"key in another case", replace(tinyMeta, "scaffold =", "Scaffold ="),
			want{tinyMeta, 3, "Scaffold", `unknown key "Scaffold"; did you mean "scaffold"?`}},
		{"misspelt key in an array of tables", replace(a1Manifest, `description = "Two instances."`, `descripton = "Two instances."`),
			want{a1Manifest, 22, "splits[1].descripton", `did you mean "splits[1].description"?`}},
		{"byte-order mark on metadata.toml",
			func(t *testing.T, root string) {
				writeText(t, abspath(root, tinyMeta), "\ufeff"+readText(t, abspath(root, tinyMeta)))
			},
			want{tinyMeta, 1, "", "starts with a byte-order mark (U+FEFF)"}},
		{"UTF-16 dataset.toml",
			func(t *testing.T, root string) {
				writeText(t, abspath(root, a1Manifest), "\xff\xfe"+readText(t, abspath(root, a1Manifest)))
			},
			want{a1Manifest, 1, "", "is UTF-16; save the file as UTF-8"}},
		{"invalid UTF-8 in metadata.toml", replace(tinyMeta, `model = "Model X"`, "model = \"Model \xff\""),
			want{tinyMeta, 4, "", "is not valid UTF-8"}},
		{"inline tables nested 40 deep", appendText(tinyMeta, "notes = "+strings.Repeat("{a = ", 40)+"1"+strings.Repeat("}", 40)),
			want{tinyMeta, 12, "", "nests arrays and inline tables more than 32 deep"}},
		{"a table where a string belongs", replace(tinyMeta, `model = "Model X"`, "model = {name = \"X\"}"),
			want{tinyMeta, 4, "model", "is a table; want a string"}},
	})

	t.Run("every problem of a file in one run", func(t *testing.T) {
		root := copyGood(t)
		chain(
			replace(tinyMeta, "date = 2026-01-15", `date = "2026-01-15"`),
			replace(tinyMeta, "open_weights = true", `open_weights = "yes"`),
			replace(tinyMeta, `tags = ["test"]`, `tags = "test"`),
			replace(tinyMeta, "organisations =", "orgnisations ="),
			appendText(tinyMeta, "licence = \"MIT\"\nattempts = 1.5"),
		)(t, root)
		ps := loadProblems(t, root)
		for _, w := range []want{
			{tinyMeta, 6, "date", "without quotes"},
			{tinyMeta, 9, "open_weights", `is a string ("yes"); want true or false`},
			{tinyMeta, 11, "tags", `is a string ("test"); want an array`},
			{tinyMeta, 5, "orgnisations", "unknown key"},
			{tinyMeta, 12, "licence", "unknown key"},
			{tinyMeta, 13, "attempts", "is a float (1.5); want an integer"},
		} {
			wantProblem(t, ps, w)
		}
	})
}

// checked is the maintainers' word, kept in data/checked.toml.
func TestLoadChecked(t *testing.T) {
	attest := func(t *testing.T, root, id string) string {
		t.Helper()
		sum, err := bench.SubmissionHash(root, id)
		if err != nil {
			t.Fatal(err)
		}
		return bench.Attestation{Submission: id, SHA256: sum, By: "Maintainer \"M\"",
			Date: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), Note: "Re-ran it.\nAll good."}.TOML()
	}
	const tinyID = "alpha/v1/full/20260115_tiny-agent"

	t.Run("a matching attestation marks the submission checked", func(t *testing.T) {
		root := copyGood(t)
		writeText(t, abspath(root, bench.CheckedFile), "# attestations\n\n"+attest(t, root, tinyID))
		data, err := bench.Load(context.Background(), root)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range data.Submissions {
			if got, want := s.Checked, s.ID() == tinyID; got != want {
				t.Errorf("%s: Checked = %v, want %v", s.ID(), got, want)
			}
			if s.ID() == tinyID {
				a := s.Attestation
				if a == nil || a.By != `Maintainer "M"` || a.Note != "Re-ran it.\nAll good." || a.Date.Format(time.DateOnly) != "2026-11-23" {
					t.Errorf("attestation = %+v", a)
				}
			}
		}
	})

	runCases(t, []hostileCase{
		{"checked in metadata.toml", appendText(tinyMeta, "checked = true"),
			want{tinyMeta, 12, "checked", "a submission cannot mark itself checked: attestations are the maintainers' and live in data/checked.toml"}},
		{"files changed after the attestation",
			func(t *testing.T, root string) {
				writeText(t, abspath(root, bench.CheckedFile), attest(t, root, tinyID))
				replaceLine(tinyResults, 2, `"files_changed": 1`, `"files_changed": 2`)(t, root)
			},
			want{bench.CheckedFile, 3, "checked[0].sha256", "no longer matches the files of " + tinyID}},
		{"files changed into a broken submission",
			func(t *testing.T, root string) {
				writeText(t, abspath(root, bench.CheckedFile), attest(t, root, tinyID))
				appendText(tinyResults, `{"instance_id": "alpha-404"}`)(t, root)
			},
			want{bench.CheckedFile, 3, "checked[0].sha256", "no longer matches the files of " + tinyID}},
		{"a file added after the attestation",
			func(t *testing.T, root string) {
				writeText(t, abspath(root, bench.CheckedFile), attest(t, root, tinyID))
				writeText(t, abspath(root, tinyDir+"/README.md"), "extra\n")
			},
			want{bench.CheckedFile, 3, "checked[0].sha256", "a maintainer must re-check the submission and update the attestation, or remove it"}},
		{"an attestation for no submission",
			writeFile(bench.CheckedFile, "[[checked]]\nsubmission = \"alpha/v1/full/20260101_ghost\"\nsha256 = \""+strings.Repeat("0", 64)+"\"\nby = \"M\"\ndate = 2026-11-23\n"),
			want{bench.CheckedFile, 2, "checked[0].submission", "names no submission: there is no folder data/submissions/alpha/v1/full/20260101_ghost/"}},
		{"a malformed submission id",
			writeFile(bench.CheckedFile, "[[checked]]\nsubmission = \"../../etc\"\nsha256 = \""+strings.Repeat("0", 64)+"\"\nby = \"M\"\ndate = 2026-11-23\n"),
			want{bench.CheckedFile, 2, "checked[0].submission", "want name/version/split/folder"}},
		{"a malformed hash",
			writeFile(bench.CheckedFile, "[[checked]]\nsubmission = \""+tinyID+"\"\nsha256 = \"abc\"\nby = \"M\"\ndate = 2026-11-23\n"),
			want{bench.CheckedFile, 3, "checked[0].sha256", "want the 64 lowercase hexadecimal digits"}},
		{"an attestation without by and date",
			writeFile(bench.CheckedFile, "[[checked]]\nsubmission = \""+tinyID+"\"\nsha256 = \""+strings.Repeat("0", 64)+"\"\n"),
			want{bench.CheckedFile, 1, "checked[0].by", "is required"}},
		{"two attestations of one submission",
			func(t *testing.T, root string) {
				a := attest(t, root, tinyID)
				writeText(t, abspath(root, bench.CheckedFile), a+"\n"+a)
			},
			want{bench.CheckedFile, 9, "checked[1].submission", "attests " + tinyID + " again"}},
		{"an unknown key in checked.toml",
			func(t *testing.T, root string) {
				writeText(t, abspath(root, bench.CheckedFile), attest(t, root, tinyID)+"checked_by = \"me\"\n")
			},
			want{bench.CheckedFile, 7, "checked[0].checked_by", "unknown key"}},
		{"a byte-order mark on checked.toml",
			writeFile(bench.CheckedFile, "\ufeff[[checked]]\n"),
			want{bench.CheckedFile, 1, "", "starts with a byte-order mark"}},
	})
}

// SubmissionHash is what `sha256sum $(LC_ALL=C ls) | sha256sum` prints in
// the folder, and it refuses links as loading does.
func TestSubmissionHash(t *testing.T) {
	root := copyGood(t)
	const id = "alpha/v1/full/20260115_tiny-agent"
	got, err := bench.SubmissionHash(root, id)
	if err != nil {
		t.Fatal(err)
	}
	var list bytes.Buffer
	for _, name := range []string{"metadata.toml", "results.jsonl"} { // sorted
		fmt.Fprintf(&list, "%s  %s\n", sha256Hex(t, readText(t, abspath(root, tinyDir+"/"+name))), name)
	}
	if want := sha256Hex(t, list.String()); got != want {
		t.Errorf("SubmissionHash = %s, want %s", got, want)
	}
	for _, bad := range []string{"alpha/v1/full", "alpha/v1/full/../lite", "alpha/v1/full/20260115_nope", ""} {
		if _, err := bench.SubmissionHash(root, bad); err == nil {
			t.Errorf("SubmissionHash(%q): no error", bad)
		}
	}
	env := outside(t, root, ".env", secret)
	symlink(env, tinyDir+"/results.jsonl")(t, root)
	if _, err := bench.SubmissionHash(root, id); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("SubmissionHash with a linked file: %v, want a refusal", err)
	}
}

// The shipped data/checked.toml attests the reference submissions: every
// gold and empty run of the example datasets, and nothing else.
func TestShippedChecked(t *testing.T) {
	data, err := bench.Load(context.Background(), filepath.Join("..", "data"))
	if err != nil {
		t.Fatalf("the shipped data/ does not load: %v", err)
	}
	var checked, want []string
	for _, s := range data.Submissions {
		if s.Checked {
			checked = append(checked, s.ID())
		}
		if s.Dataset.Name == "example" && s.Reference && s.Results != nil {
			want = append(want, s.ID())
		}
	}
	if len(want) < 12 {
		t.Errorf("%d reference submissions of the example datasets, want gold and empty on full and lite of v2, v3 and v4", len(want))
	}
	if got, want := strings.Join(checked, " "), strings.Join(want, " "); got != want {
		t.Errorf("checked submissions = %s, want %s", got, want)
	}
}

func TestAttestationTOML(t *testing.T) {
	a := bench.Attestation{Submission: "a/v1/full/20260101_x", SHA256: strings.Repeat("ab", 32), By: `Q "quoted" \ back`,
		Date: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), Note: "line one\nline two\ttab \u0001"}
	got := a.TOML()
	want := "[[checked]]\nsubmission = \"a/v1/full/20260101_x\"\nsha256 = \"" + strings.Repeat("ab", 32) + "\"\n" +
		"by = \"Q \\\"quoted\\\" \\\\ back\"\ndate = 2026-11-23\nnote = \"line one\\nline two\\ttab \\u0001\"\n"
	if got != want {
		t.Errorf("TOML() =\n%s\nwant\n%s", got, want)
	}
}

// A slug names one system on a dataset version: a submission cannot take
// over another's page by reusing its slug.
func TestLoadSystemSlugs(t *testing.T) {
	runCases(t, []hostileCase{
		{"another model under the same slug", replace(liteDir+"/metadata.toml", `model = "Model X"`, `model = "Model Z"`),
			want{liteDir + "/metadata.toml", 4, "model", filepath.FromSlash(tinyDir) + `/metadata.toml says "Model X": the slug "tiny-agent" names one system on every split of alpha/v1`}},
		{"another name", replace(liteDir+"/metadata.toml", `name = "Tiny Agent + Model X"`, `name = "Totally Different"`),
			want{liteDir + "/metadata.toml", 2, "name", `is "Totally Different" but`}},
		{"other organisations", replace(liteDir+"/metadata.toml", `organisations = ["Acme"]`, `organisations = ["Evil Corp"]`),
			want{liteDir + "/metadata.toml", 5, "organisations", `is ["Evil Corp"] but`}},
		{"another site", replace(liteDir+"/metadata.toml", `site_url = "https://example.org/tiny"`, `site_url = "https://evil.example/"`),
			want{liteDir + "/metadata.toml", 7, "site_url", `is "https://evil.example/" but`}},
		{"same split, later run, other scaffold",
			chain(
				writeFile("submissions/alpha/v1/full/20260301_tiny-agent/metadata.toml",
					strings.Replace(readGood(t, tinyMeta), "date = 2026-01-15", "date = 2026-03-01", 1)+"\n"),
				replace("submissions/alpha/v1/full/20260301_tiny-agent/metadata.toml", `scaffold = "Tiny Agent"`, `scaffold = "Other"`),
				writeFile("submissions/alpha/v1/full/20260301_tiny-agent/results.jsonl", readGood(t, tinyResults)),
			),
			want{"submissions/alpha/v1/full/20260301_tiny-agent/metadata.toml", 3, "scaffold", `the slug "tiny-agent" names one system`}},
	})
}

func readGood(t *testing.T, rel string) string { return readText(t, abspath(goodRoot, rel)) }

// Submission folders may hold predictions and archives beside their
// results; each is checked and listed.
func TestLoadSubmissionFiles(t *testing.T) {
	gz := "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00" // an empty gzip stream
	t.Run("listed", func(t *testing.T) {
		root := copyGood(t)
		chain(
			writeFile(tinyDir+"/predictions.jsonl", `{"instance_id": "alpha-1", "model_name_or_path": "x", "model_patch": "diff"}`+"\n"+`{"instance_id": "alpha-3", "model_patch": ""}`+"\n"),
			writeFile(tinyDir+"/logs.tar.gz", gz),
			writeFile(tinyDir+"/trajectories.tar.gz", gz),
		)(t, root)
		data, err := bench.Load(context.Background(), root)
		if err != nil {
			t.Fatal(err)
		}
		s := data.SubmissionsFor(data.Dataset("alpha/v1"), "full")[0]
		var names []string
		for _, f := range s.Files {
			names = append(names, f.Name)
			if fi, err := os.Stat(f.Path); err != nil || fi.Size() != f.Size {
				t.Errorf("%s: path %s size %d (%v)", f.Name, f.Path, f.Size, err)
			}
		}
		if got, want := strings.Join(names, " "), "logs.tar.gz metadata.toml predictions.jsonl results.jsonl trajectories.tar.gz"; got != want {
			t.Errorf("Files = %s, want %s", got, want)
		}
	})
	const preds = tinyDir + "/predictions.jsonl"
	runCases(t, []hostileCase{
		{"prediction for an unknown instance", writeFile(preds, `{"instance_id": "alpha-404"}`+"\n"),
			want{preds, 1, "instance_id", `unknown instance id "alpha-404" in Alpha v1`}},
		{"prediction for an instance of another split", writeFile(liteDir+"/predictions.jsonl", `{"instance_id": "alpha-3"}`+"\n"),
			want{liteDir + "/predictions.jsonl", 1, "instance_id", `instance "alpha-3" is not in split "lite"`}},
		{"two predictions for one instance", writeFile(preds, `{"instance_id": "alpha-1"}`+"\n"+`{"instance_id": "alpha-1"}`+"\n"),
			want{preds, 2, "instance_id", `duplicate prediction for "alpha-1" (first on line 1)`}},
		{"prediction without an id", writeFile(preds, `{"model_patch": "x"}`+"\n"),
			want{preds, 1, "instance_id", "is required"}},
		{"prediction with a duplicate key", writeFile(preds, `{"instance_id": "alpha-1", "model_patch": "a", "model_patch": "b"}`+"\n"),
			want{preds, 1, "model_patch", "is given twice"}},
		{"prediction that is not an object", writeFile(preds, `"alpha-1"`+"\n"),
			want{preds, 1, "", "want a JSON object"}},
		{"empty predictions", writeFile(preds, ""),
			want{preds, 0, "", "holds no predictions"}},
		{"logs that are not gzip", writeFile(tinyDir+"/logs.tar.gz", "PK\x03\x04 a zip"),
			want{tinyDir + "/logs.tar.gz", 0, "", "is not a gzip file"}},
	})
}

// A trajectories archive is listed: the site makes a page and a path of
// each entry's instance id and attempt, so each name is checked, and one
// that fails is a problem naming the archive and the entry.
func TestLoadTrajectories(t *testing.T) {
	const traj = tinyDir + "/trajectories.tar.gz"
	good := [2]string{"alpha-1/attempt-1/trajectory.jsonl", `{"seq":1}` + "\n"}
	t.Run("indexed", func(t *testing.T) {
		root := copyGood(t)
		writeFile(traj, tarGz(t, good, [2]string{"alpha-3/", ""}))(t, root)
		data, err := bench.Load(context.Background(), root)
		if err != nil {
			t.Fatal(err)
		}
		s := data.SubmissionsFor(data.Dataset("alpha/v1"), "full")[0]
		sum := sha256.Sum256([]byte(good[1]))
		want := []bench.Trajectory{{Name: good[0], InstanceID: "alpha-1", Attempt: 1, Size: int64(len(good[1])), SHA256: hex.EncodeToString(sum[:])}}
		if fmt.Sprint(s.Trajectories) != fmt.Sprint(want) {
			t.Errorf("Trajectories = %+v, want %+v", s.Trajectories, want)
		}
		if got := s.Trajectories; len(got) != 1 || got[0].URLPath() != "alpha-1/attempt-1" {
			t.Errorf("URLPath of %+v, want alpha-1/attempt-1", got)
		}
		var read []string
		err = s.ReadTrajectories(func(*bench.Trajectory) bool { return true }, func(t *bench.Trajectory, b []byte) error {
			read = append(read, t.Name+" "+string(b))
			return nil
		})
		if err != nil || len(read) != 1 || read[0] != good[0]+" "+good[1] {
			t.Errorf("ReadTrajectories read %q (%v)", read, err)
		}
		// The archive loses the entry after Load: reading it fails.
		writeFile(traj, tarGz(t, [2]string{"alpha-3/", ""}))(t, root)
		err = s.ReadTrajectories(func(*bench.Trajectory) bool { return true }, func(*bench.Trajectory, []byte) error { return nil })
		if !errors.Is(err, bench.ErrTrajectoryChanged) {
			t.Errorf("ReadTrajectories of an archive without the entry: %v, want ErrTrajectoryChanged", err)
		}
	})
	entry := func(name string) mutation { return writeFile(traj, tarGz(t, good, [2]string{name, "{}\n"})) }
	runCases(t, []hostileCase{
		{"an entry out of the folder", entry("../x/attempt-1/trajectory.jsonl"),
			want{traj, 0, "", `entry "../x/attempt-1/trajectory.jsonl": want <instance>/attempt-<k>/trajectory.jsonl`}},
		{"an id with ..", entry("../attempt-1/trajectory.jsonl"),
			want{traj, 0, "", `entry "../attempt-1/trajectory.jsonl": instance id ".." contains ".."`}},
		{"an absolute name", entry("/alpha-1/attempt-1/trajectory.jsonl"),
			want{traj, 0, "", `entry "/alpha-1/attempt-1/trajectory.jsonl"`}},
		{"attempt 0", entry("alpha-1/attempt-0/trajectory.jsonl"),
			want{traj, 0, "", `"attempt-0" is not attempt-<k> with k from 1 to the submission's attempts (1)`}},
		{"attempt written 01", entry("alpha-1/attempt-01/trajectory.jsonl"), want{traj, 0, "", `"attempt-01" is not attempt-<k>`}},
		{"attempt past the submission's", entry("alpha-1/attempt-2/trajectory.jsonl"), want{traj, 0, "", `"attempt-2" is not attempt-<k>`}},
		{"another file name", entry("alpha-1/attempt-1/run.sh"), want{traj, 0, "", `entry "alpha-1/attempt-1/run.sh": want`}},
		{"an unknown instance", entry("alpha-404/attempt-1/trajectory.jsonl"),
			want{traj, 0, "", `entry "alpha-404/attempt-1/trajectory.jsonl": instance "alpha-404" is not in split "full"`}},
		{"an instance of another split", writeFile(liteDir+"/trajectories.tar.gz", tarGz(t, [2]string{"alpha-3/attempt-1/trajectory.jsonl", "{}\n"})),
			want{liteDir + "/trajectories.tar.gz", 0, "", `instance "alpha-3" is not in split "lite"`}},
		{"an entry twice", entry(good[0]), want{traj, 0, "", `entry "alpha-1/attempt-1/trajectory.jsonl" appears twice`}},
		{"a link", writeFile(traj, tarLink(t)), want{traj, 0, "", `entry "alpha-1/attempt-1/trajectory.jsonl" is not a regular file`}},
		{"not a tar", writeFile(traj, gzipped(t, "plain text, not a tar archive, long enough to be read as a header block? no")),
			want{traj, 0, "", "reading the archive"}},
	})
}

// tarGz is a .tar.gz of the entries, a name ending in / a folder.
func tarGz(t *testing.T, entries ...[2]string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := &tar.Header{Name: e[0], Mode: 0o644, Size: int64(len(e[1])), Typeflag: tar.TypeReg}
		if strings.HasSuffix(e[0], "/") {
			hdr.Typeflag, hdr.Size, hdr.Mode = tar.TypeDir, 0, 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// tarLink is a .tar.gz holding a symbolic link where a trajectory goes.
func tarLink(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: "alpha-1/attempt-1/trajectory.jsonl", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink}); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	if _, err := gz.Write([]byte(strings.Repeat(s, 20))); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func encodePNG(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func encodeJPEG(t *testing.T, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestLoadLogos(t *testing.T) {
	t.Run("good", func(t *testing.T) {
		root := copyGood(t)
		writeText(t, abspath(root, "logos/acme.png"), encodePNG(t, 32, 16))
		writeText(t, abspath(root, "logos/bigco.jpg"), encodeJPEG(t, 8, 8))
		data, err := bench.Load(context.Background(), root)
		if err != nil {
			t.Fatal(err)
		}
		a, b := data.Logos["acme"], data.Logos["bigco"]
		if len(data.Logos) != 2 || a.Ext != "png" || a.Width != 32 || a.Height != 16 || filepath.Base(a.Path) != "acme.png" ||
			b.Ext != "jpg" || b.Width != 8 {
			t.Errorf("Logos = %+v", data.Logos)
		}
	})
	runCases(t, []hostileCase{
		{"SVG", writeFile("logos/acme.svg", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`),
			want{"logos/acme.svg", 0, "", "a logo is <key>.png or <key>.jpg"}},
		{"name not a key", writeFile("logos/Acme.png", "x"),
			want{"logos/Acme.png", 0, "", "a logo is <key>.png or <key>.jpg"}},
		{"SVG named .png", writeFile("logos/acme.png", `<svg xmlns="http://www.w3.org/2000/svg"/>`),
			want{"logos/acme.png", 0, "", "is not a PNG image"}},
		{"JPEG named .png", func(t *testing.T, root string) { writeText(t, abspath(root, "logos/acme.png"), encodeJPEG(t, 8, 8)) },
			want{"logos/acme.png", 0, "", "is not a PNG image"}},
		{"truncated PNG", func(t *testing.T, root string) {
			writeText(t, abspath(root, "logos/acme.png"), encodePNG(t, 8, 8)[:40])
		},
			want{"logos/acme.png", 0, "", "is not a valid image"}},
		{"too wide", func(t *testing.T, root string) { writeText(t, abspath(root, "logos/acme.png"), encodePNG(t, 513, 4)) },
			want{"logos/acme.png", 0, "", "is 513×4 pixels; at most 512×512"}},
		{"over 100 KiB", truncate("logos/acme.jpg", 100<<10+1),
			want{"logos/acme.jpg", 0, "", "is 102401 bytes; at most 102400"}},
		{"no such organisation", func(t *testing.T, root string) { writeText(t, abspath(root, "logos/nobody.png"), encodePNG(t, 8, 8)) },
			want{"logos/nobody.png", 0, "", `no submission names an organisation whose key is "nobody"`}},
		{"two logos of one key", func(t *testing.T, root string) {
			writeText(t, abspath(root, "logos/acme.jpg"), encodeJPEG(t, 8, 8))
			writeText(t, abspath(root, "logos/acme.png"), encodePNG(t, 8, 8))
		}, want{"logos/acme.png", 0, "", `acme.jpg is the logo of "acme" too`}},
	})
}

func TestOrgKey(t *testing.T) {
	for in, want := range map[string]string{
		"OpenAI": "openai", "Google DeepMind": "google-deepmind", "  Meta  AI ": "meta-ai", "Alibaba (Qwen)": "alibaba-qwen",
		"01.AI": "01-ai", "Café Labs": "caf-labs", "清华大学": "", "": "", "--x--": "x", "A/B_C": "a-b-c",
	} {
		if got := bench.OrgKey(in); got != want {
			t.Errorf("OrgKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// The fields added with the data model's extension are checked too.
func TestLoadNewFields(t *testing.T) {
	runCases(t, []hostileCase{
		{"rank_by", replace(a1Manifest, `title = "Alpha"`, "title = \"Alpha\"\nrank_by = \"cost\""),
			want{a1Manifest, 4, "rank_by", `is "cost"; want "resolved" or "passed"`}},
		{"statements", replace(a1Manifest, `title = "Alpha"`, "title = \"Alpha\"\nstatements = \"hidden\""),
			want{a1Manifest, 4, "statements", `is "hidden"; want "public"`}},
		{"public statements without instances", replace(descManifest, `title = "Described"`, "title = \"Described\"\nstatements = \"public\""),
			want{descManifest, 4, "statements", `is "public" but instances.jsonl is missing`}},
		{"citation without a key", appendText(a1Manifest, "[citation]\ntitle = \"Alpha\""),
			want{a1Manifest, 25, "citation.key", "is required"}},
		{"citation key with a brace", appendText(a1Manifest, "[citation]\nkey = \"a}b\""),
			want{a1Manifest, 26, "citation.key", "may hold only letters, digits"}},
		{"citation kind", appendText(a1Manifest, "[citation]\nkey = \"a\"\nkind = \"book\""),
			want{a1Manifest, 27, "citation.kind", "want article, inproceedings, misc or techreport"}},
		{"citation year", appendText(a1Manifest, "[citation]\nkey = \"a\"\nyear = 20260"),
			want{a1Manifest, 27, "citation.year", "is 20260; want a year from 1900 to 2100"}},
		{"citation url", appendText(a1Manifest, "[citation]\nkey = \"a\"\nurl = \"javascript:alert(1)\""),
			want{a1Manifest, 27, "citation.url", "only http and https"}},
		{"101 authors", appendText(a1Manifest, "[citation]\nkey = \"a\"\nauthors = ["+strings.Repeat(`"A", `, 100)+`"A"]`),
			want{a1Manifest, 27, "citation.authors", "lists 101 authors; at most 100"}},
		{"author too long", appendText(a1Manifest, "[citation]\nkey = \"a\"\nauthors = [\""+strings.Repeat("a", 201)+"\"]"),
			want{a1Manifest, 27, "citation.authors[0]", "is 201 characters; at most 200"}},
		{"logs_url", appendText(tinyMeta, `logs_url = "file:///etc/passwd"`),
			want{tinyMeta, 12, "logs_url", "only http and https"}},
		{"trajectories_url", appendText(tinyMeta, `trajectories_url = "data:text/html,x"`),
			want{tinyMeta, 12, "trajectories_url", "only http and https"}},
		{"predictions_url with a user", appendText(tinyMeta, `predictions_url = "https://example.org@evil.example/p.jsonl"`),
			want{tinyMeta, 12, "predictions_url", "holds a user name or password"}},
	})
}

func sha256Hex(t *testing.T, s string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
