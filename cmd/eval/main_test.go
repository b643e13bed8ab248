package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/testenv"
)

// copyProject copies what eval needs of the repository into a fresh folder:
// featbench.toml, data/ and the example's source and predictions.
func copyProject(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	for _, p := range []string{"data", "examples/textkit", "examples/predictions"} {
		if err := os.CopyFS(filepath.Join(dst, p), os.DirFS(filepath.Join("..", "..", p))); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "featbench.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "featbench.toml"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// evalBinary builds cmd/eval once for the test.
func evalBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "eval")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func runEval(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"infer", "--help"}, {"run", "--help"}, {"submit", "--help"}, {"validate", "--help"}, {"images", "--help"}, {"clean", "--help"}, {"compare", "--help"}} {
		out, _, code := runEval(t, args...)
		if code != 0 || !strings.Contains(out, "usage: eval") {
			t.Errorf("eval %s: exit %d, output %q; want the usage and exit 0", strings.Join(args, " "), code, out)
		}
	}
	if _, errOut, code := runEval(t, "run", "--dataset", "example/v2"); code != 2 || !strings.Contains(errOut, "--gold") {
		t.Errorf("eval run without predictions: exit %d, %q; want a usage error naming the choices", code, errOut)
	}
	if _, errOut, code := runEval(t, "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
}

// TestValidateUsage: validate's usage errors, before anything is read.
func TestValidateUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"validate"}, "give the submission folder"},
		{[]string{"validate", "x", "--rerun", "--seed", "-3"}, `--seed "-3": want an unsigned integer`},
		{[]string{"validate", "x", "--seed", "many"}, `--seed "many"`},
	} {
		if _, errOut, code := runEval(t, c.args...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("eval %s: exit %d, %q; want a usage error with %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
}

// TestRunErrors: an unknown dataset, instance or a prediction for another
// dataset are clear errors before anything runs.
func TestRunErrors(t *testing.T) {
	root := copyProject(t)
	other := filepath.Join(t.TempDir(), "other.jsonl")
	if err := os.WriteFile(other, []byte(`{"instance_id": "django__django-11099", "model_name_or_path": "m", "model_patch": ""}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dataset", "nope/v9", "--gold"}, "no dataset nope/v9"},
		{[]string{"--dataset", "example/v2", "--gold", "--instance", "missing-1"}, "no such instance"},
		{[]string{"--dataset", "example/v2", "--predictions", other}, "predictions for another dataset"},
		{[]string{"--dataset", "featurebench/v1.0", "--gold"}, "publishes no instances"},
	} {
		args := append([]string{"run", "--root", root, "--run-id", "x"}, c.args...)
		_, errOut, code := runEval(t, args...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("eval %s: exit %d, %q; want an error with %q", strings.Join(args, " "), code, errOut, c.want)
		}
	}
}

// TestRunData: --data reads the datasets from a folder other than the
// configuration's, as one collect --data wrote outside the project.
func TestRunData(t *testing.T) {
	root := copyProject(t)
	elsewhere := filepath.Join(t.TempDir(), "data")
	if err := os.Rename(filepath.Join(root, "data"), elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--root", root, "--run-id", "x", "--dataset", "example/v2", "--gold", "--instance", "missing-1"}
	if _, errOut, code := runEval(t, args...); code != 1 || !strings.Contains(errOut, "no dataset example/v2 under "+filepath.Join(root, "data")) {
		t.Fatalf("without --data: exit %d, %q", code, errOut)
	}
	// Found there: the instance is the one missing.
	if _, errOut, code := runEval(t, append(args, "--data", elsewhere)...); code != 1 || !strings.Contains(errOut, "--instance missing-1: no such instance") {
		t.Errorf("with --data: exit %d, %q", code, errOut)
	}
}

// TestKilledRunResumes kills a real run (SIGKILL) once its first instance
// is done, runs the same command again, and checks that it skips what was
// done, removes what the killed run left running, and ends with the
// report an uninterrupted run gives.
func TestKilledRunResumes(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t) // the base image, built once per machine
	root := copyProject(t)
	bin := evalBinary(t)
	cmd := func(id string) *exec.Cmd {
		c := exec.Command(bin, "run", "--root", root, "--dataset", "example/v2", "--split", "full",
			"--predictions", filepath.Join(root, "examples", "predictions", "shell-loop.jsonl"), "--run-id", id)
		c.Env = append(os.Environ(), "DOCKER_HOST="+host)
		return c
	}
	// Run ids of this test alone: other tests run containers meanwhile.
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	whole, killed := "whole-"+suffix, "killed-"+suffix
	// Uninterrupted.
	if out, err := cmd(whole).CombinedOutput(); err != nil {
		t.Fatalf("eval run: %v\n%s", err, out)
	}
	// Killed after the first report, then run again.
	kcmd := cmd(killed)
	var log bytes.Buffer
	kcmd.Stdout, kcmd.Stderr = &log, &log
	if err := kcmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	first := ""
	for first == "" && time.Now().Before(deadline) {
		matches, _ := filepath.Glob(filepath.Join(root, "runs", killed, "*", "attempt-1", evaluate.ReportFile))
		if len(matches) > 0 {
			first = matches[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if first == "" {
		kcmd.Process.Kill()
		t.Fatalf("no instance finished within 5 minutes:\n%s", log.String())
	}
	if err := kcmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = kcmd.Wait()
	firstReport, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "runs", killed, evaluate.RunReportFile)); err == nil {
		t.Fatal("the killed run wrote its run report: it was not killed mid-run; the test proves nothing")
	}
	out, err := cmd(killed).CombinedOutput()
	if err != nil {
		t.Fatalf("eval run after the kill: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "done before") {
		t.Errorf("the resumed run did not skip the finished instance:\n%s", out)
	}
	again, err := os.ReadFile(first)
	if err != nil || !bytes.Equal(again, firstReport) {
		t.Errorf("the finished instance's report was rewritten by the resumed run")
	}
	w, r := runReport(t, filepath.Join(root, "runs", whole)), runReport(t, filepath.Join(root, "runs", killed))
	if !bytes.Equal(w, r) {
		t.Errorf("the resumed run's report differs from an uninterrupted run's:\n whole   %s\n resumed %s", w, r)
	}
	// Nothing of the whole run is left; the killed run's containers may be,
	// until its lease is stale (TestKilledRunLeavesNothing), and each
	// carries its lease.
	if out, err := exec.Command("docker", "-H", host, "ps", "-a", "-q", "--filter", "label=featbench.run="+whole).CombinedOutput(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("containers of run %s left behind: %s", whole, out)
	}
	out, err = exec.Command("docker", "-H", host, "ps", "-a", "-q", "--filter", "label=featbench.run="+killed).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if left := strings.Fields(string(out)); len(left) > 0 {
		leased, _ := exec.Command("docker", "-H", host, "ps", "-a", "-q", "--filter", "label=featbench.run="+killed, "--filter", "label=featbench.lease").CombinedOutput()
		if len(strings.Fields(string(leased))) != len(left) {
			t.Errorf("containers of the killed run %s without a lease: %s", killed, out)
		}
		exec.Command("docker", append([]string{"-H", host, "rm", "-f"}, left...)...).Run()
	}
}

// runReport is a run's report.json without its timings.
func runReport(t *testing.T, dir string) []byte {
	t.Helper()
	var m map[string]any
	raw, err := os.ReadFile(filepath.Join(dir, evaluate.RunReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "seconds")
	delete(m, "overhead_seconds")
	out, _ := json.Marshal(m)
	return out
}

// TestSubmitAndValidate: a run becomes a submission folder for its split
// and the smaller one it covers; validate accepts it, and catches a
// results.jsonl edited to claim a resolution its logs do not show.
func TestSubmitAndValidate(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	t.Setenv("DOCKER_HOST", host)
	root := copyProject(t)
	if _, errOut, code := runEval(t, "run", "--root", root, "--dataset", "example/v2", "--split", "full",
		"--predictions", filepath.Join(root, "examples", "predictions", "tiny-agent.jsonl"), "--run-id", "tiny"); code != 0 {
		t.Fatalf("eval run: exit %d\n%s", code, errOut)
	}
	// As a reference row: tiny-agent copies the gold patch on some
	// instances, and bench's rule on gold copies is not this test's.
	out, errOut, code := runEval(t, "submit", "tiny", "--root", root, "--slug", "new-agent", "--name", "New Agent", "--scaffold", "S", "--model", "M",
		"--date", "2026-11-23", "--org", "Lab", "--reference")
	if code != 0 {
		t.Fatalf("eval submit: exit %d\n%s%s", code, out, errOut)
	}
	full := filepath.Join(root, "data", "submissions", "example", "v2", "full", "20261123_new-agent")
	lite := filepath.Join(root, "data", "submissions", "example", "v2", "lite", "20261123_new-agent")
	if !strings.Contains(out, "next: check it as the pull-request gate will") || !strings.Contains(out, "go run ./cmd/eval validate "+full) {
		t.Errorf("submit prints no next step:\n%s", out)
	}
	for _, dir := range []string{full, lite} {
		for _, f := range []string{"metadata.toml", "results.jsonl", "predictions.jsonl", "logs.tar.gz"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("the submission lacks %s", filepath.Join(dir, f))
			}
		}
		if _, errOut, code := runEval(t, "validate", dir, "--root", root); code != 0 {
			t.Errorf("validate %s: exit %d\n%s", dir, code, errOut)
		}
	}
	// --rerun evaluates a seeded sample of eval.rerun_sample instances
	// again: two here, the same two for the same seed.
	cfg := filepath.Join(root, "featbench.toml")
	raw, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(raw), "[eval]\n", "[eval]\nrerun_sample = 2\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runEval(t, "validate", lite, "--root", root, "--rerun", "--seed", "1")
	if code != 0 || !strings.Contains(out, "and 2 of them with a new evaluation (seed 1") || !strings.Contains(errOut, "re-running 2 instances") {
		t.Errorf("validate --rerun --seed 1: exit %d\n%s%s\nwant 2 instances re-run and agreeing", code, out, errOut)
	}
	// Without --seed the seed is drawn, nothing the submitter chose, and
	// printed so that the sample can be drawn again.
	out, errOut, code = runEval(t, "validate", lite, "--root", root, "--rerun")
	if m := regexp.MustCompile(`\(seed (\d+); --seed (\d+) draws this sample again\)`).FindStringSubmatch(errOut); code != 0 || m == nil || m[1] != m[2] || m[1] == "1" {
		t.Errorf("validate --rerun: exit %d\n%s%s\nwant a drawn seed, printed", code, out, errOut)
	}
	meta, _ := os.ReadFile(filepath.Join(full, "metadata.toml"))
	if !strings.Contains(string(meta), "date = 2026-11-23\n") {
		t.Errorf("metadata.toml does not give a bare date:\n%s", meta)
	}
	// Edit a line to claim what the logs do not show: the unresolved
	// wrap-fill instance as resolved, its test lists edited to agree, so
	// that build --check accepts it and only the logs can tell.
	res := filepath.Join(full, "results.jsonl")
	raw, err = os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	edited := false
	for i, l := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r["instance_id"] != "featbench__textkit.test_wrap.812f8b16.lv2" {
			continue
		}
		passed := append(r["f2p_passed"].([]any), r["f2p_failed"].([]any)...)
		r["f2p_passed"], r["f2p_failed"], r["resolved"] = passed, []any{}, true
		delete(r, "failure_modes")
		b, _ := json.Marshal(r)
		lines[i], edited = string(b), true
	}
	if !edited {
		t.Fatal("no line of the wrap instance to edit")
	}
	if err := os.WriteFile(res, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runEval(t, "validate", full, "--root", root)
	if code == 0 || !strings.Contains(errOut, "featbench__textkit.test_wrap.812f8b16.lv2") || !strings.Contains(errOut, `field "resolved"`) {
		t.Errorf("validate of an edited results.jsonl: exit %d\n%s\nwant a failure naming the instance and the field resolved", code, errOut)
	}
	// A token count edited in results.jsonl: the logs' reports say otherwise.
	lines = strings.Split(strings.TrimSpace(string(raw)), "\n")
	for i, l := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r["instance_id"] == "featbench__textkit.test_wrap.812f8b16.lv2" {
			n, _ := r["tokens_in"].(float64)
			r["tokens_in"] = n + 1
			b, _ := json.Marshal(r)
			lines[i] = string(b)
		}
	}
	if err := os.WriteFile(res, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runEval(t, "validate", full, "--root", root)
	if code == 0 || !strings.Contains(errOut, "featbench__textkit.test_wrap.812f8b16.lv2: field \"tokens_in\"") {
		t.Errorf("validate of an edited token count: exit %d\n%s\nwant a failure naming the instance and tokens_in", code, errOut)
	}
	// Without logs: only as reported figures.
	if err := os.Remove(filepath.Join(lite, "logs.tar.gz")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runEval(t, "validate", lite, "--root", root); code == 0 || !strings.Contains(errOut, "no logs.tar.gz") {
		t.Errorf("validate without logs: exit %d, %q", code, errOut)
	}
}
