package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/infer"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/testenv"
)

// TestInferRelayKilled: the relay to the proxy is killed (SIGKILL, as
// root in the agent's container) while the agent's first request waits
// on the model. eval infer does not wait for the agent's 20 minutes: the
// agent is stopped at once, the instance is recorded as the harness's
// failure saying the relay ended (no prediction, retried by the next
// run), and the command exits 1 naming the log to read.
func TestInferRelayKilled(t *testing.T) {
	host := testenv.DockerHost(t)
	imagestest.Base(t)
	eng := imagestest.Engine(t)
	t.Setenv("DOCKER_HOST", host)
	root := inferProject(t)
	id := "relay-killed-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	run := map[string]string{evaluate.LabelRun: id, evaluate.LabelKind: "infer"}
	killed := make(chan error, 1)
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		if r.N == 1 {
			killed <- killRelay(eng, run)
			time.Sleep(2 * time.Second) // the answer would come after the relay's end
		}
		return llmdouble.Reply{Text: "DONE"}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	begin := time.Now()
	out, errOut, code := runEval(t, "infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "shell-loop",
		"--model", doubleModel, "--upstream", dbl.URL, "--run-id", id, "--instance", inferL1)
	if err := <-killed; err != nil {
		t.Fatalf("killing the relay: %v", err)
	}
	if d := time.Since(begin); d > 3*time.Minute {
		t.Errorf("eval infer took %s after the relay was killed", d)
	}
	if code != 1 || !strings.Contains(errOut, "the harness could not run the agent on 1 instances") {
		t.Errorf("eval infer: exit %d; want 1 with the harness's failure\n%s\n%s", code, out, errOut)
	}
	rec, err := infer.ReadRecord(filepath.Join(root, "runs", id, "infer", inferL1))
	if err != nil {
		t.Fatal(err)
	}
	if rec.FailureMode != infer.HarnessError || !strings.HasPrefix(rec.Error, "the metering proxy's relay failed: the relay ended") {
		t.Errorf("the record: failure %q, error %q", rec.FailureMode, rec.Error)
	}
	clog, _ := os.ReadFile(filepath.Join(root, "runs", id, "infer", inferL1, "container.log"))
	if !strings.Contains(string(clog), "harness error: the metering proxy's relay failed") {
		t.Errorf("the harness's log does not say the relay failed:\n%s", clog)
	}
	if p := readPreds(t, filepath.Join(root, "runs", id, "predictions.jsonl")); len(p) != 0 {
		t.Errorf("%d predictions; want none", len(p))
	}
	if left, err := eng.Containers(context.Background(), run); err != nil || len(left) != 0 {
		t.Errorf("%d containers of the run left (%v)", len(left), err)
	}
}

// killRelay kills relay.py in the run's one container, as root.
func killRelay(eng *container.Engine, run map[string]string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := eng.Containers(ctx, run)
	if err != nil {
		return err
	}
	if len(cs) != 1 {
		return fmt.Errorf("%d containers of the run; want 1", len(cs))
	}
	// Adopted only to run a command in it: never removed here.
	box, err := eng.Adopt(ctx, cs[0].ID, container.AdoptOptions{})
	if err != nil {
		return err
	}
	kill := `for d in /proc/[0-9]*; do if tr '\0' ' ' <$d/cmdline 2>/dev/null | grep -q '^python3 -I /opt/featbench/bin/relay.py'; then kill -9 ${d#/proc/}; echo killed; fi; done`
	res, err := box.Exec(ctx, []string{"bash", "-c", kill}, container.ExecOptions{Timeout: time.Minute})
	if err == nil && !strings.Contains(string(res.Stdout), "killed") {
		err = fmt.Errorf("no relay found: %s%s", res.Stdout, res.Stderr)
	}
	return err
}
