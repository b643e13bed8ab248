// Package synth writes a synthetic but valid featbench project of any size
// (featbench.toml, the chart library pin and data/), so that the site build
// can be measured at the scale the leaderboard must reach without real
// evaluation data. Output is deterministic: the same Config gives the same
// bytes.
package synth

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
)

// Dataset name, version and split names of the generated tree.
const (
	DatasetName    = "synthetic"
	DatasetVersion = "v1"
	SplitFull      = "full"
	SplitLite      = "lite"
)

// Config sizes the generated project.
type Config struct {
	// RepoRoot is the featbench checkout whose package.json and
	// package-lock.json are copied, so that the build finds the chart
	// library pin. Required.
	RepoRoot string
	// Instances is the number of instances; default 4000.
	Instances int
	// Submissions is the number of per-instance submissions on the full
	// split; default 50, negative for none.
	Submissions int
	// Repos is the number of source repositories; default 24.
	Repos int
	// LiteSize is the size of the lite split (the first instances);
	// default 300, capped at Instances.
	LiteSize int
	// Coverage is the share of instances each submission has a result
	// for; default 0.97.
	Coverage float64
	// Seed makes the output reproducible; 0 means a fixed default.
	Seed uint64
	// TestIDs is the granularity of FAIL_TO_PASS and PASS_TO_PASS, and so
	// of the test ids every result lists: TestFiles (the default) as in
	// FeatureBench, one fail-to-pass test file (sometimes two) and five
	// pass-to-pass files per instance; TestFunctions as in SWE-bench,
	// 3-15 fail-to-pass and 5-30 pass-to-pass test functions, which makes
	// results about four times larger.
	TestIDs string
	// Statements is the shape of problem statements: StatementsReal (the
	// default) like FeatureBench's, 27 KB on average; StatementsSmall
	// about 1.5 KB each, as earlier benchmarks had. Every other field is
	// the same in both shapes.
	Statements string
}

// Test id granularities for Config.TestIDs.
const (
	TestFiles     = "files"
	TestFunctions = "functions"
)

func (c Config) withDefaults() Config {
	if c.Instances <= 0 {
		c.Instances = 4000
	}
	if c.Submissions < 0 {
		c.Submissions = 0
	} else if c.Submissions == 0 {
		c.Submissions = 50
	}
	if c.Repos <= 0 {
		c.Repos = 24
	}
	if c.LiteSize <= 0 {
		c.LiteSize = 300
	}
	c.LiteSize = min(c.LiteSize, c.Instances)
	if c.Coverage <= 0 || c.Coverage > 1 {
		c.Coverage = 0.97
	}
	if c.Seed == 0 {
		c.Seed = 20260121
	}
	if c.TestIDs == "" {
		c.TestIDs = TestFiles
	}
	if c.Statements == "" {
		c.Statements = StatementsReal
	}
	return c
}

// Generate writes a complete project root into dir, which is created when
// missing. Existing files of the same names are overwritten; nothing else
// in dir is touched.
func Generate(dir string, cfg Config) error {
	cfg = cfg.withDefaults()
	if cfg.TestIDs != TestFiles && cfg.TestIDs != TestFunctions {
		return fmt.Errorf("synth: Config.TestIDs is %q; want %q or %q", cfg.TestIDs, TestFiles, TestFunctions)
	}
	if cfg.Statements != StatementsReal && cfg.Statements != StatementsSmall {
		return fmt.Errorf("synth: Config.Statements is %q; want %q or %q", cfg.Statements, StatementsReal, StatementsSmall)
	}
	if cfg.RepoRoot == "" {
		return errors.New("synth: Config.RepoRoot is required (package.json and package-lock.json are copied from it)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		raw, err := os.ReadFile(filepath.Join(cfg.RepoRoot, f))
		if err != nil {
			return fmt.Errorf("synth: copying the chart library pin: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), raw, 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "featbench.toml"), []byte(configTOML), 0o644); err != nil {
		return err
	}

	g := &gen{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	g.repos = makeRepos(cfg.Repos)
	instances := g.instances()

	dsDir := filepath.Join(dir, "data", "datasets", DatasetName, DatasetVersion)
	if err := os.MkdirAll(dsDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dsDir, bench.ManifestFile), g.manifest(instances), 0o644); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(dsDir, bench.InstancesFile), len(instances), func(i int) any { return instances[i] }); err != nil {
		return err
	}

	subRoot := filepath.Join(dir, "data", "submissions", DatasetName, DatasetVersion, SplitFull)
	for i := range cfg.Submissions {
		if err := g.submission(subRoot, i, instances); err != nil {
			return err
		}
	}
	return nil
}

const configTOML = `# Synthetic project written by internal/synth for build benchmarks.
[site]
title = "FeatBench (synthetic)"
description = "A synthetic leaderboard at production scale, for measuring the site build."
base_url = "https://synthetic.example/"
output = "public"
data = "data"
default_dataset = "synthetic/v1"
default_split = "full"
`

type repo struct {
	name    string // owner/name
	pkg     string // Python package
	license string
}

// realRepos give the synthetic repositories plausible names and lengths.
var realRepos = []repo{
	{"pandas-dev/pandas", "pandas", "BSD-3-Clause"}, {"scikit-learn/scikit-learn", "sklearn", "BSD-3-Clause"},
	{"django/django", "django", "BSD-3-Clause"}, {"pallets/flask", "flask", "BSD-3-Clause"},
	{"psf/requests", "requests", "Apache-2.0"}, {"sympy/sympy", "sympy", "BSD-3-Clause"},
	{"matplotlib/matplotlib", "matplotlib", "PSF-2.0"}, {"pydata/xarray", "xarray", "Apache-2.0"},
	{"astropy/astropy", "astropy", "BSD-3-Clause"}, {"pytest-dev/pytest", "_pytest", "MIT"},
	{"sphinx-doc/sphinx", "sphinx", "BSD-2-Clause"}, {"pylint-dev/pylint", "pylint", "GPL-2.0"},
	{"huggingface/transformers", "transformers", "Apache-2.0"}, {"pydantic/pydantic", "pydantic", "MIT"},
	{"fastapi/fastapi", "fastapi", "MIT"}, {"encode/httpx", "httpx", "BSD-3-Clause"},
	{"python-poetry/poetry", "poetry", "MIT"}, {"tiangolo/typer", "typer", "MIT"},
	{"mwaskom/seaborn", "seaborn", "BSD-3-Clause"}, {"networkx/networkx", "networkx", "BSD-3-Clause"},
	{"dask/dask", "dask", "BSD-3-Clause"}, {"marshmallow-code/marshmallow", "marshmallow", "MIT"},
	{"sqlalchemy/sqlalchemy", "sqlalchemy", "MIT"}, {"aio-libs/aiohttp", "aiohttp", "Apache-2.0"},
}

func makeRepos(n int) []repo {
	out := make([]repo, n)
	for i := range out {
		r := realRepos[i%len(realRepos)]
		if k := i / len(realRepos); k > 0 {
			// More repositories than names: keep names unique.
			r.name = fmt.Sprintf("%s%d", r.name, k+1)
		}
		out[i] = r
	}
	return out
}

type gen struct {
	cfg   Config
	rng   *rand.Rand
	repos []repo
}

func (g *gen) between(lo, hi int) int { return lo + g.rng.IntN(hi-lo+1) }

func (g *gen) pick(words []string) string { return words[g.rng.IntN(len(words))] }

func (g *gen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.rng.IntN(16)]
	}
	return string(b)
}

var (
	verbs   = []string{"add", "support", "implement", "expose", "allow", "introduce", "extend", "provide"}
	nouns   = []string{"cache", "parser", "reader", "writer", "encoder", "index", "schema", "router", "client", "session", "frame", "series", "plot", "query", "loader", "registry", "config", "resolver", "formatter", "validator"}
	adjs    = []string{"streaming", "lazy", "nested", "typed", "async", "chunked", "sorted", "cached", "partial", "strict", "custom", "optional"}
	fillers = []string{"the", "function", "must", "return", "a", "value", "when", "given", "an", "input", "that", "is", "not", "valid", "raise", "error", "with", "message", "keep", "existing", "behaviour", "unchanged", "for", "callers", "which", "already", "use", "module", "and", "its", "public", "interface", "should", "accept", "keyword", "arguments", "default", "documented", "below"}
	modes   = []string{"wrong_behaviour", "regression", "incomplete", "timeout", "syntax_error", "import_error", "patch_failed", "context_overflow"}
)

func (g *gen) sentence(minW, maxW int) string {
	n := g.between(minW, maxW)
	w := make([]string, n)
	for i := range w {
		w[i] = g.pick(fillers)
	}
	w[0] = strings.ToUpper(w[0][:1]) + w[0][1:]
	return strings.Join(w, " ") + "."
}

func (g *gen) paragraph(sentences int) string {
	s := make([]string, sentences)
	for i := range s {
		s[i] = g.sentence(8, 18)
	}
	return strings.Join(s, " ")
}

// feature is what one instance asks for; its names recur in the statement,
// the patch and the tests.
type feature struct {
	repo   repo
	module string // e.g. pandas/io/cache.py
	fn     string // e.g. streaming_cache
	test   string // e.g. tests/io/test_cache.py
}

func (g *gen) instances() []*bench.Instance {
	out := make([]*bench.Instance, g.cfg.Instances)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	span := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC).Sub(start)
	for i := range out {
		r := g.repos[g.rng.IntN(len(g.repos))]
		sub := g.pick(nouns)
		f := feature{
			repo:   r,
			module: r.pkg + "/" + sub + "/" + g.pick(nouns) + ".py",
			fn:     g.pick(adjs) + "_" + g.pick(nouns),
			test:   "tests/" + sub + "/test_" + g.pick(nouns) + ".py",
		}
		level := 1
		if g.rng.IntN(4) == 0 {
			level = 2
		}
		owner, name, _ := strings.Cut(r.name, "/")
		id := fmt.Sprintf("%s__%s-%s-%05d.lv%d", owner, name, strings.ReplaceAll(f.fn, "_", "-"), i, level)
		commit := g.hex(40)
		patch, added, files := g.patch(f)
		var f2p, p2p []string
		f2pPoints, p2pPoints := 0, 0
		if g.cfg.TestIDs == TestFunctions {
			f2p = g.tests(f, "test_"+f.fn, g.between(3, 15))
			p2p = g.tests(f, "test_existing", g.between(5, 30))
			f2pPoints, p2pPoints = len(f2p)+g.between(0, 20), len(p2p)+g.between(0, 200)
		} else {
			f2p, p2p = g.testFiles(f)
			f2pPoints, p2pPoints = g.between(10, 120), g.between(50, 400)
		}
		// The small statement is drawn in either shape, so that the shape
		// changes no other field; a real one has a random source of its
		// own.
		statement := g.statement(f)
		if g.cfg.Statements == StatementsReal {
			statement = realStatement(rand.New(rand.NewPCG(g.cfg.Seed^0x5eed5eed, uint64(i))), f)
		}
		in := &bench.Instance{
			InstanceID:       id,
			Repo:             r.name,
			BaseCommit:       commit,
			Level:            level,
			ProblemStatement: statement,
			Patch:            patch,
			TestPatch:        g.testPatch(f),
			FailToPass:       f2p,
			PassToPass:       p2p,
			ImageName:        "featbench/" + owner + "_" + name + ":" + commit[:12],
			CreatedAt:        start.Add(time.Duration(g.rng.Int64N(int64(span)))).Truncate(time.Second).Format(time.RFC3339),
			Lines:            &added,
			Files:            &files,
			Functions:        ptr(g.between(1, 8)),
			F2PTestPoints:    &f2pPoints,
			P2PTestPoints:    &p2pPoints,
			TopObjects:       []string{f.module[:len(f.module)-3] + "." + f.fn},
		}
		if g.rng.IntN(3) == 0 {
			in.RepoSettings = json.RawMessage(`{"python":"3.11","install":"pip install -e .[test]"}`)
		}
		out[i] = in
	}
	return out
}

// statement is about 1.5 KB of markdown with a python code block
// (StatementsSmall).
func (g *gen) statement(f feature) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Task\n\n**Task statement:** %s `%s` in `%s`.\n\n", g.pick(verbs), f.fn, f.module)
	b.WriteString(g.paragraph(g.between(5, 7)))
	fmt.Fprintf(&b, "\n\n## Interface\n\nPath: `%s`\n\n```python\n", f.module)
	fmt.Fprintf(&b, "def %s(data, *, limit: int | None = None, strict: bool = False) -> list[str]:\n", f.fn)
	fmt.Fprintf(&b, "    \"\"\"%s\n\n    %s\n    \"\"\"\n```\n\n## Expected behaviour\n\n", g.sentence(6, 10), g.sentence(8, 14))
	for range g.between(3, 6) {
		fmt.Fprintf(&b, "- `%s` %s\n", f.fn, strings.ToLower(g.sentence(8, 16)))
	}
	b.WriteString("\n")
	b.WriteString(g.paragraph(g.between(2, 4)))
	b.WriteString("\n")
	return b.String()
}

// patch is a 40-80 line unified diff over one to three files; it returns
// the diff, the lines it adds and the files it touches.
func (g *gen) patch(f feature) (string, int, int) {
	files := g.between(1, 3)
	total := g.between(40, 80)
	var b strings.Builder
	added := 0
	for k := range files {
		path := f.module
		if k > 0 {
			path = f.repo.pkg + "/" + g.pick(nouns) + ".py"
		}
		body := total / files
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex %s..%s 100644\n--- a/%s\n+++ b/%s\n", path, path, g.hex(7), g.hex(7), path, path)
		at := g.between(10, 400)
		// Three context lines, then body-5 added lines.
		fmt.Fprintf(&b, "@@ -%d,3 +%d,%d @@ class %s:\n", at, at, body-2, camel(f.fn))
		b.WriteString("         return self._value\n \n \n")
		fmt.Fprintf(&b, "+def %s(data, *, limit=None, strict=False):\n", f.fn)
		added++
		for j := range body - 7 {
			fmt.Fprintf(&b, "+    %s_%d = %s(data, %d)  # %s\n", g.pick(nouns), j, g.pick(nouns), g.rng.IntN(100), g.pick(fillers))
			added++
		}
		b.WriteString("+    return result\n")
		added++
	}
	return b.String(), added, files
}

// camel turns snake_case into CamelCase, for a class name.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

func (g *gen) testPatch(f feature) string {
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex %s..%s 100644\n--- a/%s\n+++ b/%s\n@@ -1,3 +1,17 @@\n",
		f.test, f.test, g.hex(7), g.hex(7), f.test, f.test)
	fmt.Fprintf(&b, " import pytest\n \n from %s import %s\n", strings.ReplaceAll(f.module[:len(f.module)-3], "/", "."), f.fn)
	for k := range 3 {
		fmt.Fprintf(&b, "+\n+def test_%s_%d():\n+    assert %s([%d]) == [\"%d\"]\n+    assert %s([], limit=%d) == []\n", f.fn, k, f.fn, k, k, f.fn, k)
	}
	return b.String()
}

func (g *gen) tests(f feature, stem string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s::%s_%d", f.test, stem, i)
	}
	return out
}

// testFiles picks FeatureBench-shaped tests: the feature's test file (and
// one in ten times a second one) fail to pass, five other test files of the
// repository pass to pass.
func (g *gen) testFiles(f feature) (f2p, p2p []string) {
	seen := map[string]bool{f.test: true}
	f2p = []string{f.test}
	pick := func() string {
		for {
			t := "tests/" + g.pick(nouns) + "/test_" + g.pick(nouns) + ".py"
			if !seen[t] {
				seen[t] = true
				return t
			}
		}
	}
	if g.rng.IntN(10) == 0 {
		f2p = append(f2p, pick())
	}
	for range 5 {
		p2p = append(p2p, pick())
	}
	return f2p, p2p
}

func (g *gen) manifest(instances []*bench.Instance) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "name = %q\ntitle = %q\nversion = %q\nrelease_date = 2026-01-15\n", DatasetName, "Synthetic", DatasetVersion)
	fmt.Fprintf(&b, "description = %q\n", fmt.Sprintf("%d synthetic instances over %d repositories, written by internal/synth for build benchmarks.", len(instances), len(g.repos)))
	b.WriteString("source_url = \"https://github.com/featbench/featbench\"\n")
	for _, r := range g.repos {
		fmt.Fprintf(&b, "\n[[repositories]]\nname = %q\nurl = %q\nlicense = %q\n", r.name, "https://github.com/"+r.name, r.license)
	}
	split := func(name, desc string, ins []*bench.Instance) {
		fmt.Fprintf(&b, "\n[[splits]]\nname = %q\ndescription = %q\ninstances = [\n", name, desc)
		for _, in := range ins {
			fmt.Fprintf(&b, "  %q,\n", in.InstanceID)
		}
		b.WriteString("]\n")
	}
	split(SplitFull, "All instances.", instances)
	split(SplitLite, "The first instances, for a quick run.", instances[:g.cfg.LiteSize])
	return []byte(b.String())
}

var (
	scaffolds = []string{"OpenHands", "Codex", "Claude Code", "Gemini CLI", "mini-swe-agent", "SWE-agent", "Aider", "Moatless"}
	models    = []string{"GPT-5.1-Codex", "Claude Opus 4.5", "Gemini 3 Pro", "Qwen3-Coder-480B", "DeepSeek-V3.2", "GLM-4.7", "Kimi K2", "MiniMax-M2.1", "Llama 4 Maverick", "Mistral Devstral"}
	orgs      = []string{"OpenAI", "Anthropic", "Google", "Alibaba", "DeepSeek", "Zhipu", "Moonshot", "MiniMax", "Meta", "Mistral", "All Hands AI"}
)

func slugify(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

func (g *gen) submission(root string, i int, instances []*bench.Instance) error {
	scaffold, model := scaffolds[i%len(scaffolds)], models[(i/len(scaffolds)+i)%len(models)]
	date := time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC).AddDate(0, 0, g.rng.IntN(330))
	// The index keeps slugs unique however many submissions there are.
	slug := fmt.Sprintf("%s_%s-%02d", slugify(scaffold), slugify(model), i)
	dir := filepath.Join(root, date.Format("20060102")+"_"+slug)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	openWeights := g.rng.IntN(3) == 0
	var m strings.Builder
	fmt.Fprintf(&m, "name = %q\nscaffold = %q\nmodel = %q\n", fmt.Sprintf("%s + %s (run %d)", scaffold, model, i), scaffold, model)
	fmt.Fprintf(&m, "organisations = [%q, %q]\n", orgs[i%len(orgs)], orgs[(i+3)%len(orgs)])
	fmt.Fprintf(&m, "date = %s\nsite_url = %q\nopen_weights = %t\nopen_scaffold = %t\nattempts = 1\n",
		date.Format("2006-01-02"), "https://example.com/"+slug, openWeights, g.rng.IntN(2) == 0)
	fmt.Fprintf(&m, "tags = [%q, %q]\nnotes = %q\n", "synthetic", g.pick(adjs), g.paragraph(2))
	if err := os.WriteFile(filepath.Join(dir, bench.MetadataFile), []byte(m.String()), 0o644); err != nil {
		return err
	}

	skill := 0.05 + 0.55*g.rng.Float64()
	hasTokens := g.rng.IntN(10) != 0
	hasCost := hasTokens && !openWeights
	priceIn, priceOut := 0.5e-6+4.5e-6*g.rng.Float64(), 2e-6+13e-6*g.rng.Float64()
	var results []bench.Result
	for _, in := range instances {
		if g.rng.Float64() >= g.cfg.Coverage {
			continue // no prediction for this instance
		}
		results = append(results, g.result(in, skill, hasTokens, hasCost, priceIn, priceOut))
	}
	return writeJSONL(filepath.Join(dir, bench.ResultsFile), len(results), func(k int) any { return &results[k] })
}

// result is one consistent evaluation: resolved exactly when the patch
// applied and every FAIL_TO_PASS and PASS_TO_PASS test passed.
func (g *gen) result(in *bench.Instance, skill float64, hasTokens, hasCost bool, priceIn, priceOut float64) bench.Result {
	r := bench.Result{
		InstanceID:   in.InstanceID,
		PatchApplied: g.rng.Float64() < 0.93,
		F2PPassed:    []string{},
		F2PFailed:    []string{},
		P2PPassed:    []string{},
		P2PFailed:    []string{},
		FilesChanged: g.between(1, 4),
	}
	p := skill
	if in.Level == 2 {
		p /= 3
	}
	switch {
	case !r.PatchApplied:
		// The base is tested as it is: the feature's tests fail, the rest pass.
		r.F2PFailed = append(r.F2PFailed, in.FailToPass...)
		r.P2PPassed = append(r.P2PPassed, in.PassToPass...)
		r.FailureModes = []string{"patch_failed"}
	case g.rng.Float64() < p:
		r.Resolved = true
		r.F2PPassed = append(r.F2PPassed, in.FailToPass...)
		r.P2PPassed = append(r.P2PPassed, in.PassToPass...)
	default:
		// At least one test fails, or the result would count as resolved.
		passF2P := g.rng.IntN(len(in.FailToPass)) // < len: one F2P test fails
		r.F2PPassed = append(r.F2PPassed, in.FailToPass[:passF2P]...)
		r.F2PFailed = append(r.F2PFailed, in.FailToPass[passF2P:]...)
		broken := 0
		if g.rng.IntN(4) == 0 {
			broken = g.between(1, len(in.PassToPass))
		}
		r.P2PPassed = append(r.P2PPassed, in.PassToPass[broken:]...)
		r.P2PFailed = append(r.P2PFailed, in.PassToPass[:broken]...)
		r.FailureModes = []string{g.pick(modes[:6])}
		if broken > 0 {
			r.FailureModes = append(r.FailureModes, "regression")
		}
	}
	if hasTokens {
		tin := int64(math.Exp(12.5 + 1.2*g.rng.NormFloat64()))
		tout := int64(math.Exp(9.5 + 0.8*g.rng.NormFloat64()))
		r.TokensIn, r.TokensOut = &tin, &tout
		if hasCost {
			c, _ := strconv.ParseFloat(strconv.FormatFloat(float64(tin)*priceIn+float64(tout)*priceOut, 'f', 4, 64), 64)
			r.Cost = &c
		}
	}
	return r
}

func writeJSONL(path string, n int, item func(int) any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range n {
		if err := enc.Encode(item(i)); err != nil {
			f.Close()
			return fmt.Errorf("synth: %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func ptr[T any](v T) *T { return &v }
