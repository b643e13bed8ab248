// Package config reads featbench.toml, the one configuration file that the
// collect, eval and build commands share.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/featbench/featbench/internal/tomlstrict"
)

// FileName is the configuration file's name at the project root.
const FileName = "featbench.toml"

// Config is featbench.toml.
type Config struct {
	Site    Site    `toml:"site"`
	Collect Collect `toml:"collect"`
	Eval    Eval    `toml:"eval"`
	LLM     LLM     `toml:"llm"`
	// Agents are the coding agents `eval infer` runs, and Prices what
	// their models' tokens cost, by model name.
	Agents []Agent          `toml:"agents"`
	Prices map[string]Price `toml:"prices"`
}

// Eval configures cmd/eval: where the Docker engine is, how many instances
// run at once, how long a run may take and what a container may use.
type Eval struct {
	DockerHost      string  `toml:"docker_host"`       // "" for $DOCKER_HOST, else the default socket
	Workers         int     `toml:"workers"`           // instances evaluated at once
	TestFileTimeout string  `toml:"test_file_timeout"` // one test file's pytest run, e.g. "10m"
	TestTimeout     string  `toml:"test_timeout"`      // one test (pytest-timeout); "0" for none
	InstanceTimeout string  `toml:"instance_timeout"`  // one instance and attempt, everything included
	Memory          string  `toml:"memory"`            // a container's memory, e.g. "4g"
	CPUs            float64 `toml:"cpus"`              // a container's CPUs, e.g. 1.5
	Pids            int     `toml:"pids"`              // a container's processes and threads
	ImagePrefix     string  `toml:"image_prefix"`      // names of the images eval builds: <prefix>/base, <prefix>/env-<repo>
	Runs            string  `toml:"runs"`              // the folder runs are written to, relative to the project root
	RerunSample     int     `toml:"rerun_sample"`      // instances validate --rerun evaluates again; 0 for every one
	// RerunWholeMax: validate --rerun evaluates a ranked row whole when
	// its dataset has at most this many instances; 0 never.
	RerunWholeMax int `toml:"rerun_whole_max"`
	// Backend is where the containers of eval and collect run: "local"
	// (the engine at docker_host) or "swarm" (a Docker Swarm; see Swarm).
	Backend string `toml:"backend"`
	Swarm   Swarm  `toml:"swarm"`
	// IndexURL and ExtraIndexURL, when set, are where eval fetches the
	// locked packages of a networked environment (network = "build")
	// from, instead of the indexes its dataset names: a mirror, or a
	// local index. The lock's hashes are checked whatever the index.
	IndexURL      string   `toml:"index_url"`
	ExtraIndexURL []string `toml:"extra_index_url"`
}

// Swarm is [eval.swarm]: the cluster of backend = "swarm" (docs/executors.md).
// Images are still built on the engine at docker_host, then pushed to the
// registry, from which the nodes pull them.
type Swarm struct {
	Manager string `toml:"manager"` // a manager's engine, in the form of DOCKER_HOST
	// Registry is the registry's host:port as the nodes reach it.
	Registry string `toml:"registry"`
	// PushRegistry is the same registry as the engine at docker_host
	// reaches it (e.g. 127.0.0.1:5077, which Docker lets be plain HTTP);
	// Registry when empty.
	PushRegistry string `toml:"push_registry"`
}

// Backends are the values of [eval] backend.
var Backends = []string{"local", "swarm"}

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
	// Boards configure a dataset's leaderboards, keyed by "name" (every
	// version) or "name/version" (that version; it wins over the name):
	// published versions are locked, so what a board shows is set here,
	// not in their dataset.toml.
	Boards map[string]Board `toml:"boards"`
}

// Board is [site.boards."name"]: how a dataset's leaderboards open and
// what they offer as filters.
type Board struct {
	// DefaultSplit is the split the dataset's leaderboard link, and the
	// home page when it shows the dataset, open on. Without it: the split
	// with the most recent ranked submission.
	DefaultSplit string `toml:"default_split"`
	// FilterTags are the submitters' tags the boards offer as filter
	// checkboxes; other tags show as text only. None when left out.
	FilterTags []string `toml:"filter_tags"`
	// Marks explain what a system's name carries beside scaffold and
	// model, such as FeatureBench's "(routing)" or "(mock)": the text as
	// it appears in names, and what it means. Boards footnote them.
	Marks map[string]string `toml:"marks"`
}

// Board returns the configuration of a dataset version's boards: the
// "name/version" entry's keys over the "name" entry's.
func (s Site) Board(name, version string) Board {
	var b Board
	for _, k := range []string{name, name + "/" + version} {
		e, ok := s.Boards[k]
		if !ok {
			continue
		}
		if e.DefaultSplit != "" {
			b.DefaultSplit = e.DefaultSplit
		}
		if e.FilterTags != nil {
			b.FilterTags = e.FilterTags
		}
		for m, why := range e.Marks {
			if b.Marks == nil {
				b.Marks = map[string]string{}
			}
			b.Marks[m] = why
		}
	}
	return b
}

// ProblemAt is a problem with a featbench.toml key found after loading,
// such as a board naming a dataset data/ does not have: the file at path,
// raw as it was read, gives the key's line.
func ProblemAt(path string, raw []byte, field, format string, args ...any) error {
	var ps Problems
	tomlstrict.ScanLines(string(raw)).Add(&ps, path, field, format, args...)
	return ps.Err()
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
	}, Eval: Eval{
		Workers:         1,
		TestFileTimeout: "10m",
		TestTimeout:     "0",
		InstanceTimeout: "30m",
		Memory:          "4g",
		CPUs:            1,
		Pids:            1024,
		ImagePrefix:     "featbench",
		Runs:            "runs",
		RerunSample:     10,
		RerunWholeMax:   300,
		Backend:         "local",
	}, Collect: Collect{
		Work:    ".cache/collect",
		Workers: 1,
	}, LLM: LLM{
		Timeout: "3m",
	}}
}

// Problem is one thing wrong in featbench.toml: the same type, and the
// same messages, as the data's problems.
type Problem = tomlstrict.Problem

// Problems is every problem one reading of featbench.toml found, in the
// order of the file.
type Problems = tomlstrict.Problems

// Load reads the file at path over the defaults, with relative folders
// taken from the file's folder. See LoadRoot.
func Load(path string) (Config, error) {
	return LoadRoot(path, filepath.Dir(path))
}

// LoadRoot reads the file at path over the defaults; relative folders in
// it are relative to the project root. A missing file gives the defaults.
// Otherwise every problem the file has is reported at once, as Problems,
// each with its line where it can be found: an encoding other than UTF-8,
// a syntax error (the parser stops at the first), unknown keys (with the
// closest known key), values of the wrong type, and values the site
// cannot use.
func LoadRoot(path, root string) (Config, error) {
	cfg := Default()
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, fmt.Errorf("reading config: %w", err)
	}
	lines, ps := tomlstrict.Decode(path, raw, &cfg, tomlstrict.Options{KeysDoc: "the featbench.toml reference in README.md"})
	if lines == nil {
		return cfg, ps // not parsed: nothing to check
	}
	c := &checker{file: path, lines: lines, problems: ps}
	c.validate(&cfg, root)
	if err := c.problems.Err(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// checker collects the problems of one file.
type checker struct {
	file     string
	lines    tomlstrict.Lines
	problems Problems
}

func (c *checker) add(key, format string, args ...any) {
	c.lines.Add(&c.problems, c.file, key, format, args...)
}

// validate checks the values the site uses, and completes base_url.
func (c *checker) validate(cfg *Config, root string) {
	s := &cfg.Site
	if s.BaseURL == "" {
		s.BaseURL = "/"
	}
	if err := checkChars(s.BaseURL); err != nil {
		c.add("site.base_url", "%v", err)
	} else {
		u, err := url.Parse(s.BaseURL)
		// A leading "//" (even "///") is another host to a browser.
		bad := err != nil || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.HasPrefix(s.BaseURL, "//") ||
			!(u.Scheme == "" && u.Host == "" && strings.HasPrefix(u.Path, "/")) &&
				!((u.Scheme == "http" || u.Scheme == "https") && u.Host != "")
		if bad {
			c.add("site.base_url", "%q must be a path such as /featbench/ or an http(s) URL such as https://org.github.io/featbench/", s.BaseURL)
		} else if !strings.HasSuffix(s.BaseURL, "/") {
			s.BaseURL += "/"
		}
	}
	c.checkFolders(s, root)
	c.checkEval(&cfg.Eval)
	c.checkCollect(&cfg.Collect)
	c.checkLLM(&cfg.LLM)
	c.checkAgents(cfg)
	for i, b := range s.Badges {
		if err := checkLink(b.URL); err != nil {
			c.add(fmt.Sprintf("site.badges[%d].url", i), "%v", err)
		}
	}
	for i, l := range s.Links {
		if err := checkLink(l.URL); err != nil {
			c.add(fmt.Sprintf("site.links[%d].url", i), "%v", err)
		}
	}
	c.checkBoards(s)
}

// boardKey is a dataset's name, or name/version, as data/ names them.
var boardKey = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)?$`)

// checkBoards checks [site.boards]: keys that can name a dataset, split
// names that can be splits, and filter tags a submission could carry.
func (c *checker) checkBoards(s *Site) {
	for _, k := range sortedNames(s.Boards) {
		b := s.Boards[k]
		key := "site.boards." + k
		if !boardKey.MatchString(k) || strings.Contains(k, "..") {
			c.add(key, "%q is not a dataset's name or name/version (letters, digits, '.', '_', '-')", k)
		}
		if b.DefaultSplit != "" && (!boardKey.MatchString(b.DefaultSplit) || strings.Contains(b.DefaultSplit, "/")) {
			c.add(key+".default_split", "%q is not a split name (letters, digits, '.', '_', '-')", b.DefaultSplit)
		}
		seen := map[string]bool{}
		for i, t := range b.FilterTags {
			f := fmt.Sprintf("%s.filter_tags[%d]", key, i)
			switch {
			case strings.TrimSpace(t) == "":
				c.add(f, "is empty")
			case len(t) > 64 || strings.ContainsAny(t, "\n\r\t"):
				c.add(f, "%q is not a tag: one line of at most 64 bytes", t)
			case seen[t]:
				c.add(f, "%q is listed twice", t)
			}
			seen[t] = true
		}
		for _, m := range sortedNames(b.Marks) {
			f := key + ".marks." + m
			switch why := b.Marks[m]; {
			case strings.TrimSpace(m) == "" || len(m) > 64 || strings.ContainsAny(m, "\n\r\t"):
				c.add(f, "%q is not a mark: one line of at most 64 bytes, as system names carry it", m)
			case strings.TrimSpace(why) == "" || len(why) > 1000:
				c.add(f, "wants an explanation of 1 to 1000 bytes")
			}
		}
	}
}

// checkEval checks the [eval] table's values.
func (c *checker) checkEval(e *Eval) {
	if e.DockerHost != "" && !dockerHost.MatchString(e.DockerHost) {
		c.add("eval.docker_host", "%q is not a Docker engine's address (unix:///path/to/docker.sock or tcp://host:port); leave it out for $DOCKER_HOST", e.DockerHost)
	}
	if e.Workers < 1 || e.Workers > 256 {
		c.add("eval.workers", "is %d; want 1 to 256", e.Workers)
	}
	if e.IndexURL != "" {
		if msg := IndexURLProblem(e.IndexURL); msg != "" {
			c.add("eval.index_url", "%q %s", e.IndexURL, msg)
		}
	}
	for j, u := range e.ExtraIndexURL {
		if msg := IndexURLProblem(u); msg != "" {
			c.add(fmt.Sprintf("eval.extra_index_url[%d]", j), "%q %s", u, msg)
		}
	}
	for _, d := range []struct {
		key, v string
		zero   bool // "0" allowed: no limit
	}{{"eval.test_file_timeout", e.TestFileTimeout, false}, {"eval.test_timeout", e.TestTimeout, true}, {"eval.instance_timeout", e.InstanceTimeout, false}} {
		t, err := time.ParseDuration(d.v)
		switch {
		case err != nil:
			c.add(d.key, "%q is not a duration such as \"90s\" or \"10m\"", d.v)
		case t < 0 || (t == 0 && !d.zero):
			c.add(d.key, "is %s; want a positive duration", d.v)
		}
	}
	if _, err := ParseBytes(e.Memory); err != nil {
		c.add("eval.memory", "%v", err)
	}
	if e.CPUs <= 0 || e.CPUs > 256 || math.IsNaN(e.CPUs) {
		c.add("eval.cpus", "is %v; want more than 0 and at most 256", e.CPUs)
	}
	if e.Pids < 16 || e.Pids > 1<<20 {
		c.add("eval.pids", "is %d; want 16 to %d", e.Pids, 1<<20)
	}
	if !imagePrefix.MatchString(e.ImagePrefix) {
		c.add("eval.image_prefix", "%q is not an image name prefix (lower-case letters, digits, '.', '_', '-', '/')", e.ImagePrefix)
	}
	if e.Runs == "" || checkChars(e.Runs) != nil {
		c.add("eval.runs", "%q is not a folder name", e.Runs)
	}
	if e.RerunSample < 0 || e.RerunSample > 1_000_000 {
		c.add("eval.rerun_sample", "is %d; want 0 (every instance) to 1000000", e.RerunSample)
	}
	if e.RerunWholeMax < 0 || e.RerunWholeMax > 1_000_000 {
		c.add("eval.rerun_whole_max", "is %d; want 0 (never the whole row) to 1000000", e.RerunWholeMax)
	}
	switch e.Backend {
	case "local":
	case "swarm":
		if !dockerHost.MatchString(e.Swarm.Manager) {
			c.add("eval.swarm.manager", "%q is not an engine address such as \"unix:///run/featbench-swarm/node1.sock\" or \"tcp://10.0.0.1:2376\" (backend = \"swarm\" needs one)", e.Swarm.Manager)
		}
		if !hostPort.MatchString(e.Swarm.Registry) {
			c.add("eval.swarm.registry", "%q is not a registry's host:port such as \"10.77.0.1:5077\" (backend = \"swarm\" needs one)", e.Swarm.Registry)
		}
		if e.Swarm.PushRegistry != "" && !hostPort.MatchString(e.Swarm.PushRegistry) {
			c.add("eval.swarm.push_registry", "%q is not a registry's host:port such as \"127.0.0.1:5077\"", e.Swarm.PushRegistry)
		}
	default:
		c.add("eval.backend", "is %q; want one of %s", e.Backend, strings.Join(Backends, ", "))
	}
}

var (
	dockerHost = regexp.MustCompile(`^(unix://)?/[^\s]+$|^tcp://[A-Za-z0-9.-]+:[0-9]{1,5}$`)
	hostPort   = regexp.MustCompile(`^[A-Za-z0-9.-]+:[0-9]{1,5}$`)
)

var imagePrefix = regexp.MustCompile(`^[a-z0-9]+([._/-][a-z0-9]+)*$`)

// ParseBytes reads a memory size: a number of bytes with an optional k, m
// or g suffix (powers of 1024), as docker run --memory does. At least 16m.
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for suffix, m := range map[string]int64{"k": 1 << 10, "m": 1 << 20, "g": 1 << 30} {
		if strings.HasSuffix(t, suffix) {
			t, mult = strings.TrimSuffix(t, suffix), m
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<50)/mult {
		return 0, fmt.Errorf("%q is not a memory size such as \"4g\" or \"512m\"", s)
	}
	if n*mult < 16<<20 {
		return 0, fmt.Errorf("%q is less than 16m, too little for Python and pytest", s)
	}
	return n * mult, nil
}

// Durations of the [eval] table, parsed (checked by Load).
func (e Eval) Durations() (testFile, test, instance time.Duration) {
	testFile, _ = time.ParseDuration(e.TestFileTimeout)
	test, _ = time.ParseDuration(e.TestTimeout)
	instance, _ = time.ParseDuration(e.InstanceTimeout)
	return testFile, test, instance
}

// checkFolders refuses a data or output folder the build would damage or
// read wrongly. Each build replaces the output folder as a whole, so it
// must hold neither the project nor its data, and the data folder must
// not hold the site, which would be read back as data.
func (c *checker) checkFolders(s *Site, root string) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		c.add("", "project folder %q: %v", root, err)
		return
	}
	resolve := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(absRoot, p)
	}
	data, out := resolve(s.Data), resolve(s.Output)
	dataOK := true
	switch {
	case s.Data == "":
		c.add("site.data", "is empty; name the data folder, such as data")
		dataOK = false
	case data == filepath.VolumeName(data)+string(filepath.Separator):
		c.add("site.data", "%q is the filesystem root; name the data folder, such as data", s.Data)
		dataOK = false
	case data == absRoot:
		c.add("site.data", "%q is the project folder itself; name the data folder inside it, such as data", s.Data)
		dataOK = false
	}
	rel := filepath.Clean(s.Output)
	switch {
	case s.Output == "" || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) ||
		within(absRoot, out):
		c.add("site.output", "%q would overwrite the project (each build replaces the whole output folder); name a folder such as public", s.Output)
	case dataOK && within(data, out):
		c.add("site.output", "%q would overwrite the data folder %q (each build replaces the whole output folder); name a folder such as public", s.Output, s.Data)
	case dataOK && within(out, data):
		c.add("site.output", "%q is inside the data folder %q, where the site would be read as data; name a folder outside it, such as public", s.Output, s.Data)
	}
}

// within reports whether path p is dir or inside it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

// checkChars refuses characters that make a browser read a URL otherwise
// than it looks: a backslash is a slash to browsers (/\host is another
// host), and whitespace and control characters are dropped or split on.
func checkChars(s string) error {
	for _, r := range s {
		switch {
		case r == '\\':
			return fmt.Errorf("%q has a backslash, which browsers read as a slash; write / or %%5C", s)
		case unicode.IsControl(r) || unicode.IsSpace(r):
			return fmt.Errorf("%q has whitespace or a control character; percent-encode it (%%20)", s)
		}
	}
	return nil
}

// checkLink allows http(s) URLs and site paths, nothing else: no other
// scheme, and no path a browser reads as another host (//host).
func checkLink(s string) error {
	if s == "" {
		return nil
	}
	if err := checkChars(s); err != nil {
		return err
	}
	if strings.HasPrefix(s, "//") {
		return fmt.Errorf("%q names another host without a scheme; write https://host/... or a site path such as datasets/", s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q: %w", s, err)
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
