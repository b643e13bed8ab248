package infer

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/meter"
	"github.com/featbench/featbench/internal/relay"
)

// These tests run the relay in a real container of the base image (with
// relay.py copied where the agent layer puts it) over the engine's exec
// stream, as eval infer does; the relays that attack the harness are
// Python programs in such a container, writing what they like to their
// standard output.

var relayTestLabel = map[string]string{"featbench.test": "infer-relay"}

// relayBox starts a container of the base image holding relay.py,
// removed when the test ends.
func relayBox(t *testing.T) *container.Container {
	t.Helper()
	eng, base := imagestest.Base(t)
	ctx := context.Background()
	box, err := eng.Start(ctx, container.Spec{Image: base, Name: "featbench-test-relay", Labels: relayTestLabel, WorkDir: "/",
		Limits: container.Limits{Memory: 1 << 30, Pids: 512}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := box.Remove(); err != nil {
			t.Error(err)
		}
	})
	if err := box.CopyIn(ctx, "/opt/featbench/bin", []container.File{{Path: "relay.py", Mode: 0o644, Data: relay.Source()}}); err != nil {
		t.Fatal(err)
	}
	return box
}

// run runs a Python program in box, as the agent would, and returns its
// output; stdin is the program, argv its arguments.
func runPython(ctx context.Context, t *testing.T, box *container.Container, program string, args ...string) container.ExecResult {
	t.Helper()
	res, err := box.Exec(ctx, append([]string{"python3", "-I", "-"}, args...), container.ExecOptions{
		Timeout: 2 * time.Minute, Stdin: strings.NewReader(program)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// serveMeter serves a meter forwarding to the double on the relay until
// the test ends, and returns it.
func serveMeter(t *testing.T, r *relay.Relay, upstream string) *meter.Meter {
	t.Helper()
	m, err := meter.New(meter.Upstream{URL: upstream, API: "openai", Key: "sk-test"}, nil, meter.Limits{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- m.Serve(ctx, r) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-served:
		case <-time.After(20 * time.Second):
			t.Error("the proxy did not stop in 20 s")
		}
	})
	return m
}

// clients makes n model requests at once from the container, each with
// a message of size bytes, and says how each went: "ok N" with the
// answer's length, or the error.
const clients = `
import json, sys, threading, urllib.request
n, size = int(sys.argv[1]), int(sys.argv[2])
out = [None] * n
def one(i):
    body = json.dumps({"model": "double-model", "messages": [{"role": "user", "content": "request %d %s" % (i, "x" * size)}]}).encode()
    req = urllib.request.Request("http://127.0.0.1:9100/chat/completions", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            d = json.load(r)
            out[i] = "ok %d" % len(d["choices"][0]["message"]["content"])
    except Exception as e:
        out[i] = "error %r" % e
ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
[t.start() for t in ts]
[t.join() for t in ts]
print("\n".join(out))
`

// TestRelayServes: the proxy, served through relay.py, answers requests
// the container makes at once (bodies of many frames among them), and
// the meter counts them all; connections over the relay's limit are
// closed by the relay without harm to the harness, and once they are
// gone requests go through again.
func TestRelayServes(t *testing.T) {
	box := relayBox(t)
	ctx := context.Background()
	long := strings.Repeat("answer ", 40000) // 280 kB: several frames back
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply { return llmdouble.Reply{Text: long} })
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	r, err := relay.Start(ctx, box, proxyPort, "the metering proxy")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := serveMeter(t, r, dbl.URL)

	res := runPython(ctx, t, box, clients, "12", strconv.Itoa(300<<10))
	want := strings.Repeat("ok "+strconv.Itoa(len(long))+"\n", 12)
	if res.ExitCode != 0 || string(res.Stdout) != want {
		t.Fatalf("exit %d, the clients said:\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if tot := m.Totals(); tot.Turns != 12 || dbl.Served().Requests != 12 || tot.TokensIn != dbl.Served().Input {
		t.Errorf("the meter counted %d turns, %d tokens in; the double served %+v", tot.Turns, tot.TokensIn, dbl.Served())
	}

	// More connections than the relay takes, held open: the ones over
	// the limit are closed as they come.
	res = runPython(ctx, t, box, `
import select, socket, sys, time
socks = [socket.create_connection(("127.0.0.1", 9100)) for _ in range(int(sys.argv[1]))]
time.sleep(1)
readable, _, _ = select.select(socks, [], [], 0)
print(sum(1 for s in readable if s.recv(1) == b""))
`, strconv.Itoa(relay.MaxConns+16))
	if strings.TrimSpace(string(res.Stdout)) != "16" {
		t.Errorf("%q of %d connections were closed by the relay; want 16\n%s", res.Stdout, relay.MaxConns+16, res.Stderr)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("the relay failed: %v", err)
	}
	// Their program ended, so their connections did: room again.
	deadline := time.Now().Add(30 * time.Second)
	for {
		res = runPython(ctx, t, box, clients, "1", "10")
		if strings.HasPrefix(string(res.Stdout), "ok ") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.HasPrefix(string(res.Stdout), "ok ") {
		t.Errorf("a request after the flood: %s%s", res.Stdout, res.Stderr)
	}
	if err := r.Err(); err != nil {
		t.Errorf("the relay failed: %v", err)
	}
}

// TestRelayKilledMidRequest: relay.py killed (SIGKILL) while the proxy
// waits on the model for a request the container made: the relay ends
// with an error saying so, the container's request fails at once, the
// proxy stops, and nothing waits for the model's answer.
func TestRelayKilledMidRequest(t *testing.T) {
	box := relayBox(t)
	ctx := context.Background()
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		arrived <- struct{}{}
		<-release
		return llmdouble.Reply{Text: "late"}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	r, err := relay.Start(ctx, box, proxyPort, "the metering proxy")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	serveMeter(t, r, dbl.URL)

	client := make(chan container.ExecResult, 1)
	go func() { client <- runPython(ctx, t, box, clients, "1", "10") }()
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatal("the request did not reach the model in a minute")
	}
	kill := `for d in /proc/[0-9]*; do if tr '\0' ' ' <$d/cmdline 2>/dev/null | grep -q '^python3 -I ` + relay.Path + `'; then kill -9 ${d#/proc/}; echo killed; fi; done`
	if res, err := box.Exec(ctx, []string{"bash", "-c", kill}, container.ExecOptions{Timeout: time.Minute}); err != nil || !strings.Contains(string(res.Stdout), "killed") {
		t.Fatalf("killing the relay: %v %s%s", err, res.Stdout, res.Stderr)
	}
	begin := time.Now()
	select {
	case <-r.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the harness did not see the relay end in 20 s")
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "the relay ended") {
		t.Errorf("the relay's error: %v", err)
	}
	if f := r.Failure(); !strings.HasPrefix(f.Error(), "the metering proxy's relay failed: the relay ended") {
		t.Errorf("the instance's error: %v", f)
	}
	select {
	case res := <-client:
		if !bytes.HasPrefix(res.Stdout, []byte("error ")) {
			t.Errorf("the container's request did not fail: %s%s", res.Stdout, res.Stderr)
		}
	case <-time.After(30 * time.Second):
		t.Error("the container's request still waits 30 s after the relay was killed")
	}
	if d := time.Since(begin); d > 40*time.Second {
		t.Errorf("the harness took %s to see the relay's end", d)
	}
}
