package tomlstrict

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// nesting is the deepest nesting of brackets and braces outside strings
// and comments, and the line where it is first reached.
func nesting(data []byte) (deepest, at int) {
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
		case '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			delim := []byte{c}
			if bytes.HasPrefix(data[i:], []byte{c, c, c}) {
				delim = []byte{c, c, c}
			}
			j := i + len(delim)
			for j < len(data) && !bytes.HasPrefix(data[j:], delim) {
				if data[j] == '\n' {
					if len(delim) == 1 {
						break // an unclosed string: the parser will say so
					}
					line++
				}
				if data[j] == '\\' && c == '"' {
					if j+1 < len(data) && data[j+1] == '\n' {
						line++
					}
					j++
				}
				j++
			}
			if j < len(data) && data[j] == '\n' {
				i = j - 1
			} else {
				i = j + len(delim) - 1
			}
		case '[', '{':
			if depth++; depth > deepest {
				deepest, at = depth, line
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return deepest, at
}

// scanLines finds the line of every key and table header of a TOML file
// that has already parsed, naming array-of-table elements by their index
// as Decode does. It is a scanner, not a parser: anything it
// does not follow only costs a line number.
func scanLines(s string) Lines {
	return ScanLines(s)
}

// ScanLines is scanLines for a file that parsed: the lines of its keys,
// for a problem found after decoding (a value checked against other
// files).
func ScanLines(s string) Lines {
	sc := &scanner{s: s, line: 1, lines: Lines{}, arrays: map[string]int{}}
	sc.run()
	return sc.lines
}

type scanner struct {
	s      string
	i      int
	line   int
	lines  Lines
	arrays map[string]int // elements of each array of tables, by path
}

func (sc *scanner) eof() bool { return sc.i >= len(sc.s) }

func (sc *scanner) record(path string) {
	if _, ok := sc.lines[path]; !ok && path != "" {
		sc.lines[path] = sc.line
	}
}

// skip passes spaces and tabs, and newlines and comments when lines is set.
func (sc *scanner) skip(lines bool) {
	for !sc.eof() {
		switch c := sc.s[sc.i]; {
		case c == ' ' || c == '\t' || c == '\r':
			sc.i++
		case c == '\n' && lines:
			sc.line++
			sc.i++
		case c == '#':
			for !sc.eof() && sc.s[sc.i] != '\n' {
				sc.i++
			}
		default:
			return
		}
	}
}

func (sc *scanner) run() {
	table := ""
	for {
		sc.skip(true)
		if sc.eof() {
			return
		}
		start := sc.i
		if sc.s[sc.i] == '[' {
			array := strings.HasPrefix(sc.s[sc.i:], "[[")
			sc.i++
			if array {
				sc.i++
			}
			table = sc.resolve("", sc.keys(), array)
			sc.record(table)
		} else {
			keys := sc.keys()
			sc.skip(false)
			if !sc.eof() && sc.s[sc.i] == '=' {
				sc.i++
				path := sc.resolve(table, keys, false)
				sc.record(path)
				sc.value(path)
			}
		}
		// The rest of the line: a closing bracket, a comment.
		for !sc.eof() && sc.s[sc.i] != '\n' {
			sc.i++
		}
		if sc.i == start {
			sc.i++ // never stand still
		}
	}
}

// resolve joins keys to a table path, naming each array of tables by its
// latest element, or by a new one for the last key of a [[header]].
func (sc *scanner) resolve(path string, keys []string, array bool) string {
	for j, k := range keys {
		path = join(path, k)
		n := sc.arrays[path]
		switch {
		case array && j == len(keys)-1:
			sc.arrays[path] = n + 1
			sc.record(path) // the array as a whole is where its first table is
			path = fmt.Sprintf("%s[%d]", path, n)
		case n > 0:
			path = fmt.Sprintf("%s[%d]", path, n-1)
		}
	}
	return path
}

// keys reads a dotted key: bare, "basic" or 'literal' parts.
func (sc *scanner) keys() []string {
	var keys []string
	for {
		sc.skip(false)
		if sc.eof() {
			return keys
		}
		switch sc.s[sc.i] {
		case '"':
			keys = append(keys, sc.basicString())
		case '\'':
			end := strings.IndexByte(sc.s[sc.i+1:], '\'')
			if end < 0 {
				sc.i = len(sc.s)
				return keys
			}
			keys = append(keys, sc.s[sc.i+1:sc.i+1+end])
			sc.i += end + 2
		default:
			j := sc.i
			for j < len(sc.s) && isBareKey(sc.s[j]) {
				j++
			}
			if j == sc.i {
				return keys
			}
			keys = append(keys, sc.s[sc.i:j])
			sc.i = j
		}
		sc.skip(false)
		if sc.eof() || sc.s[sc.i] != '.' {
			return keys
		}
		sc.i++
	}
}

func isBareKey(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// basicString reads a one-line "string" and returns its value.
func (sc *scanner) basicString() string {
	j := sc.i + 1
	for j < len(sc.s) && sc.s[j] != '"' && sc.s[j] != '\n' {
		if sc.s[j] == '\\' {
			j++
		}
		j++
	}
	raw := sc.s[sc.i:min(j+1, len(sc.s))]
	sc.i = min(j+1, len(sc.s))
	if v, err := strconv.Unquote(raw); err == nil {
		return v
	}
	return strings.Trim(raw, `"`)
}

// value passes one value, recording the keys of inline tables.
func (sc *scanner) value(path string) {
	sc.skip(false)
	if sc.eof() {
		return
	}
	switch rest := sc.s[sc.i:]; {
	case strings.HasPrefix(rest, `"""`), strings.HasPrefix(rest, `'''`):
		delim := rest[:3]
		j := 3
		for j < len(rest) && !strings.HasPrefix(rest[j:], delim) {
			if rest[j] == '\\' && delim[0] == '"' {
				j++
			}
			j++
		}
		j = min(j+3, len(rest))
		for j < len(rest) && rest[j] == delim[0] { // up to two quotes end the content
			j++
		}
		sc.line += strings.Count(rest[:j], "\n")
		sc.i += j
	case rest[0] == '"':
		sc.basicString()
	case rest[0] == '\'':
		end := strings.IndexAny(rest[1:], "'\n")
		if end < 0 {
			sc.i = len(sc.s)
			return
		}
		sc.i += end + 2
	case rest[0] == '[':
		sc.i++
		for n := 0; ; n++ {
			sc.skip(true)
			if sc.eof() {
				return
			}
			if sc.s[sc.i] == ']' {
				sc.i++
				return
			}
			before := sc.i
			sc.value(fmt.Sprintf("%s[%d]", path, n))
			sc.skip(true)
			if !sc.eof() && sc.s[sc.i] == ',' {
				sc.i++
			} else if sc.i == before {
				sc.i++
			}
		}
	case rest[0] == '{':
		sc.i++
		for {
			sc.skip(false)
			if sc.eof() || sc.s[sc.i] == '\n' {
				return
			}
			if sc.s[sc.i] == '}' {
				sc.i++
				return
			}
			before := sc.i
			sub := sc.resolve(path, sc.keys(), false)
			sc.skip(false)
			if !sc.eof() && sc.s[sc.i] == '=' {
				sc.i++
				sc.record(sub)
				sc.value(sub)
			}
			sc.skip(false)
			if !sc.eof() && sc.s[sc.i] == ',' {
				sc.i++
			} else if sc.i == before {
				sc.i++
			}
		}
	default:
		for !sc.eof() && strings.IndexByte(",]}\n#", sc.s[sc.i]) < 0 {
			sc.i++
		}
	}
}
