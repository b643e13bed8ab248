// Package tomlstrict decodes hand-written TOML files strictly and reports
// what is wrong with them as Problems that name the file, the line and the
// field, so that whoever wrote the file can fix it without guessing.
//
// The data files of bench/ and featbench.toml of config/ are read with it,
// so that the same mistake gets the same message in either.
package tomlstrict

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a file: where it is (file, line, field)
// and what is wrong.
type Problem struct {
	File  string
	Line  int    // 0 when the problem is not tied to one line
	Field string // e.g. splits[1].size; "" for the file as a whole
	Msg   string
}

func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	if p.Field != "" {
		fmt.Fprintf(&b, ": field %q", p.Field)
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	return b.String()
}

// Problems collects every problem found in one pass, so that one run
// lists them all.
type Problems []Problem

func (ps Problems) Error() string {
	if len(ps) == 1 {
		return ps[0].Error()
	}
	var b strings.Builder
	if ps.oneFile() {
		fmt.Fprintf(&b, "%s: %d problems:", ps[0].File, len(ps))
	} else {
		// Only a data tree (bench) spans files.
		fmt.Fprintf(&b, "%d problems in data:", len(ps))
	}
	for _, p := range ps {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

func (ps Problems) oneFile() bool {
	for _, p := range ps {
		if p.File != ps[0].File {
			return false
		}
	}
	return len(ps) > 0
}

// Add records a problem.
func (ps *Problems) Add(file string, line int, field, format string, args ...any) {
	*ps = append(*ps, Problem{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Err returns nil when there are no problems, else the list sorted by file
// and then line, a file's problems without a line first.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].File != ps[j].File {
			return ps[i].File < ps[j].File
		}
		return ps[i].Line < ps[j].Line
	})
	return ps
}

// Lines maps a key's path, as problems name it ("date",
// "splits[1].instances", "reported.repos.astropy.resolved"), to the line
// where it is written.
type Lines map[string]int

// Line is the line of a field, or of its nearest enclosing key or table
// when the field itself is not written; 0 when none is.
func (l Lines) Line(field string) int {
	for field != "" {
		if n, ok := l[field]; ok {
			return n
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			break
		}
		field = field[:i]
	}
	return 0
}

// Add records a problem with a field of file, at the field's line.
func (l Lines) Add(ps *Problems, file, field, format string, args ...any) {
	ps.Add(file, l.Line(field), field, format, args...)
}
