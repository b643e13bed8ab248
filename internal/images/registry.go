package images

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/registry"
)

// Credentials gives the engine's X-Registry-Auth value for pulling a
// reference: registry.Keychain, which reads the user's docker
// configuration.
type Credentials interface {
	AuthHeader(ctx context.Context, ref registry.Ref) (string, error)
}

var _ Credentials = registry.Keychain{}

// EnsurePulled returns ref pinned by digest (NAME@sha256:…), pulling it
// through the engine when the engine does not have it. A pinned ref is
// pulled by its digest, so the engine checks that what the registry sends
// is that content (a mismatch is a *container.PullError with reason
// PullDigestMismatch); a tag is taken as the engine has it when it has it
// (pinned to the digest it was pulled with: `docker pull` it to move on),
// else pulled and pinned to what came. creds may be nil: no credentials.
// Progress goes to log (may be nil).
func EnsurePulled(ctx context.Context, eng Engine, ref string, creds Credentials, log io.Writer) (string, error) {
	r, err := registry.Parse(ref)
	if err != nil {
		return "", err
	}
	if r.Pinned() {
		if ok, err := eng.ImageExists(ctx, r.String()); err != nil {
			return "", err
		} else if ok {
			return r.String(), nil
		}
	} else if ok, err := eng.ImageExists(ctx, r.String()); err != nil {
		return "", err
	} else if ok {
		pinned, err := pinnedOf(ctx, eng, r)
		if err == nil {
			logf(log, "%s: the engine's copy, %s (docker pull it to take a newer one)", r.Familiar(), pinned)
			return pinned, nil
		}
		// Built or tagged here, never pulled: pull it to know its digest.
	}
	auth := ""
	if creds != nil {
		if auth, err = creds.AuthHeader(ctx, r); err != nil {
			return "", fmt.Errorf("credentials for %s: %w", r.Domain(), err)
		}
	}
	logf(log, "pulling %s", r)
	if err := eng.Pull(ctx, r.String(), auth, log); err != nil {
		return "", err
	}
	pinned, err := pinnedOf(ctx, eng, r)
	if err != nil {
		return "", err
	}
	if !r.Pinned() {
		logf(log, "%s is %s", r.Familiar(), pinned)
	}
	return pinned, nil
}

// pinnedOf is the engine's image r pinned: the repository digest the
// engine recorded for r's repository when it pulled it, which must be r's
// own digest when r has one.
func pinnedOf(ctx context.Context, eng Engine, r registry.Ref) (string, error) {
	digests, err := eng.RepoDigests(ctx, r.String())
	if err != nil {
		return "", err
	}
	var mine []string
	for _, d := range digests {
		p, err := registry.Parse(d)
		if err == nil && p.Name() == r.Name() {
			mine = append(mine, p.String())
		}
	}
	if r.Pinned() {
		if !slices.Contains(mine, r.String()) {
			return "", &container.PullError{Ref: r.String(), Reason: container.PullDigestMismatch,
				Err: fmt.Errorf("the engine's image has the digests %v, not %s", mine, r.Digest())}
		}
		return r.String(), nil
	}
	if len(mine) == 0 {
		return "", fmt.Errorf("%s: the engine knows no registry digest of it (an image built or tagged here, not pulled)", r)
	}
	if len(mine) > 1 {
		// Pulled again after the tag moved: the engine lists both.
		return "", fmt.Errorf("%s: the engine has it under several digests (%v); pull it by the digest you mean", r, mine)
	}
	return mine[0], nil
}
