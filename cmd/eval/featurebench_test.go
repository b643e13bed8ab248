package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/collect"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/fbimport"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/registry"
	"github.com/featbench/featbench/internal/testenv"
)

// fbImage is the name examples/featurebench/textkit.jsonl gives its
// instances' image, as FeatureBench names its own.
const fbImage = "featbench/featurebench-specs_textkit-instance_v4"

// importFixture builds textkit's image in FeatureBench's layout (with the
// Dockerfile lines extra), pushes it to the local registry under the name
// the fixture gives it, and imports the fixture into the project at root
// as the dataset fb/textkit, as `collect import --registry … --pin` does:
// the images taken from the local registry, pinned by the digest it
// gives. It returns the pinned image.
func importFixture(t *testing.T, root, extra string) string {
	t.Helper()
	reg := testenv.Registry(t)
	eng, base := imagestest.Base(t)
	pinned := imagestest.FeatureBenchImage(t, eng, base, filepath.Join("..", "..", "examples", "textkit"), reg.Open+"/"+fbImage, extra)
	fixture := filepath.Join("..", "..", "examples", "featurebench", "textkit.jsonl")
	raw, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	keys := registry.Keychain{Dir: t.TempDir()}
	files, err := fbimport.Convert(context.Background(), fixture, raw, fbimport.Options{
		Name: "fb", Version: "textkit", ReleaseDate: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC), Registry: reg.Open,
		Pin: func(ctx context.Context, ref string) (string, error) {
			r, _ := registry.Parse(ref)
			auth, err := keys.AuthHeader(ctx, r)
			if err != nil {
				return "", err
			}
			return eng.RemoteDigest(ctx, ref, auth)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(files["instances.jsonl"]), pinned[strings.Index(pinned, "@"):]) {
		t.Fatalf("the imported instances do not pin the image to %s", pinned)
	}
	if err := collect.Publish(filepath.Join(root, "data"), "fb/textkit", files); err != nil {
		t.Fatal(err)
	}
	return pinned
}

// fbInstanceReport reads an attempt's report in FeatureBench's format.
func fbInstanceReport(t *testing.T, run, id string) evaluate.FBReport {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(run, evaluate.FeatureBenchDir, "eval_outputs", id, "attempt-1", evaluate.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]evaluate.FBReport
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	r, ok := m[id]
	if !ok {
		t.Fatalf("FeatureBench's report of %s is keyed %v", id, m)
	}
	return r
}

// TestGradeFeatureBenchFormat grades FeatureBench-format instances of the
// example repository (examples/featurebench/textkit.jsonl) from their
// image in FeatureBench's layout, pulled from the local registry by its
// digest: the gold patches resolve, the empty one does not, and the
// FeatureBench-format report of every instance agrees with this harness's
// (resolved, applied, the fail-to-pass pass rate).
func TestGradeFeatureBenchFormat(t *testing.T) {
	t.Setenv("DOCKER_HOST", testenv.DockerHost(t))
	root := copyProject(t)
	pinned := importFixture(t, root, "")
	ids := []string{"featbench__textkit.test_case.3f4c65e3.lv1", "featbench__textkit.test_pipeline.1f1811e3.lv1",
		"featbench__textkit.test_roman.0e26fade.lv1", "featbench__textkit.test_slug.25585a9f.lv1"}
	for _, baseline := range []string{"--gold", "--empty"} {
		id := "fb" + strings.TrimPrefix(baseline, "-") + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		args := []string{"run", "--root", root, "--dataset", "fb/textkit", baseline, "--run-id", id}
		for _, in := range ids {
			args = append(args, "--instance", in)
		}
		_, errOut, code := runEval(t, args...)
		if code != 0 {
			t.Fatalf("eval run %s: exit %d\n%s", baseline, code, errOut)
		}
		gold := baseline == "--gold"
		run := filepath.Join(root, "runs", id)
		// The pulled image was scanned first: its solutions are where
		// FeatureBench's layout keeps them, none in a starting point.
		if !strings.Contains(errOut, "leak scan of "+pinned) || !strings.Contains(errOut, "0 of them in the starting point") {
			t.Errorf("eval run did not scan the pulled image, or found a leak:\n%s", errOut)
		}
		if _, err := os.Stat(filepath.Join(run, LeakScanFile)); err != nil {
			t.Error(err)
		}
		resolved, completed := runCounts(t, run)
		if want := map[bool]int{true: len(ids), false: 0}[gold]; completed != len(ids) || resolved != want {
			t.Errorf("%s: %d of %d resolved; want %d\n%s", baseline, resolved, completed, want, errOut)
		}
		for _, in := range ids {
			ours, err := evaluate.ReadReport(filepath.Join(run, in, "attempt-1"))
			if err != nil {
				t.Fatal(err)
			}
			if ours.Image != pinned {
				t.Errorf("%s graded in %s, not the pulled %s", in, ours.Image, pinned)
			}
			// Graded as FeatureBench lays its images out: /testbed from
			// /root/my_repo, the tests with the image's own Python.
			clog, err := os.ReadFile(filepath.Join(run, in, "attempt-1", evaluate.LogFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"cp -r /root/my_repo/* /testbed/", fbimport.DefaultInterpreter + " -I -c", "--timeout=10"} {
				if !strings.Contains(string(clog), want) {
					t.Errorf("%s %s: the container's log has no %q", baseline, in, want)
				}
			}
			fb := fbInstanceReport(t, run, in)
			if fb.Resolved != ours.Resolved || fb.PassRate != ours.PassedRate {
				t.Errorf("%s %s: FeatureBench's report says resolved %v, pass rate %v; ours %v, %v", baseline, in, fb.Resolved, fb.PassRate, ours.Resolved, ours.PassedRate)
			}
			// FeatureBench runs nothing for an empty patch.
			if fb.PatchApplied != gold || fb.PatchExists != gold || (len(fb.TestsStatus.FailToPass.Success) > 0) != gold {
				t.Errorf("%s %s: FeatureBench's report %+v", baseline, in, fb)
			}
			if gold && (len(fb.TestsStatus.FailToPass.Failure) > 0 || len(fb.TestsStatus.PassToPass.Failure) > 0 || len(fb.TestsStatus.PassToPass.Success) == 0) {
				t.Errorf("%s: the gold patch's tests in FeatureBench's report: %+v", in, fb.TestsStatus)
			}
		}
		var sum map[string]evaluate.FBSummary
		raw, err := os.ReadFile(filepath.Join(run, evaluate.FeatureBenchDir, evaluate.RunReportFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &sum); err != nil {
			t.Fatal(err)
		}
		s := sum["attempt_1"]
		if s.ResolvedInstances != resolved || s.CompletedInstances != len(ids) || (!gold && s.NotAppliedPatchEmptyInstances != len(ids)) {
			t.Errorf("%s: FeatureBench's summary %+v", baseline, s)
		}
		// eval compare pairs them; a FeatureBench report that says
		// otherwise (as its own harness's might) is a disagreement.
		out, errOut, code := runEval(t, "compare", id, "--root", root)
		if code != 0 || !strings.Contains(out, fmt.Sprintf("%d of %d attempts agree", len(ids), len(ids))) {
			t.Errorf("eval compare %s: exit %d\n%s%s", id, code, out, errOut)
		}
		theirs := t.TempDir()
		if err := os.CopyFS(theirs, os.DirFS(filepath.Join(run, evaluate.FeatureBenchDir))); err != nil {
			t.Fatal(err)
		}
		flipped := filepath.Join(theirs, "eval_outputs", ids[1], "attempt-1", evaluate.ReportFile)
		raw, err = os.ReadFile(flipped)
		if err != nil {
			t.Fatal(err)
		}
		was, now := fmt.Sprintf(`"resolved": %v`, gold), fmt.Sprintf(`"resolved": %v`, !gold)
		if !strings.Contains(string(raw), was) {
			t.Fatalf("%s holds no %s:\n%s", flipped, was, raw)
		}
		os.WriteFile(flipped, []byte(strings.Replace(string(raw), was, now, 1)), 0o644)
		out, _, code = runEval(t, "compare", id, "--root", root, "--featurebench", theirs)
		if code != 1 || !strings.Contains(out, ids[1]) || !strings.Contains(out, "disagree") || !strings.Contains(out, fmt.Sprintf("%d of %d attempts agree", len(ids)-1, len(ids))) {
			t.Errorf("eval compare with a disagreeing report: exit %d\n%s", code, out)
		}
	}
}

// TestLeakScanOfPulledImages: an image in FeatureBench's layout that also
// keeps a compiled copy of the complete package in its environment's
// site-packages (a non-editable install would) is graded, but eval run's
// scan of it says where that copy is, and `eval images --scan` fails
// naming the starting points that hold it.
func TestLeakScanOfPulledImages(t *testing.T) {
	t.Setenv("DOCKER_HOST", testenv.DockerHost(t))
	root := copyProject(t)
	site := "/opt/miniconda3/envs/testbed/lib/python3.11/site-packages"
	importFixture(t, root, "RUN mkdir -p "+site+"/textkit && cp /root/my_repo/textkit/*.py "+site+"/textkit/ && /opt/miniconda3/envs/testbed/bin/python -m compileall -q "+site+"/textkit && rm "+site+"/textkit/*.py\n")
	in := "featbench__textkit.test_roman.0e26fade.lv1"
	id := "fbleak-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	_, errOut, code := runEval(t, "run", "--root", root, "--dataset", "fb/textkit", "--empty", "--run-id", id, "--instance", in)
	if code != 0 {
		t.Fatalf("eval run: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "! "+in+" pyc "+site+"/textkit/__pycache__/roman.cpython-311.pyc") {
		t.Errorf("eval run's leak scan does not show the compiled copy:\n%s", errOut)
	}
	out, errOut, code := runEval(t, "images", "--root", root, "--build", "--scan", "--dataset", "fb/textkit", "--instance", in)
	if code != 1 || !strings.Contains(errOut, "1 of 1 starting points hold some of their solution") || !strings.Contains(out, "the starting point of "+in) || !strings.Contains(out, "roman.cpython-311.pyc") {
		t.Errorf("eval images --scan: exit %d\n%s%s", code, out, errOut)
	}
}

// TestGradeFeatureBenchFormatOnSwarm grades gold predictions of the
// FeatureBench-format fixture with backend = "swarm": the image pulled by
// its digest from the local registry is pushed to the swarm's and the
// nodes run it; both reports agree, as on the local engine.
func TestGradeFeatureBenchFormatOnSwarm(t *testing.T) {
	t.Setenv("DOCKER_HOST", testenv.DockerHost(t))
	manager, registry, push := testenv.Swarm(t)
	root := copyProject(t)
	importFixture(t, root, "")
	useSwarm(t, root, manager, registry, push)
	ids := []string{"featbench__textkit.test_roman.0e26fade.lv1", "featbench__textkit.test_slug.25585a9f.lv1"}
	id := "fbswarm-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	args := []string{"run", "--root", root, "--dataset", "fb/textkit", "--gold", "--run-id", id}
	for _, in := range ids {
		args = append(args, "--instance", in)
	}
	_, errOut, code := runEval(t, args...)
	if code != 0 || !strings.Contains(errOut, "the swarm at "+manager) {
		t.Fatalf("eval run on the swarm: exit %d\n%s", code, errOut)
	}
	run := filepath.Join(root, "runs", id)
	if resolved, completed := runCounts(t, run); resolved != len(ids) || completed != len(ids) {
		t.Errorf("%d of %d resolved\n%s", resolved, completed, errOut)
	}
	for _, in := range ids {
		ours, err := evaluate.ReadReport(filepath.Join(run, in, "attempt-1"))
		if err != nil {
			t.Fatal(err)
		}
		if fb := fbInstanceReport(t, run, in); fb.Resolved != ours.Resolved || fb.PassRate != ours.PassedRate {
			t.Errorf("%s: FeatureBench's report %+v; ours resolved %v", in, fb, ours.Resolved)
		}
	}
}
