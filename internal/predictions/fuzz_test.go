package predictions_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/predictions"
)

// FuzzParse feeds arbitrary files to Parse: it must not panic, must fail
// only with Problems, and whatever it accepts must keep every rule.
//
//	go test ./internal/predictions -run '^$' -fuzz FuzzParse -fuzztime 60s
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`{"instance_id": "a-1", "model_patch": "p", "tokens_in": 1.0, "cost": 1e-3, "attempt": 3}`,
		`{"instance_id": "a-1", "n_attempt": 2, "test_result": {"git_patch": "p"}, "success": false, "error": "x"}`,
		"{\n\"a-1\": {\"model_patch\": \"p\"}\n}",
		"[{\"instance_id\": \"a-1\"}, {\"instance_id\": \"a-1\"}]",
		`{"a-1": {"instance_id": "a-1"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		preds, err := predictions.Parse("f.jsonl", raw)
		if err != nil {
			var ps predictions.Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("failed with %T: %v", err, err)
			}
			for _, p := range ps {
				if p.File != "f.jsonl" || p.Msg == "" {
					t.Fatalf("a problem without a file or message: %+v", p)
				}
			}
			if preds != nil {
				t.Fatal("predictions returned with problems")
			}
			return
		}
		if len(preds) == 0 {
			t.Fatal("no predictions and no problem")
		}
		seen := map[string]bool{}
		for _, p := range preds {
			if err := bench.CheckName(p.InstanceID); err != nil {
				t.Fatalf("accepted the instance id %q: %v", p.InstanceID, err)
			}
			k := p.InstanceID + "#" + string(rune('0'+p.Attempt))
			if seen[k] {
				t.Fatalf("two predictions for %s", k)
			}
			seen[k] = true
			if p.Attempt < 1 || p.Attempt > 100 || p.Line < 1 {
				t.Fatalf("attempt %d, line %d", p.Attempt, p.Line)
			}
			if (p.TokensIn != nil && *p.TokensIn < 0) || (p.TokensOut != nil && *p.TokensOut < 0) {
				t.Fatal("negative tokens accepted")
			}
			if p.Cost != nil && (*p.Cost < 0 || math.IsInf(*p.Cost, 0) || math.IsNaN(*p.Cost)) {
				t.Fatalf("cost %v accepted", *p.Cost)
			}
		}
	})
}
