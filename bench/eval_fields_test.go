package bench_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/featbench/featbench/bench"
)

// TestLoadEvalFields covers what the evaluation brings to the data model:
// a repository's source and environment and the dataset's layout in the
// manifest, and the fields cmd/eval adds to a result.
func TestLoadEvalFields(t *testing.T) {
	results := tinyResults
	const r1 = `"cost": 0.5, "dataset": "alpha/v1"}`
	repo := `license = "MIT"`
	cases := []struct {
		name   string
		mutate mutation
		want   want
	}{
		{"unknown layout", replace(a1Manifest, `source_url = "https://example.org/alpha"`, "source_url = \"https://example.org/alpha\"\nlayout = \"flat\""),
			want{a1Manifest, 9, "layout", `want "complete"`}},
		{"unknown level2", replace(a1Manifest, `source_url = "https://example.org/alpha"`, "source_url = \"https://example.org/alpha\"\nlevel2 = \"scratch\""),
			want{a1Manifest, 9, "level2", `want "agent_code" or "in_repo"`}},
		{"source with path and git", replace(a1Manifest, repo, repo+"\n\n[repositories.source]\npath = \"src\"\ngit = \"file:///x\"\ncommit = \"abc1234\""),
			want{a1Manifest, -1, "repositories[0].source", "both path and git"}},
		{"source path outside the project", replace(a1Manifest, repo, repo+"\n\n[repositories.source]\npath = \"../secrets\""),
			want{a1Manifest, -1, "repositories[0].source.path", "clean path inside the project"}},
		{"absolute source path", replace(a1Manifest, repo, repo+"\n\n[repositories.source]\npath = \"/etc\""),
			want{a1Manifest, -1, "repositories[0].source.path", "not a path relative"}},
		{"git source without a commit", replace(a1Manifest, repo, repo+"\n\n[repositories.source]\ngit = \"https://example.org/acme/widgets.git\""),
			want{a1Manifest, -1, "repositories[0].source.commit", "hex id"}},
		{"git source that is an option", replace(a1Manifest, repo, repo+"\n\n[repositories.source]\ngit = \"--upload-pack=evil\"\ncommit = \"abc1234\""),
			want{a1Manifest, -1, "repositories[0].source.git", "may not start with '-'"}},
		{"package that is not a Debian name", replace(a1Manifest, repo, repo+"\n\n[repositories.environment]\npackages = [\"python3-numpy; rm -rf /\"]"),
			want{a1Manifest, -1, "repositories[0].environment.packages[0]", "not a Debian package name"}},
		{"python no base image has", replace(a1Manifest, repo, repo+"\n\n[repositories.environment]\npython = \"3.12\""),
			want{a1Manifest, 16, "repositories[0].environment.python", `is "3.12"; the base images have Python "3.11" (Debian bookworm`}},
		{"install command over lines", replace(a1Manifest, repo, repo+"\n\n[repositories.environment]\ninstall = [\"pip install .\\nrm -rf /\"]"),
			want{a1Manifest, -1, "repositories[0].environment.install[0]", "line break"}},
		{"network other than build", replace(a1Manifest, repo, repo+"\n\n[repositories.environment]\nnetwork = \"always\""),
			want{a1Manifest, -1, "repositories[0].environment.network", `want "build"`}},
		{"lock without network", replace(a1Manifest, repo, repo+"\n\n[repositories.environment]\n[[repositories.environment.lock]]\nname = \"pluggy\"\nversion = \"1.5.0\""),
			want{a1Manifest, -1, "repositories[0].environment.lock", "network is not"}},
		{"index URL with credentials", replace(a1Manifest, repo, repo+"\n\n[repositories.environment]\nnetwork = \"build\"\nindex_url = \"https://me:secret@pypi.example/simple/\""),
			want{a1Manifest, -1, "repositories[0].environment.index_url", "credentials"}},
		{"lock hash not sha256", replace(a1Manifest, repo, repo+"\n\n[repositories.environment]\nnetwork = \"build\"\n[[repositories.environment.lock]]\nname = \"pluggy\"\nversion = \"1.5.0\"\nhashes = [\"md5:00\"]"),
			want{a1Manifest, -1, "repositories[0].environment.lock[0].hashes[0]", "is not sha256:HEX"}},
		{"lock name not normalized", replace(a1Manifest, repo, repo+"\n\n[repositories.environment]\nnetwork = \"build\"\n[[repositories.environment.lock]]\nname = \"Py_Test\"\nversion = \"8.0\""),
			want{a1Manifest, -1, "repositories[0].environment.lock[0].name", "not a normalized package name"}},
		{"unknown apply method", replace(results, r1, `"cost": 0.5, "dataset": "alpha/v1", "apply_method": "magic"}`),
			want{results, 1, "apply_method", `want one of "git apply"`}},
		{"apply method without the patch applied", replace(liteResults, `"files_changed": 0, "failure_modes"`, `"files_changed": 0, "apply_method": "patch", "failure_modes"`),
			want{liteResults, 1, "apply_method", "patch_applied is false"}},
		{"file recall above 1", replace(results, r1, `"cost": 0.5, "dataset": "alpha/v1", "file_recall": 1.5}`),
			want{results, 1, "file_recall", "want 0 to 1"}},
		{"negative duration", replace(results, r1, `"cost": 0.5, "dataset": "alpha/v1", "duration": -3}`),
			want{results, 1, "duration", ""}},
		{"more attempts resolved than run", replace(results, r1, `"cost": 0.5, "dataset": "alpha/v1", "attempts": 2, "attempts_resolved": 3}`),
			want{results, 1, "attempts_resolved", "2 attempts were evaluated"}},
		{"resolved without a resolved attempt", replace(results, r1, `"cost": 0.5, "dataset": "alpha/v1", "attempts": 3, "attempts_resolved": 0}`),
			want{results, 1, "attempts_resolved", "resolved is true"}},
		{"negative turns", replace(results, r1, `"cost": 0.5, "dataset": "alpha/v1", "turns": -1}`),
			want{results, 1, "turns", "is -1"}},
		// attempts_passed: each attempt's fail-to-pass count (alpha-1 has two tests).
		{"attempts_passed without attempts", replace(results, r1, `"cost": 0.5, "dataset": "alpha/v1", "attempts_passed": [2]}`),
			want{results, 1, "attempts_passed", "lists 1 counts but attempts is 0"}},
		{"attempts_passed of another length", replace(results, r1, `"cost": 0.5, "dataset": "alpha/v1", "attempts": 3, "attempts_resolved": 1, "attempts_passed": [2, 0]}`),
			want{results, 1, "attempts_passed", "lists 2 counts but attempts is 3"}},
		{"attempts_passed above the tests", replace(results, r1, `"cost": 0.5, "dataset": "alpha/v1", "attempts": 2, "attempts_resolved": 1, "attempts_passed": [2, 3]}`),
			want{results, 1, "attempts_passed[1]", "is 3; the instance has 2 FAIL_TO_PASS tests"}},
		{"attempts_passed negative", replace(results, r1, `"cost": 0.5, "dataset": "alpha/v1", "attempts": 2, "attempts_resolved": 1, "attempts_passed": [2, -1]}`),
			want{results, 1, "attempts_passed[1]", "is -1"}},
		{"resolved attempts that did not pass every F2P test", replace(results, r1, `"cost": 0.5, "dataset": "alpha/v1", "attempts": 2, "attempts_resolved": 2, "attempts_passed": [2, 1]}`),
			want{results, 1, "attempts_passed", "attempts_resolved is 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkMutation(t, c.mutate, c.want)
		})
	}
}

// TestLoadEvalFieldsAccepted: a manifest with a source, an environment and
// a layout, and results with every eval field, load.
func TestLoadEvalFieldsAccepted(t *testing.T) {
	root := copyGood(t)
	replace(a1Manifest, `license = "MIT"`, "license = \"MIT\"\n\n[repositories.source]\npath = \"examples/widgets\"\n\n[repositories.environment]\npython = \"3.11\"\npackages = [\"python3-numpy\"]\ninstall = [\"pip install --no-index --no-deps --no-build-isolation -e .\"]")(t, root)
	replace(a1Manifest, `source_url = "https://example.org/alpha"`, "source_url = \"https://example.org/alpha\"\nlayout = \"masked\"\nlevel2 = \"in_repo\"")(t, root)
	replace(tinyDir+"/results.jsonl", `"cost": 0.5, "dataset": "alpha/v1"}`, `"cost": 0.5, "dataset": "alpha/v1", "apply_method": "git apply --3way", "file_recall": 0.5, "duration": 12.25, "attempts": 3, "attempts_resolved": 2, "attempts_passed": [2, 1, 2], "turns": 17}`)(t, root)
	data, err := bench.Load(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Dataset("alpha/v1")
	r := ds.Repository("acme/widgets")
	if ds.LayoutOrDefault() != bench.LayoutMasked || ds.Level2OrDefault() != bench.Level2InRepo ||
		r.Source == nil || r.Source.Path != "examples/widgets" || r.Environment == nil || len(r.Environment.Install) != 1 {
		t.Errorf("manifest read as layout %q, level2 %q, repository %+v", ds.Layout, ds.Level2, r)
	}
	var res *bench.Result
	for _, s := range data.Submissions {
		if s.ID() == "alpha/v1/full/20260115_tiny-agent" {
			res = s.ResultFor("alpha-1")
		}
	}
	if res == nil || res.ApplyMethod != "git apply --3way" || res.FileRecall == nil || *res.FileRecall != 0.5 ||
		res.Duration == nil || *res.Duration != 12.25 || res.Attempts != 3 || res.AttemptsResolved != 2 ||
		fmt.Sprint(res.AttemptsPassed) != "[2 1 2]" || res.Turns == nil || *res.Turns != 17 {
		t.Errorf("result read as %+v", res)
	}
}
