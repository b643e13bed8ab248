package tomlstrict

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// The TOML library parses the file (it stops at the first syntax error),
// then Decode places each value into the model itself, key by key, so
// that a wrong type or an unknown key anywhere does not hide the next
// one. Keys are matched exactly: the library would also take `Name` for
// `name`, and it ignores unknown keys.

// MaxDepth is the deepest nesting of arrays and inline tables Decode
// accepts: the TOML library takes time quadratic in it, and a 256 KiB file
// of nested inline tables would stall a check.
const MaxDepth = 32

// Options says what Decode needs to know of a file beyond its model.
type Options struct {
	// Reserved maps keys the model leaves out on purpose, by path, to the
	// message for writing them.
	Reserved map[string]string
	// KeysDoc names where the file's keys are listed, for an unknown key
	// that is close to no known one; "" to name nothing.
	KeysDoc string
}

// Defaulter is a table that starts from defaults of its own rather than
// zero values when Decode makes it, as each element of an array of tables.
type Defaulter interface{ SetDefaults() }

const utf8BOM = "\xef\xbb\xbf"

// Decode decodes the TOML file data, read from file, into v, a non-nil
// pointer to the model, strictly. It returns where each key is written,
// for the caller's own problems later, and every problem found; v is
// incomplete when there are any, and the lines are nil when the file
// could not be parsed at all.
func Decode(file string, data []byte, v any, opts Options) (Lines, Problems) {
	var ps Problems
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		ps.Add(file, 0, "", "cannot be decoded into %T, not a non-nil pointer (a bug)", v)
		return nil, ps
	}
	switch {
	case bytes.HasPrefix(data, []byte(utf8BOM)):
		ps.Add(file, 1, "", "starts with a byte-order mark (U+FEFF); save the file as UTF-8 without one")
		return nil, ps
	case bytes.HasPrefix(data, []byte("\xff\xfe")), bytes.HasPrefix(data, []byte("\xfe\xff")):
		ps.Add(file, 1, "", "is UTF-16; save the file as UTF-8")
		return nil, ps
	case !utf8.Valid(data):
		ps.Add(file, invalidUTF8Line(data), "", "is not valid UTF-8")
		return nil, ps
	}
	if deepest, line := nesting(data); deepest > MaxDepth {
		ps.Add(file, line, "", "nests arrays and inline tables more than %d deep", MaxDepth)
		return nil, ps
	}
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		return nil, Problems{syntaxProblem(file, err)}
	}
	d := &decoder{file: file, lines: scanLines(string(data)), opts: opts, root: rv.Elem().Type()}
	d.unify("", m, rv.Elem())
	return d.lines, d.ps
}

// syntaxProblem turns a TOML syntax error into a Problem with the line and
// key the TOML library reports.
func syntaxProblem(file string, err error) Problem {
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

type decoder struct {
	file  string
	lines Lines
	opts  Options
	root  reflect.Type // the model, whose tables unknown keys are matched against
	ps    Problems
}

func (d *decoder) problem(field, format string, args ...any) {
	d.lines.Add(&d.ps, d.file, field, format, args...)
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	unmarshalerType = reflect.TypeFor[toml.Unmarshaler]()
	defaulterType   = reflect.TypeFor[Defaulter]()
)

// unify stores the decoded TOML value v, at path, into rv.
func (d *decoder) unify(path string, v any, rv reflect.Value) {
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
			setDefaults(rv.Elem())
		}
		d.unify(path, v, rv.Elem())
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			d.mismatch(path, v, "a table")
			return
		}
		fields := fieldIndexes(t)
		for _, k := range sortedKeys(m) {
			sub := join(path, k)
			if i, ok := fields[k]; ok {
				d.unify(sub, m[k], rv.Field(i))
				continue
			}
			if msg, ok := d.opts.Reserved[sub]; ok {
				d.problem(sub, "%s", msg)
				continue
			}
			msg := "unknown key " + Quote(k)
			if s := d.suggest(path, k, t); s != "" {
				msg += "; did you mean " + Quote(s) + "?"
			} else if d.opts.KeysDoc != "" {
				msg += " (check the spelling against " + d.opts.KeysDoc + ")"
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
			setDefaults(s.Index(i))
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
		for _, k := range sortedKeys(m) {
			e := reflect.New(t.Elem()).Elem()
			setDefaults(e)
			d.unify(join(path, k), m[k], e)
			out.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), e)
		}
		rv.Set(out)
	case reflect.Interface:
		if v == nil || !reflect.TypeOf(v).AssignableTo(t) {
			d.problem(path, "cannot be decoded into %s", t) // a bug in the model
			return
		}
		rv.Set(reflect.ValueOf(v))
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

// setDefaults readies a value Decode has just made.
func setDefaults(rv reflect.Value) {
	if rv.CanAddr() && reflect.PointerTo(rv.Type()).Implements(defaulterType) {
		rv.Addr().Interface().(Defaulter).SetDefaults()
	}
}

func (d *decoder) mismatch(path string, v any, want string) {
	d.problem(path, "is %s; want %s", typeName(v), want)
}

// typeName names a decoded TOML value's type for a message, with the
// value itself when it is short and printable.
func typeName(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) <= 40 && printable(x) {
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

// printable reports whether s is safe to echo: no control character, line
// break or bidirectional override that could make it look like another.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) < 0
}

// Quote quotes s for a message, cut short when it is long: a key (or any
// value from a file) can be as long as the file.
func Quote(s string) string {
	const max = 100
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
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

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// field is one TOML key of a struct.
type field struct {
	name  string
	index int
}

// fields lists a struct's TOML keys in the struct's order; fields tagged
// "-", untagged or unexported are not read from TOML.
func fields(t reflect.Type) []field {
	var fs []field
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		fs = append(fs, field{name, i})
	}
	return fs
}

func fieldIndexes(t reflect.Type) map[string]int {
	m := map[string]int{}
	for _, f := range fields(t) {
		m[f.name] = f.index
	}
	return m
}
