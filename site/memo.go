package site

import (
	"bytes"
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
// differently, so that memoised HTML from older code is not reused. The
// versions of goldmark and chroma are added to it at run time.
const markupVersion = "3"

// memo keeps rendered problem statements between builds, keyed by a hash
// of the markdown. Highlighting code with chroma's regular-expression
// lexers is most of the CPU time of a full build, and a statement only
// changes when its dataset does, so a build into an empty output folder
// renders only the statements it has not seen before.
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

type memoFile struct {
	Version string
	Entries map[[32]byte]string
}

// openMemo reads the memo at path; a missing, unreadable or outdated file
// gives an empty memo. An empty path disables memoisation.
func openMemo(path string) *memo {
	m := &memo{path: path, version: markupVersion + " " + rendererVersions(), used: map[[32]byte]string{}}
	if path == "" {
		return m
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return m
	}
	var f memoFile
	if gob.NewDecoder(bytes.NewReader(raw)).Decode(&f) != nil || f.Version != m.version {
		return m // a broken or outdated memo only costs rendering again
	}
	m.old = f.Entries
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
	// gob builds the message in its own buffer and writes it once; a
	// bytes.Buffer of ours in between copied the megabytes once more.
	err := writeAtomicWith(m.path, func(w io.Writer) error {
		return gob.NewEncoder(w).Encode(memoFile{Version: m.version, Entries: m.used})
	})
	if err != nil {
		return fmt.Errorf("saving the render memo: %w", err)
	}
	return nil
}
