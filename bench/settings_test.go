package bench_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
)

func TestTestSettings(t *testing.T) {
	enc := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	// FeatureBench writes repo_settings as a JSON string holding an object.
	fb := enc(string(enc(map[string]any{
		"test_cmd":    "/opt/miniconda3/envs/testbed/bin/python -m pytest -rA -p no:cacheprovider --color=no --tb=short -W 'ignore::DeprecationWarning' -o addopts=",
		"timeout_run": 600, "timeout_one": 10, "install": "pip install -e .",
	})))
	in := &bench.Instance{RepoSettings: fb}
	ts, err := in.TestSettings()
	if err != nil {
		t.Fatal(err)
	}
	if ts.Python != "/opt/miniconda3/envs/testbed/bin/python" || ts.Test != 10*time.Second || ts.Run != 600*time.Second {
		t.Errorf("settings: %+v", ts)
	}
	if got := strings.Join(ts.Args, "|"); got != "--tb=short|-W|ignore::DeprecationWarning|-o|addopts=" {
		t.Errorf("args: %s", got)
	}
	for _, c := range []struct{ settings, err string }{
		{``, ""},
		{`null`, ""},
		{`{}`, ""},
		{`""`, ""},
		{`{"test_cmd": "pytest -rA"}`, ""},
		{`{"test_cmd": "python3 -m pytest -x --maxfail 2"}`, ""},
		{`[1]`, "not a JSON object"},
		{`"[1]"`, "not a JSON object"},
		{`{"timeout_one": -1}`, "timeout_one is -1"},
		{`{"timeout_run": "ten"}`, "does not decode"},
		{`{"test_cmd": "tox -e py"}`, `not "pytest …"`},
		{`{"test_cmd": "pytest -p xdist -n 4"}`, "the option -p is not one the harness passes on"},
		{`{"test_cmd": "pytest --rootdir=/"}`, "--rootdir=/ is not one"},
		{`{"test_cmd": "pytest tests/test_x.py"}`, "names tests/test_x.py"},
		{`{"test_cmd": "pytest; rm -rf /"}`, `';' would be read by a shell`},
		{`{"test_cmd": "pytest -k \"$(id)\""}`, "would be expanded"},
		{`{"test_cmd": "pytest -k 'unclosed"}`, "unclosed single quote"},
		{`{"test_cmd": "pytest --tb"}`, "lacks its value"},
	} {
		_, err := (&bench.Instance{RepoSettings: json.RawMessage(c.settings)}).TestSettings()
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.settings, err, c.err)
		}
	}
}

// FuzzTestSettings: whatever repo_settings holds, reading it returns, and
// what it accepts is what the harness may pass on: options it knows (and
// their values), an absolute interpreter path or none.
func FuzzTestSettings(f *testing.F) {
	for _, s := range []string{`"{\"test_cmd\": \"pytest -rA --tb=short\"}"`, `{"test_cmd": "python -m pytest -W ignore -k 'a or b'"}`,
		`{"timeout_one": 1e300}`, `{"test_cmd": "/x/python3.11 -m pytest -o a=b --maxfail=3"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := (&bench.Instance{RepoSettings: json.RawMessage(s)}).TestSettings()
		if err != nil {
			return
		}
		if ts.Python != "" && !strings.HasPrefix(ts.Python, "/") {
			t.Errorf("interpreter %q", ts.Python)
		}
		if ts.Test < 0 || ts.Run < 0 {
			t.Errorf("negative timeouts %+v", ts)
		}
		for i := 0; i < len(ts.Args); i++ {
			if !strings.HasPrefix(ts.Args[i], "-") {
				t.Errorf("a word that is not an option: %q in %q", ts.Args[i], ts.Args)
			}
			if n := ts.Args[i]; !strings.Contains(n, "=") && (n == "-W" || n == "-k" || n == "-m" || n == "-o" || strings.HasPrefix(n, "--") && n != "--verbose" && n != "--quiet" && n != "--exitfirst" && n != "--showlocals" && !strings.HasPrefix(n, "--disable") && !strings.HasPrefix(n, "--strict") && !strings.HasPrefix(n, "--no-") && n != "--continue-on-collection-errors") {
				i++ // its value
			}
		}
	})
}

// TestLoadBrokenImages: what a dataset says of its images is checked at
// load, naming the file, line and field.
func TestLoadBrokenImages(t *testing.T) {
	const dg = "sha256:de56f5520ac4236938dbbe9fe02d9bfd57f93c01e81b3fd941d94fedbd264b78"
	env := func(body string) mutation {
		return replace(a1Manifest, `license = "MIT"`, "license = \"MIT\"\n[repositories.environment]\n"+body)
	}
	instance := `images = "instance"` + "\n"
	cases := []struct {
		name   string
		mutate mutation
		want   want
	}{
		{"unknown images", replace(a1Manifest, `source_url = "https://example.org/alpha"`, `source_url = "https://example.org/alpha"`+"\nimages = \"docker\""),
			want{a1Manifest, 9, "images", `is "docker"; want "build"`}},
		{"a base image by tag", env(`base_image = "python:3.12-slim"`),
			want{a1Manifest, 15, "repositories[0].environment.base_image", "not pinned by digest"}},
		{"a bad base image", env(`base_image = "Python@` + dg + `"`),
			want{a1Manifest, 15, "repositories[0].environment.base_image", "must be lowercase"}},
		{"Debian packages on a registry base", env(`base_image = "127.0.0.1:5077/python@` + dg + `"` + "\npackages = [\"python3-yaml\"]"),
			want{a1Manifest, 16, "repositories[0].environment.packages", "go on the Debian bases only"}},
		{"a relative interpreter", env(`interpreter = "bin/python"`),
			want{a1Manifest, 15, "repositories[0].environment.interpreter", "want an absolute path"}},
		{"an interpreter with a space", env(`interpreter = "/opt/my env/python"`),
			want{a1Manifest, 15, "repositories[0].environment.interpreter", "want an absolute path"}},
		{"an instance without its image", replace(a1Manifest, "[[repositories]]", instance+"[[repositories]]"),
			want{a1Instances, 1, "image_name", `is required: the dataset's images are the instances' own`}},
		{"a bad image_name", chain(replace(a1Manifest, "[[repositories]]", instance+"[[repositories]]"),
			replace(a1Instances, `"base_commit": "0123abc",`, `"base_commit": "0123abc", "image_name": "Bad Name",`)),
			want{a1Instances, 1, "image_name", "invalid reference format"}},
		{"a test command the harness cannot run", chain(replace(a1Manifest, "[[repositories]]", instance+"[[repositories]]"),
			replace(a1Instances, `"base_commit": "0123abc",`, `"base_commit": "0123abc", "image_name": "r.example/i:1", "repo_settings": "{\"test_cmd\": \"pytest -p evil\"}",`)),
			want{a1Instances, 1, "repo_settings", "the option -p is not one"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkMutation(t, c.mutate, c.want) })
	}
}
