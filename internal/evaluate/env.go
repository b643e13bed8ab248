package evaluate

import (
	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/images"
)

// History reports whether an instance comes from a repository's history
// (the release and new-components methods): its base commit is the
// repository without the feature, and its environment is its own.
func History(in *bench.Instance) bool {
	m := in.MethodOrDefault()
	return m == bench.MethodRelease || m == bench.MethodNewComponents
}

// ImageKey is the key of an instance's environment image in Config.Images:
// the instance, where the dataset's instances bring their own images
// (FeatureBench's); the instance within its repository for a
// history-based one, whose complete project is its own base commit with
// its patches; else its repository, whose one image holds the complete
// project for every instance of the test-driven method.
func ImageKey(ds *bench.Dataset, in *bench.Instance) string {
	switch {
	case ds.ImagesOrDefault() == bench.ImagesInstance:
		return in.InstanceID
	case History(in):
		return in.Repo + "#" + in.InstanceID
	}
	return in.Repo
}

// HistoryEnv is a history-based instance's environment, from its
// repository's (whose source must be a git repository): the source at the
// instance's base commit with its test patch and its patch applied, which
// is the complete project the level 1 flow reverses them from to reach
// the base. Anything else is returned as it is.
func HistoryEnv(repo images.EnvSpec, in *bench.Instance) images.EnvSpec {
	if !History(in) {
		return repo
	}
	spec := repo
	spec.Source = images.Source{GitURL: repo.Source.GitURL, Commit: in.BaseCommit}
	spec.Patches = []string{in.TestPatch, in.Patch}
	return spec
}
