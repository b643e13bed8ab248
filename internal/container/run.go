package container

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Limits are the resources a container may use. A zero field means no limit.
type Limits struct {
	Memory   int64 // bytes of memory; swap is disabled (memory+swap = memory)
	NanoCPUs int64 // CPU quota in units of 1e-9 CPUs (1e9 = one CPU)
	Pids     int64 // number of processes and threads, which contains fork bombs
	// Tmp bounds the world-writable folders (/tmp, /var/tmp, /run/lock),
	// which become tmpfs mounts (counted in the memory limit too): /tmp of
	// this size, the others of a 64th of it. With the code under test run as a user who can
	// write nowhere else, it bounds what tests can write.
	Tmp int64
}

// tmpDirs are the folders of a Debian image that any user can write to.
var tmpDirs = []string{"/tmp", "/var/tmp", "/run/lock"}

// Spec describes a container to start.
type Spec struct {
	Image   string            // image reference or ID
	Name    string            // name prefix; a random suffix keeps names unique
	Labels  map[string]string // for finding the container again (see Containers)
	WorkDir string            // working directory; the image's when empty
	Env     []string          // KEY=value pairs added to the image's
	Limits  Limits
	// Network gives the container the engine's default network. By default
	// it has none: only a loopback interface.
	Network bool
}

// keptCaps are the only capabilities a container keeps: what root needs to
// own, change and remove files whatever their mode, and to signal its own
// processes, so that git, pip and pytest run as they do elsewhere as root.
// Everything else in Docker's default set (raw sockets, binding low ports,
// mknod, chroot, audit writes, setting file capabilities) is dropped.
var keptCaps = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID"}

// Container is a running container started by Start. Remove it when done.
type Container struct {
	ID   string
	Name string

	eng     *Engine
	mu      sync.Mutex
	removed bool
	// lost, set for an adopted container (Adopt), turns the error of an
	// operation whose container or engine is gone into ErrLost; ctx is
	// the operation's; killed, that a command's exit status says it was
	// killed (gone).
	lost func(ctx context.Context, err error, killed bool) error
	// afterRemove, set for an adopted container, removes what started it.
	afterRemove func() error
}

// Start creates and starts a container that runs `sleep infinity` (whatever
// the image's entrypoint) under an
// init process, so that commands run in it with Exec and orphaned processes
// are reaped. It has no network unless spec.Network, cannot gain privileges
// (no-new-privileges), has no swap, and keeps only the capabilities in
// keptCaps.
//
// If Start fails after the container was created, the container is removed.
func (e *Engine) Start(ctx context.Context, spec Spec) (*Container, error) {
	if spec.Image == "" {
		return nil, errors.New("start container: no image")
	}
	name := containerName(spec.Name)
	init := true
	cfg := &container.Config{
		Image: spec.Image,
		// The entrypoint too: an image from a registry may have one,
		// which would get "sleep infinity" as its arguments.
		Entrypoint: []string{"sleep"},
		Cmd:        []string{"infinity"},
		// Root, whatever user the image names: the harness's steps are
		// root's, and it drops to the tests' user itself.
		User:       "0:0",
		WorkingDir: spec.WorkDir,
		Env:        spec.Env,
		Labels:     spec.Labels,
	}
	host := &container.HostConfig{
		Init:        &init,
		SecurityOpt: []string{"no-new-privileges"},
		CapDrop:     []string{"ALL"},
		CapAdd:      keptCaps,
		Resources: container.Resources{
			Memory:   spec.Limits.Memory,
			NanoCPUs: spec.Limits.NanoCPUs,
		},
	}
	if spec.Limits.Memory > 0 {
		host.Resources.MemorySwap = spec.Limits.Memory
	}
	if spec.Limits.Tmp > 0 {
		host.Tmpfs = map[string]string{}
		for _, m := range TmpMounts(spec.Limits) {
			host.Tmpfs[m.Path] = fmt.Sprintf("rw,nosuid,nodev,mode=1777,size=%d", m.Size)
		}
	}
	if spec.Limits.Pids > 0 {
		pids := spec.Limits.Pids
		host.Resources.PidsLimit = &pids
	}
	if !spec.Network {
		host.NetworkMode = "none"
		cfg.NetworkDisabled = true
	}
	// The create does not hear the caller's cancellation: one cut off
	// mid-request can still make the container, and leave it with no ID
	// to remove it by. It takes milliseconds; ctx is checked right after.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	created, err := e.cli.ContainerCreate(cctx, client.ContainerCreateOptions{
		Name:       name,
		Config:     cfg,
		HostConfig: host,
	})
	cancel()
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("create container from %s: image not found (build it first): %w", spec.Image, err)
		}
		return nil, fmt.Errorf("create container from %s: %w", spec.Image, err)
	}
	c := &Container{ID: created.ID, Name: name, eng: e}
	if err := ctx.Err(); err != nil {
		if rerr := c.Remove(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, fmt.Errorf("start container %s: %w", name, err)
	}
	if _, err := e.cli.ContainerStart(ctx, c.ID, client.ContainerStartOptions{}); err != nil {
		if rerr := c.Remove(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, fmt.Errorf("start container %s: %w", name, err)
	}
	return c, nil
}

// containerName makes a unique, valid container name from prefix.
func containerName(prefix string) string {
	var b strings.Builder
	for _, r := range prefix {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := strings.TrimLeft(b.String(), "_.-")
	if len(name) > 100 {
		name = name[:100]
	}
	if name == "" {
		name = "featbench"
	}
	return name + "-" + randomHex(4)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// Remove force-removes the container, killing what runs in it. It uses its
// own context, so it works when the caller's was cancelled, and it is safe
// to call more than once (and on a container already gone).
//
// For an adopted container (Adopt), what started it is removed too, even
// when its engine is gone.
func (c *Container) Remove() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.removed {
		return nil
	}
	ctx, cancel := cleanupContext()
	defer cancel()
	_, err := c.eng.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) && !removing(err) {
		err = fmt.Errorf("remove container %s: %w", c.Name, err)
	} else {
		err = nil
	}
	if c.afterRemove != nil {
		if aerr := c.afterRemove(); aerr != nil {
			return errors.Join(err, aerr)
		}
		c.afterRemove = nil
	}
	if err != nil {
		return err
	}
	c.removed = true
	return nil
}

// kill kills the whole container: the last resort when a process in it
// cannot be stopped otherwise.
func (c *Container) kill() error {
	ctx, cancel := cleanupContext()
	defer cancel()
	_, err := c.eng.cli.ContainerKill(ctx, c.ID, client.ContainerKillOptions{Signal: "KILL"})
	if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
		return fmt.Errorf("kill container %s: %w", c.Name, err)
	}
	return nil
}
