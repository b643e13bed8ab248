// Package config reads featbench.toml, the one configuration file that the
// collect, eval and build commands share.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// FileName is the configuration file's name at the project root.
const FileName = "featbench.toml"

// Config is featbench.toml.
type Config struct {
	Site    Site           `toml:"site"`
	Collect map[string]any `toml:"collect"` // reserved for the collect command
	Eval    map[string]any `toml:"eval"`    // reserved for the eval command
}

// Site configures cmd/build.
type Site struct {
	Title          string  `toml:"title"`
	Description    string  `toml:"description"`
	BaseURL        string  `toml:"base_url"`
	Output         string  `toml:"output"`
	Data           string  `toml:"data"`
	DefaultDataset string  `toml:"default_dataset"`
	DefaultSplit   string  `toml:"default_split"`
	Badges         []Badge `toml:"badges"`
	Links          []Link  `toml:"links"`
}

// Badge is a label/value pill on the home page, linking somewhere.
type Badge struct {
	Label string `toml:"label"`
	Value string `toml:"value"`
	URL   string `toml:"url"`
}

// Link is an entry in the site's navigation.
type Link struct {
	Title string `toml:"title"`
	URL   string `toml:"url"`
}

// Default is the configuration used for keys featbench.toml leaves out.
func Default() Config {
	return Config{Site: Site{
		Title:        "FeatBench",
		Description:  "Feature-implementation benchmarks for coding agents.",
		BaseURL:      "/",
		Output:       "public",
		Data:         "data",
		DefaultSplit: "full",
	}}
}

// Load reads the file at path over the defaults. A missing file gives the
// defaults; a malformed one an error naming line and key.
func Load(path string) (Config, error) {
	cfg := Default()
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, fmt.Errorf("reading config: %w", err)
	}
	md, err := toml.Decode(string(raw), &cfg)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return cfg, fmt.Errorf("%s:%d: key %q: %s", path, pe.Position.Line, pe.LastKey, pe.Message)
		}
		return cfg, fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range md.Undecoded() {
		if len(k) > 0 && (k[0] == "collect" || k[0] == "eval") {
			continue
		}
		return cfg, fmt.Errorf("%s: unknown key %q (see the featbench.toml reference in README.md)", path, k.String())
	}
	if err := cfg.validate(path); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (c *Config) validate(path string) error {
	s := &c.Site
	if s.BaseURL == "" {
		s.BaseURL = "/"
	}
	u, err := url.Parse(s.BaseURL)
	bad := err != nil || u.RawQuery != "" || u.Fragment != "" ||
		!(u.Scheme == "" && u.Host == "" && strings.HasPrefix(u.Path, "/")) &&
			!((u.Scheme == "http" || u.Scheme == "https") && u.Host != "")
	if bad {
		return fmt.Errorf("%s: key %q: %q must be a path such as /featbench/ or an http(s) URL such as https://org.github.io/featbench/", path, "site.base_url", s.BaseURL)
	}
	if !strings.HasSuffix(s.BaseURL, "/") {
		s.BaseURL += "/"
	}
	out := filepath.Clean(s.Output)
	if s.Output == "" || out == "." || out == "/" || out == ".." || strings.HasPrefix(out, "../") ||
		out == filepath.Clean(s.Data) || strings.HasPrefix(filepath.Clean(s.Data)+"/", out+"/") {
		return fmt.Errorf("%s: key %q: %q would overwrite the project or its data; name a folder such as public", path, "site.output", s.Output)
	}
	for i, b := range s.Badges {
		if err := checkLink(b.URL); err != nil {
			return fmt.Errorf("%s: key site.badges[%d].url: %w", path, i, err)
		}
	}
	for i, l := range s.Links {
		if err := checkLink(l.URL); err != nil {
			return fmt.Errorf("%s: key site.links[%d].url: %w", path, i, err)
		}
	}
	return nil
}

// checkLink allows http(s) URLs and site-relative paths, nothing else.
func checkLink(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme == "" && u.Host == "" {
		return nil
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: only http(s) URLs or site paths are allowed", s)
	}
	return nil
}

// BasePath is the path part of base_url, always ending in "/": the prefix
// every site link carries, so a GitHub Pages project subpath works.
func (s Site) BasePath() string {
	u, err := url.Parse(s.BaseURL)
	if err != nil || u.Path == "" {
		return "/"
	}
	p := u.Path
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

// Absolute reports whether base_url names a host, which the sitemap and
// feed need for absolute links.
func (s Site) Absolute() bool {
	u, err := url.Parse(s.BaseURL)
	return err == nil && u.Host != ""
}
