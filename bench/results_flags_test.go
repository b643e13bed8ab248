package bench_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
)

// tinyResult loads root and returns the tiny agent's result for id.
func tinyResult(t *testing.T, root, id string) *bench.Result {
	t.Helper()
	data, err := bench.Load(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range data.Submissions {
		if s.ID() == "alpha/v1/full/20260115_tiny-agent" {
			return s.ResultFor(id)
		}
	}
	t.Fatal("no tiny agent submission")
	return nil
}

// TestLoadFlags: integrity flags load the same on the fast path and the
// line decoder's (a name written with an escape sends the file there).
func TestLoadFlags(t *testing.T) {
	const r2 = `"failure_modes": ["AssertionError"]}`
	for _, c := range []struct{ name, field string }{{"fast path", `"flags"`}, {"line decoder", `"fl\u0061gs"`}} {
		t.Run(c.name, func(t *testing.T) {
			root := copyGood(t)
			replace(tinyResults, r2, `"failure_modes": ["AssertionError"], `+c.field+`: ["touches-tests", "reads-git", "gold-identical"]}`)(t, root)
			res := tinyResult(t, root, "alpha-2")
			want := []string{bench.FlagTouchesTests, bench.FlagReadsGit, bench.FlagGoldIdentical}
			if res == nil || !slices.Equal(res.Flags, want) || !res.HasFlag(bench.FlagReadsGit) || res.HasFlag(bench.FlagReferencesPytest) {
				t.Errorf("flags read as %+v", res)
			}
			if other := tinyResult(t, root, "alpha-1"); other == nil || other.Flags != nil {
				t.Errorf("a result without flags read as %+v", other)
			}
		})
	}
}

func TestFlagExplanations(t *testing.T) {
	fl := bench.IntegrityFlags()
	if len(fl) != 5 {
		t.Fatalf("%d flags", len(fl))
	}
	for _, f := range fl {
		if bench.FlagExplanation(f.Name) != f.Explanation || f.Explanation == "" || strings.Contains(f.Explanation, "\n") {
			t.Errorf("flag %q: explanation %q", f.Name, f.Explanation)
		}
	}
	if bench.FlagExplanation("resolved") != "" {
		t.Error("an unknown flag has an explanation")
	}
}

func TestLoadFlagsBroken(t *testing.T) {
	const r2 = `"failure_modes": ["AssertionError"]}`
	flags := func(list string) mutation {
		return replace(tinyResults, r2, `"failure_modes": ["AssertionError"], "flags": `+list+`}`)
	}
	cases := []struct {
		name   string
		mutate mutation
		want   want
	}{
		{"unknown flag", flags(`["reads-git", "cheats"]`), want{tinyResults, 2, "flags[1]", `is "cheats"; want one of "touches-tests"`}},
		{"flag twice", flags(`["reads-git", "reads-git"]`), want{tinyResults, 2, "flags[1]", "listed twice"}},
		{"flags out of order", flags(`["gold-identical", "touches-tests"]`), want{tinyResults, 2, "flags[1]", "list flags in the order touches-tests"}},
		{"flags not a list", flags(`"reads-git"`), want{tinyResults, 2, "flags", "want"}},
		{"a flag not a string", flags(`[1]`), want{tinyResults, 2, "flags[0]", "want a string"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkMutation(t, c.mutate, c.want)
		})
	}
}

// TestGoldCopies: a ranked submission whose predictions are flagged as
// the gold patch, more than two thirds of them, is refused; as a reference it
// loads, and so does one with half of them flagged, or whose only other
// results are empty patches.
func TestGoldCopies(t *testing.T) {
	const (
		r1 = `"cost": 0.5, "dataset": "alpha/v1"}`
		r2 = `"failure_modes": ["AssertionError"]}`
	)
	gold1 := replace(tinyResults, r1, `"cost": 0.5, "dataset": "alpha/v1", "flags": ["gold-identical"]}`)
	gold2 := replace(tinyResults, r2, `"failure_modes": ["AssertionError"], "flags": ["touches-tests", "gold-identical"]}`)
	empty2 := replace(tinyResults, r2, `"failure_modes": ["EmptyPatch"]}`)
	reference := appendText(tinyMeta, "reference = true")
	refused := []struct {
		name   string
		mutate mutation
	}{
		{"every prediction", chain(gold1, gold2)},
		{"every prediction but an empty patch", chain(gold1, empty2)},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			root := copyGood(t)
			c.mutate(t, root)
			ps := loadProblems(t, root)
			w := want{tinyMeta, 0, "reference", "set reference = true"}
			for _, p := range ps {
				if w.matches(p) && strings.Contains(p.Msg, `flagged "gold-identical"`) {
					return
				}
			}
			t.Errorf("no problem naming %s field reference; got: %v", tinyMeta, ps)
		})
	}
	accepted := []struct {
		name   string
		mutate mutation
	}{
		{"as a reference", chain(gold1, gold2, reference)},
		{"half of them", gold1},
		{"every prediction empty", chain(empty2, replace(tinyResults, r1, `"cost": 0.5, "dataset": "alpha/v1", "failure_modes": ["EmptyPatch"]}`))},
	}
	for _, c := range accepted {
		t.Run(c.name, func(t *testing.T) {
			root := copyGood(t)
			c.mutate(t, root)
			if _, err := bench.Load(context.Background(), root); err != nil {
				t.Error(err)
			}
		})
	}
}
