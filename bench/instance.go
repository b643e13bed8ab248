package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Instance is one task: a problem statement and a repository with the
// feature removed, proven by FAIL_TO_PASS tests and guarded by PASS_TO_PASS
// tests. Field names follow SWE-bench and FeatureBench so their datasets
// load as they are.
type Instance struct {
	InstanceID       string `json:"instance_id"`
	Repo             string `json:"repo"`
	BaseCommit       string `json:"base_commit"`
	Level            int    `json:"level"`
	ProblemStatement string `json:"problem_statement"`
	Patch            string `json:"patch"`
	TestPatch        string `json:"test_patch"`
	// MaskPatch, at level 2 (agent_code), takes the repository as the
	// environment image holds it to the codebase without the feature:
	// grading applies it first, so the original package is there only in
	// its masked form and re-exporting it yields nothing of the feature.
	// Datasets collected before it existed leave it out (and their level 2
	// grades beside the complete package).
	MaskPatch    string          `json:"mask_patch,omitempty"`
	FailToPass   []string        `json:"FAIL_TO_PASS"`
	PassToPass   []string        `json:"PASS_TO_PASS"`
	ImageName    string          `json:"image_name"`
	RepoSettings json.RawMessage `json:"repo_settings,omitempty"`
	CreatedAt    string          `json:"created_at"`
	// The gold statistics are pointers: a dataset that does not publish
	// one leaves it out, and the site shows "—" rather than 0.
	Lines         *int     `json:"lines,omitempty"`
	Files         *int     `json:"files,omitempty"`
	Functions     *int     `json:"functions,omitempty"`
	F2PTestPoints *int     `json:"f2p_test_points,omitempty"`
	P2PTestPoints *int     `json:"p2p_test_points,omitempty"`
	TopObjects    []string `json:"top_objects"`

	// How the instance was collected (Method*): empty reads as
	// MethodTestDriven, the only method datasets knew before. History-based
	// methods name the pull request and release the task came from; the
	// new-components method lists the components the patch adds, which its
	// statement defines.
	Method     string      `json:"method,omitempty"`
	PullNumber int         `json:"pull_number,omitempty"`
	Release    string      `json:"release,omitempty"`
	Components []Component `json:"components,omitempty"`

	// Canaries are the places in the fail-to-pass tests where grading may
	// add a canary: a copy of the test expecting another value, which a
	// correct implementation fails (internal/canary). Collection keeps
	// only places where the gold patch failed every canary it was given.
	Canaries []Canary `json:"canaries,omitempty"`
	// GoldAudit are the kinds of audit records (internal/pytest's audit
	// hook) the gold patch's runs made: what a prediction does beyond them
	// is flagged.
	GoldAudit []string `json:"gold_audit,omitempty"`

	// Extra holds the fields this model does not know, so that rewriting a
	// dataset keeps them.
	Extra map[string]json.RawMessage `json:"-"`
	// Line is where the instance stands in its JSONL file.
	Line int `json:"-"`
	// testIndex maps a test id to its place: FAIL_TO_PASS first, then
	// PASS_TO_PASS. Loading builds it to check results quickly.
	testIndex map[string]int
	// plainTests says that every test id is plain (strPlain bytes only),
	// so that a results file spells each one as it is between quotes.
	plainTests bool
	// pos is the instance's place in its Dataset.Instances.
	pos int
	// raw is the instance's line in instances.jsonl, as published.
	raw []byte
}

// Collection methods (paper 000: test-driven; 003 FeatBench: release;
// 004 FEA-Bench: new-components).
const (
	MethodTestDriven    = "test-driven"
	MethodRelease       = "release"
	MethodNewComponents = "new-components"
)

// Methods lists the collection methods an instance may name.
var Methods = []string{MethodTestDriven, MethodRelease, MethodNewComponents}

// Component is one function, class or method a new-components patch adds:
// where it is, its qualified name, and its definition as the statement
// gives it (signature and docstring, never its body).
type Component struct {
	File      string `json:"file"`
	Name      string `json:"name"` // qualified: Class.method
	Kind      string `json:"kind"` // function, class or method
	Signature string `json:"signature"`
	Docstring string `json:"docstring,omitempty"`
}

// Canary is one place of a fail-to-pass test where a canary may change
// what the test expects: Test is the test function's id without
// parameters (path::func or path::Class::func), N the place's index among
// the function's mutable places in source order, Kind "eq" (an asserted
// literal), "match" (a pytest.raises match) or "raises" (the exception,
// replaced by one of Alts).
type Canary struct {
	Test string   `json:"test"`
	N    int      `json:"n"`
	Kind string   `json:"kind"`
	Alts []string `json:"alts,omitempty"`
}

// CanaryKinds are the kinds of Canary.
var CanaryKinds = []string{"eq", "match", "raises"}

// Component kinds.
var ComponentKinds = []string{"function", "class", "method"}

// MethodOrDefault is the instance's collection method, MethodTestDriven
// when the dataset does not say.
func (in *Instance) MethodOrDefault() string {
	if in.Method == "" {
		return MethodTestDriven
	}
	return in.Method
}

// knownInstanceFields are the JSON keys Instance decodes itself.
var knownInstanceFields = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{"instance_id", "repo", "base_commit", "level", "problem_statement",
		"patch", "test_patch", "mask_patch", "FAIL_TO_PASS", "PASS_TO_PASS", "image_name", "repo_settings",
		"created_at", "lines", "files", "functions", "f2p_test_points", "p2p_test_points", "top_objects",
		"method", "pull_number", "release", "components", "canaries", "gold_audit"} {
		m[k] = true
	}
	return m
}()

// instanceFields is Instance without its methods, so decoding does not recurse.
type instanceFields Instance

// decodeInstance decodes one line of instances.jsonl. The common case,
// known fields only and test lists as JSON lists, takes one pass of the
// encoding/json/v2 candidate; anything else (unknown fields to keep,
// SWE-bench's string-encoded lists, a mistake to report) goes through
// decodeStrict. Both are strict: exact keys, each once, valid UTF-8.
func decodeInstance(b []byte, in *Instance) error {
	line, raw := in.Line, in.raw
	defer func() { in.Line, in.raw = line, raw }()
	// Unmarshal takes null for an empty object: only an object may try.
	if len(b) > 0 && b[0] == '{' && jsonv2.Unmarshal(b, (*instanceFields)(in), jsonv2.RejectUnknownMembers(true)) == nil {
		return nil
	}
	*in = Instance{}
	return in.decodeStrict(b)
}

// UnmarshalJSON decodes the known fields and keeps the rest in Extra. Test
// lists may also be given as a JSON string holding a list, as in SWE-bench.
// It is as strict as loading: exact keys, each once, valid UTF-8.
func (in *Instance) UnmarshalJSON(data []byte) error {
	line := in.Line
	*in = Instance{}
	err := in.decodeStrict(data)
	in.Line = line
	return err
}

// decodeStrict decodes one JSON object into in, which must be zero.
func (in *Instance) decodeStrict(data []byte) error {
	v, err := readObjectLine(data)
	if err != nil {
		return err
	}
	var members map[string]jsontext.Value
	if err := jsonv2.Unmarshal(v, &members); err != nil {
		return err
	}
	names := make([]string, 0, len(members))
	for k := range members {
		names = append(names, k)
	}
	sort.Strings(names)
	known := make([]byte, 0, len(v))
	known = append(known, '{')
	var extra map[string]json.RawMessage
	for _, k := range names {
		val := members[k]
		if !knownInstanceFields[k] {
			for f := range knownInstanceFields {
				if strings.EqualFold(k, f) {
					// A reader that matches keys loosely, as encoding/json
					// does, would take this key for the known one.
					return &lineError{field: k, msg: fmt.Sprintf("differs from the field %q only in case; write it as %q", f, f)}
				}
			}
			if extra == nil {
				extra = map[string]json.RawMessage{}
			}
			extra[k] = json.RawMessage(bytes.Clone(val))
			continue
		}
		if (k == "FAIL_TO_PASS" || k == "PASS_TO_PASS") && val.Kind() == '"' {
			var s string
			if err := jsonv2.Unmarshal(val, &s); err != nil {
				return err
			}
			list := jsontext.Value(strings.TrimSpace(s))
			if !list.IsValid() || list.Kind() != '[' {
				return &lineError{field: k, msg: "is a string that is not a JSON list (SWE-bench writes a test list as a string holding a JSON list)"}
			}
			val = list
		}
		if len(known) > 1 {
			known = append(known, ',')
		}
		known, _ = jsontext.AppendQuote(known, k)
		known = append(known, ':')
		known = append(known, val...)
	}
	known = append(known, '}')
	var f instanceFields
	if err := jsonv2.Unmarshal(known, &f, jsonv2.RejectUnknownMembers(true)); err != nil {
		return err
	}
	f.Extra = extra
	*in = Instance(f)
	return nil
}

// MarshalJSON writes the known fields followed by the kept unknown ones,
// keys sorted so the output is stable.
func (in Instance) MarshalJSON() ([]byte, error) {
	base, err := json.Marshal(instanceFields(in))
	if err != nil {
		return nil, err
	}
	if len(in.Extra) == 0 {
		return base, nil
	}
	keys := make([]string, 0, len(in.Extra))
	for k := range in.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.Write(base[:len(base)-1])
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(kb)
		b.WriteByte(':')
		b.Write(in.Extra[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// JSON is the instance as one JSON object: its line in instances.jsonl as
// published when it was loaded from one, so a download gives the data
// exactly, else MarshalJSON's encoding.
func (in *Instance) JSON() ([]byte, error) {
	if in.raw != nil {
		return in.raw, nil
	}
	return json.Marshal(in)
}

// Created parses created_at; the zero time when it is absent.
func (in *Instance) Created() (time.Time, error) {
	if in.CreatedAt == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, in.CreatedAt); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date (want RFC 3339, e.g. 2025-06-01T12:00:00Z)", in.CreatedAt)
}

// testAt is in's i-th test, counting its fail-to-pass tests, then its
// pass-to-pass ones (the order of testIndex).
func (in *Instance) testAt(i int) string {
	if i < len(in.FailToPass) {
		return in.FailToPass[i]
	}
	return in.PassToPass[i-len(in.FailToPass)]
}
