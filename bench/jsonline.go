package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// JSONL files are read strictly, with the encoding/json/v2 candidate's
// defaults: object keys match exactly (encoding/json would let
// "RESOLVED" stand for "resolved"), a key may appear once per object
// (encoding/json lets the last one win, so a line could say two things),
// and strings must be valid UTF-8.

// lineError is a problem with a JSONL line that the JSON decoder does
// not describe itself.
type lineError struct{ field, msg string }

func (e *lineError) Error() string {
	if e.field != "" {
		return fmt.Sprintf("field %q: %s", e.field, e.msg)
	}
	return e.msg
}

// readObjectLine checks that a line holds exactly one JSON object and
// returns it.
func readObjectLine(b []byte) (jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	if _, err := dec.ReadValue(); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	// What ReadValue returns lasts only until the next read: take the
	// value from the line itself.
	v := jsontext.Value(trimJSONSpace(b[:dec.InputOffset()]))
	if _, err := dec.ReadToken(); err == nil {
		return nil, &lineError{msg: "more than one JSON value on the line: one object per line"}
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	if v.Kind() != '{' {
		return nil, &lineError{msg: fmt.Sprintf("is %s; want a JSON object", kindName(v.Kind()))}
	}
	return v, nil
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "a JSON boolean"
	case '"':
		return "a JSON string"
	case '0':
		return "a JSON number"
	case '[':
		return "a JSON array"
	case '{':
		return "a JSON object"
	}
	return "not JSON"
}

// utf8BOM starts a file saved as "UTF-8 with BOM".
const utf8BOM = "\xef\xbb\xbf"

// bomProblem is the problem for a byte-order mark at the start of a file.
func bomProblem(path string) Problem {
	return Problem{File: path, Line: 1, Msg: "starts with a byte-order mark (U+FEFF); save the file as UTF-8 without one"}
}

// jsonProblem names the line and field of a JSON decoding error.
func jsonProblem(path string, line int, err error) Problem {
	p := Problem{File: path, Line: line}
	var le *lineError
	var se *jsontext.SyntacticError
	var me *jsonv2.SemanticError
	switch {
	case errors.As(err, &le):
		p.Field, p.Msg = le.field, le.msg
	case errors.As(err, &se):
		p.Field = pointerField(se.JSONPointer)
		switch {
		case se.Err == jsontext.ErrDuplicateName:
			p.Msg = "is given twice in one object; give each key once"
		case errors.Is(se.Err, io.ErrUnexpectedEOF):
			p.Msg = "malformed JSON: the line ends inside a value"
		case se.Err != nil && strings.Contains(se.Err.Error(), "invalid UTF-8"):
			p.Msg = fmt.Sprintf("holds invalid UTF-8 at column %d; save the file as UTF-8", se.ByteOffset+1)
		default:
			p.Msg = fmt.Sprintf("malformed JSON at column %d: %v", se.ByteOffset+1, strings.TrimPrefix(fmt.Sprint(se.Err), "jsontext: "))
		}
	case errors.As(err, &me):
		p.Field = pointerField(me.JSONPointer)
		switch {
		case me.Err == jsonv2.ErrUnknownName:
			p.Msg = "unknown field (check the spelling against CONTRIBUTING.md)"
		case me.JSONKind == '0' && me.Err != nil:
			p.Msg = fmt.Sprintf("is a number out of range for %s", goTypeName(me.GoType))
		default:
			p.Msg = fmt.Sprintf("is %s, want %s", kindName(me.JSONKind), goTypeName(me.GoType))
		}
	case errors.Is(err, io.ErrUnexpectedEOF):
		p.Msg = "malformed JSON: the line ends inside a value"
	default:
		p.Msg = err.Error()
	}
	return p
}

// pointerField turns a JSON pointer into a field name as problems give
// it: "/f2p_passed/3" is "f2p_passed[3]".
func pointerField(ptr jsontext.Pointer) string {
	var b strings.Builder
	for tok := range ptr.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func goTypeName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "a list of strings"
		}
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}
