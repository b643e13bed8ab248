package site

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// stateFile records, in the output folder, what the last build wrote and
// from which inputs, so that a rebuild rewrites only what changed and one
// with nothing changed does no work at all.
const stateFile = ".featbench-build.json"

type buildState struct {
	Inputs string            `json:"inputs"` // fingerprint of every input
	Files  map[string]string `json:"files"`  // output path -> content hash (xxHash64)
}

// output writes the site's files. Each file is written to a temporary file
// and renamed, so a killed build never leaves a half-written page; a file
// whose content is unchanged is not touched.
//
// When the output folder does not exist yet the whole site is staged
// instead: files are written straight into a sibling temporary folder,
// which finish renames into place. The site appears complete or not at
// all, and thousands of per-file renames are saved.
type output struct {
	dir   string // where files are written: the output folder or the stage
	final string // the output folder
	prev  buildState
	dirs  sync.Map      // folders known to exist: made once each, not once per file
	seq   atomic.Uint64 // names temporary files

	mu      sync.Mutex
	files   map[string]string
	written int
}

// stagePrefix names the temporary folder a new site is staged in, next to
// the output folder: "<output>.stage-<pid>".
const stagePrefix = ".stage-"

func openOutput(dir string) *output {
	o := &output{dir: dir, final: dir, files: map[string]string{}}
	if raw, err := os.ReadFile(filepath.Join(dir, stateFile)); err == nil {
		_ = json.Unmarshal(raw, &o.prev) // a broken state file only costs a full rewrite
	}
	return o
}

// stage makes a build of a missing output folder write into a new sibling
// folder, after removing what killed builds left behind.
func (o *output) stage() error {
	if _, err := os.Lstat(o.final); !errors.Is(err, fs.ErrNotExist) {
		return nil // it exists (or cannot be checked): write in place
	}
	old, _ := filepath.Glob(o.final + stagePrefix + "*")
	for _, d := range old {
		if pid, err := strconv.Atoi(strings.TrimPrefix(d, o.final+stagePrefix)); err == nil && processAlive(pid) {
			continue // another build's stage
		}
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("removing an unfinished build's folder: %w", err)
		}
	}
	stage := o.final + stagePrefix + strconv.Itoa(os.Getpid())
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return fmt.Errorf("creating the output folder: %w", err)
	}
	o.dir = stage
	return nil
}

func (o *output) staged() bool { return o.dir != o.final }

// abandon removes the stage of a build that failed: nothing is left.
func (o *output) abandon() {
	if o.staged() {
		_ = os.RemoveAll(o.dir)
	}
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
	return o.put(rel, contentHash(data), func(path string) error { return o.store(path, data) })
}

// link stores as rel the file at src, whose content hashes to h: a hard
// link where the file system allows one, which copies nothing, and the
// bytes of data() otherwise. Nothing ever writes into a published file,
// so sharing its inode with src is safe: a rebuild replaces, not edits.
func (o *output) link(rel, src, h string, data func() ([]byte, error)) error {
	return o.put(rel, h, func(path string) error {
		target := path
		if !o.staged() {
			target = o.tempName(path)
		}
		if err := os.Link(src, target); err == nil {
			if target == path {
				return nil
			}
			if err := os.Rename(target, path); err == nil {
				return nil
			}
			os.Remove(target)
		}
		raw, err := data()
		if err != nil {
			return err
		}
		return o.store(path, raw)
	})
}

// contentHash is xxHash, not a cryptographic hash: it only tells a changed
// page from an unchanged one, over every byte of the site at each build.
func contentHash(data []byte) string { return hashString(xxhash.Sum64(data)) }

func hashString(sum uint64) string { return strconv.FormatUint(sum, 16) }

// put records rel with its content hash and, unless the previous build
// wrote the same content there, calls save with the file's path.
func (o *output) put(rel, h string, save func(path string) error) error {
	if err := checkRel(rel); err != nil {
		return err
	}
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
		if err := mkdir(dir); err != nil {
			return fmt.Errorf("creating folder for %s: %w", path, err)
		}
		o.dirs.Store(dir, true)
	}
	if err := save(path); err != nil {
		return err
	}
	o.mu.Lock()
	o.written++
	o.mu.Unlock()
	return nil
}

// store writes data as the file at path.
func (o *output) store(path string, data []byte) error {
	if o.staged() {
		// Nobody reads the stage: write in place.
		return writeNew(path, data)
	}
	f, err := os.OpenFile(o.tempName(path), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return commit(f, path, data)
}

// tempName is a name of our own next to path; os.CreateTemp would cost a
// chmod per file, and thousands of pages make the system calls count.
func (o *output) tempName(path string) string {
	return fmt.Sprintf("%s.tmp-%d-%d", path, os.Getpid(), o.seq.Add(1))
}

// mkdir creates dir and any missing parents. Most folders are new page
// folders in a parent that exists, so it tries Mkdir first: os.MkdirAll
// would stat the folder and its parent before, two system calls for each
// of thousands of pages.
func mkdir(dir string) error {
	err := os.Mkdir(dir, 0o755)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case errors.Is(err, fs.ErrExist):
		// A file of that name fails when the page is created in it.
		return nil
	}
	return err
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
	if err := writeAtomic(filepath.Join(o.dir, stateFile), raw); err != nil {
		return removed, err
	}
	if o.staged() {
		if err := os.Rename(o.dir, o.final); err != nil {
			return removed, fmt.Errorf("moving the new site into place: %w", err)
		}
		o.dir = o.final
	}
	return removed, nil
}

// writeNew creates a file that must not exist yet.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		err = fill(f, data)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
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

// commit writes data to the open temporary file f and renames it to path;
// on any error the temporary file is removed.
func commit(f *os.File, path string, data []byte) error {
	err := fill(f, data)
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// fill writes data to the open file f and closes it.
func fill(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
