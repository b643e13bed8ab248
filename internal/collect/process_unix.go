//go:build unix

package collect

import "syscall"

// processAlive reports whether a process of that id exists (signal 0
// checks without sending anything).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
