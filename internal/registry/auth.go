package registry

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Credentials are what the engine is given to pull from one registry.
type Credentials struct {
	Username      string
	Password      string
	IdentityToken string // an OAuth refresh token, instead of a password
	ServerAddress string // the registry as the configuration names it
}

// Header is the engine's X-Registry-Auth value for c: its JSON,
// base64url-encoded. The zero Credentials give "e30=" ({}), which the
// engine takes as no credentials.
func (c Credentials) Header() string {
	b, _ := json.Marshal(struct {
		Username      string `json:"username,omitempty"`
		Password      string `json:"password,omitempty"`
		ServerAddress string `json:"serveraddress,omitempty"`
		IdentityToken string `json:"identitytoken,omitempty"`
	}{c.Username, c.Password, c.ServerAddress, c.IdentityToken})
	return base64.URLEncoding.EncodeToString(b)
}

// dockerHubKey is the key under which the docker CLI keeps Docker Hub's
// credentials, and the server URL it asks credential helpers for.
const dockerHubKey = "https://index.docker.io/v1/"

// Keychain finds a registry's credentials in a docker CLI configuration
// folder (config.json): an inline "auths" entry, a credential helper for
// that registry ("credHelpers"), or the default helper ("credsStore"),
// in the order the CLI uses them. Helpers are the CLI's
// docker-credential-NAME programs, found in $PATH.
type Keychain struct {
	// Dir is the configuration folder; ConfigDir() when empty.
	Dir string
	// HelperTimeout bounds one helper call; 30 s when 0.
	HelperTimeout time.Duration
}

// ConfigDir is the folder the docker CLI reads: $DOCKER_CONFIG, else
// ~/.docker.
func ConfigDir() string {
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".docker"
	}
	return filepath.Join(home, ".docker")
}

// configFile is what Keychain reads of config.json.
type configFile struct {
	Auths map[string]struct {
		Auth          string `json:"auth"`
		Username      string `json:"username"`
		Password      string `json:"password"`
		IdentityToken string `json:"identitytoken"`
	} `json:"auths"`
	CredsStore  string            `json:"credsStore"`
	CredHelpers map[string]string `json:"credHelpers"`
}

// Lookup returns the credentials for the registry host domain (as
// Ref.Domain gives it), and false when the configuration has none (a
// registry that needs none, or a user who has not logged in). A
// configuration that cannot be read, or a helper that fails other than by
// not having the registry, is an error naming the file or the helper.
func (k Keychain) Lookup(ctx context.Context, domain string) (Credentials, bool, error) {
	dir := k.Dir
	if dir == "" {
		dir = ConfigDir()
	}
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Credentials{}, false, nil
	}
	if err != nil {
		return Credentials{}, false, fmt.Errorf("reading the docker configuration: %w", err)
	}
	var cf configFile
	if err := json.Unmarshal(data, &cf); err != nil {
		return Credentials{}, false, fmt.Errorf("%s: not the docker CLI's configuration: %w", path, err)
	}
	key := domain
	if domain == "docker.io" || domain == "index.docker.io" || domain == "registry-1.docker.io" {
		key = dockerHubKey
	}
	// A helper for this registry comes first, then the default helper,
	// then an inline entry (which the CLI writes only without a helper).
	for _, host := range slices.Sorted(maps.Keys(cf.CredHelpers)) {
		if helper := cf.CredHelpers[host]; hostOf(host) == hostOf(key) && helper != "" {
			return k.helper(ctx, helper, key)
		}
	}
	if cf.CredsStore != "" {
		c, ok, err := k.helper(ctx, cf.CredsStore, key)
		if err != nil || ok {
			return c, ok, err
		}
	}
	for _, host := range slices.Sorted(maps.Keys(cf.Auths)) {
		a := cf.Auths[host]
		if hostOf(host) != hostOf(key) {
			continue
		}
		c := Credentials{Username: a.Username, Password: a.Password, IdentityToken: a.IdentityToken, ServerAddress: host}
		if a.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			if err != nil {
				return Credentials{}, false, fmt.Errorf("%s: auths[%q].auth is not base64: %w", path, host, err)
			}
			user, pass, ok := strings.Cut(string(raw), ":")
			if !ok {
				return Credentials{}, false, fmt.Errorf("%s: auths[%q].auth does not hold user:password", path, host)
			}
			c.Username, c.Password = user, pass
		}
		if c.Username == "" && c.Password == "" && c.IdentityToken == "" {
			continue // an entry left by docker logout, or only a server name
		}
		return c, true, nil
	}
	return Credentials{}, false, nil
}

// hostOf is a configuration key's host: the CLI's keys may carry a scheme
// and a path ("https://index.docker.io/v1/").
func hostOf(key string) string {
	h := key
	if i := strings.Index(h, "://"); i >= 0 {
		h = h[i+3:]
	}
	h, _, _ = strings.Cut(h, "/")
	return strings.ToLower(h)
}

// helperReply is a credential helper's answer to "get".
type helperReply struct {
	ServerURL string `json:"ServerURL"`
	Username  string `json:"Username"`
	Secret    string `json:"Secret"`
}

// helper asks docker-credential-NAME for server's credentials, as the
// CLI does: "get" with the server on standard input, JSON on standard
// output. A helper that says it has none answers false.
func (k Keychain) helper(ctx context.Context, name, server string) (Credentials, bool, error) {
	prog := "docker-credential-" + name
	timeout := k.HelperTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, "get")
	cmd.Stdin = strings.NewReader(server)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stdout.String() + " " + stderr.String())
		if strings.Contains(strings.ToLower(msg), "credentials not found") {
			return Credentials{}, false, nil
		}
		if errors.Is(err, exec.ErrNotFound) {
			return Credentials{}, false, fmt.Errorf("the docker configuration names the credential helper %q, but %s is not in $PATH", name, prog)
		}
		return Credentials{}, false, fmt.Errorf("credential helper %s for %s: %w: %s", prog, server, err, msg)
	}
	var r helperReply
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return Credentials{}, false, fmt.Errorf("credential helper %s for %s: its answer is not JSON: %w", prog, server, err)
	}
	c := Credentials{Username: r.Username, Password: r.Secret, ServerAddress: server}
	if r.Username == "<token>" {
		// The helpers' convention for an identity token.
		c = Credentials{IdentityToken: r.Secret, ServerAddress: server}
	}
	return c, true, nil
}

// AuthHeader is the X-Registry-Auth value for pulling ref: the
// credentials the keychain has for its registry, or none.
func (k Keychain) AuthHeader(ctx context.Context, ref Ref) (string, error) {
	c, _, err := k.Lookup(ctx, ref.Domain())
	if err != nil {
		return "", err
	}
	return c.Header(), nil
}
