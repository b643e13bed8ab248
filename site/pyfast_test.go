package site

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// chromaPython is what codeBlocks did before the fast path: chroma's
// Python lexer, coalesced.
func chromaPython(t testing.TB, src string) []chroma.Token {
	t.Helper()
	it, err := chroma.Coalesce(lexers.Get("python")).Tokenise(nil, src)
	if err != nil {
		t.Fatalf("chroma: %v", err)
	}
	return it.Tokens()
}

// checkPyFast fails when the fast path accepts src but its tokens differ
// from chroma's, and reports whether it accepted.
func checkPyFast(t testing.TB, p *pyFast, name, src string) bool {
	t.Helper()
	got, ok := p.tokens(src)
	if !ok {
		return false
	}
	want := chromaPython(t, src)
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Errorf("%s: token %d: fast path %s %q, chroma %s %q", name, i, got[i].Type, got[i].Value, want[i].Type, want[i].Value)
				return true
			}
		}
		t.Errorf("%s: fast path gave %d tokens, chroma %d", name, len(got), len(want))
	}
	return true
}

// Code the fast path must take, and take exactly as chroma does: every
// kind of token it scans, and words of every class chroma has.
var pyFastAccepts = map[string]string{
	"signature": "def partial_registry(data, *, limit: int | None = None, strict: bool = False) -> list[str]:\n" +
		"    \"\"\"Return the entries.\n\n    Raises ValueError if it's empty.\n    \"\"\"\n",
	"class and methods": "class Registry(Base, metaclass=ABCMeta):\n" +
		"    def __init__(self, items: dict[str, int]) -> None:\n        self.items = items\n\n" +
		"    @property\n    def size(self) -> int:\n        return len(self.items)  # entries\n\n" +
		"    @staticmethod\n    def empty(): ...\n",
	"decorators": "@functools.lru_cache(maxsize=128)\n@ app . route\n@x\ndef f(a, b):\n    return a @ b\n",
	"words": "if x is not None and y in z or not w:\n    raise NotImplementedError(self.__class__.__name__)\n" +
		"elif isinstance(x, Exception):\n    pass\nelse:\n    x.print = print\n    yield x.len, len\n" +
		"    lambda: cls\n    await async_thing\n    match = True; case = False\n    del x[0]\n",
	"operators": "a = b + c - d * e / f // g % h ** i\nflags |= A & B ^ ~C << 2 >> 1\nif (n := len(a)) != 3 and a <= b >= c == d < e > f:\n    pass\n",
	"strings": "s = \"double\" + 'single' + \"it's\" + 'say \"hi\"' + \"\"\n" +
		"t = '''\nmulti\nline\n''' + \"\"\"more\"\"\"\n",
	"numbers":               "x = [0, 1, 42, 1000, 0.6, 10., 3.25]\ny = x[1:3]\n",
	"quotes in a docstring": "def f():\n    \"\"\"Say \"hi\", 'bye', \"\" and ''.\"\"\"\n",
	"comments":              "# leading comment\nx = 1  # trailing\n    # indented\n",
	"leading docstring":     "\"\"\"Module docstring.\"\"\"\n\nx = 1\n",
	"tabs and blank lines":  "def f():\n\tif x:\n\t\treturn 1\n\n\n\treturn 2\n",
	"def without space":     "x = def_value\ny = classes\nz = defaults(x)\n",
}

// Code the fast path must leave to chroma.
var pyFastDeclines = map[string]string{
	"f-string":       "x = f\"{a}\"\n",
	"raw string":     "x = r'\\d+'\n",
	"escape":         "x = \"a\\nb\"\n",
	"percent format": "x = \"%s\" % y\n",
	"braces":         "x = \"{}\".format(y)\n",
	"import":         "import os\n",
	"from import":    "from a.b import c as d\n",
	"raise from":     "raise X from e\n",
	"exponent":       "x = 1e5\n",
	"hex":            "x = 0xff\n",
	"underscore":     "x = 1_000\n",
	"dot float":      "x = .5\n",
	"continuation":   "x = 1 + \\\n    2\n",
	"non-ASCII":      "café = 1\n",
	"no final line":  "x = 1",
	"unterminated":   "x = 'abc\n",
}

func TestPyFastMatchesChroma(t *testing.T) {
	p := newPyFast(lexers.Get("python"))
	for name, src := range pyFastAccepts {
		if !checkPyFast(t, p, name, src) {
			t.Errorf("%s: fast path declined code it should take:\n%s", name, src)
		}
	}
	for name, src := range pyFastDeclines {
		if checkPyFast(t, p, name, src) {
			t.Errorf("%s: fast path took code it should leave to chroma:\n%s", name, src)
		}
	}
}

// Every Python file in the repository, whole and line by line, and the
// Python code blocks of the shipped problem statements: real code the fast
// path either declines or tokenises exactly as chroma does.
func TestPyFastOnRepositoryCode(t *testing.T) {
	p := newPyFast(lexers.Get("python"))
	taken, lines, blocks := 0, 0, 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".cache" || d.Name() == "node_modules" || d.Name() == "public") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "instances.jsonl" && strings.HasPrefix(path, filepath.Join("..", "data")) {
			blocks += checkStatementBlocks(t, p, path)
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(path, ".py") {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checkPyFast(t, p, path, string(raw))
		for i, line := range strings.SplitAfter(string(raw), "\n") {
			if line == "" {
				continue
			}
			lines++
			if checkPyFast(t, p, fmt.Sprintf("%s:%d", path, i+1), line) {
				taken++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if lines == 0 {
		t.Fatal("no Python files found")
	}
	// The fast path is only worth having if it takes most real code.
	if taken*2 < lines {
		t.Errorf("fast path took %d of %d lines of the repository's Python, want most", taken, lines)
	}
	if blocks == 0 {
		t.Error("the fast path took no code block of the shipped problem statements")
	}
	t.Logf("fast path took %d of %d lines, and %d statement code blocks", taken, lines, blocks)
}

// pythonBlock is a fenced Python code block in markdown.
var pythonBlock = regexp.MustCompile("(?ms)^```py(?:thon)?\\n(.*?)^```")

// checkStatementBlocks checks the Python code blocks of the problem
// statements in an instances.jsonl and returns how many the fast path took.
func checkStatementBlocks(t *testing.T, p *pyFast, path string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	taken := 0
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var in struct {
			Statement string `json:"problem_statement"`
		}
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		for _, m := range pythonBlock.FindAllStringSubmatch(in.Statement, -1) {
			if checkPyFast(t, p, fmt.Sprintf("%s:%d", path, i+1), m[1]) {
				taken++
			}
		}
	}
	return taken
}

// Whatever the input, the fast path either declines it or agrees with
// chroma.
func FuzzPyFast(f *testing.F) {
	for _, src := range pyFastAccepts {
		f.Add(src)
	}
	for _, src := range pyFastDeclines {
		f.Add(src)
	}
	p := newPyFast(lexers.Get("python"))
	f.Fuzz(func(t *testing.T, src string) {
		checkPyFast(t, p, "input", src)
	})
}

// A statement renders to the same HTML through the fast path as through
// chroma alone.
func TestCodeBlocksFastPathSameHTML(t *testing.T) {
	md := "## Interface\n\n```python\n" + pyFastAccepts["class and methods"] + "```\n\n```py\n" + pyFastDeclines["f-string"] + "```\n"
	render := func(cb codeBlocks) string {
		m := goldmark.New(goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(cb, 100))))
		var b bytes.Buffer
		if err := m.Convert([]byte(md), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	fast := newCodeBlocks()
	slow := newCodeBlocks()
	slow.fast = nil
	got, want := render(fast), render(slow)
	if got != want {
		t.Errorf("fast path HTML differs from chroma's:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(got, `<span class="nc">Registry</span>`) {
		t.Errorf("rendered code is not highlighted:\n%s", got)
	}
}
