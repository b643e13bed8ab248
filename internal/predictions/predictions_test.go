package predictions_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/predictions"
)

func i64(n int64) *int64     { return &n }
func f64(f float64) *float64 { return &f }

func TestReadFormats(t *testing.T) {
	const (
		x = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
		// Without its final newline: kept so.
		y   = "diff --git a/y.py b/y.py\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b"
		jsd = "diff --git a/src/liger_kernel/ops/jsd.py b/src/liger_kernel/ops/jsd.py\n--- a/src/liger_kernel/ops/jsd.py\n+++ b/src/liger_kernel/ops/jsd.py\n@@ -1 +1 @@\n-a\n+"
		lk  = "linkedin__Liger-Kernel.c856fbab.test_fused_linear_jsd.4bd46945.lv1"
	)
	for _, tc := range []struct {
		file string
		want []predictions.Prediction
	}{
		{"swebench.jsonl", []predictions.Prediction{
			{InstanceID: "astropy__astropy-12907", Model: "gpt-4o__SWE-agent", Patch: x, Attempt: 1, Line: 1},
			{InstanceID: "django__django-11099", Model: "gpt-4o__SWE-agent", Patch: y, TokensIn: i64(120345), TokensOut: i64(4567),
				Cost: f64(0.42), Attempt: 2, Line: 3,
				Trajectory: json.RawMessage(`[{"role": "user", "content": "fix it"}, {"role": "assistant", "content": "done"}]`)},
			{InstanceID: "sympy__sympy-20590", Model: "gpt-4o__SWE-agent", Attempt: 1, Line: 4},
			{InstanceID: "sympy__sympy-20591", Model: "gpt-4o__SWE-agent", Attempt: 1, Line: 5},
		}},
		{"swebench-list.json", []predictions.Prediction{
			{InstanceID: "astropy__astropy-12907", Model: "claude-3.5", Patch: x, Attempt: 1, Line: 2},
			{InstanceID: "django__django-11099", Model: "claude-3.5", Attempt: 1, Line: 7},
		}},
		{"swebench-map.json", []predictions.Prediction{
			{InstanceID: "astropy__astropy-12907", Model: "claude-3.5", Patch: x, Attempt: 1, Line: 2},
			{InstanceID: "django__django-11099", Model: "claude-3.5", Patch: strings.ReplaceAll(x, "x.py", "y.py"), Cost: f64(0.015), Attempt: 1, Line: 7},
		}},
		{"swebench-map-oneline.json", []predictions.Prediction{
			{InstanceID: "astropy__astropy-12907", Model: "claude-3.5", Patch: "p1", Attempt: 1, Line: 1},
			{InstanceID: "django__django-11099", Model: "claude-3.5", Patch: "p2", Attempt: 1, Line: 1},
		}},
		{"featurebench-output.jsonl", []predictions.Prediction{
			{InstanceID: lk, Model: "claude-opus-4-5", Agent: "openhands", Patch: jsd + "b\n", Attempt: 1, Line: 1},
			{InstanceID: lk, Model: "claude-opus-4-5", Agent: "openhands", Patch: jsd + "c\n", Attempt: 2, Line: 2},
			{InstanceID: "pydantic__pydantic.e1dcaf9e.test_json_schema.a1b2c3d4.lv2", Model: "claude-opus-4-5", Agent: "openhands",
				Attempt: 1, Line: 3, Failed: true, Error: "AgentStuckInLoopError: the agent repeated the same action 4 times"},
			{InstanceID: "pydantic__pydantic.e1dcaf9e.test_types.e5f6a7b8.lv1", Model: "claude-opus-4-5", Agent: "openhands",
				Patch:   "diff --git a/pydantic/types.py b/pydantic/types.py\n--- a/pydantic/types.py\n+++ b/pydantic/types.py\n@@ -1 +1 @@\n-a\n+b\n",
				Attempt: 1, Line: 4, Failed: true, Error: "Timeout after 3600s"},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := predictions.Read(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d predictions, want %d: %+v", len(got), len(tc.want), got)
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], tc.want[i]) {
					t.Errorf("prediction %d:\n got  %+v\n want %+v", i, show(got[i]), show(tc.want[i]))
				}
			}
		})
	}
}

// show spells out a prediction's pointers for a failure message.
func show(p predictions.Prediction) string {
	s := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	return s(p.InstanceID) + " model=" + s(p.Model) + " agent=" + s(p.Agent) + " patch=" + s(p.Patch) +
		" in=" + s(p.TokensIn) + " out=" + s(p.TokensOut) + " cost=" + s(p.Cost) + " attempt=" + s(p.Attempt) +
		" line=" + s(p.Line) + " failed=" + s(p.Failed) + " error=" + s(p.Error) + " trajectory=" + string(p.Trajectory)
}

// The example's hand-written predictions (once examples/predictions/<slug>/
// *.diff with a usage.tsv) as SWE-bench JSONL: every patch byte for byte.
func TestExamplePredictions(t *testing.T) {
	sha := map[string]map[string]string{
		"tiny-agent": {
			"featbench__textkit-fuzzy-match.lv1":      "3ff74bcf624e22c0f484fbb0ef0824e1af004b8ab1967aa2f55c86ed6cca4036",
			"featbench__textkit-roman.lv2":            "cfc0d61a0254fb7704717697282a5b4e0f230827e8630725f9d3355d9dfa1e76",
			"featbench__textkit-template-filters.lv1": "13a08856d3a756092cfcf7360f1bfa5853e99cb251078c45a6f5e8ed394d0588",
			"featbench__textkit-unique-slug.lv1":      "601d09b3699739bb17c4e4f11779789f76ba160e82a9c3d12f23627d031d4e7e",
			"featbench__textkit-wrap-fill.lv1":        "ef416211dfc559e1765ed2c722dc6c3bcd8c738914c62f6bc8d9b69f5512b76f",
		},
		"shell-loop": {
			"featbench__textkit-fuzzy-match.lv1":      "d987d3e786f1bee4ffcd1ddfb025c92a0d7ab2a7299f7c5a67e4e5667a360860",
			"featbench__textkit-roman.lv2":            "58d347947d0dd994ab762701431ebe6571d0689f72081e68a38e6d274491b1a0",
			"featbench__textkit-table.lv2":            "7ff7db628130c70c1374a0db0125c7cfd9f90b556d8f22843aabeecf09756cb7",
			"featbench__textkit-template-filters.lv1": "db49da8539e7a3e3c9aa57e13a39803d3a7cdc62638e64bf8611ba40f068df3c",
			"featbench__textkit-unique-slug.lv1":      "19ffe7ec789b9f9d8b554308ee40d1f4e8726c6371306a0fea84e78d52290a65",
			"featbench__textkit-wrap-fill.lv1":        "8739f45e6327c524d73bcea356835386bf5fce150dec5abd5b8ed123d42107df",
		},
	}
	for slug, want := range sha {
		preds, err := predictions.Read(filepath.Join("testdata", "example-"+slug+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if len(preds) != len(want) {
			t.Errorf("%s: %d predictions, want %d", slug, len(preds), len(want))
		}
		for _, p := range preds {
			sum := sha256.Sum256([]byte(p.Patch))
			if got := hex.EncodeToString(sum[:]); got != want[p.InstanceID] {
				t.Errorf("%s %s: the patch's SHA-256 is %s, the .diff file's %s", slug, p.InstanceID, got, want[p.InstanceID])
			}
			if p.Model != slug || p.Attempt != 1 || p.TokensIn == nil || p.TokensOut == nil || p.Cost == nil {
				t.Errorf("%s: %s", slug, show(p))
			}
		}
	}
	// usage.tsv's first line for tiny-agent.
	preds, _ := predictions.Read(filepath.Join("testdata", "example-tiny-agent.jsonl"))
	if p := preds[0]; p.InstanceID != "featbench__textkit-unique-slug.lv1" || *p.TokensIn != 41280 || *p.TokensOut != 1874 || *p.Cost != 0.0089 {
		t.Errorf("the first prediction: %s", show(p))
	}
}

// Whatever prediction files examples/ ships must read cleanly.
func TestRepositoryPredictionFiles(t *testing.T) {
	files, _ := filepath.Glob("../../examples/predictions/*.jsonl")
	for _, f := range files {
		preds, err := predictions.Read(f)
		if err != nil {
			t.Errorf("%v", err)
		}
		t.Logf("%s: %d predictions", f, len(preds))
	}
}

func TestProblems(t *testing.T) {
	const ok = `{"instance_id": "a-1", "model_patch": "p"}`
	for _, tc := range []struct {
		name, file string
		want       []predictions.Problem // Msg: a part of the message
	}{
		{"malformed JSON", ok + "\n{\"instance_id\": \"a-2\", \"model_patch\": \"p\"\n",
			[]predictions.Problem{{Line: 2, Msg: "the input ends inside a value"}}},
		{"a missing instance_id", `{"model_patch": "p"}`,
			[]predictions.Problem{{Line: 1, Field: "instance_id", Msg: "is missing"}}},
		{"a null instance_id", `{"instance_id": null, "model_patch": "p"}`,
			[]predictions.Problem{{Line: 1, Field: "instance_id", Msg: "is missing"}}},
		{"an instance_id that is a number", `{"instance_id": 12, "model_patch": "p"}`,
			[]predictions.Problem{{Line: 1, Field: "instance_id", Msg: "is a JSON number, want a string"}}},
		{"an instance_id that is a path", `{"instance_id": "../../etc", "model_patch": "p"}`,
			[]predictions.Problem{{Line: 1, Field: "instance_id", Msg: "path separator"}}},
		{"a patch that is not a string", `{"instance_id": "a-1", "model_patch": ["diff"]}`,
			[]predictions.Problem{{Line: 1, Field: "model_patch", Msg: "is a JSON list, want a string"}}},
		{"a git_patch that is not a string", `{"instance_id": "a-1", "test_result": {"git_patch": 1}}`,
			[]predictions.Problem{{Line: 1, Field: "test_result.git_patch", Msg: "is a JSON number, want a string"}}},
		{"test_result that is not an object", `{"instance_id": "a-1", "test_result": "diff"}`,
			[]predictions.Problem{{Line: 1, Field: "test_result", Msg: "want an object"}}},
		{"negative tokens", `{"instance_id": "a-1", "model_patch": "p", "tokens_in": -5}`,
			[]predictions.Problem{{Line: 1, Field: "tokens_in", Msg: "is negative"}}},
		{"fractional tokens", `{"instance_id": "a-1", "model_patch": "p", "tokens_out": 1.5}`,
			[]predictions.Problem{{Line: 1, Field: "tokens_out", Msg: "not a whole number"}}},
		{"too many tokens", `{"instance_id": "a-1", "model_patch": "p", "tokens_out": 2e12}`,
			[]predictions.Problem{{Line: 1, Field: "tokens_out", Msg: "over the limit"}}},
		{"tokens as a string", `{"instance_id": "a-1", "model_patch": "p", "tokens_in": "120k"}`,
			[]predictions.Problem{{Line: 1, Field: "tokens_in", Msg: "is a JSON string, want a whole number"}}},
		{"a cost that is not finite", `{"instance_id": "a-1", "model_patch": "p", "cost": 1e999}`,
			[]predictions.Problem{{Line: 1, Field: "cost", Msg: "not a finite number"}}},
		{"a negative cost", `{"instance_id": "a-1", "model_patch": "p", "cost": -0.5}`,
			[]predictions.Problem{{Line: 1, Field: "cost", Msg: "is negative"}}},
		{"NaN as a string", `{"instance_id": "a-1", "model_patch": "p", "cost": "NaN"}`,
			[]predictions.Problem{{Line: 1, Field: "cost", Msg: "is a JSON string, want a number"}}},
		{"attempt 0", `{"instance_id": "a-1", "model_patch": "p", "attempt": 0}`,
			[]predictions.Problem{{Line: 1, Field: "attempt", Msg: "count from 1"}}},
		{"attempt and n_attempt disagree", `{"instance_id": "a-1", "model_patch": "p", "attempt": 1, "n_attempt": 2}`,
			[]predictions.Problem{{Line: 1, Field: "attempt", Msg: "n_attempt is 2"}}},
		{"success that is not a boolean", `{"instance_id": "a-1", "model_patch": "p", "success": "no"}`,
			[]predictions.Problem{{Line: 1, Field: "success", Msg: "want true or false"}}},
		{"two predictions for one instance and attempt", ok + "\n" + `{"instance_id": "a-1", "model_patch": "q", "n_attempt": 1}`,
			[]predictions.Problem{{Line: 2, Field: "instance_id", Msg: "a second prediction for a-1, attempt 1 (the first is on line 1)"}}},
		{"a duplicate key", `{"instance_id": "a-1", "model_patch": "p", "model_patch": "q"}`,
			[]predictions.Problem{{Line: 1, Field: "model_patch", Msg: "is given twice"}}},
		{"a duplicate key deep in a trajectory", `{"instance_id": "a-1", "trajectory": {"steps": [{"a": 1, "a": 2}]}}`,
			[]predictions.Problem{{Line: 1, Field: "trajectory.steps.0.a", Msg: "is given twice"}}},
		{"invalid UTF-8", "{\"instance_id\": \"a-1\", \"model_patch\": \"caf\xe9\"}",
			[]predictions.Problem{{Line: 1, Field: "model_patch", Msg: "invalid UTF-8"}}},
		{"a key in another case", `{"instance_id": "a-1", "Model_Patch": "p"}`,
			[]predictions.Problem{{Line: 1, Field: "Model_Patch", Msg: `only in case; write it as "model_patch"`}}},
		{"a line that is not an object", ok + "\nnull\n[1]\n",
			[]predictions.Problem{{Line: 2, Msg: "is null; want a JSON object"}, {Line: 3, Msg: "is a JSON list; want a JSON object"}}},
		{"two objects on a line", ok + " " + ok,
			[]predictions.Problem{{Line: 1, Msg: "more than one JSON value"}}},
		{"a byte-order mark", "\xef\xbb\xbf" + ok,
			[]predictions.Problem{{Line: 1, Msg: "byte-order mark"}}},
		{"no predictions", " \n\n",
			[]predictions.Problem{{Msg: "holds no predictions"}}},
		{"an empty list", "[]",
			[]predictions.Problem{{Msg: "holds no predictions"}}},
		{"a list with a bad element", "[\n" + ok + ",\n" + `{"instance_id": "a-2", "cost": "x"}` + "\n]",
			[]predictions.Problem{{Line: 3, Field: "cost", Msg: "want a number"}}},
		{"a list cut short", "[\n" + ok + ",\n",
			[]predictions.Problem{{Line: 3, Msg: "the input ends inside a value"}}},
		{"a mapping whose key and instance_id differ", "{\n  \"a-1\": {\"instance_id\": \"a-2\", \"model_patch\": \"p\"}\n}",
			[]predictions.Problem{{Line: 2, Field: "instance_id", Msg: `is "a-2" but the prediction's key is "a-1"`}}},
		{"a pretty-printed mapping with a mistake",
			"{\n  \"a-1\": {\"model_patch\": \"p\"},\n  \"a-2\": {\"model_patch\": \"p\"}\n  \"a-3\": {}\n}\n",
			[]predictions.Problem{{Line: 4, Msg: "malformed JSON"}}},
		{"a mapping to a string", "{\n  \"a-1\": \"diff\"\n}",
			[]predictions.Problem{{Line: 2, Field: "a-1", Msg: "is a JSON string; want a prediction object"}}},
		{"every problem at once", `{"model_patch": 1, "tokens_in": -1}` + "\n" + `{"instance_id": "a-1", "cost": -1}` + "\nnot json\n",
			[]predictions.Problem{
				{Line: 1, Field: "instance_id", Msg: "is missing"},
				{Line: 1, Field: "model_patch", Msg: "want a string"},
				{Line: 1, Field: "tokens_in", Msg: "is negative"},
				{Line: 2, Field: "cost", Msg: "is negative"},
				{Line: 3, Msg: "malformed JSON"},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			preds, err := predictions.Parse("preds.jsonl", []byte(withModel(tc.file)))
			var ps predictions.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("err = %v (%d predictions), want Problems", err, len(preds))
			}
			if preds != nil {
				t.Errorf("predictions returned with problems: %d", len(preds))
			}
			if len(ps) != len(tc.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(ps), len(tc.want), err)
			}
			for i, p := range ps {
				w := tc.want[i]
				if p.File != "preds.jsonl" || p.Line != w.Line || p.Field != w.Field || !strings.Contains(p.Msg, w.Msg) {
					t.Errorf("problem %d: %v\nwant line %d, field %q, %q", i, p, w.Line, w.Field, w.Msg)
				}
			}
		})
	}
}

// withModel gives every prediction object of file a model's name, for
// tests whose subject is another field.
func withModel(file string) string {
	return regexp.MustCompile(`\{(\s*)"(instance_id|model_patch|test_result|cost)"`).ReplaceAllString(file, `{$1"model_name_or_path": "m", "$2"`)
}

func TestProblemText(t *testing.T) {
	_, err := predictions.Parse("run/preds.jsonl", []byte(withModel(`{"instance_id": "a-1", "tokens_in": -3}`)))
	want := `run/preds.jsonl:1: field "tokens_in": is negative (-3)`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestManyProblems(t *testing.T) {
	var b strings.Builder
	for range 1500 {
		b.WriteString("{}\n")
	}
	_, err := predictions.Parse("p.jsonl", []byte(b.String()))
	var ps predictions.Problems
	// Each {} lacks its instance_id and its model: 3,000 problems.
	if !errors.As(err, &ps) || len(ps) != 1001 || ps[1000].Msg != "and 2000 more problems" {
		t.Errorf("%d problems; the last: %v", len(ps), ps[len(ps)-1])
	}
}

func TestLimits(t *testing.T) {
	long := `{"instance_id": "a-1", "model_patch": "` + strings.Repeat("x", predictions.MaxLine) + `"}`
	_, err := predictions.Parse("p.jsonl", []byte(withModel(`{"instance_id": "a-0"}`)+"\n"+long+"\n"))
	if err == nil || !strings.Contains(err.Error(), "p.jsonl:2: is") || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a line over the limit: %v", err)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: nothing is written, the size is what is checked.
	if err := f.Truncate(predictions.MaxFile + 1); err != nil {
		t.Skipf("cannot make a sparse file: %v", err)
	}
	f.Close()
	if _, err := predictions.Read(big); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a file over the limit: %v", err)
	}
	if _, err := predictions.Read(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a folder: %v", err)
	}
	_, err = predictions.Read(filepath.Join(dir, "missing.jsonl"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "reading predictions") {
		t.Errorf("a missing file: %v", err)
	}
}

// A prediction written over several lines as a JSON object is one
// prediction, not a mapping.
func TestOneObjectDocument(t *testing.T) {
	preds, err := predictions.Parse("p.json", []byte(withModel("{\n  \"instance_id\": \"a-1\",\n  \"model_patch\": \"p\"\n}\n")))
	if err != nil || len(preds) != 1 || preds[0].InstanceID != "a-1" || preds[0].Line != 1 {
		t.Errorf("%+v, %v", preds, err)
	}
}

// TestMeasuredFields: eval infer's fields are read, and measured figures
// must come whole, with the trajectory they were counted from.
func TestMeasuredFields(t *testing.T) {
	good := `{"instance_id": "a__b-1", "model_patch": "", "tokens_in": 10, "tokens_out": 2, "cost": 0.5, "turns": 3, "duration": 12.5, "measured": true, "failure_mode": "TurnLimit", "trajectory": "infer/a__b-1/trajectory.jsonl"}` + "\n"
	ps, err := predictions.Parse("p.jsonl", []byte(withModel(good)))
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	if !p.Measured || *p.Turns != 3 || *p.Duration != 12.5 || p.FailureMode != "TurnLimit" || string(p.Trajectory) != `"infer/a__b-1/trajectory.jsonl"` {
		t.Errorf("read %+v", p)
	}
	for _, c := range []struct{ line, want string }{
		{`{"instance_id": "a__b-1", "model_patch": "", "tokens_in": 10, "tokens_out": 2, "measured": true, "trajectory": "t.jsonl"}`, `field "measured": is true but tokens_in, tokens_out or turns is missing`},
		{`{"instance_id": "a__b-1", "model_patch": "", "tokens_in": 10, "tokens_out": 2, "turns": 1, "measured": true}`, `does not name the file`},
		{`{"instance_id": "a__b-1", "model_patch": "", "turns": -1}`, `field "turns": is negative`},
		{`{"instance_id": "a__b-1", "model_patch": "", "duration": "1s"}`, `field "duration": is a JSON string`},
		{`{"instance_id": "a__b-1", "model_patch": "", "measured": "yes"}`, `field "measured": is a JSON string`},
	} {
		_, err := predictions.Parse("p.jsonl", []byte(withModel(c.line)+"\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v; want %q", c.line, err, c.want)
		}
	}
}

// TestModelRules: a predictions file is one system's, and says which.
func TestModelRules(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{`{"instance_id": "a-1", "model_patch": "p"}`, `p.jsonl:1: field "model_name_or_path": is missing`},
		{`{"instance_id": "a-1", "model_patch": "p", "model_name_or_path": ""}`, `p.jsonl:1: field "model_name_or_path": is missing`},
		{`{"instance_id": "a-1", "model_patch": "p", "model_name_or_path": "m"}` + "\n" + `{"instance_id": "a-2", "model_patch": "p", "model_name_or_path": "n"}`,
			`p.jsonl:2: field "model_name_or_path": is "n", but line 1's is "m": a predictions file is one system's`},
		{`{"instance_id": "a-1", "model_patch": "p", "model_name_or_path": "` + strings.Repeat("m", 201) + `"}`, `is 201 characters long`},
		{`{"instance_id": "a-1", "model_patch": "p", "model_name_or_path": "` + strings.Repeat("m", 20<<20) + `"}`, `characters long`},
		{`{"instance_id": "a-1", "model_patch": "p", "model_name_or_path": "a\nb"}`, `spans lines`},
	} {
		_, err := predictions.Parse("p.jsonl", []byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80s: %v\nwant %q", c.file, err, c.want)
		}
	}
	// FeatureBench's model or agent name it too.
	if ps, err := predictions.Parse("p.jsonl", []byte(`{"instance_id": "a-1", "model_patch": "p", "agent": "openhands"}`)); err != nil || ps[0].Model != "openhands" {
		t.Errorf("agent as the model: %v", err)
	}
}
