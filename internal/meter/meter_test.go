package meter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/meter"
)

var prices = map[string]config.Price{
	"double-model":  {Input: 3, CachedInput: 0.3, Output: 15},
	"double-claude": {Input: 1, Output: 5},
}

// startMeter serves a meter in front of the LLM test double on a unix
// socket, as eval infer does, and returns a client that reaches it.
func startMeter(t *testing.T, dbl *llmdouble.Server, api string, lim meter.Limits, traj io.Writer) (*meter.Meter, *http.Client) {
	t.Helper()
	m, err := meter.New(meter.Upstream{URL: dbl.URL, API: api, Key: "sk-upstream-secret"}, prices, lim, traj)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "meter.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return m, &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
}

func post(t *testing.T, c *http.Client, path string, body any) (int, string) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", "http://proxy"+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer agent-dummy")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// TestMeterCountsWhatTheLLMTestDoubleServed: for OpenAI chat completions
// and Anthropic messages, streamed or not, the tokens the meter counts are
// the tokens the test double reported, the cost is the price table's, the
// agent's own key never reaches the upstream, and Replay gives the same
// totals from the trajectory.
func TestMeterCountsWhatTheLLMTestDoubleServed(t *testing.T) {
	for _, api := range []string{"openai", "anthropic"} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", api, stream), func(t *testing.T) {
				dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
					if r.N == 1 {
						return llmdouble.Reply{Calls: []llmdouble.Call{{Name: "write_file", Args: map[string]any{"path": "a.py", "content": "x = 1\n"}}}}
					}
					return llmdouble.Reply{Text: "done " + strings.Repeat("z", r.N*7)}
				})
				if err != nil {
					t.Fatal(err)
				}
				defer dbl.Close()
				dbl.Cached = 3
				var traj bytes.Buffer
				m, c := startMeter(t, dbl, api, meter.Limits{}, &traj)
				path, model := "/chat/completions", "double-model"
				if api == "anthropic" {
					path, model = "/v1/messages", "double-claude"
				}
				for i := 0; i < 3; i++ {
					code, body := post(t, c, path, map[string]any{"model": model, "stream": stream, "max_tokens": 100,
						"messages": []any{map[string]any{"role": "user", "content": fmt.Sprintf("task %d", i)}}})
					if code != 200 {
						t.Fatalf("status %d: %s", code, body)
					}
					if stream && !strings.Contains(body, "data: ") {
						t.Fatalf("not a stream: %s", body)
					}
				}
				served := dbl.Served()
				tot := m.Totals()
				if tot.Turns != 3 || tot.TokensIn != served.Input || tot.TokensOut != served.Output || tot.Usage.CachedInput != served.CachedInput {
					t.Fatalf("measured %+v; the double served %+v", tot, served)
				}
				p := prices[model]
				want := meter.Cost(p, meter.Usage{Input: served.Input - served.CachedInput, CachedInput: served.CachedInput, Output: served.Output})
				if math.Abs(tot.Cost-want) > 1e-12 || tot.Cost == 0 {
					t.Fatalf("cost %v, want %v", tot.Cost, want)
				}
				wantKey := "Bearer sk-upstream-secret"
				if api == "anthropic" {
					wantKey = "sk-upstream-secret"
				}
				if fmt.Sprint(served.Keys) != "["+wantKey+"]" {
					t.Errorf("the upstream got the keys %q; want only the proxy's", served.Keys)
				}
				if strings.Contains(traj.String(), "agent-dummy") || strings.Contains(traj.String(), "sk-upstream-secret") {
					t.Error("the trajectory holds the agent's key header")
				}
				re, err := meter.Replay(bytes.NewReader(traj.Bytes()), prices)
				if err != nil {
					t.Fatal(err)
				}
				if re.Turns != tot.Turns || re.TokensIn != tot.TokensIn || re.TokensOut != tot.TokensOut || math.Abs(re.Cost-tot.Cost) > 1e-12 {
					t.Fatalf("replayed %+v; measured %+v", re, tot)
				}
				// A trajectory whose counts were edited does not replay.
				forged := strings.Replace(traj.String(), `"output":`, `"output":1`, 1)
				if _, err := meter.Replay(strings.NewReader(forged), prices); err == nil {
					t.Error("an edited usage replayed")
				}
			})
		}
	}
}

// TestMeterLimits: the request past a limit is refused, recorded, and
// signalled; an upstream failure is counted.
func TestMeterLimits(t *testing.T) {
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		if r.N == 2 {
			return llmdouble.Reply{Status: 529}
		}
		return llmdouble.Reply{Text: "ok"}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	var traj bytes.Buffer
	m, c := startMeter(t, dbl, "openai", meter.Limits{Turns: 3}, &traj)
	msg := map[string]any{"model": "double-model", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	var codes []int
	for i := 0; i < 4; i++ {
		code, _ := post(t, c, "/chat/completions", msg)
		codes = append(codes, code)
	}
	if fmt.Sprint(codes) != "[200 529 200 429]" {
		t.Fatalf("statuses %v", codes)
	}
	select {
	case <-m.LimitHit():
	default:
		t.Fatal("the limit was not signalled")
	}
	tot := m.Totals()
	if tot.Limit != meter.TurnLimit || tot.Turns != 3 || tot.UpstreamErrors != 1 {
		t.Fatalf("totals %+v", tot)
	}
	if !strings.Contains(traj.String(), `"limit":"TurnLimit"`) {
		t.Errorf("the refused request is not in the trajectory:\n%s", traj.String())
	}
	// A request that is neither a model call, a read nor a token count
	// is refused: the key buys model calls only.
	code, body := post(t, c, "/files", map[string]any{})
	if code != 403 || !strings.Contains(body, "not a model call") || m.Totals().Turns != 3 {
		t.Errorf("a POST /files: status %d, %s, turns %d", code, body, m.Totals().Turns)
	}
	// A read passes without counting (the double answers 404).
	resp, err := c.Get("http://proxy/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || m.Totals().Turns != 3 {
		t.Errorf("GET /models: status %d, turns %d", resp.StatusCode, m.Totals().Turns)
	}
}

// TestMeterTokenAndCostLimits: the request after the totals reach the
// token or the cost limit is refused with that limit.
func TestMeterTokenAndCostLimits(t *testing.T) {
	for _, c := range []struct {
		lim  meter.Limits
		want string
	}{
		{meter.Limits{Tokens: 30}, meter.TokenLimit},
		{meter.Limits{Cost: 0.0001}, meter.CostLimit},
	} {
		dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
			return llmdouble.Reply{Text: "a fairly long answer of some tokens"}
		})
		if err != nil {
			t.Fatal(err)
		}
		m, cl := startMeter(t, dbl, "openai", c.lim, io.Discard)
		msg := map[string]any{"model": "double-model", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
		n := 0
		for ; n < 10; n++ {
			if code, _ := post(t, cl, "/chat/completions", msg); code != 200 {
				break
			}
		}
		if tot := m.Totals(); tot.Limit != c.want || n != dbl.Served().Requests || n == 0 || n == 10 {
			t.Errorf("%+v: limit %q after %d requests (%d served), totals %+v", c.lim, tot.Limit, n, dbl.Served().Requests, tot)
		}
		dbl.Close()
	}
}
