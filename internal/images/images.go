// Package images builds the images evaluation tasks run in, offline, and
// caches them by content.
//
// Images come in two layers, as SWE-bench's do. The base image is a Debian
// root file system made with debootstrap (Python, pytest, pip, git, patch)
// and imported into the engine, offline; or, when a repository names one,
// an image from a registry, pulled through the engine and pinned by digest
// (EnsurePulled, registry.go). An
// environment image adds one repository's source in /testbed, installed
// with the dataset's commands and committed in git, so that a run can
// reset /testbed to it (`git reset --hard && git clean -fdx`). The state of
// one task instance is applied at run time, in the container.
//
// Each image's tag ends in a hash of everything it is made from (its
// recipe), so an image is built once, found by its tag afterwards, and
// rebuilt only when an input changes. Images carry labels (LabelProject,
// LabelKind, LabelKey, LabelRepo) so that they can be listed and removed.
package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/featbench/featbench/internal/container"
)

// Labels set on every image this package builds.
const (
	LabelProject = "featbench.project" // always "1"
	LabelKind    = "featbench.kind"    // KindBase, KindLayer or KindEnv
	LabelKey     = "featbench.key"     // the recipe hash in the tag
	LabelRepo    = "featbench.repo"    // an environment image's repository (EnvSpec.Name)
	LabelBase    = "featbench.base"    // an environment image's or a layer's base image
)

// Image kinds, the values of LabelKind.
const (
	KindBase  = "base"
	KindLayer = "layer" // Debian packages a repository adds, on a base image
	KindEnv   = "env"
)

// Engine is what this package needs of a Docker engine; *container.Engine
// has it.
type Engine interface {
	ImageExists(ctx context.Context, ref string) (bool, error)
	ImportRootfs(ctx context.Context, dir, ref string, labels map[string]string, changes []string) error
	Build(ctx context.Context, ref, dockerfile string, files []container.File, labels map[string]string, log io.Writer) error
	// BuildNetworked and Start build behind a build gate (internal/gate),
	// whose container Start starts.
	BuildNetworked(ctx context.Context, ref, dockerfile string, files []container.File, labels map[string]string, net container.BuildNetwork, log io.Writer) error
	Start(ctx context.Context, spec container.Spec) (*container.Container, error)
	RemoveImage(ctx context.Context, ref string) error
	// Pull and RepoDigests take a base image from a registry
	// (EnsurePulled).
	Pull(ctx context.Context, ref, auth string, progress io.Writer) error
	RepoDigests(ctx context.Context, ref string) ([]string, error)
}

var _ Engine = (*container.Engine)(nil)

// keyLen is how many hex digits of a recipe hash a tag keeps: 64 bits are
// plenty to tell a project's recipes apart.
const keyLen = 16

// hashKey returns the key of a recipe text.
func hashKey(recipe string) string {
	sum := sha256.Sum256([]byte(recipe))
	return hex.EncodeToString(sum[:])[:keyLen]
}

// logf writes a progress line to log, which may be nil.
func logf(log io.Writer, format string, args ...any) {
	if log != nil {
		_, _ = fmt.Fprintf(log, "images: "+format+"\n", args...)
	}
}
