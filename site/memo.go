package site

import (
	"bufio"
	"crypto/sha256"
	"encoding/gob"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
)

// markupVersion changes whenever markup renders the same markdown
// differently or the memo file's layout changes, so that memoised HTML
// from older code is not reused. The versions of goldmark and chroma are
// added to it at run time.
const markupVersion = "4"

// memo keeps rendered problem statements between builds, keyed by a hash
// of the markdown. Rendering them (goldmark, and chroma for code that the
// Python fast path leaves to it) is a tenth of a full build's CPU time,
// more for statements in other languages, and a statement only changes
// when its dataset does, so a build into an empty output folder renders
// only the statements it has not seen before.
//
// The memo is one file, read before rendering and rewritten after it with
// the entries this build used: it never grows beyond the current data.
type memo struct {
	path    string // "" when disabled
	version string
	old     map[[32]byte]string // read-only while pages render

	mu     sync.Mutex
	used   map[[32]byte]string
	misses int
}

// The memo file is a stream of gob values: a memoHeader, then Count
// memoEntry values. One value per entry keeps encoding to a small buffer
// of gob's, where one map value made gob grow a buffer to the whole
// file's size, megabytes of fresh memory faulted in at the end of a
// build when no other work overlaps it.
type memoHeader struct {
	Version string
	Count   int
}

type memoEntry struct {
	Key  [32]byte
	HTML string
}

// openMemo reads the memo at path; a missing, unreadable or outdated file
// gives an empty memo. An empty path disables memoisation.
func openMemo(path string) *memo {
	m := &memo{path: path, version: markupVersion + " " + rendererVersions(), used: map[[32]byte]string{}}
	if path == "" {
		return m
	}
	f, err := os.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	// A broken or outdated memo only costs rendering again.
	dec := gob.NewDecoder(bufio.NewReaderSize(f, 1<<16))
	var h memoHeader
	if dec.Decode(&h) != nil || h.Version != m.version || h.Count < 0 {
		return m
	}
	old := make(map[[32]byte]string, min(h.Count, 1<<20))
	for range h.Count {
		var e memoEntry
		if dec.Decode(&e) != nil {
			return m
		}
		old[e.Key] = e.HTML
	}
	m.old = old
	return m
}

// rendererVersions names the module versions of the markdown renderer and
// highlighter compiled into this program.
func rendererVersions() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var vs []string
	for _, d := range bi.Deps {
		if strings.Contains(d.Path, "goldmark") || strings.Contains(d.Path, "chroma") || strings.Contains(d.Path, "regexp2") {
			vs = append(vs, d.Path+"@"+d.Version)
		}
	}
	return strings.Join(vs, " ")
}

// get returns the memoised output for src, or renders and records it.
func (m *memo) get(src string, render func(string) (string, error)) (string, error) {
	key := sha256.Sum256([]byte(src))
	m.mu.Lock()
	out, ok := m.used[key] // rendered earlier in this build
	if !ok {
		if out, ok = m.old[key]; ok {
			m.used[key] = out
		}
	}
	m.mu.Unlock()
	if ok {
		return out, nil
	}
	out, err := render(src)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	m.used[key] = out
	m.misses++
	m.mu.Unlock()
	return out, nil
}

// save rewrites the memo file with the entries this build used, unless
// they are exactly the ones it read.
func (m *memo) save() error {
	if m.path == "" || (m.misses == 0 && len(m.used) == len(m.old)) {
		return nil
	}
	err := writeAtomicWith(m.path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		enc := gob.NewEncoder(bw)
		if err := enc.Encode(memoHeader{Version: m.version, Count: len(m.used)}); err != nil {
			return err
		}
		for k, html := range m.used {
			if err := enc.Encode(memoEntry{Key: k, HTML: html}); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("saving the render memo: %w", err)
	}
	return nil
}
