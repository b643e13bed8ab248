package llm

import (
	"strings"
	"testing"
	"time"
)

func TestExtractJSONBlock(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"fenced", "Here it is:\n```json\n{\"top\": [\"slugify\"]}\n```\nDone.", `{"top": ["slugify"]}`},
		{"fenced upper case, CRLF", "```JSON\r\n[1, 2]\r\n```", `[1, 2]`},
		{"fenced inline", "```json {\"a\": 1}```", `{"a": 1}`},
		{"first fence wins", "```json\n{\"a\": 1}\n```\n```json\n{\"b\": 2}\n```", `{"a": 1}`},
		{"fence after other fences", "```python\nx = {1: 2}\n```\n```json\n{\"b\": 2}\n```", `{"b": 2}`},
		{"fence beats an earlier bare object", "{\"draft\": true}\n```json\n{\"final\": true}\n```", `{"final": true}`},
		{"bare object", `{"top": ["a.py::f::1"], "why": "used in asserts"}`, `{"top": ["a.py::f::1"], "why": "used in asserts"}`},
		{"object in prose", `The answer is {"ok": true}. Hope this helps {really}.`, `{"ok": true}`},
		{"empty object counts", `Objects like {x} or {} are... {"ok": 1}`, `{}`},
		{"braces in strings", `Result: {"s": "a } b { \" c", "n": {"m": [1, {"k": "]"}]}} trailing }`, `{"s": "a } b { \" c", "n": {"m": [1, {"k": "]"}]}}`},
		{"unlabelled fence", "```\n{\"a\": [1, 2]}\n```", `{"a": [1, 2]}`},
		{"invalid fence, object inside", "```json\n{\"a\": 1} // the answer\n```", `{"a": 1}`},
		{"jsonc fence is not json", "```jsonc\n{\"a\": 1}\n```", `{"a": 1}`},
		{"unclosed fence", "```json\n{\"a\": 1}", `{"a": 1}`},
		{"nested in invalid", `{answer: {"a": 1}}`, `{"a": 1}`},
		{"nested in unclosed", `{"a": {"b": 1}`, `{"b": 1}`}, // Chat refuses cut-off replies before this
		{"stray quote", "He said \"hi {\nthen {\"a\": 2}", `{"a": 2}`},
		{"mismatched brackets", `{"a": [1}, {"b": 2}`, `{"b": 2}`},
		{"unicode", "Voilà : {\"é\": \"ü\"}", `{"é": "ü"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExtractJSONBlock(tc.text)
			if err != nil {
				t.Fatalf("ExtractJSONBlock(%q): %v", tc.text, err)
			}
			if string(got) != tc.want {
				t.Errorf("ExtractJSONBlock(%q) = %s, want %s", tc.text, got, tc.want)
			}
		})
	}

	bad := []struct {
		name, text, want string
	}{
		{"empty", "", "no ```json block and no JSON object"},
		{"prose", "I cannot determine the top-level objects.", "no JSON object"},
		{"invalid only", "{not json}", "no JSON object"},
		{"array only, unfenced", `["a", "b"]`, "no JSON object"},
		{"unbalanced", `{"a": {"b": 1`, "no JSON object"},
		{"invalid fence", "```json\n{'a': 1}\n```", "```json block is not valid JSON"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExtractJSONBlock(tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ExtractJSONBlock(%q) = %s, %v; want an error containing %q", tc.text, got, err, tc.want)
			}
		})
	}
}

func TestExtractJSONBlockReturnsCopy(t *testing.T) {
	text := `x {"a": 1}`
	got, err := ExtractJSONBlock(text)
	if err != nil {
		t.Fatal(err)
	}
	got[1] = 'Z'
	if text != `x {"a": 1}` {
		t.Error("the result aliases the input")
	}
}

// A reply full of unclosed braces must not take time quadratic in its
// length: the scan gives up after a budget of bytes.
func TestExtractJSONBlockPathological(t *testing.T) {
	for _, text := range []string{
		strings.Repeat(`{"a":`, 1<<20),                  // 5 MiB, a million starts, none closing
		strings.Repeat("{ ", 1<<20) + `{"found": true}`, // every start runs to the end
	} {
		start := time.Now()
		_, err := ExtractJSONBlock(text)
		if err == nil || !strings.Contains(err.Error(), "no JSON object") {
			t.Errorf("error %v", err)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("took %v", el)
		}
	}
}
