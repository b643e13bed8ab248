package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// ErrLost says that a container, or the engine running it, went away while
// something ran in it: an infrastructure failure (a node of a cluster
// stopped), not an outcome of what ran. Only adopted containers (Adopt)
// report it.
var ErrLost = errors.New("the container or its engine is gone")

// lostCheckTimeout bounds the check that tells a lost container from a
// failed command.
const lostCheckTimeout = 10 * time.Second

// AdoptOptions tune Adopt.
type AdoptOptions struct {
	// AfterRemove runs when the container is removed (Remove), after it:
	// it removes what started the container (a swarm service), which would
	// otherwise start another one. It runs even when the engine is gone.
	AfterRemove func() error
	// OnLost, when set, hears of each operation that found the container
	// or its engine gone, and returns the error the operation returns
	// (err, or err wrapped with where: which node was lost).
	OnLost func(err error) error
}

// Adopt returns the running container id of this engine, which something
// other than Start started (a swarm task), as a Container: commands run
// in it and files are copied as in one from Start.
//
// Adopt refuses a container that is not running or that has a network
// (an interface with an address, or the host's): the harness's
// containers have none, and a swarm service cannot say "no network" as
// docker run --network none does; the node's engine must give it none
// (dockerd --bridge=none, no network attached).
//
// An adopted container's Exec (failed, or with a non-zero exit status),
// CopyIn and CopyOut check that the container still runs when they fail:
// if it or its engine is gone, the error wraps ErrLost.
func (e *Engine) Adopt(ctx context.Context, id string, opts AdoptOptions) (*Container, error) {
	res, err := e.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("adopt container %s on %s: %w", id, e.host, err)
		}
		// Gone already, or its engine with it.
		return nil, fmt.Errorf("%w: adopt container %s on %s: %w", ErrLost, id, e.host, err)
	}
	ins := res.Container
	c := &Container{ID: ins.ID, Name: trimSlash(ins.Name), eng: e, afterRemove: opts.AfterRemove}
	refuse := func(format string, args ...any) (*Container, error) {
		err := fmt.Errorf("adopt container %s on %s: "+format, append([]any{c.Name, e.host}, args...)...)
		if rerr := c.Remove(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	if ins.State == nil || !ins.State.Running {
		return refuse("%w: it is not running", ErrLost)
	}
	if ins.HostConfig != nil && ins.HostConfig.NetworkMode.IsHost() {
		return refuse("it has the host's network")
	}
	if ins.NetworkSettings != nil {
		for name, ep := range ins.NetworkSettings.Networks {
			if ep != nil && (ep.IPAddress.IsValid() || ep.GlobalIPv6Address.IsValid()) {
				return refuse("it has network %s (%s): the node's engine must run with --bridge=none", name, ep.IPAddress)
			}
		}
	}
	c.lost = func(ctx context.Context, err error, killed bool) error {
		if lerr := c.gone(ctx, err, killed); lerr != nil {
			if opts.OnLost != nil {
				lerr = opts.OnLost(lerr)
			}
			return lerr
		}
		return err
	}
	return c, nil
}

// gone checks, after an operation failed with err (nil: a command exited
// non-zero), whether the container or its engine went away, and returns
// the error saying so, wrapping ErrLost; nil when the container still
// runs (the failure is the operation's own). ctx is the operation's: when
// it is done, the failure is the caller's doing, never a loss.
//
// killed says that a command ended by SIGKILL or SIGTERM (exit status 137
// or 143). That is how an exec ends when its container is torn down (the
// engine stopping kills the container's init, and the kernel every other
// process of its PID namespace), and the engine may still show the
// container running for a moment after: it is watched for up to
// killSettle before the failure is taken as the command's own (the OOM
// killer's, a timeout's).
//
// Only the caller's context says so. An err that wraps
// context.DeadlineExceeded may come from one of the operation's own
// bounded waits (the exit status, the killer exec), which time out when
// the engine stops answering: that is a loss, and the check below, with
// its own deadline, finds the engine silent.
func (c *Container) gone(ctx context.Context, err error, killed bool) error {
	if ctx.Err() != nil {
		return nil
	}
	settle := time.Now().Add(killSettle)
	var why string
	for why == "" {
		why = c.whyGone(ctx)
		if why != "" || !killed || time.Now().After(settle) {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(killSettlePoll):
		}
	}
	if why == "" {
		return nil
	}
	if err == nil {
		return fmt.Errorf("%w: %s: %s", ErrLost, c.Name, why)
	}
	return fmt.Errorf("%w: %s: %s; the operation failed with: %v", ErrLost, c.Name, why, err)
}

// killSettle is how long a container whose command was killed is watched
// for going away (gone), and killSettlePoll how often. Variables for the
// tests.
var (
	killSettle     = 8 * time.Second
	killSettlePoll = 250 * time.Millisecond
)

// whyGone says why the container or its engine is gone, or "" when it
// runs.
func (c *Container) whyGone(ctx context.Context) string {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lostCheckTimeout)
	defer cancel()
	res, err := c.eng.cli.ContainerInspect(cctx, c.ID, client.ContainerInspectOptions{})
	switch {
	case cerrdefs.IsNotFound(err):
		return "the container is gone"
	case err != nil:
		return fmt.Sprintf("its engine at %s does not answer (%v)", c.eng.host, err)
	case res.Container.State == nil || !res.Container.State.Running:
		return "the container stopped"
	}
	return ""
}

func trimSlash(name string) string {
	if len(name) > 0 && name[0] == '/' {
		return name[1:]
	}
	return name
}

// KeptCapabilities are the only capabilities the containers of Start keep,
// for executors that start them otherwise (a swarm service's spec).
func KeptCapabilities() []string { return slices.Clone(keptCaps) }

// TmpMount is a size-bounded tmpfs of Limits.Tmp.
type TmpMount struct {
	Path string
	Size int64 // bytes
}

// TmpMounts are the tmpfs mounts that Start gives a container with lim:
// /tmp of lim.Tmp bytes; the others, which nothing needs much of, a
// sliver of it, so that together they stay within it. None when lim.Tmp
// is zero.
func TmpMounts(lim Limits) []TmpMount {
	if lim.Tmp <= 0 {
		return nil
	}
	var out []TmpMount
	for i, d := range tmpDirs {
		size := lim.Tmp
		if i > 0 {
			size = max(lim.Tmp/64, 1<<20)
		}
		out = append(out, TmpMount{Path: d, Size: size})
	}
	return out
}

// ImageID returns the ID (sha256:...) of the image ref.
func (e *Engine) ImageID(ctx context.Context, ref string) (string, error) {
	res, err := e.cli.ImageInspect(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("inspect image %s: %w", ref, err)
	}
	return res.ID, nil
}

// Tag gives the image src the further name dst.
func (e *Engine) Tag(ctx context.Context, src, dst string) error {
	if _, err := e.cli.ImageTag(ctx, client.ImageTagOptions{Source: src, Target: dst}); err != nil {
		return fmt.Errorf("tag %s as %s: %w", src, dst, err)
	}
	return nil
}

// Push pushes the image ref (a name with its registry and tag) to its
// registry, with auth as the X-Registry-Auth value ("" for none), copying
// the engine's progress messages to log (if not nil). It returns the
// digest of the manifest the registry now holds ("sha256:…"). An error
// reported inside the stream is an error.
func (e *Engine) Push(ctx context.Context, ref, auth string, log io.Writer) (string, error) {
	if auth == "" {
		auth = "e30=" // base64 of {}: the engine wants a header
	}
	res, err := e.cli.ImagePush(ctx, ref, client.ImagePushOptions{RegistryAuth: auth})
	if err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	defer res.Close()
	var digest string
	out, err := readStreamAux(res, log, func(aux json.RawMessage) {
		var a struct {
			Digest string `json:"Digest"`
		}
		if json.Unmarshal(aux, &a) == nil && a.Digest != "" {
			digest = a.Digest
		}
	})
	if err != nil {
		return "", fmt.Errorf("push %s: %w\n--- end of the push output ---\n%s", ref, err, lastLines(out, 20))
	}
	if digest == "" {
		return "", fmt.Errorf("push %s: the engine did not say the pushed digest", ref)
	}
	return digest, nil
}

// Inspect is the engine's view of the container: its configuration, host
// configuration and state.
func (c *Container) Inspect(ctx context.Context) (container.InspectResponse, error) {
	res, err := c.eng.cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
	if err != nil {
		return container.InspectResponse{}, fmt.Errorf("inspect container %s: %w", c.Name, err)
	}
	return res.Container, nil
}

// ForceRemove force-removes the container id of this engine, which
// something other than Start started (a swarm task that was never
// adopted); one already gone is not an error.
func (e *Engine) ForceRemove(ctx context.Context, id string) error {
	_, err := e.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) && !removing(err) {
		return fmt.Errorf("remove container %s on %s: %w", id, e.host, err)
	}
	return nil
}
