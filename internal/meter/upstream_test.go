package meter_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/meter"
)

// TestMeterJudgesUpstreamWithLLMTestDouble: a model call's answer is the
// upstream's failure (UpstreamError when last) for a 5xx, a 429 and a
// provider's refusal (402, 404, a 400 that names a policy or quota), the
// agent's for a 400 that says its request was wrong; a refused key (401,
// 403, Gemini's 400 API_KEY_INVALID) closes Refused, with Down naming
// the status, and nothing else does.
func TestMeterJudgesUpstreamWithLLMTestDouble(t *testing.T) {
	for _, c := range []struct {
		status  int
		typ     string
		failed  bool
		refused bool
	}{
		{200, "", false, false},
		{500, "", true, false},
		{529, "overloaded_error", true, false},
		{429, "rate_limit_error", true, false},
		{402, "billing_not_active", true, false},
		{404, "not_found_error", true, false},
		{400, "content_policy_violation", true, false},
		{400, "insufficient_quota", true, false},
		{400, "invalid_request_error", false, false},
		{413, "request_too_large", false, false},
		{422, "invalid_request_error", false, false},
		{401, "authentication_error", true, true},
		{403, "permission_error", true, true},
		{400, "API_KEY_INVALID", true, true},
	} {
		t.Run(fmt.Sprintf("%d %s", c.status, c.typ), func(t *testing.T) {
			dbl, err := llmdouble.Start(func(llmdouble.Request) llmdouble.Reply {
				return llmdouble.Reply{Status: c.status, ErrorType: c.typ, Text: "ok"}
			})
			if err != nil {
				t.Fatal(err)
			}
			defer dbl.Close()
			m, cl := startMeter(t, dbl, "openai", meter.Limits{}, io.Discard)
			code, _ := post(t, cl, "/chat/completions", map[string]any{"model": "double-model", "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
			if code != c.status {
				t.Fatalf("the agent got %d, the upstream answered %d", code, c.status)
			}
			tot := m.Totals()
			if tot.LastFailed != c.failed {
				t.Errorf("last failed %v, want %v (%+v)", tot.LastFailed, c.failed, tot)
			}
			refused := false
			select {
			case <-m.Refused():
				refused = true
			default:
			}
			if refused != c.refused || (m.Down() != nil) != c.refused {
				t.Errorf("refused %v, down %v; want %v", refused, m.Down(), c.refused)
			}
			if d := m.Down(); d != nil && (d.Status != c.status || !strings.Contains(d.Error(), "refused the key")) {
				t.Errorf("down: %v", d)
			}
			select {
			case <-m.Unreachable():
				t.Error("an answer signalled an unreachable upstream")
			default:
			}
		})
	}
}

// TestMeterUnreachable: a model call that cannot connect (a closed port)
// is the upstream's failure, signalled on Unreachable; the key is not
// said to be refused.
func TestMeterUnreachable(t *testing.T) {
	closed := closedPort(t)
	m, err := meter.New(meter.Upstream{URL: closed, API: "openai"}, prices, meter.Limits{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("POST", "/chat/completions", strings.NewReader(`{"model":"double-model"}`)))
	if rec.Code != http.StatusBadGateway {
		t.Errorf("the agent got %d, want 502", rec.Code)
	}
	select {
	case <-m.Unreachable():
	default:
		t.Error("Unreachable not signalled")
	}
	if tot := m.Totals(); !tot.LastFailed || !tot.LastUnreachable || m.Down() != nil {
		t.Errorf("totals %+v, down %v", tot, m.Down())
	}
}

// closedPort is a URL of a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close()
	return url
}

// TestCheck: the upstream's models list asked with the key, the way each
// API takes it: a refused key (401, 403) and an upstream that cannot be
// reached, or does not answer, are Down, with the status and what the
// upstream said; any other answer (200, a 404 of an upstream without a
// models list, a 500) is not.
func TestCheck(t *testing.T) {
	var gotPath, gotKey string
	answer := func(status int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gotPath = r.URL.Path
			gotKey = r.Header.Get("Authorization") + r.Header.Get("X-Api-Key") + r.Header.Get("X-Goog-Api-Key")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"type":"x","message":"answered %d"}}`, status)
		}))
	}
	for _, c := range []struct {
		api, path, key string
		status         int
		down           bool
	}{
		{"openai", "/v1/models", "Bearer sk-x", 200, false},
		{"openai", "/v1/models", "Bearer sk-x", 401, true},
		{"anthropic", "/v1/v1/models", "sk-x", 403, true},
		{"gemini", "/v1/v1beta/models", "sk-x", 404, false},
		{"openai", "/v1/models", "Bearer sk-x", 500, false},
	} {
		srv := answer(c.status)
		err := meter.Check(context.Background(), meter.Upstream{URL: srv.URL + "/v1/", API: c.api, Key: "sk-x"})
		srv.Close()
		var d *meter.Down
		if errors.As(err, &d) != c.down || (err != nil && !c.down) {
			t.Errorf("%s answering %d: %v, want down %v", c.api, c.status, err, c.down)
		}
		if d != nil && (d.Status != c.status || !strings.Contains(d.Error(), fmt.Sprintf("answered %d", c.status))) {
			t.Errorf("%s answering %d: %v: not the status and the upstream's words", c.api, c.status, d)
		}
		if gotPath != c.path || gotKey != c.key {
			t.Errorf("%s: asked %s with key %q, want %s with %q", c.api, gotPath, gotKey, c.path, c.key)
		}
	}

	var d *meter.Down
	if err := meter.Check(context.Background(), meter.Upstream{URL: closedPort(t), API: "openai"}); !errors.As(err, &d) || d.Status != 0 || !strings.Contains(err.Error(), "cannot be reached") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a closed port: %v", err)
	}

	// A server that takes the connection and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	err = meter.Check(context.Background(), meter.Upstream{URL: "http://" + l.Addr().String(), API: "openai"})
	if !errors.As(err, &d) || !strings.Contains(err.Error(), "no answer within") {
		t.Errorf("a silent server: %v", err)
	}
	t.Logf("a silent server is down after %s", time.Since(start).Round(time.Millisecond))

	// Interrupted: nothing is said of the upstream.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := meter.Check(ctx, meter.Upstream{URL: "http://" + l.Addr().String(), API: "openai"}); errors.As(err, &d) {
		t.Errorf("an interrupted check: %v, want no Down", err)
	}
}
