package markup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"

	"github.com/featbench/featbench/internal/synth"
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
// state and rule of chroma's Python lexer, and words of every class.
var pyFastAccepts = map[string]string{
	"signature": "def partial_registry(data, *, limit: int | None = None, strict: bool = False) -> list[str]:\n" +
		"    \"\"\"Return the entries.\n\n    Raises ValueError if it's empty.\n    \"\"\"\n",
	"class and methods": "class Registry(Base, metaclass=ABCMeta):\n" +
		"    def __init__(self, items: dict[str, int]) -> None:\n        self.items = items\n\n" +
		"    @property\n    def size(self) -> int:\n        return len(self.items)  # entries\n\n" +
		"    @staticmethod\n    def empty(): ...\n",
	"decorators": "@functools.lru_cache(maxsize=128)\n@ app . route\n@x\ndef f(a, b):\n    return a @ b\n@a.\n@b\n.c\n",
	"words": "if x is not None and y in z or not w:\n    raise NotImplementedError(self.__class__.__name__)\n" +
		"elif isinstance(x, Exception):\n    pass\nelse:\n    x.print = print\n    yield x.len, len\n" +
		"    lambda: cls\n    await async_thing\n    match = True; case = False\n    del x[0]\n",
	"operators": "a = b + c - d * e / f // g % h ** i\nflags |= A & B ^ ~C << 2 >> 1\nif (n := len(a)) != 3 and a <= b >= c == d < e > f:\n    pass\nx <<= 1; y >>= 2; z -> w; a...b\n",
	"strings":   `s = "double" + 'single' + "it's" + 'say "hi"' + ""` + "\n" + `t = '''` + "\nmulti\nline\n" + `''' + """more"""` + "\n",
	"numbers": "x = [0, 1, 42, 1000, 0.6, 10., 3.25, 1e5, 1E-5, 1.5e+3, .5, 1_000, 0x_ff, 0XFF, 0o17, 0O7, 0b1010, 0B1,\n" +
		"     2j, 1e5j, 1.5j, 0b2, 0o8, 1__0, 1_, 07, 1if 2else 3, 1.e5, 1._5, 1e, 1e+, 0x, 0xg, 12abc, 1.2.3, x.5]\ny = x[1:3]\n",
	"quotes in a docstring":  "def f():\n    \"\"\"Say \"hi\", 'bye', \"\" and ''.\"\"\"\n",
	"comments":               "# leading comment\nx = 1  # trailing\n    # indented\n#\n",
	"leading docstring":      "\"\"\"Module docstring.\"\"\"\n\nx = 1\n",
	"tabs and blank lines":   "def f():\n\tif x:\n\t\treturn 1\n\n\n\treturn 2\n\v\f\n",
	"def without space":      "x = def_value\ny = classes\nz = defaults(x)\ndef(x)\nclass\nfrom\n",
	"def and class oddities": "def __init__(self): pass\ndef \\\n  f(): pass\nclass (X): pass\nclass 1X:\nclass\n  Y: pass\ndef (x): pass\nclass \\x\nclass ?\n\n",
	"f-strings": `x = f"{a}" + F'{b!r:>10}' + f"{{literal}} {c=} {d = !s} {e:{width}.{prec}f}"` + "\n" +
		`y = rf"\d{x}" + fR'{y}' + Rf"""{z}` + "\n" + `""" + f'''{w['k']} {v(1, [2], {3: 4})}'''` + "\n" +
		`z = f"{x!}" + f"{'#'} {#}" + f"{a\b}" + f"{1 if a else 2} {lambda: 1} {yield from x} {async for} {return}"` + "\n" +
		`w = f"{x` + "\n" + `y}" + f"{"nested"}" + f"\N{BULLET} \x41 \{" + f"unterminated` + "\nq = 1\n" +
		`v = f"{x:{'a'}}" + f"{x}}}" + f"{(x)}" + f"{[x]}" + f"{x[0]:%Y}" + f"{x:=}" + f"{x !r}" + rf'\'' + f'\\'` + "\n",
	"string prefixes": `a = r'\d+' + R"\w" + b'\x00' + B"" + u'x' + U"y" + rb'\n' + Br"z" + bR'''q''' + rB"""r"""` + "\n" +
		`b = ur'x' + xr'y' + fb'z' + rf'' + F""""""` + "\n",
	"escapes": `x = "a\nb\t\\c\"d\'e\x41\u00e9\U0001F600\N{DASH}\0\12\777\q\x4\N{ x"` + "\n" +
		`y = 'line \` + "\n" + `continued' + '''a\` + "\n" + `b'''` + "\n" + `z = r"\"" + r'\'' + "\` + "\n" + `"` + "\n" +
		`w = '\N{x}\N{y' + "\N{" + '''\N{` + "\n" + `}'''` + "\n",
	"percent and format": `a = "%s %d %5.2f %-10s %(name)s %(x)d %% %#x %+05d %.*f %*d %ld %z %( %(x %()s %.f %5" % b` + "\n" +
		`c = "{} {0} {name} {x.attr} {x[0]} {x[key].y} {0!r} {:>10} {:*^30} {0:,} {:.2%} {:+.3e} {:#x} {:08.3f} {x[}".format(1)` + "\n" +
		`d = "{a[" + b + "]} {:x<5} {:` + "\u00e9" + `<5} { } {{ }} {x!q} {:} {x.} {x[]} {:<} {:<<} {:0>5,.2f}"` + "\n" +
		`e = '''{a[` + "\n" + `]} %(a` + "\n" + `)s'''` + "\n",
	"imports": "import os\nimport os.path as osp, sys\nimport a,b , c\nfrom . import x\nfrom ..pkg.mod import (\n    y,\n    z as w,\n)\n" +
		"from a import b as c\nfrom None import x\nfrom Nonesuch import x\nfrom x\nimport\nos\nimport a\n, b\nimport a as\n b\nfrom \\\n x import y\n" +
		"raise X from e\ndef f():\n    yield from g()\n    import json\nimport a as b\nas_x = 1\nfrom a import open, len\nimport os; x = 1\n" +
		"from a importx\nfrom a  \n  import b\nimport a asb\nimport a.b.\n",
	"backslashes and errors": "x = 1 + \\\n    2\ny = a \\ b\nz = a ? b $ c ` d !\nw = \"\"\n\x00\x1f\x7f\n\\",
	"hashbang":               "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\nimport os\n",
	"hashbang alone":         "#!\nx = 1\n",
	"non-ASCII in strings":   "s = \"caf\u00e9 \u2014 \u4e2d\u6587\"  # caf\u00e9\nt = '''\u2265''' + f\"\u00e9{x}\u00e9\" + '%s\u00e9' + '{}\u00e9'\n",
	"no final newline":       "x = 1",
	"keywords after a dot":   "x.if = x.print + x.None.self + x . len + x.yield from y\n",
	"magic":                  "def __repr__(self): return self.__dict__ + __name__\ndef __init__x(): pass\nx.__init__(y)\n",
	"match and async":        "match x:\n    case [1, *rest]:\n        pass\nasync def f():\n    async with a as b:\n        async for x in y:\n            await z\n",
	"yield from":             "yield from x\nyield  from x\nyield fromage\nyield from\n",
	"unterminated string":    "x = 'abc\ny = \"def\n",
	"unterminated triple":    "x = '''abc\ny = 1\n",
	"empty f-string expr":    `x = f"{}" + f"{ }" + f"{x:}" + f"{x!r}" + f"{x=!r:^{w}}"` + "\n",
	"long string":            "x = \"\"\"" + strings.Repeat("A long docstring line, with 'quotes' and \\n escapes and {} and %s.\n", 400) + "\"\"\"\n",
	"long comment run":       strings.Repeat("# comment\n", 2000),
	"long error run":         strings.Repeat("?", 20000) + "\n",
	"long name run":          "x = " + strings.Repeat("a", 20000) + "\n",
}

// Code the fast path must leave to chroma.
var pyFastDeclines = map[string]string{
	"non-ASCII name":     "caf\u00e9 = 1\n",
	"non-ASCII after":    "x = 1\nif\u00e9 = 2\n",
	"non-ASCII space":    "x =\u00a01\n",
	"non-ASCII import":   "import caf\u00e9\n",
	"non-ASCII format":   "x = \"{caf\u00e9}\"\n",
	"carriage return":    "x = 1\r\n",
	"invalid UTF-8":      "x = '\xff'\n",
	"docstring accident": "  b{,2}\"\"\"doc\"\"\"\n",
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
// chroma, token for token, and the HTML written from its tokens is what
// chroma's formatter writes from chroma's. Each input is tried as it is
// and folded to ASCII without carriage returns, the text the fast path
// takes (random bytes are mostly non-ASCII, which it declines).
//
//	go test ./markup -run '^$' -fuzz FuzzPyFast -fuzztime 5m
func FuzzPyFast(f *testing.F) {
	// Seeds of a few kilobytes at most: chroma takes seconds on the long
	// ones, and the fuzzer would spend its time there.
	for _, seeds := range []map[string]string{pyFastAccepts, pyFastDeclines} {
		for _, src := range seeds {
			if len(src) <= 4096 {
				f.Add(src)
			}
		}
	}
	h := newHighlighter()
	formatter := chromahtml.New(chromahtml.WithClasses(true))
	style := styles.Get("github")
	f.Fuzz(func(t *testing.T, src string) {
		folded := []byte(src)
		for i, c := range folded {
			switch c &= 0x7f; c {
			case '\r':
				folded[i] = '\n'
			default:
				folded[i] = c
			}
		}
		for _, src := range []string{src, string(folded)} {
			if !checkPyFast(t, h.fast, "input", src) {
				continue
			}
			var got, want bytes.Buffer
			if !h.writeCode(&got, h.python, src, newHighlightBudget(), h.fast) {
				t.Fatal("the fast path took the code but writeCode did not write it")
			}
			if err := chromaFormat(&want, formatter, style, chroma.Literator(chromaPython(t, src)...)); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("HTML differs from chroma's:\n%s\nwant:\n%s", got.String(), want.String())
			}
		}
	})
}

// chromaFormat is chroma's HTML formatter's output with the site's pre,
// which takes the keyboard's focus (codeOpen).
func chromaFormat(w io.Writer, f *chromahtml.Formatter, style *chroma.Style, it chroma.Iterator) error {
	var b bytes.Buffer
	if err := f.Format(&b, style, it); err != nil {
		return err
	}
	_, err := io.WriteString(w, strings.Replace(b.String(), `<pre class="chroma"><code>`, codeOpen, 1))
	return err
}

// chromaBlocks renders fenced code blocks as codeBlocks did before it
// had a fast path and a writer of its own: chroma's lexer, coalesced,
// and chroma's HTML formatter with classes.
type chromaBlocks struct {
	hl *highlighter
	f  *chromahtml.Formatter
}

func newChromaBlocks() chromaBlocks {
	return chromaBlocks{hl: newHighlighter(), f: chromahtml.New(chromahtml.WithClasses(true))}
}

func (c chromaBlocks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, func(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		n := node.(*ast.FencedCodeBlock)
		var code bytes.Buffer
		for i := range n.Lines().Len() {
			seg := n.Lines().At(i)
			code.Write(seg.Value(source))
		}
		lexer := c.hl.lexers.forLanguage(string(n.Language(source)))
		if lexer == nil {
			writePlainCode(w, n.Language(source), code.Bytes())
			return ast.WalkContinue, nil
		}
		it, err := chroma.Coalesce(lexer).Tokenise(nil, code.String())
		if err != nil {
			return ast.WalkContinue, err
		}
		return ast.WalkContinue, chromaFormat(w, c.f, styles.Get("github"), it)
	})
}

// renderBlocks renders markdown with a fenced code block renderer.
func renderBlocks(t testing.TB, r renderer.NodeRenderer, md string) string {
	t.Helper()
	m := goldmark.New(goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(r, 100))))
	var b bytes.Buffer
	if err := m.Convert([]byte(md), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A statement renders to the same HTML through the fast path and the
// writer as through chroma's lexer and formatter.
func TestCodeBlocksSameHTMLAsChroma(t *testing.T) {
	var md strings.Builder
	for _, name := range slices.Sorted(maps.Keys(pyFastAccepts)) {
		fmt.Fprintf(&md, "## %s\n\n```python\n%s\n```\n\n", name, pyFastAccepts[name])
	}
	for _, name := range slices.Sorted(maps.Keys(pyFastDeclines)) {
		fmt.Fprintf(&md, "```py\n%s\n```\n\n", pyFastDeclines[name])
	}
	// Other languages, through chroma's lexers; lines of every shape.
	md.WriteString("```go\nfunc f() {\n\treturn \"<a & 'b'>\" // c\n}\n```\n\n```js\n/* a\nb */ x = `\n`\n```\n\n")
	md.WriteString("```bash\necho \"$x\" > /dev/null\n```\n\n```json\n{\"a\": [1, 2.5, null]}\n```\n\n```python\n```\n\n```python\n\n\n```\n")
	got, want := renderBlocks(t, newCodeBlocks(), md.String()), renderBlocks(t, newChromaBlocks(), md.String())
	if got != want {
		g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Fatalf("HTML differs from chroma's at line %d:\n%s\nwant:\n%s", i+1, g[i], w[i])
			}
		}
		t.Fatalf("HTML differs from chroma's: %d lines, want %d", len(g), len(w))
	}
	if !strings.Contains(got, `<span class="nc">Registry</span>`) {
		t.Errorf("rendered code is not highlighted:\n%s", got)
	}
}

// The build benchmark's problem statements, FeatureBench-sized: every
// Python block tokenised by the fast path (none left to chroma) exactly
// as chroma does, and every statement rendered to chroma's HTML. The
// first 100 of the benchmark's 4,000 by default (20 with -short);
// FEATBENCH_SYNTH_CHECK=4000 checks them all (two and a half minutes:
// chroma takes most of it).
func TestSyntheticStatementsSameAsChroma(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 20
	}
	if v := os.Getenv("FEATBENCH_SYNTH_CHECK"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			t.Fatalf("FEATBENCH_SYNTH_CHECK=%q: want a positive number", v)
		}
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := synth.Generate(dir, synth.Config{RepoRoot: repo, Instances: n, Submissions: 1}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "data", "datasets", synth.DatasetName, synth.DatasetVersion, "instances.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	m := New()
	ref := goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(
			util.Prioritized(rawHTMLAsText{}, 100),
			util.Prioritized(newChromaBlocks(), 100),
			util.Prioritized(statementNodes{}, 100),
		)),
	)
	p := m.hl.fast
	blocks, bytes_ := 0, 0
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var in struct {
			ID        string `json:"instance_id"`
			Statement string `json:"problem_statement"`
		}
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
		for _, b := range pythonBlock.FindAllStringSubmatch(in.Statement, -1) {
			blocks++
			bytes_ += len(b[1])
			if !checkPyFast(t, p, in.ID, b[1]) {
				t.Errorf("%s: the fast path left a Python block of %d bytes to chroma", in.ID, len(b[1]))
			}
		}
		got, err := m.Markdown(in.Statement)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := ref.Convert([]byte(in.Statement), &want); err != nil {
			t.Fatal(err)
		}
		if got != want.String() {
			t.Errorf("%s: the statement's HTML differs from chroma's", in.ID)
		}
	}
	if blocks == 0 {
		t.Fatal("no Python blocks in the synthetic statements")
	}
	t.Logf("%d statements, %d Python blocks (%d bytes): the same tokens and HTML as chroma's", n, blocks, bytes_)
}

// The word tables' filter turns away only words the table does not have:
// every word of each table, and words near them (a byte more or less, the
// case changed, a length of 63 and more), resolve as the map says.
func TestPyWordsFilterAgreesWithTheMap(t *testing.T) {
	p := newPyFast(lexers.Get("python"))
	if p.keywords.m == nil {
		t.Fatal("chroma's Python rules did not load")
	}
	for name, table := range map[string]*pyWords{"keywords": &p.keywords, "expr": &p.expr, "funcs": &p.funcs} {
		var words []string
		for w := range table.m {
			words = append(words, w, w+"x", w[:len(w)-1], strings.ToUpper(w), "_"+w, w+strings.Repeat("y", 70))
		}
		words = append(words, "", "a", strings.Repeat("z", 63), strings.Repeat("z", 64), strings.Repeat("z", 200))
		for _, w := range words {
			if got, want := table.get(w), table.m[w]; got != want {
				t.Errorf("%s: get(%q) = %v, the map has %v", name, w, got, want)
			}
		}
	}
	long := newPyWords(map[string]*pyWordRes{strings.Repeat("q", 80): {}})
	for _, n := range []int{63, 64, 79, 80, 81, 200} {
		w := strings.Repeat("q", n)
		if got, want := long.get(w), long.m[w]; got != want {
			t.Errorf("a table of one 80-byte word: get of %d bytes = %v, the map has %v", n, got, want)
		}
	}
}
