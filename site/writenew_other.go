//go:build !linux

package site

import (
	"fmt"
	"io/fs"
	"os"
)

// writeNew creates the file at path, which must not exist yet, and
// returns its stat.
func writeNew(path string, data content) (fileRec, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fileRec{}, fmt.Errorf("writing %s: %w", path, err)
	}
	err = data.writeTo(f)
	var fi fs.FileInfo
	if err == nil {
		// Stat before close: closing changes no time, and an open file
		// saves a path lookup.
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fileRec{}, fmt.Errorf("writing %s: %w", path, err)
	}
	return fileRec{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: inode(fi)}, nil
}
