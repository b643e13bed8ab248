// Package imagestest gives tests a Docker engine and the base images, each
// built once per test binary (about a minute the first time on a machine;
// later runs find it in the engine; scripts/provision-images.sh builds
// them all beforehand, as root, where tests do not run as root).
package imagestest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/pybase"
	"github.com/featbench/featbench/internal/testenv"
)

// Engine connects to the test's Docker engine (see testenv.DockerHost:
// skipped, or failed under FEATBENCH_REQUIRE_DOCKER=1, when there is none)
// and closes the connection when the test ends.
func Engine(t testing.TB) *container.Engine {
	t.Helper()
	host := testenv.DockerHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eng, err := container.Connect(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// baseBuild is one base image's EnsureBase call in this test binary.
type baseBuild struct {
	once     sync.Once
	ref      string
	log      bytes.Buffer
	err      error
	duration time.Duration
}

// bases holds the builds by Python. A test binary's state, like the
// images it stands for: one build per binary, whatever the tests.
var bases = struct {
	mu sync.Mutex
	by map[string]*baseBuild
}{by: map[string]*baseBuild{}}

func buildOf(python string) *baseBuild {
	bases.mu.Lock()
	defer bases.mu.Unlock()
	b := bases.by[python]
	if b == nil {
		b = &baseBuild{}
		bases.by[python] = b
	}
	return b
}

// Base returns an engine and the default base image (pybase.Default's
// Python), building the image the first time a test binary asks for it.
func Base(t testing.TB) (*container.Engine, string) {
	t.Helper()
	return BaseFor(t, pybase.Default)
}

// BaseFor returns an engine and the base image of a Python ("3.11",
// "3.13"), building the image the first time a test binary asks for it.
func BaseFor(t testing.TB, python string) (*container.Engine, string) {
	t.Helper()
	eng := Engine(t)
	b := buildOf(python)
	b.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		start := time.Now()
		b.ref, b.err = images.EnsureBase(ctx, eng, images.BaseSpec{Python: python}, &b.log)
		b.duration = time.Since(start)
	})
	if b.err != nil {
		t.Fatalf("base image of Python %s: %v\n%s", python, b.err, b.log.String())
	}
	bases.mu.Lock()
	defer bases.mu.Unlock()
	if b.log.Len() > 0 {
		// Built here: say how it went, once.
		t.Logf("base image of Python %s built in %s:\n%s", python, b.duration.Round(time.Millisecond), progressLines(b.log.String()))
		b.log.Reset()
	}
	return eng, b.ref
}

// BaseBuildTime is how long this test binary's EnsureBase call for the
// default base took (a fraction of a second when the image was already
// there).
func BaseBuildTime() time.Duration { return BaseBuildTimeFor(pybase.Default) }

// BaseBuildTimeFor is BaseBuildTime for a Python's base.
func BaseBuildTimeFor(python string) time.Duration { return buildOf(python).duration }

// progressLines keeps the lines EnsureBase wrote itself, not debootstrap's.
func progressLines(log string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(log, "\n") {
		if strings.HasPrefix(line, "images: ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// PushAs pushes the local image src to a registry as dst (a reference
// with the registry's host and a tag), with auth as the X-Registry-Auth
// value ("" for none), and removes the names dst and dst's digest from the
// engine again, so that taking either afterwards is a pull. It returns dst pinned by the digest
// the registry holds.
func PushAs(t testing.TB, eng *container.Engine, src, dst, auth string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := eng.Tag(ctx, src, dst); err != nil {
		t.Fatal(err)
	}
	digest, err := eng.Push(ctx, dst, auth, nil)
	if rerr := eng.RemoveImage(context.WithoutCancel(ctx), dst); rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(dst[strings.LastIndex(dst, "/")+1:], ":")
	pinned := dst[:strings.LastIndex(dst, "/")+1] + name + "@" + digest
	// The engine keeps the pushed digest as a name of the image too.
	if err := eng.RemoveImage(ctx, pinned); err != nil {
		t.Fatal(err)
	}
	return pinned
}

// foreignBase makes an image unlike the project's Debian bases in what
// the harness depends on (no git or pip configuration, no
// PYTHONDONTWRITEBYTECODE, another working folder and command), as a
// user's python:3.12-slim would be, but with Python, pytest and git, which
// this machine can only take from Debian.
const foreignBase = `FROM %s
RUN rm -f /etc/gitconfig /etc/pip.conf && rmdir /testbed
ENV PYTHONDONTWRITEBYTECODE=
WORKDIR /
CMD ["python3"]
`

// registryBases holds RegistryBase's image by name, pushed once per test
// binary.
var registryBases = struct {
	mu sync.Mutex
	by map[string][2]string
}{by: map[string][2]string{}}

// RegistryBase pushes an image made from the default Debian base (with
// foreignBase's differences) to the open local registry
// (testenv.Registry) as name (for example
// "featbench-test/python:3.12-slim"), as a user's base image from a
// registry would be, once per test binary, and returns the engine, the
// reference with its tag, and the same pinned by digest. The engine keeps
// neither name, nor the image.
func RegistryBase(t testing.TB, name string) (eng *container.Engine, tagged, pinned string) {
	t.Helper()
	reg := testenv.Registry(t)
	eng, base := Base(t)
	tagged = reg.Open + "/" + name
	registryBases.mu.Lock()
	defer registryBases.mu.Unlock()
	if p, ok := registryBases.by[name]; ok {
		return eng, p[0], p[1]
	}
	pinned = PushBuilt(t, eng, fmt.Sprintf(foreignBase, base), tagged, "")
	registryBases.by[name] = [2]string{tagged, pinned}
	return eng, tagged, pinned
}

// testLabels mark the images built here on a base image, which would
// otherwise carry the base's labels (kind "base") and be listed as one.
var testLabels = map[string]string{images.LabelKind: "test"}

// PushFresh builds an image of its own on base (one layer more, with a
// random file), pushes it as PushBuilt does.
func PushFresh(t testing.TB, eng *container.Engine, base, dst, auth string) string {
	t.Helper()
	return PushBuilt(t, eng, "FROM "+base+"\nRUN head -c 16 /dev/urandom | od -x > /featbench-fresh\n", dst, auth)
}

// PushBuilt builds dockerfile (no build context), pushes the image to a
// registry as dst (as PushAs does) and then removes it from the engine
// altogether: the engine knows neither its new layers nor its manifest,
// so taking it again must reach the registry. (An engine that pushed an
// image serves a pull of its digest from what it has, without asking the
// registry.)
func PushBuilt(t testing.TB, eng *container.Engine, dockerfile, dst, auth string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var b [8]byte
	rand.Read(b[:])
	local := "featbench-test/built:" + hex.EncodeToString(b[:])
	if err := eng.Build(ctx, local, dockerfile, nil, testLabels, nil); err != nil {
		t.Fatal(err)
	}
	pinned := PushAs(t, eng, local, dst, auth)
	if err := eng.RemoveImage(ctx, local); err != nil {
		t.Fatal(err)
	}
	return pinned
}

// FeatureBenchLayout lays an image out as FeatureBench's images are: the
// complete project in /testbed, a git repository of it, a copy in
// /root/my_repo, and an environment of its own at
// /opt/miniconda3/envs/testbed (where FeatureBench has a conda
// environment; here a venv that sees the base's pytest) with the project
// installed in editable mode. %s is the base; extra lines follow.
const FeatureBenchLayout = `FROM %s
COPY src/ /testbed/
WORKDIR /testbed
RUN python3 -m venv --without-pip --system-site-packages /opt/miniconda3/envs/testbed && /opt/miniconda3/envs/testbed/bin/python -m pip install --no-index --no-deps --no-build-isolation -e /testbed
RUN git init -q && git add -A && git commit -q -m project && cp -r /testbed /root/my_repo
%s`

// FeatureBenchImage builds the project in the folder src into an image in
// FeatureBench's layout (FeatureBenchLayout) on base, with the Dockerfile
// lines extra after it, pushes it to a registry as dst (as PushAs does)
// and removes it from the engine; it returns dst pinned by digest.
func FeatureBenchImage(t testing.TB, eng *container.Engine, base, src, dst, extra string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	files := SourceFiles(t, src)
	var b [8]byte
	rand.Read(b[:])
	local := "featbench-test/fblayout:" + hex.EncodeToString(b[:])
	if err := eng.Build(ctx, local, fmt.Sprintf(FeatureBenchLayout, base, extra), files, testLabels, nil); err != nil {
		t.Fatal(err)
	}
	pinned := PushAs(t, eng, local, dst, "")
	if err := eng.RemoveImage(ctx, local); err != nil {
		t.Fatal(err)
	}
	return pinned
}

// SourceFiles are the files of the project folder src as a build context
// puts them under src/ (FeatureBenchLayout copies them from there), caches
// and build leftovers left out.
func SourceFiles(t testing.TB, src string) []container.File {
	t.Helper()
	var files []container.File
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "__pycache__" || strings.HasSuffix(d.Name(), ".egg-info") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, container.File{Path: "src/" + filepath.ToSlash(rel), Mode: 0o644, Data: data})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
