// Package testenv finds the external programs that some featbench tests need
// (a headless Chromium for the rendered-site tests, a Docker engine for the
// evaluation tests) and decides what a test does when one is missing.
//
// It exists so that every such test handles a missing dependency the same
// way: on a developer's machine the test is skipped with a message saying
// how to install the program, while CI sets FEATBENCH_REQUIRE_BROWSER=1 or
// FEATBENCH_REQUIRE_DOCKER=1 (see .ci/run) so that a missing program fails
// the run instead of silently skipping the tests that need it.
package testenv

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Chromium returns the path of a Chromium or Chrome binary for the test.
//
// It uses $FEATBENCH_CHROMIUM if set, else the first of chromium,
// chromium-browser and google-chrome found in $PATH. If none is found the
// test is skipped, or fails if FEATBENCH_REQUIRE_BROWSER=1.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("FEATBENCH_CHROMIUM"); p != "" {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
		missing(t, "FEATBENCH_REQUIRE_BROWSER",
			"FEATBENCH_CHROMIUM="+p+" is not an executable",
			"run scripts/provision-browser.sh or fix FEATBENCH_CHROMIUM")
		return ""
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	missing(t, "FEATBENCH_REQUIRE_BROWSER",
		"no Chromium found",
		"run scripts/provision-browser.sh to install Debian's chromium, or set FEATBENCH_CHROMIUM to a Chrome/Chromium binary"+
			" (looked for chromium, chromium-browser, google-chrome in PATH)")
	return ""
}

// DockerHost returns the Docker engine address for the test, in the form of
// DOCKER_HOST (for example "unix:///run/featbench-docker.sock").
//
// It uses $DOCKER_HOST if set (a unix:// address must name an existing
// socket; other schemes are returned as they are), else the private engine
// started by scripts/provision-docker.sh, else /var/run/docker.sock. If
// none is usable the test is skipped, or fails if FEATBENCH_REQUIRE_DOCKER=1.
func DockerHost(t testing.TB) string {
	t.Helper()
	const hint = "run `eval \"$(bash scripts/provision-docker.sh)\"` to start a private Docker engine and set DOCKER_HOST"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		sock, ok := strings.CutPrefix(h, "unix://")
		if !ok || isSocket(sock) {
			return h
		}
		missing(t, "FEATBENCH_REQUIRE_DOCKER", "DOCKER_HOST="+h+" is not a socket", hint)
		return ""
	}
	for _, sock := range []string{"/run/featbench-docker.sock", "/var/run/docker.sock"} {
		if isSocket(sock) {
			return "unix://" + sock
		}
	}
	missing(t, "FEATBENCH_REQUIRE_DOCKER",
		"no Docker engine found (DOCKER_HOST unset, no /run/featbench-docker.sock or /var/run/docker.sock)",
		hint)
	return ""
}

// Swarm is a Docker Swarm for the test: its manager's engine, its
// registry as the nodes reach it, and the same registry as the test's
// Docker engine (DockerHost) reaches it. It uses $FEATBENCH_SWARM_MANAGER,
// _REGISTRY and _PUSH_REGISTRY when set (what
// scripts/provision-swarm.sh prints), else the swarm that script starts
// when its manager's socket is there. If there is none the test is
// skipped, or fails if FEATBENCH_REQUIRE_SWARM=1. The test holds the swarm
// to itself until it ends: swarm tests of other packages wait.
func Swarm(t testing.TB) (manager, registry, pushRegistry string) {
	t.Helper()
	const hint = "run `eval \"$(bash scripts/provision-swarm.sh)\"` (as root) to start a three-node swarm in network namespaces, with a registry"
	manager, registry, pushRegistry = os.Getenv("FEATBENCH_SWARM_MANAGER"), os.Getenv("FEATBENCH_SWARM_REGISTRY"), os.Getenv("FEATBENCH_SWARM_PUSH_REGISTRY")
	if manager == "" {
		manager, registry, pushRegistry = "unix:///run/featbench-swarm/node1.sock", "10.77.0.1:5077", "127.0.0.1:5077"
	}
	if sock, ok := strings.CutPrefix(manager, "unix://"); ok && !isSocket(sock) {
		missing(t, "FEATBENCH_REQUIRE_SWARM", "no swarm manager at "+manager, hint)
		return "", "", ""
	}
	if registry == "" {
		missing(t, "FEATBENCH_REQUIRE_SWARM", "FEATBENCH_SWARM_MANAGER is set but FEATBENCH_SWARM_REGISTRY is not", hint)
		return "", "", ""
	}
	lockSwarm(t)
	return manager, registry, pushRegistry
}

// swarmLocked is set while a test holds the swarm tests' lock.
const swarmLocked = "FEATBENCH_SWARM_TEST_LOCKED"

func isSocket(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().Type() == fs.ModeSocket
}

// missing skips the test, or fails it when the environment variable
// require is set to 1.
func missing(t testing.TB, require, what, hint string) {
	t.Helper()
	if os.Getenv(require) == "1" {
		t.Fatalf("%s=1 but %s: %s", require, what, hint)
	}
	t.Skipf("%s: %s (set %s=1 to make this a failure)", what, hint, require)
}

// Registries are the local registries scripts/provision-registry.sh
// starts: Open needs no credentials; Auth wants User and Password (HTTP
// basic authentication, from an htpasswd file).
type Registries struct {
	Open, Auth     string // host:port as this machine's engine reaches them
	User, Password string // Auth's
}

// Registry returns the test's registries: $FEATBENCH_REGISTRY,
// $FEATBENCH_AUTH_REGISTRY, _USER and _PASSWORD when set (what
// scripts/provision-registry.sh prints), else the ones that script starts,
// when they answer (the password read from its file). If they do not,
// the test is skipped, or fails if FEATBENCH_REQUIRE_REGISTRY=1.
func Registry(t testing.TB) Registries {
	t.Helper()
	const hint = "run `eval \"$(bash scripts/provision-registry.sh)\"` (as root) to start Debian's docker-registry on :5077 and, with a password, on :5078"
	r := Registries{
		Open: os.Getenv("FEATBENCH_REGISTRY"), Auth: os.Getenv("FEATBENCH_AUTH_REGISTRY"),
		User: os.Getenv("FEATBENCH_AUTH_REGISTRY_USER"), Password: os.Getenv("FEATBENCH_AUTH_REGISTRY_PASSWORD"),
	}
	if r.Open == "" {
		r.Open = "127.0.0.1:5077"
	}
	if r.Auth == "" {
		r.Auth, r.User = "127.0.0.1:5078", "featbench"
		pw, err := os.ReadFile("/var/lib/featbench-registry/auth/password")
		if err != nil {
			missing(t, "FEATBENCH_REQUIRE_REGISTRY", "no password of the registry at "+r.Auth+" ("+err.Error()+")", hint)
			return Registries{}
		}
		r.Password = strings.TrimSpace(string(pw))
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for _, want := range []struct {
		host string
		code int
	}{{r.Open, http.StatusOK}, {r.Auth, http.StatusUnauthorized}} {
		res, err := client.Get("http://" + want.host + "/v2/")
		if err != nil {
			missing(t, "FEATBENCH_REQUIRE_REGISTRY", "no registry answers at "+want.host+": "+err.Error(), hint)
			return Registries{}
		}
		res.Body.Close()
		if res.StatusCode != want.code {
			missing(t, "FEATBENCH_REQUIRE_REGISTRY", fmt.Sprintf("the registry at %s answers %s, not %d", want.host, res.Status, want.code), hint)
			return Registries{}
		}
	}
	return r
}
