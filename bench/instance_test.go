package bench_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
)

func TestInstanceRoundTrip(t *testing.T) {
	const src = `{"instance_id": "acme__w-1", "repo": "acme/w", "base_commit": "abc", "level": 2,
		"problem_statement": "Do it.", "FAIL_TO_PASS": ["t::a", "t::b"], "PASS_TO_PASS": ["t::c"],
		"repo_settings": {"python": "3.12"}, "lines": 7, "top_objects": ["W"],
		"environment_setup_commit": "fee", "hints": {"n": [1, 2]}, "zeta": null}`
	var in bench.Instance
	if err := json.Unmarshal([]byte(src), &in); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, in bench.Instance) {
		t.Helper()
		if in.InstanceID != "acme__w-1" || in.Repo != "acme/w" || in.BaseCommit != "abc" || in.Level != 2 ||
			in.ProblemStatement != "Do it." || in.Lines == nil || *in.Lines != 7 {
			t.Errorf("known fields = %+v", in)
		}
		if !reflect.DeepEqual(in.FailToPass, []string{"t::a", "t::b"}) || !reflect.DeepEqual(in.PassToPass, []string{"t::c"}) ||
			!reflect.DeepEqual(in.TopObjects, []string{"W"}) {
			t.Errorf("lists = %q %q %q", in.FailToPass, in.PassToPass, in.TopObjects)
		}
		var rs map[string]string
		if err := json.Unmarshal(in.RepoSettings, &rs); err != nil || rs["python"] != "3.12" {
			t.Errorf("repo_settings = %s (%v)", in.RepoSettings, err)
		}
		wantExtra := map[string]string{"environment_setup_commit": `"fee"`, "hints": `{"n":[1,2]}`, "zeta": "null"}
		if len(in.Extra) != len(wantExtra) {
			t.Errorf("Extra = %v, want keys %v", slices.Sorted(maps.Keys(in.Extra)), slices.Sorted(maps.Keys(wantExtra)))
		}
		for k, v := range wantExtra {
			got, ok := in.Extra[k]
			if !ok || compactJSON(t, got) != v {
				t.Errorf("Extra[%q] = %s (present %v), want %s", k, got, ok, v)
			}
		}
		for k := range in.Extra {
			if k == "instance_id" || k == "FAIL_TO_PASS" || k == "repo" {
				t.Errorf("known field %q kept in Extra", k)
			}
		}
	}
	check(t, in)

	out, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back bench.Instance
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", out, err)
	}
	check(t, back)

	// Unknown keys follow the known ones, sorted, so output is stable.
	s := string(out)
	i, j, k := strings.Index(s, `"environment_setup_commit"`), strings.Index(s, `"hints"`), strings.Index(s, `"zeta"`)
	if !(strings.Index(s, `"top_objects"`) < i && i < j && j < k) {
		t.Errorf("extra keys not after the known ones in sorted order: %s", s)
	}
	out2, _ := json.Marshal(back)
	if string(out2) != s {
		t.Errorf("second marshal differs:\n%s\n%s", s, out2)
	}
	// A pointer marshals the same way.
	outp, _ := json.Marshal(&in)
	if string(outp) != s {
		t.Errorf("marshal of *Instance differs:\n%s\n%s", s, outp)
	}
}

func TestInstanceWithoutExtra(t *testing.T) {
	var in bench.Instance
	if err := json.Unmarshal([]byte(`{"instance_id": "x", "FAIL_TO_PASS": ["a"]}`), &in); err != nil {
		t.Fatal(err)
	}
	if in.Extra != nil {
		t.Errorf("Extra = %v, want nil", in.Extra)
	}
	out, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("output is not a JSON object: %s", out)
	}
	if _, ok := m["repo_settings"]; ok {
		t.Errorf("empty repo_settings written: %s", out)
	}
	if string(m["instance_id"]) != `"x"` {
		t.Errorf("instance_id = %s", m["instance_id"])
	}
}

func TestInstanceTestListsAsStrings(t *testing.T) {
	for _, c := range []struct {
		name     string
		src      string
		f2p, p2p []string
		errField string // "" when decoding must succeed
	}{
		{"SWE-bench strings",
			`{"instance_id": "a", "FAIL_TO_PASS": "[\"tests/t.py::test_a\", \"tests/t.py::test_b\"]", "PASS_TO_PASS": "[]"}`,
			[]string{"tests/t.py::test_a", "tests/t.py::test_b"}, []string{}, ""},
		{"plain lists",
			`{"instance_id": "a", "FAIL_TO_PASS": ["x"], "PASS_TO_PASS": ["y", "z"]}`,
			[]string{"x"}, []string{"y", "z"}, ""},
		{"string with spaces around the list",
			`{"instance_id": "a", "FAIL_TO_PASS": " [\"x\"] "}`,
			[]string{"x"}, nil, ""},
		{"null",
			`{"instance_id": "a", "FAIL_TO_PASS": null}`,
			nil, nil, ""},
		{"string holding a list of numbers",
			`{"instance_id": "a", "FAIL_TO_PASS": "[1, 2]"}`,
			nil, nil, "FAIL_TO_PASS"},
		{"string holding a string",
			`{"instance_id": "a", "PASS_TO_PASS": "\"x\""}`,
			nil, nil, "PASS_TO_PASS"},
		{"number",
			`{"instance_id": "a", "FAIL_TO_PASS": 3}`,
			nil, nil, "FAIL_TO_PASS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var in bench.Instance
			err := json.Unmarshal([]byte(c.src), &in)
			if c.errField != "" {
				if err == nil || !strings.Contains(err.Error(), c.errField) {
					t.Fatalf("err = %v, want an error naming the field %s", err, c.errField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in.FailToPass, c.f2p) || !reflect.DeepEqual(in.PassToPass, c.p2p) {
				t.Errorf("F2P %#v P2P %#v, want %#v %#v", in.FailToPass, in.PassToPass, c.f2p, c.p2p)
			}
			if len(in.Extra) != 0 {
				t.Errorf("Extra = %v", in.Extra)
			}
		})
	}
}

func TestInstanceCreated(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"", time.Time{}, false},
		{"2025-06-01T12:00:00Z", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), false},
		{"2025-06-01T12:00:00+02:00", time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC), false},
		{"2025-06-01T12:00:00", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), false},
		{"2025-06-01", time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), false},
		{"01/06/2025", time.Time{}, true},
		{"2025-13-01", time.Time{}, true},
	} {
		in := bench.Instance{CreatedAt: c.in}
		got, err := in.Created()
		if (err != nil) != c.err || !got.Equal(c.want) {
			t.Errorf("Created(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("bad JSON %s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// The history-based methods' fields are known fields: they round-trip and
// are not kept as extra ones.
func TestInstanceProvenanceRoundTrip(t *testing.T) {
	const src = `{"instance_id": "acme__w-2", "repo": "acme/w", "level": 1, "problem_statement": "Add it.",
		"FAIL_TO_PASS": ["t::a"], "PASS_TO_PASS": [], "method": "new-components", "pull_number": 42, "release": "v1.2.0",
		"components": [{"file": "w/core.py", "name": "Widget.spin", "kind": "method", "signature": "def spin(self, n: int) -> int", "docstring": "Spin n times."}]}`
	var in bench.Instance
	if err := json.Unmarshal([]byte(src), &in); err != nil {
		t.Fatal(err)
	}
	want := []bench.Component{{File: "w/core.py", Name: "Widget.spin", Kind: "method", Signature: "def spin(self, n: int) -> int", Docstring: "Spin n times."}}
	if in.Method != bench.MethodNewComponents || in.PullNumber != 42 || in.Release != "v1.2.0" || !reflect.DeepEqual(in.Components, want) || len(in.Extra) != 0 {
		t.Fatalf("decoded %+v", in)
	}
	out, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back bench.Instance
	if err := json.Unmarshal(out, &back); err != nil || !reflect.DeepEqual(back.Components, want) || back.PullNumber != 42 {
		t.Fatalf("round trip %s: %+v (%v)", out, back, err)
	}
	if (&bench.Instance{}).MethodOrDefault() != bench.MethodTestDriven {
		t.Error("an instance that names no method is not test-driven")
	}
}
