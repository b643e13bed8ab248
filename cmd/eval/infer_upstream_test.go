package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/infer"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/meter"
	"github.com/featbench/featbench/internal/testenv"
)

// closedPortURL is an upstream URL on a loopback port nothing listens on.
func closedPortURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String() + "/v1"
	l.Close()
	return u
}

// TestInferUpstreamDownWithLLMTestDouble: an upstream that refuses the
// key (a test double of the model API answering 401, as a provider does
// to a wrong key) and an upstream that cannot be reached (a closed port)
// stop eval infer before anything else: exit 1 within 10 s with the
// cause printed (the status and the upstream's words, or the connection
// refused; and which variable the key comes from), no run folder, no
// instance recorded. The engine is not even asked: DOCKER_HOST names
// none, and the error is the upstream's.
func TestInferUpstreamDownWithLLMTestDouble(t *testing.T) {
	root := inferProject(t)
	var mu sync.Mutex
	var asked []string
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided: sk-wrong.","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	defer refusing.Close()
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/featbench-no-engine.sock")
	t.Setenv("FEATBENCH_TEST_UPSTREAM_KEY", "sk-wrong")
	for _, c := range []struct {
		name, upstream string
		want           []string
	}{
		{"401", refusing.URL + "/v1", []string{"refused the key: 401 Unauthorized", "Incorrect API key provided", "$FEATBENCH_TEST_UPSTREAM_KEY", "no instance was run"}},
		{"unreachable", closedPortURL(t), []string{"cannot be reached", "connection refused", "no instance was run"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := "down-" + c.name
			start := time.Now()
			out, errOut, code := runEval(t, "infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "shell-loop-limited",
				"--model", doubleModel, "--upstream", c.upstream, "--run-id", id)
			took := time.Since(start)
			t.Logf("stopped after %s: %s", took.Round(time.Millisecond), strings.TrimSpace(errOut))
			if code != 1 {
				t.Errorf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("the error does not say %q:\n%s", w, errOut)
				}
			}
			// The bound: at once, not minutes per instance.
			if took > 10*time.Second {
				t.Errorf("it took %s to stop", took)
			}
			if _, err := os.Stat(filepath.Join(root, "runs", id)); !os.IsNotExist(err) {
				t.Errorf("a run folder was made (%v): something was recorded", err)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != "GET /v1/models Bearer sk-wrong" {
		t.Errorf("the refusing upstream was asked %q; want one GET of its models list with the key", asked)
	}
}

// TestInferUpstreamDownDuringRunWithLLMTestDouble: an upstream that
// passes the check before the run (the LLM test double has no models
// list: a 404 says nothing of the key) but refuses the key of the first
// model call (401), or stops answering after one (the double closed:
// nothing listens any more), stops the run at once: exit 1 with the
// cause, the instance in flight not recorded (no record.json, not in
// predictions.jsonl), the next instance never started (one worker), no
// container of the run left. Run again once the upstream answers, the
// instances are run, not "done before".
func TestInferUpstreamDownDuringRunWithLLMTestDouble(t *testing.T) {
	host := testenv.DockerHost(t)
	eng := imagestest.Engine(t)
	imagestest.Base(t)
	t.Setenv("DOCKER_HOST", host)
	root := inferProject(t)
	solve := shellLoopScript(t, root, inferL1, inferL2)

	noRecords := func(t *testing.T, id string) {
		t.Helper()
		for _, in := range []string{inferL1, inferL2} {
			if _, err := infer.ReadRecord(filepath.Join(root, "runs", id, infer.Folder, in)); err == nil {
				t.Errorf("%s was recorded: the upstream's failure taken for its outcome", in)
			}
		}
		if _, err := os.Stat(filepath.Join(root, "runs", id, infer.Folder, inferL2)); err == nil {
			t.Errorf("the second instance was started after the upstream was found down")
		}
		if raw, err := os.ReadFile(filepath.Join(root, "runs", id, infer.PredictionsFile)); err == nil && len(raw) > 0 {
			t.Errorf("predictions were written: %s", raw)
		}
		list, err := eng.Containers(context.Background(), map[string]string{evaluate.LabelRun: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 {
			t.Errorf("%d containers of the run are left", len(list))
		}
	}
	args := func(id, upstream string) []string {
		return []string{"infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "shell-loop-short",
			"--model", doubleModel, "--upstream", upstream, "--run-id", id, "--workers", "1", "--instance", inferL1, "--instance", inferL2}
	}

	t.Run("401", func(t *testing.T) {
		var keyBack atomic.Bool
		dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
			if !keyBack.Load() {
				return llmdouble.Reply{Status: http.StatusUnauthorized, ErrorType: "authentication_error"}
			}
			return solve(r)
		})
		if err != nil {
			t.Fatal(err)
		}
		defer dbl.Close()
		out, errOut, code := runEval(t, args("refused", dbl.URL)...)
		if code != 1 || !strings.Contains(errOut, "stopped: the upstream "+dbl.URL+" refused the key: 401 Unauthorized") || !strings.Contains(errOut, "were not recorded") {
			t.Fatalf("exit %d; want 1 with the cause\n%s%s", code, out, errOut)
		}
		if n := dbl.Served().Requests; n != 1 {
			t.Errorf("the upstream was asked %d model calls after it refused the key; want the one", n)
		}
		noRecords(t, "refused")

		keyBack.Store(true)
		out, errOut, code = runEval(t, args("refused", dbl.URL)...)
		if code != 0 || strings.Contains(errOut, "done before") {
			t.Fatalf("again with the key accepted: exit %d\n%s%s", code, out, errOut)
		}
		preds := readPreds(t, filepath.Join(root, "runs", "refused", infer.PredictionsFile))
		for _, in := range []string{inferL1, inferL2} {
			if p := preds[in]; p.FailureMode != "" || p.Patch == "" {
				t.Errorf("%s: failure %q, patch %q", in, p.FailureMode, p.Patch)
			}
		}
	})

	t.Run("lost", func(t *testing.T) {
		var dbl *llmdouble.Server
		var once sync.Once
		dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
			// After its first answer, the upstream is gone.
			once.Do(func() {
				go func() {
					time.Sleep(200 * time.Millisecond)
					dbl.Close()
				}()
			})
			return llmdouble.Reply{Text: "```bash\necho working\n```"}
		})
		if err != nil {
			t.Fatal(err)
		}
		defer dbl.Close()
		out, errOut, code := runEval(t, args("lost", dbl.URL)...)
		if code != 1 || !strings.Contains(errOut, "stopped: the upstream "+dbl.URL+" cannot be reached") || !strings.Contains(errOut, "connection refused") {
			t.Fatalf("exit %d; want 1 with the cause\n%s%s", code, out, errOut)
		}
		noRecords(t, "lost")
	})
}

// TestInferFileSizeLimitWithLLMTestDouble: with a file size limit
// (ulimit -f 100) that one instance's files exceed (the LLM test double's
// last answer to it is 300 KB, which its trajectory and the agent's log
// hold), eval infer ends non-zero naming the file it could not write,
// records no outcome of that instance (no record.json, not in
// predictions.jsonl, "not saved" on its progress line), and keeps the
// other, whose files are whole (its trajectory replays to its record's
// counts). Run again without the limit, it does what was not saved and
// keeps what was.
func TestInferFileSizeLimitWithLLMTestDouble(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	root := inferProject(t)
	bin := evalBinary(t)
	solve := shellLoopScript(t, root, inferL1, inferL2)
	big := markerOf(t, root, inferL2)
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		rep := solve(r)
		if big.in(r.Text) && rep.Text == "DONE" {
			rep.Text = strings.Repeat("All done, and then some. ", 12000) + "\nDONE"
		}
		return rep
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	args := []string{"infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "shell-loop-short",
		"--model", doubleModel, "--upstream", dbl.URL, "--run-id", "limited", "--instance", inferL1, "--instance", inferL2}
	cmd := exec.Command("bash", append([]string{"-c", `ulimit -f 100 && exec "$@"`, "bash", bin}, args...)...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("with ulimit -f 100: %v; want exit 1\n%s", err, out)
	}
	for _, w := range []string{"1 instances could not be saved whole", inferL2 + ": writing ", "file too large", inferL2 + ": not saved"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("the output does not say %q:\n%s", w, out)
		}
	}
	dir := filepath.Join(root, "runs", "limited")
	if _, err := infer.ReadRecord(filepath.Join(dir, infer.Folder, inferL2)); err == nil {
		t.Errorf("the instance whose files were cut was recorded")
	}
	preds := readPreds(t, filepath.Join(dir, infer.PredictionsFile))
	if _, ok := preds[inferL2]; ok || len(preds) != 1 {
		t.Errorf("predictions: %d, with the unsaved instance: %v", len(preds), ok)
	}
	checkWholeInfer(t, dir, inferL1)

	cmd = exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), inferL1+": done (done before)") {
		t.Fatalf("again without the limit: %v\n%s", err, out)
	}
	checkWholeInfer(t, dir, inferL1, inferL2)
	if preds := readPreds(t, filepath.Join(dir, infer.PredictionsFile)); len(preds) != 2 || preds[inferL2].Patch == "" {
		t.Errorf("after the second run: %d predictions, %q", len(preds), preds[inferL2].Patch)
	}
}

// checkWholeInfer: each instance is recorded, with its prediction, and its
// trajectory replays to the record's counts: nothing of it was cut.
func checkWholeInfer(t *testing.T, dir string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		idir := filepath.Join(dir, infer.Folder, id)
		rec, err := infer.ReadRecord(idir)
		if err != nil {
			t.Errorf("%s: no record: %v", id, err)
			continue
		}
		f, err := os.Open(filepath.Join(idir, infer.TrajectoryFile))
		if err != nil {
			t.Fatal(err)
		}
		re, err := meter.Replay(f, nil)
		f.Close()
		if err != nil || re.Turns != rec.Turns || re.TokensIn != rec.TokensIn || re.TokensOut != rec.TokensOut || rec.Turns == 0 {
			t.Errorf("%s: recorded %d turns, %d/%d tokens; its trajectory replays to %+v (%v): cut", id, rec.Turns, rec.TokensIn, rec.TokensOut, re, err)
		}
		if _, err := os.Stat(filepath.Join(idir, infer.PatchFile)); err != nil {
			t.Errorf("%s: recorded without its prediction: %v", id, err)
		}
	}
}
