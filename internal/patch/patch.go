// Package patch reads unified diffs, the form in which agents submit
// their predictions and datasets store gold and test patches: which files
// a diff touches, whether it is safe to hand to `git apply` inside an
// evaluation container, how the harness applies it there, and how close
// a prediction's files come to the gold patch's.
//
// A diff is read as git's apply.c reads it: file headers ("diff --git",
// or "---" and "+++" followed by a hunk), then hunks whose
// "@@ -a,b +c,d @@" header says how many lines follow, so that a removed
// line "-- x" (written "--- x") is a line of the hunk, not the next
// file's header. Names are stripped of one leading component (a/, b/),
// as `git apply -p1` and `patch -p1` do. Nothing here rewrites a patch:
// the harness applies exactly the bytes the agent produced.
package patch

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// File is one file's section of a diff.
type File struct {
	// OldPath and NewPath are the file's names before and after, without
	// the a/ and b/ prefixes; OldPath is empty for a created file and
	// NewPath for a deleted one.
	OldPath, NewPath string
	New, Deleted     bool
	Renamed, Copied  bool
	// Binary is a "GIT binary patch" or a "Binary files ... differ" line.
	Binary bool
	// OldMode and NewMode are the octal modes the header gives
	// ("100644"), empty when it gives none.
	OldMode, NewMode string
	// Added and Removed count the hunks' + and - lines.
	Added, Removed int
	// Line is the 1-based line of the patch where the section starts.
	Line int
}

// Path is the file the section is about: its new name, or its old one
// when it is deleted.
func (f *File) Path() string {
	if f.Deleted || f.NewPath == "" {
		return f.OldPath
	}
	return f.NewPath
}

// Patch is what a diff touches, file by file in the order of the diff.
// One file may have several sections (a diff may be several diffs
// concatenated).
type Patch struct {
	Files []File
}

// SyntaxError is a diff that cannot be read as git would read it, or
// whose files cannot be told.
type SyntaxError struct {
	Line int // 1-based
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// Parse reads the files a unified diff touches. Empty or whitespace-only
// input is an empty patch. Text around the diff (a commit message, an
// agent's explanation) is skipped, as git skips it; input with no file
// section at all is an error, as it is for `git apply`.
func Parse(raw []byte) (*Patch, error) {
	p, _, err := parse(raw)
	return p, err
}

// layout is what Check needs beyond the files: the lines, and which are
// inside hunks (their text is file content, not headers).
type layout struct {
	lines  []string
	inHunk []bool // by 0-based line
}

type parser struct {
	lines  []string
	inHunk []bool
	// p is the number of leading components git strips: 1, or 0 once a
	// diff without "diff --git" names a file without a directory
	// (git's guess_p_value; the harness runs git at the repository's top).
	p      int
	pKnown bool
	files  []File
}

// Empty reports whether a prediction is empty: no bytes, or only
// whitespace. An empty prediction is not applied and not an error.
func Empty(raw []byte) bool {
	return len(bytes.TrimSpace(raw)) == 0
}

// splitLines splits raw into lines without their "\n"; a final newline
// does not start another line.
func splitLines(raw []byte) []string {
	if len(raw) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
}

func parse(raw []byte) (*Patch, *layout, error) {
	lines := splitLines(raw)
	ps := &parser{lines: lines, inHunk: make([]bool, len(lines)), p: 1}
	lay := &layout{lines: lines, inHunk: ps.inHunk}
	if Empty(raw) {
		return &Patch{}, lay, nil
	}
	if err := ps.run(); err != nil {
		return nil, lay, err
	}
	if len(ps.files) == 0 {
		return nil, lay, &SyntaxError{Line: 1, Msg: "no unified diff found: no \"diff --git\" header, and no \"---\" and \"+++\" lines followed by a \"@@\" hunk"}
	}
	return &Patch{Files: ps.files}, lay, nil
}

// run is git's find_header loop: look for the next file header, read its
// section, repeat.
func (ps *parser) run() error {
	lines := ps.lines
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "@@ -"):
			if _, _, ok := HunkCounts(l); ok {
				return &SyntaxError{Line: i + 1, Msg: "a hunk without a file header before it (the diff is cut or its @@ counts are wrong)"}
			}
			i++
		case strings.HasPrefix(l, "diff --git "):
			next, err := ps.gitSection(i)
			if err != nil {
				return err
			}
			i = next
		case strings.HasPrefix(l, "--- ") && i+2 < len(lines) &&
			strings.HasPrefix(lines[i+1], "+++ ") && strings.HasPrefix(lines[i+2], "@@ -"):
			next, err := ps.traditionalSection(i)
			if err != nil {
				return err
			}
			i = next
		default:
			i++
		}
	}
	return nil
}

// section collects a file header as git's parse_git_diff_header does.
type section struct {
	f               File
	def             string // the name of the "diff --git" line, or ""
	oldName         string
	newName         string
	oldNull         bool // --- /dev/null
	newNull         bool // +++ /dev/null
	indexMode       string
	oldSet, newSet  bool // a name came from ---/+++, rename or copy lines
	metadataChanged bool
}

// gitSection reads a "diff --git" section starting at line i and
// returns the line after it.
func (ps *parser) gitSection(i int) (int, error) {
	lines := ps.lines
	s := &section{f: File{Line: i + 1}}
	s.def = gitHeaderName(lines[i][len("diff --git "):], ps.p)
	j := i + 1
header:
	for ; j < len(lines); j++ {
		l := lines[j]
		switch {
		case strings.HasPrefix(l, "@@ -"):
			break header
		case strings.HasPrefix(l, "--- "):
			v := l[4:]
			if isDevNull(v) {
				s.oldNull = true
			} else if !s.oldSet {
				s.oldName, s.oldSet = findName(v, "", ps.p, termTab), true
			}
		case strings.HasPrefix(l, "+++ "):
			v := l[4:]
			if isDevNull(v) {
				s.newNull = true
			} else if !s.newSet {
				s.newName, s.newSet = findName(v, "", ps.p, termTab), true
			}
		case strings.HasPrefix(l, "old mode "):
			s.f.OldMode = modeOf(l[len("old mode "):])
		case strings.HasPrefix(l, "new mode "):
			s.f.NewMode = modeOf(l[len("new mode "):])
		case strings.HasPrefix(l, "deleted file mode "):
			s.f.Deleted = true
			s.f.OldMode = modeOf(l[len("deleted file mode "):])
		case strings.HasPrefix(l, "new file mode "):
			s.f.New = true
			s.f.NewMode = modeOf(l[len("new file mode "):])
		case hasAnyPrefix(l, "copy from ", "copy to ", "rename from ", "rename to ", "rename old ", "rename new "):
			verb, rest, _ := strings.Cut(l, " ")
			side, v, _ := strings.Cut(rest, " ")
			if verb == "copy" {
				s.f.Copied = true
			} else {
				s.f.Renamed = true
			}
			// git reads these names without the a/ or b/ prefix: p-1
			// components, and only CR or LF ends them.
			name := findName(v, "", max(ps.p-1, 0), 0)
			if side == "from" || side == "old" {
				s.oldName, s.oldSet = name, true
			} else {
				s.newName, s.newSet = name, true
			}
		case strings.HasPrefix(l, "similarity index "), strings.HasPrefix(l, "dissimilarity index "):
		case strings.HasPrefix(l, "index "):
			if _, m, ok := strings.Cut(strings.TrimRight(l[len("index "):], " \t\r"), " "); ok {
				s.indexMode = modeOf(m)
			}
		default:
			break header
		}
	}
	if j == i+1 {
		// Nothing git recognises follows: git skips the line as text
		// (but still needs its names, as below).
		if s.def == "" {
			return 0, s.noName(i)
		}
		return i + 1, nil
	}
	if err := ps.finishGit(s, i); err != nil {
		return 0, err
	}
	return ps.body(s, j)
}

func (s *section) noName(i int) error {
	return &SyntaxError{Line: i + 1, Msg: "cannot tell which file this \"diff --git\" header is about (git: \"lacks filename information\"): " +
		"its two names differ and no ---/+++ or rename lines name the file"}
}

// finishGit settles a git section's names as parse_git_diff_header does.
func (ps *parser) finishGit(s *section, i int) error {
	f := &s.f
	if s.oldNull && !f.Renamed && !f.Copied {
		f.New = true
	}
	if s.newNull && !f.Renamed && !f.Copied {
		f.Deleted = true
	}
	if f.New && f.Deleted {
		return &SyntaxError{Line: i + 1, Msg: "the header both creates and deletes the file (git: \"inconsistent header lines\")"}
	}
	oldName, newName := s.oldName, s.newName
	if f.New && newName == "" {
		newName = s.def
	}
	if f.Deleted && oldName == "" {
		oldName = s.def
	}
	if oldName == "" && newName == "" {
		if s.def == "" {
			return s.noName(i)
		}
		oldName, newName = s.def, s.def
	}
	if f.New {
		oldName = ""
	}
	if f.Deleted {
		newName = ""
	}
	if (newName == "" && !f.Deleted) || (oldName == "" && !f.New) {
		return s.noName(i)
	}
	f.OldPath, f.NewPath = oldName, newName
	if s.indexMode != "" {
		if f.OldMode == "" && !f.New {
			f.OldMode = s.indexMode
		}
		if f.NewMode == "" && !f.Deleted {
			f.NewMode = s.indexMode
		}
	}
	s.metadataChanged = f.New || f.Deleted || f.Renamed || f.Copied ||
		(f.OldMode != "" && f.NewMode != "" && f.OldMode != f.NewMode)
	return nil
}

// traditionalSection reads a section headed by "---" and "+++" lines
// (plain `diff -u`), as git's parse_traditional_patch does.
func (ps *parser) traditionalSection(i int) (int, error) {
	first, second := ps.lines[i][4:], ps.lines[i+1][4:]
	if !ps.pKnown {
		p, q := guessP(first), guessP(second)
		if p < 0 {
			p = q
		}
		if p >= 0 && p == q {
			ps.p, ps.pKnown = p, true
		}
	}
	s := &section{f: File{Line: i + 1}}
	f := &s.f
	var name string
	switch {
	case isDevNull(first):
		f.New = true
		name = findNameTraditional(second, "", ps.p)
		f.NewPath = name
	case isDevNull(second):
		f.Deleted = true
		name = findNameTraditional(first, "", ps.p)
		f.OldPath = name
	default:
		firstName := findNameTraditional(first, "", ps.p)
		name = findNameTraditional(second, firstName, ps.p)
		switch {
		case hasEpochTimestamp(first):
			f.New = true
			f.NewPath = name
		case hasEpochTimestamp(second):
			f.Deleted = true
			f.OldPath = name
		default:
			f.OldPath, f.NewPath = name, name
		}
	}
	if name == "" {
		return 0, &SyntaxError{Line: i + 1, Msg: "cannot find a file name in these --- and +++ lines"}
	}
	s.metadataChanged = f.New || f.Deleted
	return ps.body(s, i+2)
}

// body reads a section's hunks, or its binary patch, from line j, keeps
// the file when it changes anything, and returns the line after it.
func (ps *parser) body(s *section, j int) (int, error) {
	lines := ps.lines
	f := &s.f
	hunks := 0
	for j < len(lines) && strings.HasPrefix(lines[j], "@@ -") {
		next, err := ps.hunk(f, j)
		if err != nil {
			return 0, err
		}
		hunks++
		j = next
	}
	if hunks == 0 && j < len(lines) {
		l := strings.TrimSuffix(lines[j], "\r")
		switch {
		case l == "GIT binary patch":
			f.Binary = true
			j = skipBinary(lines, j+1)
		case (strings.HasPrefix(l, "Binary files ") || strings.HasPrefix(l, "Files ")) && strings.HasSuffix(l, " differ"):
			f.Binary = true
			j++
		}
	}
	// A section that changes nothing (an "index" line alone) is not a
	// change of the file; git refuses it as "only garbage".
	if hunks > 0 || f.Binary || s.metadataChanged {
		ps.files = append(ps.files, *f)
	}
	return j, nil
}

// hunk reads the hunk whose header is line j and returns the line after
// it. Lines are counted down by the header's counts, as git and GNU patch
// do; a hunk cut short by the end of the input is kept (GNU patch accepts
// it), one cut short by any other line is an error (both tools refuse
// it).
func (ps *parser) hunk(f *File, j int) (int, error) {
	lines := ps.lines
	oldLeft, newLeft, ok := HunkCounts(lines[j])
	if !ok {
		return 0, &SyntaxError{Line: j + 1, Msg: fmt.Sprintf("malformed hunk header %q: want \"@@ -a,b +c,d @@\"", clip(lines[j]))}
	}
	start := j
	ps.inHunk[j] = true
	j++
	for oldLeft > 0 || newLeft > 0 {
		if j >= len(lines) {
			return j, nil
		}
		l := lines[j]
		c := byte(' ')
		if l != "" && l != "\r" {
			// An empty line is an empty context line; so is a CR alone
			// for GNU patch, which strips the CRs of a patch saved with
			// CRLF line endings (git refuses the hunk).
			c = l[0]
		}
		switch c {
		case ' ', '\t':
			// A tab: GNU patch takes the line for context whose space
			// got eaten.
			oldLeft--
			newLeft--
		case '-':
			oldLeft--
			f.Removed++
		case '+':
			newLeft--
			f.Added++
		case '\\':
		default:
			return 0, ps.shortHunk(start, j, oldLeft, newLeft)
		}
		if oldLeft < 0 || newLeft < 0 {
			return 0, ps.shortHunk(start, j, oldLeft, newLeft)
		}
		ps.inHunk[j] = true
		j++
	}
	// "\ No newline at end of file" after the last line.
	if j < len(lines) && strings.HasPrefix(lines[j], "\\") {
		ps.inHunk[j] = true
		j++
	}
	return j, nil
}

func (ps *parser) shortHunk(start, j, oldLeft, newLeft int) error {
	if oldLeft < 0 || newLeft < 0 {
		return &SyntaxError{Line: j + 1, Msg: fmt.Sprintf("the hunk at line %d has more lines than its @@ header counts", start+1)}
	}
	return &SyntaxError{Line: j + 1, Msg: fmt.Sprintf("the hunk at line %d ends here, %d old and %d new lines short of its @@ header's counts (git: \"corrupt patch\")",
		start+1, oldLeft, newLeft)}
}

// skipBinary passes the data of a GIT binary patch: a "literal" or
// "delta" line and base85 lines up to an empty line, once or twice.
func skipBinary(lines []string, j int) int {
	for range 2 {
		if j >= len(lines) || !(strings.HasPrefix(lines[j], "literal ") || strings.HasPrefix(lines[j], "delta ")) {
			return j
		}
		for j++; j < len(lines) && strings.TrimSuffix(lines[j], "\r") != ""; j++ {
		}
		if j < len(lines) {
			j++
		}
	}
	return j
}

// modeOf reads an octal mode at the start of s: "100644".
func modeOf(s string) string {
	s = strings.TrimLeft(s, " ")
	n := 0
	for n < len(s) && isOctal(s[n]) {
		n++
	}
	return s[:n]
}

// HunkCounts reads the old and new line counts of a hunk header,
// "@@ -a[,b] +c[,d] @@", as git's parse_fragment_header does (anything may
// follow the second "@@"); ok is false for anything else.
func HunkCounts(text string) (old, new int, ok bool) {
	rest, ok := strings.CutPrefix(text, "@@ -")
	if !ok {
		return 0, 0, false
	}
	if old, rest, ok = hunkRange(rest); !ok {
		return 0, 0, false
	}
	if rest, ok = strings.CutPrefix(rest, " +"); !ok {
		return 0, 0, false
	}
	if new, rest, ok = hunkRange(rest); !ok || !strings.HasPrefix(rest, " @@") {
		return 0, 0, false
	}
	return old, new, true
}

// hunkRange reads "a" or "a,b" and returns b (1 when absent). Counts are
// bounded so that a hostile header cannot overflow them.
func hunkRange(s string) (count int, rest string, ok bool) {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	if n == 0 || n > 9 {
		return 0, "", false
	}
	if n == len(s) || s[n] != ',' {
		return 1, s[n:], true
	}
	m := n + 1
	for m < len(s) && isDigit(s[m]) {
		m++
	}
	if m == n+1 || m-n-1 > 9 {
		return 0, "", false
	}
	count, _ = strconv.Atoi(s[n+1 : m])
	return count, s[m:], true
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// clip shortens a line for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
