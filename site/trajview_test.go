package site

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/featbench/featbench/templates"
)

// parts flattens messages as "role|kind|title|text" lines.
func parts(msgs []templates.TrajectoryMessage) string {
	var out []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			out = append(out, m.Role+"|"+p.Kind+"|"+p.Title+"|"+p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// Each API's requests and answers, whole or streamed, read as messages.
func TestTrajectoryAPIs(t *testing.T) {
	for _, c := range []struct {
		name, kind, path string
		request          any
		response         any
		wantReq, wantRes string
	}{
		{"anthropic", "anthropic.messages", "/v1/messages",
			map[string]any{"system": "Be brief.", "messages": []any{
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": []any{map[string]any{"type": "text", "text": "ok"}}}}}}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Running."},
				map[string]any{"type": "tool_use", "id": "t2", "name": "bash", "input": map[string]any{"command": "ls"}}}},
			"system|text||Be brief.\nuser|tool result||ok", "assistant|text||Running.\nassistant|tool call|bash|command: ls"},
		{"anthropic stream", "anthropic.messages", "/v1/messages",
			map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}},
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
				"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n" +
				"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n" +
				"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"name\":\"bash\",\"input\":{}}}\n\n" +
				"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":1}\"}}\n\n",
			"user|text||hi", "assistant|text||Hello\nassistant|tool call|bash|a: 1"},
		{"responses stream", "openai.responses", "/v1/responses",
			map[string]any{"instructions": "Sys.", "input": []any{map[string]any{"type": "function_call_output", "call_id": "c", "output": "done"}}},
			"data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"partial\"}\n\n" +
				"data: {\"type\":\"response.completed\",\"response\":{\"output\":[{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"All done.\"}]}," +
				"{\"type\":\"function_call\",\"name\":\"shell\",\"arguments\":\"{}\"}]}}\n\n",
			"system|text||Sys.\n|tool result||done", "assistant|text||All done.\nassistant|tool call|shell|{}"},
		{"gemini", "gemini.generate", "/v1beta/models/g:generateContent",
			map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "go"}}}}},
			map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{
				map[string]any{"text": "ok"}, map[string]any{"functionCall": map[string]any{"name": "run", "args": map[string]any{"x": 1}}}}}}}},
			"user|text||go", "model|text||ok\nmodel|tool call|run|x: 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := json.Marshal(c.request)
			res, _ := json.Marshal(c.response)
			l := &line{Request: req, Response: res}
			l.Method, l.Path = "POST", c.path
			var r trajectoryReader
			msgs, _ := r.request(l)
			if got := parts(msgs); got != c.wantReq {
				t.Errorf("request:\n%s\nwant\n%s", got, c.wantReq)
			}
			if got := parts(r.response(l)); got != c.wantRes {
				t.Errorf("response:\n%s\nwant\n%s", got, c.wantRes)
			}
		})
	}
}

// Tool calls and results read as their text, not as escaped JSON: no
// \u0026 for &, real line breaks in a command or a file's content, a
// JSON string of arguments read as its object; Gemini's system
// instruction, sent with role "user", is labelled system. Before, an
// OpenAI call's arguments showed "cat a \u0026\u0026 echo" with "\n" as
// two characters, and Gemini's system prompt read "user".
func TestTrajectoryReadable(t *testing.T) {
	req, _ := json.Marshal(map[string]any{
		"systemInstruction": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "You are a coding agent."}}},
		"contents": []any{
			map[string]any{"role": "user", "parts": []any{map[string]any{"text": "fix it"}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "run_shell_command",
				"response": map[string]any{"output": "line 1\nline 2 & <3>"}}}}},
		},
	})
	res, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant",
		"tool_calls": []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "shell",
			"arguments": `{"command":"cat a.py && echo done","content":"def f():\n    return 1\n","n":2}`}}}}}}})
	l := &line{Request: req, Response: res}
	l.Method, l.Path = "POST", "/v1beta/models/g:generateContent"
	var r trajectoryReader
	msgs, _ := r.request(l)
	wantReq := "system|text||You are a coding agent.\nuser|text||fix it\nuser|tool result|run_shell_command|output:\nline 1\nline 2 & <3>"
	if got := parts(msgs); got != wantReq {
		t.Errorf("request:\n%s\nwant\n%s", got, wantReq)
	}
	l2 := &line{Request: []byte(`{"messages": []}`), Response: res}
	l2.Method, l2.Path = "POST", "/v1/chat/completions"
	got := parts(r.response(l2))
	want := "assistant|tool call|shell|command: cat a.py && echo done\ncontent:\ndef f():\n    return 1\n\nn: 2"
	if got != want {
		t.Errorf("tool call:\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, `\u0026`) || strings.Contains(got, `\n`) {
		t.Errorf("tool call shows escapes: %q", got)
	}
}

// A long text is cut at a character's start, with a note; once the page
// holds maxPageText of bodies, the rest are not shown.
func TestTrajectoryBounds(t *testing.T) {
	var r trajectoryReader
	p := r.part("text", "", strings.Repeat("é", maxPartText))
	if len(p.Text) > maxPartText || !strings.HasSuffix(p.Text, "é") || p.Cut == "" {
		t.Errorf("cut to %d bytes, note %q", len(p.Text), p.Cut)
	}
	var lines []string
	for i := range maxPageText/maxPartText + 10 {
		big, _ := json.Marshal(map[string]any{"seq": i + 1, "kind": "openai.chat", "request": map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": strconv.Itoa(i) + strings.Repeat("x", maxPartText)}}}})
		lines = append(lines, string(big))
	}
	r = trajectoryReader{}
	exs, _ := r.exchanges([]byte(strings.Join(lines, "\n")))
	if !exs[len(exs)-1].Hidden || exs[0].Hidden || r.shown > maxPageText+maxPartText {
		t.Errorf("%d bytes shown; first hidden %v, last hidden %v", r.shown, exs[0].Hidden, exs[len(exs)-1].Hidden)
	}
}
