package config

import (
	"fmt"
	"math"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/featbench/featbench/internal/pybase"
	"github.com/featbench/featbench/internal/registry"
)

// Collect configures cmd/collect: where its work goes, how its datasets
// are described and sampled, and one Repo table per repository.
type Collect struct {
	Work    string `toml:"work"`    // the work folder, relative to the project root
	Workers int    `toml:"workers"` // test files run or traced at once
	// Dataset description written into the manifest.
	Title       string `toml:"title"`
	Description string `toml:"description"`
	// ReleaseDate (YYYY-MM-DD) goes into the manifest; by default the date
	// of the newest commit among the repositories' git sources, so that
	// the same inputs give the same dataset.
	ReleaseDate string `toml:"release_date"`
	// Statements goes into the manifest: "public" (the default: the site
	// publishes each instance's task page) or "private" (a held-out set:
	// figures only).
	Statements string `toml:"statements"`
	Lite       int    `toml:"lite"` // instances in the lite split (0: no lite split)
	Fast       int    `toml:"fast"` // instances in the fast split (0: no fast split)
	Repos      []Repo `toml:"repo"`
}

// Repo is one repository to collect from: where its source comes from, how
// it is installed and tested, and the method's parameters for it (paper
// 000, section 3.2 and Figure 7, whose defaults these are).
type Repo struct {
	Repository string `toml:"repository"` // owner/name
	URL        string `toml:"url"`        // its home page, for the site
	License    string `toml:"license"`
	// Source is a folder (relative to the project root) or a git
	// repository (a URL or path git can clone offline), at Commit.
	Source   string   `toml:"source"`
	Commit   string   `toml:"commit"`
	Python   string   `toml:"python"`   // the Python the tests need: it picks the base image (internal/pybase)
	Packages []string `toml:"packages"` // extra Debian packages (python3-*) in the base image
	// BaseImage, when set, is the base image instead of the Debian base
	// of Python: any reference the engine can pull ("python:3.12-slim",
	// "ghcr.io/o/img@sha256:…"), pulled with the user's docker
	// credentials (never this file's) and pinned by digest in the dataset.
	BaseImage  string   `toml:"base_image"`
	PreInstall []string `toml:"pre_install"`
	Install    []string `toml:"install"`
	ImportName string   `toml:"import_name"` // the library's import name
	// Exclude are glob patterns (path.Match) of test files not to use.
	Exclude          []string `toml:"exclude"`
	DiscoveryTimeout string   `toml:"discovery_timeout"`
	TestFileTimeout  string   `toml:"test_file_timeout"`
	TraceTimeout     string   `toml:"trace_timeout"`
	RepoTimeout      string   `toml:"repo_timeout"`
	MinTestPoints    int      `toml:"min_test_points"` // of a fail-to-pass candidate file
	MaxF2PFiles      int      `toml:"max_f2p_files"`   // candidates kept, most test points first; 0: all
	MaxP2PFiles      int      `toml:"max_p2p_files"`   // the pass-to-pass pool; 0: all passing files
	P2PFiles         []int    `toml:"p2p_files"`       // [least, most] pass-to-pass files per instance
	LineBudget       []int    `toml:"line_budget"`     // [least, most] lines extracted; drawn per instance
	F2PPassRateMax   float64  `toml:"f2p_pass_rate_max"`
	ForbiddenLinks   []string `toml:"forbidden_links"`
	EarliestTestDate string   `toml:"earliest_test_date"` // YYYY-MM-DD: test files first committed on or after it
	MinLines         int      `toml:"min_lines"`          // full-set filter: lines of the gold patch
	MinF2PPoints     int      `toml:"min_f2p_points"`     // full-set filter: fail-to-pass tests
	Levels           []int    `toml:"levels"`             // task levels made: 1, 2 or both
	// Network "build" lets pre_install and install take packages from a
	// package index, through a build gate that reaches the index and
	// nothing else (internal/gate); tests, grading and agents stay
	// without network. Off ("" or "none") by default.
	Network string `toml:"network"`
	// IndexURL and ExtraIndexURL are the indexes (simple API URLs); by
	// default pip's own configuration on this machine (PIP_INDEX_URL,
	// pip.conf), else PyPI.
	IndexURL      string   `toml:"index_url"`
	ExtraIndexURL []string `toml:"extra_index_url"`
	// ExcludeNewer "commit" (or a date YYYY-MM-DD) hides files uploaded
	// after the source's commit date, where the index says when (PEP 700).
	ExcludeNewer string `toml:"exclude_newer"`
	IndexTimeout string `toml:"index_timeout"` // one wait on an index, e.g. "60s"

	// Method is how instances are collected (bench.Method*): "test-driven"
	// (the default, paper 000), or a history-based one, "release" (paper
	// 003) or "new-components" (004), which read the git source's history
	// up to Commit. The keys below are theirs; the history-based methods
	// make level 1 instances, and their min_lines and min_f2p_points
	// default to 1.
	Method string `toml:"method"`
	// Since and Until (YYYY-MM-DD, inclusive) bound the releases (and the
	// pull requests) collected from: a later window keeps a benchmark
	// ahead of what models were trained on.
	Since string `toml:"since"`
	Until string `toml:"until"`
	// Changelog is the changelog's path in the repository; "" finds it.
	Changelog string `toml:"changelog"`
	// Pulls is a JSON export of pull requests (GitHub's REST shape),
	// relative to the project root, read instead of the commit messages.
	Pulls string `toml:"pulls"`
	// ReleaseKinds are the kinds of release-notes entries whose pull
	// requests the release method takes: feature, improvement, fix, other.
	ReleaseKinds []string `toml:"release_kinds"`
	// Hint is how much of the new components a new-components statement
	// gives (paper 004's hints): "detailed" (the default: signatures,
	// docstrings and the pull request's non-Python changes) or "brief"
	// (signatures only).
	Hint string `toml:"hint"`
}

// sameRepository says whether two tables of one repository give it the
// same source and environment.
func sameRepository(a, b *Repo) bool {
	return a.Source == b.Source && a.Commit == b.Commit && a.Python == b.Python && a.BaseImage == b.BaseImage &&
		slices.Equal(a.Packages, b.Packages) && slices.Equal(a.PreInstall, b.PreInstall) && slices.Equal(a.Install, b.Install) &&
		a.Network == b.Network && a.IndexURL == b.IndexURL && slices.Equal(a.ExtraIndexURL, b.ExtraIndexURL) &&
		a.URL == b.URL && a.License == b.License
}

// History reports whether the repository's method reads its history.
func (r Repo) History() bool {
	return r.Method == MethodRelease || r.Method == MethodNewComponents
}

// MethodOrDefault is the repository's method, "test-driven" when not set.
func (r Repo) MethodOrDefault() string {
	if r.Method == "" {
		return MethodTestDriven
	}
	return r.Method
}

// Collection methods, as bench names them (config does not import bench).
const (
	MethodTestDriven    = "test-driven"
	MethodRelease       = "release"
	MethodNewComponents = "new-components"
)

// releaseKinds are the kinds of release-notes entries (history.Kinds).
var releaseKinds = []string{"feature", "improvement", "fix", "other"}

// NetworkBuild is Repo.Network for install steps with a package index.
const NetworkBuild = "build"

// SetDefaults fills a [[collect.repo]] table before the file's keys are
// read into it.
func (r *Repo) SetDefaults() {
	*r = Repo{
		Python:           pybase.Default,
		DiscoveryTimeout: "5m",
		TestFileTimeout:  "10m",
		TraceTimeout:     "10m",
		RepoTimeout:      "24h",
		MinTestPoints:    1,
		P2PFiles:         []int{1, 5},
		LineBudget:       []int{3000, 5000},
		F2PPassRateMax:   0.3,
		MinLines:         100,
		MinF2PPoints:     10,
		Levels:           []int{1, 2},
		IndexTimeout:     "60s",
		ReleaseKinds:     []string{"feature"},
	}
}

// RepoTimeouts are a Repo's timeouts, parsed (checked by Load).
type RepoTimeouts struct {
	Discovery, TestFile, Trace, Repo time.Duration
}

// Timeouts parses the Repo's timeouts.
func (r Repo) Timeouts() RepoTimeouts {
	var t RepoTimeouts
	t.Discovery, _ = time.ParseDuration(r.DiscoveryTimeout)
	t.TestFile, _ = time.ParseDuration(r.TestFileTimeout)
	t.Trace, _ = time.ParseDuration(r.TraceTimeout)
	t.Repo, _ = time.ParseDuration(r.RepoTimeout)
	return t
}

// LLM configures the OpenAI-compatible chat API cmd/collect may use.
type LLM struct {
	Endpoint    string  `toml:"endpoint"`    // e.g. https://api.openai.com/v1 or http://localhost:11434/v1; "" for none
	Model       string  `toml:"model"`       // e.g. gpt-4o-mini, qwen2.5-coder:7b
	APIKeyEnv   string  `toml:"api_key_env"` // the environment variable holding the API key; "" for none
	Temperature float64 `toml:"temperature"`
	MaxTokens   int     `toml:"max_tokens"` // 0: the server's default
	Seed        int     `toml:"seed"`       // sent with each request (servers that support it are then reproducible)
	Timeout     string  `toml:"timeout"`    // one request
}

var (
	repoName   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	importName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	fullCommit = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// checkCollect checks the [collect] table and its repositories.
func (c *checker) checkCollect(co *Collect) {
	if co.Work == "" || checkChars(co.Work) != nil {
		c.add("collect.work", "%q is not a folder name", co.Work)
	}
	if co.Workers < 1 || co.Workers > 64 {
		c.add("collect.workers", "is %d; want 1 to 64", co.Workers)
	}
	if co.ReleaseDate != "" {
		if _, err := time.Parse(time.DateOnly, co.ReleaseDate); err != nil {
			c.add("collect.release_date", "%q is not a date YYYY-MM-DD", co.ReleaseDate)
		}
	}
	if co.Statements != "" && co.Statements != "public" && co.Statements != "private" {
		c.add("collect.statements", "is %q; want \"public\" or \"private\"", co.Statements)
	}
	if co.Lite < 0 {
		c.add("collect.lite", "is %d; want 0 or more", co.Lite)
	}
	if co.Fast < 0 {
		c.add("collect.fast", "is %d; want 0 or more", co.Fast)
	}
	seen := map[string]*Repo{}
	for i := range co.Repos {
		c.checkRepo(fmt.Sprintf("collect.repo[%d]", i), &co.Repos[i], seen)
	}
}

func (c *checker) checkRepo(key string, r *Repo, seen map[string]*Repo) {
	if !repoName.MatchString(r.Repository) {
		c.add(key+".repository", "%q is not owner/name", r.Repository)
	} else if prev := seen[r.Repository]; prev != nil {
		// Several tables may collect one repository with different
		// methods, from the same source and environment: the dataset
		// lists it once.
		switch {
		case prev.MethodOrDefault() == r.MethodOrDefault():
			c.add(key+".repository", "%q is listed twice with method %q", r.Repository, r.MethodOrDefault())
		case !sameRepository(prev, r):
			c.add(key+".repository", "%q is listed again, with another method, but another source or environment: give every table of one repository the same source, commit, python, packages, base_image, pre_install, install and network", r.Repository)
		}
	}
	if seen[r.Repository] == nil {
		seen[r.Repository] = r
	}
	if r.Source == "" {
		c.add(key+".source", "is missing: a folder of the project or a git URL")
	} else if checkChars(r.Source) != nil {
		c.add(key+".source", "%q holds control characters", r.Source)
	}
	if r.Commit != "" && !fullCommit.MatchString(r.Commit) {
		c.add(key+".commit", "%q is not a full commit hash (40 or 64 hex digits)", r.Commit)
	}
	if msg := pybase.Check(r.Python); msg != "" {
		c.add(key+".python", "%s", msg)
	}
	if r.BaseImage != "" {
		if _, err := registry.Parse(r.BaseImage); err != nil {
			c.add(key+".base_image", "%v", err)
		} else if len(r.Packages) > 0 {
			c.add(key+".packages", "lists Debian packages, which go on the Debian bases only; with base_image, install what the image lacks in pre_install")
		}
	}
	if len(r.Install) == 0 {
		c.add(key+".install", "is missing: the commands that install the repository, e.g. [\"pip install --no-index --no-deps --no-build-isolation -e .\"]")
	}
	if !importName.MatchString(r.ImportName) {
		c.add(key+".import_name", "%q is not a Python import name", r.ImportName)
	}
	for j, p := range r.Exclude {
		if _, err := path.Match(p, ""); err != nil {
			c.add(fmt.Sprintf("%s.exclude[%d]", key, j), "%q is not a glob pattern", p)
		}
	}
	for _, d := range []struct{ k, v string }{
		{"discovery_timeout", r.DiscoveryTimeout}, {"test_file_timeout", r.TestFileTimeout},
		{"trace_timeout", r.TraceTimeout}, {"repo_timeout", r.RepoTimeout},
	} {
		if t, err := time.ParseDuration(d.v); err != nil || t <= 0 {
			c.add(key+"."+d.k, "%q is not a positive duration such as \"90s\" or \"10m\"", d.v)
		}
	}
	if r.MinTestPoints < 1 {
		c.add(key+".min_test_points", "is %d; want 1 or more", r.MinTestPoints)
	}
	if r.MaxF2PFiles < 0 {
		c.add(key+".max_f2p_files", "is %d; want 0 (all) or more", r.MaxF2PFiles)
	}
	if r.MaxP2PFiles < 0 {
		c.add(key+".max_p2p_files", "is %d; want 0 (all) or more", r.MaxP2PFiles)
	}
	if len(r.P2PFiles) != 2 || r.P2PFiles[0] < 1 || r.P2PFiles[1] < r.P2PFiles[0] {
		c.add(key+".p2p_files", "is %v; want [least, most] with 1 <= least <= most", r.P2PFiles)
	}
	if len(r.LineBudget) != 2 || r.LineBudget[0] < 1 || r.LineBudget[1] < r.LineBudget[0] {
		c.add(key+".line_budget", "is %v; want [least, most] with 1 <= least <= most", r.LineBudget)
	}
	if math.IsNaN(r.F2PPassRateMax) || r.F2PPassRateMax < 0 || r.F2PPassRateMax >= 1 {
		c.add(key+".f2p_pass_rate_max", "is %v; want at least 0 and below 1", r.F2PPassRateMax)
	}
	for j, l := range r.ForbiddenLinks {
		if u, err := url.Parse(l); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			c.add(fmt.Sprintf("%s.forbidden_links[%d]", key, j), "%q is not an http(s) URL", l)
		}
	}
	if r.EarliestTestDate != "" {
		if _, err := time.Parse(time.DateOnly, r.EarliestTestDate); err != nil {
			c.add(key+".earliest_test_date", "%q is not a date YYYY-MM-DD", r.EarliestTestDate)
		}
	}
	if r.MinLines < 0 {
		c.add(key+".min_lines", "is %d; want 0 or more", r.MinLines)
	}
	if r.MinF2PPoints < 0 {
		c.add(key+".min_f2p_points", "is %d; want 0 or more", r.MinF2PPoints)
	}
	levels := map[int]bool{}
	for _, l := range r.Levels {
		if l != 1 && l != 2 || levels[l] {
			c.add(key+".levels", "is %v; want [1], [2] or [1, 2]", r.Levels)
			break
		}
		levels[l] = true
	}
	if len(r.Levels) == 0 {
		c.add(key+".levels", "is empty; want [1], [2] or [1, 2]")
	}
	c.checkNetwork(key, r)
	c.checkMethod(key, r)
}

// checkNetwork checks the package index keys of a repository.
func (c *checker) checkNetwork(key string, r *Repo) {
	switch r.Network {
	case "", "none", NetworkBuild:
	default:
		c.add(key+".network", "is %q; want \"build\" (install steps may reach a package index) or \"none\"", r.Network)
	}
	if r.Network != NetworkBuild {
		for _, f := range []struct {
			k   string
			set bool
		}{{"index_url", r.IndexURL != ""}, {"extra_index_url", len(r.ExtraIndexURL) > 0}, {"exclude_newer", r.ExcludeNewer != ""}} {
			if f.set {
				c.add(key+"."+f.k, "is set, but network is not \"build\": the install steps run offline")
			}
		}
	}
	if r.IndexURL != "" {
		if msg := IndexURLProblem(r.IndexURL); msg != "" {
			c.add(key+".index_url", "%q %s", r.IndexURL, msg)
		}
	}
	for j, u := range r.ExtraIndexURL {
		if msg := IndexURLProblem(u); msg != "" {
			c.add(fmt.Sprintf("%s.extra_index_url[%d]", key, j), "%q %s", u, msg)
		}
	}
	switch r.ExcludeNewer {
	case "", "commit":
		if r.ExcludeNewer == "commit" && r.Commit == "" {
			c.add(key+".exclude_newer", "is \"commit\", but the source has no commit to take the date of: give a date YYYY-MM-DD")
		}
	default:
		if _, err := time.Parse(time.DateOnly, r.ExcludeNewer); err != nil {
			c.add(key+".exclude_newer", "%q is neither \"commit\" nor a date YYYY-MM-DD", r.ExcludeNewer)
		}
	}
	if t, err := time.ParseDuration(r.IndexTimeout); err != nil || t <= 0 {
		c.add(key+".index_timeout", "%q is not a positive duration such as \"60s\"", r.IndexTimeout)
	}
}

// IndexURLProblem says what is wrong with a package index URL, "" when
// nothing: an http(s) URL with a host and no credentials, which would be
// written into the dataset (put them in pip's own configuration).
func IndexURLProblem(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return "is not an http(s) URL such as https://pypi.org/simple/"
	case u.User != nil:
		return "holds credentials, which would be written into the dataset"
	case u.RawQuery != "" || u.Fragment != "":
		return "has a query or fragment"
	}
	return ""
}

// checkMethod checks the keys of the collection method, and gives the
// history-based methods their own defaults for the keys not written.
func (c *checker) checkMethod(key string, r *Repo) {
	switch r.Method {
	case "", MethodTestDriven:
		for _, k := range []string{"since", "until", "changelog", "pulls", "release_kinds", "hint"} {
			if _, ok := c.lines[key+"."+k]; ok {
				c.add(key+"."+k, "is for the history-based methods (method = %q or %q)", MethodRelease, MethodNewComponents)
			}
		}
		return
	case MethodRelease, MethodNewComponents:
	default:
		c.add(key+".method", "is %q; want %q (the default), %q or %q", r.Method, MethodTestDriven, MethodRelease, MethodNewComponents)
		return
	}
	if r.Commit == "" {
		c.add(key+".commit", "is missing: method %q reads the git source's history up to this commit", r.Method)
	}
	if _, ok := c.lines[key+".hint"]; ok && r.Method != MethodNewComponents {
		c.add(key+".hint", "is for method %q", MethodNewComponents)
	} else if r.Hint != "" && r.Hint != "brief" && r.Hint != "detailed" {
		c.add(key+".hint", "is %q; want \"detailed\" (the default) or \"brief\"", r.Hint)
	}
	written := func(k string) bool { _, ok := c.lines[key+"."+k]; return ok }
	if !written("min_lines") {
		r.MinLines = 1
	}
	if !written("min_f2p_points") {
		r.MinF2PPoints = 1
	}
	if !written("levels") {
		r.Levels = []int{1}
	} else if len(r.Levels) != 1 || r.Levels[0] != 1 {
		c.add(key+".levels", "is %v; method %q makes level 1 instances only: want [1]", r.Levels, r.Method)
	}
	var since, until time.Time
	for _, d := range []struct {
		k, v string
		t    *time.Time
	}{{"since", r.Since, &since}, {"until", r.Until, &until}} {
		if d.v == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, d.v)
		if err != nil {
			c.add(key+"."+d.k, "%q is not a date YYYY-MM-DD", d.v)
		}
		*d.t = t
	}
	if !since.IsZero() && !until.IsZero() && until.Before(since) {
		c.add(key+".until", "%s is before since (%s)", r.Until, r.Since)
	}
	for _, p := range []struct{ k, v string }{{"changelog", r.Changelog}, {"pulls", r.Pulls}} {
		if p.v != "" && (checkChars(p.v) != nil || path.IsAbs(p.v) && p.k == "changelog" || strings.Contains("/"+p.v+"/", "/../") && p.k == "changelog") {
			c.add(key+"."+p.k, "%q is not a path inside the repository", p.v)
		}
	}
	if len(r.ReleaseKinds) == 0 {
		c.add(key+".release_kinds", "is empty; want some of %s", strings.Join(releaseKinds, ", "))
	}
	for j, k := range r.ReleaseKinds {
		if !slices.Contains(releaseKinds, k) {
			c.add(fmt.Sprintf("%s.release_kinds[%d]", key, j), "is %q; want one of %s", k, strings.Join(releaseKinds, ", "))
		}
	}
}

// checkLLM checks the [llm] table. An empty endpoint means no LLM.
func (c *checker) checkLLM(l *LLM) {
	if l.Endpoint == "" {
		return
	}
	if u, err := url.Parse(l.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.add("llm.endpoint", "%q is not an http(s) URL such as https://api.openai.com/v1", l.Endpoint)
	}
	if l.Model == "" {
		c.add("llm.model", "is missing: the model to ask, e.g. gpt-4o-mini")
	}
	if l.APIKeyEnv != "" && !envName.MatchString(l.APIKeyEnv) {
		c.add("llm.api_key_env", "%q is not an environment variable name", l.APIKeyEnv)
	}
	if math.IsNaN(l.Temperature) || l.Temperature < 0 || l.Temperature > 2 {
		c.add("llm.temperature", "is %v; want 0 to 2", l.Temperature)
	}
	if l.MaxTokens < 0 {
		c.add("llm.max_tokens", "is %d; want 0 (the server's default) or more", l.MaxTokens)
	}
	if t, err := time.ParseDuration(l.Timeout); err != nil || t <= 0 {
		c.add("llm.timeout", "%q is not a positive duration such as \"3m\"", l.Timeout)
	}
}
