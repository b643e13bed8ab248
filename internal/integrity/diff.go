package integrity

import (
	"strings"

	"github.com/featbench/featbench/internal/patch"
)

// fileChange is one file's section of a diff, with its hunks' lines.
type fileChange struct {
	// Paths are the names the section gives the file, old and new (one
	// for a created or deleted file, two when renamed).
	Paths []string
	Hunks []hunk
}

// hunk is one hunk's lines in order, each with its mark: ' ' context,
// '-' removed, '+' added, without the mark.
type hunk struct {
	Header string // what follows the second "@@", often a section or function
	Marks  []byte
	Lines  []string
}

// changes reads a diff's files and lines. reverse reads it as applied
// with -R: added and removed lines swap. A diff patch.Parse refuses is
// read leniently, every "+" and "-" line outside "+++"/"---" headers
// under one nameless file, so that what it holds is still looked at.
func changes(raw []byte, reverse bool) []fileChange {
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	p, err := patch.Parse(raw)
	if err != nil {
		return []fileChange{lenient(lines, reverse)}
	}
	out := make([]fileChange, 0, len(p.Files))
	for i, f := range p.Files {
		end := len(lines)
		if i+1 < len(p.Files) {
			end = p.Files[i+1].Line - 1
		}
		fc := fileChange{}
		for _, n := range []string{f.OldPath, f.NewPath} {
			if n != "" && (len(fc.Paths) == 0 || fc.Paths[0] != n) {
				fc.Paths = append(fc.Paths, n)
			}
		}
		start := max(f.Line-1, 0)
		for j := start; j < end && j < len(lines); {
			if _, _, ok := patch.HunkCounts(lines[j]); !ok {
				j++
				continue
			}
			var h hunk
			h, j = readHunk(lines, j, reverse)
			fc.Hunks = append(fc.Hunks, h)
		}
		out = append(out, fc)
	}
	return out
}

// readHunk reads the hunk whose header is line j, counting its lines down
// by the header's counts as patch.Parse does, and returns the line after it.
func readHunk(lines []string, j int, reverse bool) (hunk, int) {
	oldLeft, newLeft, _ := patch.HunkCounts(lines[j])
	var h hunk
	if k := strings.Index(lines[j][2:], "@@"); k >= 0 {
		h.Header = strings.TrimSpace(lines[j][2+k+2:])
	}
	for j++; j < len(lines) && (oldLeft > 0 || newLeft > 0); j++ {
		l := lines[j]
		c := byte(' ')
		if l != "" && l != "\r" {
			c = l[0]
			l = l[1:]
		}
		switch c {
		case ' ', '\t':
			oldLeft--
			newLeft--
			c = ' '
		case '-':
			oldLeft--
		case '+':
			newLeft--
		case '\\':
			continue
		default:
			return h, j
		}
		if reverse && c != ' ' {
			c = '+' + '-' - c
		}
		h.Marks = append(h.Marks, c)
		h.Lines = append(h.Lines, l)
	}
	return h, j
}

// lenient reads the changed lines of text that is not a diff patch.Parse
// accepts.
func lenient(lines []string, reverse bool) fileChange {
	var h hunk
	for _, l := range lines {
		if l == "" || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") {
			continue
		}
		c := l[0]
		if c != '+' && c != '-' {
			continue
		}
		if reverse {
			c = '+' + '-' - c
		}
		h.Marks = append(h.Marks, c)
		h.Lines = append(h.Lines, l[1:])
	}
	return fileChange{Hunks: []hunk{h}}
}

// added returns every added line of the changes.
func added(fcs []fileChange) []string {
	var out []string
	for _, fc := range fcs {
		for _, h := range fc.Hunks {
			for i, m := range h.Marks {
				if m == '+' {
					out = append(out, h.Lines[i])
				}
			}
		}
	}
	return out
}
