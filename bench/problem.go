package bench

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// Problem is one thing wrong with the data: where it is (file, line, field)
// and what is wrong, so that a submitter can fix it without guessing.
type Problem struct {
	File  string
	Line  int // 0 when the problem is not tied to one line
	Field string
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

// Problems collects every problem found in one pass, so one run of
// `build --check` lists them all.
type Problems []Problem

func (ps Problems) Error() string {
	if len(ps) == 1 {
		return ps[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems in data:", len(ps))
	for _, p := range ps {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

func (ps *Problems) add(file string, line int, field, format string, args ...any) {
	*ps = append(*ps, Problem{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Err returns nil when there are no problems, the sorted list otherwise.
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

// tomlProblem turns a TOML syntax error into a Problem with the line and
// key the TOML library reports.
func tomlProblem(file string, err error) Problem {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if msg == "" {
			msg = err.Error()
		}
		return Problem{File: file, Line: pe.Position.Line, Field: pe.LastKey, Msg: msg}
	}
	return Problem{File: file, Msg: err.Error()}
}
