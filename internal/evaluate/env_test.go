package evaluate_test

import (
	"reflect"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/images"
)

// A test-driven instance shares its repository's image; a history-based
// one has its own, from its base commit with its patches.
func TestHistoryEnv(t *testing.T) {
	repo := images.EnvSpec{Name: "o/r", Source: images.Source{GitURL: "/src/r.git", Commit: "c0ffee"}, Install: []string{"pip install ."}, Base: "b"}
	td := &bench.Instance{InstanceID: "o__r.t.1.lv1", Repo: "o/r", BaseCommit: "c0ffee", Patch: "p", TestPatch: "t"}
	rel := &bench.Instance{InstanceID: "o__r-4.release", Repo: "o/r", BaseCommit: "ba5e", Patch: "p", TestPatch: "t", Method: bench.MethodRelease}
	if evaluate.ImageKey(td) != "o/r" || evaluate.ImageKey(rel) != "o/r#o__r-4.release" {
		t.Errorf("keys %q %q", evaluate.ImageKey(td), evaluate.ImageKey(rel))
	}
	if got := evaluate.HistoryEnv(repo, td); !reflect.DeepEqual(got, repo) {
		t.Errorf("a test-driven instance's environment changed: %+v", got)
	}
	got := evaluate.HistoryEnv(repo, rel)
	if got.Source != (images.Source{GitURL: "/src/r.git", Commit: "ba5e"}) || !reflect.DeepEqual(got.Patches, []string{"t", "p"}) || got.Install[0] != "pip install ." {
		t.Errorf("a release instance's environment: %+v", got)
	}
}
