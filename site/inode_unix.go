//go:build unix

package site

import (
	"io/fs"
	"syscall"
)

// inode is a file's inode number: a published file replaced by another
// (as editors and git do) keeps neither.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino) //nolint:unconvert // uint32 on some systems
	}
	return 0
}
