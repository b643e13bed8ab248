package llm

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/featbench/featbench/internal/atomicfile"
)

// cacheFormat names the key's encoding and the file layout; changing either
// changes it, so that old entries are never misread.
const cacheFormat = "featbench-llm-cache/1"

// cacheKey is the SHA-256 of a length-prefixed encoding of what decides the
// answer: model, messages, temperature, max_tokens and seed. Length
// prefixes make the encoding injective (["ab","c"] and ["a","bc"] differ)
// and, unlike JSON, exact for any bytes.
//
// The endpoint is left out on purpose: it says where a model is served
// (localhost:11434 today, a vLLM host tomorrow, a proxy in CI), not what
// it answers, and a cache keyed by it would be lost whenever the server
// moves, so a re-run would no longer be free and byte-identical. Point
// CacheDir elsewhere to keep answers of different servers apart. The API
// key and the timeout and retry settings are left out for the same
// reason.
func (c *Client) cacheKey(msgs []Message) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(cacheFormat)
	field(c.model)
	field(strconv.Itoa(len(msgs)))
	for _, m := range msgs {
		field(m.Role)
		field(m.Content)
	}
	field(strconv.FormatFloat(c.temperature, 'g', -1, 64))
	field(strconv.Itoa(c.maxTokens))
	if c.seed == nil {
		field("")
	} else {
		field(strconv.FormatInt(*c.seed, 10))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// cacheEntry is one file of the cache. The request is stored for people
// reading the cache; only the key decides a hit.
type cacheEntry struct {
	Format  string       `json:"format"`
	Key     string       `json:"key"`
	Request cacheRequest `json:"request"`
	Reply   cacheReply   `json:"reply"`
}

type cacheRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	MaxTokens   int       `json:"max_tokens"`
	Seed        *int64    `json:"seed"`
}

type cacheReply struct {
	Content          string `json:"content"`
	Model            string `json:"model"`
	FinishReason     string `json:"finish_reason"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
}

func (c *Client) cachePath(key string) string {
	return filepath.Join(c.cacheDir, key+".json")
}

// readCache returns the stored reply for key. A missing file is a miss; so
// is a file that does not parse or is not for this key (a torn or edited
// file): it is rewritten after the request.
func (c *Client) readCache(key string) (Reply, bool, error) {
	data, err := os.ReadFile(c.cachePath(key))
	if errors.Is(err, os.ErrNotExist) {
		return Reply{}, false, nil
	}
	if err != nil {
		return Reply{}, false, fmt.Errorf("llm: reading the cache: %w", err)
	}
	r, ok := decodeEntry(data, key)
	if !ok {
		return Reply{}, false, nil
	}
	r.Cached = true
	return r, true, nil
}

func decodeEntry(data []byte, key string) (Reply, bool) {
	var e cacheEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return Reply{}, false
	}
	if e.Format != cacheFormat || e.Key != key || e.Reply.Content == "" {
		return Reply{}, false
	}
	return Reply{
		Content:      e.Reply.Content,
		Model:        e.Reply.Model,
		FinishReason: e.Reply.FinishReason,
		Usage:        Usage{PromptTokens: e.Reply.PromptTokens, CompletionTokens: e.Reply.CompletionTokens},
	}, true
}

// writeCache stores r under key atomically (a temporary file renamed into
// place, so a reader sees the old file or the whole new one) and returns
// the reply as decoded from the stored bytes, so that this run sees exactly
// what a re-run will read.
func (c *Client) writeCache(key string, msgs []Message, r Reply) (Reply, error) {
	e := cacheEntry{
		Format: cacheFormat,
		Key:    key,
		Request: cacheRequest{
			Model:       c.model,
			Messages:    msgs,
			Temperature: c.temperature,
			MaxTokens:   c.maxTokens,
			Seed:        c.seed,
		},
		Reply: cacheReply{
			Content:          r.Content,
			Model:            r.Model,
			FinishReason:     r.FinishReason,
			PromptTokens:     r.Usage.PromptTokens,
			CompletionTokens: r.Usage.CompletionTokens,
		},
	}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return Reply{}, fmt.Errorf("llm: encoding the cache entry: %w", err)
	}
	data = append(data, '\n')
	stored, ok := decodeEntry(data, key)
	if !ok {
		return Reply{}, errors.New("llm: the cache entry does not read back") // a bug, not an input
	}
	if err := os.MkdirAll(c.cacheDir, 0o755); err != nil {
		return Reply{}, fmt.Errorf("llm: cache directory: %w", err)
	}
	if err := atomicfile.Write(c.cachePath(key), data); err != nil {
		return Reply{}, fmt.Errorf("llm: caching the reply: %w", err)
	}
	return stored, nil
}
