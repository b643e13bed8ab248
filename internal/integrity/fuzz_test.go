package integrity_test

import (
	"slices"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/integrity"
)

// FuzzFlags: whatever a prediction, a gold patch or a test patch holds,
// Flags returns known flags, each once, in order, and never panics.
//
//	go test ./internal/integrity -run '^$' -fuzz FuzzFlags -fuzztime 60s
func FuzzFlags(f *testing.F) {
	ins := instances(f)
	for _, id := range []string{lv1, lv2} {
		in := ins[id]
		f.Add([]byte(in.Patch), in.Patch, in.TestPatch, uint8(in.Level), false)
	}
	for _, p := range predictions(f, "shell-loop") {
		in := ins[p.InstanceID]
		f.Add([]byte(p.ModelPatch), in.Patch, in.TestPatch, uint8(in.Level), true)
	}
	for _, s := range []string{"", "+", "@@ -1 +1 @@\n+x", "diff --git a/x b/x\n@@ -1,99 +1,99 @@\n-", "--- a\n+++ b\n@@ -0,0 +1 @@\n+import _pytest",
		"diff --git a/pyproject.toml b/pyproject.toml\n--- a/pyproject.toml\n+++ b/pyproject.toml\n@@ -1 +1 @@ [\n-[\n+[tool.pytest]\n"} {
		f.Add([]byte(s), s, s, uint8(1), false)
	}
	known := map[string]int{}
	for i, fl := range bench.IntegrityFlags() {
		known[fl.Name] = i
	}
	f.Fuzz(func(t *testing.T, pred []byte, gold, tests string, level uint8, masked bool) {
		in := *ins[lv2]
		in.Patch, in.TestPatch, in.Level = gold, tests, int(level%3)
		ds := complete
		if masked {
			ds = &bench.Dataset{Manifest: bench.Manifest{Layout: bench.LayoutMasked}}
		}
		for _, isGold := range []bool{false, true} {
			flags := integrity.Flags(ds, &in, pred, isGold)
			prev := -1
			for _, fl := range flags {
				r, ok := known[fl]
				if !ok || r <= prev {
					t.Fatalf("flags %q: unknown, repeated or out of order", flags)
				}
				prev = r
			}
			if slices.Contains(flags, bench.FlagImportsOriginal) && in.Level != 2 {
				t.Fatalf("flags %q at level %d", flags, in.Level)
			}
		}
	})
}
