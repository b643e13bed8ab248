package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// Instance is one task: a problem statement and a repository with the
// feature removed, proven by FAIL_TO_PASS tests and guarded by PASS_TO_PASS
// tests. Field names follow SWE-bench and FeatureBench so their datasets
// load as they are.
type Instance struct {
	InstanceID       string          `json:"instance_id"`
	Repo             string          `json:"repo"`
	BaseCommit       string          `json:"base_commit"`
	Level            int             `json:"level"`
	ProblemStatement string          `json:"problem_statement"`
	Patch            string          `json:"patch"`
	TestPatch        string          `json:"test_patch"`
	FailToPass       []string        `json:"FAIL_TO_PASS"`
	PassToPass       []string        `json:"PASS_TO_PASS"`
	ImageName        string          `json:"image_name"`
	RepoSettings     json.RawMessage `json:"repo_settings,omitempty"`
	CreatedAt        string          `json:"created_at"`
	// The gold statistics are pointers: a dataset that does not publish
	// one leaves it out, and the site shows "—" rather than 0.
	Lines         *int     `json:"lines,omitempty"`
	Files         *int     `json:"files,omitempty"`
	Functions     *int     `json:"functions,omitempty"`
	F2PTestPoints *int     `json:"f2p_test_points,omitempty"`
	P2PTestPoints *int     `json:"p2p_test_points,omitempty"`
	TopObjects    []string `json:"top_objects"`

	// Extra holds the fields this model does not know, so that rewriting a
	// dataset keeps them.
	Extra map[string]json.RawMessage `json:"-"`
	// Line is where the instance stands in its JSONL file.
	Line int `json:"-"`
	// testIndex maps a test id to its place: FAIL_TO_PASS first, then
	// PASS_TO_PASS. Loading builds it to check results quickly.
	testIndex map[string]int
	// pos is the instance's place in its Dataset.Instances.
	pos int
	// raw is the instance's line in instances.jsonl, as published.
	raw []byte
}

// knownInstanceFields are the JSON keys Instance decodes itself.
var knownInstanceFields = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{"instance_id", "repo", "base_commit", "level", "problem_statement",
		"patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS", "image_name", "repo_settings",
		"created_at", "lines", "files", "functions", "f2p_test_points", "p2p_test_points", "top_objects"} {
		m[k] = true
	}
	return m
}()

// instanceFields is Instance without its methods, so decoding does not recurse.
type instanceFields Instance

// decodeInstance decodes one instance. The common case, known fields only
// and test lists as JSON lists, takes one pass of the encoding/json/v2
// candidate; anything else (unknown fields to keep, SWE-bench's
// string-encoded lists, a mistake to report) goes through UnmarshalJSON.
func decodeInstance(b []byte, in *Instance) error {
	line, raw := in.Line, in.raw
	defer func() { in.Line, in.raw = line, raw }()
	if jsonv2.Unmarshal(b, (*instanceFields)(in), jsonv2.RejectUnknownMembers(true)) == nil {
		return nil
	}
	*in = Instance{}
	return json.Unmarshal(b, in)
}

// UnmarshalJSON decodes the known fields and keeps the rest in Extra. Test
// lists may also be given as a JSON string holding a list, as in SWE-bench.
func (in *Instance) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	for _, k := range []string{"FAIL_TO_PASS", "PASS_TO_PASS"} {
		if v, ok := raw[k]; ok && len(bytes.TrimSpace(v)) > 0 && bytes.TrimSpace(v)[0] == '"' {
			var s string
			if err := json.Unmarshal(v, &s); err != nil || !json.Valid([]byte(s)) {
				return &json.UnmarshalTypeError{Value: "string that is not a JSON list", Field: k, Type: reflect.TypeOf([]string{})}
			}
			raw[k] = json.RawMessage(s)
		}
	}
	known := map[string]json.RawMessage{}
	var extra map[string]json.RawMessage
	for k, v := range raw {
		if knownInstanceFields[k] {
			known[k] = v
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[k] = v
	}
	buf, err := json.Marshal(known)
	if err != nil {
		return err
	}
	var f instanceFields
	if err := json.Unmarshal(buf, &f); err != nil {
		return err
	}
	f.Extra = extra
	f.Line = in.Line
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
