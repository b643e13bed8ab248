package site

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/featbench/featbench/templates"
)

// viewKey hashes what a page is rendered from: the program's key, the
// page's view (everything its template is given, walked value by value)
// and any extra texts. Two views hash alike only when every value in
// them is the same, so a page whose key is the last build's would render
// to the same bytes, and is not rendered again (output.reuseKeyed). A
// view holding what cannot be compared (a function, a channel) has no
// key: its page is always rendered.
func viewKey(prog string, view any, texts ...[]byte) (uint64, error) {
	h := hashers.Get().(*viewHasher)
	defer hashers.Put(h)
	h.d.Reset()
	h.b = h.buf[:0]
	h.str(prog)
	for _, t := range texts {
		h.bytes(t)
	}
	if err := h.value(reflect.ValueOf(view), 0); err != nil {
		return 0, err
	}
	h.flush()
	if k := h.d.Sum64(); k != 0 {
		return k, nil
	}
	return 1, nil // 0 means no key
}

// hashers are reused: a hasher's buffer is 16 KB, and thousands of pages
// are keyed in a build.
var hashers = sync.Pool{New: func() any { return &viewHasher{d: xxhash.New()} }}

// viewHasher gathers a view's values in b, which is hashed a buffer at a
// time: a view is thousands of small values, and a digest's Write costs
// more than the copy.
type viewHasher struct {
	d   *xxhash.Digest
	b   []byte
	buf [16 << 10]byte
}

func (h *viewHasher) flush() {
	_, _ = h.d.Write(h.b)
	h.b = h.buf[:0]
}

func (h *viewHasher) byte(c byte) {
	if len(h.b) == cap(h.b) {
		h.flush()
	}
	h.b = append(h.b, c)
}

func (h *viewHasher) int(n int64) {
	if cap(h.b)-len(h.b) < 8 {
		h.flush()
	}
	h.b = binary.LittleEndian.AppendUint64(h.b, uint64(n))
}

// str writes a string with its length first: no two sequences of
// strings hash alike by where one ends.
func (h *viewHasher) str(s string) {
	h.int(int64(len(s)))
	if len(s) > cap(h.b)-len(h.b) {
		h.flush()
		if len(s) > cap(h.b) {
			_, _ = h.d.WriteString(s)
			return
		}
	}
	h.b = append(h.b, s...)
}

// bytes writes bytes with their length first, as str.
func (h *viewHasher) bytes(p []byte) {
	h.int(int64(len(p)))
	if len(p) > cap(h.b)-len(h.b) {
		h.flush()
		if len(p) > cap(h.b) {
			_, _ = h.d.Write(p)
			return
		}
	}
	h.b = append(h.b, p...)
}

// maxViewDepth bounds the walk: a view is a tree a few levels deep, and
// one deeper than this (or a cycle) has no key.
const maxViewDepth = 64

func (h *viewHasher) value(v reflect.Value, depth int) error {
	if depth > maxViewDepth {
		return fmt.Errorf("a view deeper than %d levels has no key", maxViewDepth)
	}
	depth++
	// Each value is preceded by its kind: nil and empty differ, and so
	// do values of different kinds in an interface.
	h.byte(byte(v.Kind()))
	switch v.Kind() {
	case reflect.Invalid:
	case reflect.Bool:
		if v.Bool() {
			h.int(1)
		} else {
			h.int(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		h.int(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		h.int(int64(v.Uint()))
	case reflect.Float32, reflect.Float64:
		h.int(int64(math.Float64bits(v.Float())))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		h.int(int64(math.Float64bits(real(c))))
		h.int(int64(math.Float64bits(imag(c))))
	case reflect.String:
		h.str(v.String())
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			h.int(0)
			return nil
		}
		h.int(1)
		if v.Kind() == reflect.Interface {
			h.str(v.Elem().Type().String())
		}
		return h.value(v.Elem(), depth)
	case reflect.Struct:
		for i := range v.NumField() {
			if err := h.value(v.Field(i), depth); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			h.int(-1)
			return nil
		}
		if h.rows(v) {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 && v.Kind() == reflect.Slice {
			h.bytes(v.Bytes())
			return nil
		}
		h.int(int64(v.Len()))
		for i := range v.Len() {
			if err := h.value(v.Index(i), depth); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v.IsNil() {
			h.int(-1)
			return nil
		}
		// In the order of the keys as text, which is fixed.
		keys := v.MapKeys()
		text := make([]string, len(keys))
		for i, k := range keys {
			text[i] = fmt.Sprint(k)
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(text[a], text[b]) })
		h.int(int64(len(keys)))
		for _, i := range order {
			if err := h.value(keys[i], depth); err != nil {
				return err
			}
			if err := h.value(v.MapIndex(keys[i]), depth); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("a view holding a %s has no key", v.Type())
	}
	return nil
}

// Types of the rows pages hold by the hundred thousand, which rows hashes
// field by field instead of by reflection (a third of the keys' time).
var (
	instanceSystemsType = reflect.TypeFor[[]templates.InstanceSystem]()
	outcomesType        = reflect.TypeFor[[]templates.Outcome]()
)

// rows hashes a slice of instance pages' or system pages' rows, every
// field of each (TestViewKeyRowFields checks that each one counts), and
// reports whether v was one.
func (h *viewHasher) rows(v reflect.Value) bool {
	switch v.Type() {
	case instanceSystemsType:
		rows := v.Interface().([]templates.InstanceSystem)
		h.int(int64(len(rows)))
		for i := range rows {
			r := &rows[i]
			h.str(r.Name)
			h.str(string(r.Lead))
			h.str(r.Split)
			h.bools(r.Reference, r.NoPrediction, r.Resolved, r.Applied, r.Empty)
			h.int(int64(r.Passed))
			h.int(int64(r.Of))
			h.str(r.Failures)
			h.flags(r.Flags)
			h.int(int64(len(r.Trajectories)))
			for _, l := range r.Trajectories {
				h.str(l.Title)
				h.str(l.URL)
				h.bools(l.Current, l.Active)
			}
		}
	case outcomesType:
		rows := v.Interface().([]templates.Outcome)
		h.int(int64(len(rows)))
		for i := range rows {
			r := &rows[i]
			h.str(string(r.Lead))
			h.bools(r.NoPrediction, r.Resolved, r.Applied, r.Empty)
			h.int(int64(r.F2PPassed))
			h.int(int64(r.F2PTotal))
			h.int(int64(r.P2PPassed))
			h.int(int64(r.P2PTotal))
			h.str(r.Failures)
			h.flags(r.Flags)
		}
	default:
		return false
	}
	return true
}

// bools hashes up to eight flags as one byte.
func (h *viewHasher) bools(bs ...bool) {
	var c byte
	for i, b := range bs {
		if b {
			c |= 1 << i
		}
	}
	h.byte(c)
}

func (h *viewHasher) flags(fs []templates.Flag) {
	if fs == nil {
		h.int(-1)
		return
	}
	h.int(int64(len(fs)))
	for _, f := range fs {
		h.str(f.Name)
		h.str(f.Explanation)
	}
}
