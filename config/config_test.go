package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/config"
)

// write puts src in a fresh featbench.toml and returns its path.
func write(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), config.FileName)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadMissingFileGivesDefaults(t *testing.T) {
	cfg, err := config.Load(filepath.Join(t.TempDir(), "nope.toml"))
	if err != nil {
		t.Fatalf("Load(missing) = %v", err)
	}
	if !reflect.DeepEqual(cfg, config.Default()) {
		t.Errorf("Load(missing) = %+v, want Default() %+v", cfg, config.Default())
	}
	d := config.Default().Site
	for _, c := range []struct{ name, got, want string }{
		{"title", d.Title, "FeatBench"},
		{"base_url", d.BaseURL, "/"},
		{"output", d.Output, "public"},
		{"data", d.Data, "data"},
		{"default_split", d.DefaultSplit, "full"},
		{"BasePath", d.BasePath(), "/"},
	} {
		if c.got != c.want {
			t.Errorf("default %s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if d.Absolute() {
		t.Error("default base_url is absolute")
	}
}

func TestLoadEmptyFileGivesDefaults(t *testing.T) {
	cfg, err := config.Load(write(t, "# nothing\n"))
	if err != nil || !reflect.DeepEqual(cfg, config.Default()) {
		t.Errorf("Load(empty) = %+v, %v", cfg, err)
	}
}

func TestLoadKeepsDefaultsForOmittedKeys(t *testing.T) {
	cfg, err := config.Load(write(t, "[site]\ntitle = \"Mine\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Site.Title != "Mine" || cfg.Site.Output != "public" || cfg.Site.Data != "data" || cfg.Site.DefaultSplit != "full" {
		t.Errorf("site = %+v", cfg.Site)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string
		subs []string // all must be in the error
	}{
		{"unknown key in [site]", "[site]\ntitle = \"x\"\nbase_ulr = \"/x/\"\n",
			[]string{`"site.base_ulr"`, "unknown key"}},
		{"unknown top-level key", "titel = \"x\"\n",
			[]string{`"titel"`, "unknown key"}},
		{"unknown table", "[sitee]\ntitle = \"x\"\n",
			[]string{`"sitee`, "unknown key"}},
		{"unknown key in a badge", "[[site.badges]]\nlabel = \"a\"\nvalue = \"b\"\nlink = \"https://x.org\"\n",
			[]string{`"site.badges[0].link"`, "unknown key", config.FileName + ":4:"}},
		{"malformed: unterminated string on line 3", "[site]\ntitle = \"ok\"\ndescription = \"oops\n",
			[]string{config.FileName + ":3:"}},
		{"malformed: missing value on line 4", "# comment\n[site]\ntitle = \"ok\"\noutput =\n",
			[]string{config.FileName + ":4:"}},
		{"malformed: duplicate key on line 3", "[site]\ntitle = \"a\"\ntitle = \"b\"\n",
			[]string{config.FileName + ":3:"}},
		{"wrong type", "[site]\ntitle = 3\n",
			[]string{config.FileName}},
		{"output .", "[site]\noutput = \".\"\n",
			[]string{"site.output", "would overwrite the project"}},
		{"output ./", "[site]\noutput = \"./\"\n",
			[]string{"site.output"}},
		{"output empty", "[site]\noutput = \"\"\n",
			[]string{"site.output"}},
		{"output /", "[site]\noutput = \"/\"\n",
			[]string{"site.output"}},
		{"javascript: badge URL", "[[site.badges]]\nlabel = \"a\"\nvalue = \"b\"\nurl = \"javascript:alert(1)\"\n",
			[]string{"site.badges[0].url", "only http(s) URLs or site paths"}},
		{"second badge bad", "[[site.badges]]\nurl = \"https://ok.org\"\n[[site.badges]]\nurl = \"JavaScript:alert(1)\"\n",
			[]string{"site.badges[1].url"}},
		{"data: link URL", "[[site.links]]\ntitle = \"a\"\nurl = \"data:text/html,hi\"\n",
			[]string{"site.links[0].url"}},
		{"protocol-relative link", "[[site.links]]\ntitle = \"a\"\nurl = \"//evil.example/\"\n",
			[]string{"site.links[0].url"}},
		{"unparsable link", "[[site.links]]\ntitle = \"a\"\nurl = \"https://a b/\"\n",
			[]string{"site.links[0].url"}},
		{"javascript: base_url", "[site]\nbase_url = \"javascript:alert(1)\"\n",
			[]string{"site.base_url"}},
		{"ftp base_url", "[site]\nbase_url = \"ftp://x.org/\"\n",
			[]string{"site.base_url"}},
		{"protocol-relative base_url", "[site]\nbase_url = \"//evil.example/x/\"\n",
			[]string{"site.base_url"}},
		{"triple-slash base_url", "[site]\nbase_url = \"///evil.example/x/\"\n",
			[]string{"site.base_url"}},
		{"backslash base_url", "[site]\nbase_url = '/\\evil.example/'\n",
			[]string{"site.base_url", "backslash"}},
		{"space in base_url", "[site]\nbase_url = \"/a b/\"\n",
			[]string{"site.base_url", "whitespace"}},
		{"output inside data", "[site]\ndata = \"data\"\noutput = \"data/public\"\n",
			[]string{config.FileName + ":3:", "site.output", "inside the data folder"}},
		{"output deep inside data", "[site]\ndata = \"./d\"\noutput = \"d/x/../y/site\"\n",
			[]string{"site.output", "inside the data folder"}},
		{"output is data", "[site]\noutput = \"data\"\n",
			[]string{"site.output", "would overwrite the data folder"}},
		{"output holds data", "[site]\noutput = \"x\"\ndata = \"x/data\"\n",
			[]string{"site.output", "would overwrite the data folder"}},
		{"data at /", "[site]\ndata = \"/\"\n",
			[]string{config.FileName + ":2:", "site.data", "filesystem root"}},
		{"data is the project", "[site]\ndata = \".\"\n",
			[]string{"site.data", "project folder itself"}},
		{"data is the project, spelt ./", "[site]\ndata = \"./\"\n",
			[]string{"site.data", "project folder itself"}},
		{"data empty", "[site]\ndata = \"\"\n",
			[]string{"site.data", "empty"}},
		{"backslash-slash link", "[[site.links]]\ntitle = \"a\"\nurl = '/\\evil.example/'\n",
			[]string{config.FileName + ":3:", "site.links[0].url", "backslash"}},
		{"double-backslash link", "[[site.links]]\ntitle = \"a\"\nurl = '\\\\evil.example/'\n",
			[]string{"site.links[0].url", "backslash"}},
		{"backslash in a path", "[[site.badges]]\nurl = 'datasets\\x'\n",
			[]string{"site.badges[0].url", "backslash"}},
		{"triple-slash link", "[[site.links]]\nurl = \"///evil.example/\"\n",
			[]string{"site.links[0].url", "another host"}},
		{"tab in link", "[[site.links]]\nurl = \"/a\\tb\"\n",
			[]string{"site.links[0].url", "whitespace"}},
		{"control character in link", "[[site.links]]\nurl = \"/a\\u0001b\"\n",
			[]string{"site.links[0].url", "control"}},
		{"no-break space in badge", "[[site.badges]]\nurl = \"https://x.org/\\u00a0\"\n",
			[]string{"site.badges[0].url", "whitespace"}},
		{"leading space in link", "[[site.links]]\nurl = \" //evil.example/\"\n",
			[]string{"site.links[0].url"}},
		{"collect not a table", "collect = 3\n",
			[]string{"collect", "is an integer (3); want a table"}},
		{"unknown key in a board", "[site]\ntitle = \"x\"\n\n[site.boards.\"featurebench\"]\ndefault_splt = \"lite\"\n",
			[]string{`"site.boards.featurebench.default_splt"`, "unknown key", config.FileName + ":5:"}},
		{"board key that is no dataset name", "[site.boards.\"../x\"]\ndefault_split = \"lite\"\n",
			[]string{"site.boards.../x", "not a dataset's name", config.FileName + ":1:"}},
		{"board split that is no split name", "[site.boards.featurebench]\ndefault_split = \"a/b\"\n",
			[]string{"site.boards.featurebench.default_split", "not a split name", config.FileName + ":2:"}},
		{"filter tag twice", "[site.boards.featurebench]\nfilter_tags = [\"a\", \"a\"]\n",
			[]string{"site.boards.featurebench.filter_tags[1]", "listed twice"}},
		{"empty filter tag", "[site.boards.featurebench]\nfilter_tags = [\" \"]\n",
			[]string{"site.boards.featurebench.filter_tags[0]", "is empty"}},
		{"mark without an explanation", "[site.boards.featurebench.marks]\n\"(mock)\" = \"\"\n",
			[]string{"site.boards.featurebench.marks.(mock)", "wants an explanation"}},
		{"filter tags not a list", "[site.boards.featurebench]\nfilter_tags = \"a\"\n",
			[]string{"site.boards.featurebench.filter_tags", config.FileName + ":2:"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(t, c.src)
			_, err := config.Load(p)
			if err == nil {
				t.Fatalf("Load succeeded on\n%s", c.src)
			}
			for _, s := range c.subs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name the file %s", err, p)
			}
		})
	}
}

func TestLoadCollect(t *testing.T) {
	cfg, err := config.Load(write(t, `[collect]
workers = 2
release_date = "2026-11-01"
lite = 3

[[collect.repo]]
repository = "featbench/textkit"
source = "examples/textkit"
install = ["pip install -e ."]
import_name = "textkit"
line_budget = [10, 20]

[[collect.repo]]
repository = "o/second"
source = "/src/second.git"
commit = "0123456789abcdef0123456789abcdef01234567"
install = ["pip install ."]
import_name = "second"
levels = [1]

[llm]
endpoint = "http://localhost:11434/v1"
model = "qwen2.5-coder"
`))
	if err != nil {
		t.Fatal(err)
	}
	co := cfg.Collect
	if co.Work != ".cache/collect" || co.Workers != 2 || co.Lite != 3 || len(co.Repos) != 2 {
		t.Fatalf("collect = %+v", co)
	}
	r := co.Repos[0]
	// Keys a table leaves out take their defaults, each table its own.
	if r.P2PFiles[0] != 1 || r.P2PFiles[1] != 5 || r.LineBudget[0] != 10 || r.LineBudget[1] != 20 ||
		r.F2PPassRateMax != 0.3 || r.MinLines != 100 || r.MinF2PPoints != 10 || len(r.Levels) != 2 || r.Timeouts().TestFile != 10*time.Minute {
		t.Errorf("repo[0] = %+v", r)
	}
	if r2 := co.Repos[1]; r2.LineBudget[0] != 3000 || len(r2.Levels) != 1 || r2.Commit == "" {
		t.Errorf("repo[1] = %+v", r2)
	}
	if cfg.LLM.Model != "qwen2.5-coder" || cfg.LLM.Timeout != "3m" {
		t.Errorf("llm = %+v", cfg.LLM)
	}
	_, err = config.Load(write(t, `[collect]
workers = 0
statements = "secret"
[[collect.repo]]
repository = "no-slash"
source = ""
commit = "abc"
python = "3.12"
import_name = "1bad"
p2p_files = [3, 1]
line_budget = [100]
f2p_pass_rate_max = 1.5
forbidden_links = ["javascript:alert(1)"]
earliest_test_date = "May 2022"
levels = [3]
test_file_timeout = "forever"
installl = ["x"]
[llm]
endpoint = "ftp://x"
`))
	for _, want := range []string{"collect.workers", "collect.statements", "collect.repo[0].repository", "collect.repo[0].source", "collect.repo[0].commit",
		"collect.repo[0].python", "collect.repo[0].import_name", "collect.repo[0].p2p_files", "collect.repo[0].line_budget",
		"collect.repo[0].f2p_pass_rate_max", "collect.repo[0].forbidden_links[0]", "collect.repo[0].earliest_test_date",
		"collect.repo[0].levels", "collect.repo[0].test_file_timeout", `did you mean "collect.repo[0].install"`, "llm.endpoint", "llm.model"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}

// TestLoadCollectNetwork: the package index keys of a repository, as
// given and as refused.
func TestLoadCollectNetwork(t *testing.T) {
	const repo = "[[collect.repo]]\nrepository = \"a/b\"\nsource = \"src\"\ninstall = [\"pip install -e .\"]\nimport_name = \"b\"\n"
	cfg, err := config.Load(write(t, repo+"network = \"build\"\nindex_url = \"http://127.0.0.1:8080/simple/\"\nexclude_newer = \"2024-01-31\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Collect.Repos[0]; r.Network != config.NetworkBuild || r.IndexURL == "" || r.IndexTimeout != "60s" {
		t.Errorf("repo = %+v", r)
	}
	_, err = config.Load(write(t, repo+"network = \"always\"\nindex_url = \"https://u:p@pypi.example/simple/\"\nextra_index_url = [\"ftp://x\"]\nexclude_newer = \"commit\"\nindex_timeout = \"soon\"\n"))
	for _, want := range []string{"collect.repo[0].network", `"collect.repo[0].index_url": "https://u:p@pypi.example/simple/" holds credentials`,
		"collect.repo[0].extra_index_url[0]", `"collect.repo[0].exclude_newer": is "commit", but the source has no commit`, "collect.repo[0].index_timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %s", err, want)
		}
	}
	_, err = config.Load(write(t, repo+"index_url = \"https://pypi.org/simple/\"\n"))
	if err == nil || !strings.Contains(err.Error(), `"collect.repo[0].index_url": is set, but network is not "build"`) {
		t.Errorf("an index without network: %v", err)
	}
}

func TestLoadEval(t *testing.T) {
	cfg, err := config.Load(write(t, "[eval]\nworkers = 4\nmemory = \"2g\"\ncpus = 2\ntest_file_timeout = \"90s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Eval
	testFile, test, instance := e.Durations()
	if e.Workers != 4 || e.Memory != "2g" || e.CPUs != 2 || testFile != 90*time.Second || test != 0 || instance != 30*time.Minute ||
		e.Pids != 1024 || e.ImagePrefix != "featbench" || e.Runs != "runs" || e.RerunWholeMax != 300 {
		t.Errorf("eval = %+v (durations %s %s %s), want the given keys over the defaults", e, testFile, test, instance)
	}
	if n, err := config.ParseBytes(e.Memory); err != nil || n != 2<<30 {
		t.Errorf("ParseBytes(%q) = %d, %v", e.Memory, n, err)
	}
	// Every problem of the table at once.
	_, err = config.Load(write(t, "[eval]\nworkers = 0\nmemory = \"lots\"\ncpus = \"two\"\ntest_timeout = \"-1s\"\ninstance_timeout = \"soon\"\npids = 3\nimage_prefix = \"Bad Prefix\"\nrerun_whole_max = -1\nworkres = 2\n"))
	for _, want := range []string{"eval.workers", "eval.memory", "eval.cpus", "eval.test_timeout", "eval.instance_timeout", "eval.pids", "eval.image_prefix", "eval.rerun_whole_max", `did you mean "eval.workers"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}

func TestLoadEvalSwarm(t *testing.T) {
	cfg, err := config.Load(write(t, "[eval]\nbackend = \"swarm\"\n[eval.swarm]\nmanager = \"unix:///run/featbench-swarm/node1.sock\"\nregistry = \"10.77.0.1:5077\"\npush_registry = \"127.0.0.1:5077\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Eval.Swarm; cfg.Eval.Backend != "swarm" || s.Manager != "unix:///run/featbench-swarm/node1.sock" || s.Registry != "10.77.0.1:5077" || s.PushRegistry != "127.0.0.1:5077" {
		t.Errorf("eval = %+v, want the swarm's keys", cfg.Eval)
	}
	if cfg, err := config.Load(write(t, "[eval]\nworkers = 2\n")); err != nil || cfg.Eval.Backend != "local" {
		t.Errorf("default backend = %q (%v), want local", cfg.Eval.Backend, err)
	}
	// The file, the line and the field of each problem.
	path := write(t, "[eval]\nbackend = \"swarm\"\n\n[eval.swarm]\nmanager = \"somewhere\"\nregistry = \"no port\"\nregistyr = \"x\"\n")
	_, err = config.Load(path)
	for _, want := range []string{path + ":5", "eval.swarm.manager", path + ":6", "eval.swarm.registry", `did you mean "eval.swarm.registry"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
	_, err = config.Load(write(t, "[eval]\nbackend = \"kubernetes\"\n"))
	if err == nil || !strings.Contains(err.Error(), "eval.backend") || !strings.Contains(err.Error(), "local, swarm") {
		t.Errorf("error %v does not name eval.backend and its values", err)
	}
	// backend = "swarm" needs its table.
	if _, err := config.Load(write(t, "[eval]\nbackend = \"swarm\"\n")); err == nil || !strings.Contains(err.Error(), "eval.swarm.manager") {
		t.Errorf("a swarm without a manager: error %v, want one naming eval.swarm.manager", err)
	}
}

func TestBaseURL(t *testing.T) {
	for _, c := range []struct {
		base     string
		wantBase string
		basePath string
		absolute bool
	}{
		{"/featbench", "/featbench/", "/featbench/", false},
		{"/featbench/", "/featbench/", "/featbench/", false},
		{"/", "/", "/", false},
		{"", "/", "/", false},
		{"https://x.github.io/proj/", "https://x.github.io/proj/", "/proj/", true},
		{"https://x.github.io/proj", "https://x.github.io/proj/", "/proj/", true},
		{"https://x.github.io", "https://x.github.io/", "/", true},
		{"http://localhost:8080/a/b", "http://localhost:8080/a/b/", "/a/b/", true},
	} {
		t.Run(c.base, func(t *testing.T) {
			cfg, err := config.Load(write(t, "[site]\nbase_url = \""+c.base+"\"\n"))
			if err != nil {
				t.Fatal(err)
			}
			s := cfg.Site
			if s.BaseURL != c.wantBase || s.BasePath() != c.basePath || s.Absolute() != c.absolute {
				t.Errorf("base_url %q: BaseURL %q BasePath %q Absolute %v; want %q %q %v",
					c.base, s.BaseURL, s.BasePath(), s.Absolute(), c.wantBase, c.basePath, c.absolute)
			}
		})
	}
	// BasePath and Absolute on a Site built by hand, without Load.
	for _, c := range []struct {
		base, path string
		abs        bool
	}{
		{"/featbench", "/featbench/", false},
		{"", "/", false},
		{"https://x.github.io", "/", true},
		{"https://x.github.io/proj", "/proj/", true},
		{"https://a b/", "/", false}, // unparsable: the root
	} {
		s := config.Site{BaseURL: c.base}
		if s.BasePath() != c.path || s.Absolute() != c.abs {
			t.Errorf("Site{%q}: BasePath %q Absolute %v, want %q %v", c.base, s.BasePath(), s.Absolute(), c.path, c.abs)
		}
	}
}

func TestLinksAllowed(t *testing.T) {
	cfg, err := config.Load(write(t, `[[site.badges]]
label = "paper"
value = "arXiv"
url = "https://arxiv.org/abs/1"

[[site.badges]]
label = "data"
value = "JSONL"
url = "datasets/"

[[site.badges]]
label = "no link"
value = "x"

[[site.links]]
title = "Home"
url = "/"

[[site.links]]
title = "Docs"
url = "http://example.org/docs#x"
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Site.Badges) != 3 || len(cfg.Site.Links) != 2 {
		t.Fatalf("badges %d links %d", len(cfg.Site.Badges), len(cfg.Site.Links))
	}
	if b := cfg.Site.Badges[1]; b.Label != "data" || b.Value != "JSONL" || b.URL != "datasets/" {
		t.Errorf("badge[1] = %+v", b)
	}
	if l := cfg.Site.Links[1]; l.Title != "Docs" || l.URL != "http://example.org/docs#x" {
		t.Errorf("link[1] = %+v", l)
	}
}

func TestRepositoryConfigLoads(t *testing.T) {
	cfg, err := config.Load("../" + config.FileName)
	if err != nil {
		t.Fatalf("the repository's own %s: %v", config.FileName, err)
	}
	s := cfg.Site
	if s.Title == "" || s.Output == "" || s.Data == "" || s.DefaultSplit == "" {
		t.Errorf("site = %+v", s)
	}
	if !strings.HasSuffix(s.BaseURL, "/") || !strings.HasPrefix(s.BasePath(), "/") || !strings.HasSuffix(s.BasePath(), "/") {
		t.Errorf("base_url %q, BasePath %q", s.BaseURL, s.BasePath())
	}
	if s.Absolute() != strings.Contains(s.BaseURL, "://") {
		t.Errorf("Absolute() = %v for %q", s.Absolute(), s.BaseURL)
	}
	if reflect.DeepEqual(cfg, config.Default()) {
		t.Error("the repository's config loaded as the defaults: was the file found?")
	}
}

// TestLoadReportsEveryProblem checks that one run lists every problem of
// the file, each with its line, in file order, not just the first.
func TestLoadReportsEveryProblem(t *testing.T) {
	p := write(t, `titel = "x"
[site]
base_ulr = "/x/"
title = 3
descripton = "d"
output = "data/out"

[[site.badges]]
label = "a"
link = "https://x.org"

[[site.badges]]
url = "//evil.example/"

[[site.links]]
title = "t"
url = "javascript:alert(1)"
`)
	_, err := config.Load(p)
	var ps config.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Load = %v, want config.Problems", err)
	}
	want := []struct {
		line int
		key  string
		subs []string
	}{
		{1, "titel", []string{"unknown key", `did you mean "site.title"?`}},
		{3, "site.base_ulr", []string{"unknown key", `did you mean "site.base_url"?`}},
		{4, "site.title", []string{"is an integer (3); want a string"}},
		{5, "site.descripton", []string{"unknown key", `did you mean "site.description"?`}},
		{6, "site.output", []string{"inside the data folder"}},
		{10, "site.badges[0].link", []string{"unknown key"}},
		{13, "site.badges[1].url", []string{"another host"}},
		{17, "site.links[0].url", []string{"only http(s) URLs or site paths"}},
	}
	if len(ps) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(want), err)
	}
	for i, w := range want {
		got := ps[i]
		if got.Line != w.line || got.Field != w.key || got.File != p {
			t.Errorf("problem %d = %s:%d %q, want %s:%d %q", i, got.File, got.Line, got.Field, p, w.line, w.key)
		}
		for _, s := range w.subs {
			if !strings.Contains(got.Msg, s) {
				t.Errorf("problem %d (%s) = %q, want it to contain %q", i, w.key, got.Msg, s)
			}
		}
	}
	// The message names the file once per problem, with its line.
	msg := err.Error()
	if !strings.HasPrefix(msg, p+": 8 problems:") || !strings.Contains(msg, p+":13: field \"site.badges[1].url\"") {
		t.Errorf("error text:\n%s", msg)
	}
}

func TestLoadSuggestsClosestKey(t *testing.T) {
	for _, c := range []struct{ src, key, want string }{
		{"[site]\nbase_ulr = \"/x/\"\n", "site.base_ulr", `did you mean "site.base_url"?`},
		{"[site]\nBaseURL = \"/x/\"\n", "site.BaseURL", `did you mean "site.base_url"?`},
		{"[sitee]\ntitle = \"x\"\n", "sitee", `did you mean "site"?`},
		{"title = \"x\"\n", "title", `did you mean "site.title"?`},
		{"[eval]\n[site]\noutpt = \"o\"\n", "site.outpt", `did you mean "site.output"?`},
		{"[[site.links]]\ntitel = \"x\"\n", "site.links[0].titel", `did you mean "site.links[0].title"?`},
		{"[[site.badges]]\nlink = \"x\"\n", "site.badges[0].link", ""},
		{"[site]\nzzz = 1\n", "site.zzz", ""},
	} {
		_, err := config.Load(write(t, c.src))
		var ps config.Problems
		if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Field != c.key {
			t.Errorf("%q: Load = %v, want one problem with key %q", c.src, err, c.key)
			continue
		}
		if c.want == "" && strings.Contains(ps[0].Msg, "did you mean") {
			t.Errorf("%q: %q suggests a key, want none", c.src, ps[0].Msg)
		}
		if c.want != "" && !strings.Contains(ps[0].Msg, c.want) {
			t.Errorf("%q: %q, want %q", c.src, ps[0].Msg, c.want)
		}
	}
}

// TestLoadRootFolders checks the data and output folders against the
// project root given, not the config file's folder.
func TestLoadRootFolders(t *testing.T) {
	root := t.TempDir()
	elsewhere := write(t, "[site]\noutput = \""+filepath.Dir(root)+"\"\n")
	if _, err := config.LoadRoot(elsewhere, root); err == nil || !strings.Contains(err.Error(), "would overwrite the project") {
		t.Errorf("an absolute output holding the project: %v", err)
	}
	abs := write(t, "[site]\noutput = \""+filepath.Join(root, "data", "site")+"\"\n")
	if _, err := config.LoadRoot(abs, root); err == nil || !strings.Contains(err.Error(), "inside the data folder") {
		t.Errorf("an absolute output inside the data folder: %v", err)
	}
	ok := write(t, "[site]\noutput = \""+filepath.Join(t.TempDir(), "site")+"\"\ndata = \"bench-data\"\n")
	if _, err := config.LoadRoot(ok, root); err != nil {
		t.Errorf("an absolute output outside the project: %v", err)
	}
	dataRoot := write(t, "[site]\ndata = \""+root+"\"\n")
	if _, err := config.LoadRoot(dataRoot, root); err == nil || !strings.Contains(err.Error(), "project folder itself") {
		t.Errorf("data at the project root, absolute: %v", err)
	}
}

// TestRepoPython: collect.repo.python picks the base image; a version no
// base image has is an error naming the file, the line and the key, with
// the versions there are.
func TestRepoPython(t *testing.T) {
	repo := func(python string) string {
		return "[[collect.repo]]\nrepository = \"o/r\"\nsource = \"r\"\ninstall = [\"pip install .\"]\nimport_name = \"r\"\n" + python
	}
	for _, c := range []struct{ line, want string }{{"", "3.11"}, {`python = "3.11"`, "3.11"}, {`python = "3.13"`, "3.13"}} {
		cfg, err := config.Load(write(t, repo(c.line)))
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if got := cfg.Collect.Repos[0].Python; got != c.want {
			t.Errorf("%q: python = %q, want %q", c.line, got, c.want)
		}
	}
	path := write(t, repo(`python = "3.12"`))
	_, err := config.Load(path)
	want := path + `:6: field "collect.repo[0].python": is "3.12"; the base images have Python "3.11" (Debian bookworm`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"3.13" (Debian trixie`) {
		t.Errorf("python 3.12: %v\nwant it to contain %s", err, want)
	}
}

// TestLoadHint: hint is new-components' key, brief or detailed.
func TestLoadHint(t *testing.T) {
	repo := "[[collect.repo]]\nrepository = \"o/r\"\nsource = \"r\"\ncommit = \"0123456789012345678901234567890123456789\"\nimport_name = \"r\"\ninstall = [\"true\"]\n"
	for _, c := range []struct {
		name, src, want string
	}{
		{"brief", repo + "method = \"new-components\"\nhint = \"brief\"\n", ""},
		{"detailed", repo + "method = \"new-components\"\nhint = \"detailed\"\n", ""},
		{"unknown hint", repo + "method = \"new-components\"\nhint = \"verbose\"\n", `collect.repo[0].hint`},
		{"hint of another method", repo + "method = \"release\"\nhint = \"brief\"\n", `is for method "new-components"`},
		{"hint of the test-driven method", repo + "hint = \"brief\"\n", "is for the history-based methods"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, config.FileName), []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := config.Load(filepath.Join(dir, config.FileName))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want one with %q", err, c.want)
			}
		})
	}
}

// TestRepoBaseImage: collect.repo.base_image is a reference the engine
// can pull; a bad one, or Debian packages beside it, is an error naming
// the file, the line and the key.
func TestRepoBaseImage(t *testing.T) {
	repo := func(lines string) string {
		return "[[collect.repo]]\nrepository = \"o/r\"\nsource = \"r\"\ninstall = [\"pip install .\"]\nimport_name = \"r\"\n" + lines
	}
	cfg, err := config.Load(write(t, repo(`base_image = "python:3.12-slim"`)))
	if err != nil || cfg.Collect.Repos[0].BaseImage != "python:3.12-slim" {
		t.Fatalf("base_image: %v", err)
	}
	for _, c := range []struct{ lines, want string }{
		{`base_image = "Python:3.12"`, `:6: field "collect.repo[0].base_image": image reference "Python:3.12"`},
		{"base_image = \"python:3.12-slim\"\npackages = [\"python3-yaml\"]", `:7: field "collect.repo[0].packages": lists Debian packages, which go on the Debian bases only`},
	} {
		path := write(t, repo(c.lines))
		if _, err := config.Load(path); err == nil || !strings.Contains(err.Error(), path+c.want) {
			t.Errorf("%s: %v\nwant %s", c.lines, err, c.want)
		}
	}
}

// The history-based methods' keys: their own defaults where the file
// does not write a key, and a clear problem for each wrong one, with its
// line.
func TestLoadCollectMethods(t *testing.T) {
	cfg, err := config.Load(write(t, `[[collect.repo]]
repository = "o/lib"
source = "/src/lib.git"
commit = "0123456789abcdef0123456789abcdef01234567"
install = ["pip install ."]
import_name = "lib"
method = "release"
since = "2024-01-01"
until = "2024-12-31"
release_kinds = ["feature", "improvement"]

[[collect.repo]]
repository = "o/other"
source = "/src/other.git"
commit = "0123456789abcdef0123456789abcdef01234567"
install = ["pip install ."]
import_name = "other"
method = "release"
min_f2p_points = 3
`))
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Collect.Repos[0]
	if !r.History() || r.MinLines != 1 || r.MinF2PPoints != 1 || !reflect.DeepEqual(r.Levels, []int{1}) || !reflect.DeepEqual(r.ReleaseKinds, []string{"feature", "improvement"}) {
		t.Errorf("repo[0] = %+v", r)
	}
	if r := cfg.Collect.Repos[1]; r.MinF2PPoints != 3 || !reflect.DeepEqual(r.ReleaseKinds, []string{"feature"}) {
		t.Errorf("repo[1]: a written key keeps its value, an unwritten one the method's default: %+v", r)
	}
	_, err = config.Load(write(t, `[[collect.repo]]
repository = "o/lib"
source = "/src/lib.git"
install = ["pip install ."]
import_name = "lib"
method = "release"
since = "last year"
until = "2020-01-01"
release_kinds = ["feature", "rumour"]
levels = [1, 2]
changelog = "../CHANGES"

[[collect.repo]]
repository = "o/two"
source = "two"
install = ["pip install ."]
import_name = "two"
since = "2024-01-01"

[[collect.repo]]
repository = "o/three"
source = "three"
install = ["pip install ."]
import_name = "three"
method = "scraped"
`))
	for _, want := range []string{
		`"collect.repo[0].commit": is missing: method "release" reads the git source's history`,
		`"collect.repo[0].since": "last year" is not a date`,
		`"collect.repo[0].release_kinds[1]": is "rumour"`,
		`"collect.repo[0].levels": is [1 2]; method "release" makes level 1 instances only`,
		`"collect.repo[0].changelog": "../CHANGES" is not a path inside the repository`,
		`"collect.repo[1].since": is for the history-based methods`,
		`"collect.repo[2].method": is "scraped"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %s", err, want)
		}
	}
	_, err = config.Load(write(t, `[[collect.repo]]
repository = "o/lib"
source = "/src/lib.git"
commit = "0123456789abcdef0123456789abcdef01234567"
install = ["pip install ."]
import_name = "lib"
method = "release"
since = "2024-06-01"
until = "2024-01-01"
`))
	if err == nil || !strings.Contains(err.Error(), `"collect.repo[0].until": 2024-01-01 is before since`) {
		t.Errorf("until before since: %v", err)
	}
}

// One repository may be collected with several methods, one table each,
// from the same source and environment; not twice with one method, nor
// from two sources.
func TestRepoSeveralMethods(t *testing.T) {
	table := func(method, source string) string {
		return "[[collect.repo]]\nrepository = \"o/r\"\nsource = \"" + source + "\"\ncommit = \"0123456789abcdef0123456789abcdef01234567\"\ninstall = [\"pip install .\"]\nimport_name = \"r\"\n" +
			map[bool]string{true: "method = \"" + method + "\"\n"}[method != ""] + "\n"
	}
	if _, err := config.Load(write(t, table("", "/src/r.git")+table("release", "/src/r.git")+table("new-components", "/src/r.git"))); err != nil {
		t.Errorf("three methods of one repository: %v", err)
	}
	for _, c := range []struct{ file, want string }{
		{table("release", "/src/r.git") + table("release", "/src/r.git"), `"collect.repo[1].repository": "o/r" is listed twice with method "release"`},
		{table("", "/src/r.git") + table("", "/src/r.git"), `is listed twice with method "test-driven"`},
		{table("", "/src/r.git") + table("release", "/src/other.git"), `"collect.repo[1].repository": "o/r" is listed again, with another method, but another source`},
	} {
		if _, err := config.Load(write(t, c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v\nwant %s", err, c.want)
		}
	}
}
