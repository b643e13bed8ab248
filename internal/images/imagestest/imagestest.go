// Package imagestest gives tests a Docker engine and the base image, built
// once per test binary (about a minute the first time on a machine; later
// runs find it in the engine).
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

var base struct {
	once     sync.Once
	ref      string
	log      bytes.Buffer
	err      error
	duration time.Duration
}

// Base returns an engine and the default base image, building the image
// the first time a test binary asks for it.
func Base(t testing.TB) (*container.Engine, string) {
	t.Helper()
	eng := Engine(t)
	base.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		start := time.Now()
		base.ref, base.err = images.EnsureBase(ctx, eng, images.BaseSpec{}, &base.log)
		base.duration = time.Since(start)
	})
	if base.err != nil {
		t.Fatalf("base image: %v\n%s", base.err, base.log.String())
	}
	if base.log.Len() > 0 {
		// Built here: say how it went, once.
		t.Logf("base image built in %s:\n%s", base.duration.Round(time.Millisecond), progressLines(base.log.String()))
		base.log.Reset()
	}
	return eng, base.ref
}

// BaseBuildTime is how long this test binary's EnsureBase call took (a
// fraction of a second when the image was already there).
func BaseBuildTime() time.Duration { return base.duration }

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
