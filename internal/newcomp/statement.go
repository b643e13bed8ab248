package newcomp

import (
	"fmt"
	"sort"
	"strings"

	"github.com/featbench/featbench/bench"
)

// Hints: how much of the new components a statement gives (paper 004,
// section 4.2). Brief gives their signatures; detailed their docstrings
// too and the pull request's changes to files that are not Python
// (documentation, changelog, data), which often describe the feature.
const (
	HintBrief    = "brief"
	HintDetailed = "detailed"
	// DefaultHint is detailed: the paper's better setting with the oracle
	// context, and a docstring or the documentation is where a message
	// the tests compare verbatim is most often given.
	DefaultHint = HintDetailed
)

// Limits of what a statement quotes.
const (
	maxRequest = 20_000 // the pull request's description
	maxOther   = 12_000 // the non-Python changes
)

// Input is what a new-components statement is made of.
type Input struct {
	Project    string // the library's import name, or the repository
	Title      string
	Body       string
	Components []bench.Component
	CodePatch  string // the gold patch: its non-Python sections are the detailed hint
	TestPatch  string // for the leak check only
	Hint       string // HintBrief or HintDetailed ("" is DefaultHint)
}

// Statement renders the problem statement: the feature request (the pull
// request's title and description), then the definitions of the new
// components, then (detailed) the changes to non-Python files.
func Statement(in Input) (string, error) {
	hint := in.Hint
	if hint == "" {
		hint = DefaultHint
	}
	if hint != HintBrief && hint != HintDetailed {
		return "", fmt.Errorf("hint %q: want %s or %s", in.Hint, HintBrief, HintDetailed)
	}
	if len(in.Components) == 0 {
		return "", fmt.Errorf("no new component to define")
	}
	var b strings.Builder
	b.WriteString("## Feature request\n\n")
	if t := oneLine(in.Title); t != "" {
		fmt.Fprintf(&b, "**%s**\n\n", escapeInline(t))
	}
	if body := strings.TrimSpace(in.Body); body != "" {
		b.WriteString(clipText(body, maxRequest))
		b.WriteString("\n\n")
	}
	b.WriteString("## New components\n\n")
	fmt.Fprintf(&b, "Implement the request in `%s`. It adds the functions, classes and methods below, by these names and in these files: the tests call them as they are defined here.\n\n", in.Project)
	byFile := map[string][]bench.Component{}
	var files []string
	for _, c := range in.Components {
		if _, ok := byFile[c.File]; !ok {
			files = append(files, c.File)
		}
		byFile[c.File] = append(byFile[c.File], c)
	}
	sort.Strings(files)
	for _, f := range files {
		fmt.Fprintf(&b, "### `%s`\n\n", f)
		for _, c := range byFile[f] {
			fmt.Fprintf(&b, "- `%s` (%s):\n\n", c.Name, c.Kind)
			b.WriteString(fenced("python", definition(c, hint == HintDetailed), "  "))
			b.WriteString("\n")
		}
	}
	if hint == HintDetailed {
		if other := nonPython(in.CodePatch); other != "" {
			b.WriteString("## Other changes of the pull request\n\n")
			b.WriteString("The pull request also changes these files, which are not Python code:\n\n")
			b.WriteString(fenced("diff", clipText(other, maxOther), ""))
			b.WriteString("\n")
		}
	}
	b.WriteString("## Notes\n\n")
	b.WriteString("- The repository is in `/testbed/`, at the commit the pull request was made on, with its environment installed.\n")
	b.WriteString("- Keep what exists working: the project's other tests must still pass.\n")
	return b.String(), nil
}

// definition is a component as the statement shows it: its signature and,
// when asked, its docstring, as a body that is only that.
func definition(c bench.Component, doc bool) string {
	sig := strings.TrimRight(c.Signature, "\n")
	if !doc || strings.TrimSpace(c.Docstring) == "" {
		return sig + "\n    ...\n"
	}
	var b strings.Builder
	b.WriteString(sig + "\n")
	d := strings.ReplaceAll(strings.TrimSpace(c.Docstring), `"""`, `\"\"\"`)
	b.WriteString(`    """`)
	for i, l := range strings.Split(d, "\n") {
		if i > 0 {
			b.WriteString("\n")
			if strings.TrimSpace(l) != "" {
				b.WriteString("    ")
			}
		}
		b.WriteString(strings.TrimRight(l, " \t"))
	}
	if strings.Contains(d, "\n") {
		b.WriteString("\n    ")
	}
	b.WriteString(`"""` + "\n")
	return b.String()
}

// fenced puts text in a fenced block, its fence longer than any run of
// backticks inside, each line indented.
func fenced(lang, text, indent string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	var b strings.Builder
	b.WriteString(indent + fence + lang + "\n")
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if l == "" {
			b.WriteString("\n")
		} else {
			b.WriteString(indent + l + "\n")
		}
	}
	b.WriteString(indent + fence + "\n")
	return b.String()
}

// escapeInline keeps a title from opening Markdown it does not mean.
func escapeInline(s string) string {
	return strings.NewReplacer("*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "<", `\<`).Replace(s)
}

// sections splits a diff into its file sections with their new paths.
func sections(p string) (paths, texts []string) {
	var cur []string
	path := ""
	flush := func() {
		if len(cur) > 0 {
			paths, texts = append(paths, path), append(texts, strings.Join(cur, "\n")+"\n")
		}
		cur, path = nil, ""
	}
	for _, l := range strings.Split(strings.TrimRight(p, "\n"), "\n") {
		if strings.HasPrefix(l, "diff --git ") {
			flush()
			if i := strings.LastIndex(l, " b/"); i >= 0 {
				path = l[i+3:]
			}
		}
		cur = append(cur, l)
	}
	flush()
	return paths, texts
}

// nonPython is the sections of a patch whose file is not Python, without
// their index lines (the blobs' hashes say nothing to a reader).
func nonPython(p string) string {
	paths, texts := sections(p)
	var out []string
	for i, path := range paths {
		if strings.HasSuffix(path, ".py") || strings.HasSuffix(path, ".pyi") {
			continue
		}
		var keep []string
		for j, l := range strings.Split(strings.TrimSuffix(texts[i], "\n"), "\n") {
			if j > 0 && j < 4 && strings.HasPrefix(l, "index ") {
				continue
			}
			keep = append(keep, l)
		}
		out = append(out, strings.Join(keep, "\n")+"\n")
	}
	return strings.Join(out, "")
}

// addedLines are the lines a patch adds to files for which keep holds.
func addedLines(p string, keep func(path string) bool) []string {
	paths, texts := sections(p)
	var out []string
	for i, path := range paths {
		if !keep(path) {
			continue
		}
		for _, l := range strings.Split(texts[i], "\n") {
			if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
				out = append(out, l[1:])
			}
		}
	}
	return out
}

// Leaks are the lines of the solution or of the tests the statement of in
// holds in what it quotes of the pull request (the title, the description, the
// non-Python changes): an added Python line of the gold patch, or an
// added line of the test patch. The components' definitions are the
// code's own signatures and docstrings, given by design (a docstring's
// example may well read as a test's line), and lines equal to one of
// theirs are not counted; neither are short lines (a return, a bracket).
func Leaks(in Input) []string {
	quoted := in.Title + "\n" + in.Body
	if in.Hint != HintBrief {
		quoted += "\n" + nonPython(in.CodePatch)
	}
	norm := oneLine(quoted)
	given := map[string]bool{}
	for _, c := range in.Components {
		for _, l := range strings.Split(c.Signature+"\n"+c.Docstring, "\n") {
			l = oneLine(l)
			given[l] = true
			// A doctest's lines without their prompt.
			for _, p := range []string{">>> ", "... "} {
				if t, ok := strings.CutPrefix(l, p); ok {
					given[t] = true
				}
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	check := func(what string, lines []string, min int) {
		for _, l := range lines {
			s := oneLine(l)
			if len(s) < min || given[s] || seen[s] || strings.HasPrefix(s, "#") || isImport(s) || strings.HasPrefix(s, `"""`) {
				continue
			}
			seen[s] = true
			if strings.Contains(norm, s) {
				out = append(out, fmt.Sprintf("%s %q", what, clipText(s, 80)))
			}
		}
	}
	py := func(p string) bool { return strings.HasSuffix(p, ".py") }
	check("a line of the gold patch", addedLines(in.CodePatch, py), 16)
	check("a line of the test patch", addedLines(in.TestPatch, func(string) bool { return true }), 16)
	return out
}

func isImport(s string) bool {
	return strings.HasPrefix(s, "import ") || strings.HasPrefix(s, "from ") && strings.Contains(s, " import ")
}
