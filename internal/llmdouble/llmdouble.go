// Package llmdouble is a TEST DOUBLE of a model API, for tests only: a
// scripted server that speaks OpenAI's chat completions and responses,
// Anthropic's messages and Gemini's generateContent (streamed or not) and answers each request with what its
// script says: text, or tool calls that edit files. No model endpoint is
// reachable where the tests run; this stands in at the API boundary and
// nowhere else. It counts the tokens it reports in each answer's usage, so
// a test can compare what the metering proxy measured with what was
// served.
package llmdouble

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Call is a tool call the double makes.
type Call struct {
	Name string
	Args map[string]any
}

// Reply is the double's answer to one request.
type Reply struct {
	Text  string
	Calls []Call
	// Status, when not 0 or 200, answers with this HTTP status and an
	// error body instead (an upstream failure).
	Status int
	// ErrorType is that error body's error.type and error.code
	// (default: overloaded_error).
	ErrorType string
}

// Request is what the script sees of one request.
type Request struct {
	API    string // "openai", "openai-responses", "anthropic" or "gemini"
	Path   string
	Model  string
	Stream bool
	Tools  []string // the tools' names the agent offers
	// Text is every text of the conversation (system, user, assistant,
	// tool results), concatenated: what a script looks for markers in.
	Text string
	// ToolResults counts the tool results the conversation holds, and
	// LastIsToolResult says the last message is one.
	ToolResults      int
	LastIsToolResult bool
	// Last is the text of the last message.
	Last string
	N    int // 1 for the first request the double gets
}

// Script decides each reply.
type Script func(Request) Reply

// Usage is what the double reported, summed over its answers.
type Usage struct {
	Requests     int
	Input        int64 // prompt tokens (OpenAI) or input tokens (Anthropic)
	Output       int64
	CachedInput  int64 // the part of Input reported as read from a cache
	Models       map[string]int
	ErrorAnswers int
	// Keys are the credentials requests came with (Authorization,
	// x-api-key), each once.
	Keys []string
}

// Server is the running double.
type Server struct {
	URL    string // http://127.0.0.1:port
	script Script
	srv    *http.Server
	l      net.Listener

	mu    sync.Mutex
	usage Usage
	// Cached, when set, makes every answer report this many of its input
	// tokens as read from the prompt cache.
	Cached int64
}

// Start starts the double on a loopback port. Close it when done.
func Start(script Script) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("llm test double: %w", err)
	}
	s := &Server{URL: "http://" + l.Addr().String(), script: script, l: l}
	s.usage.Models = map[string]int{}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(l)
	return s, nil
}

// Close stops the double.
func (s *Server) Close() error { return s.srv.Close() }

// Served is what the double reported so far.
func (s *Server) Served() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.usage
	u.Models = map[string]int{}
	u.Keys = slices.Clone(s.usage.Keys)
	for k, v := range s.usage.Models {
		u.Models[k] = v
	}
	return u
}

// tokens are the counts the double reports for an answer: made up, but
// different for each request and answer.
func tokens(reqBytes int, reply string) (in, out int64) {
	return int64(reqBytes/4 + 11), int64(len(reply)/4 + 5)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"the test double takes JSON POSTs"}}`, http.StatusNotFound)
		return
	}
	req := Request{Path: r.URL.Path}
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		req.API = "openai"
	case strings.HasSuffix(r.URL.Path, "/messages"):
		req.API = "anthropic"
	case strings.HasSuffix(r.URL.Path, "/responses"):
		req.API = "openai-responses"
	case strings.HasSuffix(r.URL.Path, ":generateContent"), strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
		req.API = "gemini"
		i := strings.LastIndex(r.URL.Path, "/models/")
		body["model"] = strings.SplitN(r.URL.Path[i+len("/models/"):], ":", 2)[0]
		body["stream"] = strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	default:
		http.Error(w, `{"error":{"message":"the test double answers chat completions and messages only"}}`, http.StatusNotFound)
		return
	}
	req.Model, _ = body["model"].(string)
	req.Stream, _ = body["stream"].(bool)
	read(&req, body)
	key := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key")
	s.mu.Lock()
	if !slices.Contains(s.usage.Keys, key) {
		s.usage.Keys = append(s.usage.Keys, key)
	}
	s.usage.Requests++
	req.N = s.usage.Requests
	s.mu.Unlock()
	reply := s.script(req)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		s.mu.Lock()
		s.usage.ErrorAnswers++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		typ := reply.ErrorType
		if typ == "" {
			typ = "overloaded_error"
		}
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"code":%q,"message":"the test double fails this request on purpose (%d)"}}`, typ, typ, reply.Status)
		return
	}
	argsText, _ := json.Marshal(reply.Calls)
	in, out := tokens(len(raw), reply.Text+string(argsText))
	cached := min(s.Cached, in)
	s.mu.Lock()
	s.usage.Input += in
	s.usage.Output += out
	s.usage.CachedInput += cached
	s.usage.Models[req.Model]++
	s.mu.Unlock()
	switch req.API {
	case "openai":
		s.openAI(w, req, reply, in, out, cached)
	case "openai-responses":
		s.responses(w, req, reply, in, out, cached)
	case "gemini":
		s.gemini(w, req, reply, in, out, cached)
	default:
		s.anthropic(w, req, reply, in, out, cached)
	}
}

// read fills the request's conversation facts from its body.
func read(req *Request, body map[string]any) {
	var text strings.Builder
	if tools, ok := body["tools"].([]any); ok {
		for _, t := range tools {
			tm, _ := t.(map[string]any)
			if decls, ok := tm["functionDeclarations"].([]any); ok { // Gemini
				for _, d := range decls {
					dm, _ := d.(map[string]any)
					name, _ := dm["name"].(string)
					req.Tools = append(req.Tools, name)
				}
				continue
			}
			if f, ok := tm["function"].(map[string]any); ok {
				name, _ := f["name"].(string)
				req.Tools = append(req.Tools, name)
			} else if name, ok := tm["name"].(string); ok {
				req.Tools = append(req.Tools, name)
			}
		}
	}
	if sys, ok := body["system"]; ok {
		text.WriteString(flatten(sys))
	}
	if ins, ok := body["instructions"].(string); ok {
		text.WriteString(ins)
	}
	msgs, _ := body["messages"].([]any)
	if si, ok := body["systemInstruction"]; ok { // Gemini
		sm, _ := si.(map[string]any)
		text.WriteString(flatten(sm["parts"]))
	}
	if contents, ok := body["contents"].([]any); ok { // Gemini
		msgs = nil
		for _, c := range contents {
			cm, _ := c.(map[string]any)
			parts, _ := cm["parts"].([]any)
			m := map[string]any{"role": cm["role"], "content": parts}
			for _, p := range parts {
				if pm, _ := p.(map[string]any); pm["functionResponse"] != nil {
					raw, _ := json.Marshal(pm["functionResponse"])
					m["type"], m["output"] = "function_call_output", string(raw)
				}
			}
			msgs = append(msgs, m)
		}
	}
	if input, ok := body["input"]; ok { // OpenAI responses
		if s, ok := input.(string); ok {
			input = []any{map[string]any{"role": "user", "content": s}}
		}
		msgs, _ = input.([]any)
	}
	for i, m := range msgs {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		content := flatten(mm["content"])
		if o, ok := mm["output"].(string); ok {
			content += o
		}
		text.WriteString("\n" + content)
		isResult := role == "tool" || strings.Contains(typesOf(mm["content"]), "tool_result") || mm["type"] == "function_call_output"
		if isResult {
			req.ToolResults++
		}
		if i == len(msgs)-1 {
			req.LastIsToolResult = isResult
			req.Last = content
		}
	}
	req.Text = text.String()
}

// flatten is the text of a message's content: a string, or parts.
func flatten(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			pm, _ := p.(map[string]any)
			if t, ok := pm["text"].(string); ok {
				b.WriteString(t + "\n")
			}
			if inner, ok := pm["content"]; ok {
				b.WriteString(flatten(inner) + "\n")
			}
		}
		return b.String()
	}
	return ""
}

func typesOf(c any) string {
	parts, _ := c.([]any)
	var out []string
	for _, p := range parts {
		pm, _ := p.(map[string]any)
		t, _ := pm["type"].(string)
		out = append(out, t)
	}
	return strings.Join(out, ",")
}

func (s *Server) openAI(w http.ResponseWriter, req Request, reply Reply, in, out, cached int64) {
	usage := map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out,
		"prompt_tokens_details": map[string]any{"cached_tokens": cached}}
	var calls []map[string]any
	for i, c := range reply.Calls {
		args, _ := json.Marshal(c.Args)
		calls = append(calls, map[string]any{"index": i, "id": fmt.Sprintf("call_%d_%d", req.N, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(args)}})
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	base := map[string]any{"id": fmt.Sprintf("chatcmpl-double-%d", req.N), "created": 1700000000, "model": req.Model}
	if !req.Stream {
		base["object"] = "chat.completion"
		base["choices"] = []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}
		base["usage"] = usage
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(base)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any, usage any) {
		c := map[string]any{"object": "chat.completion.chunk"}
		for k, v := range base {
			c[k] = v
		}
		c["choices"] = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
		if usage != nil {
			c["choices"] = []any{}
			c["usage"] = usage
		}
		raw, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", raw)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if reply.Text != "" {
		chunk(map[string]any{"content": reply.Text}, nil, nil)
	}
	if len(calls) > 0 {
		chunk(map[string]any{"tool_calls": calls}, nil, nil)
	}
	chunk(map[string]any{}, finish, nil)
	chunk(nil, nil, usage) // asked for with stream_options.include_usage; the proxy asks
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *Server) anthropic(w http.ResponseWriter, req Request, reply Reply, in, out, cached int64) {
	var content []any
	if reply.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": reply.Text})
	}
	for i, c := range reply.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", req.N, i), "name": c.Name, "input": c.Args})
	}
	stop := "end_turn"
	if len(reply.Calls) > 0 {
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": in - cached, "output_tokens": out, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0}
	msg := map[string]any{"id": fmt.Sprintf("msg_double_%d", req.N), "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data any) {
		raw, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, raw)
	}
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	start["usage"] = map[string]any{"input_tokens": in - cached, "output_tokens": 1, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0}
	event("message_start", map[string]any{"type": "message_start", "message": start})
	for i, c := range content {
		cm := c.(map[string]any)
		if cm["type"] == "text" {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": cm["text"]}})
		} else {
			args, _ := json.Marshal(cm["input"])
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": cm["id"], "name": cm["name"], "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

func (s *Server) responses(w http.ResponseWriter, req Request, reply Reply, in, out, cached int64) {
	id := fmt.Sprintf("resp_double_%d", req.N)
	var items []any
	if reply.Text != "" {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", req.N), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}}})
	}
	for i, c := range reply.Calls {
		args, _ := json.Marshal(c.Args)
		items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", req.N, i), "call_id": fmt.Sprintf("call_%d_%d", req.N, i),
			"name": c.Name, "arguments": string(args), "status": "completed"})
	}
	resp := map[string]any{"id": id, "object": "response", "created_at": 1700000000, "status": "completed", "model": req.Model, "output": items,
		"usage": map[string]any{"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": cached},
			"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": in + out}}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	seq := 0
	event := func(name string, data map[string]any) {
		data["type"] = name
		data["sequence_number"] = seq
		seq++
		raw, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, raw)
	}
	created := map[string]any{}
	for k, v := range resp {
		created[k] = v
	}
	created["status"], created["output"], created["usage"] = "in_progress", []any{}, nil
	event("response.created", map[string]any{"response": created})
	event("response.in_progress", map[string]any{"response": created})
	for i, it := range items {
		item := it.(map[string]any)
		event("response.output_item.added", map[string]any{"output_index": i, "item": item})
		if item["type"] == "message" {
			event("response.output_text.delta", map[string]any{"output_index": i, "content_index": 0, "item_id": item["id"], "delta": reply.Text})
			event("response.output_text.done", map[string]any{"output_index": i, "content_index": 0, "item_id": item["id"], "text": reply.Text})
		} else {
			event("response.function_call_arguments.done", map[string]any{"output_index": i, "item_id": item["id"], "arguments": item["arguments"]})
		}
		event("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	event("response.completed", map[string]any{"response": resp})
}

func (s *Server) gemini(w http.ResponseWriter, req Request, reply Reply, in, out, cached int64) {
	var parts []any
	if reply.Text != "" {
		parts = append(parts, map[string]any{"text": reply.Text})
	}
	for _, c := range reply.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Args}})
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out, "cachedContentTokenCount": cached},
		"modelVersion":  req.Model, "responseId": fmt.Sprintf("double-%d", req.N),
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	raw, _ := json.Marshal(resp)
	fmt.Fprintf(w, "data: %s\r\n\r\n", raw)
}
