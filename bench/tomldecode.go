package bench

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// TOML files are written by hand, so they are decoded strictly and every
// problem of a file is listed in one run: the TOML library parses the
// file (it stops at the first syntax error), then decodeTOML places each
// value into the model itself, key by key, so that a wrong type or an
// unknown key anywhere does not hide the next one. Keys are matched
// exactly: the library would also take `Name` for `name`.

// keyLines maps a key's path, as problems name it ("date",
// "splits[1].instances", "reported.repos.astropy.resolved"), to the line
// where it is written.
type keyLines map[string]int

// line is the line of a field, or of its nearest enclosing key or table
// when the field itself is not written; 0 when none is.
func (kl keyLines) line(field string) int {
	for field != "" {
		if n, ok := kl[field]; ok {
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

// add records a problem with a field of a TOML file, at the field's line.
func (kl keyLines) add(ps *Problems, file, field, format string, args ...any) {
	ps.add(file, kl.line(field), field, format, args...)
}

// decodeTOML decodes a TOML file into v strictly. reserved maps top-level
// keys the model leaves out on purpose to the message a submitter gets
// for writing them. It returns where each key is written, for later
// problems, and every problem found; v is incomplete when there are any.
func decodeTOML(file string, data []byte, v any, reserved map[string]string) (keyLines, Problems) {
	var ps Problems
	switch {
	case bytes.HasPrefix(data, []byte(utf8BOM)):
		ps.add(file, 1, "", "starts with a byte-order mark (U+FEFF); save the file as UTF-8 without one")
		return nil, ps
	case bytes.HasPrefix(data, []byte("\xff\xfe")), bytes.HasPrefix(data, []byte("\xfe\xff")):
		ps.add(file, 1, "", "is UTF-16; save the file as UTF-8")
		return nil, ps
	case !utf8.Valid(data):
		ps.add(file, invalidUTF8Line(data), "", "is not valid UTF-8")
		return nil, ps
	}
	// The TOML library takes time quadratic in the nesting of inline
	// tables: a 256 KiB file of them would stall the check.
	if depth, line := tomlDepth(data); depth > maxTOMLDepth {
		ps.add(file, line, "", "nests arrays and inline tables more than %d deep", maxTOMLDepth)
		return nil, ps
	}
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		return nil, Problems{tomlProblem(file, err)}
	}
	d := &tomlDecoder{file: file, lines: tomlKeyLines(string(data)), reserved: reserved}
	d.unify("", m, reflect.ValueOf(v).Elem())
	return d.lines, d.ps
}

// tomlDepth is the deepest nesting of brackets and braces outside strings
// and comments, and the line where it is first reached.
func tomlDepth(data []byte) (deepest, at int) {
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

// invalidUTF8Line is the line of the first byte that is not UTF-8.
func invalidUTF8Line(data []byte) int {
	line := 1
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		if r == utf8.RuneError && n <= 1 {
			return line
		}
		if r == '\n' {
			line++
		}
		data = data[n:]
	}
	return line
}

type tomlDecoder struct {
	file     string
	lines    keyLines
	reserved map[string]string
	ps       Problems
}

func (d *tomlDecoder) problem(field, format string, args ...any) {
	d.lines.add(&d.ps, d.file, field, format, args...)
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	unmarshalerType = reflect.TypeFor[toml.Unmarshaler]()
)

// unify stores the decoded TOML value v, at path, into rv.
func (d *tomlDecoder) unify(path string, v any, rv reflect.Value) {
	t := rv.Type()
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		if err := rv.Addr().Interface().(toml.Unmarshaler).UnmarshalTOML(v); err != nil {
			d.problem(path, "%v", err)
		}
		return
	}
	if t == timeType {
		switch x := v.(type) {
		case time.Time:
			rv.Set(reflect.ValueOf(x))
		case string:
			if dt, err := time.Parse(time.DateOnly, strings.TrimSpace(x)); err == nil {
				d.problem(path, "is a string; write the date without quotes: %s = %s", lastKey(path), dt.Format(time.DateOnly))
			} else {
				d.problem(path, "is a string; want a date such as 2026-01-21, written without quotes")
			}
		default:
			d.mismatch(path, v, "a date such as 2026-01-21")
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			rv.Set(reflect.New(t.Elem()))
		}
		d.unify(path, v, rv.Elem())
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			d.mismatch(path, v, "a table")
			return
		}
		fields := tomlFields(t)
		for _, k := range sortedMapKeys(m) {
			sub := join(path, k)
			if i, ok := fields[k]; ok {
				d.unify(sub, m[k], rv.Field(i))
				continue
			}
			if msg, ok := d.reserved[sub]; ok {
				d.problem(sub, "%s", msg)
				continue
			}
			msg := "unknown key " + quote(k)
			if s := closest(k, fields); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			} else {
				msg += " (check the spelling against CONTRIBUTING.md)"
			}
			d.problem(sub, "%s", msg)
		}
	case reflect.Slice:
		var list []any
		switch x := v.(type) {
		case []any:
			list = x
		case []map[string]any:
			for _, e := range x {
				list = append(list, e)
			}
		default:
			d.mismatch(path, v, "an array")
			return
		}
		s := reflect.MakeSlice(t, len(list), len(list))
		for i, e := range list {
			d.unify(fmt.Sprintf("%s[%d]", path, i), e, s.Index(i))
		}
		rv.Set(s)
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok || t.Key().Kind() != reflect.String {
			d.mismatch(path, v, "a table")
			return
		}
		out := reflect.MakeMapWithSize(t, len(m))
		for _, k := range sortedMapKeys(m) {
			e := reflect.New(t.Elem()).Elem()
			d.unify(join(path, k), m[k], e)
			out.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), e)
		}
		rv.Set(out)
	case reflect.String:
		if s, ok := v.(string); ok {
			rv.SetString(s)
		} else {
			d.mismatch(path, v, "a string")
		}
	case reflect.Bool:
		if b, ok := v.(bool); ok {
			rv.SetBool(b)
		} else {
			d.mismatch(path, v, "true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(int64)
		if !ok {
			d.mismatch(path, v, "an integer")
			return
		}
		if rv.OverflowInt(n) {
			d.problem(path, "is %d, too large", n)
			return
		}
		rv.SetInt(n)
	case reflect.Float32, reflect.Float64:
		switch x := v.(type) {
		case float64:
			rv.SetFloat(x)
		case int64:
			rv.SetFloat(float64(x))
		default:
			d.mismatch(path, v, "a number")
		}
	default:
		d.problem(path, "cannot be decoded into %s", t) // a bug in the model
	}
}

func (d *tomlDecoder) mismatch(path string, v any, want string) {
	d.problem(path, "is %s; want %s", tomlTypeName(v), want)
}

// tomlTypeName names a decoded TOML value's type for a message, with the
// value itself when it is short.
func tomlTypeName(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) <= 40 && checkText(x, 40, oneLine) == "" {
			return fmt.Sprintf("a string (%q)", x)
		}
		return "a string"
	case int64:
		return fmt.Sprintf("an integer (%d)", x)
	case float64:
		return "a float (" + strconv.FormatFloat(x, 'g', -1, 64) + ")"
	case bool:
		return fmt.Sprintf("a boolean (%t)", x)
	case time.Time:
		return "a date"
	case []any:
		return "an array"
	case []map[string]any:
		return "an array of tables"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func lastKey(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// tomlFields maps a struct's TOML keys to its field indexes; fields
// tagged "-" or without a tag are not read from TOML.
func tomlFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		m[name] = i
	}
	return m
}

// closest is the known key a misspelt key most likely means, or "".
func closest[V any](key string, known map[string]V) string {
	best, bestD := "", 0
	lk := strings.ToLower(key)
	for k := range known {
		d := editDistance(lk, strings.ToLower(k))
		if best == "" || d < bestD || d == bestD && k < best {
			best, bestD = k, d
		}
	}
	if best == "" || bestD > max(1, len(key)/4) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// tomlKeyLines finds the line of every key and table header of a TOML
// file that has already parsed, naming array-of-table elements by their
// index as decodeTOML does. It is a scanner, not a parser: anything it
// does not follow only costs a line number.
func tomlKeyLines(s string) keyLines {
	sc := &tomlScanner{s: s, line: 1, lines: keyLines{}, arrays: map[string]int{}}
	sc.run()
	return sc.lines
}

type tomlScanner struct {
	s      string
	i      int
	line   int
	lines  keyLines
	arrays map[string]int // elements of each array of tables, by path
}

func (sc *tomlScanner) eof() bool { return sc.i >= len(sc.s) }

func (sc *tomlScanner) record(path string) {
	if _, ok := sc.lines[path]; !ok && path != "" {
		sc.lines[path] = sc.line
	}
}

// skip passes spaces and tabs, and newlines and comments when lines is set.
func (sc *tomlScanner) skip(lines bool) {
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

func (sc *tomlScanner) run() {
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
func (sc *tomlScanner) resolve(path string, keys []string, array bool) string {
	for j, k := range keys {
		path = join(path, k)
		n := sc.arrays[path]
		switch {
		case array && j == len(keys)-1:
			sc.arrays[path] = n + 1
			path = fmt.Sprintf("%s[%d]", path, n)
		case n > 0:
			path = fmt.Sprintf("%s[%d]", path, n-1)
		}
	}
	return path
}

// keys reads a dotted key: bare, "basic" or 'literal' parts.
func (sc *tomlScanner) keys() []string {
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
func (sc *tomlScanner) basicString() string {
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
func (sc *tomlScanner) value(path string) {
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
