package bench

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// scanResults decodes a results file whose lines are all of the plain
// shape cmd/eval and most tools write: one object a line, its keys and
// strings printable ASCII without escapes, spaces or tabs between tokens.
// It reads the bytes itself, a line at a time, where decodeResults reads
// a jsontext token stream: a small build's 85 MB of results took a sixth
// of its CPU that way. Anything else (an escape, a byte outside printable
// ASCII, a key it does not know or has seen on the line, a value of
// another type, a number out of range, a carriage return inside a line)
// declines the whole file, which decodeResults then reads: a file means
// the same on every path (TestDecodeResultsAgreesWithLines,
// FuzzScanResults).
func scanResults(raw []byte, in interner) ([]Result, bool) {
	out := make([]Result, 0, bytes.Count(raw, []byte{'\n'})+1)
	var sl slabs
	for line := 1; len(raw) > 0; line++ {
		var l []byte
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			l, raw = raw[:i], raw[i+1:]
		} else {
			l, raw = raw, nil
		}
		l = bytes.TrimSuffix(l, []byte{'\r'})
		l = bytes.Trim(l, " \t")
		if len(l) == 0 {
			continue
		}
		s := lineScan{b: l}
		var res Result
		if !s.result(in, &sl, &res) {
			return nil, false
		}
		res.Line = line
		out = append(out, res)
	}
	return out, true
}

// lineScan reads one line; every method reports false to decline.
type lineScan struct {
	b []byte
	i int
}

func (s *lineScan) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t') {
		s.i++
	}
}

// next skips spaces and reports whether the next byte is c, taking it.
func (s *lineScan) next(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *lineScan) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// literal takes the word w (true, false, null).
func (s *lineScan) literal(w string) bool {
	s.space()
	if bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		s.i += len(w)
		return true
	}
	return false
}

// str takes a string of printable ASCII without escapes and returns its
// bytes between the quotes.
func (s *lineScan) str() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	start := s.i
	b := s.b
	i := s.i
	// Eight bytes at a time while none of them ends the string or is
	// refused, then byte by byte: test ids are most of a results file.
	for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && strPlain[b[i]] {
		i++
	}
	if i < len(b) && b[i] == '"' {
		s.i = i + 1
		return b[start:i], true
	}
	return nil, false // an escape, a byte outside printable ASCII, or the end
}

// plain8 reports whether all eight bytes of x are strPlain's: printable
// ASCII (0x20 to 0x7e) but the quote and the backslash. Each term sets
// the high bit of a byte that is not (x-1 borrows into the high bit of a
// zero byte only, and x-0x20 of a byte below 0x20).
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs, del := x^'"'*ones, x^'\\'*ones, x^0x7f*ones
	return (x|(x-0x20*ones)&^x|(q-ones)&^q|(bs-ones)&^bs|(del-ones)&^del)&highs == 0
}

// strPlain holds the bytes a plain string may hold: printable ASCII but
// the quote and the backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// number takes a number as JSON writes one and returns its text; integer
// says whether it has neither fraction nor exponent.
func (s *lineScan) number() (text []byte, integer, ok bool) {
	s.space()
	start := s.i
	b := s.b
	if s.i < len(b) && b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(b) && b[s.i] >= '0' && b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	switch {
	case s.i < len(b) && b[s.i] == '0':
		s.i++
	case digits() == 0:
		return nil, false, false
	}
	integer = true
	if s.i < len(b) && b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, false, false
		}
		integer = false
	}
	if s.i < len(b) && (b[s.i] == 'e' || b[s.i] == 'E') {
		s.i++
		if s.i < len(b) && (b[s.i] == '+' || b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, false, false
		}
		integer = false
	}
	return b[start:s.i], integer, true
}

// int takes an integer that fits in bits, as readInt reads one.
func (s *lineScan) int(bits int) (int64, bool) {
	t, integer, ok := s.number()
	if !ok || !integer {
		return 0, false
	}
	n, err := strconv.ParseInt(string(t), 10, bits)
	return n, err == nil
}

func (s *lineScan) bool() (v, ok bool) {
	switch s.peek() {
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	}
	return false, false
}

func (s *lineScan) string(intern func([]byte) string) (string, bool) {
	b, ok := s.str()
	if !ok {
		return "", false
	}
	if intern != nil {
		if v := intern(b); v != "" {
			return v, true
		}
	}
	return string(b), true
}

// strings takes a list of strings or null, as readStrings reads them.
func (s *lineScan) strings(sl *slabs, intern func([]byte) string) ([]string, bool) {
	return s.stringList(sl, intern, nil)
}

// tests takes a list of test ids, as strings does. Results list their
// instance's tests in its order: the one the interner expects next is
// compared with the line's bytes before they are scanned, and taken when
// it is there between quotes. It is plain (no escape, printable ASCII),
// so those bytes are all the JSON string holds: what scanning would
// have read.
func (s *lineScan) tests(sl *slabs, in interner) ([]string, bool) {
	return s.stringList(sl, in.test, in.nextTest)
}

// expected takes the string t when the line holds it next, quoted.
func (s *lineScan) expected(t string) ([]byte, bool) {
	s.space()
	end := s.i + 1 + len(t)
	if t == "" || end >= len(s.b) || s.b[s.i] != '"' || s.b[end] != '"' || string(s.b[s.i+1:end]) != t {
		return nil, false
	}
	b := s.b[s.i+1 : end]
	s.i = end + 1
	return b, true
}

// stringList is strings, trying expect's string first for each element
// when expect is given.
func (s *lineScan) stringList(sl *slabs, intern func([]byte) string, expect func() string) ([]string, bool) {
	if s.peek() == 'n' {
		return nil, s.literal("null")
	}
	if !s.next('[') {
		return nil, false
	}
	list := sl.scratch[:0]
	if !s.next(']') {
		for {
			var v string
			ok := false
			if expect != nil {
				if b, found := s.expected(expect()); found {
					v, ok = intern(b), true // the dataset's copy, found first
				}
			}
			if !ok {
				v, ok = s.string(intern)
			}
			if !ok {
				return nil, false
			}
			list = append(list, v)
			if s.next(']') {
				break
			}
			if !s.next(',') {
				return nil, false
			}
		}
	}
	sl.scratch = list
	return sl.strings(list), true
}

// ints takes a list of integers, as readInts reads them (null declines).
func (s *lineScan) ints() ([]int, bool) {
	if !s.next('[') {
		return nil, false
	}
	out := []int{}
	if s.next(']') {
		return out, true
	}
	for {
		n, ok := s.int(strconv.IntSize)
		if !ok {
			return nil, false
		}
		out = append(out, int(n))
		if s.next(']') {
			return out, true
		}
		if !s.next(',') {
			return nil, false
		}
	}
}

func (s *lineScan) optInt(sl *slabs) (*int64, bool) {
	if s.peek() == 'n' {
		return nil, s.literal("null")
	}
	n, ok := s.int(64)
	if !ok {
		return nil, false
	}
	return sl.int(n), true
}

func (s *lineScan) optFloat(sl *slabs) (*float64, bool) {
	if s.peek() == 'n' {
		return nil, s.literal("null")
	}
	t, _, ok := s.number()
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(string(t), 64)
	if err != nil {
		return nil, false
	}
	return sl.float(f), true
}

// result reads the line's object into res, the fields as decodeResult
// reads them; nothing may follow it.
func (s *lineScan) result(in interner, sl *slabs, res *Result) bool {
	if !s.next('{') {
		return false
	}
	var seen uint32
	if !s.next('}') {
		for {
			name, ok := s.str()
			if !ok || !s.next(':') {
				return false
			}
			var bit uint32
			switch string(name) {
			case "instance_id":
				bit = 1 << 0
				res.InstanceID, ok = s.string(in.instance)
				if in.found != nil {
					res.inst = in.found()
				}
			case "dataset":
				bit = 1 << 1
				res.Dataset, ok = s.string(in.dataset)
			case "resolved":
				bit = 1 << 2
				res.Resolved, ok = s.bool()
			case "patch_applied":
				bit = 1 << 3
				res.PatchApplied, ok = s.bool()
			case "f2p_passed":
				bit = 1 << 4
				res.F2PPassed, ok = s.tests(sl, in)
			case "f2p_failed":
				bit = 1 << 5
				res.F2PFailed, ok = s.tests(sl, in)
			case "p2p_passed":
				bit = 1 << 6
				res.P2PPassed, ok = s.tests(sl, in)
			case "p2p_failed":
				bit = 1 << 7
				res.P2PFailed, ok = s.tests(sl, in)
			case "failure_modes":
				bit = 1 << 8
				res.FailureModes, ok = s.strings(sl, nil)
			case "files_changed":
				bit = 1 << 9
				var n int64
				n, ok = s.int(strconv.IntSize)
				res.FilesChanged = int(n)
			case "tokens_in":
				bit = 1 << 10
				res.TokensIn, ok = s.optInt(sl)
			case "tokens_out":
				bit = 1 << 11
				res.TokensOut, ok = s.optInt(sl)
			case "cost":
				bit = 1 << 12
				res.Cost, ok = s.optFloat(sl)
			case "apply_method":
				bit = 1 << 13
				res.ApplyMethod, ok = s.string(internMethod)
			case "file_recall":
				bit = 1 << 14
				res.FileRecall, ok = s.optFloat(sl)
			case "duration":
				bit = 1 << 15
				res.Duration, ok = s.optFloat(sl)
			case "attempts":
				bit = 1 << 16
				var n int64
				n, ok = s.int(strconv.IntSize)
				res.Attempts = int(n)
			case "attempts_resolved":
				bit = 1 << 17
				var n int64
				n, ok = s.int(strconv.IntSize)
				res.AttemptsResolved = int(n)
			case "flags":
				bit = 1 << 18
				res.Flags, ok = s.strings(sl, internFlag)
			case "measured":
				bit = 1 << 19
				res.Measured, ok = s.bool()
			case "audit":
				bit = 1 << 20
				res.Audit, ok = s.strings(sl, internAudit)
			case "attempts_passed":
				bit = 1 << 21
				res.AttemptsPassed, ok = s.ints()
			case "turns":
				bit = 1 << 22
				res.Turns, ok = s.optInt(sl)
			default:
				return false
			}
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
			if s.next('}') {
				break
			}
			if !s.next(',') {
				return false
			}
		}
	}
	s.space()
	return s.i == len(s.b)
}

// plainStrings reports whether every string holds strPlain bytes only.
func plainStrings(list []string) bool {
	for _, s := range list {
		for i := 0; i < len(s); i++ {
			if !strPlain[s[i]] {
				return false
			}
		}
	}
	return true
}
