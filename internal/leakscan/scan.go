package leakscan

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Kinds of findings: where in the image the solution was found.
const (
	InFile    = "file"    // a file's text
	InPyc     = "pyc"     // a compiled module's constants and names
	InGit     = "git"     // a git repository's objects
	InLabel   = "label"   // the image's labels
	InEnv     = "env"     // the image's environment (which a container sees)
	InHistory = "history" // a step of the image's history
)

// Finding is one place that holds some of an instance's solution.
type Finding struct {
	Instance string `json:"instance"`
	Kind     string `json:"kind"`
	// Path is the file (or the git repository's folder), the label's or
	// variable's name, or "step N" of the history.
	Path string `json:"path"`
	// Layer is the image layer (1-based, as the history lists them) the
	// file is in; 0 outside layers.
	Layer int `json:"layer,omitempty"`
	// Matches counts the needles found; Sample is the first of them.
	Matches int    `json:"matches"`
	Sample  string `json:"sample"`
	// Reaches says the finding is in the starting point a prediction (or
	// an agent) gets; Why says why or why not.
	Reaches bool   `json:"reaches"`
	Why     string `json:"why"`
}

// Report is a scan's findings, and what was not read.
type Report struct {
	Image    string    `json:"image,omitempty"`
	Findings []Finding `json:"findings"`
	// Skipped lists files too large to read (maxFile).
	Skipped []string `json:"skipped,omitempty"`
	Files   int      `json:"files"`  // files read
	Layers  int      `json:"layers"` // layers read
}

// Reaching are the findings that reach the starting point.
func (r *Report) Reaching() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Reaches {
			out = append(out, f)
		}
	}
	return out
}

// maxFile bounds the size of a file the scan reads.
const maxFile = 64 << 20

// match is what one file (or object) holds of one instance's needles:
// the needles found.
type match []string

// hit is a file (or repository, label, variable, step) whose content
// holds needles, per instance (by its index in the scanner's needles).
type hit struct {
	kind  string
	path  string
	layer string // the layer's folder in the saved image; "" in a container's
	by    map[int]match
}

// scanner reads files and remembers which hold needles.
type scanner struct {
	needles []Needles
	hits    []hit
	// base are, per instance, the lines that files which are no leak
	// hold (the standard library, the project's files the solution does
	// not touch): such a line proves nothing where else it occurs.
	base    []map[string]bool
	gitDirs map[string]string // repository folder in the image -> its objects, copied here
	tmp     string
	files   int
	skipped []string
	// baseOf says whether a file's lines are common ones for an
	// instance (imageBase, fsBase).
	baseOf func(name string, n Needles) bool
}

func newScanner(needles []Needles) (*scanner, error) {
	tmp, err := os.MkdirTemp("", "featbench-leakscan-")
	if err != nil {
		return nil, err
	}
	s := &scanner{needles: needles, gitDirs: map[string]string{}, tmp: tmp}
	for range needles {
		s.base = append(s.base, map[string]bool{})
	}
	return s, nil
}

func (s *scanner) close() { os.RemoveAll(s.tmp) }

// stdlib matches files of a Python's library folder: the standard library
// and the packages installed there (base files, up to baseMax lines).
var stdlib = regexp.MustCompile(`(^|/)lib/python3[.0-9]*/`)

// gitObject matches a git object file: a loose object, or a pack and its
// index, under a repository's objects folder.
var gitObject = regexp.MustCompile(`^(.*/)?objects/([0-9a-f]{2}/[0-9a-f]{38,62}|pack/pack-[0-9a-f]+\.(pack|idx))$`)

// file reads one file of a layer (layer is its folder in the saved image,
// "" for a container's export) and records what it holds.
func (s *scanner) file(layer, name string, r io.Reader, size int64) error {
	name = "/" + strings.TrimPrefix(path.Clean("/"+name), "/")
	// Git objects are copied to disk whatever their size (a pack may be
	// large), for git to read.
	if m := gitObject.FindStringSubmatch(name); m != nil {
		repo := strings.TrimSuffix(m[1], "/")
		dir := s.gitDirs[repo]
		if dir == "" {
			sum := sha256.Sum256([]byte(repo))
			dir = filepath.Join(s.tmp, hex.EncodeToString(sum[:8]))
			s.gitDirs[repo] = dir
		}
		dst := filepath.Join(dir, "objects", filepath.FromSlash(m[2]))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		f, err := os.Create(dst)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if size > maxFile {
		s.skipped = append(s.skipped, name)
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(r, maxFile))
	if err != nil {
		return err
	}
	return s.content(layer, name, data, 0)
}

// maxDepth bounds archives inside archives.
const maxDepth = 3

// content records what one file's bytes hold; an archive's members (a
// wheel or zip, a gzip or a tar in it) are read as files of their own,
// named ARCHIVE!/MEMBER, as pip's caches and installs keep packages.
func (s *scanner) content(layer, name string, data []byte, depth int) error {
	if depth < maxDepth {
		if members, ok := unpack(data); ok {
			for _, m := range members {
				if err := s.content(layer, name+"!/"+m.name, m.data, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
	}
	kind := InFile
	if strings.HasSuffix(name, ".pyc") {
		kind = InPyc
	}
	s.files++
	h := hit{kind: kind, path: name, layer: layer, by: map[int]match{}}
	for i, n := range s.needles {
		var m match
		if kind == InPyc {
			m = pycMatch(data, name, n)
		} else {
			m = lines(data, n.Lines)
		}
		// A compiled copy of a file the solution changes, holding the
		// names it defines, is never a common file.
		strong := slices.ContainsFunc(m, func(x string) bool { return strings.HasPrefix(x, "def/class ") })
		if len(m) > 0 && !strong && s.baseOf(name, n) && len(m) <= baseMax(n) {
			// A file that is no leak: what it shares with the
			// solution, its literals too, is common.
			for _, l := range append(m, lines(data, n.Literals)...) {
				s.base[i][l] = true
			}
			m = nil
		}
		if len(m) > 0 {
			h.by[i] = m
		}
	}
	if len(h.by) > 0 {
		s.hits = append(s.hits, h)
	}
	return nil
}

// lines are the needles data holds.
func lines(data []byte, needles []string) match {
	var m match
	for _, l := range needles {
		if bytes.Contains(data, []byte(l)) {
			m = append(m, l)
		}
	}
	return m
}

// baseMax is the most lines (or literals) of the solution a file may share
// with it and still be a base file: an unrelated file shares a few generic
// lines ("if headers is not None:"), a copy of the solution most of them.
// Base files are those of the standard library and installed packages,
// and the project's files the solution does not touch.
func baseMax(n Needles) int { return max(2, len(n.Lines)/10) }

// imageBase says, in an image, whether a file's lines are common ones for
// n: the standard library's, and the project's files the solution does
// not touch.
func imageBase(name string, n Needles) bool {
	if stdlib.MatchString(name) {
		return true // the standard library and the installed packages
	}
	for _, root := range []string{"/testbed/", "/root/my_repo/"} {
		if rel, ok := strings.CutPrefix(name, root); ok && !strings.HasPrefix(rel, ".git/") && strings.HasSuffix(rel, ".py") {
			return !slices.Contains(n.Files, rel)
		}
	}
	return false
}

// fsBase says, in a starting point, whether a file's lines are common
// ones: the standard library's, and the starting point's own source,
// which holds no line of the solution but the ones it shares.
func fsBase(name string, n Needles) bool {
	if stdlib.MatchString(name) {
		return true
	}
	rel, ok := strings.CutPrefix(name, "/testbed/")
	return ok && !strings.HasPrefix(rel, ".git/") && strings.HasSuffix(rel, ".py")
}

// pycMatch is what a compiled module holds of n: its literals (docstrings
// and strings, kept as they are), or, for a compiled copy of a file the
// solution changes, the names the solution defines (kept as marshal's
// short strings: a type byte, the length, the bytes).
func pycMatch(data []byte, name string, n Needles) match {
	m := lines(data, n.Literals)
	if !compiledOf(name, n.Files) {
		return m
	}
	for _, nm := range n.Names {
		if len(nm) > 255 {
			continue
		}
		for _, t := range []byte{'z', 'Z', 'z' | 0x80, 'Z' | 0x80} {
			if bytes.Contains(data, append([]byte{t, byte(len(nm))}, nm...)) {
				m = append(m, "def/class "+nm)
				break
			}
		}
	}
	return m
}

// gitMatches reads the objects of every repository found, through git,
// and records what they hold.
func (s *scanner) gitMatches(ctx context.Context) ([]hit, error) {
	var out []hit
	repos := make([]string, 0, len(s.gitDirs))
	for r := range s.gitDirs {
		repos = append(repos, r)
	}
	sort.Strings(repos)
	for _, repo := range repos {
		dir := s.gitDirs[repo]
		// The objects alone: git needs a HEAD and refs to call it a
		// repository, not a history.
		os.MkdirAll(filepath.Join(dir, "refs"), 0o755)
		os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		cmd := exec.CommandContext(ctx, "git", "--git-dir="+dir, "cat-file", "--batch-all-objects", "--batch", "--unordered")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("git cat-file on the objects of %s: %w", repo, err)
		}
		h := hit{kind: InGit, path: repo, by: map[int]match{}}
		br := bufio.NewReaderSize(stdout, 1<<20)
		var readErr error
		for {
			header, err := br.ReadString('\n')
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr = err
				}
				break
			}
			f := strings.Fields(header)
			if len(f) < 3 {
				continue // "<sha> missing"
			}
			size, _ := strconv.ParseInt(f[2], 10, 64)
			body := make([]byte, size+1) // with its newline
			if _, err := io.ReadFull(br, body); err != nil {
				readErr = err
				break
			}
			for i, n := range s.needles {
				for _, l := range lines(body, n.Lines) {
					if !slices.Contains(h.by[i], l) {
						h.by[i] = append(h.by[i], l)
					}
				}
			}
		}
		if err := cmd.Wait(); err != nil && readErr == nil {
			readErr = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
		}
		if readErr != nil {
			return nil, fmt.Errorf("reading the git objects of %s: %w", repo, readErr)
		}
		if len(h.by) > 0 {
			out = append(out, h)
		}
	}
	return out, nil
}

// findings turns hits into findings per instance, without the needles
// that base files explain, with classify saying where each stands.
func (s *scanner) findings(hits []hit, classify func(h hit, n Needles) (bool, string)) []Finding {
	var out []Finding
	for _, h := range hits {
		for i, n := range s.needles {
			var m match
			for _, l := range h.by[i] {
				if !s.base[i][l] {
					m = append(m, l)
				}
			}
			if len(m) == 0 {
				continue
			}
			reaches, why := classify(h, n)
			out = append(out, Finding{Instance: n.Instance, Kind: h.kind, Path: h.path,
				Matches: len(m), Sample: m[0], Reaches: reaches, Why: why})
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Instance != out[b].Instance {
			return out[a].Instance < out[b].Instance
		}
		return out[a].Reaches && !out[b].Reaches
	})
	return out
}
