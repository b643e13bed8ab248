package site

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/featbench/featbench/internal/meter"
	"github.com/featbench/featbench/templates"
)

// Bounds of a trajectory page. A trajectory may be tens of megabytes
// (each request repeats the conversation so far); its page shows each
// request's new messages and each answer, every text cut at maxPartText,
// and stops showing bodies once maxPageText bytes of them are on the page
// or listing exchanges after maxExchanges. The raw file beside the page
// has everything.
const (
	maxPartText  = 16 << 10
	maxPageText  = 2 << 20
	maxExchanges = 5_000
)

// trajectoryLimits tells the reader how the page cuts what it shows.
var trajectoryLimits = fmt.Sprintf("Each text is cut at %d KiB, and bodies stop being shown after %d MiB on the page; the raw file has everything.",
	maxPartText>>10, maxPageText>>20)

// trajectoryReader turns a trajectory's lines into the page's exchanges,
// keeping what it needs across them: the previous request's messages of
// each endpoint, to show only what a request adds.
type trajectoryReader struct {
	prev  map[string][]uint64 // by method and path: the hashes of the last request's messages
	shown int                 // bytes of text on the page so far
	turns int
	usage meter.Usage
	used  bool         // some response reported usage
	ids   map[int]bool // sequence numbers seen
}

// line is a trajectory line as recorded, its bodies kept raw: they are
// read according to the API they speak.
type line struct {
	meter.Exchange
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
}

// exchanges reads a whole trajectory. A line that is not JSON is listed
// as such, not fatal: the page shows what can be read, and the raw file
// the rest.
func (r *trajectoryReader) exchanges(data []byte) (out []templates.TrajectoryExchange, omitted string) {
	n := 0
	for len(data) > 0 {
		var ln []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			ln, data = data[:i], data[i+1:]
		} else {
			ln, data = data, nil
		}
		n++
		ln = bytes.TrimSpace(ln)
		if len(ln) == 0 {
			continue
		}
		if len(out) == maxExchanges {
			rest := 1 + bytes.Count(data, []byte{'\n'})
			return out, fmt.Sprintf("Only the first %d exchanges are listed; about %d more lines are in the raw file.", maxExchanges, rest)
		}
		var l line
		if err := json.Unmarshal(ln, &l); err != nil {
			ex := templates.TrajectoryExchange{ID: "line-" + strconv.Itoa(n), Seq: n, Error: "line " + strconv.Itoa(n) + " is not a recorded exchange: " + err.Error()}
			ex.Response = r.body("raw", string(ln))
			out = append(out, ex)
			continue
		}
		out = append(out, r.exchange(&l, n))
	}
	return out, ""
}

func (r *trajectoryReader) exchange(l *line, n int) templates.TrajectoryExchange {
	ex := templates.TrajectoryExchange{
		ID: "ex-" + strconv.Itoa(l.Seq), Seq: l.Seq, Method: l.Method, Path: l.Path, Kind: string(l.Kind), Stream: l.Stream,
		Status: l.Status, Model: l.Model, Error: l.Error, Limit: l.Limit, Truncated: l.Truncated,
		Seconds: strconv.FormatFloat(l.Seconds, 'f', 1, 64) + " s",
	}
	// Anchors by sequence number, unless a hostile file repeats one: the
	// page's ids must be unique.
	if l.Seq <= 0 || r.ids[l.Seq] {
		ex.ID = "line-" + strconv.Itoa(n)
	}
	if r.ids == nil {
		r.ids = map[int]bool{}
	}
	r.ids[l.Seq] = true
	if !l.Time.IsZero() {
		ex.Time = l.Time.UTC().Format("2006-01-02 15:04:05Z")
	}
	// Turns as the proxy counts them (meter.Replay): model requests it
	// forwarded, not those a limit refused.
	if l.Kind != meter.Other && l.Limit == "" {
		r.turns++
		ex.Turn = r.turns
	}
	if u := l.Usage; u != nil {
		ex.Usage = usageText(*u)
		r.usage.Add(*u)
		r.used = true
	}
	switch {
	case l.Unpriced:
		ex.Cost = "unknown: the model has no price in the table"
	case l.Cost > 0:
		ex.Cost = "$" + strconv.FormatFloat(l.Cost, 'f', 4, 64)
	}
	if r.shown >= maxPageText {
		ex.Hidden = true
		return ex
	}
	ex.Request, ex.Earlier = r.request(l)
	ex.Response = r.response(l)
	return ex
}

// usageText is a response's usage as a reader wants it.
func usageText(u meter.Usage) string {
	s := strconv.FormatInt(u.In(), 10) + " in"
	var extra []string
	if u.CachedInput > 0 {
		extra = append(extra, strconv.FormatInt(u.CachedInput, 10)+" cached")
	}
	if u.CacheWrite > 0 {
		extra = append(extra, strconv.FormatInt(u.CacheWrite, 10)+" written to the cache")
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s + ", " + strconv.FormatInt(u.Output, 10) + " out"
}

// part makes a part of a text, cut at maxPartText (at a character's
// start), counting what the page shows.
func (r *trajectoryReader) part(kind, title, text string) templates.TrajectoryPart {
	p := templates.TrajectoryPart{Kind: kind, Title: cut(title, 200), Text: text}
	if len(text) > maxPartText {
		p.Text, p.Cut = runePrefix(text, maxPartText), cutNote(len(text))
	}
	r.shown += len(p.Text)
	return p
}

// body is a whole body shown as it is: one message of one part.
func (r *trajectoryReader) body(kind, text string) []templates.TrajectoryMessage {
	return []templates.TrajectoryMessage{{Parts: []templates.TrajectoryPart{r.part(kind, "", text)}}}
}

// cutNote tells the reader a text of total bytes was cut at maxPartText.
func cutNote(total int) string {
	return fmt.Sprintf("Cut at %d KiB of %d bytes; the raw file has all of it.", maxPartText>>10, total)
}

// runePrefix is s cut at most at n bytes, at a character's start; s
// is longer than n.
func runePrefix(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// cut shortens a one-line text at n bytes.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return runePrefix(s, n) + "…"
}

// request is what a request adds to the previous request to the same
// endpoint: its messages after the ones they share at the start (an
// agent sends the whole conversation every turn), and how many those are.
func (r *trajectoryReader) request(l *line) ([]templates.TrajectoryMessage, int) {
	raw := bytes.TrimSpace(l.Request)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, 0
	}
	if raw[0] != '{' {
		// Not JSON when recorded: the request as text.
		return r.body("body", jsonText(raw)), 0
	}
	var req struct {
		System            json.RawMessage   `json:"system"`             // Anthropic
		Instructions      json.RawMessage   `json:"instructions"`       // OpenAI responses
		SystemInstruction json.RawMessage   `json:"systemInstruction"`  // Gemini
		SystemInstr2      json.RawMessage   `json:"system_instruction"` // Gemini, the other spelling
		Messages          []json.RawMessage `json:"messages"`           // chat completions, Anthropic
		Input             json.RawMessage   `json:"input"`              // OpenAI responses
		Contents          []json.RawMessage `json:"contents"`           // Gemini
		Prompt            json.RawMessage   `json:"prompt"`             // completions
	}
	if json.Unmarshal(raw, &req) != nil {
		return r.body("body", jsonText(raw)), 0
	}
	// The conversation as a list of raw messages, the system prompt
	// first, each with the role it has when it does not say.
	type item struct {
		raw  json.RawMessage
		role string
	}
	var items []item
	for _, sys := range []json.RawMessage{req.System, req.Instructions, req.SystemInstruction, req.SystemInstr2} {
		if len(sys) > 0 && string(sys) != "null" {
			items = append(items, item{sys, "system"})
		}
	}
	for _, m := range req.Messages {
		items = append(items, item{m, ""})
	}
	for _, m := range req.Contents {
		items = append(items, item{m, ""})
	}
	if in := bytes.TrimSpace(req.Input); len(in) > 0 {
		var list []json.RawMessage
		if in[0] == '[' && json.Unmarshal(in, &list) == nil {
			for _, m := range list {
				items = append(items, item{m, ""})
			}
		} else {
			items = append(items, item{in, "user"})
		}
	}
	if len(req.Prompt) > 0 && string(req.Prompt) != "null" {
		items = append(items, item{req.Prompt, "prompt"})
	}
	if len(items) == 0 {
		// Some other request: its body, as JSON.
		return r.body("body", jsonText(raw)), 0
	}
	hashes := make([]uint64, len(items))
	for i, it := range items {
		hashes[i] = xxhash.Sum64(it.raw)
	}
	key := l.Method + " " + l.Path
	prev := r.prev[key]
	same := 0
	for same < len(prev) && same < len(hashes) && prev[same] == hashes[same] {
		same++
	}
	if r.prev == nil {
		r.prev = map[string][]uint64{}
	}
	r.prev[key] = hashes
	var out []templates.TrajectoryMessage
	for _, it := range items[same:] {
		if r.shown >= maxPageText {
			break
		}
		var v any
		if json.Unmarshal(it.raw, &v) != nil {
			continue
		}
		out = append(out, r.message(v, it.role))
	}
	return out, same
}

// message reads one message of any of the APIs: a role and content that
// is text or a list of blocks (OpenAI, Anthropic), Gemini's parts, or an
// item of OpenAI's responses API.
func (r *trajectoryReader) message(v any, role string) templates.TrajectoryMessage {
	m, ok := v.(map[string]any)
	if !ok {
		// A bare string (a system prompt, a responses input).
		return templates.TrajectoryMessage{Role: role, Parts: r.blocks(v)}
	}
	// A system prompt stays one: Gemini sends its systemInstruction as
	// a content whose own role is "user".
	if s, ok := m["role"].(string); ok && role != "system" {
		role = s
	}
	msg := templates.TrajectoryMessage{Role: role}
	if t, _ := m["type"].(string); t != "" && t != "message" && m["role"] == nil {
		// A responses item: function_call, function_call_output, reasoning.
		msg.Parts = r.blocks(m)
		return msg
	}
	label := "text"
	if role == "tool" {
		label = "tool result"
		if id, _ := m["tool_call_id"].(string); id != "" {
			msg.Role = "tool (" + cut(id, 100) + ")"
		}
	}
	switch c := m["content"].(type) {
	case string:
		msg.Parts = append(msg.Parts, r.part(label, "", c))
	case nil:
	default:
		msg.Parts = append(msg.Parts, r.blocks(c)...)
	}
	if parts, ok := m["parts"].([]any); ok { // Gemini
		msg.Parts = append(msg.Parts, r.blocks(parts)...)
	}
	if calls, ok := m["tool_calls"].([]any); ok { // chat completions
		for _, c := range calls {
			cm, _ := c.(map[string]any)
			f, _ := cm["function"].(map[string]any)
			name, _ := f["name"].(string)
			msg.Parts = append(msg.Parts, r.part("tool call", name, argsText(f["arguments"])))
		}
	}
	if rc, ok := m["reasoning_content"].(string); ok && rc != "" {
		msg.Parts = append(msg.Parts, r.part("thinking", "", rc))
	}
	return msg
}

// blocks reads content blocks: a string, a list, or one block.
func (r *trajectoryReader) blocks(v any) []templates.TrajectoryPart {
	switch b := v.(type) {
	case nil:
		return nil
	case string:
		return []templates.TrajectoryPart{r.part("text", "", b)}
	case []any:
		var out []templates.TrajectoryPart
		for _, x := range b {
			if r.shown >= maxPageText {
				break
			}
			out = append(out, r.blocks(x)...)
		}
		return out
	case map[string]any:
		return []templates.TrajectoryPart{r.block(b)}
	}
	return []templates.TrajectoryPart{r.part("value", "", jsonValue(v))}
}

// block reads one content block of any of the APIs.
func (r *trajectoryReader) block(b map[string]any) templates.TrajectoryPart {
	typ, _ := b["type"].(string)
	str := func(k string) string { s, _ := b[k].(string); return s }
	switch typ {
	case "tool_use", "server_tool_use": // Anthropic
		return r.part("tool call", str("name"), argsText(b["input"]))
	case "tool_result": // Anthropic
		return r.part("tool result", "", flatText(b["content"]))
	case "thinking":
		return r.part("thinking", "", str("thinking"))
	case "function_call": // OpenAI responses
		return r.part("tool call", str("name"), argsText(b["arguments"]))
	case "function_call_output":
		return r.part("tool result", "", flatText(b["output"]))
	case "reasoning":
		return r.part("thinking", "", flatText(b["summary"]))
	case "image", "image_url", "input_image":
		return r.part(typ, "", "[an image]")
	}
	if t, ok := b["text"].(string); ok { // text, input_text, output_text, Gemini's text part
		kind := "text"
		if th, _ := b["thought"].(bool); th {
			kind = "thinking"
		}
		return r.part(kind, "", t)
	}
	if fc, ok := b["functionCall"].(map[string]any); ok { // Gemini
		name, _ := fc["name"].(string)
		return r.part("tool call", name, argsText(fc["args"]))
	}
	if fr, ok := b["functionResponse"].(map[string]any); ok {
		name, _ := fr["name"].(string)
		return r.part("tool result", name, readable(fr["response"]))
	}
	kind := typ
	if kind == "" {
		kind = "value"
	}
	return r.part(kind, "", jsonValue(b))
}

// flatText is a tool result's content as text: a string, the texts of a
// list of blocks, or else the value made readable.
func flatText(v any) string {
	switch c := v.(type) {
	case string:
		return readable(c)
	case []any:
		var parts []string
		for _, x := range c {
			if m, ok := x.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					parts = append(parts, t)
					continue
				}
			}
			parts = append(parts, readable(x))
		}
		return strings.Join(parts, "\n")
	}
	return readable(v)
}

// argsText is a tool call's arguments: a JSON string (OpenAI) or object
// (Anthropic, Gemini), made readable.
func argsText(v any) string { return readable(v) }

// readable shows a tool call's arguments or a tool's result as a reader
// wants them, not as escaped JSON: an object key by key, each string as
// its text with its line breaks (a command, a file's content), other
// values as JSON without HTML escapes (no \u0026 for &); a string that
// holds a JSON object or list is read as one.
func readable(v any) string {
	switch c := v.(type) {
	case string:
		if t := strings.TrimSpace(c); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
			var inner any
			if json.Unmarshal([]byte(t), &inner) == nil {
				return readable(inner)
			}
		}
		return c
	case map[string]any:
		if len(c) == 0 {
			return "{}"
		}
		keys := slices.Sorted(maps.Keys(c))
		var b strings.Builder
		for i, k := range keys {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(k)
			b.WriteByte(':')
			switch val := c[k].(type) {
			case string:
				if strings.Contains(val, "\n") {
					b.WriteByte('\n')
				} else {
					b.WriteByte(' ')
				}
				b.WriteString(val)
			default:
				s := jsonValue(val)
				if strings.Contains(s, "\n") {
					b.WriteByte('\n')
				} else {
					b.WriteByte(' ')
				}
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return jsonValue(v)
}

// jsonValue writes a decoded value as indented JSON, without the HTML
// escapes encoding/json adds by default (the page escapes it as HTML).
func jsonValue(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// jsonText is a raw body as text: a JSON string's value, other JSON
// indented.
func jsonText(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") == nil {
		return buf.String()
	}
	return string(raw)
}

// response reads the answer: a JSON body, or the text of an event stream
// assembled into the message it streamed.
func (r *trajectoryReader) response(l *line) []templates.TrajectoryMessage {
	raw := bytes.TrimSpace(l.Response)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		if msgs := r.stream(s); len(msgs) > 0 {
			return msgs
		}
		return r.body("body", s)
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	if msgs := r.answer(v); len(msgs) > 0 {
		return msgs
	}
	return r.body("body", jsonValue(v))
}

// answer reads a whole response of any of the APIs; nil when it is none
// of theirs.
func (r *trajectoryReader) answer(v any) []templates.TrajectoryMessage {
	m, ok := v.(map[string]any)
	if !ok {
		if list, ok := v.([]any); ok { // Gemini's stream as a JSON array
			var out []templates.TrajectoryMessage
			for _, c := range list {
				out = append(out, r.answer(c)...)
			}
			return out
		}
		return nil
	}
	var out []templates.TrajectoryMessage
	if choices, ok := m["choices"].([]any); ok { // chat completions, completions
		for _, c := range choices {
			cm, _ := c.(map[string]any)
			if msg, ok := cm["message"].(map[string]any); ok {
				out = append(out, r.message(msg, "assistant"))
			} else if t, ok := cm["text"].(string); ok {
				out = append(out, templates.TrajectoryMessage{Role: "completion", Parts: []templates.TrajectoryPart{r.part("text", "", t)}})
			}
		}
	}
	if content, ok := m["content"].([]any); ok && m["role"] != nil { // Anthropic
		role, _ := m["role"].(string)
		out = append(out, templates.TrajectoryMessage{Role: role, Parts: r.blocks(content)})
	}
	if output, ok := m["output"].([]any); ok { // OpenAI responses
		out = append(out, r.items(output)...)
	}
	if cands, ok := m["candidates"].([]any); ok { // Gemini
		for _, c := range cands {
			cm, _ := c.(map[string]any)
			if content, ok := cm["content"].(map[string]any); ok {
				out = append(out, r.message(content, "model"))
			}
		}
	}
	if e, ok := m["error"]; ok && len(out) == 0 {
		out = append(out, templates.TrajectoryMessage{Role: "error", Parts: []templates.TrajectoryPart{r.part("error", "", flatText(e))}})
	}
	return out
}

// items reads the output items of OpenAI's responses API.
func (r *trajectoryReader) items(list []any) []templates.TrajectoryMessage {
	var out []templates.TrajectoryMessage
	for _, it := range list {
		out = append(out, r.message(it, "assistant"))
	}
	return out
}

// streamed is an answer being assembled from stream events: its blocks
// in the order they started.
type streamed struct {
	blocks []*sblock
	byKey  map[string]*sblock
}

type sblock struct {
	kind, title string
	text        strings.Builder
	total       int // bytes streamed, kept or not
}

// at returns the block of a key (an index in the API's terms), started
// as kind when new.
func (s *streamed) at(key, kind string) *sblock {
	if b := s.byKey[key]; b != nil {
		return b
	}
	b := &sblock{kind: kind}
	if s.byKey == nil {
		s.byKey = map[string]*sblock{}
	}
	s.byKey[key] = b
	s.blocks = append(s.blocks, b)
	return b
}

// add appends to a block's text, up to a little past what a part shows:
// the rest would be cut anyway.
func (b *sblock) add(s string) {
	b.total += len(s)
	if b.text.Len() <= maxPartText {
		b.text.WriteString(s)
	}
}

// stream assembles an event stream's answer: OpenAI's chat chunks,
// Anthropic's content block events, OpenAI responses' final response,
// Gemini's chunks. nil when it holds none of them.
func (r *trajectoryReader) stream(text string) []templates.TrajectoryMessage {
	var s streamed
	var final []templates.TrajectoryMessage
	for _, ln := range strings.Split(text, "\n") {
		d, ok := strings.CutPrefix(strings.TrimRight(ln, "\r"), "data:")
		d = strings.TrimSpace(d)
		if !ok || len(d) == 0 || d[0] != '{' {
			continue
		}
		var ev map[string]any
		if json.Unmarshal([]byte(d), &ev) != nil {
			continue
		}
		typ, _ := ev["type"].(string)
		switch {
		case typ == "response.completed" || typ == "response.incomplete" || typ == "response.failed":
			if resp, ok := ev["response"].(map[string]any); ok {
				if out, ok := resp["output"].([]any); ok {
					final = r.items(out)
				}
			}
		case typ == "response.output_text.delta":
			delta, _ := ev["delta"].(string)
			s.at("out"+fmt.Sprint(ev["output_index"]), "text").add(delta)
		case typ == "content_block_start": // Anthropic
			cb, _ := ev["content_block"].(map[string]any)
			kind, _ := cb["type"].(string)
			b := s.at(fmt.Sprint(ev["index"]), map[string]string{"tool_use": "tool call", "thinking": "thinking"}[kind])
			if b.kind == "" {
				b.kind = "text"
			}
			b.title, _ = cb["name"].(string)
			if t, ok := cb["text"].(string); ok {
				b.add(t)
			}
		case typ == "content_block_delta":
			delta, _ := ev["delta"].(map[string]any)
			b := s.at(fmt.Sprint(ev["index"]), "text")
			for _, k := range []string{"text", "partial_json", "thinking"} {
				if t, ok := delta[k].(string); ok {
					b.add(t)
				}
			}
		case ev["choices"] != nil: // chat completions and completions chunks
			choices, _ := ev["choices"].([]any)
			for _, c := range choices {
				cm, _ := c.(map[string]any)
				ci := fmt.Sprint(cm["index"])
				if t, ok := cm["text"].(string); ok {
					s.at(ci+"text", "text").add(t)
				}
				delta, _ := cm["delta"].(map[string]any)
				for _, k := range []string{"reasoning_content", "reasoning"} {
					if t, ok := delta[k].(string); ok && t != "" {
						s.at(ci+"thinking", "thinking").add(t)
					}
				}
				if t, ok := delta["content"].(string); ok && t != "" {
					s.at(ci+"text", "text").add(t)
				}
				calls, _ := delta["tool_calls"].([]any)
				for _, call := range calls {
					cm, _ := call.(map[string]any)
					b := s.at(ci+"call"+fmt.Sprint(cm["index"]), "tool call")
					f, _ := cm["function"].(map[string]any)
					if name, _ := f["name"].(string); name != "" {
						b.title = name
					}
					if a, ok := f["arguments"].(string); ok {
						b.add(a)
					}
				}
			}
		case ev["candidates"] != nil: // Gemini
			cands, _ := ev["candidates"].([]any)
			for ci, c := range cands {
				cm, _ := c.(map[string]any)
				content, _ := cm["content"].(map[string]any)
				parts, _ := content["parts"].([]any)
				for pi, p := range parts {
					pm, _ := p.(map[string]any)
					if t, ok := pm["text"].(string); ok {
						s.at(strconv.Itoa(ci)+"text", "text").add(t)
					} else if fc, ok := pm["functionCall"].(map[string]any); ok {
						b := s.at(strconv.Itoa(ci)+"call"+strconv.Itoa(len(s.blocks))+"-"+strconv.Itoa(pi), "tool call")
						b.title, _ = fc["name"].(string)
						b.add(argsText(fc["args"]))
					}
				}
			}
		}
	}
	if final != nil {
		return final
	}
	if len(s.blocks) == 0 {
		return nil
	}
	msg := templates.TrajectoryMessage{Role: "assistant"}
	for _, b := range s.blocks {
		text := b.text.String()
		if b.kind == "tool call" {
			text = argsText(text)
		}
		p := r.part(b.kind, b.title, text)
		if b.total > b.text.Len() {
			p.Cut = cutNote(b.total)
		}
		msg.Parts = append(msg.Parts, p)
	}
	return []templates.TrajectoryMessage{msg}
}

// totalUsage is the usage the exchanges reported, summed.
func (r *trajectoryReader) totalUsage() string {
	if !r.used {
		return ""
	}
	return usageText(r.usage) + ", summed over the responses that report it"
}
