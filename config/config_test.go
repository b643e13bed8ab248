package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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
			[]string{`"site.badges.link"`, "unknown key"}},
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

func TestLoadReservedTables(t *testing.T) {
	cfg, err := config.Load(write(t, "[collect]\nanything = 1\n[collect.deep]\nx = \"y\"\n[eval]\nworkers = 4\n"))
	if err != nil {
		t.Fatalf("keys under [collect] and [eval] are reserved, not unknown: %v", err)
	}
	if cfg.Collect["anything"] != int64(1) || cfg.Eval["workers"] != int64(4) {
		t.Errorf("collect = %v, eval = %v", cfg.Collect, cfg.Eval)
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
