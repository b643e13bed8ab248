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
	ds := &bench.Dataset{}
	fb := &bench.Dataset{Manifest: bench.Manifest{Images: bench.ImagesInstance}}
	if evaluate.ImageKey(ds, td) != "o/r" || evaluate.ImageKey(ds, rel) != "o/r#o__r-4.release" || evaluate.ImageKey(fb, td) != "o__r.t.1.lv1" {
		t.Errorf("keys %q %q %q", evaluate.ImageKey(ds, td), evaluate.ImageKey(ds, rel), evaluate.ImageKey(fb, td))
	}
	if got := evaluate.HistoryEnv(repo, td); !reflect.DeepEqual(got, repo) {
		t.Errorf("a test-driven instance's environment changed: %+v", got)
	}
	got := evaluate.HistoryEnv(repo, rel)
	if got.Source != (images.Source{GitURL: "/src/r.git", Commit: "ba5e"}) || !reflect.DeepEqual(got.Patches, []string{"t", "p"}) || got.Install[0] != "pip install ." {
		t.Errorf("a release instance's environment: %+v", got)
	}
}
