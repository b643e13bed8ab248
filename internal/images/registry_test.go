package images_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/registry"
	"github.com/featbench/featbench/internal/testenv"
)

// pullReason is the reason of a *container.PullError, "" for another error.
func pullReason(err error) string {
	var pe *container.PullError
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return ""
}

// TestPullByTagAndDigest takes a Debian base image pushed to the local
// registry as python:3.12-slim by its tag, then by its digest, through the
// engine: both give the reference pinned to the digest the registry holds.
func TestPullByTagAndDigest(t *testing.T) {
	eng, tagged, pinned := imagestest.RegistryBase(t, "featbench-test/python:3.12-slim")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var log bytes.Buffer
	got, err := images.EnsurePulled(ctx, eng, tagged, registry.Keychain{Dir: t.TempDir()}, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if got != pinned {
		t.Errorf("by tag: pinned to %s; the registry holds %s", got, pinned)
	}
	if !strings.Contains(log.String(), "pull "+tagged) {
		t.Errorf("no progress of the pull:\n%s", log.String())
	}
	// The engine has it now: taken as it is, without the registry.
	log.Reset()
	if again, err := images.EnsurePulled(ctx, eng, tagged, nil, &log); err != nil || again != pinned {
		t.Errorf("again: %s, %v", again, err)
	}
	if strings.Contains(log.String(), "pulling") {
		t.Errorf("pulled again what the engine has:\n%s", log.String())
	}
	for _, ref := range []string{tagged, pinned} {
		if err := eng.RemoveImage(ctx, ref); err != nil {
			t.Fatal(err)
		}
	}
	log.Reset()
	got, err = images.EnsurePulled(ctx, eng, pinned, nil, &log)
	if err != nil || got != pinned {
		t.Fatalf("by digest: %s, %v\n%s", got, err, log.String())
	}
	if ok, _ := eng.ImageExists(ctx, pinned); !ok {
		t.Error("the engine has no image by the digest")
	}
	if !strings.Contains(log.String(), "pulling "+pinned) {
		t.Errorf("not pulled by its digest:\n%s", log.String())
	}
}

// TestPullErrors: an unknown image or digest, a registry nobody listens
// at, and one that never answers are each an error that says so, and the
// engine has no image by the name afterwards.
func TestPullErrors(t *testing.T) {
	reg := testenv.Registry(t)
	eng := imagestest.Engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A port nobody listens at: taken and closed again.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	// A registry that accepts the connection and never answers.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	zero := "sha256:" + strings.Repeat("0", 64)
	for _, c := range []struct {
		ref, reason, says string
		timeout           time.Duration
	}{
		{reg.Open + "/featbench-test/no-such-image:1", container.PullNotFound, "has no such image", 0},
		{reg.Open + "/featbench-test/no-such-image@" + zero, container.PullNotFound, "has no such image", 0},
		{closed + "/python:3.12-slim", container.PullUnreachable, "cannot be reached", 0},
		{mute.Addr().String() + "/python:3.12-slim", "", "deadline exceeded", 5 * time.Second},
	} {
		t.Run(c.ref, func(t *testing.T) {
			ctx := ctx
			if c.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.timeout)
				defer cancel()
			}
			_, err := images.EnsurePulled(ctx, eng, c.ref, nil, nil)
			if err == nil {
				t.Fatal("pulled")
			}
			if pullReason(err) != c.reason || !strings.Contains(err.Error(), c.says) {
				t.Errorf("reason %q, want %q; %v", pullReason(err), c.reason, err)
			}
			if ok, _ := eng.ImageExists(context.Background(), c.ref); ok {
				t.Error("the engine has an image by the name")
			}
		})
	}
}

// dockerConfig writes a docker CLI configuration folder whose config.json
// logs in to host as user with password.
func dockerConfig(t *testing.T, host, user, password string) string {
	t.Helper()
	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	data := fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, host, auth)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPullNeedsCredentials: from the registry that wants a password, a
// pull without credentials, or with a wrong password, is refused as
// unauthorised, saying where credentials come from; with the user's
// docker configuration holding them (as `docker login` writes it), it
// pulls.
func TestPullNeedsCredentials(t *testing.T) {
	reg := testenv.Registry(t)
	eng, base := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	good := registry.Keychain{Dir: dockerConfig(t, reg.Auth, reg.User, reg.Password)}
	ref, _ := registry.Parse(reg.Auth + "/featbench-test/python:3.12-slim")
	auth, err := good.AuthHeader(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	// Pushing without credentials is refused too: the registry is closed.
	if err := eng.Tag(ctx, base, ref.String()); err != nil {
		t.Fatal(err)
	}
	_, err = eng.Push(ctx, ref.String(), "", nil)
	eng.RemoveImage(ctx, ref.String())
	if err == nil || !strings.Contains(err.Error(), "no basic auth credentials") {
		t.Fatalf("pushed without credentials: %v", err)
	}
	pinned := imagestest.PushFresh(t, eng, base, ref.String(), auth)

	for name, k := range map[string]registry.Keychain{
		"no configuration": {Dir: t.TempDir()},
		"wrong password":   {Dir: dockerConfig(t, reg.Auth, reg.User, reg.Password+"x")},
		"another registry": {Dir: dockerConfig(t, reg.Open, reg.User, reg.Password)},
	} {
		for _, r := range []string{ref.String(), pinned} {
			_, err := images.EnsurePulled(ctx, eng, r, k, nil)
			if pullReason(err) != container.PullUnauthorized || !strings.Contains(err.Error(), "docker login") {
				t.Errorf("%s, %s: %v", name, r, err)
			}
		}
	}
	got, err := images.EnsurePulled(ctx, eng, ref.String(), good, nil)
	if err != nil || got != pinned {
		t.Fatalf("with the credentials: %s, %v", got, err)
	}
	eng.RemoveImage(ctx, ref.String())
	eng.RemoveImage(ctx, pinned)
	if got, err := images.EnsurePulled(ctx, eng, pinned, good, nil); err != nil || got != pinned {
		t.Fatalf("by digest with the credentials: %s, %v", got, err)
	}
}

// TestPullDigestMismatch runs a registry of its own (Debian's
// docker-registry, on a free port, storing in a temporary folder), pushes
// the base image to it, and then changes the stored manifest, as a
// tampered or corrupted registry would serve it: a pull by the digest the
// dataset pins fails as a digest mismatch, and leaves no image by that
// digest in the engine.
func TestPullDigestMismatch(t *testing.T) {
	testenv.Registry(t) // the tests' registries are provisioned, so is the program
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Fatalf("docker-registry: %v", err)
	}
	eng, base := imagestest.Base(t)
	store := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := filepath.Join(store, "config.yml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", filepath.Join(store, "data"), addr)), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", cfg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i == 100 {
			t.Fatalf("the registry did not start: %s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	pinned := imagestest.PushFresh(t, eng, base, addr+"/featbench-test/python:3.12-slim", "")
	r, _ := registry.Parse(pinned)
	hex := strings.TrimPrefix(r.Digest(), "sha256:")
	blob := filepath.Join(store, "data", "docker", "registry", "v2", "blobs", "sha256", hex[:2], hex, "data")
	manifest, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	// One byte more: the same manifest to a JSON reader, another digest.
	if err := os.WriteFile(blob, append(manifest, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = images.EnsurePulled(ctx, eng, pinned, nil, nil)
	if pullReason(err) != container.PullDigestMismatch || !strings.Contains(err.Error(), "not the one asked for") {
		t.Fatalf("a tampered manifest: %v", err)
	}
	if ok, _ := eng.ImageExists(ctx, pinned); ok {
		t.Error("the engine has an image by the digest")
	}
	// Put back, the same pull works: it was the content, not the pull.
	os.WriteFile(blob, manifest, 0o644)
	if got, err := images.EnsurePulled(ctx, eng, pinned, nil, nil); err != nil || got != pinned {
		t.Errorf("the manifest put back: %s, %v", got, err)
	}
	eng.RemoveImage(context.Background(), pinned)
}

// TestEnsureEnvOnRegistryBase builds textkit's environment on a base image
// taken from the registry, one without the Debian bases' git and Python
// settings (imagestest.RegistryBase): the environment gets them, its
// tests pass, git commits as root, and the image is found again by its
// key.
func TestEnsureEnvOnRegistryBase(t *testing.T) {
	eng, tagged, _ := imagestest.RegistryBase(t, "featbench-test/python:3.12-slim")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	base, err := images.EnsurePulled(ctx, eng, tagged, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyTree(t, textkit, dir)
	spec := images.EnvSpec{Name: "textkit", Source: images.Source{Dir: dir}, Install: []string{editable}, Base: base, RegistryBase: true}
	var log bytes.Buffer
	ref, err := images.EnsureEnv(ctx, eng, spec, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	debian := spec
	debian.RegistryBase = false
	if other, _ := images.EnvRef(ctx, debian); other == ref {
		t.Error("the registry base's preamble is not in the image's key")
	}
	c := start1(t, eng, ref)
	out := run(t, c, `set -e
cd /testbed && pwd
echo "bytecode=$PYTHONDONTWRITEBYTECODE"
git config --get user.name && git log --oneline | wc -l
python3 -m pytest -q -p no:cacheprovider tests/test_slug.py 2>&1 | tail -1`)
	for _, want := range []string{"/testbed", "bytecode=1", "FeatBench", " passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestRegistryBaseWithoutPytest: a base image from a registry whose Python
// has no pytest (and which the install commands do not add) fails the
// environment's build with an error that says what is missing, and no
// image is kept.
func TestRegistryBaseWithoutPytest(t *testing.T) {
	reg := testenv.Registry(t)
	eng, base := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bare := imagestest.PushBuilt(t, eng, "FROM "+base+"\nRUN rm -rf /usr/lib/python3/dist-packages/pytest /usr/lib/python3/dist-packages/_pytest\n",
		reg.Open+"/featbench-test/python:no-pytest", "")
	pinned, err := images.EnsurePulled(ctx, eng, bare, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.RemoveImage(context.Background(), pinned)
	dir := t.TempDir()
	copyTree(t, textkit, dir)
	spec := images.EnvSpec{Name: "textkit-no-pytest", Source: images.Source{Dir: dir}, Install: []string{editable}, Base: pinned, RegistryBase: true}
	_, err = images.EnsureEnv(ctx, eng, spec, nil)
	if err == nil || !strings.Contains(err.Error(), "lacks what the harness needs: pytest") {
		t.Fatalf("a base without pytest: %v", err)
	}
	ref, _ := images.EnvRef(ctx, spec)
	if ok, _ := eng.ImageExists(ctx, ref); ok {
		t.Errorf("the failed build left %s", ref)
	}
}
