package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/testenv"
)

// checkWhole regrades every attempt of a run folder that has a report, as
// validate would from its logs: an attempt counted (its report written)
// must have every file whole. It returns how many had a report.
func checkWhole(t *testing.T, root, runDir string) int {
	t.Helper()
	data, err := bench.LoadDatasets(t.Context(), filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Dataset("example/v4")
	counted := 0
	ids, _ := os.ReadDir(runDir)
	for _, id := range ids {
		in := ds.Instance(id.Name())
		if !id.IsDir() || in == nil {
			continue
		}
		adir := filepath.Join(runDir, id.Name(), "attempt-1")
		rep, err := evaluate.ReadReport(adir)
		if err != nil {
			continue // not counted: a later run evaluates it again
		}
		counted++
		files := map[string][]byte{}
		entries, _ := os.ReadDir(filepath.Join(adir, evaluate.TestsDir))
		for _, e := range entries {
			raw, err := os.ReadFile(filepath.Join(adir, evaluate.TestsDir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = raw
		}
		again, err := evaluate.Regrade(ds, in, *rep, files)
		if err != nil {
			t.Errorf("%s: counted, but its logs do not regrade: %v", in.InstanceID, err)
			continue
		}
		if again.Resolved != rep.Resolved || strings.Join(again.FailureModes, ",") != strings.Join(rep.FailureModes, ",") {
			t.Errorf("%s: counted as resolved %v %v, its logs give %v %v: a file was cut", in.InstanceID, rep.Resolved, rep.FailureModes, again.Resolved, again.FailureModes)
		}
		if _, err := os.Stat(filepath.Join(adir, evaluate.PredFile)); err != nil {
			t.Errorf("%s: counted without its prediction: %v", in.InstanceID, err)
		}
	}
	return counted
}

// TestRunFileSizeLimit: with a file size limit that cuts some attempts'
// test outputs (ulimit -f), eval run ends non-zero naming the files it
// could not write, and counts no attempt whose files are not whole; run
// again without the limit, it finishes what was not saved.
func TestRunFileSizeLimit(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	root := copyProject(t)
	bin := evalBinary(t)
	args := []string{"run", "--root", root, "--dataset", "example/v4", "--split", "lite", "--gold", "--run-id", "limited"}
	cmd := exec.Command("bash", append([]string{"-c", `ulimit -f 30 && exec "$@"`, "bash", bin}, args...)...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("with ulimit -f 30: %v; want a non-zero exit\n%s", err, out)
	}
	if !strings.Contains(string(out), "could not be saved whole") || !strings.Contains(string(out), "file too large") {
		t.Errorf("the error does not say which files could not be written:\n%s", out)
	}
	runDir := filepath.Join(root, "runs", "limited")
	counted := checkWhole(t, root, runDir)
	if counted == 6 {
		t.Errorf("every attempt was counted under the limit: the limit cut nothing, and this test proves nothing")
	}
	// Without the limit, the same command resumes what was not saved.
	cmd = exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "6 of 6 instances resolved") {
		t.Fatalf("again without the limit: %v\n%s", err, out)
	}
	if n := checkWhole(t, root, runDir); n != 6 {
		t.Errorf("%d attempts counted after the second run, want 6", n)
	}
}

// TestRunFullDisk: the run folder on a tmpfs too small for it; the same
// promise as under a file size limit. Mounting needs root.
func TestRunFullDisk(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	root := copyProject(t)
	runs := filepath.Join(root, "runs")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", runs, "tmpfs", 0, "size=150k"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(runs, syscall.MNT_DETACH) })
	t.Setenv("DOCKER_HOST", host)
	out, errOut, code := runEval(t, "run", "--root", root, "--dataset", "example/v4", "--split", "full", "--gold", "--run-id", "full-disk")
	if code == 0 {
		t.Fatalf("on a full disk: exit 0\n%s%s", out, errOut)
	}
	if !strings.Contains(errOut, "no space left on device") {
		t.Errorf("the error does not name the write that failed:\n%s", errOut)
	}
	if n := checkWhole(t, root, filepath.Join(runs, "full-disk")); n == 27 {
		t.Errorf("every attempt counted on a 150 KB disk: this test proves nothing")
	}
}

func errorsAs(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}

// TestRunLocked: a second eval run of a run id another process is running
// is refused, saying who holds it; once that process is gone (killed, here),
// the run id is free again and the second run resumes what was saved.
func TestRunLocked(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	root := copyProject(t)
	bin := evalBinary(t)
	args := []string{"run", "--root", root, "--dataset", "example/v4", "--split", "lite", "--gold", "--run-id", "locked"}
	first := exec.Command(bin, args...)
	first.Env = append(os.Environ(), "DOCKER_HOST="+host)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	lock := filepath.Join(root, "runs", "locked", ".lock")
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if raw, _ := os.ReadFile(lock); strings.Contains(string(raw), "eval run locked, process ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first run never took its lock")
		}
		time.Sleep(50 * time.Millisecond)
	}
	second := exec.Command(bin, args...)
	second.Env = first.Env
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the run is held by another process: eval run locked, process "+strconv.Itoa(first.Process.Pid)) {
		t.Fatalf("a second run of the same id: %v\n%s", err, out)
	}
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	third := exec.Command(bin, args...)
	third.Env = first.Env
	out, err = third.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "6 of 6 instances resolved") {
		t.Fatalf("after the first was killed: %v\n%s", err, out)
	}
}
