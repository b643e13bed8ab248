//go:build linux

package site

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps the folders at a and b in one step, so that a reader of
// b sees the old folder or the new one and never neither. It returns
// errNoExchange where the kernel or the file system cannot.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL), errors.Is(err, unix.EOPNOTSUPP):
		return errNoExchange
	}
	return &os.LinkError{Op: "renameat2 exchange", Old: a, New: b, Err: err}
}
