package images

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/featbench/featbench/internal/container"
)

// envRecipe is the version of the environment image's recipe (the
// Dockerfile envDockerfile writes): bump it when that changes.
const envRecipe = 1

// Source is where a repository's source comes from: a folder on this
// machine, or a commit of a git repository.
type Source struct {
	// Dir is a folder whose files are the source. Caches and build
	// leftovers (skippedDirs, *.pyc) are left out.
	Dir string
	// GitURL and Commit name a commit (its full hash) of a git repository
	// that `git clone` reaches from this machine: a path or a file:// URL
	// when there is no network. The commit's tracked files are the source.
	GitURL string
	Commit string
}

// EnvSpec describes an environment image: a repository's source in
// /testbed, installed.
type EnvSpec struct {
	Name   string // the repository, e.g. "textkit" or "owner/repo"
	Source Source
	// PreInstall and Install are shell commands (bash) run in order in
	// /testbed, without network, after the source is copied; PreInstall
	// first (system set-up), then Install (for example
	// "pip install --no-index --no-deps --no-build-isolation -e .").
	PreInstall []string
	Install    []string
	Base       string // the base image, as EnsureBase returns it
	Prefix     string // starts the image's name; DefaultPrefix when empty
	// Patches are diffs applied in /testbed, in order, after the source is
	// copied and before the commands run: a history-based instance's
	// environment is its base commit with its test patch and its patch
	// applied (the complete project the evaluation harness reverses them
	// from). Their files are removed from the image's file system once
	// applied.
	Patches []string
}

// skippedDirs are folders left out of a Dir source: version control and
// caches, which say nothing about the code and change on every run.
var skippedDirs = []string{".git", "__pycache__", ".pytest_cache"}

// commitPattern matches a full SHA-1 or SHA-256 commit hash: only a full
// hash pins the content, so only it may name the image.
var commitPattern = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// EnsureEnv returns the reference of the environment image of spec,
// building it first if the engine does not have it. Its tag is
// featbench/env-<name>:<key>, where the key hashes the base image, the
// source's content (every file of a Dir, or the commit of a GitURL), the
// commands and the recipe, so a changed input makes a new image.
//
// The image is spec.Base with the source in /testbed, the commands run in
// it, and all of /testbed then committed in a fresh git repository (build
// leftovers ignored by .gitignore included, so that `git clean -fdx`
// keeps what the install made). A failing command fails the build with an
// error naming it and showing the end of its output. Progress and the
// build's output go to log (may be nil).
//
// Two concurrent calls for an image not built yet both build it (the
// result is the same); a harness builds its images before starting
// workers.
func EnsureEnv(ctx context.Context, eng Engine, spec EnvSpec, log io.Writer) (string, error) {
	if spec.Base == "" {
		return "", fmt.Errorf("environment image for %s: no base image", spec.Name)
	}
	spec.Patches = nonEmpty(spec.Patches)
	// A git source's key is its commit: an image already built is found
	// without cloning the repository.
	if key, ok := gitSourceKey(spec.Source); ok {
		ref, _ := envRef(spec, key)
		if ok, err := eng.ImageExists(ctx, ref); err != nil {
			return "", fmt.Errorf("environment image for %s: %w", spec.Name, err)
		} else if ok {
			return ref, nil
		}
	}
	files, sourceKey, err := loadSource(ctx, spec.Source)
	if err != nil {
		return "", fmt.Errorf("environment image for %s: %w", spec.Name, err)
	}
	ref, key := envRef(spec, sourceKey)
	if ok, err := eng.ImageExists(ctx, ref); err != nil {
		return "", fmt.Errorf("environment image for %s: %w", spec.Name, err)
	} else if ok {
		return ref, nil
	}
	if ok, err := eng.ImageExists(ctx, spec.Base); err != nil {
		return "", fmt.Errorf("environment image for %s: %w", spec.Name, err)
	} else if !ok {
		return "", fmt.Errorf("environment image for %s: base image %s not found (EnsureBase builds it)", spec.Name, spec.Base)
	}

	start := time.Now()
	logf(log, "building %s: %d source files on %s", ref, len(files), spec.Base)
	for i := range files {
		files[i].Path = "src/" + files[i].Path
	}
	for i, p := range spec.Patches {
		files = append(files, container.File{Path: fmt.Sprintf("patches/%d.diff", i), Mode: 0o644, Data: []byte(p)})
	}
	labels := map[string]string{
		LabelProject: "1", LabelKind: KindEnv, LabelKey: key,
		LabelRepo: spec.Name, LabelBase: spec.Base,
	}
	if err := eng.Build(ctx, ref, envDockerfile(spec), files, labels, log); err != nil {
		return "", fmt.Errorf("environment image for %s: %w", spec.Name, err)
	}
	logf(log, "built %s in %s", ref, time.Since(start).Round(100*time.Millisecond))
	return ref, nil
}

// EnvRef returns the reference the environment image of spec has (or will
// have once EnsureEnv built it). It reads the whole source to hash it.
func EnvRef(ctx context.Context, spec EnvSpec) (string, error) {
	spec.Patches = nonEmpty(spec.Patches)
	if key, ok := gitSourceKey(spec.Source); ok {
		ref, _ := envRef(spec, key)
		return ref, nil
	}
	_, sourceKey, err := loadSource(ctx, spec.Source)
	if err != nil {
		return "", fmt.Errorf("environment image for %s: %w", spec.Name, err)
	}
	ref, _ := envRef(spec, sourceKey)
	return ref, nil
}

// nonEmpty leaves out the empty patches (an instance without a test
// patch has nothing to apply).
func nonEmpty(patches []string) []string {
	var out []string
	for _, p := range patches {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return out
}

// gitSourceKey is a git source's key (loadSource's) without reading it,
// when the source is a git commit.
func gitSourceKey(src Source) (string, bool) {
	if src.Dir == "" && src.GitURL != "" && commitPattern.MatchString(src.Commit) {
		return "git " + src.Commit, true
	}
	return "", false
}

func envRef(spec EnvSpec, sourceKey string) (ref, key string) {
	pre, _ := json.Marshal(spec.PreInstall)
	inst, _ := json.Marshal(spec.Install)
	text := fmt.Sprintf("featbench environment image\nrecipe %d\nbase %s\nsource %s\npre-install %s\ninstall %s\n",
		envRecipe, spec.Base, sourceKey, pre, inst)
	// Only a spec with patches says so, so that every other image keeps
	// the key it had.
	for _, p := range spec.Patches {
		text += fmt.Sprintf("patch %x\n", sha256.Sum256([]byte(p)))
	}
	key = hashKey(text)
	return prefixOr(spec.Prefix) + "/env-" + sanitizeName(spec.Name) + ":" + key, key
}

// sanitizeName turns a repository name into a valid image name component.
func sanitizeName(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 100 {
		s = strings.TrimRight(s[:100], "-")
	}
	if s == "" {
		s = "repo"
	}
	return s
}

// envDockerfile writes the Dockerfile of an environment image. Commands
// go in the exec form, JSON-quoted, so that any text (quotes, newlines)
// runs as written, under bash with pipefail.
func envDockerfile(spec EnvSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\n", spec.Base)
	b.WriteString("COPY src/ /testbed/\nWORKDIR /testbed\n")
	var apply []string
	if len(spec.Patches) > 0 {
		b.WriteString("COPY patches/ /featbench-patches/\n")
		cmd := "set -e"
		for i := range spec.Patches {
			cmd += fmt.Sprintf("; git apply --whitespace=nowarn /featbench-patches/%d.diff", i)
		}
		apply = []string{cmd + "; rm -rf /featbench-patches"}
	}
	for _, cmd := range slices.Concat(apply, spec.PreInstall, spec.Install,
		[]string{"git init -q && git add -A -f && git commit -q --no-verify -m 'featbench environment'"}) {
		b.WriteString("RUN ")
		enc := json.NewEncoder(&b) // ends the line
		enc.SetEscapeHTML(false)   // keep && readable in the build's output
		_ = enc.Encode([]string{"/bin/bash", "-o", "pipefail", "-c", cmd})
	}
	return b.String()
}

// loadSource reads a source's files and returns them with a key of their
// content.
func loadSource(ctx context.Context, src Source) ([]container.File, string, error) {
	switch {
	case src.Dir != "" && src.GitURL != "":
		return nil, "", errors.New("source has both a folder and a git URL")
	case src.Dir != "":
		files, err := readDir(src.Dir)
		if err != nil {
			return nil, "", err
		}
		return files, "dir " + hashFiles(files), nil
	case src.GitURL != "":
		if !commitPattern.MatchString(src.Commit) {
			return nil, "", fmt.Errorf("source %s: commit %q is not a full commit hash", src.GitURL, src.Commit)
		}
		files, err := gitFiles(ctx, src.GitURL, src.Commit)
		if err != nil {
			return nil, "", err
		}
		// The commit pins the content; the URL differs from machine to
		// machine for the same repository.
		return files, "git " + src.Commit, nil
	}
	return nil, "", errors.New("source has neither a folder nor a git URL")
}

// readDir reads the files and symbolic links of a folder, leaving out
// skippedDirs, *.egg-info folders and compiled Python files.
func readDir(dir string) ([]container.File, error) {
	var files []container.File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if slices.Contains(skippedDirs, name) || strings.HasSuffix(name, ".egg-info") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".pyc") || strings.HasSuffix(name, ".pyo") {
			return nil
		}
		f := container.File{Path: filepath.ToSlash(rel)}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			if f.Link, err = os.Readlink(p); err != nil {
				return err
			}
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			f.Mode = 0o644
			if info.Mode()&0o111 != 0 {
				f.Mode = 0o755
			}
			if f.Data, err = os.ReadFile(p); err != nil {
				return err
			}
		default:
			return nil // sockets, pipes, devices
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading source %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("reading source %s: no files", dir)
	}
	return files, nil
}

// hashFiles hashes what the image gets of files: paths, executable bits,
// link targets and contents, in path order.
func hashFiles(files []container.File) string {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b container.File) int { return strings.Compare(a.Path, b.Path) })
	h := sha256.New()
	for _, f := range sorted {
		if f.Link != "" {
			fmt.Fprintf(h, "link %q %q\n", f.Path, f.Link)
			continue
		}
		sum := sha256.Sum256(f.Data)
		fmt.Fprintf(h, "file %q %o %x\n", f.Path, f.Mode.Perm(), sum)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// gitFiles clones url into a temporary folder and reads the tracked files
// of commit.
func gitFiles(ctx context.Context, url, commit string) ([]container.File, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("git not found: a git source needs git on this machine")
	}
	tmp, err := os.MkdirTemp("", "featbench-src-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	git := func(stdout io.Writer, args ...string) error {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = stdout, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return nil
	}
	if err := git(nil, "clone", "--quiet", "--no-checkout", "--", url, tmp); err != nil {
		return nil, fmt.Errorf("source %s: %w", url, err)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := git(pw, "-C", tmp, "archive", "--format=tar", commit)
		pw.CloseWithError(err)
		done <- err
	}()
	files, readErr := readTar(pr)
	// git pads the archive past its end-of-archive marker.
	_, _ = io.Copy(io.Discard, pr)
	pr.CloseWithError(errors.New("stopped reading"))
	if err := <-done; err != nil {
		return nil, fmt.Errorf("source %s at %s: %w", url, commit, err)
	}
	if readErr != nil {
		return nil, fmt.Errorf("source %s at %s: %w", url, commit, readErr)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("source %s at %s: no files", url, commit)
	}
	return files, nil
}

// readTar reads the regular files and symbolic links of a tar archive.
func readTar(r io.Reader) ([]container.File, error) {
	tr := tar.NewReader(r)
	var files []container.File
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		name := path.Clean(hdr.Name)
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return nil, fmt.Errorf("archive entry %q escapes the folder", hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeSymlink:
			files = append(files, container.File{Path: name, Link: hdr.Linkname})
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			mode := fs.FileMode(0o644)
			if hdr.Mode&0o111 != 0 {
				mode = 0o755
			}
			files = append(files, container.File{Path: name, Mode: mode, Data: data})
		}
	}
}
