package testenv_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/testenv"
)

func TestChromiumVersion(t *testing.T) {
	bin := testenv.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s --version: %v\n%s%s", bin, err, out, stderr)
	}
	if !strings.Contains(strings.ToLower(string(out)), "chrom") {
		t.Fatalf("%s --version printed %q, want a Chromium/Chrome version", bin, out)
	}
	t.Logf("%s: %s", bin, strings.TrimSpace(string(out)))
}

func TestDockerHost(t *testing.T) {
	h := testenv.DockerHost(t)
	if h == "" {
		t.Fatal("DockerHost returned an empty address")
	}
	t.Logf("DOCKER_HOST=%s", h)
}
