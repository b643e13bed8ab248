package bench

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Results files are most of the bytes under data/, so valid ones take a
// fast path: one jsontext (encoding/json/v2 candidate) token stream per
// file, decoded into Result field by field without reflection, with test
// ids taken from the dataset's own strings instead of allocated per
// result. Anything unusual (an unknown or differently cased field, a key
// given twice, a null where a value belongs, invalid UTF-8, two values on
// a line, a value across lines) makes decodeResults decline, and the
// caller decodes the file line by line with the same package's strict
// Unmarshal, which names the problem and its line: a file means the same
// either way.

// errDecline makes the fast path give the file to the line decoder.
var errDecline = errors.New("not on the fast path")

// interner returns the dataset's own copy of a string, or "" when it has
// none: a result then shares its instance and test ids with the dataset
// instead of allocating them.
type interner struct {
	instance, test, dataset func([]byte) string
	// found is the instance whose id the last call of instance
	// returned, nil when it returned "" (or for no dataset).
	found func() *Instance
	// nextTest is the test the next call of test would compare first,
	// when the instance's tests are plain; "" for none.
	nextTest func() string
}

// decodeResults decodes a whole results file; false when it declines. raw
// may be reused once it returns: nothing decoded refers to it.
func decodeResults(raw []byte, in interner) ([]Result, bool) {
	out := make([]Result, 0, bytes.Count(raw, []byte{'\n'})+1)
	// A key given twice could make a line say two things: decodeResult
	// declines it, tracking the known names it has seen in a bit set,
	// which costs less than the decoder's own tracking of every name
	// (any other name declines anyway). Invalid UTF-8 is an error.
	// A bytes.Buffer is parsed in place, without the decoder's own copy.
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), jsontext.AllowDuplicateNames(true))
	line, pos := 1, 0
	var sl slabs
	for dec.PeekKind() != 0 { // 0: the end, or a syntax error
		var res Result
		if err := decodeResult(dec, in, &sl, &res); err != nil {
			return nil, false
		}
		end := int(dec.InputOffset())
		seg := raw[pos:end]
		value := bytes.TrimLeft(seg, " \t\r\n")
		breaks := bytes.Count(seg[:len(seg)-len(value)], []byte{'\n'})
		if (len(out) > 0 && breaks == 0) || bytes.IndexByte(value, '\n') >= 0 {
			return nil, false
		}
		line += breaks
		res.Line = line
		out = append(out, res)
		pos = end
	}
	// Only the end of the input makes a valid file.
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return out, true
}

// slabs hands out a file's test-id lists and optional numbers from shared
// arrays: a file has hundreds of thousands of them, and allocating each on
// its own made most of the loader's allocations and garbage collection.
type slabs struct {
	strs    []string
	scratch []string
	ints    []int64
	floats  []float64
}

const slabSize = 4096

// strings returns a copy of list from the slab, capped so that appending
// to it cannot reach a neighbour's elements.
func (s *slabs) strings(list []string) []string {
	if len(list) == 0 {
		return []string{} // as encoding/json decodes [], not nil
	}
	if cap(s.strs)-len(s.strs) < len(list) {
		s.strs = make([]string, 0, max(slabSize, len(list)))
	}
	n := len(s.strs)
	s.strs = append(s.strs, list...)
	return s.strs[n : n+len(list) : n+len(list)]
}

func (s *slabs) int(v int64) *int64       { return slabPtr(&s.ints, v) }
func (s *slabs) float(v float64) *float64 { return slabPtr(&s.floats, v) }

// slabPtr stores v in *slab, starting a new one when it is full, and
// returns where it is.
func slabPtr[T any](slab *[]T, v T) *T {
	if len(*slab) == cap(*slab) {
		*slab = make([]T, 0, slabSize)
	}
	*slab = append(*slab, v)
	return &(*slab)[len(*slab)-1]
}

// decodeResult reads one JSON object into res. It declines a name it does
// not know, or knows but has seen in this object: a name is compared as
// written, so one with escapes declines too, and the line decoder, which
// unquotes names, judges it.
func decodeResult(dec *jsontext.Decoder, in interner, sl *slabs, res *Result) error {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return errDecline
	}
	var seen uint32 // one bit per known name
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return err
		}
		var bit uint32
		switch string(name) { // quoted, as in the file; no allocation
		case `"instance_id"`:
			bit = 1 << 0
			res.InstanceID, err = readString(dec, in.instance)
		case `"dataset"`:
			bit = 1 << 1
			res.Dataset, err = readString(dec, in.dataset)
		case `"resolved"`:
			bit = 1 << 2
			res.Resolved, err = readBool(dec)
		case `"patch_applied"`:
			bit = 1 << 3
			res.PatchApplied, err = readBool(dec)
		case `"f2p_passed"`:
			bit = 1 << 4
			res.F2PPassed, err = readStrings(dec, sl, in.test)
		case `"f2p_failed"`:
			bit = 1 << 5
			res.F2PFailed, err = readStrings(dec, sl, in.test)
		case `"p2p_passed"`:
			bit = 1 << 6
			res.P2PPassed, err = readStrings(dec, sl, in.test)
		case `"p2p_failed"`:
			bit = 1 << 7
			res.P2PFailed, err = readStrings(dec, sl, in.test)
		case `"failure_modes"`:
			bit = 1 << 8
			res.FailureModes, err = readStrings(dec, sl, nil)
		case `"files_changed"`:
			bit = 1 << 9
			var n int64
			n, err = readInt(dec, strconv.IntSize)
			res.FilesChanged = int(n)
		case `"tokens_in"`:
			bit = 1 << 10
			res.TokensIn, err = readOptInt(dec, sl)
		case `"tokens_out"`:
			bit = 1 << 11
			res.TokensOut, err = readOptInt(dec, sl)
		case `"cost"`:
			bit = 1 << 12
			res.Cost, err = readOptFloat(dec, sl)
		case `"apply_method"`:
			bit = 1 << 13
			res.ApplyMethod, err = readString(dec, internMethod)
		case `"file_recall"`:
			bit = 1 << 14
			res.FileRecall, err = readOptFloat(dec, sl)
		case `"duration"`:
			bit = 1 << 15
			res.Duration, err = readOptFloat(dec, sl)
		case `"attempts"`:
			bit = 1 << 16
			var n int64
			n, err = readInt(dec, strconv.IntSize)
			res.Attempts = int(n)
		case `"attempts_resolved"`:
			bit = 1 << 17
			var n int64
			n, err = readInt(dec, strconv.IntSize)
			res.AttemptsResolved = int(n)
		case `"flags"`:
			bit = 1 << 18
			res.Flags, err = readStrings(dec, sl, internFlag)
		case `"measured"`:
			bit = 1 << 19
			res.Measured, err = readBool(dec)
		case `"audit"`:
			bit = 1 << 20
			res.Audit, err = readStrings(dec, sl, internAudit)
		case `"attempts_passed"`:
			bit = 1 << 21
			res.AttemptsPassed, err = readInts(dec)
		case `"turns"`:
			bit = 1 << 22
			res.Turns, err = readOptInt(dec, sl)
		default:
			return errDecline
		}
		if err != nil {
			return err
		}
		if seen&bit != 0 {
			return errDecline
		}
		seen |= bit
	}
	_, err := dec.ReadToken() // '}'
	return err
}

// internMethod shares the few apply methods' strings between results.
func internMethod(b []byte) string {
	for _, m := range ApplyMethods {
		if string(b) == m {
			return m
		}
	}
	return ""
}

func readValue(dec *jsontext.Decoder, kind jsontext.Kind) (jsontext.Value, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if v.Kind() != kind {
		return nil, errDecline
	}
	return v, nil
}

// readString reads a string; intern, when given, supplies a shared copy.
func readString(dec *jsontext.Decoder, intern func([]byte) string) (string, error) {
	v, err := readValue(dec, '"')
	if err != nil {
		return "", err
	}
	b := v[1 : len(v)-1]
	if bytes.IndexByte(b, '\\') >= 0 {
		if b, err = jsontext.AppendUnquote(nil, v); err != nil {
			return "", err
		}
	}
	if intern != nil {
		if s := intern(b); s != "" {
			return s, nil
		}
	}
	return string(b), nil
}

func readBool(dec *jsontext.Decoder) (bool, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return false, err
	}
	switch v.Kind() {
	case 't':
		return true, nil
	case 'f':
		return false, nil
	}
	return false, errDecline
}

// readStrings reads a list of strings; null gives nil, as encoding/json.
func readStrings(dec *jsontext.Decoder, sl *slabs, intern func([]byte) string) ([]string, error) {
	switch dec.PeekKind() {
	case 'n':
		_, err := dec.ReadValue()
		return nil, err
	case '[':
	default:
		return nil, errDecline
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	list := sl.scratch[:0]
	for dec.PeekKind() != ']' {
		s, err := readString(dec, intern)
		if err != nil {
			return nil, err
		}
		list = append(list, s)
	}
	sl.scratch = list
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	return sl.strings(list), nil
}

// readInt reads an integer as encoding/json does for an int field: no
// fraction, no exponent.
func readInt(dec *jsontext.Decoder, bits int) (int64, error) {
	v, err := readValue(dec, '0')
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(v), 10, bits)
	if err != nil {
		return 0, errDecline
	}
	return n, nil
}

// readInts reads a list of integers; [] decodes to an empty list, as
// encoding/json decodes it.
func readInts(dec *jsontext.Decoder) ([]int, error) {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, errDecline
	}
	out := []int{}
	for dec.PeekKind() != ']' {
		n, err := readInt(dec, strconv.IntSize)
		if err != nil {
			return nil, err
		}
		out = append(out, int(n))
	}
	_, err := dec.ReadToken() // ']'
	return out, err
}

func readOptInt(dec *jsontext.Decoder, sl *slabs) (*int64, error) {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadValue()
		return nil, err
	}
	n, err := readInt(dec, 64)
	if err != nil {
		return nil, err
	}
	return sl.int(n), nil
}

func readOptFloat(dec *jsontext.Decoder, sl *slabs) (*float64, error) {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadValue()
		return nil, err
	}
	v, err := readValue(dec, '0')
	if err != nil {
		return nil, err
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return nil, errDecline
	}
	return sl.float(f), nil
}
