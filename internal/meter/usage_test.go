package meter_test

import (
	"testing"

	"github.com/featbench/featbench/internal/meter"
)

// TestParseUsage: each API's usage, whole and streamed, as the providers
// document it.
func TestParseUsage(t *testing.T) {
	for _, c := range []struct {
		name   string
		body   string
		stream bool
		want   meter.Usage
		model  string
	}{
		{"openai chat", `{"model":"gpt-x","usage":{"prompt_tokens":100,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":30}}}`, false,
			meter.Usage{Input: 70, CachedInput: 30, Output: 20}, "gpt-x"},
		{"openai chat stream", "data: {\"model\":\"gpt-x\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\n" +
			"data: {\"model\":\"gpt-x\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}\n\ndata: [DONE]\n\n", true,
			meter.Usage{Input: 9, Output: 4}, "gpt-x"},
		{"openai responses", `{"model":"gpt-5","usage":{"input_tokens":50,"output_tokens":7,"input_tokens_details":{"cached_tokens":10},"output_tokens_details":{"reasoning_tokens":3}}}`, false,
			meter.Usage{Input: 40, CachedInput: 10, Output: 7}, "gpt-5"},
		{"openai responses stream", "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"model\":\"gpt-5\",\"usage\":null}}\n\n" +
			"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"model\":\"gpt-5\",\"usage\":{\"input_tokens\":12,\"output_tokens\":3,\"input_tokens_details\":{\"cached_tokens\":0}}}}\n\n", true,
			meter.Usage{Input: 12, Output: 3}, "gpt-5"},
		{"anthropic", `{"model":"claude-x","usage":{"input_tokens":11,"output_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":7}}`, false,
			meter.Usage{Input: 11, CachedInput: 100, CacheWrite: 7, Output: 5}, "claude-x"},
		{"anthropic stream", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-x\",\"usage\":{\"input_tokens\":25,\"output_tokens\":1,\"cache_read_input_tokens\":3}}}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":15}}\n\n", true,
			meter.Usage{Input: 25, CachedInput: 3, Output: 15}, "claude-x"},
		{"gemini stream", "data: {\"usageMetadata\":{\"promptTokenCount\":40,\"candidatesTokenCount\":2},\"modelVersion\":\"gemini-2.5-pro\"}\r\n\r\n" +
			"data: {\"usageMetadata\":{\"promptTokenCount\":40,\"candidatesTokenCount\":9,\"thoughtsTokenCount\":5,\"cachedContentTokenCount\":8},\"modelVersion\":\"gemini-2.5-pro\"}\r\n\r\n", true,
			meter.Usage{Input: 32, CachedInput: 8, Output: 14}, "gemini-2.5-pro"},
		{"gemini stream as a JSON array", `[{"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":1},"modelVersion":"g"},` +
			`{"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":6},"modelVersion":"g"}]`, false,
			meter.Usage{Input: 7, Output: 6}, "g"},
	} {
		u, model, ok := meter.ParseUsage([]byte(c.body), c.stream)
		if !ok || u != c.want || model != c.model {
			t.Errorf("%s: %+v %q %v; want %+v %q", c.name, u, model, ok, c.want, c.model)
		}
	}
	if _, _, ok := meter.ParseUsage([]byte(`{"choices":[]}`), false); ok {
		t.Error("a body without usage gave some")
	}
}
