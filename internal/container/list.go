package container

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// Info is a container as listed by Containers.
type Info struct {
	ID      string
	Name    string
	Image   string
	Labels  map[string]string
	State   string // "running", "exited", "created", ...
	Created time.Time
}

// Containers lists the containers, running or not, that have every label
// of labelFilter (a label with an empty value matches any value).
func (e *Engine) Containers(ctx context.Context, labelFilter map[string]string) ([]Info, error) {
	res, err := e.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: labelFilters(labelFilter)})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	out := make([]Info, 0, len(res.Items))
	for _, it := range res.Items {
		name := ""
		if len(it.Names) > 0 {
			name = strings.TrimPrefix(it.Names[0], "/")
		}
		out = append(out, Info{
			ID: it.ID, Name: name, Image: it.Image, Labels: it.Labels,
			State: string(it.State), Created: time.Unix(it.Created, 0),
		})
	}
	return out, nil
}

// RemoveContainers force-removes the containers that have every label of
// labelFilter, except those for which keep (if not nil) returns true, and
// returns how many it removed. It is how the leftovers of a killed run are
// found and removed: by a run's label, or by an owner label whose process
// is gone.
//
// As cleanup often runs because ctx was cancelled, RemoveContainers ignores
// ctx's cancellation (not its values); each call to the engine is bounded
// in time instead. An empty labelFilter is refused: it would match every
// container of the engine.
func (e *Engine) RemoveContainers(ctx context.Context, labelFilter map[string]string, keep func(labels map[string]string) bool) (int, error) {
	if len(labelFilter) == 0 {
		return 0, errors.New("remove containers: no label filter")
	}
	ctx = context.WithoutCancel(ctx)
	lctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	list, err := e.Containers(lctx, labelFilter)
	cancel()
	if err != nil {
		return 0, fmt.Errorf("remove containers: %w", err)
	}
	n := 0
	var errs []error
	for _, c := range list {
		if keep != nil && keep(c.Labels) {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
		_, err := e.cli.ContainerRemove(rctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		cancel()
		switch {
		case err == nil:
			n++
		case cerrdefs.IsNotFound(err), removing(err):
		default:
			errs = append(errs, fmt.Errorf("remove container %s: %w", c.Name, err))
		}
	}
	return n, errors.Join(errs...)
}

// removing reports whether err says that the engine is already removing
// the container (a conflict, as a killed run's own removal can leave it):
// it is going away, which is all a caller asks for.
func removing(err error) bool {
	return cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress")
}
