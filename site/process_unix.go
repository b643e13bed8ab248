//go:build unix

package site

import "syscall"

// processAlive reports whether a process with the id runs, so that a
// build does not remove the stage of another build still running.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
