package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeEngine is the little of the Docker API that an adopted container's
// loss check uses, on a unix socket: ping, and the inspection of one
// container, whose state the test sets. stop closes it, as a stopped
// engine's socket goes away.
type fakeEngine struct {
	mu      sync.Mutex
	state   string // "running", "exited" or "" (no such container)
	srv     *http.Server
	sock    string
	stopped bool
}

func newFakeEngine(t *testing.T) *fakeEngine {
	t.Helper()
	f := &fakeEngine{state: "running", sock: filepath.Join(t.TempDir(), "engine.sock")}
	ln, err := net.Listen("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(ln)
	t.Cleanup(f.stop)
	return f
}

func (f *fakeEngine) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Api-Version", "1.41")
	if strings.HasSuffix(r.URL.Path, "/_ping") {
		fmt.Fprint(w, "OK")
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/containers/c1/json") {
		http.Error(w, `{"message":"not in this fake"}`, http.StatusNotImplemented)
		return
	}
	f.mu.Lock()
	state := f.state
	f.mu.Unlock()
	if state == "" {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"No such container: c1"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"Id": "c1", "Name": "/box", "State": map[string]any{"Status": state, "Running": state == "running"},
		"HostConfig": map[string]any{"NetworkMode": "none"}, "NetworkSettings": map[string]any{"Networks": map[string]any{}},
	})
}

func (f *fakeEngine) set(state string) {
	f.mu.Lock()
	f.state = state
	f.mu.Unlock()
}

func (f *fakeEngine) stop() {
	if !f.stopped {
		f.stopped = true
		f.srv.Close()
	}
}

// TestLostCheck: after an operation on an adopted container failed, the
// container counts as lost (ErrLost) when it or its engine is gone, and
// the failure stays the operation's own when it still runs or when the
// caller's context ended. An error that wraps context.DeadlineExceeded
// from one of the operation's own bounded waits (the exit status of an
// exec, the killer exec), which a silent engine makes expire, is a loss
// when the engine is gone: checked, not taken as the caller's deadline.
//
// A command killed (exit 137 or 143) in a container the engine still
// shows running is watched for a while: the engine sees a torn-down
// container stop only after its commands saw the kill.
func TestLostCheck(t *testing.T) {
	defer func(d time.Duration) { killSettle = d }(killSettle)
	killSettle = 2 * time.Second
	ctx := context.Background()
	innerTimeout := fmt.Errorf("exec python3 in box: %w", context.DeadlineExceeded)
	for _, tc := range []struct {
		name    string
		state   string // the container's, on the engine
		stop    bool   // the engine is gone
		err     error  // the operation's
		killed  bool   // a command's exit status says it was killed
		stopsIn time.Duration
		callers func() (context.Context, context.CancelFunc)
		lost    bool
	}{
		{name: "a command that failed in a running container", state: "running", err: nil, lost: false},
		{name: "an operation's error, the container runs", state: "running", err: errors.New("copy: no such file"), lost: false},
		{name: "the container stopped", state: "exited", err: nil, lost: true},
		{name: "the container was removed", state: "", err: errors.New("exec: no such container"), lost: true},
		{name: "the engine is gone", state: "running", stop: true, err: errors.New("connect: no such file or directory"), lost: true},
		{name: "an inner wait timed out, the engine is gone", state: "running", stop: true, err: innerTimeout, lost: true},
		{name: "an inner wait timed out, the container runs", state: "running", err: innerTimeout, lost: false},
		{name: "a command killed with its container, the engine slow to see it", state: "running", killed: true, stopsIn: 300 * time.Millisecond, lost: true},
		{name: "a command killed in a container that runs on (OOM)", state: "running", killed: true, lost: false},
		{
			name: "the caller's context was cancelled, the engine is gone", state: "running", stop: true, err: context.Canceled, lost: false,
			callers: func() (context.Context, context.CancelFunc) {
				c, cancel := context.WithCancel(ctx)
				cancel()
				return c, cancel
			},
		},
		{
			name: "the caller's deadline passed, the engine is gone", state: "running", stop: true, err: innerTimeout, lost: false,
			callers: func() (context.Context, context.CancelFunc) {
				return context.WithDeadline(ctx, time.Now().Add(-time.Second))
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeEngine(t)
			e, err := Connect(ctx, "unix://"+f.sock)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var heard []error
			c, err := e.Adopt(ctx, "c1", AdoptOptions{OnLost: func(err error) error { heard = append(heard, err); return err }})
			if err != nil {
				t.Fatal(err)
			}
			f.set(tc.state)
			if tc.stop {
				f.stop()
			}
			opCtx := ctx
			if tc.callers != nil {
				var cancel context.CancelFunc
				opCtx, cancel = tc.callers()
				defer cancel()
			}
			if tc.stopsIn > 0 {
				time.AfterFunc(tc.stopsIn, func() { f.set("exited") })
			}
			got := c.lost(opCtx, tc.err, tc.killed)
			if lost := errors.Is(got, ErrLost); lost != tc.lost {
				t.Fatalf("lost = %v (%v), want %v", lost, got, tc.lost)
			}
			if !tc.lost && got != tc.err {
				t.Errorf("the operation's error became %v, want it as it was (%v)", got, tc.err)
			}
			if tc.lost && len(heard) != 1 {
				t.Errorf("OnLost heard %d losses, want 1", len(heard))
			}
		})
	}
}
