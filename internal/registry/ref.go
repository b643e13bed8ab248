// Package registry is what taking an image from a registry needs beyond
// the engine: parsing and pinning image references (ref.go), and the
// user's credentials as the docker CLI keeps them in its configuration
// folder (auth.go), never in featbench.toml.
//
// It is a leaf package (it needs no Docker client) so that config and
// bench can check the references they read.
package registry

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"
	godigest "github.com/opencontainers/go-digest"
)

// Ref is a parsed image reference, normalised as the engine reads it
// ("python:3.12-slim" is docker.io/library/python:3.12-slim).
type Ref struct {
	named reference.Named
}

// Parse parses an image reference as the engine does. A reference that
// names an image ID ("sha256:…" alone) is refused: it names no registry to
// pull from.
func Parse(s string) (Ref, error) {
	if s == "" {
		return Ref{}, fmt.Errorf("an empty image reference")
	}
	if strings.TrimSpace(s) != s {
		return Ref{}, fmt.Errorf("image reference %q has spaces around it", s)
	}
	named, err := reference.ParseNormalizedNamed(s)
	if err != nil {
		return Ref{}, fmt.Errorf("image reference %q: %w", s, err)
	}
	return Ref{named: named}, nil
}

// String is the reference in full (registry, path, tag and digest).
func (r Ref) String() string { return r.named.String() }

// Familiar is the reference as a user writes it ("python:3.12-slim").
func (r Ref) Familiar() string { return reference.FamiliarString(r.named) }

// Domain is the registry's host ("docker.io", "127.0.0.1:5077").
func (r Ref) Domain() string { return reference.Domain(r.named) }

// Name is the repository with its registry, without tag or digest
// ("docker.io/library/python").
func (r Ref) Name() string { return r.named.Name() }

// Tag is the reference's tag, "" when it has none.
func (r Ref) Tag() string {
	if t, ok := r.named.(reference.Tagged); ok {
		return t.Tag()
	}
	return ""
}

// Digest is the reference's digest ("sha256:…"), "" when it is not pinned.
func (r Ref) Digest() string {
	if d, ok := r.named.(reference.Digested); ok {
		return d.Digest().String()
	}
	return ""
}

// Pinned says whether the reference names its content by digest.
func (r Ref) Pinned() bool { return r.Digest() != "" }

// WithDigest is the repository pinned to digest, its tag dropped (the
// digest alone says what is pulled; a tag beside it is only a reminder
// the engine ignores).
func (r Ref) WithDigest(digest string) (Ref, error) {
	dg, err := godigest.Parse(digest)
	if err != nil {
		return Ref{}, fmt.Errorf("pinning %s to %q: %w", r, digest, err)
	}
	d, err := reference.WithDigest(reference.TrimNamed(r.named), dg)
	if err != nil {
		return Ref{}, fmt.Errorf("pinning %s to %q: %w", r, digest, err)
	}
	return Ref{named: d}, nil
}

// PinnedRef parses s and requires a digest: a dataset records the content
// it was collected or published with, not a tag that may move.
func PinnedRef(s string) (Ref, error) {
	r, err := Parse(s)
	if err != nil {
		return Ref{}, err
	}
	if !r.Pinned() {
		return Ref{}, fmt.Errorf("image reference %q is not pinned by digest (want NAME@sha256:…)", s)
	}
	return r, nil
}

// WithDomain is the same repository path, tag and digest at another
// registry host: a mirror of the images ("docker.io/o/img:1" at
// "127.0.0.1:5077" is "127.0.0.1:5077/o/img:1").
func (r Ref) WithDomain(host string) (Ref, error) {
	s := host + "/" + reference.Path(r.named)
	if t := r.Tag(); t != "" {
		s += ":" + t
	}
	if d := r.Digest(); d != "" {
		s += "@" + d
	}
	out, err := Parse(s)
	if err != nil {
		return Ref{}, err
	}
	if out.Domain() != host {
		return Ref{}, fmt.Errorf("%q is not a registry host (want HOST[:PORT])", host)
	}
	return out, nil
}
