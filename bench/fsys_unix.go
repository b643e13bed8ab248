//go:build unix

package bench

import (
	"errors"
	"syscall"
)

// openFlags make opening refuse a symbolic link and not wait for a
// writer on a named pipe.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// isLoop reports the error O_NOFOLLOW gives for a symbolic link.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
