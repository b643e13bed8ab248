package meter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/featbench/featbench/config"
)

// Limits bound one instance's use of the model; a zero field is no limit.
type Limits struct {
	Turns  int     // model requests
	Tokens int64   // tokens in and out together
	Cost   float64 // US dollars
}

// Failure modes of an instance whose agent a limit stopped.
const (
	TurnLimit  = "TurnLimit"
	TokenLimit = "TokenLimit"
	CostLimit  = "CostLimit"
)

// Totals are what one instance used so far.
type Totals struct {
	Turns     int     `json:"turns"`
	TokensIn  int64   `json:"tokens_in"`
	TokensOut int64   `json:"tokens_out"`
	Usage     Usage   `json:"usage"`
	Cost      float64 `json:"cost"`
	// Unpriced are the models that answered without a price in the table:
	// the cost is then unknown.
	Unpriced []string `json:"unpriced,omitempty"`
	// NoUsage counts model responses that reported no usage.
	NoUsage int `json:"no_usage,omitempty"`
	// UpstreamErrors counts model requests the upstream failed (no
	// answer, a timeout, a status of 500 and up, 429, or another refusal:
	// judge in upstream.go); LastError is the last of them, and
	// LastFailed says the last model request failed. LastUnreachable says
	// it failed for want of a connection.
	UpstreamErrors int    `json:"upstream_errors,omitempty"`
	LastError      string `json:"last_error,omitempty"`
	LastFailed     bool   `json:"last_failed,omitempty"`
	// LastUnreachable: the last model request found no upstream to
	// connect to.
	LastUnreachable bool `json:"last_unreachable,omitempty"`
	// Limit is the limit that stopped the agent: TurnLimit, TokenLimit
	// or CostLimit; "" when none did.
	Limit string `json:"limit,omitempty"`
}

// Upstream is where the proxy forwards to.
type Upstream struct {
	// URL is the API's base URL; a request's path is appended to it
	// (https://api.openai.com/v1 + /chat/completions).
	URL string
	// API is "openai", "anthropic" or "gemini": how Key is sent.
	API string
	Key string // "" to send none
	// Timeout bounds one request, the whole response included (0: 10
	// minutes).
	Timeout time.Duration
	// Transport makes the requests (nil: http.DefaultTransport's kind).
	Transport http.RoundTripper
}

// Exchange is one line of a trajectory: a request the agent made and the
// answer it got, whole.
type Exchange struct {
	Seq     int       `json:"seq"`
	Time    time.Time `json:"time"`
	Method  string    `json:"method"`
	Path    string    `json:"path"`
	Kind    Kind      `json:"kind,omitempty"` // the model call, "" for other requests
	Stream  bool      `json:"stream,omitempty"`
	Request any       `json:"request,omitempty"` // JSON as sent upstream, else a string
	Status  int       `json:"status"`
	// Response is the body as the agent got it: JSON, or the text of an
	// event stream.
	Response  any     `json:"response,omitempty"`
	Truncated bool    `json:"truncated,omitempty"` // the body was cut at MaxRecord
	Model     string  `json:"model,omitempty"`
	Usage     *Usage  `json:"usage,omitempty"`
	Cost      float64 `json:"cost,omitempty"`
	Unpriced  bool    `json:"unpriced,omitempty"` // the model has no price: the cost is unknown
	Seconds   float64 `json:"seconds"`
	Error     string  `json:"error,omitempty"` // the upstream's failure, or the limit that refused the request
	Limit     string  `json:"limit,omitempty"`
}

// MaxRecord bounds the bytes of one body a trajectory keeps; MaxRequest
// the bytes of a request the proxy accepts.
const (
	MaxRecord  = 32 << 20
	MaxRequest = 32 << 20
)

// Meter is one instance's proxy: an http.Handler that forwards, counts,
// prices, limits and records. It is safe for concurrent requests.
type Meter struct {
	up     Upstream
	prices map[string]config.Price
	lim    Limits
	client *http.Client
	target *url.URL

	mu   sync.Mutex
	tot  Totals
	seq  int
	traj io.Writer
	werr error
	hit  chan struct{}
	// down is the upstream's refusal of the key, once it refused it
	// (refused is then closed); unreach is closed at the first model
	// call that could not connect.
	down    *Down
	refused chan struct{}
	unreach chan struct{}
}

// New returns the meter of one instance; trajectory receives one JSON
// line per exchange.
func New(up Upstream, prices map[string]config.Price, lim Limits, trajectory io.Writer) (*Meter, error) {
	target, err := url.Parse(strings.TrimRight(up.URL, "/"))
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, fmt.Errorf("upstream %q is not an http(s) URL", up.URL)
	}
	tr := up.Transport
	if tr == nil {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	timeout := up.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	return &Meter{up: up, prices: prices, lim: lim, target: target, traj: trajectory, hit: make(chan struct{}),
		refused: make(chan struct{}), unreach: make(chan struct{}),
		client: &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // the agent sees a redirect; the proxy follows none
		}}}, nil
}

// Totals are what the instance used so far.
func (m *Meter) Totals() Totals {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tot
	t.Unpriced = slices.Clone(t.Unpriced)
	return t
}

// LimitHit is closed when a limit refused a request: the agent is to be
// stopped.
func (m *Meter) LimitHit() <-chan struct{} { return m.hit }

// Refused is closed when the upstream refused the key of a model call
// (Down says how): every later call would be refused too.
func (m *Meter) Refused() <-chan struct{} { return m.refused }

// Unreachable is closed when a model call could not connect to the
// upstream: it may be down (Check says), or it was a moment's loss.
func (m *Meter) Unreachable() <-chan struct{} { return m.unreach }

// Down is the upstream's refusal of the key, or nil.
func (m *Meter) Down() *Down {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.down
}

// Upstream is where the meter forwards to.
func (m *Meter) Upstream() Upstream { return m.up }

// Err is the first error writing the trajectory.
func (m *Meter) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.werr
}

// hop-by-hop headers, and those the proxy sets itself, are not forwarded.
var dropRequest = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "Host", "Content-Length", "Accept-Encoding",
	"Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key"}

var dropResponse = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"Content-Length", "Content-Encoding"}

// limitLocked is the limit the totals reached, or "".
func (m *Meter) limitLocked() string {
	switch {
	case m.lim.Turns > 0 && m.tot.Turns >= m.lim.Turns:
		return TurnLimit
	case m.lim.Tokens > 0 && m.tot.TokensIn+m.tot.TokensOut >= m.lim.Tokens:
		return TokenLimit
	case m.lim.Cost > 0 && m.tot.Cost >= m.lim.Cost:
		return CostLimit
	}
	return ""
}

// ServeHTTP forwards one request: a model call (counted, priced,
// limited), a read or a token count (forwarded as it is); anything else
// is refused.
func (m *Meter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	kind := KindOf(r.URL.Path)
	ex := Exchange{Time: start.UTC(), Method: r.Method, Path: r.URL.Path, Kind: kind}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequest+1))
	if err != nil || len(body) > MaxRequest {
		m.refuse(w, &ex, http.StatusRequestEntityTooLarge, "featbench_request", fmt.Sprintf("the request is over %d bytes, or could not be read", MaxRequest), start)
		return
	}
	if kind == Other && !harmless(r) {
		// The upstream's key must buy model calls only: not files,
		// batches, fine-tuning or images.
		m.refuse(w, &ex, http.StatusForbidden, "featbench_forbidden", r.Method+" "+r.URL.Path+" is not a model call: the proxy forwards model calls, reads and token counts only", start)
		return
	}
	if kind != Other {
		body, ex.Stream = prepare(kind, r.URL.Path, body)
		m.mu.Lock()
		limit := m.limitLocked()
		if limit != "" {
			if m.tot.Limit == "" {
				m.tot.Limit = limit
				close(m.hit)
			}
		} else {
			m.tot.Turns++
		}
		m.mu.Unlock()
		if limit != "" {
			ex.Limit = limit
			ex.Request = jsonOrString(body)
			m.refuse(w, &ex, http.StatusTooManyRequests, "featbench_limit", "the instance reached its "+limitName(limit)+"; the harness stops the agent", start)
			return
		}
	}
	ex.Request = jsonOrString(body)
	resp, err := m.forward(r, body)
	if err != nil {
		ex.Error = err.Error()
		m.upstreamFailed(kind, ex.Error, unreachable(err))
		m.refuse(w, &ex, http.StatusBadGateway, "featbench_upstream", "the upstream did not answer: "+err.Error(), start)
		return
	}
	defer resp.Body.Close()
	ex.Status = resp.StatusCode
	for k, vs := range resp.Header {
		if !slices.Contains(dropResponse, http.CanonicalHeaderKey(k)) {
			w.Header()[k] = vs
		}
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	stream := mt == "text/event-stream"
	w.WriteHeader(resp.StatusCode)
	st := &usageState{}
	rec := &capped{max: MaxRecord}
	sinks := []io.Writer{rec}
	var events *sse
	if stream {
		events = &sse{st: st}
		sinks = append(sinks, events)
	}
	_, cerr := copyFlush(w, resp.Body, io.MultiWriter(sinks...))
	if stream {
		events.flush()
	} else if !rec.cut {
		st.event(rec.buf.Bytes())
	}
	if stream {
		ex.Response = rec.buf.String()
	} else {
		ex.Response = jsonOrString(rec.buf.Bytes())
	}
	ex.Truncated = rec.cut
	ex.Model = st.model
	if cerr != nil {
		ex.Error = "reading the upstream's answer: " + cerr.Error()
	}
	if kind == Other {
		m.record(&ex, start)
		return
	}
	// The answer whole (or its first MaxRecord bytes) is judged: a
	// provider's refusal or failure is the upstream's, a refused key
	// stops the run.
	v := judge(resp.StatusCode, rec.buf.Bytes())
	failed := cerr != nil || v != answered
	m.mu.Lock()
	m.tot.LastFailed, m.tot.LastUnreachable = failed, false
	if failed {
		m.tot.UpstreamErrors++
		m.tot.LastError = firstOf(ex.Error, fmt.Sprintf("status %d: %s", resp.StatusCode, errorMessage(rec.buf.Bytes())))
	}
	if v == keyRefused && m.down == nil {
		m.down = &Down{URL: m.up.URL, Status: resp.StatusCode, Cause: r.URL.Path + ": " + errorMessage(rec.buf.Bytes())}
		close(m.refused)
	}
	if st.seen {
		u := st.u
		ex.Usage = &u
		m.tot.Usage.Add(u)
		m.tot.TokensIn += u.In()
		m.tot.TokensOut += u.Output
		model := firstOf(st.model, requestModel(body))
		ex.Model = model
		if p, ok := lookupPrice(m.prices, model); ok {
			ex.Cost = Cost(p, u)
			m.tot.Cost += ex.Cost
		} else {
			ex.Unpriced = true
			if !slices.Contains(m.tot.Unpriced, model) {
				m.tot.Unpriced = append(m.tot.Unpriced, model)
			}
		}
	} else if resp.StatusCode < 300 {
		m.tot.NoUsage++
	}
	m.mu.Unlock()
	m.record(&ex, start)
}

// harmless is a request the proxy forwards unmetered: a read (GET, HEAD:
// the models list, say) or a token count, which costs nothing.
func harmless(r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	p := strings.TrimRight(r.URL.Path, "/")
	return r.Method == http.MethodPost && (strings.HasSuffix(p, "/count_tokens") || strings.HasSuffix(p, ":countTokens") || strings.HasSuffix(p, "/input_tokens"))
}

func limitName(l string) string {
	switch l {
	case TurnLimit:
		return "turn limit (max_turns)"
	case TokenLimit:
		return "token limit (max_tokens)"
	}
	return "cost limit (max_cost)"
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// lookupPrice finds a model's price: by its exact name, else by the
// longest priced name it starts with followed by '-' or '@' (a dated
// snapshot such as gpt-4o-2024-08-06 of gpt-4o).
func lookupPrice(prices map[string]config.Price, model string) (config.Price, bool) {
	if p, ok := prices[model]; ok {
		return p, true
	}
	best := ""
	for name := range prices {
		if len(name) > len(best) && strings.HasPrefix(model, name) && len(model) > len(name) && strings.ContainsRune("-@", rune(model[len(name)])) {
			best = name
		}
	}
	if best == "" {
		return config.Price{}, false
	}
	return prices[best], true
}

func (m *Meter) upstreamFailed(kind Kind, msg string, unreachable bool) {
	if kind == Other {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tot.UpstreamErrors++
	m.tot.LastError = msg
	m.tot.LastFailed, m.tot.LastUnreachable = true, unreachable
	if unreachable {
		select {
		case <-m.unreach:
		default:
			close(m.unreach)
		}
	}
}

// refuse answers the agent with an error of the proxy's own, in the shape
// both OpenAI's and Anthropic's clients read, and records it.
func (m *Meter) refuse(w http.ResponseWriter, ex *Exchange, status int, typ, msg string, start time.Time) {
	body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg, "code": typ}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
	ex.Status = status
	ex.Response = json.RawMessage(body)
	if ex.Error == "" {
		ex.Error = msg
	}
	m.record(ex, start)
}

// record writes an exchange to the trajectory.
func (m *Meter) record(ex *Exchange, start time.Time) {
	ex.Seconds = time.Since(start).Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	ex.Seq = m.seq
	line, err := json.Marshal(ex)
	if err == nil {
		line = append(line, '\n')
		_, err = m.traj.Write(line)
	}
	if err != nil && m.werr == nil {
		m.werr = fmt.Errorf("writing the trajectory: %w", err)
	}
}

// forward sends the request upstream.
func (m *Meter) forward(r *http.Request, body []byte) (*http.Response, error) {
	u := *m.target
	u.Path = m.target.Path + r.URL.Path
	u.RawPath = ""
	q := r.URL.Query()
	q.Del("key") // Gemini's key in the query: the proxy's is sent instead
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		if !slices.Contains(dropRequest, http.CanonicalHeaderKey(k)) {
			req.Header[k] = vs
		}
	}
	m.up.authorize(req)
	return m.client.Do(req)
}

// prepare makes a model request report its usage: OpenAI's streamed chat
// completions do only when asked (stream_options.include_usage). It says
// whether the request streams.
func prepare(kind Kind, path string, body []byte) ([]byte, bool) {
	if kind == Gemini {
		return body, strings.HasSuffix(path, ":streamGenerateContent")
	}
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		return body, false
	}
	stream := string(req["stream"]) == "true"
	if kind != OpenAIChat && kind != OpenAICompl || !stream {
		return body, stream
	}
	var opts map[string]any
	_ = json.Unmarshal(req["stream_options"], &opts)
	if opts == nil {
		opts = map[string]any{}
	}
	if opts["include_usage"] == true {
		return body, true
	}
	opts["include_usage"] = true
	raw, err := json.Marshal(opts)
	if err != nil {
		return body, true
	}
	req["stream_options"] = raw
	out, err := json.Marshal(req)
	if err != nil {
		return body, true
	}
	return out, true
}

func requestModel(body []byte) string {
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	return req.Model
}

// jsonOrString is raw as JSON when it is JSON, else as a string.
func jsonOrString(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	if json.Valid(raw) {
		return json.RawMessage(bytes.Clone(raw))
	}
	return string(raw)
}

// capped keeps the first max bytes written to it.
type capped struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		c.cut = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

// copyFlush copies the upstream's answer to the agent as it comes,
// flushing each piece (streams must not wait), and to tee.
func copyFlush(w http.ResponseWriter, r io.Reader, tee io.Writer) (int64, error) {
	fl, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := r.Read(buf)
		if k > 0 {
			tee.Write(buf[:k])
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, nil // the agent went away: its loss, not the upstream's
			}
			if fl != nil {
				fl.Flush()
			}
			n += int64(k)
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// Serve answers requests on l until ctx ends.
func (m *Meter) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: m, ReadHeaderTimeout: time.Minute, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
		}
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = srv.Close()
	}()
	err := srv.Serve(l)
	close(done)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
