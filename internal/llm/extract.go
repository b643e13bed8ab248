package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// scanBudget bounds the bytes ExtractJSONBlock scans for a balanced object:
// a reply full of unclosed braces would otherwise cost time quadratic in
// its length.
const scanBudget = 64 << 20

// ExtractJSONBlock returns the JSON in a model's reply: the content of its
// first ```json fenced block when that is valid JSON, else the first
// balanced {...} in the text that is valid JSON (models often answer with
// a bare object, or wrap it in prose or in an unlabelled fence). The result
// is a copy, trimmed of surrounding space.
func ExtractJSONBlock(text string) ([]byte, error) {
	block, fenced := jsonFence(text)
	var fenceErr error
	if fenced {
		if json.Valid([]byte(block)) {
			return []byte(block), nil
		}
		var v any
		fenceErr = json.Unmarshal([]byte(block), &v)
	}
	if obj, ok := firstObject(text); ok {
		return []byte(obj), nil
	}
	if fenceErr != nil {
		return nil, fmt.Errorf("llm: the reply's ```json block is not valid JSON (%v) and no other JSON object was found", fenceErr)
	}
	return nil, errors.New("llm: the reply holds no ```json block and no JSON object")
}

// jsonFence returns the trimmed content of the first fenced block whose
// info string is "json" (any case), and whether there is one with a
// closing fence.
func jsonFence(text string) (string, bool) {
	for rest := text; ; {
		i := strings.Index(rest, "```")
		if i < 0 {
			return "", false
		}
		rest = rest[i+3:]
		if len(rest) < 4 || !strings.EqualFold(rest[:4], "json") {
			continue
		}
		body := rest[4:]
		if body != "" && !strings.ContainsRune(" \t\r\n", rune(body[0])) {
			continue // ```jsonc, ```json5: not plain JSON
		}
		end := strings.Index(body, "```")
		if end < 0 {
			return "", false
		}
		return strings.TrimSpace(body[:end]), true
	}
}

// firstObject returns the first balanced {...} in text that is valid JSON.
// A candidate that is not (prose such as "{x}", or a '{' never closed) is
// passed over, and the search goes on from its next '{', which may begin an
// object nested in it. (A reply cut off mid-object does not get here: Chat
// refuses finish_reason "length".)
func firstObject(text string) (string, bool) {
	budget := scanBudget
	for start := strings.IndexByte(text, '{'); start >= 0 && budget > 0; {
		end, scanned := balancedEnd(text, start)
		budget -= scanned
		if end > 0 && json.Valid([]byte(text[start:end])) {
			return text[start:end], true
		}
		next := strings.IndexByte(text[start+1:], '{')
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return "", false
}

// balancedEnd returns the end of the bracketed value starting at text[start]
// ('{'), or -1 when brackets mismatch, a string runs past the end of a
// line (JSON strings cannot), or the text ends first; and how many bytes
// it looked at.
func balancedEnd(text string, start int) (end, scanned int) {
	var stack []byte
	inString, escaped := false, false
	for i := start; i < len(text); i++ {
		ch := text[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
			case ch == '\n':
				return -1, i - start + 1
			}
			continue
		}
		switch ch {
		case '"':
			inString = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != ch {
				return -1, i - start + 1
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i + 1, i - start + 1
			}
		}
	}
	return -1, len(text) - start
}
