package swarm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/distribution/reference"
)

// RegistryRef is the name under which the nodes pull the image whose
// local name is local and whose ID is id: the registry's, the local
// repository's path, and a tag made of the ID, so that the same content
// always has the same name and different content never does.
func RegistryRef(registry, local, id string) (string, error) {
	named, err := reference.ParseNormalizedNamed(local)
	if err != nil {
		return "", fmt.Errorf("image name %s: %w", local, err)
	}
	tag := strings.ReplaceAll(id, ":", "-") // sha256-<64 hex digits>: a valid tag
	return registry + "/" + reference.Path(named) + ":" + tag, nil
}

// push makes sure the registry has the local image, and returns the name
// the nodes pull it by: its content-addressed tag pinned to the digest of
// the manifest the registry holds, so that a node's engine checks that
// what it pulls is what was pushed (a base image from another registry
// is pushed, and referenced, the same way). Each image is looked at once
// per executor (a failed push is tried again by the next Start), and
// pushed only when the registry does not have its tag.
func (x *Executor) push(ctx context.Context, local string) (string, error) {
	x.mu.Lock()
	p := x.images[local]
	if p == nil {
		p = &pushed{}
		x.images[local] = p
	}
	x.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ref != "" {
		return p.ref, nil
	}
	id, err := x.cfg.Local.ImageID(ctx, local)
	if err != nil {
		return "", fmt.Errorf("pushing %s to the swarm's registry: %w", local, err)
	}
	pull, err := RegistryRef(x.cfg.Registry, local, id)
	if err != nil {
		return "", err
	}
	push, err := RegistryRef(x.cfg.PushRegistry, local, id)
	if err != nil {
		return "", err
	}
	digest, err := x.registryHas(ctx, push)
	if err != nil {
		return "", err
	}
	if digest == "" {
		x.logf("pushing %s as %s", local, push)
		if err := x.cfg.Local.Tag(ctx, local, push); err != nil {
			return "", err
		}
		digest, err = x.cfg.Local.Push(ctx, push, "", nil)
		// The extra name is only for the push; the image keeps its own.
		if rerr := x.cfg.Local.RemoveImage(context.WithoutCancel(ctx), push); rerr != nil && err == nil {
			err = rerr
		}
		if err != nil {
			return "", err
		}
		x.mu.Lock()
		x.pushes++
		x.mu.Unlock()
	}
	p.ref = pull + "@" + digest
	return p.ref, nil
}

// manifestTypes are the manifests a registry may hold an image as.
var manifestTypes = []string{
	"application/vnd.docker.distribution.manifest.v2+json",
	"application/vnd.docker.distribution.manifest.list.v2+json",
	"application/vnd.oci.image.manifest.v1+json",
	"application/vnd.oci.image.index.v1+json",
}

// registryHas asks the registry (distribution's HTTP API, plain HTTP, as
// the engines use it with --insecure-registry) for the digest of the
// manifest the tag of ref names, "" when it has no such tag.
func (x *Executor) registryHas(ctx context.Context, ref string) (string, error) {
	host, rest, _ := strings.Cut(ref, "/")
	name, tag, _ := strings.Cut(rest, ":")
	url := "http://" + host + "/v2/" + name + "/manifests/" + tag
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
	if err != nil {
		return "", fmt.Errorf("asking the registry for %s: %w", ref, err)
	}
	req.Header.Set("Accept", strings.Join(manifestTypes, ", "))
	res, err := x.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("asking the registry for %s: %w", ref, err)
	}
	res.Body.Close()
	switch res.StatusCode {
	case http.StatusOK:
		d := res.Header.Get("Docker-Content-Digest")
		if !digestPattern.MatchString(d) {
			return "", fmt.Errorf("asking the registry for %s: HEAD %s: no digest of the manifest (Docker-Content-Digest %q)", ref, url, d)
		}
		return d, nil
	case http.StatusNotFound:
		return "", nil
	}
	return "", fmt.Errorf("asking the registry for %s: HEAD %s: %s", ref, url, res.Status)
}

// digestPattern is a manifest's digest as a registry gives it.
var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
