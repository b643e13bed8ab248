//go:build !linux

package site

import (
	"fmt"
	"os"
)

// writeNew creates the file at path, which must not exist yet, and
// returns its stat.
func writeNew(path string, data content) (fileRec, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fileRec{}, fmt.Errorf("writing %s: %w", path, err)
	}
	fi, err := statAndClose(f, data.writeTo(f))
	if err != nil {
		return fileRec{}, fmt.Errorf("writing %s: %w", path, err)
	}
	return fileRec{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: inode(fi)}, nil
}
