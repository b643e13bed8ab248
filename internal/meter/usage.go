// Package meter is the metering proxy `eval infer` puts between an agent
// and its model: the agent's only way out of its container. It forwards
// OpenAI-compatible chat completions and responses, Anthropic messages and
// Gemini generateContent requests to the configured upstream with the
// upstream's key (which the agent never sees), counts the tokens of each
// response from the usage the response itself reports (streamed responses
// too), prices them from a table, enforces the instance's limits (turns,
// tokens, dollars), and records every exchange, whole, as the trajectory.
//
// The token and cost figures of a prediction made by `eval infer` are
// these counts, not what the agent says of itself; Replay recomputes them
// from a trajectory, so a figure can be checked against the exchanges
// behind it.
package meter

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/featbench/featbench/config"
)

// Usage is the tokens of one response, as the provider counts them.
type Usage struct {
	// Input is input tokens at the full price: OpenAI's prompt tokens
	// less the cached ones, Anthropic's input_tokens.
	Input int64 `json:"input"`
	// CachedInput is input read from the provider's prompt cache.
	CachedInput int64 `json:"cached_input,omitempty"`
	// CacheWrite is input written to Anthropic's prompt cache.
	CacheWrite int64 `json:"cache_write,omitempty"`
	// Output is output tokens, reasoning included.
	Output int64 `json:"output"`
}

// In is every input token: what tokens_in counts.
func (u Usage) In() int64 { return u.Input + u.CachedInput + u.CacheWrite }

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.Input += v.Input
	u.CachedInput += v.CachedInput
	u.CacheWrite += v.CacheWrite
	u.Output += v.Output
}

// Cost is what u costs at p, in US dollars (prices are per million
// tokens; an unset cache price is the input price).
func Cost(p config.Price, u Usage) float64 {
	cached, write := p.CachedInput, p.CacheWrite
	if cached == 0 {
		cached = p.Input
	}
	if write == 0 {
		write = p.Input
	}
	return (float64(u.Input)*p.Input + float64(u.CachedInput)*cached + float64(u.CacheWrite)*write + float64(u.Output)*p.Output) / 1e6
}

// Kind is which API a request speaks, from its path.
type Kind string

// The model calls the meter counts; anything else is forwarded and
// recorded but is not a turn.
const (
	OpenAIChat      Kind = "openai.chat"
	OpenAIResponses Kind = "openai.responses"
	OpenAICompl     Kind = "openai.completions"
	Anthropic       Kind = "anthropic.messages"
	Gemini          Kind = "gemini.generate"
	Other           Kind = ""
)

// KindOf says which model call a request path is, or Other.
func KindOf(path string) Kind {
	p := strings.TrimRight(path, "/")
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
		return OpenAIChat
	case strings.HasSuffix(p, "/responses"):
		return OpenAIResponses
	case strings.HasSuffix(p, "/completions"):
		return OpenAICompl
	case strings.HasSuffix(p, "/messages"):
		return Anthropic
	case strings.HasSuffix(p, ":generateContent"), strings.HasSuffix(p, ":streamGenerateContent"):
		return Gemini
	}
	return Other
}

// usageState follows one response's usage: a whole JSON body, or the
// events of a stream, where later events repeat or complete earlier ones
// (Anthropic's message_delta carries the final output count, OpenAI's
// last chunk the whole usage, Gemini's every chunk the running totals).
type usageState struct {
	u     Usage
	seen  bool
	model string
}

// num reads a JSON number member of m, 0 when absent.
func num(m map[string]any, key string) (int64, bool) {
	switch v := m[key].(type) {
	case float64:
		if v >= 0 && v < 1e15 {
			return int64(v), true
		}
	case json.Number:
		n, err := v.Int64()
		return n, err == nil && n >= 0
	}
	return 0, false
}

func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// event reads the usage one JSON object (a body, or a stream event)
// reports, if any.
func (s *usageState) event(raw []byte) {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		// Gemini's streamGenerateContent without alt=sse: a JSON array
		// of the chunks a stream would send.
		var chunks []json.RawMessage
		if json.Unmarshal(t, &chunks) == nil {
			for _, c := range chunks {
				s.event(c)
			}
		}
		return
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil || m == nil {
		return
	}
	if r := obj(m, "response"); r != nil && m["type"] != nil {
		// OpenAI responses stream: response.created, response.completed.
		m = r
	}
	if msg := obj(m, "message"); msg != nil && m["type"] == "message_start" {
		// Anthropic stream: the input counts come with message_start.
		m = msg
	}
	if model, ok := m["model"].(string); ok && model != "" {
		s.model = model
	} else if model, ok := m["modelVersion"].(string); ok && model != "" {
		s.model = model
	}
	if u := obj(m, "usage"); u != nil {
		s.openAIOrAnthropic(u)
	}
	if u := obj(m, "usageMetadata"); u != nil {
		s.gemini(u)
	}
}

// set replaces a count when the event gives it: streams repeat running
// totals, never increments.
func set(dst *int64, v int64, ok bool) bool {
	if ok {
		*dst = v
	}
	return ok
}

func (s *usageState) openAIOrAnthropic(u map[string]any) {
	if prompt, ok := num(u, "prompt_tokens"); ok {
		// OpenAI chat completions: prompt_tokens includes the cached.
		var cached int64
		if d := obj(u, "prompt_tokens_details"); d != nil {
			cached, _ = num(d, "cached_tokens")
		}
		s.u.CachedInput = min(cached, prompt)
		s.u.Input = prompt - s.u.CachedInput
		out, _ := num(u, "completion_tokens")
		s.u.Output = out
		s.seen = true
		return
	}
	if d := obj(u, "input_tokens_details"); d != nil {
		// OpenAI responses: input_tokens includes the cached.
		in, _ := num(u, "input_tokens")
		cached, _ := num(d, "cached_tokens")
		s.u.CachedInput = min(cached, in)
		s.u.Input = in - s.u.CachedInput
		s.u.Output, _ = num(u, "output_tokens")
		s.seen = true
		return
	}
	// Anthropic: input_tokens excludes the cache's reads and writes.
	got := false
	in, ok := num(u, "input_tokens")
	if ok && (in > 0 || s.u.Input == 0) {
		got = set(&s.u.Input, in, true) || got
	}
	v, ok := num(u, "cache_read_input_tokens")
	if ok && (v > 0 || s.u.CachedInput == 0) {
		got = set(&s.u.CachedInput, v, true) || got
	}
	v, ok = num(u, "cache_creation_input_tokens")
	if ok && (v > 0 || s.u.CacheWrite == 0) {
		got = set(&s.u.CacheWrite, v, true) || got
	}
	v, ok = num(u, "output_tokens")
	got = set(&s.u.Output, v, ok) || got
	s.seen = s.seen || got
}

func (s *usageState) gemini(u map[string]any) {
	prompt, ok := num(u, "promptTokenCount")
	if !ok {
		return
	}
	cached, _ := num(u, "cachedContentTokenCount")
	cand, _ := num(u, "candidatesTokenCount")
	thoughts, _ := num(u, "thoughtsTokenCount")
	s.u.CachedInput = min(cached, prompt)
	s.u.Input = prompt - s.u.CachedInput
	s.u.Output = cand + thoughts
	s.seen = true
}

// sse reads a text/event-stream body line by line: every "data:" line
// holding JSON is an event.
type sse struct {
	st   *usageState
	line []byte
}

func (p *sse) Write(b []byte) (int, error) {
	for _, c := range b {
		if c != '\n' {
			if len(p.line) < maxEvent {
				p.line = append(p.line, c)
			}
			continue
		}
		p.flush()
	}
	return len(b), nil
}

// maxEvent bounds one stream event held for parsing.
const maxEvent = 16 << 20

func (p *sse) flush() {
	l := bytes.TrimRight(p.line, "\r")
	if d, ok := bytes.CutPrefix(l, []byte("data:")); ok {
		d = bytes.TrimSpace(d)
		if len(d) > 0 && d[0] == '{' {
			p.st.event(d)
		}
	}
	p.line = p.line[:0]
}

// ParseUsage reads the usage a whole response body reports: JSON, or a
// server-sent event stream. ok is false when it reports none.
func ParseUsage(body []byte, stream bool) (u Usage, model string, ok bool) {
	st := &usageState{}
	if stream {
		p := &sse{st: st}
		p.Write(body)
		p.flush()
	} else {
		st.event(body)
	}
	return st.u, st.model, st.seen
}
