package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/predictions"
)

// TestInferUsage: infer's usage errors, before any container.
func TestInferUsage(t *testing.T) {
	root := copyProject(t)
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"infer", "--dataset", "example/v3", "--run-id", "x"}, "--agent is required", 2},
		{[]string{"infer", "--root", root, "--dataset", "example/v3", "--agent", "nobody", "--run-id", "x"}, "no such [[agents]] table", 2},
		{[]string{"infer", "--root", root, "--dataset", "example/v3", "--agent", "shell-loop", "--run-id", "../x"}, "--run-id", 2},
		{[]string{"infer", "--root", root, "--dataset", "nope/v1", "--agent", "shell-loop", "--run-id", "x"}, "no dataset nope/v1", 1},
	} {
		_, errOut, code := runEval(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("eval %s: exit %d, %q; want %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.want)
		}
	}
}

// TestCheckMeasured: a measured prediction is taken only with figures its
// trajectory replays to, from a file under the predictions' folder.
func TestCheckMeasured(t *testing.T) {
	dir := t.TempDir()
	traj := `{"seq":1,"kind":"openai.chat","status":200,"response":{"model":"m","usage":{"prompt_tokens":10,"completion_tokens":5}},"usage":{"input":10,"output":5},"model":"m","cost":0.25}` + "\n" +
		`{"seq":2,"kind":"openai.chat","status":429,"limit":"TurnLimit"}` + "\n"
	if err := os.MkdirAll(filepath.Join(dir, "infer", "a__b-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "infer", "a__b-1", "trajectory.jsonl"), []byte(traj), 0o644); err != nil {
		t.Fatal(err)
	}
	pred := func(fields string) predictions.Prediction {
		ps, err := predictions.Parse("p.jsonl", []byte(`{"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": "", "measured": true, `+fields+"}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return ps[0]
	}
	path := filepath.Join(dir, "predictions.jsonl")
	good := `"tokens_in": 10, "tokens_out": 5, "turns": 1, "cost": 0.25, "trajectory": "infer/a__b-1/trajectory.jsonl"`
	if _, err := checkMeasured(path, pred(good)); err != nil {
		t.Fatalf("the true figures: %v", err)
	}
	for _, c := range []struct{ fields, want string }{
		{strings.Replace(good, `"tokens_in": 10`, `"tokens_in": 9`, 1), `field "tokens_in": is 9 but its trajectory`},
		{strings.Replace(good, `"turns": 1`, `"turns": 2`, 1), `field "turns"`},
		{strings.Replace(good, `"cost": 0.25`, `"cost": 0.1`, 1), `field "cost"`},
		{strings.Replace(good, `infer/a__b-1/trajectory.jsonl`, `../../etc/passwd`, 1), "not a file under the predictions' folder"},
		{strings.Replace(good, `infer/a__b-1/trajectory.jsonl`, `infer/missing.jsonl`, 1), "no such file"},
	} {
		if _, err := checkMeasured(path, pred(c.fields)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.fields, err, c.want)
		}
	}
}
