package relay_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/relay"
)

// These tests run relays in a real container of the base image over the
// engine's exec stream; the relays that attack the harness are Python
// programs in such a container, writing what they like to their standard
// output. (internal/infer's tests run the real relay.py under load.)

var relayTestLabel = map[string]string{"featbench.test": "relay"}

// relayBox starts a container of the base image, removed when the test
// ends.
func relayBox(t *testing.T) *container.Container {
	t.Helper()
	eng, base := imagestest.Base(t)
	box, err := eng.Start(context.Background(), container.Spec{Image: base, Name: "featbench-test-relay", Labels: relayTestLabel, WorkDir: "/",
		Limits: container.Limits{Memory: 1 << 30, Pids: 512}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := box.Remove(); err != nil {
			t.Error(err)
		}
	})
	return box
}

// hostile is a relay that greets the harness (GREETING) and then writes
// ATTACK to its standard output (Python bytes expressions, struct
// imported), having written noise to its standard error; then it exits
// if EXIT (its output ends where ATTACK does: the engine's stream says
// no more of one output than that the command ended), else it waits:
// the harness must end it.
const hostile = `
import os, struct, sys, time
out = os.fdopen(1, "wb", 0)
sys.stderr.write("FBRELAY1" + "\x00\x00\x00\x01\x00\x00\x00\x05" * 100 + "\n"); sys.stderr.flush()
time.sleep(0.5)  # the engine's two outputs are not ordered: the noise first
out.write(GREETING)
out.write(ATTACK)
if EXIT:
    os._exit(0)
time.sleep(600)
`

func frame(id, n int, payload string) string {
	return fmt.Sprintf("struct.pack('>II', %d, %d) + b%q", id, n, payload)
}

// TestRelayAttacks: whatever a relay writes, the harness neither hangs
// nor crashes: each breach of the protocol ends the relay within
// seconds with an error saying what it was, the proxy's listener
// reports it, and the connections it opened are closed.
func TestRelayAttacks(t *testing.T) {
	box := relayBox(t)
	request := "GET /models HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, c := range []struct {
		name, greeting, attack, want string
		exit, greetErr               bool
	}{
		{name: "oversized length", attack: frame(1, relay.MaxFrame+1, ""), want: "a frame of 65537 bytes for connection 1, over the 65536 a frame may have"},
		{name: "the largest length", attack: frame(1, 1<<32-1, ""), want: "a frame of 4294967295 bytes"},
		{name: "unknown connection id", attack: frame(1, 1, "x") + "+" + frame(7, 1, "y"), want: "a frame for connection 7, which it never opened (the last it opened is 1)"},
		{name: "connection id 0", attack: frame(0, 1, "x"), want: "a frame for connection 0, which it never opened"},
		{name: "an HTTP request instead of frames", attack: "b" + strconv.Quote(request), want: "a frame of 795701092 bytes for connection 1195725856"},
		{name: "too many connections", attack: "b''.join(struct.pack('>II', i, 1) + b'x' for i in range(1, 66))", want: "it opened connection 65 while 64 were open, the most it may have"},
		{name: "data after the end", attack: frame(1, 1, "x") + "+" + frame(1, 0, "") + "+" + frame(1, 2, "yz"), want: "2 bytes for connection 1 after its end"},
		{name: "ended twice", attack: frame(1, 0, "") + "+" + frame(1, 0, ""), want: "connection 1 ended twice"},
		{name: "a request, then a frame cut by the relay's end", attack: frame(1, len(request), request) + "+ struct.pack('>II', 1, 100) + b'abc'", exit: true, want: "its output ended inside a frame of 100 bytes for connection 1"},
		{name: "a header cut by the relay's end", attack: "b'\\x00\\x00\\x00'", exit: true, want: "its output ended inside a frame's header"},
		{name: "garbage for a greeting", greeting: "b'HTTP/1.1 200 OK\\r\\n'", attack: "b''", want: `it began with "HTTP/1.1", not its greeting`, greetErr: true},
		{name: "a greeting cut short", greeting: "b'FBR'", attack: "b''", exit: true, want: `it began with "FBR", not its greeting`, greetErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			greeting := c.greeting
			if greeting == "" {
				greeting = "b'" + relay.Greeting + "'"
			}
			program := strings.NewReplacer("GREETING", "("+greeting+")", "ATTACK", "("+c.attack+")", "EXIT", map[bool]string{true: "True", false: "False"}[c.exit]).Replace(hostile)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, err := box.ExecStream(ctx, []string{"python3", "-I", "-c", program}, container.ExecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := relay.New(s, "the test proxy", 9100)
			r.SetStderr(s.Stderr)
			begin := time.Now()
			err = r.Greet(ctx, 20*time.Second)
			if c.greetErr {
				if err == nil || !errors.Is(err, relay.ErrProtocol) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("the greeting: %v; want %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var seen []string
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				mu.Lock()
				seen = append(seen, req.URL.Path)
				mu.Unlock()
				io.WriteString(w, "{}")
			})}
			served := make(chan error, 1)
			go func() { served <- srv.Serve(r) }()
			go r.Run()
			select {
			case <-r.Done():
			case <-time.After(20 * time.Second):
				t.Fatal("the relay did not end in 20 s")
			}
			err = r.Err()
			if !errors.Is(err, relay.ErrProtocol) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("the relay ended with %v; want %q", err, c.want)
			}
			if f := r.Failure(); !strings.Contains(f.Error(), "the test proxy's relay failed") || !strings.Contains(f.Error(), "FBRELAY1") {
				t.Errorf("the instance's error %q does not say the relay failed, with its standard error", f)
			}
			select {
			case err := <-served:
				if !errors.Is(err, relay.ErrProtocol) {
					t.Errorf("the proxy's Serve returned %v; want the relay's error", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("the proxy's Serve did not return in 10 s")
			}
			srv.Close()
			if d := time.Since(begin); d > 30*time.Second {
				t.Errorf("ending the relay took %s", d)
			}
			for _, id := range relay.StillOpen(r) {
				t.Errorf("connection %d is still open", id)
			}
		})
	}
}

// TestRelayGreetingTimeout: a relay that never greets is given up on.
func TestRelayGreetingTimeout(t *testing.T) {
	box := relayBox(t)
	ctx := context.Background()
	s, err := box.ExecStream(ctx, []string{"sleep", "600"}, container.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := relay.New(s, "the test proxy", 9100)
	begin := time.Now()
	if err := r.Greet(ctx, 2*time.Second); err == nil || !strings.Contains(err.Error(), "no greeting in 2s") {
		t.Errorf("greet: %v", err)
	}
	if d := time.Since(begin); d > 20*time.Second {
		t.Errorf("giving up took %s", d)
	}
	if _, err := r.Accept(); err == nil {
		t.Error("Accept after the failure succeeded")
	}
}
