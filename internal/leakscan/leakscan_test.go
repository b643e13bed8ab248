package leakscan_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/fbimport"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/leakscan"
)

const instance = "featbench__textkit.test_roman.0e26fade.lv1"

// fixture loads the example's FeatureBench-format instances as the dataset
// `collect import` makes of them, and the instance the scans look for.
func fixture(t *testing.T) (*bench.Dataset, *bench.Instance) {
	t.Helper()
	p := filepath.Join("..", "..", "examples", "featurebench", "textkit.jsonl")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	files, err := fbimport.Convert(context.Background(), p, raw, fbimport.Options{Name: "fb", Version: "textkit", ReleaseDate: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	ds, _, err := bench.CheckDatasetFiles(t.TempDir(), "fb/textkit", files)
	if err != nil {
		t.Fatal(err)
	}
	return ds, ds.Instance(instance)
}

// TestNeedlesOf: the needles of a masked instance are what its mask
// removes, out of its test files: lines, literals, names, files.
func TestNeedlesOf(t *testing.T) {
	ds, in := fixture(t)
	n := leakscan.NeedlesOf(ds, in)
	if len(n.Lines) == 0 || len(n.Literals) == 0 || len(n.Names) == 0 {
		t.Fatalf("needles: %+v", n)
	}
	if len(n.Files) == 0 || n.Files[0] != "textkit/roman.py" {
		t.Errorf("files: %v", n.Files)
	}
	for _, l := range n.Lines {
		if strings.Contains(in.Patch, "\n+"+l) && !strings.Contains(in.Patch, "-"+l) {
			t.Errorf("a line the mask adds: %q", l)
		}
	}
}

// dockerQuote quotes s for a Dockerfile's LABEL or ENV value.
func dockerQuote(s string) string { return strconv.Quote(s) }

// build builds a Dockerfile on the engine, removed when the test ends.
func build(t *testing.T, eng *container.Engine, dockerfile string, files []container.File) string {
	t.Helper()
	ref := fmt.Sprintf("featbench-test/leakscan:%d", time.Now().UnixNano())
	if err := eng.Build(context.Background(), ref, dockerfile, files, map[string]string{"featbench.kind": "test"}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.RemoveImage(context.Background(), ref) })
	return ref
}

// scanImage saves ref and scans it.
func scanImage(t *testing.T, eng *container.Engine, ref string, n leakscan.Needles) *leakscan.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rc, err := eng.SaveImage(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rep, err := leakscan.ScanImage(ctx, rc, []leakscan.Needles{n})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// scanStartingPoint takes a container of ref to the instance's starting
// point, as grading and eval infer do, and scans its file system.
func scanStartingPoint(t *testing.T, eng *container.Engine, ref string, ds *bench.Dataset, in *bench.Instance) *leakscan.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	box, err := eng.Start(ctx, container.Spec{Image: ref, Name: "featbench-test", WorkDir: "/testbed",
		Labels: map[string]string{evaluate.LabelProject: "1", evaluate.LabelKind: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer box.Remove()
	if _, err := evaluate.StartingPoint(ctx, box, ds, in, io.Discard); err != nil {
		t.Fatal(err)
	}
	rc, err := box.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rep, err := leakscan.ScanFS(ctx, rc, []leakscan.Needles{leakscan.NeedlesOf(ds, in)})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// find is the finding of kind at a path (by suffix), or nil.
func find(rep *leakscan.Report, kind, path string) *leakscan.Finding {
	for i, f := range rep.Findings {
		if f.Kind == kind && strings.Contains(f.Path, path) {
			return &rep.Findings[i]
		}
	}
	return nil
}

func describe(rep *leakscan.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "  %s %s (layer %d): %d, reaches %v: %s [%q]\n", f.Kind, f.Path, f.Layer, f.Matches, f.Reaches, f.Why, f.Sample)
	}
	return b.String()
}

// TestScanFeatureBenchImage: an image in FeatureBench's layout holds the
// complete project by design (in /testbed, its .git and /root/my_repo);
// the scan finds the solution there and says none of it reaches the
// starting point, and the starting point the harness makes of it holds
// nothing of the solution.
func TestScanFeatureBenchImage(t *testing.T) {
	ds, in := fixture(t)
	n := leakscan.NeedlesOf(ds, in)
	eng, base := imagestest.Base(t)
	ref := build(t, eng, fmt.Sprintf(imagestest.FeatureBenchLayout, base, ""), imagestest.SourceFiles(t, filepath.Join("..", "..", "examples", "textkit")))
	rep := scanImage(t, eng, ref, n)
	for _, want := range []struct{ kind, path string }{
		{leakscan.InFile, "/testbed/textkit/roman.py"},
		{leakscan.InFile, "/root/my_repo/textkit/roman.py"},
		{leakscan.InGit, "/testbed/.git"},
		{leakscan.InGit, "/root/my_repo/.git"},
	} {
		if f := find(rep, want.kind, want.path); f == nil || f.Reaches {
			t.Errorf("%s %s: %+v, want a finding that does not reach the starting point\n%s", want.kind, want.path, f, describe(rep))
		}
	}
	if r := rep.Reaching(); len(r) > 0 {
		t.Errorf("the clean image's findings reach the starting point:\n%s", describe(rep))
	}
	if sp := scanStartingPoint(t, eng, ref, ds, in); len(sp.Findings) > 0 {
		t.Errorf("the starting point holds the solution:\n%s", describe(sp))
	}
}

// TestScanAttacks hides the solution in an image in FeatureBench's layout
// the ways a published image could hold it, and checks that the image's
// scan finds each, says which reach the starting point, and that the
// starting point's own scan finds those:
//
//   - in a file a later layer deletes (published, not in a container);
//   - compiled, in a .pyc of a copy installed in the environment's
//     site-packages, whose text holds no source line;
//   - in a wheel of the complete project (a zip, as pip keeps it), whose
//     build leaves a copy in the project's build/ folder, which the harness
//     restores into /testbed with the rest of /root/my_repo;
//   - in a second git repository (a mirror of the history);
//   - in a label, in a step's command, in an ENV value (which every
//     container has).
func TestScanAttacks(t *testing.T) {
	ds, in := fixture(t)
	n := leakscan.NeedlesOf(ds, in)
	line, doc := n.Lines[len(n.Lines)/2], n.Literals[0]
	site := "/opt/miniconda3/envs/testbed/lib/python3.11/site-packages"
	attacks := strings.Join([]string{
		"RUN cp /testbed/textkit/roman.py /opt/solution.py",
		"RUN rm /opt/solution.py",
		"RUN mkdir -p " + site + "/textkit/__pycache__ && /opt/miniconda3/envs/testbed/bin/python -c \"import py_compile; py_compile.compile('/root/my_repo/textkit/roman.py', cfile='" + site + "/textkit/__pycache__/roman.cpython-311.pyc', doraise=True)\"",
		"RUN mkdir -p /var/cache/wheels && cd /root/my_repo && pip wheel -q --no-deps --no-build-isolation -w /var/cache/wheels .",
		"RUN git clone -q --bare /root/my_repo /opt/mirror.git",
		"LABEL org.example.hint=" + dockerQuote(line),
		"RUN echo " + shQuote(doc) + " > /dev/null",
		"ENV HINT=" + dockerQuote(line),
	}, "\n") + "\n"
	eng, base := imagestest.Base(t)
	ref := build(t, eng, fmt.Sprintf(imagestest.FeatureBenchLayout, base, attacks), imagestest.SourceFiles(t, filepath.Join("..", "..", "examples", "textkit")))
	rep := scanImage(t, eng, ref, n)
	for _, want := range []struct {
		kind, path string
		reaches    bool
		why        string
	}{
		{leakscan.InFile, "/opt/solution.py", false, "deleted or replaced by a later layer"},
		{leakscan.InPyc, site + "/textkit/__pycache__/roman.cpython-311.pyc", true, "keeps"},
		{leakscan.InFile, "-py3-none-any.whl!/textkit/roman.py", true, "keeps"},
		// pip wheel leaves build/ in the copy the harness restores from.
		{leakscan.InFile, "/root/my_repo/build/lib/textkit/roman.py", true, "restored into /testbed/build/lib/textkit/roman.py"},
		{leakscan.InGit, "/opt/mirror.git", true, "git repository"},
		{leakscan.InLabel, "org.example.hint", false, "label"},
		{leakscan.InHistory, "step", false, "history"},
		{leakscan.InEnv, "HINT", true, "environment"},
	} {
		f := find(rep, want.kind, want.path)
		if f == nil || f.Reaches != want.reaches || !strings.Contains(f.Why, want.why) {
			t.Errorf("%s %s: %+v; want one that reaches the starting point: %v (%q)", want.kind, want.path, f, want.reaches, want.why)
		}
	}
	if t.Failed() {
		t.Logf("the image's findings:\n%s", describe(rep))
	}
	sp := scanStartingPoint(t, eng, ref, ds, in)
	for _, want := range []struct{ kind, path string }{
		{leakscan.InPyc, site + "/textkit/__pycache__/roman.cpython-311.pyc"},
		{leakscan.InFile, ".whl!/textkit/roman.py"},
		{leakscan.InGit, "/opt/mirror.git"},
		{leakscan.InFile, "/testbed/build/lib/textkit/roman.py"},
		// The starting point's own commit, of build/ too.
		{leakscan.InGit, "/testbed/.git"},
	} {
		if find(sp, want.kind, want.path) == nil {
			t.Errorf("the starting point's scan missed %s %s:\n%s", want.kind, want.path, describe(sp))
		}
	}
	for _, f := range sp.Findings {
		if strings.HasPrefix(f.Path, "/root/my_repo") || strings.HasPrefix(f.Path, "/opt/solution.py") || f.Path == "/testbed/textkit/roman.py" {
			t.Errorf("the starting point holds %s, which the harness removes (or a later layer deleted)", f.Path)
		}
	}
}

// shQuote quotes s for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
