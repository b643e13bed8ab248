package container

import (
	"context"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Inspect gives the external tests the engine's view of a container.
func Inspect(ctx context.Context, c *Container) (container.InspectResponse, error) {
	res, err := c.eng.cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
	return res.Container, err
}

// Untar exposes untarFiles to the external tests.
var Untar = untarFiles

// ReadStream exposes readStream to the external tests.
var ReadStream = readStream
