package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images"
)

// haveAll is an engine that has every image already: buildImages then
// only names them.
type haveAll struct{ asked []string }

func (e *haveAll) ImageExists(_ context.Context, ref string) (bool, error) {
	e.asked = append(e.asked, ref)
	return true, nil
}

func (e *haveAll) ImportRootfs(context.Context, string, string, map[string]string, []string) error {
	panic("nothing is built")
}

func (e *haveAll) Build(context.Context, string, string, []container.File, map[string]string, io.Writer) error {
	panic("nothing is built")
}

func (e *haveAll) BuildNetworked(context.Context, string, string, []container.File, map[string]string, container.BuildNetwork, io.Writer) error {
	panic("nothing is built")
}

func (e *haveAll) Start(context.Context, container.Spec) (*container.Container, error) {
	panic("nothing is started")
}

func (e *haveAll) RemoveImage(context.Context, string) error { panic("nothing is removed") }

func (e *haveAll) Pull(context.Context, string, string, io.Writer) error {
	panic("nothing is pulled")
}

func (e *haveAll) RepoDigests(context.Context, string) ([]string, error) {
	panic("nothing is pulled")
}

// TestBuildImagesPython: a repository's environment is built on the base
// of the Python its dataset.toml names, the one collection verified its
// instances on; none named is the default's.
func TestBuildImagesPython(t *testing.T) {
	root := filepath.Join("..", "..")
	pr := &project{root: root, cfg: config.Default()}
	for _, python := range []string{"", "3.11", "3.13"} {
		ds := &bench.Dataset{Manifest: bench.Manifest{Repos: []bench.Repository{{
			Name: "featbench/textkit", Source: &bench.Source{Path: "examples/textkit"},
			Environment: &bench.Environment{Python: python, Install: []string{"pip install -e ."}},
		}}}}
		eng := &haveAll{}
		got, err := pr.buildImages(context.Background(), eng, ds, []*bench.Instance{{Repo: "featbench/textkit"}}, io.Discard)
		if err != nil {
			t.Fatalf("python %q: %v", python, err)
		}
		base, _ := images.BaseRef(images.BaseSpec{Python: python, Prefix: pr.cfg.Eval.ImagePrefix})
		want, err := images.EnvRef(context.Background(), images.EnvSpec{
			Name: "featbench/textkit", Source: images.Source{Dir: filepath.Join(root, "examples/textkit")},
			Install: []string{"pip install -e ."}, Base: base, Prefix: pr.cfg.Eval.ImagePrefix,
		})
		if err != nil {
			t.Fatal(err)
		}
		if got["featbench/textkit"] != want || len(eng.asked) == 0 || eng.asked[0] != base {
			t.Errorf("python %q: image %s on %v; want %s on %s", python, got["featbench/textkit"], eng.asked, want, base)
		}
	}
	trixie, _ := images.BaseRef(images.BaseSpec{Python: "3.13"})
	bookworm, _ := images.BaseRef(images.BaseSpec{})
	if trixie == bookworm {
		t.Fatal("one base for 3.11 and 3.13")
	}
}
