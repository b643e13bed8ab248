package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/gate"
	"github.com/featbench/featbench/internal/pybase"
)

// baseRecipe is the version of the base image's recipe: bump it when
// EnsureBase changes what it puts in the image, so that images built
// before are not reused.
const baseRecipe = 1

// DefaultSuite and DefaultMirror are what an empty BaseSpec field means.
const (
	DefaultSuite  = "bookworm"
	DefaultMirror = "http://deb.debian.org/debian"
)

// basePackages are the Debian packages every base image has: the Python,
// pytest (with pytest-timeout for per-test timeouts) and pip that tests and
// installs need, and git and patch for applying patches.
var basePackages = []string{
	"ca-certificates",
	"git",
	"patch",
	"python3",
	"python3-pip",
	"python3-pytest",
	"python3-pytest-timeout",
	"python3-setuptools",
	"python3-wheel",
}

// BasePackages returns the Debian packages every base image has.
func BasePackages() []string { return slices.Clone(basePackages) }

// BaseSpec describes a base image.
type BaseSpec struct {
	// Python picks the Debian suite whose python3 the image has
	// (internal/pybase: "3.11" is bookworm's, "3.13" trixie's). Empty:
	// Suite, else DefaultSuite.
	Python   string
	Suite    string   // Debian suite; when Python is given, its suite or empty
	Packages []string // Debian packages beyond BasePackages
	// Mirror is the Debian mirror debootstrap downloads from (DefaultMirror
	// when empty). It is not part of the image's key: any mirror serves the
	// same packages.
	Mirror string
	// Prefix starts the image's name (DefaultPrefix when empty): eval's
	// image_prefix. It is not part of the key.
	Prefix string
}

// baseFiles are written into the root file system before it is imported:
// pip never reaches an index (there is no network) and may install into
// the system Python; git trusts every folder (the tree may belong to
// another user) and can commit without asking who commits.
var baseFiles = map[string]string{
	"etc/pip.conf": `[global]
no-index = true
disable-pip-version-check = true
no-cache-dir = true

[install]
break-system-packages = true
root-user-action = ignore
`,
	"etc/gitconfig": `[safe]
	directory = *
[user]
	name = FeatBench
	email = featbench@localhost
[init]
	defaultBranch = main
[commit]
	gpgSign = false
[advice]
	detachedHead = false
`,
}

// baseChanges configure the imported image.
var baseChanges = []string{
	"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"ENV LANG=C.UTF-8",
	"ENV PYTHONDONTWRITEBYTECODE=1",
	"WORKDIR /testbed",
	`CMD ["sleep", "infinity"]`,
}

var (
	suitePattern   = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	packagePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
)

// layerRecipe is the version of a packages layer's recipe (layerDockerfile).
const layerRecipe = 1

// recipe returns the spec's suite, its base image's package list and the
// text its key hashes, and the packages it adds in a layer on that image
// (sorted, without those the base has).
func (spec BaseSpec) recipe() (suite string, packages, extra []string, text string, err error) {
	suite = spec.Suite
	if spec.Python != "" {
		b, ok := pybase.Lookup(spec.Python)
		switch {
		case !ok:
			return "", nil, nil, "", fmt.Errorf("base image: no base image has Python %q; they have Python %s", spec.Python, pybase.Supported())
		case suite != "" && suite != b.Suite:
			return "", nil, nil, "", fmt.Errorf("base image: Python %s is Debian %s's, not %s's", spec.Python, b.Suite, suite)
		}
		suite = b.Suite
	}
	if suite == "" {
		suite = DefaultSuite
	}
	if !suitePattern.MatchString(suite) {
		return "", nil, nil, "", fmt.Errorf("base image: bad Debian suite %q", suite)
	}
	packages = BasePackages()
	slices.Sort(packages)
	for _, p := range spec.Packages {
		if !packagePattern.MatchString(p) {
			return "", nil, nil, "", fmt.Errorf("base image: bad Debian package name %q", p)
		}
		if !slices.Contains(packages, p) {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	extra = slices.Compact(extra)
	var b strings.Builder
	fmt.Fprintf(&b, "featbench base image\nrecipe %d\nsuite %s\npackages %s\n", baseRecipe, suite, strings.Join(packages, " "))
	for _, name := range slices.Sorted(maps.Keys(baseFiles)) {
		fmt.Fprintf(&b, "file %s\n%s\n", name, baseFiles[name])
	}
	for _, c := range baseChanges {
		fmt.Fprintf(&b, "change %s\n", c)
	}
	return suite, packages, extra, b.String(), nil
}

// BaseRef returns the reference the base image of spec has (or will have
// once EnsureBase built it).
func BaseRef(spec BaseSpec) (string, error) {
	_, _, extra, text, err := spec.recipe()
	if err != nil {
		return "", err
	}
	ref := spec.prefix() + "/base:" + hashKey(text)
	if len(extra) > 0 {
		ref, _ = layerRef(spec, ref, extra)
	}
	return ref, nil
}

// layerRef is the reference and key of the layer adding extra to the
// base image base.
func layerRef(spec BaseSpec, base string, extra []string) (ref, key string) {
	key = hashKey(fmt.Sprintf("featbench packages layer\nrecipe %d\nbase %s\npackages %s\n", layerRecipe, base, strings.Join(extra, " ")))
	return spec.prefix() + "/base:" + key, key
}

// prefix is the name the images' references start with.
func (spec BaseSpec) prefix() string { return prefixOr(spec.Prefix) }

// DefaultPrefix starts the images' names when a spec gives no Prefix.
const DefaultPrefix = "featbench"

func prefixOr(p string) string {
	if p == "" {
		return DefaultPrefix
	}
	return p
}

// EnsureBase returns the reference of the base image of spec, building it
// first if the engine does not have it. The image of a suite is built
// once, whatever the packages a repository adds: debootstrap (as root,
// with the network reaching spec.Mirror) into a temporary folder, imported
// (a minute, or ten under load; processes building the same image wait
// for one another). spec.Packages beyond BasePackages are then a layer on
// that image, installed by apt from spec.Mirror behind a build gate
// (internal/gate) that reaches the mirror and nothing else, so a new
// package list costs an apt install, not a debootstrap. Progress lines go
// to log (may be nil).
func EnsureBase(ctx context.Context, eng Engine, spec BaseSpec, log io.Writer) (string, error) {
	suite, packages, extra, text, err := spec.recipe()
	if err != nil {
		return "", err
	}
	base, err := ensureSuite(ctx, eng, spec, suite, packages, text, log)
	if err != nil || len(extra) == 0 {
		return base, err
	}
	return ensureLayer(ctx, eng, spec, suite, base, extra, log)
}

// ensureSuite is EnsureBase's image of the suite alone.
func ensureSuite(ctx context.Context, eng Engine, spec BaseSpec, suite string, packages []string, text string, log io.Writer) (string, error) {
	key := hashKey(text)
	ref := spec.prefix() + "/base:" + key
	if ok, err := eng.ImageExists(ctx, ref); err != nil {
		return "", fmt.Errorf("base image: %w", err)
	} else if ok {
		return ref, nil
	}

	unlock, err := lockFile(ctx, filepath.Join(os.TempDir(), "featbench-base-"+key+".lock"))
	if err != nil {
		return "", fmt.Errorf("base image %s: %w", ref, err)
	}
	defer unlock()
	// Another process may have built it while this one waited.
	if ok, err := eng.ImageExists(ctx, ref); err != nil {
		return "", fmt.Errorf("base image: %w", err)
	} else if ok {
		return ref, nil
	}

	start := time.Now()
	mirror := spec.Mirror
	if mirror == "" {
		mirror = DefaultMirror
	}
	tmp, err := os.MkdirTemp("", "featbench-base-")
	if err != nil {
		return "", fmt.Errorf("base image %s: %w", ref, err)
	}
	defer func() {
		// debootstrap mounts /proc and /sys in the root; removing the
		// folder with them still mounted would reach into the host's.
		if err := unmountUnder(tmp); err != nil {
			logf(log, "warning: %v; leaving %s in place", err, tmp)
			return
		}
		_ = os.RemoveAll(tmp)
	}()
	root := filepath.Join(tmp, "root")

	logf(log, "building %s: debootstrap %s from %s with %s", ref, suite, mirror, strings.Join(packages, ", "))
	if err := debootstrap(ctx, suite, packages, root, mirror, log); err != nil {
		return "", fmt.Errorf("base image %s: %w", ref, err)
	}
	if err := prepareRoot(root); err != nil {
		return "", fmt.Errorf("base image %s: %w", ref, err)
	}
	logf(log, "importing %s (debootstrap took %s)", ref, time.Since(start).Round(time.Second))
	labels := map[string]string{LabelProject: "1", LabelKind: KindBase, LabelKey: key}
	if err := eng.ImportRootfs(ctx, root, ref, labels, baseChanges); err != nil {
		return "", fmt.Errorf("base image: %w", err)
	}
	logf(log, "built %s in %s", ref, time.Since(start).Round(time.Second))
	return ref, nil
}

// debootstrap runs debootstrap, its output going to log; on failure the
// error ends with the end of that output.
func debootstrap(ctx context.Context, suite string, packages []string, root, mirror string, log io.Writer) error {
	if os.Geteuid() != 0 {
		return errors.New("building the base image runs debootstrap, which needs root")
	}
	bin, err := exec.LookPath("debootstrap")
	if err != nil {
		// Not in $PATH for users without sbin in it.
		if _, serr := os.Stat("/usr/sbin/debootstrap"); serr != nil {
			return errors.New("debootstrap not found: apt-get install debootstrap (scripts/provision-docker.sh installs it)")
		}
		bin = "/usr/sbin/debootstrap"
	}
	cmd := exec.CommandContext(ctx, bin, "--variant=minbase", "--include="+strings.Join(packages, ","), suite, root, mirror)
	out := &lastBytes{max: 8 << 10}
	var w io.Writer = out
	if log != nil {
		w = io.MultiWriter(out, log)
	}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Env = append(os.Environ(), "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive",
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	killGroup := stopAsGroup(cmd)
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			killGroup()
			return fmt.Errorf("debootstrap: %w", ctx.Err())
		}
		return fmt.Errorf("debootstrap %s: %w\n--- end of its output ---\n%s", suite, err, strings.TrimSpace(string(out.buf)))
	}
	return nil
}

// prepareRoot writes baseFiles and trims what the image does not need.
func prepareRoot(root string) error {
	for _, name := range slices.Sorted(maps.Keys(baseFiles)) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(baseFiles[name]), 0o644); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "testbed"), 0o755); err != nil {
		return err
	}
	// PEP 668's marker would make pip refuse to install into the system
	// Python; the image is the environment, there is no other to protect.
	markers, _ := filepath.Glob(filepath.Join(root, "usr/lib/python3*/EXTERNALLY-MANAGED"))
	for _, m := range markers {
		if err := os.Remove(m); err != nil {
			return err
		}
	}
	// Downloaded packages and package lists: a third of the folder, and
	// useless without network.
	for _, pattern := range []string{"var/cache/apt/archives/*.deb", "var/cache/apt/*.bin", "var/lib/apt/lists/*_*"} {
		paths, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, p := range paths {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// lastBytes keeps the last max bytes written to it.
type lastBytes struct {
	buf []byte
	max int
}

func (l *lastBytes) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - l.max; over > 0 {
		l.buf = append(l.buf[:0], l.buf[over:]...)
	}
	return len(p), nil
}

// ensureLayer returns the image adding extra to base with apt, building
// it if the engine does not have it.
func ensureLayer(ctx context.Context, eng Engine, spec BaseSpec, suite, base string, extra []string, log io.Writer) (string, error) {
	ref, key := layerRef(spec, base, extra)
	if ok, err := eng.ImageExists(ctx, ref); err != nil {
		return "", fmt.Errorf("base image: %w", err)
	} else if ok {
		return ref, nil
	}
	mirror := spec.Mirror
	if mirror == "" {
		mirror = DefaultMirror
	}
	u, err := url.Parse(mirror)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("base image: the Debian mirror %q is not an http(s) URL", mirror)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	start := time.Now()
	logf(log, "building %s: %s on %s, with apt from %s", ref, strings.Join(extra, ", "), base, mirror)
	g, err := gate.Open(ctx, eng, gate.Options{
		Image: base, Name: "featbench-base-layer", Labels: map[string]string{LabelProject: "1", LabelKind: "gate"},
		Forward: []string{host}, Log: log,
	})
	if err != nil {
		return "", fmt.Errorf("base image %s: %w", ref, err)
	}
	defer g.Close()
	labels := map[string]string{LabelProject: "1", LabelKind: KindLayer, LabelKey: key, LabelBase: base}
	bn := container.BuildNetwork{Mode: g.NetworkMode(), Args: map[string]string{
		"http_proxy": gate.ProxyURL(), "https_proxy": gate.ProxyURL(), "HTTP_PROXY": gate.ProxyURL(), "HTTPS_PROXY": gate.ProxyURL(),
	}}
	if err := eng.BuildNetworked(ctx, ref, layerDockerfile(base, suite, mirror, extra), nil, labels, bn, log); err != nil {
		_ = eng.RemoveImage(context.WithoutCancel(ctx), ref)
		return "", gate.Explain(fmt.Errorf("base image %s (%s on %s): %w", ref, strings.Join(extra, ", "), base, err), g.Problems())
	}
	logf(log, "built %s in %s", ref, time.Since(start).Round(time.Second))
	return ref, nil
}

// layerDockerfile installs packages with apt from mirror, and leaves no
// package lists or downloads behind (useless without network).
func layerDockerfile(base, suite, mirror string, packages []string) string {
	script := "set -e\n" +
		"echo 'deb " + mirror + " " + suite + " main' > /etc/apt/sources.list\n" +
		"rm -f /etc/apt/sources.list.d/*\n" +
		"export DEBIAN_FRONTEND=noninteractive\n" +
		"apt-get -o Acquire::Retries=2 update -q\n" +
		"apt-get install -y -q --no-install-recommends " + strings.Join(packages, " ") + "\n" +
		"apt-get clean\n" +
		"rm -rf /var/lib/apt/lists/*_* /var/cache/apt/*.bin\n" +
		// A reinstalled python3 brings PEP 668's marker back (see prepareRoot).
		"rm -f /usr/lib/python3*/EXTERNALLY-MANAGED\n"
	cmd, _ := json.Marshal([]string{"/bin/bash", "-o", "pipefail", "-c", script})
	return "FROM " + base + "\nRUN " + string(cmd) + "\n"
}
