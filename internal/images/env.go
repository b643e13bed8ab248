package images

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/gate"
	"github.com/featbench/featbench/internal/pylock"
)

// envRecipe is the version of the environment image's recipe (the
// Dockerfile envDockerfile writes): bump it when that changes.
const envRecipe = 2

// Paths in an environment image.
const (
	// VenvDir is the repository's own Python environment: a virtual
	// environment that sees the base image's packages (the test stack),
	// first on PATH. The repository is installed there, so that it wins
	// over a copy of itself the test stack brings (tomli, pluggy,
	// packaging ...), which pip could not uninstall from Debian's folder.
	VenvDir = "/opt/featbench/venv"
	// FreezeFile is `pip freeze --local` of VenvDir once the install steps
	// ran: what they installed there.
	FreezeFile = "/opt/featbench/freeze.txt"
	// lockReqFile and pinsFile hold a locked environment's requirements (with
	// hashes) and its name==version pins.
	lockReqFile = "/opt/featbench/lock.txt"
	pinsFile    = "/opt/featbench/lock-pins.txt"
)

// venvPath is PATH in an environment image: the venv first.
const venvPath = VenvDir + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

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
	Base       string // the base image, as EnsureBase or EnsurePulled returns it
	// RegistryBase says Base came from a registry (EnsurePulled): the
	// image then gets what a Debian base has built in (git's and Python's
	// settings, baseFiles and baseChanges), and is checked for what the
	// harness runs (bash, git, setpriv, Python with pytest), with an
	// error naming what is missing.
	RegistryBase bool
	Prefix       string // starts the image's name; DefaultPrefix when empty
	// Index, when set, lets PreInstall and Install reach package indexes
	// through a build gate (internal/gate), and nothing else; the install
	// then gets what Lock pins. Where the files come from is not part of
	// the image's key: the lock is.
	Index *Index
	// Lock pins what the install steps get from the index (ResolveEnv
	// makes it): the packages with hashes are installed first, with pip's
	// --require-hashes, through a gate that refuses any other file of
	// theirs; after Install the environment's `pip freeze` must name
	// exactly the lock's packages and versions, else the build fails.
	Lock []pylock.Package
	// Patches are diffs applied in /testbed, in order, after the source is
	// copied and before the commands run: a history-based instance's
	// environment is its base commit with its test patch and its patch
	// applied (the complete project the evaluation harness reverses them
	// from). Their files are removed from the image's file system once
	// applied.
	Patches []string
}

// Index is where a networked environment's packages come from.
type Index struct {
	// URLs are the package indexes' simple API URLs (PEP 503): the first
	// is pip's index URL, the others extra index URLs.
	URLs []string
	// Before, when not zero, hides files an index says were uploaded
	// after it (PEP 700), when resolving.
	Before time.Time
	// Timeout bounds each wait on an index (gate.DefaultTimeout when 0).
	Timeout time.Duration
	// Labels go on the gate's container.
	Labels map[string]string

	onServed func([]gate.Download, []string) // ResolveEnv's: what the gate served, and its notes
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
// commands, the lock and the recipe, so a changed input makes a new image.
//
// The image is spec.Base with a virtual environment of its own (VenvDir,
// first on PATH), the source in /testbed, the commands run in it, `pip
// freeze` of the environment written to FreezeFile, and all of /testbed
// then committed in a fresh git repository (build leftovers ignored by
// .gitignore included, so that `git clean -fdx` keeps what the install
// made). A failing command fails the build with an error naming it and
// showing the end of its output, and no image is tagged. With spec.Index
// the commands reach the indexes through a build gate and get what
// spec.Lock pins (see EnvSpec). Progress and the build's output go to log
// (may be nil).
//
// Two concurrent calls for an image not built yet both build it (the
// result is the same); a harness builds its images before starting
// workers.
func EnsureEnv(ctx context.Context, eng Engine, spec EnvSpec, log io.Writer) (string, error) {
	if spec.Base == "" {
		return "", fmt.Errorf("environment image for %s: no base image", spec.Name)
	}
	if msgs := pylock.Check(spec.Lock); len(msgs) > 0 {
		return "", fmt.Errorf("environment image for %s: the lock: %s", spec.Name, strings.Join(msgs, "; "))
	}
	if len(spec.Lock) > 0 && spec.Index == nil {
		return "", fmt.Errorf("environment image for %s: a lock without a package index to install it from", spec.Name)
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
	if err := buildEnv(ctx, eng, spec, files, ref, key, false, log); err != nil {
		return "", err
	}
	return ref, nil
}

// ResolveEnv builds spec's environment behind a build gate to spec.Index
// without a lock (whatever the install steps ask for, of files uploaded
// before spec.Index.Before where the index says when), and returns its
// lock: the packages `pip freeze` names in the environment, each with the
// sha256 of the file the gate served for it (none when it came from
// elsewhere), and the freeze's other lines (the repository itself,
// editable installs). notes are what the gate could not do as asked (an
// index without upload times). The image is built under a temporary tag
// and removed.
func ResolveEnv(ctx context.Context, eng Engine, spec EnvSpec, log io.Writer) (lock []pylock.Package, other, notes []string, err error) {
	if spec.Base == "" || spec.Index == nil {
		return nil, nil, nil, fmt.Errorf("resolving the environment of %s: no base image or no package index", spec.Name)
	}
	spec.Lock = nil
	files, sourceKey, err := loadSource(ctx, spec.Source)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("environment image for %s: %w", spec.Name, err)
	}
	ref, key := envRef(spec, sourceKey)
	ref = ref[:strings.LastIndexByte(ref, ':')] + ":resolve-" + randomSuffix()
	var served []gate.Download
	idx := *spec.Index
	idx.onServed = func(d []gate.Download, n []string) { served, notes = d, n }
	spec.Index = &idx
	if err := buildEnv(ctx, eng, spec, files, ref, key, true, log); err != nil {
		return nil, nil, notes, err
	}
	defer func() {
		if rerr := eng.RemoveImage(context.WithoutCancel(ctx), ref); rerr != nil && err == nil {
			err = rerr
		}
	}()
	text, err := readImageFile(ctx, eng, ref, FreezeFile)
	if err != nil {
		return nil, nil, notes, fmt.Errorf("resolving the environment of %s: %w", spec.Name, err)
	}
	freeze, err := pylock.ParseFreeze(text)
	if err != nil {
		return nil, nil, notes, fmt.Errorf("resolving the environment of %s: %w", spec.Name, err)
	}
	hashes := map[string][]string{}
	for _, d := range served {
		k := d.Project + "==" + strings.ToLower(d.Version)
		if h := "sha256:" + d.SHA256; !slices.Contains(hashes[k], h) {
			hashes[k] = append(hashes[k], h)
		}
	}
	for _, p := range freeze.Pinned {
		p.Hashes = hashes[p.Name+"=="+strings.ToLower(p.Version)]
		slices.Sort(p.Hashes)
		lock = append(lock, p)
	}
	if lock == nil {
		lock = []pylock.Package{}
	}
	return lock, freeze.Other, notes, nil
}

// buildEnv builds the environment image ref of spec, behind a gate when
// spec.Index says so (resolve: without a lock to check).
func buildEnv(ctx context.Context, eng Engine, spec EnvSpec, files []container.File, ref, key string, resolve bool, log io.Writer) error {
	if ok, err := eng.ImageExists(ctx, spec.Base); err != nil {
		return fmt.Errorf("environment image for %s: %w", spec.Name, err)
	} else if !ok {
		return fmt.Errorf("environment image for %s: base image %s not found (EnsureBase builds it)", spec.Name, spec.Base)
	}
	start := time.Now()
	logf(log, "building %s: %d source files on %s", ref, len(files), spec.Base)
	for i := range files {
		files[i].Path = "src/" + files[i].Path
	}
	if spec.RegistryBase {
		files = append(files, container.File{Path: "featbench/gitconfig", Mode: 0o644, Data: []byte(baseFiles["etc/gitconfig"])})
	}
	for i, p := range spec.Patches {
		files = append(files, container.File{Path: fmt.Sprintf("patches/%d.diff", i), Mode: 0o644, Data: []byte(p)})
	}
	labels := map[string]string{
		LabelProject: "1", LabelKind: KindEnv, LabelKey: key,
		LabelRepo: spec.Name, LabelBase: spec.Base,
	}
	if spec.Index == nil {
		if err := eng.Build(ctx, ref, envDockerfile(spec, false), files, labels, log); err != nil {
			return fmt.Errorf("environment image for %s: %w", spec.Name, err)
		}
		logf(log, "built %s in %s", ref, time.Since(start).Round(100*time.Millisecond))
		return nil
	}
	if !resolve {
		files = append(files,
			container.File{Path: "featbench/" + path.Base(lockReqFile), Mode: 0o644, Data: []byte(pylock.Requirements(spec.Lock))},
			container.File{Path: "featbench/" + path.Base(pinsFile), Mode: 0o644, Data: []byte(pins(spec.Lock))})
	}
	var gateLog io.Writer = io.Discard
	if log != nil {
		gateLog = log
	}
	gl := map[string]string{LabelProject: "1", LabelKind: "gate"}
	maps.Copy(gl, spec.Index.Labels)
	g, err := gate.Open(ctx, eng, gate.Options{
		Image: spec.Base, Name: "featbench-env-" + sanitizeName(spec.Name), Labels: gl,
		Indexes: spec.Index.URLs, Before: spec.Index.Before, Lock: spec.Lock, Timeout: spec.Index.Timeout, Log: gateLog,
	})
	if err != nil {
		return fmt.Errorf("environment image for %s: %w", spec.Name, err)
	}
	defer g.Close()
	net := container.BuildNetwork{Mode: g.NetworkMode(), Args: pipArgs(len(spec.Index.URLs), spec.Index.Timeout)}
	err = eng.BuildNetworked(ctx, ref, envDockerfile(spec, !resolve), files, labels, net, log)
	if spec.Index.onServed != nil {
		spec.Index.onServed(g.Downloads(), g.Notes())
	}
	if ferr := g.Failure(); ferr != nil && err != nil {
		err = errors.Join(err, ferr)
	}
	if err != nil {
		// The engine tags nothing when a step fails; a build cut short
		// between its last step and its tag is removed here.
		_ = eng.RemoveImage(context.WithoutCancel(ctx), ref)
		return gate.Explain(fmt.Errorf("environment image for %s: %w", spec.Name, err), g.Problems())
	}
	logf(log, "built %s in %s (behind a build gate to %s)", ref, time.Since(start).Round(100*time.Millisecond), strings.Join(spec.Index.URLs, ", "))
	return nil
}

// pipArgs point pip at the gate's indexes, over the base image's
// no-index, for the build's steps; anything else that honours the proxy
// variables reaches the gate too, and is refused there with a message
// naming what the build may reach.
func pipArgs(indexes int, timeout time.Duration) map[string]string {
	if timeout <= 0 {
		timeout = gate.DefaultTimeout
	}
	extra := make([]string, 0, indexes)
	for i := 1; i < indexes; i++ {
		extra = append(extra, gate.IndexURL(i))
	}
	return map[string]string{
		"PIP_NO_INDEX":        "0",
		"PIP_INDEX_URL":       gate.IndexURL(0),
		"PIP_EXTRA_INDEX_URL": strings.Join(extra, " "),
		// The gate answers a stalled index with 504 after its own
		// timeout; pip must wait for that answer.
		"PIP_TIMEOUT": strconv.Itoa(int(timeout.Seconds()) + 30),
		"PIP_RETRIES": "1",
		"http_proxy":  gate.ProxyURL(), "https_proxy": gate.ProxyURL(),
		"HTTP_PROXY": gate.ProxyURL(), "HTTPS_PROXY": gate.ProxyURL(),
		"no_proxy": "127.0.0.1,localhost", "NO_PROXY": "127.0.0.1,localhost",
	}
}

// pins is a lock's name==version lines, which the freeze is checked
// against.
func pins(lock []pylock.Package) string {
	var b strings.Builder
	for _, p := range lock {
		b.WriteString(p.Name + "==" + p.Version + "\n")
	}
	return b.String()
}

// readImageFile reads a file of an image, from a container of it without
// network.
func readImageFile(ctx context.Context, eng Engine, ref, file string) (string, error) {
	c, err := eng.Start(ctx, container.Spec{Image: ref, Name: "featbench-read", Labels: map[string]string{LabelProject: "1"},
		WorkDir: "/", Limits: container.Limits{Memory: 256 << 20, Pids: 64}})
	if err != nil {
		return "", err
	}
	defer c.Remove()
	res, err := c.Exec(ctx, []string{"cat", "--", file}, container.ExecOptions{Timeout: time.Minute, MaxOutput: 8 << 20})
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return "", fmt.Errorf("reading %s: %s", file, strings.TrimSpace(string(res.Stderr)))
	}
	return string(res.Stdout), nil
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
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
	if spec.Index != nil {
		lock := []byte("[]") // no lock and an empty one: the same image
		if len(spec.Lock) > 0 {
			lock, _ = json.Marshal(spec.Lock)
		}
		text += fmt.Sprintf("network build\nlock %s\n", lock)
	}
	if spec.RegistryBase {
		// Only then: the keys of images on Debian bases stay as they were.
		text += "registry base\n" + registryPreamble + registryCheck
	}
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
// runs as written, under bash with pipefail. locked adds the lock's steps.
func envDockerfile(spec EnvSpec, locked bool) string {
	var b strings.Builder
	run := func(argv ...string) {
		b.WriteString("RUN ")
		enc := json.NewEncoder(&b) // ends the line
		enc.SetEscapeHTML(false)   // keep && readable in the build's output
		_ = enc.Encode(argv)
	}
	fmt.Fprintf(&b, "FROM %s\n", spec.Base)
	if spec.RegistryBase {
		// What a Debian base has built in; the image's own user may be
		// anyone, the harness's steps are root's.
		b.WriteString("USER root\n")
		for _, c := range baseChanges {
			if !strings.HasPrefix(c, "CMD ") && !strings.HasPrefix(c, "ENV PATH=") {
				b.WriteString(c + "\n")
			}
		}
		b.WriteString("COPY featbench/gitconfig /etc/gitconfig\n")
		run("/bin/sh", "-c", registryPreamble)
	}
	sh := func(cmd string) { run("/bin/bash", "-o", "pipefail", "-c", cmd) }
	// The environment's own pip: the base image's, run by the venv's
	// Python, so that it installs into the venv.
	sh(venvScript)
	fmt.Fprintf(&b, "ENV VIRTUAL_ENV=%s PATH=%s\n", VenvDir, venvPath)
	if spec.Index != nil {
		for _, k := range slices.Sorted(maps.Keys(pipArgs(1, 0))) {
			if !strings.Contains(strings.ToLower(k), "proxy") { // Docker's own
				fmt.Fprintf(&b, "ARG %s\n", k)
			}
		}
	}
	b.WriteString("COPY src/ /testbed/\nWORKDIR /testbed\n")
	if len(spec.Patches) > 0 {
		b.WriteString("COPY patches/ /featbench-patches/\n")
		cmd := "set -e"
		for i := range spec.Patches {
			cmd += fmt.Sprintf("; git apply --whitespace=nowarn /featbench-patches/%d.diff", i)
		}
		sh(cmd + "; rm -rf /featbench-patches")
	}
	if locked {
		b.WriteString("COPY featbench/lock.txt featbench/lock-pins.txt /opt/featbench/\n")
	}
	for _, cmd := range spec.PreInstall {
		sh(cmd)
	}
	if locked && pylock.Hashed(spec.Lock) {
		sh("python3 -m pip install --no-deps --require-hashes --no-compile -r " + lockReqFile)
	}
	for _, cmd := range spec.Install {
		sh(cmd)
	}
	sh("python3 -m pip freeze --local > " + FreezeFile)
	if locked {
		sh("python3 -I -c " + shQuote(lockCheck) + " " + pinsFile + " " + FreezeFile)
	}
	if spec.RegistryBase {
		run("/bin/sh", "-c", registryCheck)
	}
	sh("git init -q && git add -A -f && git commit -q --no-verify -m 'featbench environment'")
	return b.String()
}

// venvScript makes VenvDir, seeing the base image's packages, with pip
// commands that run the base image's pip under the venv's Python (the
// base has no ensurepip to give the venv a pip of its own).
const venvScript = `python3 -m venv --without-pip --system-site-packages ` + VenvDir + ` && v=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])') && for p in pip pip3 pip$v; do printf '#!` + VenvDir + `/bin/python3\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n' > ` + VenvDir + `/bin/$p && chmod 755 ` + VenvDir + `/bin/$p; done`

// lockCheck compares the pins (argv[1]) with pip freeze (argv[2]) by
// normalized name and version, and fails naming every difference.
const lockCheck = `import re, sys
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
def read(p):
    out = {}
    for line in open(p):
        line = line.strip()
        if not line or line.startswith(("#", "-")) or " @ " in line or "==" not in line:
            continue
        n, v = line.split("==", 1)
        out[norm(n.strip())] = v.strip()
    return out
want, got = read(sys.argv[1]), read(sys.argv[2])
diff = ["%s: %s in the lock, %s" % (n, v, "not installed" if n not in got else got[n] + " installed") for n, v in sorted(want.items()) if got.get(n) != v]
diff += ["%s: %s installed, not in the lock" % (n, v) for n, v in sorted(got.items()) if n not in want]
if diff:
    print("the environment differs from the dataset's lock:\n  " + "\n  ".join(diff), file=sys.stderr)
    sys.exit(1)
`

// shQuote quotes s for bash.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// registryPreamble runs first on a registry base: the install commands
// run under bash, so it must be there.
const registryPreamble = `command -v bash >/dev/null 2>&1 || { echo "featbench: the base image has no bash, which the install commands run under" >&2; exit 1; }`

// registryCheck runs on a registry base after the install commands (which
// may install what is missing): the harness needs git (to reach and seal
// the starting point), setpriv (util-linux: to drop to the tests' user),
// and a python3 that imports pytest.
const registryCheck = `missing=""
for p in git setpriv python3; do command -v "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import pytest" >/dev/null 2>&1; then missing="$missing pytest"; fi
if [ -n "$missing" ]; then
	echo "featbench: the environment lacks what the harness needs:$missing (install it in the repository's pre_install, or use a base image that has it)" >&2
	exit 1
fi`

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
