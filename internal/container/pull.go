package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// Why a pull failed: PullError's Reason.
const (
	PullUnreachable    = "unreachable"     // the registry did not answer (refused, no such host, timeout, TLS)
	PullUnauthorized   = "unauthorized"    // it wants credentials the user's docker configuration does not give, or refused them
	PullNotFound       = "not found"       // no such repository, tag or digest
	PullDigestMismatch = "digest mismatch" // the content the registry sent is not the digest asked for
	PullFailed         = "failed"          // anything else
)

// PullError is a failed pull, with the reason a user can act on.
type PullError struct {
	Ref    string
	Reason string // one of the Pull* reasons
	Err    error  // the engine's own message
}

func (e *PullError) Error() string {
	var why string
	switch e.Reason {
	case PullUnreachable:
		why = "the registry cannot be reached"
	case PullUnauthorized:
		why = "the registry refused access (log in with `docker login` so that ~/.docker/config.json, or its credential helper, has the credentials; featbench.toml never holds them)"
	case PullNotFound:
		why = "the registry has no such image"
	case PullDigestMismatch:
		why = "the registry sent content whose digest is not the one asked for (a tampered or corrupted registry)"
	default:
		why = "the pull failed"
	}
	return fmt.Sprintf("pull %s: %s: %v", e.Ref, why, e.Err)
}

func (e *PullError) Unwrap() error { return e.Err }

// classifyPull gives the reason of a pull error from what the engine
// says: it reports registry failures as text, in an HTTP error or inside
// the stream, and with kinds (errdefs) only for some.
func classifyPull(err error) string {
	msg := strings.ToLower(err.Error())
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("manifest verification failed", "digest mismatch", "digest did not match", "failed to verify"):
		return PullDigestMismatch
	case cerrdefs.IsUnauthorized(err) || cerrdefs.IsPermissionDenied(err) ||
		has("no basic auth credentials", "unauthorized", "authentication required", "access denied", "denied:", "pull access denied", "incorrect username or password"):
		return PullUnauthorized
	case has("manifest unknown", "name unknown", "not found", "repository does not exist"):
		return PullNotFound
	case has("connection refused", "no such host", "i/o timeout", "network is unreachable", "no route to host",
		"tls handshake", "x509:", "server gave http response to https client", "connection reset", "timeout exceeded",
		"dial tcp", "eof"):
		return PullUnreachable
	case cerrdefs.IsNotFound(err):
		return PullNotFound
	}
	return PullFailed
}

// pullMessage is one message of a pull's JSON stream.
type pullMessage struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	Error       string `json:"error"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

// Pull pulls ref (a reference the engine can pull: NAME[:TAG][@DIGEST])
// through the engine, with auth as the X-Registry-Auth value ("" for
// none), and writes its progress to progress (may be nil): one line per
// layer and change of state, not the byte counts. A failed pull is a
// *PullError; the engine keeps no image of it under ref (layers it
// fetched stay in its cache, unnamed, as after any interrupted pull).
func (e *Engine) Pull(ctx context.Context, ref, auth string, progress io.Writer) error {
	if auth == "" {
		auth = "e30=" // base64 of {}: the engine wants a header
	}
	start := time.Now()
	res, err := e.cli.ImagePull(ctx, ref, client.ImagePullOptions{RegistryAuth: auth})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pull %s: %w", ref, ctx.Err())
		}
		return &PullError{Ref: ref, Reason: classifyPull(err), Err: err}
	}
	defer res.Close()
	last := map[string]string{} // layer -> its last status shown
	dec := json.NewDecoder(res)
	var failure error
	for {
		var m pullMessage
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("pull %s: %w", ref, ctx.Err())
			}
			// The stream was cut: whatever the engine did, the pull
			// did not report its end.
			return &PullError{Ref: ref, Reason: PullUnreachable, Err: fmt.Errorf("reading the engine's messages: %w", err)}
		}
		msg := m.Error
		if msg == "" && m.ErrorDetail != nil {
			msg = m.ErrorDetail.Message
		}
		if msg != "" {
			if failure == nil {
				failure = errors.New(strings.TrimSpace(msg))
			}
			continue
		}
		if progress == nil || m.Status == "" {
			continue
		}
		if m.ID != "" {
			if last[m.ID] == m.Status {
				continue // Downloading, Extracting: the same line again with more bytes
			}
			last[m.ID] = m.Status
			fmt.Fprintf(progress, "pull %s: %s %s\n", ref, m.ID, m.Status)
			continue
		}
		fmt.Fprintf(progress, "pull %s: %s\n", ref, m.Status)
	}
	if failure != nil {
		return &PullError{Ref: ref, Reason: classifyPull(failure), Err: failure}
	}
	if ok, err := e.ImageExists(ctx, ref); err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	} else if !ok {
		return &PullError{Ref: ref, Reason: PullFailed, Err: errors.New("the engine reported success but has no such image")}
	}
	if progress != nil {
		fmt.Fprintf(progress, "pull %s: done in %s\n", ref, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

// RepoDigests lists the registry references (NAME@sha256:…) the engine
// knows the local image ref by: one per registry repository it was
// pulled from or pushed to.
func (e *Engine) RepoDigests(ctx context.Context, ref string) ([]string, error) {
	res, err := e.cli.ImageInspect(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	return res.RepoDigests, nil
}

// RemoteDigest asks ref's registry, through the engine and without
// pulling, for the digest of the manifest ref names now ("sha256:…").
// Errors are *PullError, as Pull's.
func (e *Engine) RemoteDigest(ctx context.Context, ref, auth string) (string, error) {
	res, err := e.cli.DistributionInspect(ctx, ref, client.DistributionInspectOptions{EncodedRegistryAuth: auth})
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("asking the registry for %s: %w", ref, ctx.Err())
		}
		return "", &PullError{Ref: ref, Reason: classifyPull(err), Err: err}
	}
	return res.Descriptor.Digest.String(), nil
}

// SaveImage streams the image ref as `docker save` writes it: a tar of
// its configuration, its layers (each a tar) and a manifest. Close it when
// done.
func (e *Engine) SaveImage(ctx context.Context, ref string) (io.ReadCloser, error) {
	rc, err := e.cli.ImageSave(ctx, []string{ref})
	if err != nil {
		return nil, fmt.Errorf("save image %s: %w", ref, err)
	}
	return rc, nil
}

// Export streams the container's file system as `docker export` writes
// it: a tar of every file, as the container sees it now (its mounts, such
// as the tmpfs folders, left out). Close it when done.
func (c *Container) Export(ctx context.Context) (io.ReadCloser, error) {
	rc, err := c.eng.cli.ContainerExport(ctx, c.ID, client.ContainerExportOptions{})
	if err != nil {
		return nil, c.checkLost(ctx, ExecResult{}, fmt.Errorf("export container %s: %w", c.Name, err))
	}
	return rc, nil
}
