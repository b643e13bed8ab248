package collect

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/pyindex"
	"github.com/featbench/featbench/internal/pylock"
	"github.com/featbench/featbench/internal/registry"
)

// envOut is the environment stage's output.
type envOut struct {
	Base  string `json:"base"`
	Image string `json:"image"`
	// Commit is the source's commit: the configured one for a git source,
	// "" for a folder.
	Commit string `json:"commit"`
	// For network = "build": the indexes, the time files were limited to
	// (RFC 3339; "" for none) and the lock the image was built from.
	IndexURL      string           `json:"index_url,omitempty"`
	ExtraIndexURL []string         `json:"extra_index_url,omitempty"`
	ExcludeNewer  string           `json:"exclude_newer,omitempty"`
	Lock          []pylock.Package `json:"lock,omitempty"`
}

// lockOut is what resolving a networked environment stored: its lock,
// and what the gate could not do as asked.
type lockOut struct {
	Lock  []pylock.Package `json:"lock"`
	Other []string         `json:"other,omitempty"` // pip freeze's lines no index served
	Notes []string         `json:"notes,omitempty"`
}

// index is where the repository's install steps get packages (nil when
// they run offline): the configured indexes, else pip's own
// configuration here, else PyPI; and the cut-off of exclude_newer.
func (r *repoRun) index(ctx context.Context) (*images.Index, error) {
	if r.rc.Network != config.NetworkBuild {
		return nil, nil
	}
	idx := &images.Index{URLs: append([]string{r.rc.IndexURL}, r.rc.ExtraIndexURL...),
		Labels: map[string]string{labelProject: "1", labelKind: "collect", labelRepo: r.rc.Repository}}
	if r.rc.IndexURL == "" {
		home, _ := os.UserHomeDir()
		index, extra, from := pyindex.PipIndexes(os.Getenv, home)
		if msg := config.IndexURLProblem(index); msg != "" {
			return nil, fmt.Errorf("pip's index from %s: %q %s", from, index, msg)
		}
		if len(r.rc.ExtraIndexURL) == 0 {
			for _, e := range extra {
				if msg := config.IndexURLProblem(e); msg != "" {
					return nil, fmt.Errorf("pip's extra index from %s: %q %s", from, e, msg)
				}
			}
			idx.URLs = append([]string{index}, extra...)
		} else {
			idx.URLs[0] = index
		}
		r.logf("package index %s (from %s)", strings.Join(idx.URLs, ", "), from)
	}
	idx.Timeout, _ = time.ParseDuration(r.rc.IndexTimeout)
	switch r.rc.ExcludeNewer {
	case "":
	case "commit":
		src, err := r.source()
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(src.GitURL); err != nil {
			return nil, fmt.Errorf("exclude_newer = \"commit\": the date of %s's commit needs the git repository on this machine (%s is not); give a date instead", r.rc.Repository, src.GitURL)
		}
		out, err := gitOutput(ctx, src.GitURL, "show", "-s", "--format=%cI", r.rc.Commit)
		if err != nil {
			return nil, fmt.Errorf("exclude_newer = \"commit\": %w", err)
		}
		if idx.Before, err = time.Parse(time.RFC3339, strings.TrimSpace(out)); err != nil {
			return nil, fmt.Errorf("exclude_newer = \"commit\": the commit's date %q: %w", strings.TrimSpace(out), err)
		}
	default:
		idx.Before, _ = time.Parse(time.DateOnly, r.rc.ExcludeNewer)
	}
	idx.Before = idx.Before.UTC()
	return idx, nil
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
	env := envOut{Base: base, Commit: r.rc.Commit}
	if spec.Index, err = r.index(ctx); err != nil {
		return err
	}
	if spec.Index != nil {
		env.IndexURL, env.ExtraIndexURL = spec.Index.URLs[0], spec.Index.URLs[1:]
		if !spec.Index.Before.IsZero() {
			env.ExcludeNewer = spec.Index.Before.Format(time.RFC3339)
		}
		if env.Lock, err = r.lock(ctx, spec, log); err != nil {
			return err
		}
		spec.Lock = env.Lock
	}
	ref, err := images.EnvRef(ctx, spec)
	if err != nil {
		return err
	}
	env.Image = ref
	if r.needStored {
		// Only the reference is needed; the image itself is checked by
		// the stage that uses it.
		r.env = env
		return nil
	}
	if ok, err := r.o.Engine.ImageExists(ctx, ref); err == nil && ok {
		r.reused = true
	}
	r.logf("environment image %s", ref)
	if _, err = images.EnsureEnv(ctx, r.o.Engine, spec, log); err != nil {
		return fmt.Errorf("the repository's environment (install log: %s): %w", r.w.file("env.log"), err)
	}
	if err := r.checkWins(ctx, ref); err != nil {
		return err
	}
	r.env = env
	return nil
}

// lock is the lock of a networked environment: stored in the work folder
// for the same inputs (a rerun gets the same environment), else resolved
// behind the gate now.
func (r *repoRun) lock(ctx context.Context, spec images.EnvSpec, log io.Writer) ([]pylock.Package, error) {
	unlocked, err := images.EnvRef(ctx, spec)
	if err != nil {
		return nil, err
	}
	d := digest("env-lock", recipe, unlocked, spec.Index.URLs, spec.Index.Before.Format(time.RFC3339))
	var out lockOut
	if ok, err := r.cached(d, &out, "lock"); err != nil || ok {
		return out.Lock, err
	}
	r.logf("resolving the environment behind the build gate to %s", strings.Join(spec.Index.URLs, ", "))
	out.Lock, out.Other, out.Notes, err = images.ResolveEnv(ctx, r.o.Engine, spec, log)
	for _, n := range out.Notes {
		r.logf("%s", n)
		fmt.Fprintln(log, "note: "+n)
	}
	if err != nil {
		return nil, fmt.Errorf("the repository's environment, resolved behind the build gate (install log: %s): %w", r.w.file("env.log"), err)
	}
	r.logf("locked %d packages from the index", len(out.Lock))
	return out.Lock, r.store(d, out, "lock")
}

// checkWins checks that the library the tests import is the repository's
// code in /testbed, not a copy of it elsewhere (the test stack's, or one
// a non-editable install put in site-packages): masking /testbed would
// not reach that one.
func (r *repoRun) checkWins(ctx context.Context, ref string) error {
	b, err := openBox(ctx, r.o.lease, ref, r.rc.Repository, r.lim, r.w.file("env.log"))
	if err != nil {
		return err
	}
	defer b.close()
	script := "import importlib, os, sys\nm = importlib.import_module(sys.argv[1])\n" +
		"f = getattr(m, '__file__', None) or next(iter(getattr(m, '__path__', [])), '')\nprint(os.path.realpath(f))\n"
	res, err := b.exec(ctx, repoDir, r.tout.Discovery, []string{"PYTHONDONTWRITEBYTECODE=1"}, "python3", "-c", script, r.rc.ImportName)
	if err != nil {
		return fmt.Errorf("importing %s: %w", r.rc.ImportName, err)
	}
	where := strings.TrimSpace(string(res.Stdout))
	switch {
	case res.ExitCode != 0:
		return fmt.Errorf("import %s fails in the environment (exit %d): %s", r.rc.ImportName, res.ExitCode, tail(res.Stdout, res.Stderr, 5))
	case !strings.HasPrefix(where, repoDir+"/"):
		return fmt.Errorf("import %s loads %s, not the repository's code under %s: install the repository in editable mode (pip install -e .) so that the tests import what the tasks change", r.rc.ImportName, where, repoDir)
	}
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
	b, err := openBox(ctx, r.o.lease, r.env.Image, r.rc.Repository, r.lim, r.w.file("discover.log"))
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
