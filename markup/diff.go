package markup

import (
	"strconv"
	"strings"

	"github.com/alecthomas/chroma/v2"

	"github.com/featbench/featbench/internal/patch"
)

// A unified diff is parsed as git reads one: file headers, then hunks
// whose "@@ -a,b +c,d @@" header says how many lines follow, so that a
// removed line "-- x" ("--- x" in the diff) or an added "++ x" is a line
// of the hunk, not the next file's header. Any text parses; what is not a
// diff is shown as it is.

// diffKind is what a line of a diff is.
type diffKind uint8

const (
	diffOther   diffKind = iota // outside any hunk, not a header
	diffHeader                  // diff --git, index, ---, +++, ...
	diffHunk                    // @@ ... @@
	diffAdded                   // +
	diffRemoved                 // -
	diffContext                 // a space, or an empty line, in a hunk
	diffNote                    // "\ No newline at end of file"
)

// class is chroma's class for the kind's lines, so one stylesheet colours
// both diffs and statements' diff code blocks.
func (k diffKind) class() string {
	switch k {
	case diffHeader:
		return "gh"
	case diffHunk:
		return "gu"
	case diffAdded:
		return "gi"
	case diffRemoved:
		return "gd"
	}
	return ""
}

type diffLine struct {
	text string // without its newline
	kind diffKind
}

// diffFile is one file's section of a diff.
type diffFile struct {
	oldPath, newPath string // from --- and +++, without a/ and b/
	gitPath          string // from diff --git, rename to or copy to
	sawPlus          bool   // a +++ header
	hunks            [][2]int
}

// path is the file the section is about: its new name, or its old one
// when it is deleted.
func (f *diffFile) path() string {
	if !f.sawPlus {
		return f.gitPath
	}
	if f.newPath == "/dev/null" || f.newPath == "" {
		if f.oldPath == "/dev/null" {
			return ""
		}
		return f.oldPath
	}
	return f.newPath
}

// parseDiff splits a diff into classified lines (when keep) and file
// sections, each with its hunks' line ranges.
func parseDiff(src string, keep bool) ([]diffLine, []*diffFile) {
	var lines []diffLine
	if keep {
		lines = make([]diffLine, 0, strings.Count(src, "\n")+1)
	}
	var files []*diffFile
	var file *diffFile
	section := func() *diffFile {
		if file == nil {
			file = &diffFile{}
			files = append(files, file)
		}
		return file
	}
	hunk := func(start, end int) {
		if end > start {
			f := section()
			f.hunks = append(f.hunks, [2]int{start, end})
		}
	}
	// In a hunk: how many old and new lines remain, or loose when its
	// header gave no counts.
	inHunk, loose := false, false
	oldLeft, newLeft, hunkStart := 0, 0, 0
	// kind classifies line i, text, before the rest of the diff.
	kind := func(i int, text, rest string) diffKind {
		if inHunk {
			kind := diffKind(0)
			switch {
			case text == "" || text[0] == ' ':
				kind = diffContext
				oldLeft--
				newLeft--
			case text[0] == '-' && !(loose && strings.HasPrefix(text, "--- ") && strings.HasPrefix(rest, "+++ ")):
				// A "--- "/"+++ " pair ends a hunk of unknown length.
				kind = diffRemoved
				oldLeft--
			case text[0] == '+':
				kind = diffAdded
				newLeft--
			case text[0] == '\\':
				kind = diffNote
			}
			if kind != 0 {
				if !loose && oldLeft <= 0 && newLeft <= 0 {
					inHunk = false
					hunk(hunkStart, i+1)
				}
				return kind
			}
			// Not a hunk line: the hunk ended early; read it as a header.
			inHunk = false
			hunk(hunkStart, i)
		}
		switch {
		case strings.HasPrefix(text, "diff "):
			file = &diffFile{gitPath: gitHeaderPath(text)}
			files = append(files, file)
			return diffHeader
		case strings.HasPrefix(text, "--- ") || trimCR(text) == "---":
			if file != nil && (file.sawPlus || len(file.hunks) > 0) {
				file = nil // the next file of a diff without "diff" lines
			}
			section().oldPath = strings.TrimPrefix(diffPath(text[3:]), "a/")
			return diffHeader
		case strings.HasPrefix(text, "+++ ") || trimCR(text) == "+++":
			f := section()
			f.newPath = strings.TrimPrefix(diffPath(text[3:]), "b/")
			f.sawPlus = true
			return diffHeader
		case strings.HasPrefix(text, "@@"):
			inHunk, hunkStart = true, i+1
			var ok bool
			oldLeft, newLeft, ok = patch.HunkCounts(text)
			loose = !ok
			if ok && oldLeft <= 0 && newLeft <= 0 {
				inHunk = false
			}
			return diffHunk
		case hasAnyPrefix(text, "rename to ", "copy to "):
			_, p, _ := strings.Cut(text, " to ")
			section().gitPath = diffPath(p)
			return diffHeader
		case hasAnyPrefix(text, "index ", "new file", "deleted file", "similarity index", "dissimilarity index",
			"rename from ", "copy from ", "old mode ", "new mode ", "Binary files "):
			return diffHeader
		case strings.HasPrefix(text, "+"):
			return diffAdded
		case strings.HasPrefix(text, "-"):
			return diffRemoved
		}
		return diffOther
	}
	n := 0
	for len(src) > 0 {
		text := src
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			text, src = src[:i], src[i+1:]
		} else {
			src = ""
		}
		k := kind(n, text, src)
		if keep {
			lines = append(lines, diffLine{text: text, kind: k})
		}
		n++
	}
	if inHunk {
		hunk(hunkStart, n)
	}
	return lines, files
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func trimCR(s string) string { return strings.TrimSuffix(s, "\r") }

// diffPath reads the path of a "--- " or "+++ " header (after the
// marker): up to a tab (GNU diff's timestamp follows one), C-quoted by
// git when it has unusual characters.
func diffPath(s string) string {
	s = strings.TrimPrefix(trimCR(s), " ")
	if strings.HasPrefix(s, `"`) {
		// The closing quote is the first one not escaped.
		for i := 1; i < len(s); i++ {
			if s[i] == '\\' {
				i++
			} else if s[i] == '"' {
				if p, err := strconv.Unquote(s[:i+1]); err == nil {
					return p
				}
				break
			}
		}
	}
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return s
}

// gitHeaderPath reads the path of "diff --git a/X b/X", when both names
// are the same (a rename names the new one on its own line).
func gitHeaderPath(text string) string {
	rest, ok := strings.CutPrefix(trimCR(text), "diff --git ")
	if !ok {
		return ""
	}
	if n := len(rest); n%2 == 1 {
		a, b := rest[:n/2], rest[n/2+1:]
		if rest[n/2] == ' ' && strings.HasPrefix(a, "a/") && strings.HasPrefix(b, "b/") && a[2:] == b[2:] {
			return a[2:]
		}
	}
	return ""
}

// DiffFiles lists the files a unified diff touches, in order: from each
// file's "+++ " header, or its "--- " one when it is deleted, or from
// "diff --git" when it has neither (a binary file, a rename).
func DiffFiles(patch string) []string {
	_, files := parseDiff(patch, false)
	return filePaths(files)
}

// filePaths are DiffFiles' list of the file sections.
func filePaths(files []*diffFile) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		if p := f.path(); p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Diff renders a unified diff: each line marked by its kind with chroma's
// classes (gh, gu, gi, gd), and the Python code of each hunk highlighted,
// as GitHub shows a patch. A hunk's old lines (context and removed) and
// its new lines (context and added) are each tokenised as one text, so a
// string or comment spanning lines is read as one, and the tokens are then
// cut back into lines. Highlighting takes pyFast's time only (patchTokens),
// and a patch's words at most highlightTokens; beyond, lines are only
// marked.
func (m *Renderer) Diff(src string) string {
	html, _ := m.DiffAndFiles(src)
	return html
}

// DiffAndFiles is Diff and DiffFiles from one reading of the diff.
func (m *Renderer) DiffAndFiles(src string) (html string, files []string) {
	lines, sections := parseDiff(src, true)
	var b strings.Builder
	if m.hl != nil {
		b.Grow(3*len(src) + len(src)/4) // about what highlighted code takes
	} else {
		b.Grow(len(src) + len(src)/4)
	}
	b.WriteString(`<pre class="chroma"><code>`)
	budget := newHighlightBudget()
	at := 0 // the next line to write
	for _, f := range sections {
		var lexer chroma.Lexer
		if m.hl != nil {
			lexer = m.hl.lexers.forFile(f.path())
		}
		for _, r := range f.hunks {
			for ; at < r[0]; at++ {
				writeDiffLine(&b, lines[at], nil)
			}
			if lexer != nil {
				m.hl.writeHunk(&b, lines[r[0]:r[1]], lexer, budget)
			} else {
				for _, l := range lines[r[0]:r[1]] {
					writeDiffLine(&b, l, nil)
				}
			}
			at = r[1]
		}
	}
	for ; at < len(lines); at++ {
		writeDiffLine(&b, lines[at], nil)
	}
	b.WriteString("</code></pre>")
	return b.String(), filePaths(sections)
}

// writeDiffLine writes a line in its kind's class, its code (after the
// +, - or space) from c when c is not nil. No per-line wrapper as chroma
// writes: a pre keeps the lines, and patches are a quarter of an instance
// page.
func writeDiffLine(b *strings.Builder, l diffLine, c *tokenCursor) {
	class := l.kind.class()
	if class != "" {
		b.WriteString(`<span class="`)
		b.WriteString(class)
		b.WriteString(`">`)
	}
	if c != nil && l.text != "" {
		escapeTo(b, l.text[:1])
		c.writeLine(b)
	} else {
		escapeTo(b, l.text)
		c.skipLine()
	}
	if class != "" {
		b.WriteString("</span>")
	}
	b.WriteByte('\n')
}

// writeHunk writes a hunk's lines, highlighted by lexer where the budget
// allows.
func (h *highlighter) writeHunk(b *strings.Builder, lines []diffLine, lexer chroma.Lexer, budget *highlightBudget) {
	var old, new *tokenCursor
	removes := false
	for _, l := range lines {
		removes = removes || l.kind == diffRemoved
	}
	var text strings.Builder
	var bufs [2]*[]chroma.Token // from h.toks, given back when the lines are written
	defer func() {
		for _, b := range bufs {
			if b != nil {
				clear(*b) // no texts kept alive by the pool
				*b = (*b)[:0]
				h.toks.Put(b)
			}
		}
	}()
	for k, side := range [2]diffKind{diffRemoved, diffAdded} {
		if side == diffRemoved && !removes {
			continue // context is written from the new side
		}
		text.Reset()
		for _, l := range lines {
			if l.kind == side || l.kind == diffContext {
				if l.text != "" {
					text.WriteString(l.text[1:])
				}
				text.WriteByte('\n')
			}
		}
		if text.Len() == 0 {
			continue
		}
		bufs[k] = h.toks.Get().(*[]chroma.Token)
		toks, ok := h.patchTokens(lexer, text.String(), budget, bufs[k])
		if !ok || !coversExactly(toks, text.String()) {
			continue
		}
		c := &tokenCursor{h: h, toks: toks}
		if side == diffRemoved {
			old = c
		} else {
			new = c
		}
	}
	for _, l := range lines {
		switch l.kind {
		case diffRemoved:
			writeDiffLine(b, l, old)
		case diffAdded:
			writeDiffLine(b, l, new)
		case diffContext:
			// On both sides: written from the new one.
			if new != nil {
				writeDiffLine(b, l, new)
				old.skipLine()
			} else {
				writeDiffLine(b, l, old)
			}
		default:
			writeDiffLine(b, l, nil)
		}
	}
}

// coversExactly reports whether toks are text, piece by piece: a lexer
// may rewrite carriage returns or invalid UTF-8.
func coversExactly(toks []chroma.Token, text string) bool {
	for _, t := range toks {
		if !strings.HasPrefix(text, t.Value) {
			return false
		}
		text = text[len(t.Value):]
	}
	return text == ""
}

// tokenCursor writes tokens line by line; a nil one writes nothing.
type tokenCursor struct {
	h    *highlighter
	toks []chroma.Token
	i    int // the token
	off  int // bytes of it done
}

// writeLine writes the tokens up to the next newline, which it consumes.
func (c *tokenCursor) writeLine(b *strings.Builder) {
	c.line(b)
}

// skipLine passes the tokens up to the next newline.
func (c *tokenCursor) skipLine() {
	c.line(nil)
}

func (c *tokenCursor) line(b *strings.Builder) {
	if c == nil {
		return
	}
	for c.i < len(c.toks) {
		t := c.toks[c.i]
		v := t.Value[c.off:]
		nl := strings.IndexByte(v, '\n')
		if nl >= 0 {
			v = v[:nl]
		}
		if b != nil && v != "" {
			c.h.writeToken(b, t.Type, v)
		}
		if nl < 0 {
			c.i, c.off = c.i+1, 0
			continue
		}
		c.off += nl + 1
		if c.off == len(t.Value) {
			c.i, c.off = c.i+1, 0
		}
		return
	}
}

// writeToken writes a piece of a token in the class chroma's formatter
// would give it, or as plain text when both themes draw it so.
func (h *highlighter) writeToken(b *strings.Builder, t chroma.TokenType, v string) {
	class := h.spanClass(t)
	if class == "" {
		escapeTo(b, v)
		return
	}
	b.WriteString(`<span class="`)
	b.WriteString(class)
	b.WriteString(`">`)
	escapeTo(b, v)
	b.WriteString("</span>")
}

// tokenClass is chroma's HTML formatter's class for a token type: its own,
// or its nearest ancestor's.
func tokenClass(t chroma.TokenType) string {
	for ; t != 0; t = t.Parent() {
		if class, ok := chroma.StandardTypes[t]; ok {
			return class
		}
	}
	return ""
}

// escapeTo writes s escaped as html.EscapeString escapes it.
func escapeTo(b *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '&':
			esc = "&amp;"
		case '\'':
			esc = "&#39;"
		case '"':
			esc = "&#34;"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(esc)
		last = i + 1
	}
	b.WriteString(s[last:])
}
