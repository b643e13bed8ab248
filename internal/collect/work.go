package collect

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/featbench/featbench/internal/atomicfile"
)

// work is one repository's work folder: each stage's output, stored with
// a digest of the inputs it was made from. A stage whose output is there
// with the same digest is skipped; a changed input makes it run again,
// and with it every later stage, whose digests include it.
type work struct {
	dir string
}

// record is a stored output: what it was made from and what it is.
type record struct {
	Digest string          `json:"digest"`
	Output json.RawMessage `json:"output"`
}

// digest hashes the parts that decide an output.
func digest(parts ...any) string {
	h := sha256.New()
	for _, p := range parts {
		b, err := json.Marshal(p)
		if err != nil {
			// Every part is plain data; a failure is a programming error.
			panic(fmt.Sprintf("collect: digest of %T: %v", p, err))
		}
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// path is where a stage's output (or one item of it) is stored.
func (w work) path(stage string, item ...string) string {
	p := []string{w.dir, stage}
	for _, it := range item {
		p = append(p, fileKey(it))
	}
	return filepath.Join(p...) + ".json"
}

// load reads a stored output into v when its digest is d; false when it
// is not there, was made from other inputs, or cannot be read (then it is
// made again).
func (w work) load(d string, v any, stage string, item ...string) bool {
	raw, err := os.ReadFile(w.path(stage, item...))
	if err != nil {
		return false
	}
	var r record
	if json.Unmarshal(raw, &r) != nil || r.Digest != d {
		return false
	}
	return json.Unmarshal(r.Output, v) == nil
}

// save stores an output with its digest, atomically.
func (w work) save(d string, v any, stage string, item ...string) error {
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", stage, err)
	}
	p := w.path(stage, item...)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("work folder: %w", err)
	}
	return atomicfile.WriteJSON(p, record{Digest: d, Output: out})
}

// file is a path in the work folder for other kinds of output (logs).
func (w work) file(parts ...string) string {
	return filepath.Join(append([]string{w.dir}, parts...)...)
}

// fileKey turns a test path or an instance id into one file name: letters,
// digits, '.', '-' and '_' kept, everything else '_', with a hash of the
// original when anything was changed so that two names never meet.
func fileKey(s string) string {
	var b strings.Builder
	changed := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	k := b.String()
	if k == "" || k == "." || k == ".." || strings.HasPrefix(k, ".") {
		k = "_" + k
		changed = true
	}
	if len(k) > 120 {
		k = k[:120]
		changed = true
	}
	if changed {
		sum := sha256.Sum256([]byte(s))
		k += "-" + hex.EncodeToString(sum[:4])
	}
	return k
}
