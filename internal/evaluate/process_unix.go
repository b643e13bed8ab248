//go:build unix

package evaluate

import "syscall"

// processAlive reports whether a process with the id runs: a container
// whose run still runs is not a leftover.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
