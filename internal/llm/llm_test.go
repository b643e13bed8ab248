package llm

// The chat API is a network service the tests cannot reach, so every
// client test here runs against a local HTTP test server (httptest)
// standing in for it; their names say so (TestChatLocalTestServer...).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testKey = "sk-test-0123456789abcdef"

// localAPI is a local test server standing in for a chat completions API.
type localAPI struct {
	*httptest.Server
	calls atomic.Int64
	mu    sync.Mutex
	reqs  []seenRequest
}

type seenRequest struct {
	method, path string
	header       http.Header
	body         []byte
}

// newLocalAPI serves handle under /v1/chat/completions; n counts requests from 0.
func newLocalAPI(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *localAPI {
	t.Helper()
	a := &localAPI{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(a.calls.Add(1) - 1)
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.reqs = append(a.reqs, seenRequest{r.Method, r.URL.Path, r.Header.Clone(), body})
		a.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		handle(w, r, n)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *localAPI) endpoint() string { return a.URL + "/v1" }

func (a *localAPI) chatURL() string { return a.URL + "/v1/chat/completions" }

func (a *localAPI) request(t *testing.T, i int) seenRequest {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if i >= len(a.reqs) {
		t.Fatalf("request %d was not made (%d made)", i, len(a.reqs))
	}
	return a.reqs[i]
}

// completion is a chat completion body answering content.
func completion(content, finish string) string {
	b, _ := json.Marshal(map[string]any{
		"id":     "chatcmpl-1",
		"object": "chat.completion",
		"model":  "served-model-2026",
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content},
			"finish_reason": finish,
		}},
		"usage": map[string]any{"prompt_tokens": 17, "completion_tokens": 5, "total_tokens": 22},
	})
	return string(b)
}

func reply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// newTestClient builds a client for a's endpoint with short backoffs.
func newTestClient(t *testing.T, a *localAPI, edit func(*Config)) *Client {
	t.Helper()
	cfg := Config{Endpoint: a.endpoint(), Model: "test-model", APIKeyEnv: "FB_TEST_KEY"}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg, env(map[string]string{"FB_TEST_KEY": testKey}), a.Client())
	if err != nil {
		t.Fatal(err)
	}
	c.backoffBase = time.Millisecond
	c.backoffMax = 4 * time.Millisecond
	return c
}

var hello = []Message{{Role: "system", Content: "You classify imports."}, {Role: "user", Content: "from textkit import slugify"}}

func TestNewValidation(t *testing.T) {
	good := Config{Endpoint: "http://localhost:11434/v1", Model: "m"}
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"empty endpoint", func(c *Config) { c.Endpoint = "" }, "endpoint is empty"},
		{"ftp", func(c *Config) { c.Endpoint = "ftp://host/v1" }, `scheme "ftp"`},
		{"no scheme", func(c *Config) { c.Endpoint = "localhost:11434/v1" }, "scheme"},
		{"no host", func(c *Config) { c.Endpoint = "http:///v1" }, "no host"},
		{"credentials", func(c *Config) { c.Endpoint = "https://user:hunter2@host/v1" }, "credentials"},
		{"query", func(c *Config) { c.Endpoint = "https://host/v1?key=abc" }, "query"},
		{"chat url", func(c *Config) { c.Endpoint = "https://host/v1/chat/completions" }, "base URL (e.g. https://host/v1)"},
		{"empty model", func(c *Config) { c.Model = " " }, "model is empty"},
		{"spaced model", func(c *Config) { c.Model = "m " }, "spaces"},
		{"temperature", func(c *Config) { c.Temperature = 2.5 }, "temperature"},
		{"max tokens", func(c *Config) { c.MaxTokens = -1 }, "max_tokens"},
		{"timeout", func(c *Config) { c.Timeout = -time.Second }, "timeout"},
		{"retries", func(c *Config) { c.Retries = 1000 }, "retries"},
		{"env name", func(c *Config) { c.APIKeyEnv = "OPENAI-KEY" }, "not a valid environment variable name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.edit(&cfg)
			_, err := New(cfg, env(nil), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
	if _, err := New(good, nil, nil); err != nil {
		t.Fatalf("New(good): %v", err)
	}

	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	cfg := good
	cfg.CacheDir = file
	if _, err := New(cfg, nil, nil); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("cache dir is a file: %v", err)
	}

	// A key that cannot go in a header is refused without being shown.
	cfg = good
	cfg.APIKeyEnv = "K"
	bad := "sk-secret\nvalue"
	_, err := New(cfg, env(map[string]string{"K": bad}), nil)
	if err == nil || strings.Contains(err.Error(), "sk-secret") || !strings.Contains(err.Error(), "$K") {
		t.Errorf("bad key: %v", err)
	}
}

func TestNewDefaults(t *testing.T) {
	seed := int64(7)
	c, err := New(Config{Endpoint: "https://api.example.org/v1/", Model: "m", Seed: &seed}, env(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	seed = 8 // the client keeps its own copy
	if c.url != "https://api.example.org/v1/chat/completions" || c.retries != DefaultRetries || c.timeout != DefaultTimeout || *c.seed != 7 {
		t.Errorf("defaults: url %s retries %d timeout %v seed %d", c.url, c.retries, c.timeout, *c.seed)
	}
	c, err = New(Config{Endpoint: "http://h:8080", Model: "m", Retries: -1}, env(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.url != "http://h:8080/chat/completions" || c.retries != 0 {
		t.Errorf("url %s retries %d", c.url, c.retries)
	}
}

func TestChatLocalTestServerRequestBody(t *testing.T) {
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, completion("ok", "stop")) })
	seed := int64(42)
	c := newTestClient(t, a, func(cfg *Config) { cfg.Temperature = 0.25; cfg.MaxTokens = 512; cfg.Seed = &seed })
	if _, err := c.Chat(context.Background(), hello); err != nil {
		t.Fatal(err)
	}
	req := a.request(t, 0)
	if req.method != http.MethodPost || req.path != "/v1/chat/completions" {
		t.Errorf("request %s %s", req.method, req.path)
	}
	if got := req.header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if got := req.header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	var body map[string]any
	if err := json.Unmarshal(req.body, &body); err != nil {
		t.Fatalf("body %s: %v", req.body, err)
	}
	want := map[string]any{
		"model": "test-model",
		"messages": []any{
			map[string]any{"role": "system", "content": "You classify imports."},
			map[string]any{"role": "user", "content": "from textkit import slugify"},
		},
		"temperature": 0.25,
		"max_tokens":  512.0,
		"seed":        42.0,
		"stream":      false,
	}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body\n got %v\nwant %v", body, want)
	}
}

func TestChatLocalTestServerNoKeyNoOptionalFields(t *testing.T) {
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, completion("ok", "stop")) })
	for i, cfg := range []Config{
		{Endpoint: a.endpoint(), Model: "m", APIKeyEnv: "FB_UNSET_KEY"}, // variable unset
		{Endpoint: a.endpoint(), Model: "m"},                            // no variable named
		{Endpoint: a.endpoint(), Model: "m", APIKeyEnv: "FB_BLANK_KEY"}, // variable set to spaces
	} {
		c, err := New(cfg, env(map[string]string{"FB_BLANK_KEY": "  "}), a.Client())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Chat(context.Background(), hello); err != nil {
			t.Fatal(err)
		}
		req := a.request(t, i)
		if v, ok := req.header["Authorization"]; ok {
			t.Errorf("config %d: Authorization sent: %q", i, v)
		}
		var body map[string]any
		json.Unmarshal(req.body, &body)
		for _, k := range []string{"max_tokens", "seed"} {
			if _, ok := body[k]; ok {
				t.Errorf("config %d: %s sent though unset: %s", i, k, req.body)
			}
		}
		if body["temperature"] != 0.0 || body["stream"] != false {
			t.Errorf("config %d: temperature/stream: %s", i, req.body)
		}
	}
}

func TestChatLocalTestServerSuccess(t *testing.T) {
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		reply(w, 200, completion("slugify is the top-level object.", "stop"))
	})
	c := newTestClient(t, a, nil)
	r, err := c.Chat(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	want := Reply{Content: "slugify is the top-level object.", Model: "served-model-2026", FinishReason: "stop",
		Usage: Usage{PromptTokens: 17, CompletionTokens: 5}}
	if r != want {
		t.Errorf("reply %+v, want %+v", r, want)
	}

	// A server that names no model and counts no tokens (some local ones).
	b := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		reply(w, 200, `{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`)
	})
	r, err = newTestClient(t, b, nil).Chat(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "test-model" || r.Content != "hi" || r.Usage != (Usage{}) {
		t.Errorf("reply %+v", r)
	}
}

func TestChatRejectsBadMessages(t *testing.T) {
	c, err := New(Config{Endpoint: "http://127.0.0.1:1/v1", Model: "m"}, env(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(context.Background(), nil); err == nil {
		t.Error("no messages: no error")
	}
	if _, err := c.Chat(context.Background(), []Message{{Content: "x"}}); err == nil || !strings.Contains(err.Error(), "role") {
		t.Errorf("no role: %v", err)
	}
}

func TestChatLocalTestServerCacheHit(t *testing.T) {
	n := 0
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		n++ // a different answer each time: a hit must not ask again
		reply(w, 200, completion(fmt.Sprintf("answer %d: \"quoted\", <tag> & é\n", n), "stop"))
	})
	dir := filepath.Join(t.TempDir(), "cache") // created on first write
	c := newTestClient(t, a, func(cfg *Config) { cfg.CacheDir = dir })
	first, err := c.Chat(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached {
		t.Error("first reply marked cached")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 1 || !strings.HasSuffix(files[0], ".json") {
		t.Fatalf("cache files %v", files)
	}
	stored, _ := os.ReadFile(files[0])

	second, err := c.Chat(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if a.calls.Load() != 1 {
		t.Errorf("server called %d times, want 1", a.calls.Load())
	}
	if !second.Cached {
		t.Error("second reply not marked cached")
	}
	second.Cached = false
	if second != first {
		t.Errorf("cached reply %+v differs from %+v", second, first)
	}
	if again, _ := os.ReadFile(files[0]); !bytes.Equal(again, stored) {
		t.Error("a hit rewrote the cache file")
	}

	// A new client (a re-run) on another server reads the same entry: the
	// endpoint is not part of the key.
	b := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, _ int) { reply(w, 200, completion("other", "stop")) })
	third, err := newTestClient(t, b, func(cfg *Config) { cfg.CacheDir = dir }).Chat(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if b.calls.Load() != 0 || third.Content != first.Content {
		t.Errorf("re-run on another endpoint: %d calls, content %q", b.calls.Load(), third.Content)
	}

	// What decides the answer is in the key: each change is a miss.
	changes := []func(*Config){
		func(cfg *Config) { cfg.Model = "other-model" },
		func(cfg *Config) { cfg.Temperature = 0.5 },
		func(cfg *Config) { cfg.MaxTokens = 100 },
		func(cfg *Config) { s := int64(0); cfg.Seed = &s },
	}
	for i, change := range changes {
		before := a.calls.Load()
		cc := newTestClient(t, a, func(cfg *Config) { cfg.CacheDir = dir; change(cfg) })
		if r, err := cc.Chat(context.Background(), hello); err != nil || r.Cached || a.calls.Load() != before+1 {
			t.Errorf("change %d: cached %v, err %v, calls %d→%d", i, r.Cached, err, before, a.calls.Load())
		}
	}
	before := a.calls.Load()
	if r, _ := c.Chat(context.Background(), hello[:1]); r.Cached || a.calls.Load() != before+1 {
		t.Error("other messages hit the cache")
	}
}

func TestCacheKey(t *testing.T) {
	c, err := New(Config{Endpoint: "http://h/v1", Model: "m"}, env(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	k := c.cacheKey(hello)
	if len(k) != 64 || k != c.cacheKey(append([]Message(nil), hello...)) {
		t.Fatalf("key %q is not a stable SHA-256", k)
	}
	pairs := [][2][]Message{
		{{{Role: "user", Content: "ab"}, {Role: "user", Content: "c"}}, {{Role: "user", Content: "a"}, {Role: "user", Content: "bc"}}},
		{{{Role: "user", Content: "x"}}, {{Role: "system", Content: "x"}}},
		{{{Role: "user", Content: "x"}}, {{Role: "user", Content: "x"}, {Role: "user", Content: ""}}},
		{{{Role: "user", Content: "\xff"}}, {{Role: "user", Content: "\xfe"}}}, // JSON would make both U+FFFD
	}
	for i, p := range pairs {
		if c.cacheKey(p[0]) == c.cacheKey(p[1]) {
			t.Errorf("pair %d: same key", i)
		}
	}
	d, _ := New(Config{Endpoint: "https://elsewhere:9/api", Model: "m", APIKeyEnv: "K", Timeout: time.Second, Retries: 9},
		env(map[string]string{"K": "key"}), nil)
	if d.cacheKey(hello) != k {
		t.Error("endpoint, key, timeout or retries changed the cache key")
	}
	z, _ := New(Config{Endpoint: "http://h/v1", Model: "m", Temperature: 0}, env(nil), nil)
	negZero := 0.0
	negZero = -negZero
	nz, _ := New(Config{Endpoint: "http://h/v1", Model: "m", Temperature: negZero}, env(nil), nil)
	if z.cacheKey(hello) != nz.cacheKey(hello) {
		t.Error("temperature -0 and 0 give different keys")
	}
}

func TestChatLocalTestServerCacheCorruptFile(t *testing.T) {
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, _ int) { reply(w, 200, completion("fresh", "stop")) })
	dir := t.TempDir()
	c := newTestClient(t, a, func(cfg *Config) { cfg.CacheDir = dir })
	path := c.cachePath(c.cacheKey(hello))
	other := c.cachePath(c.cacheKey(hello[:1]))
	for i, junk := range []string{
		`{"format": "featbench-llm-cache/1", "key": "`, // torn write
		"",
		`{"format":"featbench-llm-cache/1","key":"0000","reply":{"content":"wrong key"}}`,
		`{"format":"featbench-llm-cache/1","key":"` + c.cacheKey(hello) + `","reply":{"content":""}}`,
	} {
		if err := os.WriteFile(path, []byte(junk), 0o644); err != nil {
			t.Fatal(err)
		}
		before := a.calls.Load()
		r, err := c.Chat(context.Background(), hello)
		if err != nil {
			t.Fatalf("junk %d: %v", i, err)
		}
		if r.Cached || r.Content != "fresh" || a.calls.Load() != before+1 {
			t.Errorf("junk %d: reply %+v, calls %d→%d", i, r, before, a.calls.Load())
		}
		if r, err := c.Chat(context.Background(), hello); err != nil || !r.Cached || r.Content != "fresh" {
			t.Errorf("junk %d: not rewritten: %+v %v", i, r, err)
		}
	}
	// An entry copied under another request's name is not that request's answer.
	data, _ := os.ReadFile(path)
	os.WriteFile(other, data, 0o644)
	if r, _ := c.Chat(context.Background(), hello[:1]); r.Cached {
		t.Error("entry under the wrong name was used")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestChatLocalTestServerCacheOnlySuccess(t *testing.T) {
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch n {
		case 0:
			reply(w, 400, `{"error":{"message":"bad request"}}`)
		case 1:
			reply(w, 200, completion("cut", "length"))
		default:
			reply(w, 200, completion("good", "stop"))
		}
	})
	dir := t.TempDir()
	c := newTestClient(t, a, func(cfg *Config) { cfg.CacheDir = dir })
	for i := 0; i < 2; i++ {
		if _, err := c.Chat(context.Background(), hello); err == nil {
			t.Fatalf("call %d: no error", i)
		}
		if files, _ := os.ReadDir(dir); len(files) != 0 {
			t.Fatalf("call %d: a failure was cached: %v", i, files)
		}
	}
	if r, err := c.Chat(context.Background(), hello); err != nil || r.Content != "good" || r.Cached {
		t.Fatalf("third call: %+v %v", r, err)
	}
	if a.calls.Load() != 3 {
		t.Errorf("%d calls, want 3", a.calls.Load())
	}
}

func TestChatLocalTestServerCacheConcurrent(t *testing.T) {
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, _ int) { reply(w, 200, completion("same", "stop")) })
	dir := t.TempDir()
	c := newTestClient(t, a, func(cfg *Config) { cfg.CacheDir = dir })
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			msgs := []Message{{Role: "user", Content: fmt.Sprint(i % 4)}}
			if r, err := c.Chat(context.Background(), msgs); err != nil || r.Content != "same" {
				errs <- fmt.Errorf("%d: %+v %v", i, r, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) != 4 {
		t.Errorf("%d cache files, want 4", len(files))
	}
}

// sleeps records the waits between attempts without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func TestChatLocalTestServerRetries500(t *testing.T) {
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n < 3 {
			reply(w, 500+n, `{"error":{"message":"overloaded"}}`)
			return
		}
		reply(w, 200, completion("finally", "stop"))
	})
	c := newTestClient(t, a, nil) // Retries 0: the default, 3
	start := time.Now()
	r, err := c.Chat(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "finally" || a.calls.Load() != 4 {
		t.Errorf("reply %q after %d calls, want 4", r.Content, a.calls.Load())
	}
	if el := time.Since(start); el < 7*time.Millisecond { // 1+2+4 ms of real backoff
		t.Errorf("retried after %v, less than the backoff", el)
	}

	// The waits double up to the cap.
	b := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 503, "busy") })
	c = newTestClient(t, b, func(cfg *Config) { cfg.Retries = 4 })
	s := &sleeps{}
	c.sleep = s.sleep
	c.backoffBase, c.backoffMax = time.Second, 5*time.Second
	_, err = c.Chat(context.Background(), hello)
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second}
	if !reflect.DeepEqual(s.d, want) {
		t.Errorf("waits %v, want %v", s.d, want)
	}
	if b.calls.Load() != 5 {
		t.Errorf("%d calls, want 5", b.calls.Load())
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 503 || !strings.Contains(err.Error(), "gave up after 5 attempts") ||
		!strings.Contains(err.Error(), b.chatURL()) || !strings.Contains(err.Error(), `"busy"`) {
		t.Errorf("error: %v", err)
	}
}

func TestChatLocalTestServerRetryAfter429(t *testing.T) {
	cases := []struct {
		header string
		want   time.Duration
	}{
		{"7", 7 * time.Second},
		{"100000", 60 * time.Second}, // capped
		{"0", time.Nanosecond},       // now, not the backoff
		{"", time.Millisecond},       // none: the backoff
		{"soon", time.Millisecond},   // unreadable: the backoff
		{time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat), 20 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.header, func(t *testing.T) {
			a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					if tc.header != "" {
						w.Header().Set("Retry-After", tc.header)
					}
					reply(w, 429, `{"error":{"message":"Rate limit reached","type":"requests"}}`)
					return
				}
				reply(w, 200, completion("ok", "stop"))
			})
			c := newTestClient(t, a, nil)
			s := &sleeps{}
			c.sleep = s.sleep
			if _, err := c.Chat(context.Background(), hello); err != nil {
				t.Fatal(err)
			}
			if len(s.d) != 1 || a.calls.Load() != 2 {
				t.Fatalf("waits %v, calls %d", s.d, a.calls.Load())
			}
			// An HTTP date is a second-granular, so allow the clock to move.
			if d := s.d[0] - tc.want; d > 0 || d < -2*time.Second {
				t.Errorf("waited %v, want %v", s.d[0], tc.want)
			}
		})
	}
}

func TestChatLocalTestServerRealRetryAfter(t *testing.T) {
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			reply(w, 429, `{"error":{"message":"slow down"}}`)
			return
		}
		reply(w, 200, completion("ok", "stop"))
	})
	c := newTestClient(t, a, nil)
	start := time.Now()
	if _, err := c.Chat(context.Background(), hello); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < time.Second {
		t.Errorf("retried after %v; Retry-After said 1s", el)
	}
}

func TestChatLocalTestServerNoRetryOn4xx(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 422} {
		a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Retry-After", "0")
			reply(w, status, `{"error":{"message":"The model `+"`nope`"+` does not exist","type":"invalid_request_error"}}`)
		})
		c := newTestClient(t, a, func(cfg *Config) { cfg.Retries = 5 })
		_, err := c.Chat(context.Background(), hello)
		if a.calls.Load() != 1 {
			t.Errorf("HTTP %d: %d calls, want 1", status, a.calls.Load())
		}
		want := fmt.Sprintf("llm: POST %s: HTTP %d %s: The model `nope` does not exist", a.chatURL(), status, http.StatusText(status))
		if err == nil || err.Error() != want {
			t.Errorf("HTTP %d: error\n got %v\nwant %s", status, err, want)
		}
	}
}

func TestChatLocalTestServerNetworkErrorRetried(t *testing.T) {
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close() // the connection drops without a response
			}
			return
		}
		reply(w, 200, completion("ok", "stop"))
	})
	c := newTestClient(t, a, nil)
	r, err := c.Chat(context.Background(), hello)
	if err != nil || r.Content != "ok" || a.calls.Load() != 2 {
		t.Fatalf("reply %+v, err %v, %d calls", r, err, a.calls.Load())
	}

	// Nothing listening: every attempt fails, the error names the endpoint.
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	d, err := New(Config{Endpoint: url + "/v1", Model: "m", Retries: 2}, env(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	d.backoffBase = time.Millisecond
	_, err = d.Chat(context.Background(), hello)
	if err == nil || !strings.Contains(err.Error(), url+"/v1/chat/completions") || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("dead server: %v", err)
	}
}

func TestChatLocalTestServerAttemptTimeout(t *testing.T) {
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 {
			<-r.Context().Done() // never answers
			return
		}
		reply(w, 200, completion("ok", "stop"))
	})
	c := newTestClient(t, a, func(cfg *Config) { cfg.Timeout = 50 * time.Millisecond; cfg.Retries = 1 })
	if r, err := c.Chat(context.Background(), hello); err != nil || r.Content != "ok" {
		t.Fatalf("%+v %v", r, err)
	}

	b := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) { <-r.Context().Done() })
	c = newTestClient(t, b, func(cfg *Config) { cfg.Timeout = 20 * time.Millisecond; cfg.Retries = 1 })
	_, err := c.Chat(context.Background(), hello)
	if err == nil || !strings.Contains(err.Error(), "within the timeout of 20ms") || b.calls.Load() != 2 {
		t.Errorf("error %v after %d calls", err, b.calls.Load())
	}
}

func TestChatLocalTestServerContextCancel(t *testing.T) {
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
			reply(w, 200, completion("too late", "stop"))
		}
	})
	c := newTestClient(t, a, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Chat(ctx, hello)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("returned after %v", el)
	}
	if a.calls.Load() != 1 {
		t.Errorf("%d calls after cancel, want 1", a.calls.Load())
	}

	// Cancelled while waiting out a Retry-After.
	b := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Retry-After", "30")
		reply(w, 503, `{"error":{"message":"busy"}}`)
	})
	c = newTestClient(t, b, nil)
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start = time.Now()
	_, err = c.Chat(ctx, hello)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "busy") {
		t.Errorf("error %v, want context.Canceled naming the last error", err)
	}
	if el := time.Since(start); el > 2*time.Second || b.calls.Load() != 1 {
		t.Errorf("returned after %v and %d calls", el, b.calls.Load())
	}

	// Already cancelled: no request at all.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	before := b.calls.Load()
	if _, err := c.Chat(ctx, hello); !errors.Is(err, context.Canceled) || b.calls.Load() != before {
		t.Errorf("cancelled context: %v, %d calls", err, b.calls.Load()-before)
	}
}

func TestChatLocalTestServerErrorBodies(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"openai error object", 400, `{"error":{"message":"Invalid 'messages': empty","type":"invalid_request_error","code":null}}`, "HTTP 400 Bad Request: Invalid 'messages': empty"},
		{"ollama error string", 404, `{"error":"model \"llama9\" not found, try pulling it first"}`, `HTTP 404 Not Found: model "llama9" not found, try pulling it first`},
		{"vllm error", 400, `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}`, "HTTP 400 Bad Request: max_tokens is too large"},
		{"plain text", 403, "Forbidden by proxy\n", `HTTP 403 Forbidden: "Forbidden by proxy"`},
		{"empty body", 401, "", "HTTP 401 Unauthorized: no error message"},
		{"error in a 200", 200, `{"error":{"message":"context length exceeded"}}`, "HTTP 200 OK: context length exceeded"},
		{"no choices", 200, `{"model":"m","choices":[]}`, "HTTP 200 OK: response has no choices"},
		{"null content", 200, `{"choices":[{"message":{"content":null},"finish_reason":"tool_calls"}]}`, `HTTP 200 OK: the reply is empty (finish_reason "tool_calls")`},
		{"empty content", 200, completion("", "stop"), `the reply is empty (finish_reason "stop")`},
		{"refusal", 200, `{"choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`, "the model refused: I can't help with that."},
		{"not JSON", 200, "<html>gateway</html>", `HTTP 200 OK: response is not a chat completion`},
		{"length", 200, completion("partial ans", "length"), `finish_reason "length", max_tokens = 64; raise max_tokens`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, tc.status, tc.body) })
			c := newTestClient(t, a, func(cfg *Config) { cfg.MaxTokens = 64 })
			r, err := c.Chat(context.Background(), hello)
			if err == nil {
				t.Fatalf("no error; reply %+v", r)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "llm: POST "+a.chatURL()+": HTTP ") {
				t.Errorf("error\n got %v\nwant one containing %q", err, tc.want)
			}
			if a.calls.Load() != 1 {
				t.Errorf("%d calls; not retryable", a.calls.Load())
			}
			if errors.Is(err, ErrTruncated) != (tc.name == "length") {
				t.Errorf("errors.Is(ErrTruncated) = %v", errors.Is(err, ErrTruncated))
			}
		})
	}

	// Without max_tokens the message says to set it.
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 200, completion("x", "length")) })
	_, err := newTestClient(t, a, nil).Chat(context.Background(), hello)
	if err == nil || !strings.Contains(err.Error(), "set max_tokens") {
		t.Errorf("length without max_tokens: %v", err)
	}
}

func TestChatLocalTestServerBodyCap(t *testing.T) {
	big := completion(strings.Repeat("a", MaxResponseBytes), "stop")
	for _, status := range []int{200, 500} {
		a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, status, big) })
		c := newTestClient(t, a, nil)
		_, err := c.Chat(context.Background(), hello)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("larger than %d bytes", MaxResponseBytes)) {
			t.Errorf("HTTP %d: %v", status, err)
		}
		if len(err.Error()) > 1000 {
			t.Errorf("HTTP %d: error of %d bytes", status, len(err.Error()))
		}
		if a.calls.Load() != 1 {
			t.Errorf("HTTP %d: %d calls; an oversized body is not retried", status, a.calls.Load())
		}
	}
	// Just under the cap is read.
	base := completion("b", "stop")
	n := MaxResponseBytes - len(base) + 1
	ok := strings.Replace(base, `"b"`, `"`+strings.Repeat("b", n)+`"`, 1)
	if len(ok) != MaxResponseBytes {
		t.Fatalf("test body of %d bytes", len(ok))
	}
	a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, _ int) { reply(w, 200, ok) })
	if r, err := newTestClient(t, a, nil).Chat(context.Background(), hello); err != nil || len(r.Content) != n {
		t.Errorf("body of exactly the cap: %v (content %d bytes, want %d)", err, len(r.Content), n)
	}
}

func TestChatLocalTestServerKeyNeverInErrors(t *testing.T) {
	// A careless server echoing the Authorization header in its errors.
	echo := func(w http.ResponseWriter, r *http.Request, status int) {
		msg, _ := json.Marshal(map[string]any{"error": map[string]string{"message": "bad key: " + r.Header.Get("Authorization")}})
		reply(w, status, string(msg))
	}
	for _, status := range []int{401, 500} {
		a := newLocalAPI(t, func(w http.ResponseWriter, r *http.Request, n int) { echo(w, r, status) })
		c := newTestClient(t, a, func(cfg *Config) { cfg.Retries = 1 })
		_, err := c.Chat(context.Background(), hello)
		if err == nil {
			t.Fatal("no error")
		}
		if strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "Bearer [redacted]") {
			t.Errorf("HTTP %d: error %v", status, err)
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) || strings.Contains(apiErr.Message, testKey) {
			t.Errorf("HTTP %d: APIError %+v", status, apiErr)
		}
		for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
			if strings.Contains(s, testKey) {
				t.Errorf("client prints its key: %s", s)
			}
		}
	}
	// The guard on every error: one built elsewhere with the key in it.
	c := newTestClient(t, newLocalAPI(t, nil), nil)
	inner := errors.New("x " + testKey + " y")
	err := c.scrub(fmt.Errorf("wrapped: %w", inner))
	if strings.Contains(err.Error(), testKey) || !errors.Is(err, inner) {
		t.Errorf("scrub: %v", err)
	}
}
