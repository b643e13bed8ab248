package images_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/pyindex/pyindextest"
	"github.com/featbench/featbench/internal/pylock"
)

// indexed is a repository that needs a package only the test index has.
func indexed(t *testing.T, port string) string {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"pyproject.toml": `[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "paint"
version = "0.1"
dependencies = ["fbdemo-colors>=1.0"]
`,
		"paint/__init__.py": "from fbdemo_colors import RED\n",
	} {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), data)
	}
	return dir
}

// TestEnvFromIndex: an environment built behind the gate gets its
// dependency from the index (the newest version uploaded before the
// cut-off), reaches nothing else (neither the index's own port on this
// machine nor another host), and its lock pins that file; built again
// from the lock it has the same packages. An index that serves another
// file under the locked name and version, and one that does not answer,
// each fail the build with an error saying so, and no image is tagged.
func TestEnvFromIndex(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx := context.Background()
	ix := pyindextest.Serve(t, t.TempDir())
	cut := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	name12, whl12 := pyindextest.Wheel("fbdemo-colors", "1.2", map[string]string{"fbdemo_colors.py": "RED = 'red'\n"})
	ix.Add(t, name12, whl12, cut.Add(-48*time.Hour))
	name13, whl13 := pyindextest.Wheel("fbdemo-colors", "1.3", map[string]string{"fbdemo_colors.py": "RED = 'RED'\n"})
	ix.Add(t, name13, whl13, cut.Add(48*time.Hour))

	spec := images.EnvSpec{
		Name: "paint", Source: images.Source{Dir: indexed(t, ix.Port())}, Base: base,
		PreInstall: []string{
			// Only the gate: not the index's port on this machine, not
			// another host through the proxy.
			`! python3 -c "import socket; socket.create_connection(('127.0.0.1', ` + ix.Port() + `), 5)"`,
			`! python3 -c "import urllib.request; urllib.request.urlopen('http://deb.debian.org/', timeout=20)" 2>/tmp/refused; grep -q 'is not reachable from the build' /tmp/refused || grep -q 'Forbidden' /tmp/refused`,
		},
		Install: []string{"pip install --no-build-isolation -e ."},
		Index:   &images.Index{URLs: []string{ix.URL}, Before: cut},
	}
	lock, other, notes, err := images.ResolveEnv(ctx, eng, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lock) != 1 || lock[0].Name != "fbdemo-colors" || lock[0].Version != "1.2" || len(lock[0].Hashes) != 1 || len(notes) != 0 {
		t.Fatalf("lock %+v, notes %q", lock, notes)
	}
	if len(other) != 1 || !strings.HasPrefix(other[0], "-e ") {
		t.Errorf("the freeze's other lines: %q", other)
	}

	spec.Lock = lock
	ref, err := images.EnsureEnv(ctx, eng, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	freeze := func(ref string) string {
		c := start1(t, eng, ref)
		return run(t, c, "cd / && python3 -c 'import paint; print(paint.RED)' && cat "+images.FreezeFile)
	}
	first := freeze(ref)
	if !strings.HasPrefix(first, "red\n") || !strings.Contains(first, "fbdemo-colors==1.2") {
		t.Fatalf("the environment:\n%s", first)
	}
	// Built again from the lock (the image removed: a new engine).
	if err := eng.RemoveImage(ctx, ref); err != nil {
		t.Fatal(err)
	}
	again, err := images.EnsureEnv(ctx, eng, spec, nil)
	if err != nil || again != ref {
		t.Fatalf("rebuilt %s, %v", again, err)
	}
	if second := freeze(again); second != first {
		t.Errorf("the rebuilt environment differs:\n%s\nwas\n%s", second, first)
	}
	if err := eng.RemoveImage(ctx, ref); err != nil {
		t.Fatal(err)
	}

	// Another file under the locked name and version.
	_, forged := pyindextest.Wheel("fbdemo-colors", "1.2", map[string]string{"fbdemo_colors.py": "RED = 'blue'\n"})
	ix.Add(t, name12, forged, cut.Add(-48*time.Hour))
	_, err = images.EnsureEnv(ctx, eng, spec, nil)
	if err == nil || !strings.Contains(err.Error(), "the dataset's lock pins fbdemo-colors 1.2 to "+lock[0].Hashes[0]) {
		t.Errorf("a forged file: %v", err)
	}
	if ok, _ := eng.ImageExists(ctx, ref); ok {
		t.Errorf("the failed build left %s", ref)
	}

	// An index that does not answer.
	stall := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stall }))
	defer slow.Close()
	defer close(stall)
	spec.Index = &images.Index{URLs: []string{slow.URL + "/simple/"}, Timeout: 3 * time.Second}
	begin := time.Now()
	_, err = images.EnsureEnv(ctx, eng, spec, nil)
	if err == nil || !strings.Contains(err.Error(), "did not answer within 3s (timeout)") {
		t.Errorf("a stalled index: %v", err)
	}
	t.Logf("the stalled index failed the build in %s", time.Since(begin).Round(time.Second))
	if ok, _ := eng.ImageExists(ctx, ref); ok {
		t.Errorf("the failed build left %s", ref)
	}
	if msgs := pylock.Check(lock); len(msgs) > 0 {
		t.Errorf("the lock does not check: %q", msgs)
	}
}
