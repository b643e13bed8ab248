package infer

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/relay"
)

// Paths in an agent's image and container.
const (
	agentHome = "/opt/featbench/agent" // the agent's install folder, with node_modules
	agentUID  = "1000"                 // the agent's user, "agent", made in the layer
	agentUser = agentUID + ":" + agentUID
)

// imageRecipe is the version of the agent layer's recipe: bump it when
// the Dockerfile changes.
const imageRecipe = 2

// Labels of the agent images.
const (
	LabelProject = "featbench.project"
	LabelKind    = "featbench.kind"
	LabelKey     = "featbench.key"
	LabelAgent   = "featbench.agent"
	LabelBase    = "featbench.base"
	KindAgent    = "agent"
)

// Builder is what building an agent's image needs of the engine.
type Builder interface {
	ImageExists(ctx context.Context, ref string) (bool, error)
	BuildDirs(ctx context.Context, ref, dockerfile string, files []container.File, dirs []container.Dir, labels map[string]string, log io.Writer) error
}

var _ Builder = (*container.Engine)(nil)

// ImageSpec is an agent's image: a layer on an environment image.
type ImageSpec struct {
	Agent string // the agent's name
	// Install is the agent's install folder on this machine, or "" for an
	// agent that needs nothing installed.
	Install string
	Env     string // the environment image the layer goes on
	Prefix  string // starts the image's name: eval's image_prefix
	// Cache is where fetched packages are kept, by the content of their
	// lockfile (.cache/agents).
	Cache string
	// ProgressEvery is how often the log hears how far fetching the
	// packages got (0: never).
	ProgressEvery time.Duration
}

// EnsureImage returns the reference of the agent's image on spec.Env,
// building it first if the engine does not have it. Packages of an
// install folder with package.json and package-lock.json are fetched on
// this machine with `npm ci --ignore-scripts` into the cache (once per
// lockfile), and their install scripts run in the layer's build, where
// there is no network. The image is named
// <prefix>/agent-<name>:<key>, the key hashing the environment image,
// the install folder's files, the lockfile and the recipe.
func EnsureImage(ctx context.Context, eng Builder, spec ImageSpec, log io.Writer) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "featbench agent image\nrecipe %d\nenv %s\nrelay %x\n", imageRecipe, spec.Env, sha256.Sum256(relay.Source()))
	var files []container.File
	var dirs []container.Dir
	npm := false
	if spec.Install != "" {
		var err error
		files, err = readInstall(spec.Install)
		if err == nil && len(files) == 0 {
			err = fmt.Errorf("the install folder %s is empty", spec.Install)
		}
		if err != nil {
			return "", fmt.Errorf("agent %s: %w", spec.Agent, err)
		}
		for _, f := range files {
			sum := sha256.Sum256(f.Data)
			fmt.Fprintf(h, "file %s %o %x\n", f.Path, f.Mode, sum)
			npm = npm || f.Path == "package-lock.json"
		}
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	ref := prefixOr(spec.Prefix) + "/agent-" + spec.Agent + ":" + key
	if ok, err := eng.ImageExists(ctx, ref); err != nil {
		return "", fmt.Errorf("agent image %s: %w", ref, err)
	} else if ok {
		return ref, nil
	}
	if npm {
		modules, err := fetch(ctx, spec, files, log)
		if err != nil {
			return "", fmt.Errorf("agent %s: %w", spec.Agent, err)
		}
		dirs = append(dirs, container.Dir{Path: "agent/node_modules", Host: modules})
	}
	for i := range files {
		files[i].Path = "agent/" + files[i].Path
	}
	files = append(files, container.File{Path: "bin/" + path.Base(relay.Path), Mode: 0o644, Data: relay.Source()})
	start := time.Now()
	logf(log, "building %s on %s", ref, spec.Env)
	labels := map[string]string{LabelProject: "1", LabelKind: KindAgent, LabelKey: key, LabelAgent: spec.Agent, LabelBase: spec.Env}
	if err := eng.BuildDirs(ctx, ref, dockerfile(spec.Env, npm), files, dirs, labels, log); err != nil {
		return "", fmt.Errorf("agent %s: %w", spec.Agent, err)
	}
	logf(log, "built %s in %s", ref, time.Since(start).Round(100*time.Millisecond))
	return ref, nil
}

func prefixOr(p string) string {
	if p == "" {
		return "featbench"
	}
	return p
}

// dockerfile is the agent layer: the install folder and the relay,
// the agent's user, and (npm) the packages' install scripts, run offline.
func dockerfile(env string, npm bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\n", env)
	b.WriteString("COPY agent/ " + agentHome + "/\n")
	b.WriteString("COPY bin/ /opt/featbench/bin/\n")
	run := "groupadd -g " + agentUID + " agent && useradd -u " + agentUID + " -g " + agentUID + " -m -d /home/agent -s /bin/bash agent" +
		" && chown -R root:root /opt/featbench && chmod -R a+rX,go-w /opt/featbench"
	if npm {
		// The packages' own install scripts (a native binary put in
		// place, say) run here, without network, not on the host: with
		// the npm of the lockfile (an agent whose packages have scripts
		// lists npm among its dependencies).
		run += " && cd " + agentHome + " && if [ -e node_modules/.bin/npm ]; then PATH=" + agentHome +
			"/node_modules/.bin:$PATH npm rebuild --offline --no-audit --no-fund --foreground-scripts; fi"
	}
	fmt.Fprintf(&b, "RUN [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\", %q]\n", run)
	// The environment's PATH after the agent's programs: its Python is the
	// repository's virtual environment (internal/images.VenvDir).
	fmt.Fprintf(&b, "ENV PATH=%s/node_modules/.bin:$PATH\n", agentHome)
	return b.String()
}

// readInstall reads an install folder's files (without node_modules).
func readInstall(dir string) ([]container.File, error) {
	var files []container.File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		files = append(files, container.File{Path: filepath.ToSlash(rel), Mode: mode, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the install folder: %w", err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// fetch installs the lockfile's packages on this machine, without running
// their scripts, into the cache folder of the lockfile's content, and
// returns its node_modules.
func fetch(ctx context.Context, spec ImageSpec, files []container.File, log io.Writer) (string, error) {
	h := sha256.New()
	var pkg, lock []byte
	for _, f := range files {
		switch f.Path {
		case "package.json":
			pkg = f.Data
		case "package-lock.json":
			lock = f.Data
		}
	}
	if pkg == nil {
		return "", errors.New("the install folder has package-lock.json but no package.json")
	}
	fmt.Fprintf(h, "package.json %x\npackage-lock.json %x\n", sha256.Sum256(pkg), sha256.Sum256(lock))
	dir := filepath.Join(spec.Cache, "npm-"+hex.EncodeToString(h.Sum(nil))[:16])
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return modules, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", errors.New("npm not found: the agent's packages are fetched with npm on this machine (apt-get install npm; scripts/provision-docker.sh installs it)")
	}
	if err := os.MkdirAll(spec.Cache, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(spec.Cache, ".npm-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for name, data := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return "", err
		}
	}
	logf(log, "fetching %s's packages with npm ci (lockfile %s)", spec.Agent, filepath.Join(spec.Install, "package-lock.json"))
	npmRun := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, npm, append(args, "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")...)
		cmd.Dir = tmp
		return cmd.CombinedOutput()
	}
	stopWatch := watchFetch(filepath.Join(tmp, "node_modules"), spec.ProgressEvery, func(pkgs int, size int64, elapsed time.Duration) {
		logf(log, "fetching %s's packages: %d so far, %s, in %s", spec.Agent, pkgs, megabytes(size), elapsed.Round(time.Second))
	})
	defer stopWatch()
	out, err := npmRun("ci")
	if err != nil && strings.Contains(string(out), "in sync") {
		// npm writes no entry for a platform package of an optional
		// dependency that the registry lacks, then calls its own lockfile
		// out of sync: npm install still installs what the lockfile pins
		// (versions and integrity hashes), without changing it.
		logf(log, "npm ci refused the lockfile of %s (an optional package the registry lacks); installing what it pins with npm install --no-save", spec.Agent)
		out, err = npmRun("install", "--no-save")
	}
	if err != nil {
		return "", fmt.Errorf("npm ci of %s: %w: %s", spec.Install, err, lastLines(string(out), 15))
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return modules, nil // another process fetched them meanwhile
	}
	_ = os.RemoveAll(dir) // an incomplete earlier try
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, ".complete")); serr == nil {
			return modules, nil
		}
		return "", fmt.Errorf("caching the packages: %w", err)
	}
	return modules, nil
}

// watchFetch tells report, every every (when positive) until stop is
// called, how many packages the node_modules folder being fetched holds
// and their size so far: npm ci is silent for minutes on a large agent.
func watchFetch(modules string, every time.Duration, report func(pkgs int, size int64, elapsed time.Duration)) (stop func()) {
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(ended)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				pkgs, size := fetched(modules)
				report(pkgs, size, time.Since(start))
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// fetched counts the packages of a node_modules folder (each folder with
// a package.json, nested ones too) and the bytes of its files.
func fetched(modules string) (pkgs int, size int64) {
	_ = filepath.WalkDir(modules, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // npm moves things while it works
		}
		if d.Type().IsRegular() {
			if d.Name() == "package.json" && filepath.Base(filepath.Dir(filepath.Dir(p))) == "node_modules" ||
				d.Name() == "package.json" && filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(p)))) == "node_modules" &&
					strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(p))), "@") {
				pkgs++
			}
			if info, err := d.Info(); err == nil {
				size += info.Size()
			}
		}
		return nil
	})
	return pkgs, size
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func logf(log io.Writer, format string, args ...any) {
	if log != nil {
		fmt.Fprintf(log, "infer: "+format+"\n", args...)
	}
}
