// Package predictions reads agents' prediction files: what each agent
// produced (a unified diff) for each task instance, in the formats
// SWE-bench's and FeatureBench's harnesses read, so that their agents'
// output files can be graded as they are.
//
// Accepted, told apart by their content:
//   - JSONL, one prediction object a line (SWE-bench's predictions.jsonl,
//     FeatureBench's output.jsonl);
//   - a JSON list of prediction objects (SWE-bench's .json);
//   - a JSON object mapping instance ids to prediction objects (SWE-bench's
//     other .json form). A one-line file holding an object is a mapping
//     only when it has no "instance_id" member and its members are all
//     objects; a JSON object spanning several lines is a mapping unless it
//     has an "instance_id" member, when it is one prediction.
//
// Files are read strictly: keys match exactly and appear once per object,
// strings are valid UTF-8, and a known field of the wrong type is an
// error; unknown fields are ignored, since agents' files carry many. Every
// problem is reported with the file, the line and the field, all of them
// in one pass.
//
// Files written by eval infer carry, besides, turns, duration,
// failure_mode and measured (with trajectory naming the file of the
// exchanges the figures were counted from); measured figures come whole.
//
// FeatureBench's harness skips a line with "success": false unless told
// to include failed runs; here such a line is kept, as the prediction the
// run left: its patch when it has one, else an empty prediction, so that
// it counts as submitted (and empty), not as missing. Prediction.Failed
// and Error keep what the agent reported.
package predictions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/featbench/featbench/bench"
)

// Size limits. Trajectories make prediction files large; a patch is at
// most a few MiB (the harness refuses larger ones).
const (
	MaxFile = 1 << 30  // bytes in a file
	MaxLine = 64 << 20 // bytes in one prediction: a JSONL line, or an element of a JSON list or object
)

// Limits on fields, the same as results.jsonl's (CONTRIBUTING.md), so
// that what is read here can be published.
const (
	maxTokens   = 1e12
	maxCost     = 1e6
	maxAttempts = 100
	maxProblems = 1000 // problems listed; the rest are counted
	maxModel    = 200  // characters of a model's name
)

// Prediction is what an agent produced for one instance and attempt.
type Prediction struct {
	InstanceID string
	// Model is model_name_or_path, else FeatureBench's model, else its
	// agent; empty when the file names none.
	Model string
	// Patch is the unified diff exactly as the file holds it (no newline
	// added, nothing trimmed): model_patch, else OpenHands's
	// test_result.git_patch. Empty for an empty prediction.
	Patch     string
	TokensIn  *int64
	TokensOut *int64
	Cost      *float64 // US dollars
	// Attempt is 1-based: attempt, or FeatureBench's n_attempt; 1 when
	// the file gives neither.
	Attempt int
	// Trajectory is the trajectory field as the file holds it, any JSON;
	// nil when absent or null.
	Trajectory json.RawMessage
	// Line is where the prediction starts in its file, 1-based.
	Line int

	// What eval infer writes besides: the model requests the agent made
	// (turns), its wall time in seconds (duration), why it stopped when it
	// did not finish (failure_mode: a limit, a timeout, an error), and
	// measured: tokens, cost and turns were counted by the harness's
	// metering proxy, and trajectory names the file of the exchanges they
	// were counted from, relative to the predictions file's folder.
	Turns       *int64
	Duration    *float64
	FailureMode string
	Measured    bool

	// FeatureBench's output.jsonl: the agent's name, and whether the run
	// failed (success: false) with which error. A failed run's patch is
	// kept when it has one: the changes the agent left, which
	// FeatureBench's --include-failed grades too; without one it is an
	// empty prediction (submitted, not missing).
	Agent  string
	Failed bool
	Error  string
}

// Problem is one mistake in a predictions file: where (file, line, field)
// and what, as the data model reports its own.
type Problem = bench.Problem

// Problems is every mistake found in a file, in the order of the file.
type Problems []Problem

func (ps Problems) Error() string {
	if len(ps) == 1 {
		return ps[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems in the predictions:", len(ps))
	for _, p := range ps {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

// Read reads a predictions file; see Parse.
func Read(path string) ([]Prediction, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading predictions: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("reading predictions: %w", err)
	} else if !st.Mode().IsRegular() {
		return nil, Problems{{File: path, Msg: "is not a regular file"}}
	} else if st.Size() > MaxFile {
		return nil, Problems{{File: path, Msg: fmt.Sprintf("is %d bytes, over the limit of %d", st.Size(), MaxFile)}}
	}
	// Read with a cap: the file may grow between Stat and reading.
	raw, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading predictions %s: %w", path, err)
	}
	return Parse(path, raw)
}

// Parse reads the predictions in raw, named name in problems. It returns
// every prediction, in the order of the file, or, when the file has any
// problem, nil and Problems listing them all. A file without any
// prediction is a problem: an empty run is given as empty predictions.
func Parse(name string, raw []byte) ([]Prediction, error) {
	d := &decoder{file: name, raw: raw, seen: map[key]int{}}
	d.parse()
	if len(d.problems) > 0 {
		if d.more > 0 {
			d.problems = append(d.problems, Problem{File: name, Msg: fmt.Sprintf("and %d more problems", d.more)})
		}
		return nil, d.problems
	}
	return d.preds, nil
}

type key struct {
	id      string
	attempt int
}

type decoder struct {
	file     string
	raw      []byte
	preds    []Prediction
	problems Problems
	more     int         // problems beyond maxProblems
	seen     map[key]int // the line of each instance and attempt
	// The file's model, and the line that named it first.
	model     string
	modelLine int
	// lineAt's position, so that counting lines is linear in the file.
	lastOff, lastLine int
}

func (d *decoder) add(line int, field, format string, args ...any) {
	if len(d.problems) >= maxProblems {
		d.more++
		return
	}
	d.problems = append(d.problems, Problem{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// lineAt is the 1-based line of byte offset off; offsets must not
// decrease between calls.
func (d *decoder) lineAt(off int) int {
	if off < d.lastOff {
		d.lastOff, d.lastLine = 0, 0
	}
	d.lastLine += bytes.Count(d.raw[d.lastOff:off], []byte{'\n'})
	d.lastOff = off
	return d.lastLine + 1
}

func (d *decoder) parse() {
	raw := d.raw
	if len(raw) > MaxFile {
		d.add(0, "", "is %d bytes, over the limit of %d", len(raw), MaxFile)
		return
	}
	if bytes.HasPrefix(raw, []byte("\xef\xbb\xbf")) {
		d.add(1, "", "starts with a byte-order mark (U+FEFF); save the file as UTF-8 without one")
		return
	}
	start := bytes.IndexFunc(raw, func(r rune) bool { return !isJSONSpace(r) })
	switch {
	case start < 0:
		d.add(0, "", "holds no predictions")
		return
	case raw[start] == '[':
		d.document(start)
	case raw[start] == '{' && d.isDocument(start):
		d.document(start)
	default:
		d.jsonl()
	}
	if len(d.preds) == 0 && len(d.problems) == 0 {
		d.add(0, "", "holds no predictions")
	}
}

func isJSONSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// isDocument tells a JSON object spanning the whole file (a mapping, or
// one prediction written over several lines) from JSONL, whose first
// line is a whole object of its own.
func (d *decoder) isDocument(start int) bool {
	end := bytes.IndexByte(d.raw[start:], '\n')
	if end < 0 {
		end = len(d.raw)
	} else {
		end += start
	}
	first := jsontext.Value(bytes.TrimRight(d.raw[start:end], " \t\r"))
	if string(first) == "{" {
		return true // pretty-printed, even if broken further on
	}
	if !first.IsValid() {
		// Not an object on one line: a document over several lines, or a
		// mistake JSONL reading reports well.
		_, err := oneValue(d.raw[start:])
		return err == nil
	}
	if len(bytes.TrimFunc(d.raw[end:], isJSONSpace)) > 0 {
		return false // more lines follow: JSONL
	}
	var members map[string]jsontext.Value
	if jsonv2.Unmarshal(first, &members) != nil || len(members) == 0 {
		return false
	}
	if _, ok := members["instance_id"]; ok {
		return false
	}
	for _, v := range members {
		if v.Kind() != '{' {
			return false
		}
	}
	return true
}

// jsonl reads one prediction per non-blank line.
func (d *decoder) jsonl() {
	raw := d.raw
	for n, off := 1, 0; off < len(raw); n++ {
		end := bytes.IndexByte(raw[off:], '\n')
		if end < 0 {
			end = len(raw)
		} else {
			end += off
		}
		line := raw[off:end]
		off = end + 1
		if len(bytes.TrimFunc(line, isJSONSpace)) == 0 {
			continue
		}
		if len(line) > MaxLine {
			d.add(n, "", "is %d bytes, over the limit of %d for one prediction", len(line), MaxLine)
			continue
		}
		v, err := oneValue(line)
		if err != nil {
			d.jsonError(n, err)
			continue
		}
		d.object(v, n, "")
	}
}

// oneValue checks that b holds exactly one JSON value and returns it.
func oneValue(b []byte) (jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	v, err := dec.ReadValue()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	v = bytes.Clone(v)
	if _, err := dec.ReadToken(); err == nil {
		return nil, errors.New("more than one JSON value on the line: one prediction object per line")
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	return v, nil
}

// document reads a JSON list of predictions, or a JSON object mapping
// instance ids to predictions (or holding one prediction), starting at
// byte start.
func (d *decoder) document(start int) {
	dec := jsontext.NewDecoder(bytes.NewReader(d.raw))
	fail := func(err error) {
		line := 0
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			line = d.lineAt(int(se.ByteOffset))
		}
		d.jsonError(line, err)
	}
	tok, err := dec.ReadToken()
	if err != nil {
		fail(err)
		return
	}
	list := tok.Kind() == '['
	if !list {
		// One object over several lines: a mapping, or one prediction.
		v, err := oneValue(d.raw)
		if err != nil {
			fail(err)
			return
		}
		var members map[string]jsontext.Value
		if err := jsonv2.Unmarshal(v, &members); err != nil {
			fail(err)
			return
		}
		if _, ok := members["instance_id"]; ok {
			d.object(v, d.lineAt(start), "")
			return
		}
	}
	for dec.PeekKind() != ']' && dec.PeekKind() != '}' {
		var id string
		if !list {
			name, err := dec.ReadToken()
			if err != nil {
				fail(err)
				return
			}
			id = name.String()
		}
		v, err := dec.ReadValue()
		if err != nil {
			fail(err)
			return
		}
		off := int(dec.InputOffset()) - len(v)
		line := d.lineAt(off)
		if len(v) > MaxLine {
			d.add(line, "", "is %d bytes, over the limit of %d for one prediction", len(v), MaxLine)
			continue
		}
		if !list && v.Kind() != '{' {
			d.add(line, id, "is %s; want a prediction object", kindName(v.Kind()))
			continue
		}
		if !list && id == "" {
			d.add(line, "", "an empty key; the keys are instance ids")
			continue
		}
		d.object(bytes.Clone(v), line, id)
	}
	if _, err := dec.ReadToken(); err != nil { // ']' or '}'
		fail(err)
		return
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("more than one JSON value in the file")
		}
		fail(err)
	}
}

// The fields a prediction object may have. Any other is ignored.
var knownFields = []string{
	"instance_id", "model_name_or_path", "model_patch", "test_result",
	"agent", "model", "task_metadata", "success", "error",
	"tokens_in", "tokens_out", "cost", "attempt", "n_attempt", "trajectory",
	"turns", "duration", "failure_mode", "measured",
}

// object reads one prediction object v at line; mapKey is its key in a
// mapping, or "".
func (d *decoder) object(v jsontext.Value, line int, mapKey string) {
	if v.Kind() != '{' {
		d.add(line, "", "is %s; want a JSON object", kindName(v.Kind()))
		return
	}
	var m map[string]jsontext.Value
	if err := jsonv2.Unmarshal(v, &m); err != nil {
		d.jsonError(line, err)
		return
	}
	before := len(d.problems) + d.more
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, f := range knownFields {
			if k != f && strings.EqualFold(k, f) {
				d.add(line, k, "differs from the field %q only in case; write it as %q", f, f)
			}
		}
	}
	r := fieldReader{d: d, line: line, m: m}
	p := Prediction{Line: line}
	id, hasID := r.str("instance_id")
	if raw, present := m["instance_id"]; !present || raw.Kind() == 'n' {
		if mapKey == "" {
			d.add(line, "instance_id", "is missing")
		}
		id = mapKey
	} else if hasID && mapKey != "" && id != mapKey {
		d.add(line, "instance_id", "is %q but the prediction's key is %q", id, mapKey)
	}
	if hasID || mapKey != "" {
		if err := bench.CheckName(id); err != nil {
			d.add(line, "instance_id", "%v", err)
		}
	}
	p.InstanceID = id
	modelPath, _ := r.str("model_name_or_path")
	p.Agent, _ = r.str("agent")
	model, _ := r.str("model")
	p.Model = firstOf(modelPath, model, p.Agent)
	switch {
	case p.Model == "":
		d.add(line, "model_name_or_path", "is missing: name the system that made the prediction (model_name_or_path, or FeatureBench's model or agent)")
	case len([]rune(p.Model)) > maxModel || strings.ContainsAny(p.Model, "\n\r"):
		d.add(line, "model_name_or_path", "is %d characters long or spans lines: a model's name is one line of at most %d", len([]rune(p.Model)), maxModel)
	}
	modelPatch, _ := r.str("model_patch")
	var gitPatch string
	if tr, ok := m["test_result"]; ok && tr.Kind() != 'n' {
		if tr.Kind() != '{' {
			d.add(line, "test_result", "is %s, want an object (OpenHands's, with git_patch)", kindName(tr.Kind()))
		} else {
			var inner map[string]jsontext.Value
			if err := jsonv2.Unmarshal(tr, &inner); err != nil {
				d.jsonError(line, err)
			} else {
				gitPatch, _ = fieldReader{d: d, line: line, m: inner, prefix: "test_result."}.str("git_patch")
			}
		}
	}
	p.Patch = firstOf(modelPatch, gitPatch)
	if ok, given := r.boolean("success"); given && !ok {
		p.Failed = true
	}
	p.Error, _ = r.str("error")
	p.TokensIn = r.count("tokens_in")
	p.TokensOut = r.count("tokens_out")
	p.Cost = r.cost("cost")
	a, aOK := r.attempt("attempt")
	n, nOK := r.attempt("n_attempt")
	switch {
	case aOK && nOK && a != n:
		d.add(line, "attempt", "is %d but n_attempt is %d; give one of them", a, n)
	case aOK:
		p.Attempt = a
	case nOK:
		p.Attempt = n
	default:
		p.Attempt = 1
	}
	if t, ok := m["trajectory"]; ok && t.Kind() != 'n' {
		p.Trajectory = json.RawMessage(bytes.Clone(t))
	}
	p.Turns = r.count("turns")
	p.Duration = r.seconds("duration")
	p.FailureMode, _ = r.str("failure_mode")
	p.Measured, _ = r.boolean("measured")
	if p.Measured {
		if p.TokensIn == nil || p.TokensOut == nil || p.Turns == nil {
			d.add(line, "measured", "is true but tokens_in, tokens_out or turns is missing: measured figures come with all three")
		}
		if t := m["trajectory"]; t.Kind() != '"' {
			d.add(line, "measured", "is true but trajectory does not name the file the figures were measured from")
		}
	}
	if len(d.problems)+d.more > before {
		return
	}
	if d.model == "" {
		d.model, d.modelLine = p.Model, line
	} else if p.Model != d.model {
		d.add(line, "model_name_or_path", "is %q, but line %d's is %q: a predictions file is one system's", clip(p.Model), d.modelLine, clip(d.model))
		return
	}
	k := key{p.InstanceID, p.Attempt}
	if first, dup := d.seen[k]; dup {
		d.add(line, "instance_id", "a second prediction for %s, attempt %d (the first is on line %d); give one per instance and attempt",
			p.InstanceID, p.Attempt, first)
		return
	}
	d.seen[k] = line
	d.preds = append(d.preds, p)
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// fieldReader reads the known fields of one object, reporting each
// mistake.
type fieldReader struct {
	d      *decoder
	line   int
	m      map[string]jsontext.Value
	prefix string // of field names in problems, for nested objects
}

func (r fieldReader) wrongKind(name string, v jsontext.Value, want string) {
	r.d.add(r.line, r.prefix+name, "is %s, want %s", kindName(v.Kind()), want)
}

// str reads a string field; null is absent.
func (r fieldReader) str(name string) (string, bool) {
	v, ok := r.m[name]
	if !ok || v.Kind() == 'n' {
		return "", false
	}
	if v.Kind() != '"' {
		r.wrongKind(name, v, "a string")
		return "", false
	}
	var s string
	if err := jsonv2.Unmarshal(v, &s); err != nil {
		r.d.add(r.line, r.prefix+name, "%v", err)
		return "", false
	}
	return s, true
}

// boolean reads a true/false field; null is absent.
func (r fieldReader) boolean(name string) (value, given bool) {
	v, ok := r.m[name]
	if !ok || v.Kind() == 'n' {
		return false, false
	}
	if v.Kind() != 't' && v.Kind() != 'f' {
		r.wrongKind(name, v, "true or false")
		return false, false
	}
	return v.Kind() == 't', true
}

// integer reads a whole number (1234 or 1234.0); null is absent.
func (r fieldReader) integer(name string) (int64, bool) {
	v, ok := r.m[name]
	if !ok || v.Kind() == 'n' {
		return 0, false
	}
	if v.Kind() != '0' {
		r.wrongKind(name, v, "a whole number")
		return 0, false
	}
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		r.d.add(r.line, r.prefix+name, "is %s, not a whole number", clip(string(v)))
		return 0, false
	}
	return int64(f), true
}

// count reads a token count: a whole number from 0 to 10¹².
func (r fieldReader) count(name string) *int64 {
	n, ok := r.integer(name)
	switch {
	case !ok:
		return nil
	case n < 0:
		r.d.add(r.line, r.prefix+name, "is negative (%d)", n)
		return nil
	case n > maxTokens:
		r.d.add(r.line, r.prefix+name, "is %d, over the limit of 10^12", n)
		return nil
	}
	return &n
}

// cost reads a cost in dollars: a finite number from 0 to 10⁶.
func (r fieldReader) cost(name string) *float64 {
	v, ok := r.m[name]
	if !ok || v.Kind() == 'n' {
		return nil
	}
	if v.Kind() != '0' {
		r.wrongKind(name, v, "a number")
		return nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	switch {
	case err != nil || math.IsInf(f, 0) || math.IsNaN(f):
		r.d.add(r.line, r.prefix+name, "is %s, not a finite number", clip(string(v)))
		return nil
	case f < 0:
		r.d.add(r.line, r.prefix+name, "is negative (%v)", f)
		return nil
	case f > maxCost:
		r.d.add(r.line, r.prefix+name, "is %v, over the limit of 1000000 dollars", f)
		return nil
	}
	return &f
}

// seconds reads a duration in seconds: a finite number from 0 to a year.
func (r fieldReader) seconds(name string) *float64 {
	v, ok := r.m[name]
	if !ok || v.Kind() == 'n' {
		return nil
	}
	if v.Kind() != '0' {
		r.wrongKind(name, v, "a number of seconds")
		return nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f < 0 || f > 366*24*3600 {
		r.d.add(r.line, r.prefix+name, "is %s; want 0 to 31622400 seconds", clip(string(v)))
		return nil
	}
	return &f
}

// attempt reads an attempt number, 1 to 100.
func (r fieldReader) attempt(name string) (int, bool) {
	n, ok := r.integer(name)
	if !ok {
		return 0, false
	}
	if n < 1 || n > maxAttempts {
		r.d.add(r.line, r.prefix+name, "is %d; attempts count from 1 to %d", n, maxAttempts)
		return 0, false
	}
	return int(n), true
}

// jsonError reports a JSON decoding error at line, naming the field it is
// in.
func (d *decoder) jsonError(line int, err error) {
	var se *jsontext.SyntacticError
	var me *jsonv2.SemanticError
	switch {
	case errors.As(err, &se):
		field := pointerField(se.JSONPointer)
		switch {
		case errors.Is(se.Err, jsontext.ErrDuplicateName):
			d.add(line, field, "is given twice in one object; give each key once")
		case errors.Is(se.Err, io.ErrUnexpectedEOF):
			d.add(line, field, "malformed JSON: the input ends inside a value")
		case se.Err != nil && strings.Contains(se.Err.Error(), "invalid UTF-8"):
			d.add(line, field, "holds invalid UTF-8; save the file as UTF-8")
		default:
			d.add(line, field, "malformed JSON: %s", strings.TrimPrefix(fmt.Sprint(se.Err), "jsontext: "))
		}
	case errors.As(err, &me):
		d.add(line, pointerField(me.JSONPointer), "is %s, want %s", kindName(me.JSONKind), goTypeName(me.GoType))
	case errors.Is(err, io.ErrUnexpectedEOF):
		d.add(line, "", "malformed JSON: the input ends inside a value")
	default:
		d.add(line, "", "malformed JSON: %v", err)
	}
}

// pointerField turns a JSON pointer into a field name: "/test_result/git_patch"
// is "test_result.git_patch".
func pointerField(ptr jsontext.Pointer) string {
	var parts []string
	for tok := range ptr.Tokens() {
		parts = append(parts, tok)
	}
	return strings.Join(parts, ".")
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
		return "a JSON list"
	case '{':
		return "a JSON object"
	}
	return "not JSON"
}

func goTypeName(t reflect.Type) string {
	if t != nil && t.Kind() == reflect.Map {
		return "an object"
	}
	return "another type"
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
