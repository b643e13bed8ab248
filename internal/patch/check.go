package patch

import (
	"bytes"
	"fmt"
	"strings"
)

// DefaultMaxBytes is the default size limit of a patch: FeatureBench's
// largest gold patch is well under 1 MiB, and a prediction many times
// that is an agent gone astray rather than a feature.
const DefaultMaxBytes = 5 << 20

// Limits bound what Check accepts.
type Limits struct {
	// MaxBytes is the largest patch, in bytes; 0 means DefaultMaxBytes.
	MaxBytes int
}

// Refusal is why Check will not let a patch reach `git apply`.
type Refusal struct {
	Line   int    // 1-based line of the patch; 0 when the whole patch is at fault
	Path   string // the path at fault, when one is
	Reason string
	Err    error // the parse error behind the refusal, if any
}

func (r *Refusal) Error() string {
	var b strings.Builder
	b.WriteString("patch refused")
	if r.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", r.Line)
	}
	b.WriteString(": ")
	if r.Path != "" {
		fmt.Fprintf(&b, "path %q ", r.Path)
	}
	b.WriteString(r.Reason)
	return b.String()
}

func (r *Refusal) Unwrap() error { return r.Err }

// Check refuses, with a reason a person understands, a patch that must
// never reach `git apply` (or the `patch` fallback) in the container: one
// larger than the limit, holding NUL bytes, binary, not a unified diff
// Parse can read, or naming a path that is absolute, has a ".." or
// ".git" component, a backslash or a control character, or that sets a
// symlink or submodule mode. It returns nil or a *Refusal. An empty patch
// is not refused (Empty tells it apart); whatever Check accepts, Parse
// reads.
//
// Paths are checked wherever they appear outside hunks, on every header
// line git or GNU patch could take a name from ("diff --git", ---, +++,
// ***, Index:, rename and copy lines), and as read before and after the
// a/ prefix is stripped, so the fallback's different reading of a header
// cannot reach a name git's would not.
func Check(raw []byte, opts Limits) error {
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if len(raw) > limit {
		return &Refusal{Reason: fmt.Sprintf("is %d bytes, over the limit of %d bytes", len(raw), limit)}
	}
	if Empty(raw) {
		return nil
	}
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		return &Refusal{Line: 1 + bytes.Count(raw[:i], []byte{'\n'}), Reason: "holds a NUL byte: a binary file or a corrupt patch, which is not applied"}
	}
	p, lay, err := parse(raw)
	if err != nil {
		r := &Refusal{Reason: "is not a unified diff git can read: " + err.Error(), Err: err}
		if se, ok := err.(*SyntaxError); ok {
			r.Line, r.Reason = se.Line, "is not a unified diff git can read: "+se.Msg
		}
		return r
	}
	for _, f := range p.Files {
		if f.Binary {
			return &Refusal{Line: f.Line, Path: f.Path(), Reason: "is a binary patch; binary patches are not applied"}
		}
	}
	for i, l := range lay.lines {
		if lay.inHunk[i] {
			continue
		}
		if r := checkLine(strings.TrimSuffix(l, "\r")); r != nil {
			r.Line = i + 1
			return r
		}
	}
	for _, f := range p.Files {
		for _, n := range []string{f.OldPath, f.NewPath} {
			if r := checkName(n); r != nil {
				r.Line = f.Line
				return r
			}
		}
	}
	return nil
}

// checkLine checks one line outside hunks: the names and modes of any
// header it could be, and the markers of diff formats the fallback would
// apply but Parse does not read.
func checkLine(l string) *Refusal {
	switch {
	case strings.HasPrefix(l, "diff --git "):
		return checkGitNames(l[len("diff --git "):])
	case hasAnyPrefix(l, "--- ", "+++ ", "*** "):
		return checkHeaderName(l[4:], true)
	case strings.HasPrefix(l, "Index: "):
		return checkHeaderName(strings.TrimSpace(l[len("Index: "):]), false)
	case hasAnyPrefix(l, "rename from ", "rename to ", "rename old ", "rename new ", "copy from ", "copy to "):
		_, rest, _ := strings.Cut(l, " ")
		_, name, _ := strings.Cut(rest, " ")
		return checkHeaderName(name, false)
	case hasAnyPrefix(l, "old mode ", "new mode ", "new file mode ", "deleted file mode "):
		return checkMode(l[strings.LastIndex(l, "mode ")+len("mode "):])
	case strings.HasPrefix(l, "index "):
		if _, m, ok := strings.Cut(strings.TrimSpace(l[len("index "):]), " "); ok {
			return checkMode(m)
		}
	case strings.HasPrefix(l, "GIT binary patch"), strings.HasPrefix(l, "Binary files "):
		return &Refusal{Reason: "is a binary patch; binary patches are not applied"}
	case strings.HasPrefix(l, "***************"):
		return &Refusal{Reason: "is a context diff (\"***************\"); only unified diffs are applied"}
	case isEdCommand(l):
		return &Refusal{Reason: fmt.Sprintf("%q is a normal or ed-style diff command; only unified diffs are applied (GNU patch would run an ed script)", l)}
	}
	return nil
}

// isEdCommand reports a normal or ed diff command: "12a", "3,4d", "5c7,8".
func isEdCommand(l string) bool {
	i := 0
	num := func() bool {
		n := i
		for i < len(l) && isDigit(l[i]) {
			i++
		}
		if i == n {
			return false
		}
		if i < len(l) && l[i] == ',' {
			i++
			m := i
			for i < len(l) && isDigit(l[i]) {
				i++
			}
			return i > m
		}
		return true
	}
	if !num() || i >= len(l) || (l[i] != 'a' && l[i] != 'c' && l[i] != 'd') {
		return false
	}
	i++
	if i == len(l) {
		return true
	}
	return num() && i == len(l)
}

// checkGitNames checks every name a "diff --git" line could give: each
// whitespace-separated or quoted token (GNU patch's reading), which
// covers git's reading of two equal halves.
func checkGitNames(rest string) *Refusal {
	for rest = strings.TrimLeft(rest, " \t"); rest != ""; rest = strings.TrimLeft(rest, " \t") {
		var name string
		if rest[0] == '"' {
			n, after, ok := unquoteC(rest)
			if !ok {
				return &Refusal{Path: clip(rest), Reason: "is a badly quoted name (git quotes names as C strings)"}
			}
			name, rest = n, after
		} else {
			n := strings.IndexAny(rest, " \t")
			if n < 0 {
				n = len(rest)
			}
			name, rest = rest[:n], rest[n:]
		}
		if r := checkName(name); r != nil {
			return r
		}
	}
	return nil
}

// checkHeaderName checks the name at the start of a ---, +++, ***,
// Index:, rename or copy line: quoted, or up to a tab (which starts a
// timestamp) when tabEnds.
func checkHeaderName(v string, tabEnds bool) *Refusal {
	if strings.HasPrefix(v, `"`) {
		n, _, ok := unquoteC(v)
		if !ok {
			return &Refusal{Path: clip(v), Reason: "is a badly quoted name (git quotes names as C strings)"}
		}
		return checkName(n)
	}
	if tabEnds {
		if i := strings.IndexByte(v, '\t'); i >= 0 {
			v = v[:i]
		}
	}
	return checkName(v)
}

// checkName checks one file name, with or without its a/ or b/ prefix.
func checkName(n string) *Refusal {
	if n == "" || n == "/dev/null" {
		return nil
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; c < 0x20 || c == 0x7f {
			why := "has a control character"
			if c == '\r' {
				why = "has a carriage return (was the patch saved with CRLF line endings?)"
			}
			return &Refusal{Path: n, Reason: fmt.Sprintf("%s (byte 0x%02x); such a file cannot be part of a repository", why, c)}
		}
	}
	if strings.Contains(n, `\`) {
		return &Refusal{Path: n, Reason: "has a backslash, a path separator on Windows (\"..\\\" climbs out of a folder there)"}
	}
	if strings.HasPrefix(n, "/") {
		return &Refusal{Path: n, Reason: "is absolute; a patch may only name files inside the repository"}
	}
	if _, rest, ok := strings.Cut(n, "/"); ok && strings.HasPrefix(rest, "/") {
		return &Refusal{Path: n, Reason: "is absolute once its a/ or b/ prefix is removed; a patch may only name files inside the repository"}
	}
	for c := range strings.SplitSeq(n, "/") {
		switch {
		case c == "..":
			return &Refusal{Path: n, Reason: "has a \"..\" component, which would reach outside the repository"}
		case strings.EqualFold(c, ".git"):
			return &Refusal{Path: n, Reason: "is inside a .git folder: it would change the repository itself (hooks, config), not its files"}
		}
	}
	return nil
}

// checkMode refuses the modes that make a patch more than a change of
// files' text: symbolic links (which could point outside the repository)
// and submodules (which the container cannot fetch).
func checkMode(v string) *Refusal {
	m := modeOf(v)
	switch m {
	case "100644", "100755", "100664", "":
		return nil
	case "120000":
		return &Refusal{Reason: "is about a symbolic link (mode 120000); a link could point outside the repository, so patches touching links are not applied"}
	case "160000":
		return &Refusal{Reason: "is about a submodule (mode 160000), which the container cannot fetch; submodules are not applied"}
	}
	return &Refusal{Reason: fmt.Sprintf("sets the unsupported file mode %s; only 100644 and 100755 are applied", m)}
}
