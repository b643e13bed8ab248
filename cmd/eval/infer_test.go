package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/testenv"
)

// The instances the agents are run on: a level 1 and a level 2 instance of
// example/v3's lite split.
const (
	inferL1 = "featbench__textkit.test_table.b62a9c74.lv1"
	inferL2 = "featbench__textkit.test_table.b62a9c74.lv2"
	// doubleModel is the model the agents ask the LLM test double for;
	// its price is added to the copied featbench.toml.
	doubleModel = "double-model"
)

// doublePrice is featbench.toml's price of the test double's model.
const doublePrice = `
[prices."double-model"]
input = 2.0
cached_input = 0.5
output = 8.0

[[agents]]
name = "shell-loop-limited"
install = "agents/shell-loop"
api = "openai"
upstream = "http://127.0.0.1:9"
api_key_env = "FEATBENCH_TEST_UPSTREAM_KEY"
command = 'python3 -I /opt/featbench/agent/agent.py'
timeout = "5m"
max_turns = 2

[[agents]]
name = "shell-loop-short"
install = "agents/shell-loop"
api = "openai"
upstream = "http://127.0.0.1:9"
command = 'python3 -I /opt/featbench/agent/agent.py'
timeout = "20s"
`

// inferProject is copyProject with the agents' install folders, the
// double's price and a limited agent.
func inferProject(t *testing.T) string {
	t.Helper()
	root := copyProject(t)
	if err := os.CopyFS(filepath.Join(root, "agents"), os.DirFS(filepath.Join("..", "..", "agents"))); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(root, "featbench.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(doublePrice); err != nil {
		t.Fatal(err)
	}
	// The agents' packages are cached in the repository's .cache, shared
	// by the tests and kept between runs, as eval keeps them.
	if err := os.MkdirAll(filepath.Join("..", "..", ".cache", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(filepath.Join("..", "..", ".cache"))
	if err := os.Symlink(abs, filepath.Join(root, ".cache")); err != nil {
		t.Fatal(err)
	}
	return root
}

// solution is the files an instance's gold patch leaves, by path in the
// agent's folder: level 1, the complete project's files the patch
// touches; level 2, the package the patch adds.
func solution(t *testing.T, root, id string) map[string]string {
	t.Helper()
	ds := exampleV3(t, root)
	in := ds.Instance(id)
	out := map[string]string{}
	var file string
	var lines []string
	flush := func() {
		if file != "" {
			out[file] = strings.Join(lines, "\n") + "\n"
		}
		file, lines = "", nil
	}
	for _, l := range strings.Split(in.Patch, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			flush()
		case strings.HasPrefix(l, "+++ b/"):
			file = strings.TrimPrefix(l, "+++ b/")
		case strings.HasPrefix(l, "+") && file != "":
			lines = append(lines, l[1:])
		}
	}
	flush()
	if in.Level == 1 {
		for p := range out {
			raw, err := os.ReadFile(filepath.Join(root, "examples", "textkit", p))
			if err != nil {
				t.Fatal(err)
			}
			out[p] = string(raw)
		}
	}
	return out
}

func exampleV3(t *testing.T, root string) *bench.Dataset {
	t.Helper()
	data, err := bench.LoadDatasets(t.Context(), filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	return data.Dataset("example/v3")
}

// marker is what tells the double which instance a conversation is
// about: the first line of the statement's task, and a phrase of its
// level's (the level 1 and level 2 statements of a test file start
// alike; only level 2's asks for the package agent_code).
type marker [2]string

func (m marker) in(text string) bool {
	return strings.Contains(text, m[0]) && strings.Contains(text, m[1])
}

func markerOf(t *testing.T, root, id string) marker {
	st := exampleV3(t, root).Instance(id).ProblemStatement
	i := strings.Index(st, "Implement ")
	task := st[i : i+strings.IndexByte(st[i:], '\n')]
	if strings.HasSuffix(id, ".lv2") {
		return marker{task, "Build this from scratch"}
	}
	return marker{task, "The code of `textkit` is in"}
}

// heredocs is a bash command that writes files.
func heredocs(dir string, files map[string]string) string {
	var b strings.Builder
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := dir + "/" + p
		fmt.Fprintf(&b, "mkdir -p %s && cat > %s <<'FEATBENCH_EOF'\n%sFEATBENCH_EOF\n", filepath.Dir(full), full, files[p])
	}
	return b.String()
}

// shellLoopScript is the LLM test double's script for the shell-loop
// agent: for each instance, one command that writes the solution, then
// DONE.
func shellLoopScript(t *testing.T, root string, ids ...string) llmdouble.Script {
	type job struct {
		marker marker
		cmd    string
	}
	var jobs []job
	for _, id := range ids {
		dir := "/testbed"
		if strings.HasSuffix(id, ".lv2") {
			dir = "/agent"
		}
		jobs = append(jobs, job{markerOf(t, root, id), heredocs(dir, solution(t, root, id))})
	}
	return func(r llmdouble.Request) llmdouble.Reply {
		if strings.Contains(r.Last, "exit status") {
			return llmdouble.Reply{Text: "DONE"}
		}
		for _, j := range jobs {
			if j.marker.in(r.Text) {
				return llmdouble.Reply{Text: "Writing the feature.\n```bash\n" + j.cmd + "```\n"}
			}
		}
		return llmdouble.Reply{Text: "DONE"}
	}
}

type predLine struct {
	InstanceID  string   `json:"instance_id"`
	Patch       string   `json:"model_patch"`
	TokensIn    int64    `json:"tokens_in"`
	TokensOut   int64    `json:"tokens_out"`
	Cost        *float64 `json:"cost"`
	Turns       int      `json:"turns"`
	Trajectory  string   `json:"trajectory"`
	Measured    bool     `json:"measured"`
	FailureMode string   `json:"failure_mode"`
}

func readPreds(t *testing.T, path string) map[string]predLine {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]predLine{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var p predLine
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		out[p.InstanceID] = p
	}
	return out
}

// checkServed: the predictions' tokens are what the double served, and
// their cost the price table's.
func checkServed(t *testing.T, preds map[string]predLine, served llmdouble.Usage) {
	t.Helper()
	var in, out int64
	var cost float64
	turns := 0
	for id, p := range preds {
		if !p.Measured || p.Cost == nil || p.Trajectory != "infer/"+id+"/trajectory.jsonl" {
			t.Errorf("%s: measured %v, cost %v, trajectory %q", id, p.Measured, p.Cost, p.Trajectory)
			continue
		}
		in, out, cost, turns = in+p.TokensIn, out+p.TokensOut, cost+*p.Cost, turns+p.Turns
	}
	if in != served.Input || out != served.Output || turns != served.Requests {
		t.Errorf("measured %d in, %d out, %d turns; the LLM test double served %d in, %d out in %d requests", in, out, turns, served.Input, served.Output, served.Requests)
	}
	want := (float64(served.Input-served.CachedInput)*2 + float64(served.CachedInput)*0.5 + float64(served.Output)*8) / 1e6
	if math.Abs(cost-want) > 1e-9 {
		t.Errorf("cost %v; the price table gives %v for what the double served", cost, want)
	}
}

// TestInferShellLoopWithLLMTestDouble: the example's shell-loop agent, as a
// configured agent, runs on the lite split of example/v3 (levels 1 and 2)
// in real containers against the LLM test double, which solves two
// instances and gives up on the rest; the diffs are graded by eval run
// (the two resolve); the tokens, turns and cost are what the double
// served; the upstream key reaches the double and never the container;
// eval submit carries the trajectories into the submission with the
// figures marked measured, validate accepts it, and catches a trajectory
// edited after the run.
func TestInferShellLoopWithLLMTestDouble(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	t.Setenv("DOCKER_HOST", host)
	root := inferProject(t)
	dbl, err := llmdouble.Start(shellLoopScript(t, root, inferL1, inferL2))
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	dbl.Cached = 4
	t.Setenv("OPENAI_API_KEY", "sk-featbench-test-upstream")
	out, errOut, code := runEval(t, "infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "shell-loop",
		"--model", doubleModel, "--upstream", dbl.URL, "--run-id", "shell", "--workers", "2")
	if code != 0 {
		t.Fatalf("eval infer: exit %d\n%s\n%s", code, out, errOut)
	}
	preds := readPreds(t, filepath.Join(root, "runs", "shell", "predictions.jsonl"))
	if len(preds) != 6 {
		t.Fatalf("%d predictions; want 6:\n%s", len(preds), errOut)
	}
	for id, p := range preds {
		solved := id == inferL1 || id == inferL2
		if p.FailureMode != "" || (p.Patch != "") != solved || strings.Contains(p.Patch, "tests/") {
			alog, _ := os.ReadFile(filepath.Join(root, "runs", "shell", "infer", id, "agent.log"))
			t.Errorf("%s: failure %q, patch:\n%s\nthe agent's output:\n%s", id, p.FailureMode, p.Patch, alog)
		}
	}
	served := dbl.Served()
	checkServed(t, preds, served)
	if fmt.Sprint(served.Keys) != "[Bearer sk-featbench-test-upstream]" {
		t.Errorf("the double got the keys %q; want only the proxy's", served.Keys)
	}
	for _, id := range []string{inferL1, inferL2} {
		traj, _ := os.ReadFile(filepath.Join(root, "runs", "shell", "infer", id, "trajectory.jsonl"))
		if bytes.Contains(traj, []byte("sk-featbench-test-upstream")) || !bytes.Contains(traj, []byte(`"kind":"openai.chat"`)) {
			t.Errorf("%s: the trajectory holds the key, or no exchange:\n%.500s", id, traj)
		}
	}

	// Graded by eval run: the two solved instances resolve.
	out, errOut, code = runEval(t, "run", "--root", root, "--dataset", "example/v3", "--split", "lite",
		"--predictions", filepath.Join(root, "runs", "shell", "predictions.jsonl"), "--run-id", "shell", "--workers", "2")
	if code != 0 || !strings.Contains(out, "2 of 6 instances resolved") {
		t.Fatalf("eval run: exit %d\n%s\n%s", code, out, errOut)
	}

	// Submitted: measured figures, with their trajectories.
	out, errOut, code = runEval(t, "submit", "shell", "--root", root, "--slug", "shell-loop-double", "--name", "Shell Loop + test double",
		"--scaffold", "Shell Loop", "--model", doubleModel, "--date", "2026-11-25")
	if code != 0 {
		t.Fatalf("eval submit: exit %d\n%s%s", code, out, errOut)
	}
	sub := filepath.Join(root, "data", "submissions", "example", "v3", "lite", "20261125_shell-loop-double")
	results, err := os.ReadFile(filepath.Join(sub, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(results), `"measured":true`); n != 6 {
		t.Errorf("%d of 6 results are marked measured:\n%s", n, results)
	}
	if _, errOut, code := runEval(t, "validate", sub, "--root", root); code != 0 {
		t.Fatalf("validate: exit %d\n%s", code, errOut)
	}
	// The site shows the figures as measured, and links the trajectories.
	page := buildSystemPage(t, root, "shell-loop-double")
	if !strings.Contains(page, ">measured</span>") || !strings.Contains(page, "trajectories") {
		t.Errorf("the system page does not mark the figures measured or link the trajectories")
	}
	// The instance page's row links the trajectory's page, which shows
	// the exchanges.
	for _, id := range []string{inferL1, inferL2} {
		inst, err := os.ReadFile(filepath.Join(root, "public", "datasets", "example", "v3", "instances", id, "index.html"))
		rel := "datasets/example/v3/systems/shell-loop-double/lite/trajectories/" + id + "/attempt-1/"
		if err != nil || !strings.Contains(string(inst), rel+`"`) {
			t.Errorf("the instance page of %s does not link its trajectory %s (%v)", id, rel, err)
			continue
		}
		traj, err := os.ReadFile(filepath.Join(root, "public", filepath.FromSlash(rel), "index.html"))
		if err != nil || !strings.Contains(string(traj), "Turn 1") || !strings.Contains(string(traj), "openai.chat") {
			t.Errorf("the trajectory page of %s does not show its exchanges (%v)", id, err)
		}
	}
	// A trajectory whose usage was edited after the run is caught.
	tamperTrajectory(t, filepath.Join(sub, "trajectories.tar.gz"))
	if _, errOut, code := runEval(t, "validate", sub, "--root", root); code != 1 || !strings.Contains(errOut, "its SHA-256 is not the one the report records") {
		t.Errorf("validate of an edited trajectory: exit %d\n%s", code, errOut)
	}
}

// buildSystemPage builds the site of the project with cmd/build and
// returns the page of the system with that slug.
func buildSystemPage(t *testing.T, root, slug string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "build")
	if out, err := exec.Command("go", "build", "-o", bin, "../build").CombinedOutput(); err != nil {
		t.Fatalf("go build ../build: %v\n%s", err, out)
	}
	for _, f := range []string{"package.json", "package-lock.json"} { // the chart library's pin
		raw, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(bin, "--root", root).CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var page string
	filepath.WalkDir(filepath.Join(root, "public"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(p, slug) && strings.HasSuffix(p, ".html") && page == "" {
			raw, _ := os.ReadFile(p)
			page = string(raw)
		}
		return nil
	})
	if page == "" {
		t.Fatalf("the site has no page of %s", slug)
	}
	return page
}

// tamperTrajectory raises the first output count of the first trajectory
// of a trajectories.tar.gz.
func tamperTrajectory(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	done := false
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if !done {
			data = bytes.Replace(data, []byte(`"output":`), []byte(`"output":9`), 1)
			done = true
		}
		hdr.Size = int64(len(data))
		tw.WriteHeader(hdr)
		tw.Write(data)
	}
	tw.Close()
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInferQwenCodeWithLLMTestDouble: a real agent CLI from npm (Qwen
// Code, with Node.js from npm, installed offline into the agent layer)
// runs on a level 1 instance in a real container; the LLM test double
// answers its OpenAI chat completions with a write_file tool call of the
// solution; eval run grades the diff as resolved, and the tokens are what
// the double served.
func TestInferQwenCodeWithLLMTestDouble(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	t.Setenv("DOCKER_HOST", host)
	root := inferProject(t)
	mark := markerOf(t, root, inferL1)
	files := solution(t, root, inferL1)
	var mu sync.Mutex
	var seen []string
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("request %d: tools %v, %d tool results, marker %v, last %.200q", r.N, r.Tools, r.ToolResults, mark.in(r.Text), r.Last))
		mu.Unlock()
		switch {
		case r.LastIsToolResult:
			return llmdouble.Reply{Text: "The feature is implemented."}
		case r.ToolResults == 0 && mark.in(r.Text) && contains(r.Tools, "write_file"):
			var calls []llmdouble.Call
			for p, c := range files {
				calls = append(calls, llmdouble.Call{Name: "write_file", Args: map[string]any{"file_path": "/testbed/" + p, "content": c}})
			}
			return llmdouble.Reply{Calls: calls}
		case r.ToolResults == 0 && mark.in(r.Text) && contains(r.Tools, "run_shell_command"):
			// Qwen Code's --bare mode offers its shell tool, not write_file.
			return llmdouble.Reply{Calls: []llmdouble.Call{{Name: "run_shell_command", Args: map[string]any{
				"command": heredocs("/testbed", files), "description": "write the feature"}}}}
		}
		return llmdouble.Reply{Text: "Nothing to do."}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	out, errOut, code := runEval(t, "infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "qwen-code",
		"--model", doubleModel, "--upstream", dbl.URL, "--run-id", "qwen", "--instance", inferL1)
	if code != 0 {
		t.Fatalf("eval infer: exit %d\n%s\n%s", code, out, errOut)
	}
	preds := readPreds(t, filepath.Join(root, "runs", "qwen", "predictions.jsonl"))
	p := preds[inferL1]
	alog, _ := os.ReadFile(filepath.Join(root, "runs", "qwen", "infer", inferL1, "agent.log"))
	if p.FailureMode != "" || p.Patch == "" {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("failure %q, patch %q; the agent's output:\n%s\nthe double saw:\n%s", p.FailureMode, p.Patch, alog, strings.Join(seen, "\n"))
	}
	checkServed(t, preds, dbl.Served())
	out, errOut, code = runEval(t, "run", "--root", root, "--dataset", "example/v3", "--split", "lite",
		"--predictions", filepath.Join(root, "runs", "qwen", "predictions.jsonl"), "--run-id", "qwen", "--instance", inferL1)
	if code != 0 || !strings.Contains(out, "1 of 1 instances resolved") {
		t.Fatalf("eval run: exit %d\n%s\n%s\nthe agent's output:\n%s", code, out, errOut, alog)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestInferLimitWithLLMTestDouble: an agent whose model never finishes is
// stopped by its turn limit (max_turns = 2): the instance is recorded with
// failure mode TurnLimit, two turns, and what it wrote so far.
func TestInferLimitWithLLMTestDouble(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	t.Setenv("DOCKER_HOST", host)
	root := inferProject(t)
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		return llmdouble.Reply{Text: fmt.Sprintf("```bash\necho step %d >> /testbed/notes.txt\n```", r.N)}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	out, errOut, code := runEval(t, "infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "shell-loop-limited",
		"--model", doubleModel, "--upstream", dbl.URL, "--run-id", "limited", "--instance", inferL1)
	if code != 0 {
		t.Fatalf("eval infer: exit %d\n%s\n%s", code, out, errOut)
	}
	p := readPreds(t, filepath.Join(root, "runs", "limited", "predictions.jsonl"))[inferL1]
	if p.FailureMode != "TurnLimit" || p.Turns != 2 || !strings.Contains(p.Patch, "+step 2") || dbl.Served().Requests != 2 {
		t.Fatalf("failure %q, turns %d, %d requests served, patch:\n%s", p.FailureMode, p.Turns, dbl.Served().Requests, p.Patch)
	}
	if !strings.Contains(out, "TurnLimit 1") {
		t.Errorf("the summary does not count the limit: %s", out)
	}
	// Graded, the limit is one of the instance's failure modes.
	out, errOut, code = runEval(t, "run", "--root", root, "--dataset", "example/v3", "--split", "lite",
		"--predictions", filepath.Join(root, "runs", "limited", "predictions.jsonl"), "--run-id", "limited", "--instance", inferL1)
	if code != 0 {
		t.Fatalf("eval run: exit %d\n%s\n%s", code, out, errOut)
	}
	results, _ := os.ReadFile(filepath.Join(root, "runs", "limited", "results.jsonl"))
	if !strings.Contains(string(results), `"TurnLimit"`) || !strings.Contains(string(results), `"measured":true`) {
		t.Errorf("the result does not carry the limit as a failure mode, or is not measured:\n%s", results)
	}
}

// TestInferKilledRunResumes kills eval infer (SIGKILL) once its first
// instance is recorded, runs the same command again, and checks that it
// keeps the finished instance (not run again: the double sees no new
// conversation for it) and finishes the other.
func TestInferKilledRunResumes(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	root := inferProject(t)
	bin := evalBinary(t)
	eng := imagestest.Engine(t)
	// The killed run's container stays until its lease is stale: removed here.
	id := "resumed-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Cleanup(func() {
		if _, err := eng.RemoveContainers(context.Background(), map[string]string{evaluate.LabelRun: id, evaluate.LabelKind: "infer"}, nil); err != nil {
			t.Error(err)
		}
	})
	script := shellLoopScript(t, root, inferL1, inferL2)
	m1, m2 := markerOf(t, root, inferL1), markerOf(t, root, inferL2)
	var mu sync.Mutex
	started := map[int]int{}
	second := make(chan struct{}, 8) // the second instance's conversation began
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(r.Last, "exit status") {
			for i, m := range []marker{m1, m2} {
				if m.in(r.Text) {
					started[i]++
					if i == 1 {
						second <- struct{}{}
					}
				}
			}
		}
		if m2.in(r.Text) {
			mu.Unlock()
			time.Sleep(3 * time.Second) // the second instance is slow: the kill comes during it
			mu.Lock()
		}
		return script(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	cmd := func() *exec.Cmd {
		c := exec.Command(bin, "infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "shell-loop",
			"--model", doubleModel, "--upstream", dbl.URL, "--run-id", id, "--instance", inferL1, "--instance", inferL2)
		c.Env = append(os.Environ(), "DOCKER_HOST="+host)
		return c
	}
	k := cmd()
	var log bytes.Buffer
	k.Stdout, k.Stderr = &log, &log
	if err := k.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-second: // the first instance is done, the second under way
	case <-time.After(5 * time.Minute):
		k.Process.Kill()
		t.Fatalf("the second instance did not start in 5 minutes:\n%s", log.String())
	}
	if err := k.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = k.Wait()
	if _, err := os.Stat(filepath.Join(root, "runs", id, "infer", inferL2, "record.json")); err == nil {
		t.Fatalf("the second instance finished before the kill: the test proves nothing\n%s", log.String())
	}
	if p := readPreds(t, filepath.Join(root, "runs", id, "predictions.jsonl")); len(p) != 1 || p[inferL1].Patch == "" {
		t.Fatalf("after the kill, predictions.jsonl holds %d predictions; want the finished one", len(p))
	}
	out, err := cmd().CombinedOutput()
	if err != nil {
		t.Fatalf("eval infer again: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "(done before)") {
		t.Errorf("the second run did not skip the finished instance:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if started[0] != 1 || started[1] != 2 {
		t.Errorf("conversations started: first instance %d, second %d; want 1 and 2 (killed, then again)", started[0], started[1])
	}
	preds := readPreds(t, filepath.Join(root, "runs", id, "predictions.jsonl"))
	if len(preds) != 2 || preds[inferL1].Patch == "" || preds[inferL2].Patch == "" {
		t.Errorf("%d predictions after resuming; want both with patches", len(preds))
	}
}

// TestInferFailuresWithLLMTestDouble: on four instances of one run, the
// LLM test double solves the first, fails every request of the second
// (status 500), refuses the third's as a provider refuses a request by
// its policy (400 content_policy_violation), and stalls on the fourth
// past the agent's timeout: the first is a prediction that resolves, the
// second and third are recorded as UpstreamError and the fourth as
// AgentTimeout, each with what was done, and none loses the others.
// Failures for the upstream's reasons end the command non-zero; running
// it again retries them (they are not "done before") while the others
// are kept. While the agents work, a line says how far each got
// (--progress-every).
func TestInferFailuresWithLLMTestDouble(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	t.Setenv("DOCKER_HOST", host)
	root := inferProject(t)
	const failing, refusing, stalling = "featbench__textkit.test_fuzzy.3ef8640e.lv1", "featbench__textkit.test_template.765d383f.lv1", "featbench__textkit.test_stats.bdae62d6.lv1"
	solve := shellLoopScript(t, root, inferL1, failing, refusing)
	mFail, mRefuse, mStall := markerOf(t, root, failing), markerOf(t, root, refusing), markerOf(t, root, stalling)
	var upstreamBack atomic.Bool // the second run: the upstream answers them
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		switch {
		case mFail.in(r.Text) && !upstreamBack.Load():
			return llmdouble.Reply{Status: 500}
		case mRefuse.in(r.Text) && !upstreamBack.Load():
			return llmdouble.Reply{Status: 400, ErrorType: "content_policy_violation"}
		case mStall.in(r.Text):
			if strings.Contains(r.Text, "started.txt") {
				time.Sleep(60 * time.Second) // past the agent's 20 s
				return llmdouble.Reply{Text: "DONE"}
			}
			return llmdouble.Reply{Text: "```bash\necho started > /testbed/started.txt\n```"}
		}
		return solve(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	args := []string{"infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "shell-loop-short",
		"--model", doubleModel, "--upstream", dbl.URL, "--run-id", "failures", "--progress-every", "2s",
		"--instance", inferL1, "--instance", failing, "--instance", refusing, "--instance", stalling}
	out, errOut, code := runEval(t, args...)
	if code != 1 || !strings.Contains(errOut, "UpstreamError") || !strings.Contains(errOut, "on 2") || !strings.Contains(errOut, "run the command again") {
		t.Fatalf("eval infer with failures of the upstream: exit %d; want 1 naming them\n%s\n%s", code, out, errOut)
	}
	preds := readPreds(t, filepath.Join(root, "runs", "failures", "predictions.jsonl"))
	if p := preds[inferL1]; p.FailureMode != "" || p.Patch == "" {
		t.Errorf("the solved instance: failure %q, patch %q", p.FailureMode, p.Patch)
	}
	if p := preds[failing]; p.FailureMode != "UpstreamError" || p.Patch != "" || p.Turns != 3 {
		t.Errorf("the failing upstream: failure %q, %d turns, patch %q", p.FailureMode, p.Turns, p.Patch)
	}
	if p := preds[refusing]; p.FailureMode != "UpstreamError" || p.Patch != "" || p.Turns != 1 {
		t.Errorf("the provider's refusal: failure %q, %d turns, patch %q", p.FailureMode, p.Turns, p.Patch)
	}
	if p := preds[stalling]; p.FailureMode != "AgentTimeout" || !strings.Contains(p.Patch, "+started") {
		t.Errorf("the stalled agent: failure %q, patch %q", p.FailureMode, p.Patch)
	}
	if !strings.Contains(out, "AgentTimeout 1, UpstreamError 2") {
		t.Errorf("the summary does not count the failures: %s", out)
	}
	// While the stalled agent waits on its second answer, its line says
	// how far it got.
	working := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(stalling) + `: at work for \d+s, 2 turns, tokens \d+ in, \d+ out, \$0\.\d+$`)
	if !working.MatchString(errOut) {
		t.Errorf("no line says how far the stalled agent got:\n%s", errOut)
	}

	// Again, the upstream answering: what it failed is run again and
	// solved; what was done is kept.
	upstreamBack.Store(true)
	out, errOut, code = runEval(t, args...)
	if code != 0 {
		t.Fatalf("again with the upstream back: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, id := range []string{inferL1, stalling} {
		if !strings.Contains(errOut, id+": ") || !regexp.MustCompile(regexp.QuoteMeta(id)+`: \w+ \(done before\)`).MatchString(errOut) {
			t.Errorf("%s was not kept (done before):\n%s", id, errOut)
		}
	}
	preds = readPreds(t, filepath.Join(root, "runs", "failures", "predictions.jsonl"))
	for _, id := range []string{failing, refusing} {
		if p := preds[id]; p.FailureMode != "" || p.Patch == "" {
			t.Errorf("%s, retried with the upstream back: failure %q, patch %q", id, p.FailureMode, p.Patch)
		}
	}
	if p := preds[stalling]; p.FailureMode != "AgentTimeout" {
		t.Errorf("the stalled agent's outcome was not kept: %q", p.FailureMode)
	}
}

// double served.
func TestInferClaudeCodeWithLLMTestDouble(t *testing.T) {
	testCLI(t, "claude-code", func(r llmdouble.Request, files map[string]string) []llmdouble.Call {
		if !contains(r.Tools, "Write") {
			return nil
		}
		var calls []llmdouble.Call
		for p, c := range files {
			calls = append(calls, llmdouble.Call{Name: "Write", Args: map[string]any{"file_path": "/testbed/" + p, "content": c}})
		}
		return calls
	})
}

// TestInferCodexWithLLMTestDouble: Codex CLI from npm (a Node launcher
// and its native binary) runs on a level 1 instance over the OpenAI
// responses API; the LLM test double answers with an exec_command tool
// call that writes the solution; eval run grades the diff as resolved,
// and the tokens are what the double served.
func TestInferCodexWithLLMTestDouble(t *testing.T) {
	testCLI(t, "codex", func(r llmdouble.Request, files map[string]string) []llmdouble.Call {
		if !contains(r.Tools, "exec_command") {
			return nil
		}
		return []llmdouble.Call{{Name: "exec_command", Args: map[string]any{"cmd": heredocs("/testbed", files), "login": false}}}
	})
}

// TestInferGeminiCLIWithLLMTestDouble: Gemini CLI from npm runs on a
// level 1 instance over the Gemini API; the LLM test double answers with
// a write_file function call per file of the solution; eval run grades
// the diff as resolved, and the tokens are what the double served.
func TestInferGeminiCLIWithLLMTestDouble(t *testing.T) {
	testCLI(t, "gemini-cli", func(r llmdouble.Request, files map[string]string) []llmdouble.Call {
		if !contains(r.Tools, "write_file") {
			return nil
		}
		var calls []llmdouble.Call
		for p, c := range files {
			calls = append(calls, llmdouble.Call{Name: "write_file", Args: map[string]any{"file_path": "/testbed/" + p, "content": c}})
		}
		return calls
	})
}

// testCLI runs a shipped agent CLI on a level 1 instance against the LLM
// test double, whose calls (given the request and the solution's files)
// write the solution, and grades the diff.
func testCLI(t *testing.T, agent string, calls func(llmdouble.Request, map[string]string) []llmdouble.Call) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	t.Setenv("DOCKER_HOST", host)
	root := inferProject(t)
	mark := markerOf(t, root, inferL1)
	files := solution(t, root, inferL1)
	var mu sync.Mutex
	var seen []string
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("request %d %s: model %s, tools %v, %d tool results, marker %v, last %.200q", r.N, r.Path, r.Model, r.Tools, r.ToolResults, mark.in(r.Text), r.Last))
		mu.Unlock()
		switch {
		case r.LastIsToolResult:
			return llmdouble.Reply{Text: "The feature is implemented."}
		case r.ToolResults == 0 && mark.in(r.Text):
			if c := calls(r, files); c != nil {
				return llmdouble.Reply{Calls: c}
			}
		}
		return llmdouble.Reply{Text: "OK"}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	out, errOut, code := runEval(t, "infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", agent,
		"--model", doubleModel, "--upstream", dbl.URL, "--run-id", agent, "--instance", inferL1)
	if code != 0 {
		t.Fatalf("eval infer: exit %d\n%s\n%s", code, out, errOut)
	}
	preds := readPreds(t, filepath.Join(root, "runs", agent, "predictions.jsonl"))
	p := preds[inferL1]
	alog, _ := os.ReadFile(filepath.Join(root, "runs", agent, "infer", inferL1, "agent.log"))
	if p.FailureMode != "" || p.Patch == "" {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("failure %q, patch %q; the agent's output:\n%.3000s\nthe double saw:\n%s", p.FailureMode, p.Patch, alog, strings.Join(seen, "\n"))
	}
	checkServed(t, preds, dbl.Served())
	out, errOut, code = runEval(t, "run", "--root", root, "--dataset", "example/v3", "--split", "lite",
		"--predictions", filepath.Join(root, "runs", agent, "predictions.jsonl"), "--run-id", agent, "--instance", inferL1)
	if code != 0 || !strings.Contains(out, "1 of 1 instances resolved") {
		t.Fatalf("eval run: exit %d\n%s\n%s", code, out, errOut)
	}
}
