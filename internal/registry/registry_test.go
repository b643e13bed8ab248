package registry_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/registry"
)

func TestParse(t *testing.T) {
	const dg = "sha256:de56f5520ac4236938dbbe9fe02d9bfd57f93c01e81b3fd941d94fedbd264b78"
	for _, c := range []struct {
		in, name, domain, tag, digest string
	}{
		{"python:3.12-slim", "docker.io/library/python", "docker.io", "3.12-slim", ""},
		{"127.0.0.1:5077/python:3.12-slim", "127.0.0.1:5077/python", "127.0.0.1:5077", "3.12-slim", ""},
		{"127.0.0.1:5077/python@" + dg, "127.0.0.1:5077/python", "127.0.0.1:5077", "", dg},
		{"ghcr.io/o/r:t@" + dg, "ghcr.io/o/r", "ghcr.io", "t", dg},
	} {
		r, err := registry.Parse(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if r.Name() != c.name || r.Domain() != c.domain || r.Tag() != c.tag || r.Digest() != c.digest {
			t.Errorf("%s: name %s domain %s tag %s digest %s", c.in, r.Name(), r.Domain(), r.Tag(), r.Digest())
		}
		if r.Pinned() != (c.digest != "") {
			t.Errorf("%s: pinned %v", c.in, r.Pinned())
		}
	}
	for _, bad := range []string{"", " python", "Python:3", "python:bad tag", "python@sha256:12", strings.Repeat("a", 64)} {
		if _, err := registry.Parse(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := registry.PinnedRef("python:3.12-slim"); err == nil || !strings.Contains(err.Error(), "not pinned by digest") {
		t.Errorf("an unpinned reference passed PinnedRef: %v", err)
	}
	r, _ := registry.Parse("127.0.0.1:5077/python:3.12-slim")
	p, err := r.WithDigest(dg)
	if err != nil || p.String() != "127.0.0.1:5077/python@"+dg {
		t.Errorf("WithDigest: %v %v", p, err)
	}
	if _, err := r.WithDigest("sha256:nothex"); err == nil {
		t.Error("a bad digest pinned")
	}
}

// writeConfig writes a docker CLI config.json into a new folder.
func writeConfig(t *testing.T, cfg any) string {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func decodeHeader(t *testing.T, h string) map[string]string {
	t.Helper()
	b, err := base64.URLEncoding.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestKeychainInline(t *testing.T) {
	ctx := context.Background()
	dir := writeConfig(t, map[string]any{"auths": map[string]any{
		"127.0.0.1:5078":              map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte("alice:s3:cret"))},
		"https://index.docker.io/v1/": map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte("bob:hub"))},
		"127.0.0.1:5079":              map[string]string{}, // logged out
	}})
	k := registry.Keychain{Dir: dir}
	c, ok, err := k.Lookup(ctx, "127.0.0.1:5078")
	if err != nil || !ok || c.Username != "alice" || c.Password != "s3:cret" {
		t.Errorf("127.0.0.1:5078: %+v %v %v", c, ok, err)
	}
	r, _ := registry.Parse("python:3.12-slim")
	h, err := k.AuthHeader(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if m := decodeHeader(t, h); m["username"] != "bob" || m["password"] != "hub" {
		t.Errorf("Docker Hub's header: %v", m)
	}
	for _, d := range []string{"127.0.0.1:5079", "registry.example.com"} {
		if _, ok, err := k.Lookup(ctx, d); ok || err != nil {
			t.Errorf("%s: credentials found (%v)", d, err)
		}
	}
	// No configuration at all: no credentials, no error.
	if _, ok, err := (registry.Keychain{Dir: t.TempDir()}).Lookup(ctx, "docker.io"); ok || err != nil {
		t.Errorf("an empty folder: %v %v", ok, err)
	}
	if h := (registry.Credentials{}).Header(); h != "e30=" {
		t.Errorf("no credentials: %q, want e30=", h)
	}
}

func TestKeychainBadConfig(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config.json"), []byte("{not json"), 0o600)
	if _, _, err := (registry.Keychain{Dir: dir}).Lookup(context.Background(), "docker.io"); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("a broken config.json: %v", err)
	}
	dir = writeConfig(t, map[string]any{"auths": map[string]any{"r.example": map[string]string{"auth": "%%%"}}})
	if _, _, err := (registry.Keychain{Dir: dir}).Lookup(context.Background(), "r.example"); err == nil || !strings.Contains(err.Error(), "not base64") {
		t.Errorf("a bad auth: %v", err)
	}
}

// TestKeychainHelper runs real credential helpers, shell scripts that
// speak the docker CLI's helper protocol, from $PATH.
func TestKeychainHelper(t *testing.T) {
	bin := t.TempDir()
	helper := func(name, script string) {
		if err := os.WriteFile(filepath.Join(bin, "docker-credential-"+name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// It answers for what it reads on standard input, and only to "get".
	helper("pass", `[ "$1" = get ] || exit 2
read -r server
case "$server" in
127.0.0.1:5078) printf '{"ServerURL":"%s","Username":"carol","Secret":"pw"}' "$server" ;;
ghcr.io) printf '{"ServerURL":"%s","Username":"<token>","Secret":"tok"}' "$server" ;;
*) echo "credentials not found in native keychain"; exit 1 ;;
esac`)
	helper("broken", `echo "the keyring is locked" >&2; exit 1`)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	ctx := context.Background()
	dir := writeConfig(t, map[string]any{
		"credsStore":  "pass",
		"credHelpers": map[string]string{"broken.example": "broken", "missing.example": "nosuch"},
		"auths":       map[string]any{"inline.example": map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte("dave:x"))}},
	})
	k := registry.Keychain{Dir: dir}
	if c, ok, err := k.Lookup(ctx, "127.0.0.1:5078"); err != nil || !ok || c.Username != "carol" || c.Password != "pw" {
		t.Errorf("the default helper: %+v %v %v", c, ok, err)
	}
	if c, ok, err := k.Lookup(ctx, "ghcr.io"); err != nil || !ok || c.IdentityToken != "tok" || c.Username != "" {
		t.Errorf("an identity token: %+v %v %v", c, ok, err)
	}
	// The helper has none: the inline entry is next.
	if c, ok, err := k.Lookup(ctx, "inline.example"); err != nil || !ok || c.Username != "dave" {
		t.Errorf("inline after the helper: %+v %v %v", c, ok, err)
	}
	if _, _, err := k.Lookup(ctx, "broken.example"); err == nil || !strings.Contains(err.Error(), "keyring is locked") {
		t.Errorf("a failing helper: %v", err)
	}
	if _, _, err := k.Lookup(ctx, "missing.example"); err == nil || !strings.Contains(err.Error(), "docker-credential-nosuch") {
		t.Errorf("a missing helper: %v", err)
	}
}

func TestWithDomain(t *testing.T) {
	r, _ := registry.Parse("libercoders/featurebench-specs_x:v1")
	m, err := r.WithDomain("127.0.0.1:5077")
	if err != nil || m.String() != "127.0.0.1:5077/libercoders/featurebench-specs_x:v1" {
		t.Errorf("WithDomain: %v %v", m, err)
	}
	r, _ = registry.Parse("python:3.12-slim")
	if m, _ := r.WithDomain("mirror.example:443"); m.String() != "mirror.example:443/library/python:3.12-slim" {
		t.Errorf("an official image: %v", m)
	}
	if _, err := r.WithDomain("not a host"); err == nil {
		t.Error("a bad host")
	}
	if _, err := r.WithDomain("nodots"); err == nil {
		t.Error("a host the engine would read as a path")
	}
}
