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
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"
)

// FileName is the configuration file's name at the project root.
const FileName = "featbench.toml"

// Config is featbench.toml.
type Config struct {
	Site    Site    `toml:"site"`
	Collect Collect `toml:"collect"`
	Eval    Eval    `toml:"eval"`
	LLM     LLM     `toml:"llm"`
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
	}, Collect: Collect{
		Work:    ".cache/collect",
		Workers: 1,
	}, LLM: LLM{
		Timeout: "3m",
	}}
}

// Problem is one thing wrong in featbench.toml.
type Problem struct {
	File string
	Line int    // 0 when not known
	Key  string // e.g. site.badges[1].url; "" for the file as a whole
	Msg  string
}

func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc += ":" + strconv.Itoa(p.Line)
	}
	if p.Key == "" {
		return loc + ": " + p.Msg
	}
	return fmt.Sprintf("%s: key %q: %s", loc, p.Key, p.Msg)
}

// Problems is every problem one reading of featbench.toml found, in the
// order of the file.
type Problems []Problem

func (ps Problems) Error() string {
	if len(ps) == 1 {
		return ps[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problems:", ps[0].File, len(ps))
	for _, p := range ps {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Load reads the file at path over the defaults, with relative folders
// taken from the file's folder. See LoadRoot.
func Load(path string) (Config, error) {
	return LoadRoot(path, filepath.Dir(path))
}

// LoadRoot reads the file at path over the defaults; relative folders in
// it are relative to the project root. A missing file gives the defaults.
// Otherwise every problem the file has is reported at once, as Problems,
// each with its line where it can be found: a syntax error (the parser
// stops at the first), unknown keys (with the closest known key), values
// of the wrong type, and values the site cannot use.
func LoadRoot(path, root string) (Config, error) {
	cfg := Default()
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, fmt.Errorf("reading config: %w", err)
	}
	// Decoded as a tree first, not into Config: the decoder stops at the
	// first value of the wrong type, and it ignores unknown keys.
	var tree map[string]any
	if _, err := toml.Decode(string(raw), &tree); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return cfg, Problems{{File: path, Line: pe.Position.Line, Key: pe.LastKey, Msg: pe.Message}}
		}
		return cfg, Problems{{File: path, Msg: err.Error()}}
	}
	c := &checker{file: path, lines: keyLines(string(raw))}
	c.fill("", tree, reflect.ValueOf(&cfg).Elem())
	c.validate(&cfg, root)
	if len(c.problems) > 0 {
		sort.SliceStable(c.problems, func(i, j int) bool {
			li, lj := c.problems[i].Line, c.problems[j].Line
			return li != 0 && (lj == 0 || li < lj)
		})
		return cfg, c.problems
	}
	return cfg, nil
}

// checker collects the problems of one file.
type checker struct {
	file     string
	lines    map[string]int
	problems Problems
}

func (c *checker) add(key, format string, args ...any) {
	c.problems = append(c.problems, Problem{File: c.file, Line: c.line(key), Key: key, Msg: fmt.Sprintf(format, args...)})
}

// line finds the line of key, or else of the closest table around it.
func (c *checker) line(key string) int {
	for key != "" {
		if n, ok := c.lines[key]; ok {
			return n
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// fill stores the decoded value v of key into dst, checking its type, and
// reports keys dst does not have. Tables and arrays are walked whole, so
// that every problem is found, not the first.
func (c *checker) fill(key string, v any, dst reflect.Value) {
	switch dst.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			c.add(key, "must be a table, not %s", tomlType(v))
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := join(key, k)
			i := fieldIndex(dst.Type(), k)
			if i < 0 {
				c.add(sub, "unknown key%s (every key is in the featbench.toml reference in README.md)", suggest(key, k, dst.Type()))
				continue
			}
			c.fill(sub, m[k], dst.Field(i))
		}
	case reflect.Map: // the reserved [collect] and [eval] tables: anything goes
		m, ok := v.(map[string]any)
		if !ok {
			c.add(key, "must be a table, not %s", tomlType(v))
			return
		}
		dst.Set(reflect.ValueOf(m))
	case reflect.Slice:
		var elems []any
		switch a := v.(type) {
		case []map[string]any:
			for _, e := range a {
				elems = append(elems, e)
			}
		case []any:
			elems = a
		default:
			c.add(key, "must be an array, not %s", tomlType(v))
			return
		}
		s := reflect.MakeSlice(dst.Type(), len(elems), len(elems))
		for i, e := range elems {
			// A table of an array starts from its defaults.
			if d, ok := s.Index(i).Addr().Interface().(interface{ setDefaults() }); ok {
				d.setDefaults()
			}
			c.fill(fmt.Sprintf("%s[%d]", key, i), e, s.Index(i))
		}
		dst.Set(s)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			c.add(key, "must be a string, not %s", tomlType(v))
			return
		}
		dst.SetString(s)
	case reflect.Int:
		n, ok := v.(int64)
		if !ok {
			c.add(key, "must be an integer, not %s", tomlType(v))
			return
		}
		dst.SetInt(n)
	case reflect.Float64:
		switch n := v.(type) {
		case float64:
			dst.SetFloat(n)
		case int64:
			dst.SetFloat(float64(n))
		default:
			c.add(key, "must be a number, not %s", tomlType(v))
		}
	default:
		c.add(key, "cannot be read into %s", dst.Type())
	}
}

func join(key, k string) string {
	if key == "" {
		return k
	}
	return key + "." + k
}

// fieldIndex is the field of struct type t with toml name k, or -1.
func fieldIndex(t reflect.Type, k string) int {
	for i := range t.NumField() {
		if tomlName(t.Field(i)) == k {
			return i
		}
	}
	return -1
}

func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return name
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a table"
	case []any, []map[string]any:
		return "an array"
	}
	return "a date or time"
}

// suggest names the known key closest to the unknown key k of the table
// at key (of type t): a misspelling of one of the table's keys; else the
// same name in another table ("output" in [eval] is site.output), or a
// close name in a table below (a key written above its [site] header).
func suggest(key, k string, t reflect.Type) string {
	k = strings.ToLower(k)
	best, bestDist := "", maxInt
	for i := range t.NumField() {
		name := tomlName(t.Field(i))
		if d := editDistance(k, name); d <= maxEdits(name) && d < bestDist {
			best, bestDist = join(key, name), d
		}
	}
	if best == "" {
		here := stripIndices(key)
		tables(reflect.TypeOf(Config{}), "", func(table string, names []string) {
			below := here == "" || strings.HasPrefix(table, here+".")
			for _, name := range names {
				d := editDistance(k, name)
				if table != here && (d == 0 || below && d <= maxEdits(name)) && d < bestDist {
					best, bestDist = join(table, name), d
				}
			}
		})
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

const maxInt = int(^uint(0) >> 1)

// maxEdits is how far a misspelling of name may be: one edit for short
// names, where two would match unrelated words, else two.
func maxEdits(name string) int {
	if len(name) <= 4 {
		return 1
	}
	return 2
}

// tables calls f with each table of t (not arrays of tables) and the
// names of its keys.
func tables(t reflect.Type, prefix string, f func(table string, names []string)) {
	var names []string
	for i := range t.NumField() {
		fld := t.Field(i)
		names = append(names, tomlName(fld))
		if fld.Type.Kind() == reflect.Struct {
			tables(fld.Type, join(prefix, tomlName(fld)), f)
		}
	}
	f(prefix, names)
}

// stripIndices turns site.badges[1] into site.badges.
func stripIndices(key string) string {
	var b strings.Builder
	depth := 0
	for _, r := range key {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours count one each.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// keyLines maps each key of a TOML file (site.title, site.badges[1].url)
// and each table header to its line. It reads only what it needs of the
// syntax, and only after the parser accepted the file: keys in inline
// tables are not found, and their problems get the line of the table.
func keyLines(src string) map[string]int {
	lines := map[string]int{}
	set := func(k string, n int) {
		if _, ok := lines[k]; !ok {
			lines[k] = n
		}
	}
	table := ""
	arrays := map[string]int{} // [[name]] headers seen so far
	inString := ""             // the quotes closing a multi-line string
	for i, line := range strings.Split(src, "\n") {
		n := i + 1
		t := strings.TrimSpace(line)
		if inString != "" {
			if strings.Count(t, inString)%2 == 1 {
				inString = ""
			}
			continue
		}
		switch {
		case t == "" || t[0] == '#':
			continue
		case strings.HasPrefix(t, "[["):
			end := strings.Index(t, "]]")
			if end < 0 {
				continue
			}
			name, _, ok := parseKey(t[2:end])
			if !ok {
				continue
			}
			table = fmt.Sprintf("%s[%d]", name, arrays[name])
			arrays[name]++
			set(name, n)
			set(table, n)
			continue
		case t[0] == '[':
			end := strings.IndexByte(t, ']')
			if end < 0 {
				continue
			}
			if name, _, ok := parseKey(t[1:end]); ok {
				table = name
				set(table, n)
			}
			continue
		}
		key, rest, ok := parseKey(t)
		if !ok || !strings.HasPrefix(rest, "=") {
			continue
		}
		set(join(table, key), n)
		for _, q := range []string{`"""`, `'''`} {
			if strings.Count(rest, q)%2 == 1 {
				inString = q
			}
		}
	}
	return lines
}

// parseKey reads a dotted key (bare or quoted parts) from the start of s
// and returns it joined with dots, and what follows it.
func parseKey(s string) (key, rest string, ok bool) {
	var parts []string
	for {
		s = strings.TrimLeft(s, " \t")
		switch {
		case s == "":
			return "", "", false
		case s[0] == '"' || s[0] == '\'':
			end := strings.IndexByte(s[1:], s[0])
			if end < 0 {
				return "", "", false
			}
			parts = append(parts, s[1:1+end])
			s = s[2+end:]
		default:
			end := strings.IndexFunc(s, func(r rune) bool {
				return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
			})
			if end == 0 {
				return "", "", false
			}
			if end < 0 {
				end = len(s)
			}
			parts = append(parts, s[:end])
			s = s[end:]
		}
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ".") {
			return strings.Join(parts, "."), s, true
		}
		s = s[1:]
	}
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
}

// checkEval checks the [eval] table's values.
func (c *checker) checkEval(e *Eval) {
	if e.Workers < 1 || e.Workers > 256 {
		c.add("eval.workers", "is %d; want 1 to 256", e.Workers)
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
}

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
