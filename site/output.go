package site

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// stateFile records, in the output folder, what the last build wrote and
// from which inputs, so that a rebuild rewrites only what changed and one
// with nothing changed does no work at all.
const stateFile = ".featbench-build.json"

type buildState struct {
	Inputs string            `json:"inputs"` // fingerprint of every input
	Files  map[string]string `json:"files"`  // output path -> content hash
}

// output writes the site's files. Each file is written to a temporary file
// and renamed, so a killed build never leaves a half-written page; a file
// whose content is unchanged is not touched.
type output struct {
	dir  string
	prev buildState
	dirs sync.Map      // folders known to exist: one MkdirAll each, not one per file
	seq  atomic.Uint64 // names temporary files

	mu      sync.Mutex
	files   map[string]string
	written int
}

func openOutput(dir string) *output {
	o := &output{dir: dir, files: map[string]string{}}
	if raw, err := os.ReadFile(filepath.Join(dir, stateFile)); err == nil {
		_ = json.Unmarshal(raw, &o.prev) // a broken state file only costs a full rewrite
	}
	return o
}

// upToDate reports whether the last build had the same inputs and all its
// files are still in place.
func (o *output) upToDate(inputs string) bool {
	if o.prev.Inputs == "" || o.prev.Inputs != inputs {
		return false
	}
	for rel := range o.prev.Files {
		if _, err := os.Stat(filepath.Join(o.dir, filepath.FromSlash(rel))); err != nil {
			return false
		}
	}
	return true
}

// write stores one file; rel is slash-separated, relative to the output.
func (o *output) write(rel string, data []byte) error {
	if err := checkRel(rel); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:16])
	path := filepath.Join(o.dir, filepath.FromSlash(rel))
	o.mu.Lock()
	if _, dup := o.files[rel]; dup {
		o.mu.Unlock()
		return fmt.Errorf("two pages want to write %s", rel)
	}
	o.files[rel] = h
	unchanged := o.prev.Files[rel] == h
	o.mu.Unlock()
	if unchanged {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
	}
	if dir := filepath.Dir(path); !o.known(dir) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating folder for %s: %w", path, err)
		}
		o.dirs.Store(dir, true)
	}
	// A name of our own instead of os.CreateTemp saves a chmod per file:
	// thousands of pages make the system calls count.
	tmp := fmt.Sprintf("%s.tmp-%d-%d", path, os.Getpid(), o.seq.Add(1))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := commit(f, path, data); err != nil {
		return err
	}
	o.mu.Lock()
	o.written++
	o.mu.Unlock()
	return nil
}

func (o *output) known(dir string) bool {
	_, ok := o.dirs.Load(dir)
	return ok
}

// checkRel refuses an output path that could leave the output folder.
func checkRel(rel string) error {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") {
		return fmt.Errorf("bad output path %q", rel)
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("bad output path %q", rel)
		}
	}
	return nil
}

// finish removes files the previous build wrote and this one did not, then
// records the state.
func (o *output) finish(inputs string) (removed int, err error) {
	var stale []string
	for rel := range o.prev.Files {
		if _, ok := o.files[rel]; !ok {
			stale = append(stale, rel)
		}
	}
	sort.Strings(stale)
	for _, rel := range stale {
		path := filepath.Join(o.dir, filepath.FromSlash(rel))
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("removing stale %s: %w", rel, err)
		}
		removed++
		// Drop folders the removal emptied, up to the output root.
		for dir := filepath.Dir(path); dir != o.dir && strings.HasPrefix(dir, o.dir); dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil {
				break
			}
		}
	}
	raw, err := json.Marshal(buildState{Inputs: inputs, Files: o.files})
	if err != nil {
		return removed, fmt.Errorf("recording build state: %w", err)
	}
	return removed, writeAtomic(filepath.Join(o.dir, stateFile), raw)
}

// writeAtomic writes a file, creating its folder, through a temporary
// file and a rename: readers see the old file or the new one, never a part.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating folder for %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return commit(f, path, data)
}

// commit writes data to the open temporary file f and renames it to path.
func commit(f *os.File, path string, data []byte) error {
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
