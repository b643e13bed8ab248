//go:build !linux

package images

import (
	"context"
	"errors"
	"os/exec"
)

var errNotLinux = errors.New("building a base image needs Linux (debootstrap)")

func lockFile(context.Context, string) (func(), error) { return nil, errNotLinux }

func stopAsGroup(*exec.Cmd) func() { return func() {} }

func unmountUnder(string) error { return nil }
