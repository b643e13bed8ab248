package collect

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"

	"github.com/featbench/featbench/internal/llm"
	"github.com/featbench/featbench/internal/mask"
	"github.com/featbench/featbench/internal/verbatim"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

var statementTemplates = template.Must(template.New("").Funcs(template.FuncMap{
	"add":  func(a, b int) int { return a + b },
	"trim": func(s string) string { return strings.TrimRight(s, "\n") },
}).ParseFS(templateFS, "templates/*.tmpl"))

// statementData is what a statement template reads.
type statementData struct {
	Statement  string
	Library    string
	Forbidden  []string
	Interfaces []mask.Interface
	// Given is, at level 2, the code the tests use that is not the
	// feature, as one block: the imports it needs, then the statements.
	Given string
}

// givenCode is level 2's given code as one block of Python: the tests
// import its names and the interfaces' from agent_code alike, so it is
// shown as one module (the masker refuses names two modules define).
func givenCode(given []mask.Given) string {
	var imports, code []string
	for _, g := range given {
		for _, i := range g.Imports {
			if !slices.Contains(imports, i) {
				imports = append(imports, i)
			}
		}
		code = append(code, g.Code...)
	}
	if len(code) == 0 {
		return ""
	}
	s := strings.Join(code, "\n\n\n") + "\n"
	if len(imports) > 0 {
		s = strings.Join(imports, "\n") + "\n\n\n" + s
	}
	return s
}

// renderStatement renders the statement of a level.
func renderStatement(level int, d statementData) (string, error) {
	var b bytes.Buffer
	if err := statementTemplates.ExecuteTemplate(&b, fmt.Sprintf("level%d.md.tmpl", level), d); err != nil {
		return "", fmt.Errorf("statement template of level %d: %w", level, err)
	}
	return b.String(), nil
}

// taskStatement is the task's opening paragraph without an LLM: what is
// to be added (with paths, where, at level 1), and the first sentence of
// each interface's docstring.
func taskStatement(library string, ifs []mask.Interface, paths bool) string {
	var b strings.Builder
	names := make([]string, len(ifs))
	for i, f := range ifs {
		names[i] = "`" + f.Qualname + "`"
	}
	files := map[string]bool{}
	for _, f := range ifs {
		files[f.Path] = true
	}
	what := "an interface"
	if len(ifs) > 1 {
		what = fmt.Sprintf("%d interfaces", len(ifs))
	}
	if paths {
		fmt.Fprintf(&b, "Implement %s of `%s`: %s, in %s.", what, library, joinAnd(names), joinAnd(quoteAll(slices.Sorted(maps.Keys(files)))))
	} else {
		fmt.Fprintf(&b, "Implement %s of `%s`: %s.", what, library, joinAnd(names))
	}
	var lines []string
	for _, f := range ifs {
		if f.Docstring == nil {
			continue
		}
		if s := firstSentence(*f.Docstring); s != "" {
			lines = append(lines, fmt.Sprintf("- `%s`: %s", f.Qualname, s))
		}
	}
	if len(lines) > 0 {
		b.WriteString(" In short:\n\n")
		b.WriteString(strings.Join(lines, "\n"))
	}
	return b.String()
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return out
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// firstSentence is a docstring's first sentence, on one line.
func firstSentence(doc string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(doc), "\n\n")
	para = strings.Join(strings.Fields(para), " ")
	for i := 0; i+1 < len(para); i++ {
		if para[i] == '.' && para[i+1] == ' ' {
			return para[:i+1]
		}
	}
	return para
}

// statementsOut are a candidate's problem statements.
type statementsOut struct {
	L1         string           `json:"l1,omitempty"`
	L2         string           `json:"l2,omitempty"`
	Interfaces []mask.Interface `json:"interfaces"` // with docstrings the LLM completed
	LLM        bool             `json:"llm,omitempty"`
}

// stageStatements writes each verified candidate's problem statements.
func (r *repoRun) stageStatements(ctx context.Context) error {
	for _, c := range r.cands {
		if !c.has(1) && !c.has(2) {
			continue
		}
		var l2 []any
		if res := c.mask.Result; res != nil {
			// The stored mask output leaves empty lists out: an empty one
			// and none are the same here.
			if len(res.Level2Interfaces) > 0 {
				l2 = append(l2, res.Level2Interfaces)
			}
			if len(res.Level2Given) > 0 {
				l2 = append(l2, "given", res.Level2Given)
			}
		}
		// The levels rendered are inputs too: a level verification
		// dropped in one run and passed in the next (its pass-to-pass
		// files changed) found the stored statements without it, and the
		// instance vanished with no drop.
		d := digest("statements", recipe, c.has(1), c.has(2), c.mask.Interfaces, l2, r.rc.ImportName, r.rc.ForbiddenLinks, r.llmKey(), templateDigest())
		ok, err := r.cached(d, &c.stmt, c.File)
		if err != nil {
			return err
		}
		if !ok {
			out, store, err := r.statements(ctx, c)
			if err != nil {
				return err
			}
			c.stmt = out
			if store {
				if err := r.store(d, out, c.File); err != nil {
					return err
				}
			}
		}
		for l, st := range []string{1: c.stmt.L1, 2: c.stmt.L2} {
			if l > 0 && c.has(l) && st != "" {
				if why := verbatimGap(st, c.mask.TestPatch, c.mask.Patch); why != "" {
					r.drop(c, StageStatements, l, why)
				}
			}
		}
	}
	return nil
}

// verbatimGap is why a statement is incomplete because the tests compare
// a message verbatim that the feature's code makes and the statement
// does not give (see internal/verbatim), or "". The tests are what the
// test patch adds, the feature what the gold patch adds (at level 2 too:
// level 1's gold patch is the feature, level 2's the whole package).
func verbatimGap(statement, testPatch, goldPatch string) string {
	missing := verbatim.Missing(statement, patchAdded(testPatch), patchAdded(goldPatch))
	if len(missing) == 0 {
		return ""
	}
	return "statement incomplete: " + missing[0].String()
}

// patchAdded is the text of the lines a patch adds, a blank line between
// hunks (a hunk may start inside a statement).
func patchAdded(p string) string {
	var b strings.Builder
	for _, l := range strings.Split(p, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "):
		case strings.HasPrefix(l, "+"):
			b.WriteString(l[1:])
			b.WriteByte('\n')
		case strings.HasPrefix(l, "@@"):
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// templateDigest is the statement templates' content, in name order:
// Templates() lists them from a map, in an order that changes from run to
// run (which made the statements stage run again at random).
func templateDigest() string {
	var names []string
	for _, t := range statementTemplates.Templates() {
		names = append(names, t.Name())
	}
	slices.Sort(names)
	var parts []string
	for _, n := range names {
		raw, _ := templateFS.ReadFile("templates/" + n)
		parts = append(parts, n, string(raw))
	}
	return digest(parts)
}

// statements renders a candidate's statements; with an LLM, missing
// docstrings are written and the task statement summarised by it. store is
// false when the LLM failed (the statements then use what the code has,
// and the next run asks again).
func (r *repoRun) statements(ctx context.Context, c *candidate) (statementsOut, bool, error) {
	ifs := append([]mask.Interface(nil), c.mask.Interfaces...)
	var ifs2 []mask.Interface
	var given string
	if c.mask.Result != nil {
		ifs2 = append(ifs2, c.mask.Result.Level2Interfaces...)
		given = givenCode(c.mask.Result.Level2Given)
	}
	statement := taskStatement(r.rc.ImportName, ifs, true)
	statement2 := taskStatement(r.rc.ImportName, ifs2, false)
	store, usedLLM := true, false
	if r.o.LLM != nil {
		if docs, err := r.completeDocstrings(ctx, ifs); err != nil {
			r.logf("%s: docstrings: %v (kept as the code has them)", c.File, err)
			store = false
		} else if s, err := r.llmTaskStatement(ctx, ifs); err != nil {
			r.logf("%s: task statement: %v (a plain one is used)", c.File, err)
			store = false
		} else {
			statement, statement2, usedLLM = s, s, true
			for i := range ifs2 {
				withDocs(&ifs2[i], docs)
			}
		}
	}
	d := statementData{Statement: statement, Library: r.rc.ImportName, Forbidden: r.rc.ForbiddenLinks, Interfaces: ifs}
	out := statementsOut{Interfaces: ifs, LLM: usedLLM}
	var err error
	if c.has(1) {
		if out.L1, err = renderStatement(1, d); err != nil {
			return out, false, err
		}
	}
	if c.has(2) {
		d.Statement, d.Interfaces, d.Given = statement2, ifs2, given
		if out.L2, err = renderStatement(2, d); err != nil {
			return out, false, err
		}
	}
	return out, store, nil
}

// withDocs puts docstrings (by object id) into an interface's code where
// it has none.
func withDocs(f *mask.Interface, docs map[string]string) {
	f.Code = f.WithDocstrings(docs)
	if d, ok := docs[f.ID]; ok && f.Docstring == nil {
		f.Docstring = &d
	}
}

// completeDocstrings asks the LLM for the docstring of each described
// object that has none (the paper completes docstrings only where they are
// missing, 000 section 3.2), and puts it in the interface's code. It
// returns them by object id, for level 2's interfaces.
func (r *repoRun) completeDocstrings(ctx context.Context, ifs []mask.Interface) (map[string]string, error) {
	all := map[string]string{}
	for i := range ifs {
		f := &ifs[i]
		type want struct{ id, qualname, kind string }
		var missing []want
		if f.Described && f.Docstring == nil {
			missing = append(missing, want{f.ID, f.Qualname, f.Kind})
		}
		for _, m := range f.Members {
			if m.Docstring == nil {
				missing = append(missing, want{m.ID, m.Qualname, m.Kind})
			}
		}
		if len(missing) == 0 {
			continue
		}
		src, err := r.readSources(ctx, []string{f.Path})
		if err != nil {
			return nil, err
		}
		docs := map[string]string{}
		for _, w := range missing {
			prompt := fmt.Sprintf("Write the docstring of the Python %s `%s` in the file %s below: what it does, its parameters, what it returns, and the errors it raises, in plain sentences. Answer with the docstring's text alone: no quotes, no code fences.\n\n```python\n%s\n```\n",
				w.kind, w.qualname, f.Path, src[f.Path])
			reply, err := r.o.LLM.Chat(ctx, []llm.Message{{Role: "user", Content: prompt}})
			if err != nil {
				return nil, err
			}
			doc := strings.TrimSpace(reply.Content)
			if doc == "" {
				return nil, fmt.Errorf("an empty docstring for %s", w.qualname)
			}
			docs[w.id] = doc
			all[w.id] = doc
		}
		withDocs(f, docs)
	}
	return all, nil
}

// llmTaskStatement asks the LLM for the task's opening paragraph.
func (r *repoRun) llmTaskStatement(ctx context.Context, ifs []mask.Interface) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "A coding task asks to implement the interfaces below in the Python library `%s`. Write its opening statement: two to four short paragraphs or bullet lists saying what the feature does, what it must handle, and what is hard about it. Be general: do not restate the signatures, do not give the solution. Answer in Markdown without headings.\n\n", r.rc.ImportName)
	for _, f := range ifs {
		fmt.Fprintf(&b, "%s (in %s):\n```python\n%s\n```\n\n", f.Qualname, f.Path, f.Code)
	}
	reply, err := r.o.LLM.Chat(ctx, []llm.Message{{Role: "user", Content: b.String()}})
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(reply.Content)
	if s == "" {
		return "", fmt.Errorf("an empty task statement")
	}
	return s, nil
}

// agentCodePackage is a level 2 solution as a patch: the files of an
// agent_code package (the vendored original, for the gold solution), with
// what installs it. Without files it is an empty package: the
// post-verification's "nothing implemented" run.
func agentCodePackage(files []mask.VendoredFile) string {
	if len(files) == 0 {
		files = []mask.VendoredFile{{Path: "agent_code/__init__.py"}}
	}
	files = append(slices.Clone(files), mask.VendoredFile{Path: "pyproject.toml", Text: "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"agent_code\"\nversion = \"0.1\"\n\n[tool.setuptools]\npackages = { find = { include = [\"agent_code*\"] } }\n"})
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\n", f.Path, f.Path)
		if f.Text == "" {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(f.Text, "\n"), "\n")
		fmt.Fprintf(&b, "--- /dev/null\n+++ b/%s\n@@ -0,0 +1", f.Path)
		if len(lines) != 1 {
			fmt.Fprintf(&b, ",%d", len(lines))
		}
		b.WriteString(" @@\n")
		for _, l := range lines {
			b.WriteString("+" + l + "\n")
		}
		if !strings.HasSuffix(f.Text, "\n") {
			b.WriteString("\\ No newline at end of file\n")
		}
	}
	return b.String()
}
