// Package imagestest gives tests a Docker engine and the base images, each
// built once per test binary (about a minute the first time on a machine;
// later runs find it in the engine; scripts/provision-images.sh builds
// them all beforehand, as root, where tests do not run as root).
package imagestest

import (
	"bytes"
	"context"
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
