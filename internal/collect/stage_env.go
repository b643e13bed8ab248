package collect

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/registry"
)

// envOut is the environment stage's output.
type envOut struct {
	Base  string `json:"base"`
	Image string `json:"image"`
	// Commit is the source's commit: the configured one for a git source,
	// "" for a folder.
	Commit string `json:"commit"`
}

// source is where the repository's code comes from, for the image.
func (r *repoRun) source() (images.Source, error) {
	src := r.rc.Source
	local := src
	if !filepath.IsAbs(local) && !strings.Contains(local, "://") {
		local = filepath.Join(r.o.Root, filepath.FromSlash(src))
	}
	if r.rc.Commit == "" {
		fi, err := os.Stat(local)
		if err != nil || !fi.IsDir() {
			return images.Source{}, fmt.Errorf("source %q is not a folder; a git source needs a commit", src)
		}
		return images.Source{Dir: local}, nil
	}
	if _, err := os.Stat(local); err == nil {
		src = local
	}
	return images.Source{GitURL: src, Commit: r.rc.Commit}, nil
}

// stageEnv builds (or finds) the repository's image on the evaluation
// images' layers. The engine's cache is the stored output: an image is
// found by the hash of everything it is made from.
func (r *repoRun) stageEnv(ctx context.Context) error {
	src, err := r.source()
	if err != nil {
		return err
	}
	prefix := r.o.Config.Eval.ImagePrefix
	log, err := os.OpenFile(r.w.file("env.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening env.log: %w", err)
	}
	defer log.Close()
	fmt.Fprintf(log, "=== %s\n", time.Now().UTC().Format(time.RFC3339))
	var base string
	if r.rc.BaseImage != "" {
		// From a registry, pinned by digest: the dataset records what
		// came, whatever the tag names later.
		base, err = images.EnsurePulled(ctx, r.o.Engine, r.rc.BaseImage, r.o.credentials(), log)
	} else {
		base, err = images.EnsureBase(ctx, r.o.Engine, images.BaseSpec{Python: r.rc.Python, Packages: r.rc.Packages, Prefix: prefix}, log)
	}
	if err != nil {
		return fmt.Errorf("base image (log: %s): %w", r.w.file("env.log"), err)
	}
	spec := images.EnvSpec{Name: r.rc.Repository, Source: src, PreInstall: r.rc.PreInstall, Install: r.rc.Install,
		Base: base, RegistryBase: r.rc.BaseImage != "", Prefix: prefix}
	ref, err := images.EnvRef(ctx, spec)
	if err != nil {
		return err
	}
	if r.needStored {
		// Only the reference is needed; the image itself is checked by
		// the stage that uses it.
		r.env = envOut{Base: base, Image: ref, Commit: r.rc.Commit}
		return nil
	}
	if ok, err := r.o.Engine.ImageExists(ctx, ref); err == nil && ok {
		r.reused = true
	}
	r.logf("environment image %s", ref)
	ref, err = images.EnsureEnv(ctx, r.o.Engine, spec, log)
	if err != nil {
		return fmt.Errorf("the repository's environment (install log: %s): %w", r.w.file("env.log"), err)
	}
	r.env = envOut{Base: base, Image: ref, Commit: r.rc.Commit}
	return nil
}

// testFile is one discovered test file.
type testFile struct {
	Path  string   `json:"path"`
	Tests []string `json:"tests"` // node ids, as collected
	// Created is when the file was first committed (RFC 3339), for a git
	// source; "" when unknown.
	Created string `json:"created,omitempty"`
}

// discoverOut is the discovery stage's output.
type discoverOut struct {
	Files  []testFile `json:"files"`
	Errors []string   `json:"errors,omitempty"` // files pytest could not collect
}

// discoverArgs list the tests pytest collects, one node id per line. The
// project's addopts are left out: a "-v" there (marshmallow has one)
// turns the list into a tree without ids.
var discoverArgs = []string{"python3", "-m", "pytest", "--collect-only", "-q", "-o", "addopts=", "-p", "no:cacheprovider", "--continue-on-collection-errors", "--rootdir=" + repoDir}

// stageDiscover collects the repository's tests with pytest, by file.
func (r *repoRun) stageDiscover(ctx context.Context) error {
	d := digest("discover", recipe, r.env.Image, r.rc.Exclude)
	if ok, err := r.cached(d, &r.disc); ok || err != nil {
		return err
	}
	b, err := openBox(ctx, r.o.Executor, r.env.Image, r.rc.Repository, r.lim, r.w.file("discover.log"))
	if err != nil {
		return err
	}
	defer b.close()
	res, err := b.exec(ctx, repoDir, r.tout.Discovery, []string{"PYTHONDONTWRITEBYTECODE=1"}, discoverArgs...)
	if err != nil {
		return fmt.Errorf("collecting the tests: %w", err)
	}
	if res.TimedOut {
		return fmt.Errorf("collecting the tests took longer than discovery_timeout (%s)", r.rc.DiscoveryTimeout)
	}
	files, errs := parseCollection(string(res.Stdout))
	var out discoverOut
	out.Errors = errs
	for _, f := range slices.Sorted(maps.Keys(files)) {
		if excluded(f, r.rc.Exclude) {
			continue
		}
		out.Files = append(out.Files, testFile{Path: f, Tests: files[f]})
	}
	if len(out.Files) == 0 {
		return fmt.Errorf("pytest collected no tests (exit %d): %s", res.ExitCode, tail(res.Stdout, res.Stderr, 15))
	}
	if err := r.addDates(ctx, out.Files); err != nil {
		return err
	}
	r.logf("discovered %d test files (%d tests)", len(out.Files), countTests(out.Files))
	r.disc = out
	return r.store(d, out)
}

func countTests(files []testFile) int {
	n := 0
	for _, f := range files {
		n += len(f.Tests)
	}
	return n
}

// parseCollection reads `pytest --collect-only -q`: one node id per line,
// then a blank line and the counts. Files that failed to collect are
// listed as "ERROR path - message" lines.
func parseCollection(out string) (map[string][]string, []string) {
	files := map[string][]string{}
	var errs []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(line, "ERROR ") {
			errs = append(errs, strings.TrimPrefix(line, "ERROR "))
			continue
		}
		file, _, ok := strings.Cut(line, "::")
		if !ok || !strings.HasSuffix(file, ".py") || strings.HasPrefix(file, "/") || strings.Contains(file, " ") {
			continue
		}
		files[file] = append(files[file], line)
	}
	sort.Strings(errs)
	return files, errs
}

// excluded reports whether a test file matches one of the patterns, as a
// whole path or by its name.
func excluded(file string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, file); ok {
			return true
		}
		if ok, _ := path.Match(p, path.Base(file)); ok {
			return true
		}
		if strings.HasSuffix(p, "/") && strings.HasPrefix(file, p) {
			return true
		}
	}
	return false
}

// addDates records when each test file was first committed, for a git
// source git can read on this machine (the paper's date filter).
func (r *repoRun) addDates(ctx context.Context, files []testFile) error {
	src, err := r.source()
	if err != nil || src.GitURL == "" {
		return err
	}
	if _, err := os.Stat(src.GitURL); err != nil {
		return nil // a remote repository: dates unknown
	}
	for i := range files {
		out, err := gitOutput(ctx, src.GitURL, "log", "--format=%cI", "--diff-filter=A", r.rc.Commit, "--", files[i].Path)
		if err != nil {
			return fmt.Errorf("dates of the test files: %w", err)
		}
		lines := strings.Fields(out)
		if len(lines) > 0 {
			files[i].Created = lines[len(lines)-1] // the oldest: the file's first commit
		}
	}
	return nil
}

// gitOutput runs git in a repository on this machine.
func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return string(out), nil
}

// credentials are the options' registry credentials, or the user's
// docker configuration's.
func (o Options) credentials() images.Credentials {
	if o.Credentials != nil {
		return o.Credentials
	}
	return registry.Keychain{}
}
