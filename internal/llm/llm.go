// Package llm is a small client for OpenAI-compatible chat APIs (OpenAI,
// vLLM, Ollama, llama.cpp's server), used by the collection pipeline to
// classify a test file's imports and to write docstrings and task
// statements.
//
// A Client POSTs one non-streaming request to <endpoint>/chat/completions
// per call, retries rate limits, server errors and network errors with
// exponential backoff, and can keep every successful reply in a cache
// directory so that a re-run of the pipeline gets the same bytes back
// without asking the model again.
//
// The API key is read once, from the environment variable the Config names,
// and is only ever put in the Authorization header: it is never logged,
// errors are scrubbed of it, and a Client prints without it.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults for the zero values of Config's fields.
const (
	DefaultTimeout = 5 * time.Minute // one attempt; a local model on a CPU is slow
	DefaultRetries = 3
)

// MaxResponseBytes caps how much of a response body is read. A chat reply
// is a few KiB; anything near this is a misbehaving server.
const MaxResponseBytes = 8 << 20

// Backoff between attempts: base·2^n up to backoffMax, or the server's
// Retry-After, capped so that a server cannot park the pipeline for hours.
const (
	backoffBase   = 1 * time.Second
	backoffMax    = 30 * time.Second
	retryAfterMax = 60 * time.Second
	maxRetries    = 100
)

// ErrTruncated is wrapped by the error Chat returns when the model stopped
// at the token limit (finish_reason "length").
var ErrTruncated = errors.New("reply cut off at the token limit")

// Config is what the featbench.toml [llm] table describes.
type Config struct {
	// Endpoint is the API's base URL, e.g. https://api.openai.com/v1 or
	// http://localhost:11434/v1; requests go to Endpoint + "/chat/completions".
	Endpoint string
	// Model is the model name the server knows, e.g. "gpt-4o-mini" or "qwen2.5-coder:7b".
	Model string
	// APIKeyEnv names the environment variable holding the API key. Empty,
	// or a variable that is unset or empty, sends no key (local servers need none).
	APIKeyEnv string
	// Temperature is sent as is; 0 is a valid (and the reproducible) choice.
	Temperature float64
	// MaxTokens limits the reply's length; 0 leaves it to the server.
	MaxTokens int
	// Seed is sent when set; servers that support it sample reproducibly.
	Seed *int64
	// Timeout bounds one attempt, including reading the reply; 0 means DefaultTimeout.
	Timeout time.Duration
	// Retries is how many times a failed attempt is retried; 0 means
	// DefaultRetries and a negative value means none.
	Retries int
	// CacheDir, when set, keeps successful replies, one file per request.
	CacheDir string
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// Usage is the server's token count for one request (zero when it sent none).
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// Reply is a model's answer.
type Reply struct {
	Content      string // choices[0].message.content
	Model        string // the model that answered, as the server names it
	FinishReason string
	Usage        Usage
	Cached       bool // read from CacheDir; no request was sent
}

// Client talks to one endpoint and model. It is safe for concurrent use.
type Client struct {
	url         string // <endpoint>/chat/completions
	model       string
	temperature float64
	maxTokens   int
	seed        *int64
	timeout     time.Duration
	retries     int
	cacheDir    string
	apiKey      string // never printed: see String, GoString and redact
	http        *http.Client

	// Seams for tests; New sets the production values.
	sleep         func(context.Context, time.Duration) error
	backoffBase   time.Duration
	backoffMax    time.Duration
	retryAfterMax time.Duration
	maxBody       int64
}

// New checks cfg and returns a client. getenv reads the API key variable
// (os.Getenv when nil); httpClient is used for every request (a new
// http.Client when nil) and must not set its own Timeout shorter than
// cfg.Timeout.
func New(cfg Config, getenv func(string) string, httpClient *http.Client) (*Client, error) {
	chatURL, err := chatURL(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("llm: model is empty")
	}
	if cfg.Model != strings.TrimSpace(cfg.Model) {
		return nil, fmt.Errorf("llm: model %q has leading or trailing spaces", cfg.Model)
	}
	if math.IsNaN(cfg.Temperature) || cfg.Temperature < 0 || cfg.Temperature > 2 {
		return nil, fmt.Errorf("llm: temperature %v is outside [0, 2]", cfg.Temperature)
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("llm: max_tokens %d is negative (0 leaves the limit to the server)", cfg.MaxTokens)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("llm: timeout %v is negative", cfg.Timeout)
	}
	if cfg.Retries > maxRetries {
		return nil, fmt.Errorf("llm: retries %d is more than %d", cfg.Retries, maxRetries)
	}
	if cfg.CacheDir != "" {
		if fi, err := os.Stat(cfg.CacheDir); err == nil && !fi.IsDir() {
			return nil, fmt.Errorf("llm: cache directory %s is not a directory", cfg.CacheDir)
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("llm: cache directory: %w", err)
		}
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	var key string
	if cfg.APIKeyEnv != "" {
		if !validEnvName(cfg.APIKeyEnv) {
			return nil, fmt.Errorf("llm: api key variable %q is not a valid environment variable name", cfg.APIKeyEnv)
		}
		key = strings.TrimSpace(getenv(cfg.APIKeyEnv))
		// The value is deliberately left out of this message.
		for i := 0; i < len(key); i++ {
			if key[i] <= ' ' || key[i] >= 0x7f {
				return nil, fmt.Errorf("llm: the value of $%s has a character not allowed in an HTTP header (byte %d of %d)", cfg.APIKeyEnv, i+1, len(key))
			}
		}
	}
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	c := &Client{
		url:           chatURL,
		model:         cfg.Model,
		temperature:   cfg.Temperature + 0, // -0 becomes 0, so both give one cache key
		maxTokens:     cfg.MaxTokens,
		timeout:       cfg.Timeout,
		retries:       cfg.Retries,
		cacheDir:      cfg.CacheDir,
		apiKey:        key,
		http:          httpClient,
		sleep:         sleepCtx,
		backoffBase:   backoffBase,
		backoffMax:    backoffMax,
		retryAfterMax: retryAfterMax,
		maxBody:       MaxResponseBytes,
	}
	if cfg.Seed != nil {
		s := *cfg.Seed // a copy, so that the caller's variable cannot change the client
		c.seed = &s
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	switch {
	case c.retries == 0:
		c.retries = DefaultRetries
	case c.retries < 0:
		c.retries = 0
	}
	return c, nil
}

// chatURL checks the endpoint and appends the chat completions path.
func chatURL(endpoint string) (string, error) {
	if endpoint == "" {
		return "", errors.New("llm: endpoint is empty")
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		// url.Parse quotes the input; it may hold credentials, so say less.
		return "", errors.New("llm: endpoint is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("llm: endpoint scheme %q is not http or https", u.Scheme)
	}
	if u.User != nil {
		// Credentials in the URL would show up in every error message.
		return "", errors.New("llm: endpoint has credentials in it; put the key in the variable api_key_env names")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		// Not quoted: a query may carry a key.
		return "", errors.New("llm: endpoint has a query or fragment; give the API's base URL")
	}
	if u.Host == "" {
		return "", fmt.Errorf("llm: endpoint %s has no host", endpoint)
	}
	path := strings.TrimRight(u.Path, "/")
	if strings.HasSuffix(path, "/chat/completions") {
		return "", fmt.Errorf("llm: endpoint %s is the chat completions URL; give the API's base URL (e.g. %s)",
			endpoint, strings.TrimSuffix(strings.TrimRight(endpoint, "/"), "/chat/completions"))
	}
	u.Path = path + "/chat/completions"
	u.RawPath = ""
	return u.String(), nil
}

func validEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return s != ""
}

// String describes the client without its key.
func (c *Client) String() string {
	return fmt.Sprintf("llm.Client{%s, model %q}", c.url, c.model)
}

// GoString is String, so that %#v does not print the key either.
func (c *Client) GoString() string { return c.String() }

// Chat sends msgs and returns the model's reply, from the cache when
// CacheDir holds one for the same request.
func (c *Client) Chat(ctx context.Context, msgs []Message) (Reply, error) {
	r, err := c.chat(ctx, msgs)
	if err != nil {
		return Reply{}, c.scrub(err)
	}
	return r, nil
}

func (c *Client) chat(ctx context.Context, msgs []Message) (Reply, error) {
	if len(msgs) == 0 {
		return Reply{}, errors.New("llm: no messages")
	}
	for i, m := range msgs {
		if m.Role == "" {
			return Reply{}, fmt.Errorf("llm: message %d has no role", i)
		}
	}
	var key string
	if c.cacheDir != "" {
		key = c.cacheKey(msgs)
		r, ok, err := c.readCache(key)
		if err != nil {
			return Reply{}, err
		}
		if ok {
			return r, nil
		}
	}
	body, err := json.Marshal(c.request(msgs))
	if err != nil {
		return Reply{}, fmt.Errorf("llm: encoding the request: %w", err)
	}
	r, err := c.send(ctx, body)
	if err != nil {
		return Reply{}, err
	}
	if c.cacheDir != "" {
		return c.writeCache(key, msgs, r)
	}
	return r, nil
}

type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Seed        *int64    `json:"seed,omitempty"`
	Stream      bool      `json:"stream"`
}

func (c *Client) request(msgs []Message) chatRequest {
	return chatRequest{
		Model:       c.model,
		Messages:    msgs,
		Temperature: c.temperature,
		MaxTokens:   c.maxTokens,
		Seed:        c.seed,
		Stream:      false,
	}
}

// send makes up to 1+retries attempts.
func (c *Client) send(ctx context.Context, body []byte) (Reply, error) {
	for attempt := 0; ; attempt++ {
		r, retryAfter, err := c.attempt(ctx, body)
		if err == nil {
			return r, nil
		}
		if ctx.Err() != nil {
			return Reply{}, fmt.Errorf("llm: POST %s: %w", c.url, context.Cause(ctx))
		}
		if retryAfter < 0 || attempt >= c.retries {
			if attempt > 0 {
				return Reply{}, fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
			}
			return Reply{}, err
		}
		wait := c.backoff(attempt)
		if retryAfter > 0 {
			wait = min(retryAfter, c.retryAfterMax)
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return Reply{}, fmt.Errorf("llm: POST %s: %w while waiting to retry after: %v", c.url, serr, err)
		}
	}
}

func (c *Client) backoff(attempt int) time.Duration {
	d := c.backoffBase
	for i := 0; i < attempt && d < c.backoffMax; i++ {
		d *= 2
	}
	return min(d, c.backoffMax)
}

// noRetry is attempt's retryAfter for errors not worth retrying; 0 means
// retry after the backoff, a positive value retry after that long.
const noRetry = -1

// attempt makes one request.
func (c *Client) attempt(ctx context.Context, body []byte) (Reply, time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Reply{}, noRetry, fmt.Errorf("llm: POST %s: %w", c.url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "featbench-collect")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Reply{}, 0, c.transportError(ctx, actx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return Reply{}, 0, c.transportError(ctx, actx, fmt.Errorf("reading the response: %w", err))
	}
	if int64(len(data)) > c.maxBody {
		return Reply{}, noRetry, c.apiError(resp.StatusCode, fmt.Sprintf("response body is larger than %d bytes", c.maxBody), nil)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		retry := time.Duration(noRetry)
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			retry = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
		msg := errorMessage(data)
		if msg == "" {
			msg = "no error message"
		}
		return Reply{}, retry, c.apiError(resp.StatusCode, msg, nil)
	}
	r, err := c.parseReply(resp.StatusCode, data)
	return r, noRetry, err
}

// transportError describes a failed request or body read: the caller's
// cancellation is reported by send; our own per-attempt deadline is named.
func (c *Client) transportError(ctx, actx context.Context, err error) error {
	if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("llm: POST %s: no complete reply within the timeout of %v: %w", c.url, c.timeout, err)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // url.Error repeats the method and URL
	}
	return fmt.Errorf("llm: POST %s: %w", c.url, err)
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
// It returns 0 when there is none (use the backoff).
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return time.Nanosecond // "now": retry without the backoff
		}
		if n > int64(math.MaxInt64/time.Second) {
			return math.MaxInt64
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
		return time.Nanosecond
	}
	return 0
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal string  `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (c *Client) parseReply(status int, data []byte) (Reply, error) {
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return Reply{}, c.apiError(status, fmt.Sprintf("response is not a chat completion (%v); it starts %q", err, snippet(data, 200)), nil)
	}
	if msg := errorMessage(data); msg != "" {
		return Reply{}, c.apiError(status, msg, nil)
	}
	if len(cr.Choices) == 0 {
		return Reply{}, c.apiError(status, "response has no choices", nil)
	}
	ch := cr.Choices[0]
	if ch.FinishReason == "length" {
		limit := "the server's default limit; set max_tokens in [llm]"
		if c.maxTokens > 0 {
			limit = fmt.Sprintf("max_tokens = %d; raise max_tokens in [llm]", c.maxTokens)
		}
		return Reply{}, c.apiError(status, fmt.Sprintf("the model stopped at the token limit (finish_reason \"length\", %s)", limit), ErrTruncated)
	}
	if ch.Message.Content == nil || *ch.Message.Content == "" {
		if ch.Message.Refusal != "" {
			return Reply{}, c.apiError(status, "the model refused: "+snippet([]byte(ch.Message.Refusal), 500), nil)
		}
		return Reply{}, c.apiError(status, fmt.Sprintf("the reply is empty (finish_reason %q)", ch.FinishReason), nil)
	}
	model := cr.Model
	if model == "" {
		model = c.model
	}
	return Reply{
		Content:      *ch.Message.Content,
		Model:        model,
		FinishReason: ch.FinishReason,
		Usage:        Usage{PromptTokens: cr.Usage.PromptTokens, CompletionTokens: cr.Usage.CompletionTokens},
	}, nil
}

// errorMessage finds an error in a response body: OpenAI's and llama.cpp's
// {"error": {"message": ...}}, Ollama's {"error": "..."} and vLLM's
// {"object": "error", "message": ...}; a body that is not JSON is quoted.
// It returns "" for a JSON body without an error.
func errorMessage(data []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Object  string          `json:"object"`
		Message string          `json:"message"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		if len(bytes.TrimSpace(data)) == 0 {
			return ""
		}
		return fmt.Sprintf("%q", snippet(data, 300))
	}
	if e := bytes.TrimSpace(v.Error); len(e) > 0 && !bytes.Equal(e, []byte("null")) {
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		}
		var s string
		switch {
		case json.Unmarshal(e, &s) == nil && s != "":
			return snippet([]byte(s), 500)
		case json.Unmarshal(e, &obj) == nil && obj.Message != "":
			return snippet([]byte(obj.Message), 500)
		case json.Unmarshal(e, &obj) == nil && obj.Type != "":
			return snippet([]byte(obj.Type), 500)
		default:
			return "error " + snippet(e, 300)
		}
	}
	if v.Object == "error" && v.Message != "" {
		return snippet([]byte(v.Message), 500)
	}
	return ""
}

// snippet returns at most n bytes of b, cut at a rune boundary, as valid UTF-8.
func snippet(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) <= n {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(b[:cut]), "\uFFFD") + "…"
}

// APIError is a request the server answered, but not with a usable reply.
type APIError struct {
	URL     string // the chat completions URL
	Status  int    // HTTP status
	Message string // what the server said, or what was wrong with the reply
	Err     error  // ErrTruncated, or nil
}

func (e *APIError) Error() string {
	return fmt.Sprintf("llm: POST %s: HTTP %d %s: %s", e.URL, e.Status, http.StatusText(e.Status), e.Message)
}

func (e *APIError) Unwrap() error { return e.Err }

func (c *Client) apiError(status int, msg string, err error) error {
	return &APIError{URL: c.url, Status: status, Message: c.redact(msg), Err: err}
}

// redact removes the API key from text a server sent (some echo the
// header back in their error messages).
func (c *Client) redact(s string) string {
	if c.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.apiKey, "[redacted]")
}

// scrub is the last guard: an error whose text holds the key is replaced
// by one with the key redacted that still wraps the original chain.
func (c *Client) scrub(err error) error {
	if c.apiKey == "" || !strings.Contains(err.Error(), c.apiKey) {
		return err
	}
	return &redactedError{msg: c.redact(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
